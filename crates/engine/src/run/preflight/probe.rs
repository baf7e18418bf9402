//! The gates every ticket shares, run once on the base commit in a gate
//! checkout before anything is spent: a gate that cannot pass there (the
//! project's dependencies missing, say) would fail every ticket twice. A
//! base that is red is an error unless `--allow-red-base`; the lock files
//! found name the `[workspace] setup` line that installs what is missing.

use super::workspace::{beside_first_workspace, trial};
use super::{failed, Check, CheckName};
use crate::git::repo::Repo;
use crate::model::Verdict;
use crate::run::RunSettings;
use crate::verify::checkout::Checkouts;
use planwright_os::process::Cancel;
use planwright_plan::model::Gate;
use planwright_plan::Plan;
use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

/// Lines of a failing gate's output the check quotes.
const QUOTED_LINES: usize = 12;

/// Runs the plan's and the configured gates (not a ticket's own, which
/// may well wait for its change) on the base commit, when the checks
/// before all passed and `settings.gate_probe` asks for it.
pub(super) fn check_gate_probe(
    repo: &Repo,
    plan: &Plan,
    settings: &RunSettings,
    out: &mut Vec<Check>,
) {
    let gates = shared_gates(plan, &settings.extra_gates);
    if !settings.gate_probe || gates.is_empty() || failed(out) {
        return;
    }
    let Ok(Some(base)) = repo.branch_tip(&plan.base) else {
        return;
    };
    let short = &base[..base.len().min(10)];
    let Ok(containment) = crate::contain::containment(settings.contain.mode) else {
        return;
    };
    let _lock = match crate::run::lock::RunLock::acquire(repo) {
        Ok(lock) => lock,
        Err(e) => {
            out.push(Check::warning(
                CheckName::GateProbe,
                format!("the gates were not tried on the base commit {short}: {e}"),
                "run preflight again when that run has ended",
            ));
            return;
        }
    };
    let contain = &settings.contain;
    let ready = (repo.ensure_excluded()).and_then(|()| repo.ensure_own_git(&contain.allow_config));
    if let Err(e) = ready {
        out.push(Check::error(
            CheckName::GateProbe,
            format!("cannot try the gates on the base commit {short}: {e}"),
            "check that `.planwright/` in the repository is writable",
        ));
        return;
    }
    let checkouts = Checkouts::new(
        repo.clone(),
        settings.workspace.clone(),
        containment,
        contain,
    );
    let log = repo.state_dir().join("preflight-gates.log");
    let _ = std::fs::remove_file(&log);
    let started = Instant::now();
    let local = matches!(
        settings.executor,
        planwright_config::ExecutorSettings::Local
    );
    let verdict = beside_first_workspace(repo, local, &base, || {
        checkouts.gate(
            &trial(),
            &base,
            &gates,
            &settings.gates,
            &log,
            &Cancel::default(),
        )
    });
    let took = format!("{:.1} s", started.elapsed().as_secs_f64());
    let names: Vec<String> = gates
        .iter()
        .map(|g| format!("`{}`", g.command_line()))
        .collect();
    out.push(match verdict {
        Ok(Verdict::Pass) => Check::ok(
            CheckName::GateProbe,
            format!(
                "{} pass on the base commit {short} ({took})",
                names.join(", ")
            ),
        ),
        Ok(Verdict::Fail(f)) => red_base(repo, &base, settings, &f, &log, &took),
        Ok(Verdict::Cancelled) => Check::error(
            CheckName::GateProbe,
            "the gates' trial on the base was interrupted",
            "run preflight again",
        ),
        Err(e) => Check::error(
            CheckName::GateProbe,
            format!("cannot try the gates on the base commit {short}: {e}"),
            e.hint()
                .map_or_else(|| format!("see {}", log.display()), str::to_string),
        ),
    });
}

/// The check of gates that fail on the base commit: an error unless
/// `--allow-red-base`, quoting the first lines, with the set-up a lock
/// file suggests.
fn red_base(
    repo: &Repo,
    base: &str,
    settings: &RunSettings,
    f: &crate::model::failure::Failure,
    log: &std::path::Path,
    took: &str,
) -> Check {
    let short = &base[..base.len().min(10)];
    let first: Vec<&str> = f.evidence.lines().take(QUOTED_LINES).collect();
    let message = format!(
        "on the base commit {short} ({took}), {}:\n{}",
        f.message,
        first.join("\n")
    );
    let setup = match settings.workspace.setup.is_empty() {
        true => setup_hint(repo, base),
        false => None,
    };
    let mut hint = match setup {
        Some(line) => format!("gates run in a fresh checkout without the project's dependencies: add `{line}` to `[workspace]` in planwright.toml"),
        None => "fix the gates or the base branch, so that they pass before any ticket".to_string(),
    };
    hint.push_str(&format!(" (the whole log is {})", log.display()));
    match settings.allow_red_base {
        true => Check::warning(CheckName::GateProbe, message, hint),
        false => Check::error(
            CheckName::GateProbe,
            message,
            format!(
                "{hint}; `{}` runs anyway, `{}` skips this trial",
                planwright_plan::Flag::AllowRedBase,
                planwright_plan::Flag::NoGateProbe
            ),
        ),
    }
}

/// Without `[workspace] setup`, a lock file at the base's root says the
/// gates' fresh checkouts lack the project's dependencies: a warning with
/// the line to add (preflight, `run` and `run --dry-run` print it).
pub(super) fn check_lock_files(
    repo: &Repo,
    plan: &Plan,
    settings: &RunSettings,
    out: &mut Vec<Check>,
) {
    if !settings.workspace.setup.is_empty() {
        return;
    }
    let Ok(Some(base)) = repo.branch_tip(&plan.base) else {
        return;
    };
    out.extend(setup_hint(repo, &base).map(no_setup));
}

/// Without `[workspace] setup` (`setup` empty), the set-up a lock file at
/// the root of the repository at `dir`, as its `HEAD` holds it, suggests:
/// what `validate` says, as preflight says it of the base.
pub fn missing_setup(dir: &Path, setup: &[Vec<String>]) -> Option<Check> {
    if !setup.is_empty() {
        return None;
    }
    let repo = Repo::open(dir).ok()?;
    setup_hint(&repo, "HEAD").map(no_setup)
}

/// The warning that names `line`, the set-up to add.
fn no_setup(line: String) -> Check {
    Check::warning(
        CheckName::Setup,
        "there is no `[workspace] setup`, and gates run in a fresh checkout without the project's dependencies, which a lock file at the repository's root pins",
        format!("add `{line}` to `[workspace]` in planwright.toml (see docs/configuration.md#workspace-formerly-worktree)"),
    )
}

/// The `[workspace] setup` line the lock files of `base` suggest.
fn setup_hint(repo: &Repo, base: &str) -> Option<String> {
    let files = crate::git::tracked_files(repo.root(), base).ok()?;
    let at_top: HashSet<&str> = files
        .iter()
        .map(String::as_str)
        .filter(|f| !f.contains('/'))
        .collect();
    planwright_plan::project::setup_line(|f| at_top.contains(f))
}

/// The plan's own gates and the configured ones, each once.
fn shared_gates(plan: &Plan, extra: &[Gate]) -> Vec<Gate> {
    let mut seen = HashSet::new();
    (plan.gates.iter().chain(extra))
        .filter(|g| seen.insert(g.argv.clone()))
        .cloned()
        .collect()
}
