//! Forgejo and Gitea API v1: pull requests, issues and their comments.
//!
//! A draft is a pull request whose title starts with a work-in-progress
//! prefix (`WIP:` and `[WIP]` by default on both; newer versions also
//! report a `draft` field, which is read when present): the client writes
//! `WIP: ` and strips any such prefix. Listing pull requests has no filter
//! by head branch, so the client reads every page and filters.

use crate::http::{encode, Http, Method, Scheme};
use crate::shape::{
    choose, label_names, latest_per_name, prefixed_title, split_draft, with_prefix, Body,
};
use crate::{
    Check, CheckState, Comment, CommentOn, Forge, ForgeError, ForgeKind, Issue, IssueLink,
    IssueQuery, IssueState, LinkKind, NewPullRequest, Options, Permission, PullRequest,
    PullRequestUpdate, PullState, Repository, RepositoryInfo, Review, ReviewComment, ReviewState,
    Token,
};
use serde_json::{json, Value};

/// The prefixes read as a draft; the first is the one written.
const DRAFT_PREFIXES: [&str; 4] = ["WIP:", "[WIP]", "Draft:", "[Draft]"];

/// The Forgejo client.
#[derive(Debug)]
pub(crate) struct Forgejo {
    http: Http,
}

impl Forgejo {
    pub(crate) fn new(
        api_url: &str,
        repository: Repository,
        token: &Token,
        options: Options,
    ) -> Result<Forgejo, ForgeError> {
        let authorization = Http::authorization(Scheme::Token, token.secret());
        let http = Http::new(
            ForgeKind::Forgejo,
            api_url,
            repository,
            authorization,
            options,
        )?;
        Ok(Forgejo { http })
    }

    fn repo(&self) -> String {
        format!("/repos/{}", self.http.repository)
    }

    fn body<'a>(&'a self, method: Method, path: &'a str) -> Body<'a> {
        Body {
            http: &self.http,
            method,
            path,
        }
    }

    fn pull(&self, method: Method, path: &str, v: &Value) -> Result<PullRequest, ForgeError> {
        let b = self.body(method, path);
        let raw_title = b.text(v, "title");
        let (prefixed, title) = split_draft(&raw_title, &DRAFT_PREFIXES);
        let merged = v["merged"].as_bool().unwrap_or(false) || !v["merged_at"].is_null();
        let state = match (b.required(v, "state")?.as_str(), merged) {
            (_, true) => PullState::Merged,
            ("open", _) => PullState::Open,
            _ => PullState::Closed,
        };
        Ok(PullRequest {
            number: b.number(v, "number")?,
            url: b.required(v, "html_url")?,
            title: title.to_string(),
            body: b.text(v, "body"),
            head: b.required(v, "head.ref")?,
            base: b.required(v, "base.ref")?,
            state,
            draft: v["draft"].as_bool().unwrap_or(prefixed),
            head_sha: v["head"]["sha"].as_str().map(str::to_string),
        })
    }

    fn comment(&self, method: Method, path: &str, v: &Value) -> Result<Comment, ForgeError> {
        let b = self.body(method, path);
        Ok(Comment {
            id: b.number(v, "id")?,
            author: b.text(v, "user.login"),
            body: b.text(v, "body"),
            created_at: b.text(v, "created_at"),
            url: v["html_url"].as_str().map(str::to_string),
        })
    }

    fn issue_of(&self, path: &str, v: &Value) -> Result<Issue, ForgeError> {
        let b = self.body(Method::Get, path);
        Ok(Issue {
            number: b.number(v, "number")?,
            url: b.required(v, "html_url")?,
            title: b.text(v, "title"),
            body: b.text(v, "body"),
            state: match b.required(v, "state")?.as_str() {
                "open" => IssueState::Open,
                _ => IssueState::Closed,
            },
            is_pull_request: !v["pull_request"].is_null(),
            labels: label_names(v),
        })
    }

    /// The repository's labels: name and id.
    fn labels(&self) -> Result<Vec<(String, u64)>, ForgeError> {
        let path = format!("{}/labels?limit=50", self.repo());
        let items = self.http.all_pages(&path, None)?;
        let b = self.body(Method::Get, &path);
        items
            .iter()
            .map(|l| Ok((b.required(l, "name")?, b.number(l, "id")?)))
            .collect()
    }

    /// The issues of a dependency listing, as links of `kind`.
    fn linked(&self, issue: u64, tail: &str, kind: LinkKind) -> Result<Vec<IssueLink>, ForgeError> {
        let path = format!("{}/issues/{issue}/{tail}?limit=50", self.repo());
        let items = self
            .http
            .all_pages(&path, Some(&format!("issue {issue}")))?;
        let mut links = Vec::new();
        for v in &items {
            let repository = v["repository"]["full_name"]
                .as_str()
                .filter(|r| !r.eq_ignore_ascii_case(self.http.repository.as_str()))
                .map(str::to_string);
            let other = self.issue_of(&path, v)?;
            links.push(IssueLink {
                kind,
                number: other.number,
                repository,
                state: other.state,
            });
        }
        Ok(links)
    }

    fn not_found(&self, what: String) -> ForgeError {
        ForgeError::NotFound {
            kind: ForgeKind::Forgejo,
            repository: self.http.repository.clone(),
            what,
        }
    }

    /// Whether a pull request's head is a branch of this repository (not
    /// of a fork, whose branch may share the name).
    fn is_ours(&self, v: &Value) -> bool {
        match v["head"]["repo"]["full_name"].as_str() {
            Some(name) => name.eq_ignore_ascii_case(self.http.repository.as_str()),
            None => true,
        }
    }
}

/// The issue number a comment goes to, and what a 404 names.
fn target(on: CommentOn) -> (u64, String) {
    match on {
        CommentOn::Issue(n) => (n, format!("issue {n}")),
        CommentOn::PullRequest(n) => (n, format!("pull request {n}")),
    }
}

impl Forge for Forgejo {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Forgejo
    }

    fn repository(&self) -> &Repository {
        &self.http.repository
    }

    fn login(&self) -> Result<String, ForgeError> {
        let v = self.http.json(Method::Get, "/user", None, None)?;
        self.body(Method::Get, "/user").required(&v, "login")
    }

    fn repository_info(&self) -> Result<RepositoryInfo, ForgeError> {
        let path = self.repo();
        let v = self.http.json(Method::Get, &path, None, None)?;
        let b = self.body(Method::Get, &path);
        Ok(RepositoryInfo {
            full_name: b.required(&v, "full_name")?,
            url: b.required(&v, "html_url")?,
            default_branch: b.text(&v, "default_branch"),
        })
    }

    fn find_pull_request(&self, head: &str) -> Result<Option<PullRequest>, ForgeError> {
        let path = format!("{}/pulls?state=all&limit=50", self.repo());
        let items = self.http.all_pages(&path, None)?;
        let mut found = Vec::new();
        for v in items.iter().filter(|v| self.is_ours(v)) {
            let pull = self.pull(Method::Get, &path, v)?;
            if pull.head == head {
                found.push(pull);
            }
        }
        Ok(choose(found))
    }

    fn open_pull_request(&self, new: &NewPullRequest) -> Result<PullRequest, ForgeError> {
        let path = format!("{}/pulls", self.repo());
        let request = json!({
            "head": new.head,
            "base": new.base,
            "title": with_prefix(&new.title, new.draft, DRAFT_PREFIXES[0]),
            "body": new.body,
        });
        let what = format!("branch `{}` or `{}`", new.head, new.base);
        // A branch it does not have is a 404 here (GitHub says 422).
        let v = self
            .http
            .json(Method::Post, &path, Some(&request), Some(&what))?;
        self.pull(Method::Post, &path, &v)
    }

    fn update_pull_request(
        &self,
        number: u64,
        update: &PullRequestUpdate,
    ) -> Result<PullRequest, ForgeError> {
        let path = format!("{}/pulls/{number}", self.repo());
        let what = format!("pull request {number}");
        let mut fields = serde_json::Map::new();
        // The draft state is the title's prefix: the bare title is needed.
        let title = prefixed_title(update, DRAFT_PREFIXES[0], || self.pull_request(number))?;
        if let Some(title) = title {
            fields.insert("title".into(), json!(title));
        }
        if let Some(body) = &update.body {
            fields.insert("body".into(), json!(body));
        }
        if let Some(base) = &update.base {
            fields.insert("base".into(), json!(base));
        }
        if fields.is_empty() {
            return self.pull_request(number);
        }
        let request = Value::Object(fields);
        let v = self
            .http
            .json(Method::Patch, &path, Some(&request), Some(&what))?;
        self.pull(Method::Patch, &path, &v)
    }

    fn pull_request(&self, number: u64) -> Result<PullRequest, ForgeError> {
        let path = format!("{}/pulls/{number}", self.repo());
        let what = format!("pull request {number}");
        let v = self.http.json(Method::Get, &path, None, Some(&what))?;
        self.pull(Method::Get, &path, &v)
    }

    fn issue(&self, number: u64) -> Result<Option<Issue>, ForgeError> {
        let path = format!("{}/issues/{number}", self.repo());
        let reply = self.http.send(Method::Get, &path, None)?;
        if !reply.ok() {
            let what = format!("issue {number}");
            return match self.http.error(Method::Get, &path, &reply, Some(&what)) {
                ForgeError::NotFound { .. } => Ok(None),
                e => Err(e),
            };
        }
        let v = self.http.parse(Method::Get, &path, &reply)?;
        self.issue_of(&path, &v).map(Some)
    }

    fn post_comment(&self, on: CommentOn, body: &str) -> Result<Comment, ForgeError> {
        let (number, what) = target(on);
        let path = format!("{}/issues/{number}/comments", self.repo());
        let request = json!({ "body": body });
        let v = self
            .http
            .json(Method::Post, &path, Some(&request), Some(&what))?;
        self.comment(Method::Post, &path, &v)
    }

    fn comments(&self, on: CommentOn) -> Result<Vec<Comment>, ForgeError> {
        let (number, what) = target(on);
        let path = format!("{}/issues/{number}/comments", self.repo());
        let items = self.http.all_pages(&path, Some(&what))?;
        items
            .iter()
            .map(|v| self.comment(Method::Get, &path, v))
            .collect()
    }

    fn issues(&self, query: &IssueQuery) -> Result<Vec<Issue>, ForgeError> {
        let mut path = format!("{}/issues?state=open&type=issues&limit=50", self.repo());
        if !query.labels.is_empty() {
            path.push_str(&format!("&labels={}", encode(&query.labels.join(","))));
        }
        if let Some(title) = &query.milestone {
            let milestones = format!("{}/milestones?state=all&limit=50", self.repo());
            let found = self.http.all_pages(&milestones, None)?;
            if !found.iter().any(|m| m["title"].as_str() == Some(title)) {
                return Err(self.not_found(format!("milestone `{title}`")));
            }
            path.push_str(&format!("&milestones={}", encode(title)));
        }
        let items = self.http.all_pages(&path, None)?;
        let issues = items.iter().map(|v| self.issue_of(&path, v));
        let issues = issues.collect::<Result<Vec<_>, _>>()?;
        Ok(issues.into_iter().filter(|i| !i.is_pull_request).collect())
    }

    fn add_labels(&self, issue: u64, labels: &[String]) -> Result<(), ForgeError> {
        let mut known = self.labels()?;
        let mut ids = Vec::new();
        for name in labels {
            let id = match known.iter().find(|(n, _)| n == name) {
                Some((_, id)) => *id,
                // Forgejo does not make a label it lacks: it is made here.
                None => {
                    let path = format!("{}/labels", self.repo());
                    let request = json!({ "name": name, "color": "#ededed" });
                    let v = self.http.json(Method::Post, &path, Some(&request), None)?;
                    let id = self.body(Method::Post, &path).number(&v, "id")?;
                    known.push((name.clone(), id));
                    id
                }
            };
            ids.push(id);
        }
        let path = format!("{}/issues/{issue}/labels", self.repo());
        let request = json!({ "labels": ids });
        let what = format!("issue {issue}");
        self.http
            .json(Method::Post, &path, Some(&request), Some(&what))
            .map(drop)
    }

    fn remove_label(&self, issue: u64, label: &str) -> Result<(), ForgeError> {
        let Some((_, id)) = self.labels()?.into_iter().find(|(n, _)| n == label) else {
            return Ok(());
        };
        let path = format!("{}/issues/{issue}/labels/{id}", self.repo());
        let reply = self.http.send(Method::Delete, &path, None)?;
        let what = format!("issue {issue}");
        match reply.status {
            200..=299 => Ok(()),
            404 if self.issue(issue)?.is_some() => Ok(()),
            _ => Err(self.http.error(Method::Delete, &path, &reply, Some(&what))),
        }
    }

    fn permission(&self, user: &str) -> Result<Permission, ForgeError> {
        // Forgejo answers this for another user to a repository admin only.
        let path = format!("{}/collaborators/{}/permission", self.repo(), encode(user));
        let reply = self.http.send(Method::Get, &path, None)?;
        if !reply.ok() {
            let what = format!("user `{user}`");
            return match self.http.error(Method::Get, &path, &reply, Some(&what)) {
                ForgeError::NotFound { .. } => Ok(Permission::None),
                e => Err(e),
            };
        }
        let v = self.http.parse(Method::Get, &path, &reply)?;
        Ok(match v["permission"].as_str().unwrap_or("") {
            "owner" | "admin" => Permission::Admin,
            "write" => Permission::Write,
            "read" => Permission::Read,
            _ => Permission::None,
        })
    }

    fn reviews(&self, pull: u64) -> Result<Vec<Review>, ForgeError> {
        let path = format!("{}/pulls/{pull}/reviews?limit=50", self.repo());
        let items = self
            .http
            .all_pages(&path, Some(&format!("pull request {pull}")))?;
        let b = self.body(Method::Get, &path);
        let review = |v: &Value| {
            let state = match b.text(v, "state").as_str() {
                _ if v["dismissed"].as_bool() == Some(true) => ReviewState::Dismissed,
                "APPROVED" => ReviewState::Approved,
                "REQUEST_CHANGES" => ReviewState::ChangesRequested,
                "PENDING" => ReviewState::Pending,
                _ => ReviewState::Commented,
            };
            Ok(Review {
                id: b.number(v, "id")?,
                author: b.text(v, "user.login"),
                state,
                body: b.text(v, "body"),
                submitted_at: b.text(v, "submitted_at"),
            })
        };
        items.iter().map(review).collect()
    }

    fn review_comments(&self, pull: u64) -> Result<Vec<ReviewComment>, ForgeError> {
        // Forgejo lists a review's comments under the review.
        let mut comments = Vec::new();
        for review in self.reviews(pull)? {
            let path = format!(
                "{}/pulls/{pull}/reviews/{}/comments",
                self.repo(),
                review.id
            );
            let items = self.http.all_pages(&path, None)?;
            let b = self.body(Method::Get, &path);
            for v in &items {
                comments.push(ReviewComment {
                    id: b.number(v, "id")?,
                    author: b.text(v, "user.login"),
                    body: b.text(v, "body"),
                    path: b.required(v, "path")?,
                    // `position` is the line in the new file; 0 when none.
                    line: v["position"].as_u64().filter(|l| *l > 0),
                    created_at: b.text(v, "created_at"),
                });
            }
        }
        comments.sort_by(|a, b| (&a.created_at, a.id).cmp(&(&b.created_at, b.id)));
        Ok(comments)
    }

    fn checks(&self, pull: u64) -> Result<Vec<Check>, ForgeError> {
        let head = self.pull_request(pull)?;
        let sha = head.head_sha.unwrap_or(head.head);
        let path = format!("{}/commits/{}/statuses?limit=50", self.repo(), encode(&sha));
        let mut statuses = self.http.all_pages(&path, None)?;
        // Several per context: the latest (highest id) counts.
        statuses.sort_by_key(|s| std::cmp::Reverse(s["id"].as_u64().unwrap_or(0)));
        let b = self.body(Method::Get, &path);
        let mut checks = Vec::new();
        for v in &statuses {
            checks.push(Check {
                name: b.required(v, "context")?,
                state: match b.text(v, "status").as_str() {
                    "success" => CheckState::Success,
                    "failure" | "error" => CheckState::Failure,
                    "warning" => CheckState::Skipped,
                    _ => CheckState::Pending,
                },
                url: v["target_url"]
                    .as_str()
                    .filter(|u| !u.is_empty())
                    .map(str::to_string),
                summary: b.text(v, "description"),
                log_tail: None,
            });
        }
        Ok(latest_per_name(checks))
    }

    fn issue_links(&self, issue: u64) -> Result<Vec<IssueLink>, ForgeError> {
        let mut links = self.linked(issue, "dependencies", LinkKind::BlockedBy)?;
        links.extend(self.linked(issue, "blocks", LinkKind::Blocks)?);
        Ok(links)
    }
}
