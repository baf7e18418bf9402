//! The engine's error type: what stops a run (as opposed to a ticket failing,
//! which is a [`crate::model::failure::Failure`]).

use std::path::PathBuf;

/// Why the engine could not go on.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A git command failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The state store could not be read or written.
    #[error("state store `.planwright/state.db`: {0}")]
    State(#[from] StoreError),
    /// A file could not be read or written.
    #[error("cannot access `{path}`: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file operation in a directory an agent or a gate can write was
    /// refused (a symlink, a special file) or failed.
    #[error(transparent)]
    Beneath(#[from] planwright_os::beneath::BeneathError),
    /// A process could not be started.
    #[error(transparent)]
    Process(#[from] planwright_os::process::ProcessError),
    /// The sandbox cannot be had (enforce mode on a kernel without it).
    #[error(transparent)]
    Sandbox(#[from] planwright_os::sandbox::SandboxError),
    /// The target is not usable (not a git repository, no base branch, ...).
    #[error("{message}")]
    Repo {
        /// What is wrong.
        message: String,
        /// How to fix it.
        hint: Option<String>,
    },
    /// The settings cannot work (unknown agent, bad template, ...).
    #[error("{0}")]
    Settings(String),
    /// The repository changed under the run in a way that cannot be trusted.
    #[error("repository integrity: {0}")]
    Integrity(String),
    /// The worker protocol's peer went away or said something else.
    #[error("the worker protocol's peer {0}")]
    Wire(#[from] WireError),
    /// A bug in planwright (a worker thread panicked).
    #[error("internal error: {0}")]
    Internal(String),
}

/// `e`, unless it is the sandbox's (which the kernel refused to apply to
/// the child): that one is the machine's, whatever the child was, and
/// stops the run as [`EngineError::Sandbox`], where its hint is rendered.
pub(crate) fn sandbox_stops(
    e: planwright_os::process::ProcessError,
) -> Result<planwright_os::process::ProcessError, EngineError> {
    match e {
        planwright_os::process::ProcessError::Sandbox(s) => Err(EngineError::Sandbox(s)),
        other => Ok(other),
    }
}

impl EngineError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        EngineError::Io {
            path: path.into(),
            source,
        }
    }

    /// How to get going again, where the error is the machine's and its
    /// type knows the fix (the sandbox's); [`EngineError::Repo`] carries
    /// its own.
    pub fn hint(&self) -> Option<&'static str> {
        use planwright_os::process::ProcessError;
        match self {
            EngineError::Sandbox(s) | EngineError::Process(ProcessError::Sandbox(s)) => s.hint(),
            _ => None,
        }
    }

    /// A repository problem with a hint.
    pub fn repo(message: impl Into<String>, hint: impl Into<String>) -> Self {
        EngineError::Repo {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }
}

/// Why a git command failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started.
    #[error("cannot run git: {0} (is git installed and on PATH?)")]
    Spawn(#[source] std::io::Error),
    /// git ran and failed.
    #[error("`git {args}` failed in `{dir}`: {stderr}")]
    Failed {
        /// The arguments, for the message.
        args: String,
        /// Where it ran.
        dir: String,
        /// What git said.
        stderr: String,
    },
    /// The directory to run git in does not exist (spawning fails with the
    /// same error as a missing git, so this is told apart before blaming git).
    #[error("`{0}` is not a directory")]
    NoDir(String),
    /// git printed something that is not UTF-8 where text was expected.
    #[error("`git {0}` printed output that is not UTF-8")]
    NotUtf8(String),
    /// The git on `PATH` is older than planwright needs.
    #[error("git {found} is too old: planwright needs git {needed} or newer")]
    TooOld {
        /// The version `git --version` printed.
        found: String,
        /// `MINIMUM_GIT_VERSION`.
        needed: String,
    },
    /// `git --version` printed no version planwright can read.
    #[error("`git --version` printed `{0}`, which names no version")]
    NoVersion(String),
}

/// Why the store could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    /// The store was written by a newer planwright.
    #[error("schema version {found} is newer than this planwright knows ({known}); use a newer planwright")]
    TooNew {
        /// The version found.
        found: usize,
        /// The newest version this build knows.
        known: usize,
    },
    /// A step the ticket state machine does not allow (a bug).
    #[error("ticket {ticket}: {source}")]
    Illegal {
        /// The ticket.
        ticket: String,
        /// The state and the step.
        source: crate::model::IllegalTransition,
    },
}

/// Why a peer's stream could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The stream ended (the peer went away).
    #[error("closed the connection")]
    Closed,
    /// Reading or writing failed.
    #[error("broke the connection: {0}")]
    Io(#[from] std::io::Error),
    /// A line that is not a message of this protocol.
    #[error("sent a line that is not a message of the worker protocol ({0}): {1}")]
    Malformed(String, String),
}
