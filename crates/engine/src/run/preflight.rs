//! Everything `run` checks before it starts, reported all at once: the
//! repository, the base branch, a clean tree, repository configuration
//! that would run programs in planwright's git, the sandbox, the agent, the
//! gate programs, scope operations against the base tree, scope globs that
//! cover a file a gate runs, scope overlap between tickets that may run
//! at the same time, and (when all that passed) the set-up on the base
//! commit.

use crate::agent::{Agent, Agents};
use crate::exec::workspace::WorkspaceSettings;
use crate::git::repo::Repo;
use crate::model::Verdict;
use crate::process::find_program;
use crate::process::Cancel;
use crate::run::lanes::Lanes;
use crate::run::{ticket_gates, Outlook, Resume, RunSettings};
use crate::sandbox::{ContainSettings, SandboxError};
use crate::verify::checkout::Checkouts;
use planwright_config::SandboxMode;
use planwright_plan::gate_integrity;
use planwright_plan::model::Gate;
use planwright_plan::overlap::Overlap;
use planwright_plan::Plan;
use std::collections::HashSet;
use std::path::Path;

mod base;
mod commands;
mod prices;
mod probe;
mod routing;
mod scope;
pub use base::current_branch;
pub(crate) use base::settle as settle_base;
pub use probe::missing_setup;
pub use routing::check_routing;
pub(crate) use scope::check_scope_ops;

pub use crate::model::Check;

/// Whether a reviewer will judge the tickets' checks: one is configured
/// and the plan asks for at least one review pass.
pub fn checks_judged(plan: &Plan, review: &planwright_config::ReviewSettings) -> bool {
    review.reviewer.is_some() && plan.review.dry_passes > 0
}

/// What a run without a reviewer leaves unverified: the tickets' checks
/// (codeboost `check` items, native `checks`, standard_v1 acceptance
/// criteria), said as a warning, or `None` when a reviewer judges them
/// or there are none.
pub fn unjudged_checks(plan: &Plan, review: &planwright_config::ReviewSettings) -> Option<Check> {
    let count: usize = plan.tickets.iter().map(|t| t.checks.len()).sum();
    if count == 0 || checks_judged(plan, review) {
        return None;
    }
    let items = match plan.source_format {
        planwright_plan::Format::Codeboost => "codeboost `check` item",
        planwright_plan::Format::StandardV1 => "acceptance criterion",
        _ => "check",
    };
    let what = match (count, items) {
        (1, _) => format!("1 {items}"),
        (_, "acceptance criterion") => format!("{count} acceptance criteria"),
        _ => format!("{count} {items}s"),
    };
    let why = if review.reviewer.is_none() {
        "no reviewer is configured"
    } else {
        "the plan asks for no review pass"
    };
    Some(Check::warning(
        "checks",
        format!("{what} will not be judged: {why}, so agents get them as guidance only and only gates decide"),
        "set `[review] agent` in planwright.toml to have a reviewer judge them, or make them gates",
    ))
}

/// Whether any check failed.
pub fn failed(checks: &[Check]) -> bool {
    checks.iter().any(|c| c.status == "error")
}

/// Runs every check `run` makes before it starts, with `settings` as
/// `run` would have them; `allow` is the `[commands] allow` list that a
/// codeboost plan's own commands must be on before they run.
pub fn preflight(
    dir: &Path,
    plan: &Plan,
    settings: &RunSettings,
    allow: &[Vec<String>],
    agents: &Agents,
) -> Vec<Check> {
    let mut plan = plan.clone();
    check_all(dir, &mut plan, settings, &Resume::default(), allow, agents).checks
}

/// Every check, for a run that treats earlier runs as `resume` says, with
/// `plan.base` set to the branch the run merges into ([`settle_base`]).
pub(crate) fn check_all(
    dir: &Path,
    plan: &mut Plan,
    settings: &RunSettings,
    resume: &Resume,
    allow: &[Vec<String>],
    agents: &Agents,
) -> Examined {
    let base = settle_base(dir, plan, settings.base.as_ref());
    let plan = &*plan;
    let contain = &settings.contain;
    let found = examine(
        dir,
        plan,
        &base,
        &settings.extra_gates,
        allow,
        agents,
        contain,
        (&settings.plan_path, resume),
    );
    let mut checks = found.checks;
    if let Some(outlook) = &found.outlook {
        check_overlap(plan, settings.overlaps.as_deref(), outlook, &mut checks);
    }
    if let Some(repo) = &found.repo {
        if let Ok(Some(tip)) = repo.branch_tip(&plan.base) {
            let gates = every_gate(plan, &settings.extra_gates);
            commands::check_gate_commands(repo, &tip, &gates, &mut checks);
        }
        check_copy(repo, &settings.workspace.copy, &mut checks);
        check_setup(repo, plan, &settings.workspace, contain, &mut checks);
        probe::check_lock_files(repo, plan, settings, &mut checks);
        probe::check_gate_probe(repo, plan, settings, &mut checks);
    }
    checks.extend(unjudged_checks(plan, &settings.beyond));
    let (routing, families) = (&settings.routing, &settings.families);
    let lanes = Lanes::of(plan, routing, families, agents);
    check_routing(plan, routing, families, &lanes, &mut checks);
    prices::check_prices(plan, settings, &lanes, &mut checks);
    if let (Some(repo), false) = (&found.repo, failed(&checks)) {
        // Last: it starts the workers, which costs a connection per place.
        let (executor, jobs, link) = (&settings.executor, settings.jobs, &settings.worker_link);
        let checks = &mut checks;
        crate::exec::remote::check_workers(repo, executor, jobs, link, contain, agents, checks);
    }
    Examined {
        checks,
        repo: found.repo,
        outlook: found.outlook,
        lanes,
    }
}

/// Every distinct gate of every ticket, in plan order.
fn every_gate(plan: &Plan, extra: &[Gate]) -> Vec<Gate> {
    let mut seen = HashSet::new();
    let mut gates = Vec::new();
    for t in &plan.tickets {
        for g in ticket_gates(plan, t, extra) {
            if seen.insert(g.argv.clone()) {
                gates.push(g);
            }
        }
    }
    gates
}

/// What [`check_all`] found, which a run keeps rather than asking again.
pub(crate) struct Examined {
    pub checks: Vec<Check>,
    /// The repository, when `dir` is one.
    pub repo: Option<Repo>,
    /// What earlier runs merged, when the base branch could be read.
    pub outlook: Option<Outlook>,
    /// The agent of each ticket.
    pub lanes: Lanes,
}

/// The checkout preflight tries the set-up in: not one a run uses, so a
/// preflight beside a run disturbs nothing.
const TRIAL: &str = "preflight";

/// `[workspace] setup`: run once on the base commit, confined and with its
/// caches as in a gate checkout of a run (a result kept from the last try
/// on the same key is reused). One that fails there would fail every
/// ticket, so it is an error naming what the tool said, not a strike.
pub(crate) fn check_setup(
    repo: &Repo,
    plan: &Plan,
    workspace: &WorkspaceSettings,
    contain: &ContainSettings,
    out: &mut Vec<Check>,
) {
    if workspace.setup.is_empty() || failed(out) {
        return;
    }
    let Ok(Some(base)) = repo.branch_tip(&plan.base) else {
        return;
    };
    let short = &base[..base.len().min(10)];
    let Ok(containment) = crate::sandbox::containment(contain.mode) else {
        return;
    };
    // planwright's own git and checkouts are a run's: none may be going on.
    let _lock = match crate::run::lock::RunLock::acquire(repo) {
        Ok(lock) => lock,
        Err(e) => {
            out.push(Check::warning(
                "setup",
                format!("the set-up was not tried on the base commit {short}: {e}"),
                "run preflight again when that run has ended",
            ));
            return;
        }
    };
    let ready = repo
        .ensure_excluded()
        .and_then(|()| repo.ensure_own_git(&contain.allow_config));
    if let Err(e) = ready {
        out.push(Check::error(
            "setup",
            format!("cannot try the set-up on the base commit {short}: {e}"),
            "check that `.planwright/` in the repository is writable",
        ));
        return;
    }
    let checkouts = Checkouts::new(repo.clone(), workspace.clone(), containment, contain);
    let log = repo.state_dir().join("preflight-setup.log");
    let _ = std::fs::remove_file(&log);
    let hint = format!(
        "make `[workspace] setup` in `planwright.toml` work on the base branch `{}` \
         (the whole log is {})",
        plan.base,
        log.display()
    );
    match checkouts.try_setup(TRIAL, &base, &log, &Cancel::default()) {
        Ok(None) => out.push(Check::ok(
            "setup",
            format!("the set-up runs on the base commit {short}"),
        )),
        Ok(Some(Verdict::Fail(f))) => out.push(Check::error(
            "setup",
            format!(
                "on the base commit {short}, {}:\n{}",
                f.message,
                f.evidence.trim_end()
            ),
            hint,
        )),
        Ok(Some(_)) => out.push(Check::error(
            "setup",
            "the set-up's trial was interrupted",
            "run preflight again",
        )),
        Err(e) => out.push(Check::error(
            "setup",
            format!("cannot try the set-up on the base commit {short}: {e}"),
            hint,
        )),
    }
}

/// What preflight learnt on the way, which a run keeps rather than asking
/// git again.
pub(crate) struct Findings {
    pub checks: Vec<Check>,
    /// The repository, when `dir` is one.
    pub repo: Option<Repo>,
    /// What earlier runs merged, when the base branch could be read.
    pub outlook: Option<crate::run::Outlook>,
}

/// The checks of the repository, the sandbox, the agents, the gates and
/// the scopes, for a run that treats earlier runs as `resume` says (the
/// scope checks skip the tickets that will not run), keeping the
/// repository and the outlook it read.
#[allow(clippy::too_many_arguments)]
pub(crate) fn examine(
    dir: &Path,
    plan: &Plan,
    base: &Result<planwright_config::BaseSource, Check>,
    extra_gates: &[Gate],
    allow: &[Vec<String>],
    agents: &Agents,
    contain: &ContainSettings,
    (plan_path, resume): (&str, &Resume),
) -> Findings {
    let mut out = Vec::new();
    let repo = match Repo::open(dir) {
        Ok(repo) => {
            out.push(Check::ok(
                "repo",
                format!("`{}` is a git repository", repo.root().display()),
            ));
            Some(repo)
        }
        Err(e) => {
            out.push(Check::error(
                "repo",
                e.to_string(),
                format!(
                    "pass a git repository with `{} DIR`",
                    planwright_plan::Flag::Repo
                ),
            ));
            None
        }
    };
    let base_files = repo
        .as_ref()
        .and_then(|r| check_repo(r, plan, base, &mut out));
    if let Some(r) = &repo {
        check_lock(r, &mut out);
        check_git_config(r, &contain.allow_config, &mut out);
    }
    check_sandbox(contain, &mut out);
    check_limits(contain, &mut out);
    for agent in agents.each() {
        check_agent(agent, &mut out);
        check_agent_setup(agent, contain, &mut out);
        probe_agent(agent, contain, &mut out);
    }
    check_gates(dir, plan, extra_gates, &mut out);
    check_gate_files(plan, extra_gates, &mut out);
    check_allowed(plan, allow, &mut out);
    let mut outlook = None;
    if let (Some(files), Some(r)) = (base_files, &repo) {
        let found = match crate::run::outlook(r, plan, plan_path, resume) {
            Ok(o) => o,
            Err(e) => {
                out.push(Check::error(
                    "continue",
                    format!("cannot read what earlier runs merged: {e}"),
                    "if `.planwright/state.db` is damaged, move `.planwright/` aside (git still says what merged)",
                ));
                Default::default()
            }
        };
        continue_checks(&found, &mut out);
        let merged = found.skipped();
        check_scope_ops(plan, &files, &merged, &found.earlier, &mut out);
        outlook = Some(found);
    }
    Findings {
        checks: out,
        repo,
        outlook,
    }
}

/// `[workspace] copy`: each file must be in the user's checkout (a file, or
/// a symlink that stays inside the repository) and not tracked, as each
/// workspace already has the commit's version of a tracked file.
pub(crate) fn check_copy(repo: &Repo, copy: &[String], out: &mut Vec<Check>) {
    let before = out.len();
    for rel in copy {
        if let Err(e) = crate::exec::workspace::copy_source(repo.root(), rel) {
            out.push(Check::error(
                "copy",
                e.to_string(),
                "`[workspace] copy` names files of your checkout that git ignores, such as `.env`",
            ));
            continue;
        }
        let literal = format!(":(literal){rel}");
        let tracked = repo.git().args(["ls-files", "-z", "--", &literal]).output();
        if tracked.is_ok_and(|o| !o.stdout.is_empty()) {
            out.push(Check::error(
                "copy",
                format!(
                    "`[workspace] copy` in `planwright.toml` names `{rel}`, which git tracks: \
                     every workspace already has the commit's version"
                ),
                format!("remove `{rel}` from `[workspace] copy`, or untrack and ignore it"),
            ));
        }
    }
    if !copy.is_empty() {
        ok_if_quiet(
            out,
            before,
            "copy",
            "every `[workspace] copy` file is in the checkout",
        );
    }
}

/// What earlier runs merged: skipped tickets, and tickets merged from a
/// definition the plan has changed since (reported, not run again).
fn continue_checks(o: &crate::run::Outlook, out: &mut Vec<Check>) {
    if let Some(other) = &o.other {
        out.push(Check::ok(
            "continue",
            format!(
                "a new run starts: run {} on this base branch is of another plan (`{}`); `{}` continues it instead",
                other.id,
                other.plan_path,
                planwright_plan::Flag::Continue
            ),
        ));
    }
    if !o.merged.is_empty() {
        out.push(Check::ok(
            "continue",
            format!(
                "{} already on the base branch {} skipped",
                planwright_plan::words::count(o.merged.len(), "ticket"),
                if o.merged.len() == 1 { "is" } else { "are" }
            ),
        ));
    }
    for id in &o.changed {
        out.push(Check::warning(
            "changed",
            format!("ticket {id} was merged from an older definition; it is not run again"),
            format!(
                "to run it again, pass `{} {id}` (or `{}` for all such tickets)",
                planwright_plan::Flag::Rerun,
                planwright_plan::Flag::RerunChanged
            ),
        ));
    }
    if !o.rerun.is_empty() {
        out.push(Check::ok(
            "continue",
            format!("merged tickets run again: {}", o.rerun.join(", ")),
        ));
    }
}

fn check_repo(
    repo: &Repo,
    plan: &Plan,
    source: &Result<planwright_config::BaseSource, Check>,
    out: &mut Vec<Check>,
) -> Option<HashSet<String>> {
    let source = match source {
        Ok(source) => *source,
        Err(check) => {
            out.push(check.clone());
            return None;
        }
    };
    let tip = match repo.branch_tip(&plan.base) {
        Ok(Some(tip)) => {
            out.push(Check::ok(
                "base",
                format!(
                    "base branch `{}` ({}) is at {}",
                    plan.base,
                    base::said(source),
                    &tip[..tip.len().min(10)]
                ),
            ));
            tip
        }
        _ => {
            out.push(Check::error(
                "base",
                format!(
                    "the base branch `{}` ({}) does not exist",
                    plan.base,
                    base::said(source)
                ),
                base::missing_hint(&plan.base, source),
            ));
            return None;
        }
    };
    match repo.changed_files() {
        Ok(changed) if changed.is_empty() => out.push(Check::ok(
            "clean",
            "the working tree has no uncommitted changes",
        )),
        Ok(changed) => out.push(Check::error(
            "clean",
            format!(
                "the working tree has uncommitted changes: {}",
                some_files(&changed)
            ),
            "commit or stash them (`git stash`) first",
        )),
        Err(e) => out.push(Check::error(
            "clean",
            format!("cannot tell whether the working tree has uncommitted changes: {e}"),
            "check the repository with `git status`",
        )),
    }
    crate::git::tracked_files(repo.root(), &tip)
        .ok()
        .map(|f| f.into_iter().collect())
}

/// How many changed files a message names before "and N more".
const FILES_NAMED: usize = 5;

/// `` `a`, `b` and 3 more files ``: the first few of `files`, inert.
fn some_files(files: &[String]) -> String {
    let named: Vec<String> = files
        .iter()
        .take(FILES_NAMED)
        .map(|f| format!("`{}`", planwright_plan::words::inert(f)))
        .collect();
    match files.len().saturating_sub(FILES_NAMED) {
        0 => named.join(", "),
        more => format!(
            "{} and {} more",
            named.join(", "),
            planwright_plan::words::count(more, "file")
        ),
    }
}

fn check_git_config(repo: &Repo, allow: &[String], out: &mut Vec<Check>) {
    match repo.risky_config(allow) {
        Ok(risky) if risky.is_empty() => out.push(Check::ok(
            "git-config",
            "the repository's git config runs no programs in planwright's git calls",
        )),
        Ok(risky) => out.push(Check::error(
            "git-config",
            crate::git::integrity::risky_config_message(&risky),
            "a repository whose config runs programs cannot be trusted (exit 3)",
        )),
        Err(e) => out.push(Check::error(
            "git-config",
            e.to_string(),
            "check that `git config --list` works in the repository",
        )),
    }
}

/// The sandbox the run would use; a declared writable directory that holds
/// the home directory or a `PATH` entry would let agents change what gates run.
fn check_sandbox(contain: &ContainSettings, out: &mut Vec<Check>) {
    match crate::sandbox::containment(contain.mode) {
        Ok(c) if contain.mode == SandboxMode::Off => out.push(Check::warning(
            "sandbox",
            format!(
                "`[sandbox] mode = \"off\"`: agents and gates run unconfined ({})",
                c.describe()
            ),
            "set `[sandbox] mode = \"enforce\"` where the kernel allows it (see docs/security.md)",
        )),
        Ok(c) => out.push(Check::ok(
            "sandbox",
            format!("agents and gates run confined: {}", c.describe()),
        )),
        Err(e) => out.push(Check::error("sandbox", e.to_string(), SandboxError::HINT)),
    }
    let mut guarded: Vec<std::path::PathBuf> = path()
        .unwrap_or_default()
        .split(':')
        .filter(|d| d.starts_with('/'))
        .map(std::path::PathBuf::from)
        .collect();
    guarded.extend(std::env::var_os("HOME").map(std::path::PathBuf::from));
    for dir in &contain.writable {
        if let Some(g) = guarded
            .iter()
            .find(|g| crate::sandbox::below_any(g, std::slice::from_ref(dir)))
        {
            out.push(Check::error(
                "sandbox",
                format!("`[sandbox] writable` lists `{}`, which holds `{}`: an agent could change what gates run", dir.display(), g.display()),
                "declare a narrower directory (the agent CLI's own state folder)",
            ));
        } else if !dir.exists() {
            out.push(Check::error(
                "sandbox",
                format!(
                    "`[sandbox] writable` lists `{}`, which does not exist",
                    dir.display()
                ),
                "create it, or remove it from the list",
            ));
        }
    }
    check_readable(contain, out);
}

/// `[sandbox] pids` and `memory`, and what holds each confined child to
/// them here: a cgroup sees a limit reached and names it in the attempt's
/// failure; rlimits bound without seeing it, a warning.
fn check_limits(contain: &ContainSettings, out: &mut Vec<Check>) {
    use crate::sandbox::{bytes_text, mechanism, Mechanism};
    let limits = crate::sandbox::limits(contain);
    if limits.is_none() {
        out.push(Check::ok(
            "limits",
            "no limits: `[sandbox] pids` and `memory` are \"off\"",
        ));
        return;
    }
    let what = [
        limits.pids.map(|n| format!("{n} processes")),
        limits
            .memory
            .map(|m| format!("{} of memory", bytes_text(m))),
    ];
    let what: Vec<String> = what.into_iter().flatten().collect();
    let mechanism = mechanism();
    let message = format!(
        "each agent, set-up, gate and reviewer is held to {} by {}",
        what.join(" and "),
        mechanism.describe()
    );
    match mechanism {
        Mechanism::CgroupV2 { .. } | Mechanism::CgroupV1 { memory: Some(_), pids: Some(_), .. } => {
            out.push(Check::ok("limits", message))
        }
        _ => out.push(Check::warning(
            "limits",
            message,
            "a limit reached without a cgroup shows as the program's own failure, not `resource_limit`; run planwright as root on cgroup v1, or alone in a delegated cgroup v2 (`systemd-run --user --scope -p Delegate=yes planwright run ...`); see docs/security.md",
        )),
    }
}

/// `[sandbox] readable` names what exists, below the home rather than the
/// home itself (which a child's view hides whole, sockets and all).
fn check_readable(contain: &ContainSettings, out: &mut Vec<Check>) {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    for path in &contain.readable {
        let holds_home = home
            .as_ref()
            .is_some_and(|h| crate::sandbox::below_any(h, std::slice::from_ref(path)));
        if holds_home {
            out.push(Check::error(
                "sandbox",
                format!(
                    "`[sandbox] readable` lists `{}`, which holds the home directory: its sockets (ssh, gpg, a container engine's) would be reachable",
                    path.display()
                ),
                "name the files or folders below the home that the tools need",
            ));
        } else if !path.exists() {
            out.push(Check::error(
                "sandbox",
                format!(
                    "`[sandbox] readable` lists `{}`, which does not exist",
                    path.display()
                ),
                "create it, or remove it from the list",
            ));
        }
    }
}

/// A run lock held now refuses `run` (exit 2), so preflight and
/// `--dry-run` refuse in its words.
fn check_lock(repo: &Repo, out: &mut Vec<Check>) {
    match crate::run::lock::holder(repo) {
        Ok(None) => {}
        Ok(Some(crate::error::EngineError::Repo { message, hint })) => {
            out.push(Check::error("lock", message, hint.unwrap_or_default()))
        }
        Ok(Some(e)) | Err(e) => out.push(Check::error(
            "lock",
            format!("cannot read the run lock: {e}"),
            "check the permissions of the repository's git directory",
        )),
    }
}

fn check_agent(agent: &dyn Agent, out: &mut Vec<Check>) {
    if let Some(problem) = agent.unusable() {
        out.push(Check::error(
            "agent",
            problem,
            format!("check `{}`", planwright_plan::Flag::Agent),
        ));
        return;
    }
    match agent.program() {
        Some(p) if find_program(&p, path().as_deref()).is_none() => out.push(Check::error(
            "agent",
            format!("the agent program `{p}` is not on PATH"),
            format!(
                "install it, or give its full path in `{}`",
                planwright_plan::Flag::AgentCmd
            ),
        )),
        _ => out.push(Check::ok(
            "agent",
            format!("agent `{}` is runnable", agent.name()),
        )),
    }
}

/// What in the user's set-up of the agent's CLI fails every attempt: a
/// gateway at a loopback address behind the proxy, a key variable its
/// configuration names that the agent is not given.
fn check_agent_setup(agent: &dyn Agent, contain: &ContainSettings, out: &mut Vec<Check>) {
    let proxied = contain.agent_network == planwright_config::AgentNetwork::Proxy;
    for problem in agent.setup_problems(proxied) {
        out.push(Check::error(
            "agent",
            format!("agent `{}`: {}", agent.name(), problem.message),
            problem.hint,
        ));
    }
}

/// Starts the agent's CLI as an attempt would (see [`Agent::probe`]), in
/// a temporary folder outside the repository (a dry run changes nothing
/// there), when the checks before found it and the sandbox usable: a CLI
/// that cannot start there fails here, in its own words, rather than in a
/// paid attempt.
fn probe_agent(agent: &dyn Agent, contain: &ContainSettings, out: &mut Vec<Check>) {
    let blocked = |check: &str| out.iter().any(|c| c.check == check && c.status == "error");
    if blocked("agent") || blocked("sandbox") {
        return;
    }
    let Ok(containment) = crate::sandbox::containment(contain.mode) else {
        return;
    };
    let scratch = tempfile::Builder::new()
        .prefix("planwright-probe-")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary folder for it: {e}"));
    let probed = scratch.and_then(|scratch| {
        // No network: the probe makes no model call.
        let confine = containment.confine(crate::sandbox::Policy {
            writable: contain.writable.clone(),
            readable: contain.readable.clone(),
            ..crate::sandbox::Policy::default()
        });
        let probed = agent.probe(scratch.path(), Some(&confine));
        // A folder the CLI made unreadable is opened up to be removed.
        let _ = crate::exec::workspace::remove_any(scratch.path());
        probed
    });
    let how = if containment.confines_writes() {
        "confined, in a fresh CLI home"
    } else {
        "in a fresh CLI home; `[sandbox] mode = \"off\"` confines nothing"
    };
    match probed {
        Ok(None) => {}
        Ok(Some(command)) => out.push(Check::ok(
            "agent",
            format!(
                "agent `{}` started as an attempt would ({how}): {command}",
                agent.name()
            ),
        )),
        Err(words) => out.push(Check::error(
            "agent",
            format!(
                "agent `{}` did not start as an attempt would ({how}): {words}",
                agent.name()
            ),
            "see docs/agents.md for what the CLI needs from you",
        )),
    }
}

fn check_gates(dir: &Path, plan: &Plan, extra: &[Gate], out: &mut Vec<Check>) {
    let mut programs: Vec<String> = Vec::new();
    for t in &plan.tickets {
        let gates = ticket_gates(plan, t, extra);
        if gates.is_empty() {
            out.push(Check::error(
                "gates",
                format!("ticket {} has no gate", t.id),
                no_gate_hint(dir),
            ));
        }
        for g in gates {
            if let Some(p) = g.argv.first() {
                if !programs.contains(p) {
                    programs.push(p.clone());
                }
            }
        }
    }
    for p in programs {
        // A relative path with a slash is resolved in the workspace, like the gate will be.
        let found = if p.contains('/') && !p.starts_with('/') {
            dir.join(&p).is_file()
        } else {
            find_program(&p, path().as_deref()).is_some()
        };
        if found {
            out.push(Check::ok("gates", format!("gate program `{p}` found")));
        } else {
            out.push(Check::error(
                "gates",
                format!("gate program `{p}` is not on PATH"),
                format!("install `{p}` or change the gate"),
            ));
        }
    }
}

/// Each ticket whose scope covers, with a glob, a file one of its gates
/// runs (`./check.sh`, `sh ci/check.sh`) without naming it: a candidate
/// that changes the file is rejected, so the ticket could not do that part
/// of its work. Said once to be fine when some gate runs such a file.
fn check_gate_files(plan: &Plan, extra: &[Gate], out: &mut Vec<Check>) {
    let before = out.len();
    let mut any = false;
    for t in &plan.tickets {
        let gates = ticket_gates(plan, t, extra);
        any |= (gates.iter()).any(|g| !gate_integrity::program_files(&g.argv).is_empty());
        let Some((gate, pattern, file)) = gate_integrity::exposed(&t.scope, &gates) else {
            continue;
        };
        out.push(Check::warning(
            "gate-files",
            format!(
                "ticket {}'s scope `{pattern}` covers `{file}`, which the gate `{}` runs; a candidate that changes it is rejected (gate_script_tampering)",
                t.id,
                gate.command_line()
            ),
            format!("narrow the scope to leave `{file}` out, or name `{file}` in the scope if the ticket is meant to change it"),
        ));
    }
    if any {
        ok_if_quiet(
            out,
            before,
            "gate-files",
            "no ticket may change a file its gates run unless its scope names it",
        );
    }
}

/// The repository's own test command as the gate to add, else no
/// particular one (never another ecosystem's).
fn no_gate_hint(dir: &Path) -> String {
    match planwright_plan::project::test_command(|f| dir.join(f).is_file()) {
        Some(argv) => format!(
            "add `[gates] run = [{}]` to planwright.toml or pass `{} \"{}\"`",
            planwright_plan::formats::codeboost::toml_argv(&argv),
            planwright_plan::Flag::Gate,
            argv.join(" ")
        ),
        None => format!("add the project's test command to planwright.toml (`[gates] run = [[\"PROGRAM\", \"ARGUMENT\"]]`) or pass it with `{} \"COMMAND\"`", planwright_plan::Flag::Gate),
    }
}

/// A codeboost plan is written by an agent, so its commands run only once a
/// person approved them in `[commands] allow`.
fn check_allowed(plan: &Plan, allow: &[Vec<String>], out: &mut Vec<Check>) {
    if plan.source_format != planwright_plan::Format::Codeboost {
        return;
    }
    for t in &plan.tickets {
        for g in t.gates.iter().filter(|g| !allow.contains(&g.argv)) {
            out.push(Check::error(
                "gates",
                format!(
                    "ticket {}: the plan's command `{}` is not on the `[commands] allow` list",
                    t.id,
                    g.command_line()
                ),
                format!(
                    "approve it in planwright.toml: `[commands] allow = [{}]`",
                    planwright_plan::formats::codeboost::toml_argv(&g.argv)
                ),
            ));
        }
    }
}

/// Agents and gates are looked up in planwright's own PATH (gates keep it in their scrubbed environment).
fn path() -> Option<String> {
    std::env::var("PATH").ok()
}

pub(crate) fn check_overlap(
    plan: &Plan,
    known: Option<&[Overlap]>,
    outlook: &Outlook,
    out: &mut Vec<Check>,
) {
    let before = out.len();
    let made;
    let overlaps = match known {
        Some(known) => known,
        None => {
            made = planwright_plan::overlap::forecast(plan);
            &made
        }
    };
    let skipped = outlook.skipped();
    for o in overlaps {
        let open: Vec<String> = o
            .tickets
            .iter()
            .filter(|id| !skipped.contains(*id))
            .cloned()
            .collect();
        if open.len() < 2 {
            continue;
        }
        out.push(Check::warning(
            "overlap",
            planwright_plan::words::overlap_message(&open, &o.patterns),
            "make them depend on one another, or split the scopes; otherwise a later one may hit a merge conflict",
        ));
    }
    ok_if_quiet(
        out,
        before,
        "overlap",
        "no scope overlap between tickets that may run at the same time",
    );
}

/// A check that reports each problem it finds says once that all is well
/// when it found none since `before`.
fn ok_if_quiet(out: &mut Vec<Check>, before: usize, check: &'static str, message: &str) {
    if out.len() == before {
        out.push(Check::ok(check, message));
    }
}

#[cfg(test)]
mod tests;
