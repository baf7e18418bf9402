//! What can go wrong talking to a forge, each with its cause and its fix.

use crate::types::{ForgeKind, Repository};
use std::time::Duration;

/// An error from a forge's API. `Display` says the cause; [`ForgeError::hint`]
/// says the fix. Nothing here holds the token.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    /// The API URL is not one the client may use.
    #[error("`{url}` is not a usable forge API URL: {reason}")]
    ApiUrl {
        /// The URL as given.
        url: String,
        /// Why it is refused.
        reason: String,
    },
    /// 401 or 403: the token is missing, wrong, expired or lacks scopes.
    #[error("{} refused the token ({status}): {message}", kind.title())]
    Unauthorized {
        /// The forge.
        kind: ForgeKind,
        /// 401 or 403.
        status: u16,
        /// The forge's own message.
        message: String,
    },
    /// 404 for the repository itself (or a token that may not see it).
    #[error("{} has no repository `{repository}` (or the token may not see it)", kind.title())]
    RepositoryNotFound {
        /// The forge.
        kind: ForgeKind,
        /// The repository asked for.
        repository: Repository,
    },
    /// 404 for a thing in a repository that exists.
    #[error("{} has no {what} in `{repository}`", kind.title())]
    NotFound {
        /// The forge.
        kind: ForgeKind,
        /// The repository.
        repository: Repository,
        /// What was asked for, e.g. "pull request 7".
        what: String,
    },
    /// 422 (or 400/409): the forge refused the request's content.
    #[error("{} refused the request ({status}): {message}", kind.title())]
    Validation {
        /// The forge.
        kind: ForgeKind,
        /// The status.
        status: u16,
        /// The forge's own message (with its field errors).
        message: String,
    },
    /// 429 or a secondary rate limit that lasted longer than the client
    /// waits.
    #[error("{} is rate limiting this token{}", kind.title(), wait_text(.retry_after))]
    RateLimited {
        /// The forge.
        kind: ForgeKind,
        /// How long the forge said to wait, when it said.
        retry_after: Option<Duration>,
    },
    /// The forge could not be reached, after the bounded retries.
    #[error("could not reach {} at `{api_url}` (tries: {attempts}): {message}", kind.title())]
    Network {
        /// The forge.
        kind: ForgeKind,
        /// The API URL.
        api_url: String,
        /// How many times it was tried.
        attempts: u32,
        /// The last error.
        message: String,
    },
    /// A 5xx answer, after the bounded retries.
    #[error("{} failed with {status} (tries: {attempts}): {message}", kind.title())]
    Server {
        /// The forge.
        kind: ForgeKind,
        /// The last status.
        status: u16,
        /// How many times it was tried.
        attempts: u32,
        /// The forge's own message.
        message: String,
    },
    /// Any other status the client does not expect.
    #[error("{} answered {status} to {method} {path}: {message}", kind.title())]
    Unexpected {
        /// The forge.
        kind: ForgeKind,
        /// The status.
        status: u16,
        /// The request's method.
        method: String,
        /// The request's path (no query, no token: tokens are never in URLs).
        path: String,
        /// The forge's own message.
        message: String,
    },
    /// A 2xx answer whose body is not what the API documents.
    #[error("{} answered {method} {path} with a body planwright cannot read: {message}", kind.title())]
    Response {
        /// The forge.
        kind: ForgeKind,
        /// The request's method.
        method: String,
        /// The request's path.
        path: String,
        /// What did not fit.
        message: String,
    },
}

fn wait_text(retry_after: &Option<Duration>) -> String {
    match retry_after {
        Some(d) => format!(" (it asked to wait {}s)", d.as_secs()),
        None => String::new(),
    }
}

impl ForgeError {
    /// What the user can do about it, when there is something to say.
    pub fn hint(&self) -> Option<String> {
        match self {
            ForgeError::ApiUrl { .. } => Some(
                "use `https://` (plain `http://` only for 127.0.0.1, ::1 or localhost)".into(),
            ),
            ForgeError::Unauthorized { kind, .. } => Some(format!(
                "{} needs {}; check that the token is current and not expired",
                kind.title(),
                kind.token_scopes()
            )),
            ForgeError::RepositoryNotFound { .. } => Some(
                "check `repository` (`owner/name`) and `api_url` in `[forge]`, and that the token may read it"
                    .into(),
            ),
            ForgeError::RateLimited { .. } => {
                Some("wait for the limit to reset, then run the command again".into())
            }
            ForgeError::Network { .. } | ForgeError::Server { .. } => {
                Some("check the network and the forge's status, then run the command again".into())
            }
            _ => None,
        }
    }

    /// Whether the forge refused the token (401/403).
    pub fn is_unauthorized(&self) -> bool {
        matches!(self, ForgeError::Unauthorized { .. })
    }
}
