//! How far an attempt got: its phases, in order, spelled one way in code,
//! the state store, events, the worker protocol and messages.

use super::ticket::named_enum;

named_enum! {
    /// A phase of an attempt. It is `starting` once recorded; the executor
    /// reports `workspace`, `agent` and `commit`, the run's verification
    /// `verify`, `gates` and `beyond gates`.
    #[derive(schemars::JsonSchema)]
    Phase {
        /// Recorded; nothing asked of the executor yet.
        Starting = "starting",
        /// Its workspace is made ready (reset, set up).
        Workspace = "workspace",
        /// Its agent works.
        Agent = "agent",
        /// Its candidate commit is built from the workspace's files.
        Commit = "commit",
        /// Scope, rails and gate-script integrity are checked.
        Verify = "verify",
        /// Its gates run in planwright's own checkout of the candidate.
        Gates = "gates",
        /// Counterfactuals and review passes judge it.
        #[serde(rename = "beyond gates")]
        BeyondGates = "beyond gates",
    }
}

impl Phase {
    /// Whether an attempt in this phase is past its agent, in its own
    /// verification (which the merge queue waits for to fill a batch).
    pub fn past_agent(self) -> bool {
        !matches!(self, Phase::Starting | Phase::Workspace | Phase::Agent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON of events and of the worker protocol spells each phase as
    /// the store and the messages do.
    #[test]
    fn each_phase_has_one_spelling() {
        for &phase in Phase::ALL {
            let json = serde_json::to_string(&phase).unwrap();
            assert_eq!(json, format!("\"{phase}\""));
            assert_eq!(serde_json::from_str::<Phase>(&json).unwrap(), phase);
            assert_eq!(Phase::from_name(phase.as_str()), Some(phase));
        }
    }
}
