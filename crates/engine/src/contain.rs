//! The sandbox of planwright-os as the run's settings ask for it: the
//! containment `[sandbox] mode` names, the limits of `[sandbox] pids` and
//! `memory`, and the failure of a child that hit one.

use planwright_config::ContainSettings;
use planwright_os::sandbox::{Containment, LimitHit, Limits, Mode, SandboxError};

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
            planwright_os::process::AGENT_LOG_LIMIT
        );
    }
}
