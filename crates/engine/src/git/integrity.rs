//! Gate-script integrity: a candidate must not change the files its
//! gates run, nor the scripts an npm gate runs (agb's npm rules, see
//! ANCHORS.md), or the gates prove nothing. Also the refusal of a
//! repository whose git config would run programs inside planwright's
//! git calls. (What no agent may change in the repository is the
//! [`crate::git::guard::Guard`]'s.)

use crate::error::EngineError;
use crate::git::repo::Repo;
use crate::model::failure::{Failure, FailureKind};
use planwright_config::gate_from_argv;
use planwright_plan::gate_integrity;
use planwright_plan::model::{Gate, ScopeEntry};

/// Refuses a repository whose configuration would run programs inside
/// planwright's git calls, naming the keys and how to accept them.
pub(crate) fn refuse_risky_config(repo: &Repo, allow: &[String]) -> Result<(), EngineError> {
    let risky = repo.risky_config(allow)?;
    if risky.is_empty() {
        return Ok(());
    }
    Err(EngineError::Integrity(risky_config_message(&risky)))
}

/// The message naming risky configuration keys.
pub(crate) fn risky_config_message(risky: &[String]) -> String {
    let keys: Vec<&str> = risky
        .iter()
        .map(|kv| kv.split_once('=').map_or(kv.as_str(), |(k, _)| k))
        .collect();
    format!(
        "the repository's git config defines programs or redirections that would run inside planwright's git calls: {}; remove them, or accept each by name in planwright.toml: `[git] allow_config = [{}]`",
        risky.join(", "),
        keys.iter()
            .map(|k| format!("\"{}\"", k.replace('\\', "\\\\").replace('"', "\\\"")))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Checks that a candidate of a ticket with scope `scope`, which changed
/// the paths `changed` (both sides of renames), leaves alone the files its
/// gates and the set-up commands `setups` run as programs unless the scope
/// names them; every npm gate against `package.json` at `base` and at
/// `candidate`, and every package-manager command against its lifecycle
/// scripts (npm runs them on its own); and that a candidate of a
/// package-manager command does not change an `.npmrc` (whose
/// `script-shell` would decide what `npm test` runs).
pub(crate) fn check_gate_scripts(
    repo: &Repo,
    gates: &[Gate],
    setups: &[Vec<String>],
    scope: &[ScopeEntry],
    base: &str,
    candidate: &str,
    changed: &[String],
) -> Result<Result<(), Failure>, EngineError> {
    let commands: Vec<(&str, Gate)> = (gates.iter().map(|g| ("gate", g.clone())))
        .chain(setups.iter().map(|argv| ("set-up", gate_from_argv(argv))))
        .collect();
    if let Some(failure) = changed_gate_program(&commands, scope, changed) {
        return Ok(Err(failure));
    }
    // Only a package manager reads package.json or an rc file: with none
    // among the commands there is nothing to read.
    if !commands
        .iter()
        .any(|(_, g)| gate_integrity::package_manager(&g.argv))
    {
        return Ok(Ok(()));
    }
    let before = repo.file_at(base, "package.json")?;
    let after = repo.file_at(candidate, "package.json")?;
    for (what, gate) in &commands {
        let (before, after) = (before.as_deref(), after.as_deref());
        let found = match gate_integrity::npm_script(&gate.argv) {
            Some(_) => gate_integrity::check(&gate.argv, before, after),
            None if gate_integrity::package_manager(&gate.argv) => {
                gate_integrity::check_installs(before, after)
            }
            None => Vec::new(),
        };
        if let Some(first) = found.first() {
            let mut evidence: Vec<String> = found.iter().map(|t| t.message.clone()).collect();
            evidence.push(format!("(the {what} `{}` runs them)", gate.command_line()));
            return Ok(Err(Failure::new(
                FailureKind::GateScriptTampering,
                first.message.clone(),
            )
            .with_evidence(evidence.join("\n"))));
        }
        let npm = gate_integrity::package_manager(&gate.argv);
        let rc = changed.iter().find(|p| {
            p.rsplit('/')
                .next()
                .is_some_and(|n| gate_integrity::RC_FILES.contains(&n))
        });
        if let (true, Some(rc)) = (npm, rc) {
            return Ok(Err(Failure::new(
                FailureKind::GateScriptTampering,
                format!(
                    "`{rc}` changed; it configures how the {what} `{}` runs scripts",
                    gate.command_line()
                ),
            )));
        }
    }
    Ok(Ok(()))
}

/// The failure of a candidate that changed a file one of `commands` (each
/// a gate or a set-up) runs as its program (`./check.sh`, `sh
/// scripts/test.sh`), which `scope` does not name.
fn changed_gate_program(
    commands: &[(&str, Gate)],
    scope: &[ScopeEntry],
    changed: &[String],
) -> Option<Failure> {
    commands.iter().find_map(|(what, gate)| {
        let file = gate_integrity::program_files(&gate.argv)
            .into_iter()
            .find(|f| changed.contains(f) && !gate_integrity::named(scope, f))?;
        Some(Failure::new(
            FailureKind::GateScriptTampering,
            format!(
                "`{file}` changed; the {what} `{}` runs it, and the ticket's scope does not name it",
                gate.command_line()
            ),
        ))
    })
}
