//! Delivering a run to a forge (docs/forge.md): what the run merged pushed
//! to planwright's own branches on the remote, and one pull request per
//! run (or per merged ticket, stacked along the DAG) opened or updated.
//!
//! In three steps, so that the caller renders the texts and a dry run
//! stops before anything leaves the machine: [`prepare`] reads the run's
//! record and says what would be pushed where; the caller writes each
//! pull request's title and body; [`execute`] checks the plan's issue,
//! pushes, opens or updates, and posts the after-merge comment.
//! Nothing here loses work: the run's local branches are never touched,
//! and every step can be run again.

mod forge;
mod pulls;
mod push;

pub use forge::{
    api_kind, connect, connect_to, execute, token, Action, AfterMerge, Delivered, PullText, Report,
    DELIVERED_MARKER, REMAINING_SCOPE_MARKER,
};
pub use pulls::{prepare, Delivery, Pull, ROUND_COMMIT};
pub(crate) use push::{fetch, push, Push};
pub use push::{fetched_ref, pushed_ref, remote_url, PushOutcome, Pushed};

use crate::error::{EngineError, GitError, StoreError};

/// Why a delivery stopped. Each says its cause; [`DeliverError::hint`]
/// says the fix. Nothing is lost: the run's branches stay, and `deliver`
/// can be run again.
#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    /// The run is still going on.
    #[error("run `{0}` is still going on")]
    Running(String),
    /// The run merged nothing.
    #[error("run `{0}` merged no ticket, so there is nothing to deliver")]
    NothingMerged(String),
    /// The configured remote does not exist.
    #[error("the repository has no remote `{remote}`")]
    NoRemote {
        /// The remote's name.
        remote: String,
    },
    /// A branch planwright would push is the base branch.
    #[error("`[forge] branch` gives `{0}`, the run's base branch; planwright never pushes to it")]
    BaseBranch(String),
    /// No token variable is set.
    #[error("no token for {kind}: none of {names} is set")]
    NoToken {
        /// The forge's kind.
        kind: &'static str,
        /// The variables looked at, quoted.
        names: String,
        /// What the token needs.
        scopes: &'static str,
    },
    /// codeboost: the plan's issue is not an issue of the repository.
    #[error("Plan issue does not match the selected issue: {0}")]
    IssueMismatch(String),
    /// The remote refused the push.
    #[error("pushing `{branch}` to `{remote}` failed: {reason}{}", detail_text(.detail))]
    Push {
        /// The remote.
        remote: String,
        /// The branch.
        branch: String,
        /// Why, in words.
        reason: &'static str,
        /// What git said.
        detail: String,
    },
    /// The forge refused to open or update a pull request (422, 400, 409,
    /// or a 404 for a branch): its branch is pushed, nothing is lost.
    #[error("{doing}: {source}")]
    PullRefused {
        /// `opening the pull request from `h` into `b`` or `updating pull request #N`.
        doing: String,
        /// The branch that was pushed.
        head: String,
        /// The base asked for.
        base: String,
        /// The forge's answer, with its own words (the field it names).
        source: Box<planwright_forge::ForgeError>,
    },
    /// The forge's API failed.
    #[error(transparent)]
    Forge(#[from] planwright_forge::ForgeError),
    /// Reading the repository or the store failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

fn detail_text(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(" (git: {detail})")
    }
}

impl From<GitError> for DeliverError {
    fn from(e: GitError) -> DeliverError {
        DeliverError::Engine(e.into())
    }
}

impl From<StoreError> for DeliverError {
    fn from(e: StoreError) -> DeliverError {
        DeliverError::Engine(e.into())
    }
}

impl DeliverError {
    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            DeliverError::Running(_) => Some("wait for it to end, then run `planwright deliver` again".into()),
            DeliverError::NothingMerged(_) => Some("`planwright report` says why its tickets did not merge".into()),
            DeliverError::NoRemote { remote } => Some(format!(
                "add it with `git remote add {remote} URL`, or name another with `[forge] remote` in planwright.toml"
            )),
            DeliverError::BaseBranch(_) => Some("write a `[forge] branch` of planwright's own, such as `planwright/{run}`".into()),
            DeliverError::NoToken { names, scopes, .. } => Some(format!(
                "set {names} to {scopes}, or name another variable with `[forge] token_env`"
            )),
            DeliverError::IssueMismatch(_) => Some(
                "the plan's `issue` must be an open issue of `[forge] repository`; fix the plan or `repository`".into(),
            ),
            DeliverError::Push { reason, .. } if reason.contains("someone else") || reason.contains("did not push") => Some(
                "look at the branch on the forge; delete it there (or name another with `[forge] branch`), then run `planwright deliver` again".into(),
            ),
            DeliverError::Push { reason, .. } if reason.contains("protection") => Some(
                "allow pushes to planwright's branches in the forge's branch protection rules, or name another branch with `[forge] branch`".into(),
            ),
            DeliverError::Push { reason, .. } if reason.contains("credentials") => Some(
                "for an https remote, set the forge's token (see `token_env`); for ssh, check that `git push` works from this repository".into(),
            ),
            DeliverError::Push { .. } => Some("check that `git push` to the remote works from this repository, then run `planwright deliver` again".into()),
            DeliverError::PullRefused { head, base, .. } => Some(format!(
                "`{head}` is pushed; fix what the forge names (a `base` it lacks: push `{base}` to the remote; a pull request that already exists for `{head}`: close it, or name another branch with `[forge] branch`), then run `planwright deliver` again"
            )),
            DeliverError::Forge(e) => e.hint(),
            DeliverError::Engine(_) => None,
        }
    }

    /// Whether the run's own content is the cause (the exit code of an
    /// invalid plan), rather than the set-up.
    pub fn is_plan_error(&self) -> bool {
        matches!(self, DeliverError::IssueMismatch(_))
    }
}
