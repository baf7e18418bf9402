//! `planwright preflight PLAN --repo DIR`: everything `run` checks, without starting.

use super::run::{agents, repo_dir, EngineArgs};
use super::{load_plan, Loaded, PlanArgs};
use crate::error::{exit, CliResult};
use crate::{settings, Global, Output};
use planwright_config::resolve::{self, RunFlags};
use planwright_engine::{preflight, preflight_failed, Check, CheckName, CheckStatus};

/// Check everything `run` would check before starting, and start nothing:
/// the repository, the base branch (and where its name came from), a clean
/// working tree, the agent, the gate programs and the scripts or targets
/// they name, scope operations against the base tree, scope globs that
/// cover a file a gate runs, scope overlap between tickets that may run at
/// the same time, the set-up, the shared gates once on the base commit,
/// the sandbox, and what holds each agent, set-up and gate to
/// `[sandbox] pids` and `memory` (a cgroup v2 or v1, or rlimits).
///
/// Exit 0 when every check passes (warnings allowed), 2 when `--repo` is
/// not a git repository or another run holds its lock, 3 when the
/// repository's git config runs programs in planwright's git calls (it
/// cannot be trusted), 1 otherwise.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Prints the checks.
pub(crate) fn print(checks: &[Check], global: &Global) {
    if global.output == Output::Json {
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(checks).expect("checks serialize")
        );
        return;
    }
    for c in checks {
        // Padded to the longest status, so the names line up.
        let mark = c.status.as_str();
        crate::outln!("{mark:<7} {}: {}", c.check, c.message);
        if c.status != CheckStatus::Ok {
            if let Some(h) = &c.hint {
                crate::outln!("        hint: {h}");
            }
        }
    }
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let e = &args.engine;
    let Loaded { plan, config, .. } =
        load_plan(&args.plan, e.repo.as_deref(), e.base.as_deref(), global)?;
    let repo_dir = repo_dir(e, &args.plan, &plan);
    let agents = agents(e, &config)?;
    let flags = RunFlags {
        plan: args.plan.plan.display().to_string(),
        agent_timeout: e.agent_timeout,
        gate_timeout: e.gate_timeout,
        gates: e.gate.clone(),
        base: e.base.clone(),
        no_gate_probe: e.no_gate_probe,
        allow_red_base: e.allow_red_base,
        ..RunFlags::default()
    };
    // As `run` would have them without `--jobs`; preflight greets each
    // place of a remote executor once, however many slots it has.
    let settings =
        resolve::run(flags, &config, &settings::env()).map_err(settings::settings_error)?;
    let checks = preflight(&repo_dir, &plan, &settings, &config.commands.allow, &agents);
    print(&checks, global);
    Ok(if preflight_failed(&checks) {
        failure_code(&checks)
    } else {
        exit::OK
    })
}

/// The exit code of a failed preflight: 2 when there is no git repository
/// to work in (a usage error, as for every command) or another run holds
/// its lock (as `run` refuses then), 3 when its git config
/// runs programs in planwright's git calls (it cannot be trusted), else 1.
pub(crate) fn failure_code(checks: &[Check]) -> i32 {
    if checks.iter().any(|c| c.failed_at(CheckName::GitConfig)) {
        return exit::INTEGRITY;
    }
    if checks
        .iter()
        .any(|c| c.failed_at(CheckName::Repo) || c.failed_at(CheckName::Lock))
    {
        exit::USAGE
    } else {
        exit::INVALID
    }
}
