//! planwright-forge: the forges' REST APIs behind one trait, [`Forge`]:
//! GitHub REST v3, GitLab REST v4 (merge requests) and Forgejo/Gitea API v1.
//! [`connect`] picks the client of an [`Endpoint`]'s kind.
//!
//! Requests and responses only: no git, no processes. The clock is read
//! only to wait as a forge asks (a rate limit's reset), through a
//! [`Timer`] the caller may replace, so tests never sleep. Tokens travel
//! only in the `Authorization` header (`Bearer` on GitHub and GitLab,
//! `token` on Forgejo); URLs never hold them (an API URL with credentials
//! is refused), and no `Debug` shows them. Plain `http` is refused but for
//! loopback hosts.
//!
//! # Retries and waits
//!
//! One request is tried [`RetryPolicy::attempts`] times (4 by default):
//! after a network error or a 5xx, with a backoff of 1s, 2s, 4s; after a
//! rate limit (429, or GitHub's 403 with `Retry-After`,
//! `x-ratelimit-remaining: 0` or a "rate limit" message), after the wait
//! the forge asks for (`Retry-After`, else the reset time of
//! `x-ratelimit-reset` or GitLab's `RateLimit-Reset`, else a minute). A
//! wait longer than [`RetryPolicy::max_wait`] (60s) fails at once with
//! [`ForgeError::RateLimited`]. A `POST` (which creates) is sent again only
//! when it cannot have been acted on: a rate limit, or a connection
//! refused or a name that does not resolve; never after a 5xx or a dropped
//! answer, so no comment or pull request is made twice.
//!
//! # Drafts
//!
//! GitHub has a `draft` field when opening, but its REST `PATCH` ignores
//! `draft`: an existing pull request changes state through the GraphQL
//! mutations `convertPullRequestToDraft` and
//! `markPullRequestReadyForReview`, at `/graphql` beside the REST root
//! (`/api/graphql` for GitHub Enterprise's `/api/v3`). GitLab's draft is a
//! `Draft: ` title prefix and Forgejo's (and Gitea's) a `WIP: ` one: the
//! clients write the prefix and strip it when reading, so
//! [`PullRequest::title`] never holds it.
//!
//! # Errors
//!
//! 401 and 403 are [`ForgeError::Unauthorized`], whose hint names the
//! scopes the kind needs ([`ForgeKind::token_scopes`]); a 404 is told
//! apart as [`ForgeError::RepositoryNotFound`] or
//! [`ForgeError::NotFound`] by asking for the repository; 400, 409 and 422
//! are [`ForgeError::Validation`] with the forge's own message. Opening a
//! pull request of a head branch the forge lacks is a 422 on GitHub and
//! GitLab, and a 404 on Forgejo (a `NotFound` naming the two branches); a
//! second one of the same head is a 422 on GitHub and a 409 on the other
//! two.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod error;
mod feedback;
mod forgejo;
mod github;
mod gitlab;
mod http;
mod hub;
mod shape;
mod types;

pub use error::ForgeError;
pub use feedback::{
    Check, CheckState, IssueLink, IssueQuery, LinkKind, Permission, Review, ReviewComment,
    ReviewState,
};
pub use types::{
    Comment, CommentOn, ForgeKind, Issue, IssueState, NewPullRequest, PullRequest,
    PullRequestUpdate, PullState, Repository, RepositoryInfo, Token,
};

use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// One forge's API, for one repository. A fourth forge is one more
/// implementation.
pub trait Forge: Send + Sync + std::fmt::Debug {
    /// Which API this is.
    fn kind(&self) -> ForgeKind;

    /// The repository every call is about.
    fn repository(&self) -> &Repository;

    /// The login the token belongs to (to tell planwright's own comments
    /// from others').
    fn login(&self) -> Result<String, ForgeError>;

    /// The repository as the forge knows it; also proves that it exists
    /// and that the token may read it.
    fn repository_info(&self) -> Result<RepositoryInfo, ForgeError>;

    /// The pull request whose head is `head` (a branch of this repository):
    /// the open one if there is one, else the most recent merged or closed
    /// one; `None` when there has never been one.
    fn find_pull_request(&self, head: &str) -> Result<Option<PullRequest>, ForgeError>;

    /// Opens a pull request. The forge refuses (a `Validation` error) a
    /// head branch it does not have, or a second open one for the same
    /// head.
    fn open_pull_request(&self, new: &NewPullRequest) -> Result<PullRequest, ForgeError>;

    /// Changes an open pull request's title, body, base or draft state,
    /// and returns it as it now is.
    fn update_pull_request(
        &self,
        number: u64,
        update: &PullRequestUpdate,
    ) -> Result<PullRequest, ForgeError>;

    /// A pull request by number.
    fn pull_request(&self, number: u64) -> Result<PullRequest, ForgeError>;

    /// An issue by number; `None` when the repository has no such issue.
    /// On GitHub and Forgejo the number may name a pull request:
    /// [`Issue::is_pull_request`] says so.
    fn issue(&self, number: u64) -> Result<Option<Issue>, ForgeError>;

    /// Posts a comment in an issue's or pull request's conversation.
    fn post_comment(&self, on: CommentOn, body: &str) -> Result<Comment, ForgeError>;

    /// Every comment in an issue's or pull request's conversation, oldest
    /// first (every page).
    fn comments(&self, on: CommentOn) -> Result<Vec<Comment>, ForgeError>;

    /// The open issues (not pull requests) matching `query`, every page.
    /// A milestone the repository does not have is a `NotFound` error.
    fn issues(&self, query: &IssueQuery) -> Result<Vec<Issue>, ForgeError>;

    /// Puts labels on an issue (creating a label the repository lacks
    /// where the forge does not do it itself).
    fn add_labels(&self, issue: u64, labels: &[String]) -> Result<(), ForgeError>;

    /// Takes a label off an issue; a label that is not there is no error.
    fn remove_label(&self, issue: u64, label: &str) -> Result<(), ForgeError>;

    /// What `user` (a login) may do in the repository; `None` for a user
    /// the forge does not know.
    fn permission(&self, user: &str) -> Result<Permission, ForgeError>;

    /// A pull request's reviews, oldest first (GitLab: its approvals).
    fn reviews(&self, pull: u64) -> Result<Vec<Review>, ForgeError>;

    /// The comments on files and lines of a pull request's diff, oldest
    /// first.
    fn review_comments(&self, pull: u64) -> Result<Vec<ReviewComment>, ForgeError>;

    /// The checks of a pull request's head commit, the latest of each
    /// name: GitHub check runs and commit statuses, the jobs of GitLab's
    /// latest pipeline for the merge request, Forgejo commit statuses.
    fn checks(&self, pull: u64) -> Result<Vec<Check>, ForgeError>;

    /// The issues linked to an issue by the forge itself: GitHub's
    /// blocked-by, blocking, sub-issues and parent; GitLab's issue links;
    /// Forgejo's dependencies and blocks. An API the forge does not have
    /// (an older server) lists nothing.
    fn issue_links(&self, issue: u64) -> Result<Vec<IssueLink>, ForgeError>;
}

/// Where a forge is and who speaks to it.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Which API.
    pub kind: ForgeKind,
    /// The API's root: `https://api.github.com`,
    /// `https://ghe.example.com/api/v3`, `https://gitlab.com/api/v4`,
    /// `https://codeberg.org/api/v1`. Plain `http` only for loopback hosts.
    pub api_url: String,
    /// The repository.
    pub repository: Repository,
    /// The token.
    pub token: Token,
}

/// A client for `endpoint`, with the default [`Options`]. Checks the API
/// URL (`https`, or `http` for a loopback host); sends nothing.
pub fn connect(endpoint: &Endpoint) -> Result<Box<dyn Forge>, ForgeError> {
    connect_with(endpoint, Options::default())
}

/// A client for `endpoint` with its own retries, timer and timeout.
pub fn connect_with(endpoint: &Endpoint, options: Options) -> Result<Box<dyn Forge>, ForgeError> {
    let (url, repository, token) = (
        &endpoint.api_url,
        endpoint.repository.clone(),
        &endpoint.token,
    );
    Ok(match endpoint.kind {
        ForgeKind::Github => Box::new(github::Github::new(url, repository, token, options)?),
        ForgeKind::Gitlab => Box::new(gitlab::Gitlab::new(url, repository, token, options)?),
        ForgeKind::Forgejo => Box::new(forgejo::Forgejo::new(url, repository, token, options)?),
    })
}

/// Waiting, and the wall clock a rate limit's reset time is read against.
/// The real one is [`SystemTimer`]; tests pass one that records waits and
/// returns at once.
pub trait Timer: Send + Sync {
    /// Waits `duration`.
    fn sleep(&self, duration: Duration);
    /// The current time.
    fn now(&self) -> SystemTime;
}

/// The system's clock and `std::thread::sleep`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemTimer;

impl Timer for SystemTimer {
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration)
    }
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// How long and how often a client retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries of one request in all (network errors, 5xx, rate limits).
    pub attempts: u32,
    /// The first wait after a network error or a 5xx; doubled each time.
    pub backoff: Duration,
    /// The longest wait a forge may ask for (`Retry-After`,
    /// `x-ratelimit-reset`); a longer one fails at once with
    /// [`ForgeError::RateLimited`].
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    /// 4 tries, 1s then 2s then 4s after network errors, waits of up to 60s.
    fn default() -> RetryPolicy {
        RetryPolicy {
            attempts: 4,
            backoff: Duration::from_secs(1),
            max_wait: Duration::from_secs(60),
        }
    }
}

/// How a client behaves, beyond where it connects.
#[derive(Clone)]
pub struct Options {
    /// Retries and waits.
    pub retry: RetryPolicy,
    /// The clock and the sleeper.
    pub timer: Arc<dyn Timer>,
    /// How long one request may take, connection included.
    pub timeout: Duration,
}

impl Default for Options {
    /// The default retries, the system timer, 30 seconds per request.
    fn default() -> Options {
        Options {
            retry: RetryPolicy::default(),
            timer: Arc::new(SystemTimer),
            timeout: Duration::from_secs(30),
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}
