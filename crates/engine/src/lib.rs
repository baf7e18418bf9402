//! planwright-engine: git, agents, scheduler, merge queue, state store (processes and the sandbox are planwright-os).
#![deny(missing_docs)]
// Every system call that needs `unsafe` is in planwright-os.
#![forbid(unsafe_code)]

pub mod agent;
pub mod clock;
pub mod demo;
pub mod draft;
pub mod error;
pub mod events;
pub mod exec;
pub mod git;
pub mod model;
pub mod run;
pub mod store;
pub mod verify;

pub use error::EngineError;
pub use model::{Failure, FailureKind};
/// Processes and file operations where agents write live in planwright-os;
/// they keep their paths here.
pub use planwright_os::{beneath, process};

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
