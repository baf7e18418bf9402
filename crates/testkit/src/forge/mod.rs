//! Stateful fake forges on loopback, one per API: GitHub REST v3
//! ([`github`]), GitLab REST v4 ([`gitlab`]) and Forgejo/Gitea API v1
//! ([`forgejo`]), written from the forges' API documentation.
//!
//! A [`FakeForge`] keeps repositories, the branches it knows (told by the
//! test, or read from a bare git repository), issues, pull requests (merge
//! requests) and their comments, and answers with each API's shapes and
//! status codes: 401 without the token, 404, the forge's refusal of a
//! missing head branch or of a second pull request for the same head, and
//! pagination with a small page size the test chooses. A test can merge or
//! close a pull request, post comments as other users, and make the next
//! calls fail ([`Fault`]). Every request is recorded ([`ForgeRequest`]),
//! with the token's value replaced, so a test asserts what was sent.

pub mod forgejo;
pub mod github;
pub mod gitlab;
pub mod live;
mod server;
mod state;

pub use state::{
    FakeCheck, FakeComment, FakePull, FakeReview, FakeReviewComment, Link, Outcome, Verdict,
};

use serde_json::Value;
use server::{Handler, Incoming, Outgoing, Server};
use state::State;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

/// The API a fake speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// GitHub REST v3 (its root is the server's root, as api.github.com's).
    Github,
    /// GitLab REST v4 (under `/api/v4`).
    Gitlab,
    /// Forgejo and Gitea API v1 (under `/api/v1`).
    Forgejo,
}

/// The token every fake accepts.
pub const TOKEN: &str = "fake-forge-token-0123456789";

/// The login the token belongs to.
pub const BOT: &str = "planwright-bot";

/// What the next calls get instead of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// 429 with `Retry-After: SECS`.
    TooManyRequests {
        /// The seconds `Retry-After` says.
        retry_after: u64,
    },
    /// GitHub's secondary rate limit: 403, its message, and `Retry-After`.
    SecondaryRateLimit {
        /// The seconds `Retry-After` says.
        retry_after: u64,
    },
    /// The primary rate limit spent: 403 with `x-ratelimit-remaining: 0`
    /// and `x-ratelimit-reset` at this Unix time (GitLab: 429 with
    /// `RateLimit-Remaining: 0` and `RateLimit-Reset`).
    RateLimitReset {
        /// The Unix time the limit resets.
        at: u64,
    },
    /// 500 with the forge's error body.
    ServerError,
    /// 403 without a rate-limit sign: the token lacks a permission.
    Forbidden,
    /// The connection is closed without an answer.
    HangUp,
    /// 200 with a body that is not JSON (a proxy's page, say).
    Malformed,
    /// 200 with an empty page whose `Link` names a next page on another
    /// host (and no `x-next-page`).
    ForeignLink,
}

/// One request as the fake received it, and the status it answered.
#[derive(Debug, Clone)]
pub struct ForgeRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path with its query, as sent.
    pub path: String,
    /// The headers (names in lower case), the `Authorization` and
    /// `PRIVATE-TOKEN` values replaced by `<redacted>` after their scheme.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Null` when none).
    pub body: Value,
    /// Whether it carried the fake's token.
    pub authorized: bool,
    /// The status answered (0 when the connection was closed instead).
    pub status: u16,
}

impl ForgeRequest {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A fake forge on a loopback port; stops when dropped.
pub struct FakeForge {
    api: Api,
    state: Arc<Mutex<State>>,
    server: Server,
}

impl FakeForge {
    /// Starts a fake of `api` with no repository, pages of 30 items.
    pub fn start(api: Api) -> FakeForge {
        let state = Arc::new(Mutex::new(State::new(api)));
        let s = state.clone();
        let handler: Handler = Arc::new(move |req: &Incoming| handle(api, &s, req));
        let server = Server::start(handler);
        lock(&state).origin = format!("http://127.0.0.1:{}", server.port);
        FakeForge { api, state, server }
    }

    /// The API URL a client is given: `http://127.0.0.1:PORT` for GitHub,
    /// with `/api/v4` for GitLab and `/api/v1` for Forgejo.
    pub fn api_url(&self) -> String {
        let origin = format!("http://127.0.0.1:{}", self.server.port);
        match self.api {
            Api::Github => origin,
            Api::Gitlab => format!("{origin}/api/v4"),
            Api::Forgejo => format!("{origin}/api/v1"),
        }
    }

    /// Which API it speaks.
    pub fn api(&self) -> Api {
        self.api
    }

    /// Adds a repository `owner/name` whose default branch is `main`, and
    /// knows that branch.
    pub fn add_repository(&self, full_name: &str) {
        lock(&self.state).add_repository(full_name);
    }

    /// Tells the fake that `branch` exists in the repository.
    pub fn add_branch(&self, repository: &str, branch: &str) {
        lock(&self.state).repo_mut(repository).add_branch(branch);
    }

    /// Makes the fake read the repository's branches from a bare git
    /// repository (at each request), besides those it was told.
    pub fn branches_from(&self, repository: &str, git_dir: &Path) {
        lock(&self.state).repo_mut(repository).bare = Some(git_dir.to_path_buf());
    }

    /// The most items a listing's page holds, whatever the client asks.
    pub fn set_page_size(&self, size: usize) {
        lock(&self.state).page_size = size.max(1);
    }

    /// Opens an issue; returns its number.
    pub fn add_issue(&self, repository: &str, title: &str, body: &str) -> u64 {
        lock(&self.state)
            .repo_mut(repository)
            .add_issue(title, body, BOT)
    }

    /// Closes an issue.
    pub fn close_issue(&self, repository: &str, number: u64) {
        lock(&self.state)
            .repo_mut(repository)
            .issue_mut(number)
            .open = false;
    }

    /// Marks a pull request merged (as a person would, on the forge).
    pub fn merge(&self, repository: &str, number: u64) {
        let mut state = lock(&self.state);
        let repo = state.repo_mut(repository);
        repo.pull_mut(number).merged = true;
        repo.pull_item_mut(number).expect("a pull request").open = false;
        repo.touch(number, true);
    }

    /// Closes a pull request without merging it.
    pub fn close_pull(&self, repository: &str, number: u64) {
        let mut state = lock(&self.state);
        let repo = state.repo_mut(repository);
        repo.pull_item_mut(number)
            .unwrap_or_else(|| panic!("the fake has no pull request {number}"))
            .open = false;
        repo.touch(number, true);
    }

    /// Posts a comment as `author` on an issue or pull request (GitLab:
    /// `on_pull` says which of the two numberings `number` is in).
    pub fn add_comment(
        &self,
        repository: &str,
        number: u64,
        on_pull: bool,
        author: &str,
        body: &str,
    ) {
        lock(&self.state)
            .repo_mut(repository)
            .add_comment(number, on_pull, author, body, false);
    }

    /// Sets a repository's clock to `unix` (seconds since the epoch): what
    /// follows is stamped from then on (`respond`'s quiet window reads the
    /// stamps against the real clock).
    pub fn set_clock(&self, repository: &str, unix: u64) {
        lock(&self.state).repo_mut(repository).set_clock(unix);
    }

    /// Adds a milestone.
    pub fn add_milestone(&self, repository: &str, title: &str) {
        lock(&self.state)
            .repo_mut(repository)
            .milestones
            .push(title.to_string());
    }

    /// Adds a milestone to a GitLab group (the owner part of its
    /// repositories' names), which its projects' issues may be in.
    pub fn add_group_milestone(&self, group: &str, title: &str) {
        let mut state = lock(&self.state);
        state
            .group_milestones
            .push((group.to_string(), title.to_string()));
    }

    /// Puts an issue in a milestone (added to the repository first when
    /// neither it nor a group has it).
    pub fn set_milestone(&self, repository: &str, issue: u64, title: &str) {
        let mut state = lock(&self.state);
        let in_group = state.group_milestones.iter().any(|(_, t)| t == title);
        let repo = state.repo_mut(repository);
        if !in_group && !repo.milestones.iter().any(|m| m == title) {
            repo.milestones.push(title.to_string());
        }
        repo.issue_mut(issue).milestone = Some(title.to_string());
    }

    /// Puts labels on an issue (made in the repository if need be).
    pub fn label(&self, repository: &str, issue: u64, labels: &[&str]) {
        let mut state = lock(&self.state);
        let repo = state.repo_mut(repository);
        for l in labels {
            repo.label_id(l);
            let item = repo.issue_mut(issue);
            if !item.labels.iter().any(|x| x == l) {
                item.labels.push(l.to_string());
            }
        }
    }

    /// The labels on an issue.
    pub fn labels(&self, repository: &str, issue: u64) -> Vec<String> {
        lock(&self.state)
            .repo_mut(repository)
            .issue_mut(issue)
            .labels
            .clone()
    }

    /// Makes `login` a collaborator with a permission in GitHub's words
    /// (`admin`, `maintain`, `write`, `triage`, `read`); GitLab shows it as
    /// an access level (40, 40, 30, 20, 10), Forgejo as `admin`, `write`
    /// or `read`.
    pub fn add_collaborator(&self, repository: &str, login: &str, permission: &str) {
        let mut state = lock(&self.state);
        let repo = state.repo_mut(repository);
        repo.collaborators
            .push((login.to_string(), permission.to_string()));
    }

    /// A review of a pull request by `author`; returns its id.
    pub fn add_review(
        &self,
        repository: &str,
        pull: u64,
        author: &str,
        verdict: Verdict,
        body: &str,
    ) -> u64 {
        let mut state = lock(&self.state);
        let repo = state.repo_mut(repository);
        let (id, submitted_at) = (repo.next_id(), repo.now());
        let item = repo.pull_item_mut(pull).expect("a pull request");
        item.reviews.push(FakeReview {
            id,
            author: author.to_string(),
            verdict,
            body: body.to_string(),
            submitted_at,
        });
        id
    }

    /// A comment on `path` (and `line` of the new file) of a pull
    /// request's diff, in a comment-only review of its own; returns its id.
    pub fn add_review_comment(
        &self,
        repository: &str,
        pull: u64,
        author: &str,
        path: &str,
        line: Option<u64>,
        body: &str,
    ) -> u64 {
        let review_id = self.add_review(repository, pull, author, Verdict::Comment, "");
        let mut state = lock(&self.state);
        let repo = state.repo_mut(repository);
        let (id, created_at) = (repo.next_id(), repo.now());
        let item = repo.pull_item_mut(pull).expect("a pull request");
        item.review_comments.push(FakeReviewComment {
            id,
            review_id,
            author: author.to_string(),
            path: path.to_string(),
            line,
            body: body.to_string(),
            created_at,
        });
        id
    }

    /// A check of a pull request's head; a later one of the same name
    /// supersedes it.
    pub fn add_check(
        &self,
        repository: &str,
        pull: u64,
        name: &str,
        outcome: Outcome,
        summary: &str,
        log: &str,
    ) {
        let mut state = lock(&self.state);
        let repo = state.repo_mut(repository);
        let id = repo.next_id();
        let item = repo.pull_item_mut(pull).expect("a pull request");
        item.checks.push(FakeCheck {
            id,
            name: name.to_string(),
            outcome,
            summary: summary.to_string(),
            log: log.to_string(),
            commit_status: false,
        });
    }

    /// A commit status of a pull request's head (`context`, state,
    /// description): on GitHub apart from its check runs.
    pub fn add_status(
        &self,
        repository: &str,
        pull: u64,
        context: &str,
        outcome: Outcome,
        description: &str,
    ) {
        let mut state = lock(&self.state);
        let repo = state.repo_mut(repository);
        let id = repo.next_id();
        let item = repo.pull_item_mut(pull).expect("a pull request");
        item.checks.push(FakeCheck {
            id,
            name: context.to_string(),
            outcome,
            summary: description.to_string(),
            log: String::new(),
            commit_status: true,
        });
    }

    /// Links two issues: `a` blocks `b`, is its parent, or relates to it.
    pub fn link(&self, repository: &str, a: u64, b: u64, link: Link) {
        lock(&self.state)
            .repo_mut(repository)
            .links
            .push((a, b, link));
    }

    /// The next `method` request whose path holds `path` gets `fault`
    /// instead of an answer (once); other requests are answered.
    pub fn fail_request(&self, method: &str, path: &str, fault: Fault) {
        lock(&self.state)
            .aimed
            .push((method.to_string(), path.to_string(), fault));
    }

    /// The next `times` requests get `fault` instead of an answer.
    pub fn fail_next(&self, times: usize, fault: Fault) {
        lock(&self.state).faults = vec![fault; times];
    }

    /// The repository's pull requests (merge requests), by number.
    /// `draft` is as the forge shows it: GitHub's flag, the title's
    /// prefix on the other two.
    pub fn pulls(&self, repository: &str) -> Vec<FakePull> {
        let mut pulls = lock(&self.state).repo_mut(repository).pulls();
        for p in &mut pulls {
            p.draft = match self.api {
                Api::Github => p.draft,
                Api::Gitlab => gitlab::is_draft(&p.title),
                Api::Forgejo => forgejo::is_draft(&p.title),
            };
        }
        pulls
    }

    /// The comments on an issue or pull request, oldest first (GitLab:
    /// `on_pull` picks the numbering), system notes included.
    pub fn comments(&self, repository: &str, number: u64, on_pull: bool) -> Vec<FakeComment> {
        lock(&self.state)
            .repo_mut(repository)
            .comments_on(number, on_pull)
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<ForgeRequest> {
        lock(&self.state).requests.clone()
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Answers one request: a fault if one is queued, 401 without the token,
/// else the API's router; then records it.
fn handle(api: Api, state: &Mutex<State>, req: &Incoming) -> Outgoing {
    let mut state = lock(state);
    let authorized = state::authorized(req);
    let aimed = (state.aimed.iter())
        .position(|(m, p, _)| *m == req.method && req.target.contains(p.as_str()));
    let answer = if let Some(at) = aimed {
        let (_, _, fault) = state.aimed.remove(at);
        state::fault_answer(api, fault)
    } else if !state.faults.is_empty() {
        let fault = state.faults.remove(0);
        state::fault_answer(api, fault)
    } else if !authorized {
        state::unauthorized(api)
    } else {
        match api {
            Api::Github => github::route(&mut state, req),
            Api::Gitlab => gitlab::route(&mut state, req),
            Api::Forgejo => forgejo::route(&mut state, req),
        }
    };
    let status = if answer.hang_up { 0 } else { answer.status };
    state.requests.push(ForgeRequest {
        method: req.method.clone(),
        path: req.target.clone(),
        headers: state::redacted(&req.headers),
        body: req.json(),
        authorized,
        status,
    });
    answer
}
