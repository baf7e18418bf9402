//! Forgejo and Gitea API v1: pull requests, issues and their comments.
//!
//! A draft is a pull request whose title starts with a work-in-progress
//! prefix (`WIP:` and `[WIP]` by default on both; newer versions also
//! report a `draft` field, which is read when present): the client writes
//! `WIP: ` and strips any such prefix. Listing pull requests has no filter
//! by head branch, so the client reads every page and filters.

use crate::http::{encode, Http, Method};
use crate::hub::Hub;
use crate::shape::{choose, not_found, prefixed_title, update_fields, with_prefix};
use crate::{
    Check, Comment, CommentOn, Forge, ForgeError, ForgeKind, Issue, IssueLink, IssueQuery,
    LinkKind, NewPullRequest, Options, Permission, PullRequest, PullRequestUpdate, Repository,
    RepositoryInfo, Review, ReviewComment, Token,
};
use serde_json::{json, Value};

/// The prefixes read as a draft; the first is the one written.
const DRAFT_PREFIXES: [&str; 4] = ["WIP:", "[WIP]", "Draft:", "[Draft]"];

/// The Forgejo client: the GitHub-shaped layer, with Forgejo's drafts,
/// labels by id and dependencies.
#[derive(Debug)]
pub(crate) struct Forgejo {
    hub: Hub,
}

impl Forgejo {
    pub fn new(
        api_url: &str,
        repository: Repository,
        token: &Token,
        options: Options,
    ) -> Result<Forgejo, ForgeError> {
        let http = Http::new(ForgeKind::Forgejo, api_url, repository, token, options)?;
        Ok(Forgejo {
            hub: Hub::new(http, "limit=50", &DRAFT_PREFIXES),
        })
    }

    fn http(&self) -> &Http {
        &self.hub.http
    }

    /// The repository's labels: name and id.
    fn labels(&self) -> Result<Vec<(String, u64)>, ForgeError> {
        let path = self.hub.listing("labels");
        let items = self.http().all_pages(&path, None)?;
        let b = self.hub.body(Method::Get, &path);
        items
            .iter()
            .map(|l| Ok((b.required(l, "name")?, b.number(l, "id")?)))
            .collect()
    }

    /// The issues of a dependency listing, as links of `kind`.
    fn linked(&self, issue: u64, tail: &str, kind: LinkKind) -> Result<Vec<IssueLink>, ForgeError> {
        let path = self.hub.listing(&format!("issues/{issue}/{tail}"));
        let items = self
            .http()
            .all_pages(&path, Some(&format!("issue {issue}")))?;
        self.hub.links(&path, &items, kind, |v| {
            v["repository"]["full_name"].as_str()
        })
    }

    /// Whether a pull request's head is a branch of this repository (not
    /// of a fork, whose branch may share the name).
    fn is_ours(&self, v: &Value) -> bool {
        match v["head"]["repo"]["full_name"].as_str() {
            Some(name) => name.eq_ignore_ascii_case(self.http().repository.as_str()),
            None => true,
        }
    }
}

impl Forge for Forgejo {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Forgejo
    }

    fn repository(&self) -> &Repository {
        &self.http().repository
    }

    fn login(&self) -> Result<String, ForgeError> {
        self.hub.login()
    }

    fn repository_info(&self) -> Result<RepositoryInfo, ForgeError> {
        let path = self.hub.repo();
        let v = self.http().json(Method::Get, &path, None, None)?;
        let b = self.hub.body(Method::Get, &path);
        Ok(RepositoryInfo {
            full_name: b.required(&v, "full_name")?,
            url: b.required(&v, "html_url")?,
            default_branch: b.text(&v, "default_branch"),
        })
    }

    fn find_pull_request(&self, head: &str) -> Result<Option<PullRequest>, ForgeError> {
        let path = self.hub.listing("pulls?state=all");
        let items = self.http().all_pages(&path, None)?;
        let mut found = Vec::new();
        for v in items.iter().filter(|v| self.is_ours(v)) {
            let pull = self.hub.pull(Method::Get, &path, v)?;
            if pull.head == head {
                found.push(pull);
            }
        }
        Ok(choose(found))
    }

    fn open_pull_request(&self, new: &NewPullRequest) -> Result<PullRequest, ForgeError> {
        let path = format!("{}/pulls", self.hub.repo());
        let request = json!({
            "head": new.head,
            "base": new.base,
            "title": with_prefix(&new.title, new.draft, DRAFT_PREFIXES[0]),
            "body": new.body,
        });
        let what = format!("branch `{}` or `{}`", new.head, new.base);
        // A branch it does not have is a 404 here (GitHub says 422).
        let v = self
            .http()
            .json(Method::Post, &path, Some(&request), Some(&what))?;
        self.hub.pull(Method::Post, &path, &v)
    }

    fn update_pull_request(
        &self,
        number: u64,
        update: &PullRequestUpdate,
    ) -> Result<PullRequest, ForgeError> {
        let path = format!("{}/pulls/{number}", self.hub.repo());
        let what = format!("pull request {number}");
        // The draft state is the title's prefix: the bare title is needed.
        let title = prefixed_title(update, DRAFT_PREFIXES[0], || self.pull_request(number))?;
        let Some(request) = update_fields(title, update, ["body", "base"]) else {
            return self.pull_request(number);
        };
        let v = self
            .http()
            .json(Method::Patch, &path, Some(&request), Some(&what))?;
        self.hub.pull(Method::Patch, &path, &v)
    }

    fn pull_request(&self, number: u64) -> Result<PullRequest, ForgeError> {
        self.hub.pull_request(number)
    }

    fn issue(&self, number: u64) -> Result<Option<Issue>, ForgeError> {
        self.hub.issue(number)
    }

    fn post_comment(&self, on: CommentOn, body: &str) -> Result<Comment, ForgeError> {
        self.hub.post_comment(on, body)
    }

    fn comments(&self, on: CommentOn) -> Result<Vec<Comment>, ForgeError> {
        self.hub.comments(on)
    }

    fn issues(&self, query: &IssueQuery) -> Result<Vec<Issue>, ForgeError> {
        let mut path = self.hub.listing("issues?state=open&type=issues");
        if !query.labels.is_empty() {
            path.push_str(&format!("&labels={}", encode(&query.labels.join(","))));
        }
        if let Some(title) = &query.milestone {
            let milestones = self.hub.listing("milestones?state=all");
            let found = self.http().all_pages(&milestones, None)?;
            if !found.iter().any(|m| m["title"].as_str() == Some(title)) {
                return Err(not_found(self.http(), format!("milestone `{title}`")));
            }
            path.push_str(&format!("&milestones={}", encode(title)));
        }
        self.hub.issues_of(&path)
    }

    fn add_labels(&self, issue: u64, labels: &[String]) -> Result<(), ForgeError> {
        let mut known = self.labels()?;
        let mut ids = Vec::new();
        for name in labels {
            let id = match known.iter().find(|(n, _)| n == name) {
                Some((_, id)) => *id,
                // Forgejo does not make a label it lacks: it is made here.
                None => {
                    let path = format!("{}/labels", self.hub.repo());
                    let request = json!({ "name": name, "color": "#ededed" });
                    let v = self
                        .http()
                        .json(Method::Post, &path, Some(&request), None)?;
                    let id = self.hub.body(Method::Post, &path).number(&v, "id")?;
                    known.push((name.clone(), id));
                    id
                }
            };
            ids.push(id);
        }
        let path = format!("{}/issues/{issue}/labels", self.hub.repo());
        let request = json!({ "labels": ids });
        let what = format!("issue {issue}");
        self.http()
            .json(Method::Post, &path, Some(&request), Some(&what))
            .map(drop)
    }

    fn remove_label(&self, issue: u64, label: &str) -> Result<(), ForgeError> {
        let Some((_, id)) = self.labels()?.into_iter().find(|(n, _)| n == label) else {
            return Ok(());
        };
        let path = format!("{}/issues/{issue}/labels/{id}", self.hub.repo());
        self.hub.unlabel(issue, &path)
    }

    fn permission(&self, user: &str) -> Result<Permission, ForgeError> {
        // Forgejo answers this for another user to a repository admin only.
        self.hub.permission(user, |name| match name {
            "owner" | "admin" => Permission::Admin,
            "write" => Permission::Write,
            "read" => Permission::Read,
            _ => Permission::None,
        })
    }

    fn reviews(&self, pull: u64) -> Result<Vec<Review>, ForgeError> {
        self.hub.reviews(pull)
    }

    fn review_comments(&self, pull: u64) -> Result<Vec<ReviewComment>, ForgeError> {
        // Forgejo lists a review's comments under the review.
        let mut comments = Vec::new();
        for review in self.reviews(pull)? {
            let path = format!(
                "{}/pulls/{pull}/reviews/{}/comments",
                self.hub.repo(),
                review.id
            );
            let items = self.http().all_pages(&path, None)?;
            let b = self.hub.body(Method::Get, &path);
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
        let sha = self.hub.head_sha(pull)?;
        self.hub.status_checks(&sha, "status")
    }

    fn issue_links(&self, issue: u64) -> Result<Vec<IssueLink>, ForgeError> {
        let mut links = self.linked(issue, "dependencies", LinkKind::BlockedBy)?;
        links.extend(self.linked(issue, "blocks", LinkKind::Blocks)?);
        Ok(links)
    }
}
