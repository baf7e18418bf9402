//! GitHub REST v3 (github.com and GitHub Enterprise Server).
//!
//! Pull requests are `/repos/{owner}/{repo}/pulls`; comments in a pull
//! request's conversation are its issue's comments. The REST `PATCH` of a
//! pull request ignores `draft`, so draft state is changed with the
//! GraphQL mutations `convertPullRequestToDraft` and
//! `markPullRequestReadyForReview` on the pull request's `node_id`.

use crate::http::{encode, Http, Method, Scheme};
use crate::shape::{choose, label_names, latest_per_name, tail, Body};
use crate::{
    Check, CheckState, Comment, CommentOn, Forge, ForgeError, ForgeKind, Issue, IssueLink,
    IssueQuery, IssueState, LinkKind, NewPullRequest, Options, Permission, PullRequest,
    PullRequestUpdate, PullState, Repository, RepositoryInfo, Review, ReviewComment, ReviewState,
    Token,
};
use serde_json::{json, Value};

/// The GitHub client.
#[derive(Debug)]
pub(crate) struct Github {
    http: Http,
    graphql_url: String,
}

impl Github {
    pub(crate) fn new(
        api_url: &str,
        repository: Repository,
        token: &Token,
        options: Options,
    ) -> Result<Github, ForgeError> {
        let authorization = Http::authorization(Scheme::Bearer, token.secret());
        let http = Http::new(
            ForgeKind::Github,
            api_url,
            repository,
            authorization,
            options,
        )?;
        let graphql_url = graphql_url(&http.api_url);
        Ok(Github { http, graphql_url })
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
        let merged = v["merged"].as_bool().unwrap_or(false) || !v["merged_at"].is_null();
        let state = match (b.required(v, "state")?.as_str(), merged) {
            (_, true) => PullState::Merged,
            ("open", _) => PullState::Open,
            _ => PullState::Closed,
        };
        Ok(PullRequest {
            number: b.number(v, "number")?,
            url: b.required(v, "html_url")?,
            title: b.text(v, "title"),
            body: b.text(v, "body"),
            head: b.required(v, "head.ref")?,
            base: b.required(v, "base.ref")?,
            state,
            draft: v["draft"].as_bool().unwrap_or(false),
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

    /// A milestone's number, by its title.
    fn milestone(&self, title: &str) -> Result<u64, ForgeError> {
        let path = format!("{}/milestones?state=all&per_page=100", self.repo());
        let found = self.http.all_pages(&path, None)?;
        let milestone = found.iter().find(|m| m["title"].as_str() == Some(title));
        match milestone {
            Some(m) => self.body(Method::Get, &path).number(m, "number"),
            None => Err(ForgeError::NotFound {
                kind: ForgeKind::Github,
                repository: self.http.repository.clone(),
                what: format!("milestone `{title}`"),
            }),
        }
    }

    /// The issues a links listing names; none when the endpoint is not
    /// there (an older GitHub Enterprise Server) or, for `parent`, when
    /// the issue has none.
    fn linked(&self, issue: u64, tail: &str, kind: LinkKind) -> Result<Vec<IssueLink>, ForgeError> {
        let path = format!("{}/issues/{issue}/{tail}", self.repo());
        let reply = self.http.send(Method::Get, &path, None)?;
        if reply.status == 404 {
            let what = format!("issue {issue}");
            return match self.issue(issue)? {
                Some(_) => Ok(Vec::new()),
                None => Err(self.http.error(Method::Get, &path, &reply, Some(&what))),
            };
        }
        if !reply.ok() {
            return Err(self.http.error(Method::Get, &path, &reply, None));
        }
        let items = match self.http.parse(Method::Get, &path, &reply)? {
            Value::Array(items) => items,
            // `parent` is one issue.
            one => vec![one],
        };
        let mut links = Vec::new();
        for v in &items {
            let repository = v["repository_url"]
                .as_str()
                .and_then(|u| u.split("/repos/").nth(1))
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

    /// Runs one GraphQL mutation on a pull request's node id.
    fn mutate(&self, mutation: &str, node_id: &str) -> Result<(), ForgeError> {
        let query = format!(
            "mutation($id: ID!) {{ {mutation}(input: {{pullRequestId: $id}}) {{ pullRequest {{ isDraft }} }} }}"
        );
        let request = json!({ "query": query, "variables": { "id": node_id } });
        let v = self
            .http
            .json(Method::Post, &self.graphql_url, Some(&request), None)?;
        // GraphQL answers 200 with `errors` when it refuses.
        if let Some(errors) = v["errors"].as_array().filter(|e| !e.is_empty()) {
            let message = errors
                .iter()
                .filter_map(|e| e["message"].as_str())
                .collect::<Vec<_>>()
                .join("; ");
            return Err(ForgeError::Validation {
                kind: ForgeKind::Github,
                status: 200,
                message,
            });
        }
        Ok(())
    }
}

/// GitHub's GraphQL endpoint beside a REST root: `https://api.github.com`
/// -> `https://api.github.com/graphql`; GitHub Enterprise's
/// `https://HOST/api/v3` -> `https://HOST/api/graphql`.
fn graphql_url(api_url: &str) -> String {
    match api_url.strip_suffix("/api/v3") {
        Some(host) => format!("{host}/api/graphql"),
        None => format!("{api_url}/graphql"),
    }
}

impl Forge for Github {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Github
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
            default_branch: b.required(&v, "default_branch")?,
        })
    }

    fn find_pull_request(&self, head: &str) -> Result<Option<PullRequest>, ForgeError> {
        let owner = self.http.repository.owner();
        let path = format!(
            "{}/pulls?head={}&state=all&per_page=100",
            self.repo(),
            encode(&format!("{owner}:{head}"))
        );
        let items = self.http.all_pages(&path, None)?;
        let pulls = items
            .iter()
            .map(|v| self.pull(Method::Get, &path, v))
            .collect::<Result<Vec<_>, _>>()?;
        // The filter is the forge's; a branch of another name never counts.
        Ok(choose(
            pulls.into_iter().filter(|p| p.head == head).collect(),
        ))
    }

    fn open_pull_request(&self, new: &NewPullRequest) -> Result<PullRequest, ForgeError> {
        let path = format!("{}/pulls", self.repo());
        let request = json!({
            "title": new.title,
            "body": new.body,
            "head": new.head,
            "base": new.base,
            "draft": new.draft,
        });
        let v = self.http.json(Method::Post, &path, Some(&request), None)?;
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
        if let Some(title) = &update.title {
            fields.insert("title".into(), json!(title));
        }
        if let Some(body) = &update.body {
            fields.insert("body".into(), json!(body));
        }
        if let Some(base) = &update.base {
            fields.insert("base".into(), json!(base));
        }
        let current = if fields.is_empty() {
            self.http.json(Method::Get, &path, None, Some(&what))?
        } else {
            let request = Value::Object(fields);
            self.http
                .json(Method::Patch, &path, Some(&request), Some(&what))?
        };
        let pull = self.pull(Method::Patch, &path, &current)?;
        match update.draft {
            Some(draft) if draft != pull.draft => {
                let node_id = self
                    .body(Method::Get, &path)
                    .required(&current, "node_id")?;
                let mutation = if draft {
                    "convertPullRequestToDraft"
                } else {
                    "markPullRequestReadyForReview"
                };
                self.mutate(mutation, &node_id)?;
                self.pull_request(number)
            }
            _ => Ok(pull),
        }
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
        // 410: the issue was deleted, or the repository has issues turned off.
        if reply.status == 410 {
            return Ok(None);
        }
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
        let path = format!("{}/issues/{number}/comments?per_page=100", self.repo());
        let items = self.http.all_pages(&path, Some(&what))?;
        items
            .iter()
            .map(|v| self.comment(Method::Get, &path, v))
            .collect()
    }

    fn issues(&self, query: &IssueQuery) -> Result<Vec<Issue>, ForgeError> {
        let mut path = format!("{}/issues?state=open&per_page=100", self.repo());
        if !query.labels.is_empty() {
            path.push_str(&format!("&labels={}", encode(&query.labels.join(","))));
        }
        if let Some(title) = &query.milestone {
            path.push_str(&format!("&milestone={}", self.milestone(title)?));
        }
        let items = self.http.all_pages(&path, None)?;
        let issues = items.iter().map(|v| self.issue_of(&path, v));
        // The issues listing holds pull requests too.
        let issues = issues.collect::<Result<Vec<_>, _>>()?;
        Ok(issues.into_iter().filter(|i| !i.is_pull_request).collect())
    }

    fn add_labels(&self, issue: u64, labels: &[String]) -> Result<(), ForgeError> {
        let path = format!("{}/issues/{issue}/labels", self.repo());
        let request = json!({ "labels": labels });
        let what = format!("issue {issue}");
        self.http
            .json(Method::Post, &path, Some(&request), Some(&what))
            .map(drop)
    }

    fn remove_label(&self, issue: u64, label: &str) -> Result<(), ForgeError> {
        let path = format!("{}/issues/{issue}/labels/{}", self.repo(), encode(label));
        let reply = self.http.send(Method::Delete, &path, None)?;
        let what = format!("issue {issue}");
        match reply.status {
            200..=299 => Ok(()),
            // 404 for a label the issue does not carry, once the issue is there.
            404 if self.issue(issue)?.is_some() => Ok(()),
            _ => Err(self.http.error(Method::Delete, &path, &reply, Some(&what))),
        }
    }

    fn permission(&self, user: &str) -> Result<Permission, ForgeError> {
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
        Ok(permission_of(v["permission"].as_str().unwrap_or("")))
    }

    fn reviews(&self, pull: u64) -> Result<Vec<Review>, ForgeError> {
        let path = format!("{}/pulls/{pull}/reviews?per_page=100", self.repo());
        let items = self
            .http
            .all_pages(&path, Some(&format!("pull request {pull}")))?;
        let b = self.body(Method::Get, &path);
        let review = |v: &Value| {
            Ok(Review {
                id: b.number(v, "id")?,
                author: b.text(v, "user.login"),
                state: match b.text(v, "state").as_str() {
                    "APPROVED" => ReviewState::Approved,
                    "CHANGES_REQUESTED" => ReviewState::ChangesRequested,
                    "DISMISSED" => ReviewState::Dismissed,
                    "PENDING" => ReviewState::Pending,
                    _ => ReviewState::Commented,
                },
                body: b.text(v, "body"),
                submitted_at: b.text(v, "submitted_at"),
            })
        };
        items.iter().map(review).collect()
    }

    fn review_comments(&self, pull: u64) -> Result<Vec<ReviewComment>, ForgeError> {
        let path = format!("{}/pulls/{pull}/comments?per_page=100", self.repo());
        let items = self
            .http
            .all_pages(&path, Some(&format!("pull request {pull}")))?;
        let b = self.body(Method::Get, &path);
        let comment = |v: &Value| {
            Ok(ReviewComment {
                id: b.number(v, "id")?,
                author: b.text(v, "user.login"),
                body: b.text(v, "body"),
                path: b.required(v, "path")?,
                // `line` is null on an outdated comment or one on the file.
                line: v["line"].as_u64(),
                created_at: b.text(v, "created_at"),
            })
        };
        items.iter().map(comment).collect()
    }

    fn checks(&self, pull: u64) -> Result<Vec<Check>, ForgeError> {
        let head = self.pull_request(pull)?;
        let sha = head.head_sha.unwrap_or(head.head);
        let path = format!(
            "{}/commits/{}/check-runs?per_page=100",
            self.repo(),
            encode(&sha)
        );
        let runs = self.http.all_pages_in(&path, Some("check_runs"), None)?;
        let b = self.body(Method::Get, &path);
        let mut checks = Vec::new();
        for v in &runs {
            let state = match (
                b.text(v, "status").as_str(),
                b.text(v, "conclusion").as_str(),
            ) {
                ("completed", "success") => CheckState::Success,
                ("completed", "failure" | "timed_out" | "action_required" | "startup_failure") => {
                    CheckState::Failure
                }
                ("completed", _) => CheckState::Skipped,
                _ => CheckState::Pending,
            };
            let text = b.text(v, "output.text");
            let summary = [b.text(v, "output.title"), b.text(v, "output.summary")];
            checks.push(Check {
                name: b.required(v, "name")?,
                state,
                url: v["html_url"].as_str().map(str::to_string),
                summary: summary
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(": "),
                log_tail: (!text.is_empty()).then(|| tail(&text)),
            });
        }
        // Statuses come newest first, several per context.
        let path = format!(
            "{}/commits/{}/statuses?per_page=100",
            self.repo(),
            encode(&sha)
        );
        let statuses = self.http.all_pages(&path, None)?;
        let mut from_statuses = Vec::new();
        for v in &statuses {
            from_statuses.push(Check {
                name: b.required(v, "context")?,
                state: match b.text(v, "state").as_str() {
                    "success" => CheckState::Success,
                    "failure" | "error" => CheckState::Failure,
                    _ => CheckState::Pending,
                },
                url: v["target_url"].as_str().map(str::to_string),
                summary: b.text(v, "description"),
                log_tail: None,
            });
        }
        checks.extend(latest_per_name(from_statuses));
        Ok(checks)
    }

    fn issue_links(&self, issue: u64) -> Result<Vec<IssueLink>, ForgeError> {
        let mut links = self.linked(issue, "dependencies/blocked_by", LinkKind::BlockedBy)?;
        links.extend(self.linked(issue, "dependencies/blocking", LinkKind::Blocks)?);
        links.extend(self.linked(issue, "sub_issues", LinkKind::Child)?);
        links.extend(self.linked(issue, "parent", LinkKind::Parent)?);
        Ok(links)
    }
}

/// GitHub's permission names, as `permission` reports them (maintain is
/// `write`, triage is `read` there).
fn permission_of(name: &str) -> Permission {
    match name {
        "admin" => Permission::Admin,
        "write" | "maintain" => Permission::Write,
        "read" | "triage" => Permission::Read,
        _ => Permission::None,
    }
}

/// The issue number a comment goes to, and what a 404 names.
fn target(on: CommentOn) -> (u64, String) {
    match on {
        CommentOn::Issue(n) => (n, format!("issue {n}")),
        CommentOn::PullRequest(n) => (n, format!("pull request {n}")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn graphql_sits_beside_the_rest_root() {
        assert_eq!(
            super::graphql_url("https://api.github.com"),
            "https://api.github.com/graphql"
        );
        assert_eq!(
            super::graphql_url("https://ghe.example.com/api/v3"),
            "https://ghe.example.com/api/graphql"
        );
    }
}
