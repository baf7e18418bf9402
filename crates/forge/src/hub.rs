//! The GitHub-shaped REST layer GitHub v3 and Forgejo/Gitea v1 share:
//! Forgejo's API is modelled on GitHub's, so a repository is
//! `/repos/{owner}/{name}`, a pull request, an issue, a comment, a review
//! and a commit status read the same fields, and a pull request's
//! conversation is its issue's comments. Each client keeps only what
//! differs (how a draft is told, how labels and dependencies are named,
//! the listings' page-size parameter).

use crate::http::{encode, Http, Method};
use crate::shape::{found, latest_per_name, split_draft, target, Body};
use crate::{
    Check, CheckState, Comment, CommentOn, ForgeError, Issue, IssueLink, IssueState, LinkKind,
    Permission, PullRequest, PullState, Review, ReviewState,
};
use serde_json::{json, Value};

/// One GitHub-shaped API for one repository.
#[derive(Debug)]
pub(crate) struct Hub {
    pub http: Http,
    /// The query that asks a listing for its largest page (`per_page=100`
    /// on GitHub, `limit=50` on Forgejo).
    page: &'static str,
    /// The title prefixes read as a draft (none on GitHub, whose pull
    /// requests say `draft`).
    drafts: &'static [&'static str],
}

impl Hub {
    pub fn new(http: Http, page: &'static str, drafts: &'static [&'static str]) -> Hub {
        Hub { http, page, drafts }
    }

    /// `/repos/{owner}/{name}`.
    pub fn repo(&self) -> String {
        format!("/repos/{}", self.http.repository)
    }

    /// `/repos/{owner}/{name}/{tail}` asking for the largest page.
    pub fn listing(&self, tail: &str) -> String {
        let join = if tail.contains('?') { '&' } else { '?' };
        format!("{}/{tail}{join}{}", self.repo(), self.page)
    }

    pub fn body<'a>(&'a self, method: Method, path: &'a str) -> Body<'a> {
        Body {
            http: &self.http,
            method,
            path,
        }
    }

    /// A pull request; its draft state from `draft`, else from a title
    /// prefix (which the title is read without).
    pub fn pull(&self, method: Method, path: &str, v: &Value) -> Result<PullRequest, ForgeError> {
        let b = self.body(method, path);
        let raw_title = b.text(v, "title");
        let (prefixed, title) = split_draft(&raw_title, self.drafts);
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

    /// An issue (or a pull request as the issues API shows it).
    pub fn issue_of(&self, path: &str, v: &Value) -> Result<Issue, ForgeError> {
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
            labels: crate::shape::label_names(v),
        })
    }

    /// The issues of a listing, pull requests left out.
    pub fn issues_of(&self, path: &str) -> Result<Vec<Issue>, ForgeError> {
        let items = self.http.all_pages(path, None)?;
        let issues = items.iter().map(|v| self.issue_of(path, v));
        // The issues listing holds pull requests too.
        let issues = issues.collect::<Result<Vec<_>, _>>()?;
        Ok(issues.into_iter().filter(|i| !i.is_pull_request).collect())
    }

    pub fn login(&self) -> Result<String, ForgeError> {
        let v = self.http.json(Method::Get, "/user", None, None)?;
        self.body(Method::Get, "/user").required(&v, "login")
    }

    pub fn pull_request(&self, number: u64) -> Result<PullRequest, ForgeError> {
        let path = format!("{}/pulls/{number}", self.repo());
        let what = format!("pull request {number}");
        let v = self.http.json(Method::Get, &path, None, Some(&what))?;
        self.pull(Method::Get, &path, &v)
    }

    pub fn issue(&self, number: u64) -> Result<Option<Issue>, ForgeError> {
        let path = format!("{}/issues/{number}", self.repo());
        match found(&self.http, &path, &format!("issue {number}"))? {
            Some(v) => self.issue_of(&path, &v).map(Some),
            None => Ok(None),
        }
    }

    pub fn post_comment(&self, on: CommentOn, body: &str) -> Result<Comment, ForgeError> {
        let (number, what) = target(on, "pull request");
        let path = format!("{}/issues/{number}/comments", self.repo());
        let request = json!({ "body": body });
        let v = self
            .http
            .json(Method::Post, &path, Some(&request), Some(&what))?;
        self.comment(Method::Post, &path, &v)
    }

    pub fn comments(&self, on: CommentOn) -> Result<Vec<Comment>, ForgeError> {
        let (number, what) = target(on, "pull request");
        let path = self.listing(&format!("issues/{number}/comments"));
        let items = self.http.all_pages(&path, Some(&what))?;
        items
            .iter()
            .map(|v| self.comment(Method::Get, &path, v))
            .collect()
    }

    /// `DELETE path`, a label off an issue: a 404 once the issue is there
    /// means the issue does not carry it, which is no error.
    pub fn unlabel(&self, issue: u64, path: &str) -> Result<(), ForgeError> {
        let reply = self.http.send(Method::Delete, path, None)?;
        let what = format!("issue {issue}");
        match reply.status {
            200..=299 => Ok(()),
            404 if self.issue(issue)?.is_some() => Ok(()),
            _ => Err(self.http.error(Method::Delete, path, &reply, Some(&what))),
        }
    }

    /// The collaborator's permission, by the forge's name for it (`names`
    /// reads it); a user the forge does not know has none.
    pub fn permission(
        &self,
        user: &str,
        names: fn(&str) -> Permission,
    ) -> Result<Permission, ForgeError> {
        let path = format!("{}/collaborators/{}/permission", self.repo(), encode(user));
        let v = found(&self.http, &path, &format!("user `{user}`"))?;
        Ok(v.map_or(Permission::None, |v| {
            names(v["permission"].as_str().unwrap_or(""))
        }))
    }

    /// A pull request's reviews, oldest first: GitHub's and Forgejo's
    /// states (`CHANGES_REQUESTED` and `REQUEST_CHANGES`), and Forgejo's
    /// `dismissed` flag.
    pub fn reviews(&self, pull: u64) -> Result<Vec<Review>, ForgeError> {
        let path = self.listing(&format!("pulls/{pull}/reviews"));
        let items = self
            .http
            .all_pages(&path, Some(&format!("pull request {pull}")))?;
        let b = self.body(Method::Get, &path);
        let review = |v: &Value| {
            let state = match b.text(v, "state").as_str() {
                _ if v["dismissed"].as_bool() == Some(true) => ReviewState::Dismissed,
                "APPROVED" => ReviewState::Approved,
                "CHANGES_REQUESTED" | "REQUEST_CHANGES" => ReviewState::ChangesRequested,
                "DISMISSED" => ReviewState::Dismissed,
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

    /// The commit statuses of a commit as checks, the latest of each
    /// context; the state is under `state_key` (`state` on GitHub,
    /// `status` on Forgejo).
    pub fn status_checks(&self, sha: &str, state_key: &str) -> Result<Vec<Check>, ForgeError> {
        let path = self.listing(&format!("commits/{}/statuses", encode(sha)));
        let mut statuses = self.http.all_pages(&path, None)?;
        // Several per context: the latest (highest id) counts.
        statuses.sort_by_key(|s| std::cmp::Reverse(s["id"].as_u64().unwrap_or(0)));
        let b = self.body(Method::Get, &path);
        let mut checks = Vec::new();
        for v in &statuses {
            checks.push(Check {
                name: b.required(v, "context")?,
                state: match b.text(v, state_key).as_str() {
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

    /// The head commit of a pull request (its branch when the forge does
    /// not say).
    pub fn head_sha(&self, pull: u64) -> Result<String, ForgeError> {
        let head = self.pull_request(pull)?;
        Ok(head.head_sha.unwrap_or(head.head))
    }

    /// The issues of a links listing as links of `kind`; `repository_of`
    /// reads the repository an item is in, when the forge says.
    pub fn links(
        &self,
        path: &str,
        items: &[Value],
        kind: LinkKind,
        repository_of: fn(&Value) -> Option<&str>,
    ) -> Result<Vec<IssueLink>, ForgeError> {
        let mut links = Vec::new();
        for v in items {
            let repository = repository_of(v)
                .filter(|r| !r.eq_ignore_ascii_case(self.http.repository.as_str()))
                .map(str::to_string);
            let other = self.issue_of(path, v)?;
            links.push(IssueLink {
                kind,
                number: other.number,
                repository,
                state: other.state,
            });
        }
        Ok(links)
    }
}
