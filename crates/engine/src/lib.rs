//! planwright-engine: git, agents, scheduler, merge queue, state store (processes and the sandbox are planwright-os).
#![deny(missing_docs)]

// The modules are the engine's own; what other crates use is the façade
// below, so a module can be reshaped without touching them.
pub mod agent;
mod caches;
pub mod clock;
mod contain;
pub mod deliver;
mod demo;
mod draft;
mod error;
mod events;
mod exec;
mod git;
pub mod issues;
mod log;
mod model;
pub mod replay;
pub mod respond;
mod run;
mod store;
pub mod verify;

pub use demo::{prepare as prepare_demo, Demo};
pub use draft::{draft, DraftEvent, DraftInput};
pub use error::EngineError;
pub use events::{
    AttemptAgent, AttemptPlace, Emitter, Event, JsonLines, Recorder, Reporter, Stamped,
};
pub use exec::{remote, AttemptInput, Candidate, Executor, LocalExecutor, ResumedSink};
pub use git::repo::Repo;
pub use git::tracked_files;
pub use git::worktree::WorkTree;
pub use model::{
    transition, AgentOutcomeKind, CounterfactualOutcome, Failure, FailureKind, IllegalTransition,
    Phase, RebuildReason, RunStatus, StartsFrom, Step, TicketState,
};
pub use run::graph::RunGraph;
pub use run::inputs::{root_config, RootConfig};
pub use run::lock::{
    holder as run_lock_holder, is_held as run_lock_held, is_held_at as run_lock_held_at,
    path as run_lock_path,
};
pub use run::preflight::{
    checks_judged, current_branch, failed as preflight_failed, missing_setup, preflight,
    unjudged_checks, Check, CheckName, CheckStatus,
};
pub use run::{
    defaults, outlook, prepare, run, Held, Outlook, PreflightFailed, Prepared, Resume, RunSettings,
    RunSummary,
};
pub use store::{AgentRecord, AttemptRow, RunRow, Store, TicketRow};

/// Processes and file operations where agents write live in planwright-os;
/// they keep their paths here.
pub use planwright_os::{beneath, process, proxy};

/// The sandbox of planwright-os, with the settings planwright-config
/// resolves for it.
pub mod sandbox {
    pub use crate::contain::{containment, limit_failure, limits};
    pub use planwright_config::ContainSettings;
    pub use planwright_os::sandbox::*;
}
