//! GitLab REST v4: merge requests, issues and their notes.
//!
//! A project is named by its URL-encoded path (`group%2Fname`). A draft is
//! a merge request whose title starts with `Draft:` (GitLab 13.2 and
//! later; newer versions also report a `draft` field, which is read when
//! present): the client writes and strips the prefix. System notes ("added
//! 1 commit") are not comments and are left out of listings.

use crate::http::{encode, Http, Method};
use crate::shape::{
    choose, found, label_names, latest_per_name, not_found, prefixed_title, split_draft, tail,
    target, update_fields, with_prefix, Body,
};
use crate::{
    Check, CheckState, Comment, CommentOn, Forge, ForgeError, ForgeKind, Issue, IssueLink,
    IssueQuery, IssueState, LinkKind, NewPullRequest, Options, Permission, PullRequest,
    PullRequestUpdate, PullState, Repository, RepositoryInfo, Review, ReviewComment, ReviewState,
    Token,
};
use serde_json::{json, Value};

/// The prefixes GitLab reads as a draft; the first is the one written.
const DRAFT_PREFIXES: [&str; 4] = ["Draft:", "[Draft]", "(Draft)", "Draft -"];

/// The GitLab client.
#[derive(Debug)]
pub(crate) struct Gitlab {
    http: Http,
}

impl Gitlab {
    pub fn new(
        api_url: &str,
        repository: Repository,
        token: &Token,
        options: Options,
    ) -> Result<Gitlab, ForgeError> {
        let http = Http::new(ForgeKind::Gitlab, api_url, repository, token, options)?;
        Ok(Gitlab { http })
    }

    fn project(&self) -> String {
        format!("/projects/{}", encode(self.http.repository.as_str()))
    }

    fn body<'a>(&'a self, method: Method, path: &'a str) -> Body<'a> {
        Body {
            http: &self.http,
            method,
            path,
        }
    }

    fn merge_request(
        &self,
        method: Method,
        path: &str,
        v: &Value,
    ) -> Result<PullRequest, ForgeError> {
        let b = self.body(method, path);
        let raw_title = b.text(v, "title");
        let (prefixed, title) = split_draft(&raw_title, &DRAFT_PREFIXES);
        let draft = v["draft"]
            .as_bool()
            .or_else(|| v["work_in_progress"].as_bool())
            .unwrap_or(prefixed);
        let state = match b.required(v, "state")?.as_str() {
            "opened" | "locked" => PullState::Open,
            "merged" => PullState::Merged,
            _ => PullState::Closed,
        };
        Ok(PullRequest {
            number: b.number(v, "iid")?,
            url: b.required(v, "web_url")?,
            title: title.to_string(),
            body: b.text(v, "description"),
            head: b.required(v, "source_branch")?,
            base: b.required(v, "target_branch")?,
            state,
            draft,
            head_sha: v["sha"].as_str().map(str::to_string),
        })
    }

    fn note(&self, method: Method, path: &str, v: &Value) -> Result<Comment, ForgeError> {
        let b = self.body(method, path);
        Ok(Comment {
            id: b.number(v, "id")?,
            author: b.text(v, "author.username"),
            body: b.text(v, "body"),
            created_at: b.text(v, "created_at"),
            url: None,
        })
    }

    fn issue_of(&self, path: &str, v: &Value) -> Result<Issue, ForgeError> {
        let b = self.body(Method::Get, path);
        Ok(Issue {
            number: b.number(v, "iid")?,
            url: b.required(v, "web_url")?,
            title: b.text(v, "title"),
            body: b.text(v, "description"),
            state: match b.required(v, "state")?.as_str() {
                "opened" => IssueState::Open,
                _ => IssueState::Closed,
            },
            // Issues and merge requests are numbered apart on GitLab.
            is_pull_request: false,
            labels: label_names(v),
        })
    }

    /// Adds or removes labels with the issue's `add_labels` or
    /// `remove_labels` (GitLab creates a label it lacks).
    fn relabel(&self, issue: u64, field: &str, labels: &[String]) -> Result<(), ForgeError> {
        let path = format!("{}/issues/{issue}", self.project());
        let request = json!({ field: labels.join(",") });
        let what = format!("issue {issue}");
        self.http
            .json(Method::Put, &path, Some(&request), Some(&what))
            .map(drop)
    }

    /// Whether the project, or the group it is in, has a milestone of that
    /// title (GitLab filters issues by either).
    fn has_milestone(&self, title: &str) -> Result<bool, ForgeError> {
        let query = format!("milestones?title={}&per_page=100", encode(title));
        let named = |found: &[Value]| found.iter().any(|m| m["title"].as_str() == Some(title));
        let project = format!("{}/{query}", self.project());
        if named(&self.http.all_pages(&project, None)?) {
            return Ok(true);
        }
        // A user's namespace is no group: its 404 means no group milestone.
        let group = format!("/groups/{}/{query}", encode(self.http.repository.owner()));
        let reply = self.http.send(Method::Get, &group, None)?;
        if !reply.ok() {
            return Ok(false);
        }
        let found = self.http.parse(Method::Get, &group, &reply)?;
        Ok(named(found.as_array().map(Vec::as_slice).unwrap_or(&[])))
    }

    fn notes_path(&self, on: CommentOn) -> (String, String) {
        let (n, what) = target(on, "merge request");
        let kind = match on {
            CommentOn::Issue(_) => "issues",
            CommentOn::PullRequest(_) => "merge_requests",
        };
        (format!("{}/{kind}/{n}/notes", self.project()), what)
    }
}

impl Forge for Gitlab {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Gitlab
    }

    fn repository(&self) -> &Repository {
        &self.http.repository
    }

    fn login(&self) -> Result<String, ForgeError> {
        let v = self.http.json(Method::Get, "/user", None, None)?;
        self.body(Method::Get, "/user").required(&v, "username")
    }

    fn repository_info(&self) -> Result<RepositoryInfo, ForgeError> {
        let path = self.project();
        let v = self.http.json(Method::Get, &path, None, None)?;
        let b = self.body(Method::Get, &path);
        Ok(RepositoryInfo {
            full_name: b.required(&v, "path_with_namespace")?,
            url: b.required(&v, "web_url")?,
            default_branch: b.text(&v, "default_branch"),
        })
    }

    fn find_pull_request(&self, head: &str) -> Result<Option<PullRequest>, ForgeError> {
        // Without `state`, GitLab lists merge requests in every state.
        let path = format!(
            "{}/merge_requests?source_branch={}&per_page=100",
            self.project(),
            encode(head)
        );
        let items = self.http.all_pages(&path, None)?;
        let found = items
            .iter()
            .map(|v| self.merge_request(Method::Get, &path, v))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(choose(
            found.into_iter().filter(|p| p.head == head).collect(),
        ))
    }

    fn open_pull_request(&self, new: &NewPullRequest) -> Result<PullRequest, ForgeError> {
        let path = format!("{}/merge_requests", self.project());
        let request = json!({
            "source_branch": new.head,
            "target_branch": new.base,
            "title": with_prefix(&new.title, new.draft, DRAFT_PREFIXES[0]),
            "description": new.body,
        });
        let v = self.http.json(Method::Post, &path, Some(&request), None)?;
        self.merge_request(Method::Post, &path, &v)
    }

    fn update_pull_request(
        &self,
        number: u64,
        update: &PullRequestUpdate,
    ) -> Result<PullRequest, ForgeError> {
        let path = format!("{}/merge_requests/{number}", self.project());
        let what = format!("merge request {number}");
        // The draft state is the title's prefix: the bare title is needed.
        let title = prefixed_title(update, DRAFT_PREFIXES[0], || self.pull_request(number))?;
        let fields = update_fields(title, update, ["description", "target_branch"]);
        let Some(request) = fields else {
            return self.pull_request(number);
        };
        let v = self
            .http
            .json(Method::Put, &path, Some(&request), Some(&what))?;
        self.merge_request(Method::Put, &path, &v)
    }

    fn pull_request(&self, number: u64) -> Result<PullRequest, ForgeError> {
        let path = format!("{}/merge_requests/{number}", self.project());
        let what = format!("merge request {number}");
        let v = self.http.json(Method::Get, &path, None, Some(&what))?;
        self.merge_request(Method::Get, &path, &v)
    }

    fn issue(&self, number: u64) -> Result<Option<Issue>, ForgeError> {
        let path = format!("{}/issues/{number}", self.project());
        match found(&self.http, &path, &format!("issue {number}"))? {
            Some(v) => self.issue_of(&path, &v).map(Some),
            None => Ok(None),
        }
    }

    fn post_comment(&self, on: CommentOn, body: &str) -> Result<Comment, ForgeError> {
        let (path, what) = self.notes_path(on);
        let request = json!({ "body": body });
        let v = self
            .http
            .json(Method::Post, &path, Some(&request), Some(&what))?;
        self.note(Method::Post, &path, &v)
    }

    fn comments(&self, on: CommentOn) -> Result<Vec<Comment>, ForgeError> {
        let (path, what) = self.notes_path(on);
        let path = format!("{path}?sort=asc&order_by=created_at&per_page=100");
        let items = self.http.all_pages(&path, Some(&what))?;
        items
            .iter()
            .filter(|v| !v["system"].as_bool().unwrap_or(false))
            .map(|v| self.note(Method::Get, &path, v))
            .collect()
    }

    fn issues(&self, query: &IssueQuery) -> Result<Vec<Issue>, ForgeError> {
        let mut path = format!("{}/issues?state=opened&per_page=100", self.project());
        if !query.labels.is_empty() {
            path.push_str(&format!("&labels={}", encode(&query.labels.join(","))));
        }
        if let Some(title) = &query.milestone {
            if !self.has_milestone(title)? {
                return Err(not_found(&self.http, format!("milestone `{title}`")));
            }
            path.push_str(&format!("&milestone={}", encode(title)));
        }
        let items = self.http.all_pages(&path, None)?;
        items.iter().map(|v| self.issue_of(&path, v)).collect()
    }

    fn add_labels(&self, issue: u64, labels: &[String]) -> Result<(), ForgeError> {
        self.relabel(issue, "add_labels", labels)
    }

    fn remove_label(&self, issue: u64, label: &str) -> Result<(), ForgeError> {
        self.relabel(issue, "remove_labels", &[label.to_string()])
    }

    fn permission(&self, user: &str) -> Result<Permission, ForgeError> {
        let path = format!("/users?username={}", encode(user));
        let users = self.http.json(Method::Get, &path, None, None)?;
        let Some(id) = users
            .as_array()
            .and_then(|u| u.first())
            .and_then(|u| u["id"].as_u64())
        else {
            return Ok(Permission::None);
        };
        // `all` counts members inherited from the groups above.
        let path = format!("{}/members/all/{id}", self.project());
        let Some(v) = found(&self.http, &path, &format!("member `{user}`"))? else {
            return Ok(Permission::None);
        };
        Ok(match v["access_level"].as_u64().unwrap_or(0) {
            40.. => Permission::Admin,
            30..=39 => Permission::Write,
            10..=29 => Permission::Read,
            _ => Permission::None,
        })
    }

    fn reviews(&self, pull: u64) -> Result<Vec<Review>, ForgeError> {
        let path = format!("{}/merge_requests/{pull}/approvals", self.project());
        let what = format!("merge request {pull}");
        let v = self.http.json(Method::Get, &path, None, Some(&what))?;
        let b = self.body(Method::Get, &path);
        let approvers = v["approved_by"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        approvers
            .iter()
            .map(|a| {
                Ok(Review {
                    id: b.number(a, "user.id")?,
                    author: b.text(a, "user.username"),
                    state: ReviewState::Approved,
                    body: String::new(),
                    submitted_at: String::new(),
                })
            })
            .collect()
    }

    fn review_comments(&self, pull: u64) -> Result<Vec<ReviewComment>, ForgeError> {
        let path = format!(
            "{}/merge_requests/{pull}/discussions?per_page=100",
            self.project()
        );
        let what = format!("merge request {pull}");
        let discussions = self.http.all_pages(&path, Some(&what))?;
        let b = self.body(Method::Get, &path);
        let mut comments = Vec::new();
        // A comment on the diff is a note with a `position`.
        let notes = discussions
            .iter()
            .flat_map(|d| d["notes"].as_array().into_iter().flatten());
        for n in
            notes.filter(|n| n["position"].is_object() && !n["system"].as_bool().unwrap_or(false))
        {
            let position = &n["position"];
            let path = position["new_path"]
                .as_str()
                .or(position["old_path"].as_str());
            comments.push(ReviewComment {
                id: b.number(n, "id")?,
                author: b.text(n, "author.username"),
                body: b.text(n, "body"),
                path: path.unwrap_or("").to_string(),
                line: position["new_line"].as_u64(),
                created_at: b.text(n, "created_at"),
            });
        }
        Ok(comments)
    }

    fn checks(&self, pull: u64) -> Result<Vec<Check>, ForgeError> {
        let path = format!("{}/merge_requests/{pull}/pipelines", self.project());
        let what = format!("merge request {pull}");
        // The latest pipeline comes first.
        let pipelines = self.http.json(Method::Get, &path, None, Some(&what))?;
        let Some(latest) = pipelines.as_array().and_then(|p| p.first()) else {
            return Ok(Vec::new());
        };
        let id = self.body(Method::Get, &path).number(latest, "id")?;
        let path = format!("{}/pipelines/{id}/jobs?per_page=100", self.project());
        let mut jobs = self.http.all_pages(&path, None)?;
        // A job run again keeps its name: the latest (highest id) counts.
        jobs.sort_by_key(|j| std::cmp::Reverse(j["id"].as_u64().unwrap_or(0)));
        let b = self.body(Method::Get, &path);
        let mut checks = Vec::new();
        for j in &jobs {
            let state = match b.text(j, "status").as_str() {
                "success" => CheckState::Success,
                "failed" => CheckState::Failure,
                "canceled" | "skipped" | "manual" => CheckState::Skipped,
                _ => CheckState::Pending,
            };
            checks.push(Check {
                name: b.required(j, "name")?,
                state,
                url: j["web_url"].as_str().map(str::to_string),
                summary: b.text(j, "stage"),
                log_tail: None,
            });
        }
        let mut checks = latest_per_name(checks);
        for check in checks.iter_mut().filter(|c| c.state == CheckState::Failure) {
            let job = jobs
                .iter()
                .find(|j| j["name"].as_str() == Some(&check.name));
            if let Some(job_id) = job.and_then(|j| j["id"].as_u64()) {
                let trace = format!("{}/jobs/{job_id}/trace", self.project());
                let reply = self.http.send(Method::Get, &trace, None)?;
                check.log_tail = reply.ok().then(|| tail(&reply.body));
            }
        }
        Ok(checks)
    }

    fn issue_links(&self, issue: u64) -> Result<Vec<IssueLink>, ForgeError> {
        let path = format!("{}/issues/{issue}/links", self.project());
        let what = format!("issue {issue}");
        let v = self.http.json(Method::Get, &path, None, Some(&what))?;
        let b = self.body(Method::Get, &path);
        let items = v.as_array().map(Vec::as_slice).unwrap_or(&[]);
        let mut links = Vec::new();
        for l in items {
            // `references.full` is `group/project#12`.
            let full = b.text(l, "references.full");
            let repository = full
                .rsplit_once('#')
                .map(|(r, _)| r.to_string())
                .filter(|r| {
                    !r.is_empty() && !r.eq_ignore_ascii_case(self.http.repository.as_str())
                });
            links.push(IssueLink {
                kind: match b.text(l, "link_type").as_str() {
                    "blocks" => LinkKind::Blocks,
                    "is_blocked_by" => LinkKind::BlockedBy,
                    _ => LinkKind::Related,
                },
                number: b.number(l, "iid")?,
                repository,
                state: match b.text(l, "state").as_str() {
                    "opened" => IssueState::Open,
                    _ => IssueState::Closed,
                },
            });
        }
        Ok(links)
    }
}
