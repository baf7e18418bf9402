//! planwright-engine: git, agents, scheduler, merge queue, state store (processes and the sandbox are planwright-os).
#![deny(missing_docs)]
// Every system call that needs `unsafe` is in planwright-os.
#![forbid(unsafe_code)]

// The modules are the engine's own; what other crates use is the façade
// below, so a module can be reshaped without touching them.
pub mod agent;
mod caches;
pub mod clock;
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
pub use exec::{remote, AttemptInput, Candidate, Executor, LocalExecutor};
pub use git::repo::Repo;
pub use git::{tracked_files, Git};
pub use model::{
    transition, Failure, FailureKind, IllegalTransition, Phase, RunStatus, Step, TicketState,
};
pub use run::graph::RunGraph;
pub use run::inputs::{root_config, RootConfig};
pub use run::lock::{
    holder as run_lock_holder, is_held as run_lock_held, is_held_at as run_lock_held_at,
    path as run_lock_path,
};
pub use run::pools::foreign_family;
pub use run::preflight::{
    checks_judged, current_branch, failed as preflight_failed, missing_setup, preflight,
    unjudged_checks, Check,
};
pub use run::{
    defaults, outlook, prepare, run, ticket_gates, ticket_pool, Held, Outlook, PreflightFailed,
    Prepared, Resume, RunSettings, RunSummary,
};
pub use store::{AgentRecord, AttemptRow, RunRow, Store, TicketRow};

/// Processes and file operations where agents write live in planwright-os;
/// they keep their paths here.
pub use planwright_os::{beneath, process, proxy};

/// The sandbox of planwright-os, with the settings planwright-config
/// resolves for it.
pub mod sandbox {
    pub use planwright_config::ContainSettings;
    pub use planwright_os::sandbox::*;

    /// The containment `[sandbox] mode` asks for: [`Containment::none`] when
    /// off, else what the kernel can enforce (or why it cannot).
    pub fn containment(mode: planwright_config::SandboxMode) -> Result<Containment, SandboxError> {
        Containment::new(match mode {
            planwright_config::SandboxMode::Enforce => Mode::Enforce,
            planwright_config::SandboxMode::Off => Mode::Off,
        })
    }

    /// The limits `[sandbox] pids` and `memory` give each confined child.
    pub fn limits(contain: &ContainSettings) -> Limits {
        Limits {
            pids: contain.pids,
            memory: contain.memory,
        }
    }

    /// The failure of an attempt whose `who` (`the agent`, `the gate
    /// \`cargo test\``) hit a limit: which, its value, and how to raise it.
    pub fn limit_failure(who: &str, hit: LimitHit) -> crate::model::failure::Failure {
        let key = match hit {
            LimitHit::Pids(_) => "pids",
            LimitHit::Memory(_) => "memory",
        };
        crate::model::failure::Failure::new(
            crate::model::failure::FailureKind::ResourceLimit,
            format!(
                "{who} hit a resource limit: {hit} (if it needs more, raise `[sandbox] {key}` in planwright.toml)"
            ),
        )
    }

    #[cfg(test)]
    mod tests {
        /// The default log cap is written in both crates (planwright-os caps
        /// logs it is not told about): they must agree.
        #[test]
        fn the_log_cap_defaults_agree() {
            assert_eq!(
                planwright_config::defaults::AGENT_LOG_LIMIT,
                crate::process::AGENT_LOG_LIMIT
            );
        }
    }
}
