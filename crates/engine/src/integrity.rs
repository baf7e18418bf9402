//! Gate-script integrity: a candidate must not change the scripts its gates
//! run (agb's npm rules, see ANCHORS.md), or the gates prove nothing.

use crate::error::EngineError;
use crate::failure::{Failure, FailureKind};
use crate::repo::Repo;
use planwright_plan::gate_integrity;
use planwright_plan::model::Gate;

/// Checks every gate against `package.json` at `base` and at `candidate`.
pub fn check_gate_scripts(
    repo: &Repo,
    gates: &[Gate],
    base: &str,
    candidate: &str,
) -> Result<Result<(), Failure>, EngineError> {
    let before = repo.file_at(base, "package.json")?;
    let after = repo.file_at(candidate, "package.json")?;
    for gate in gates {
        let found = gate_integrity::check(&gate.argv, before.as_deref(), after.as_deref());
        if let Some(first) = found.first() {
            let evidence: Vec<String> = found.iter().map(|t| t.message.clone()).collect();
            return Ok(Err(Failure::new(
                FailureKind::GateScriptTampering,
                first.message.clone(),
            )
            .with_evidence(evidence.join("\n"))));
        }
    }
    Ok(Ok(()))
}
