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
use crate::run::lanes::{Lane, Lanes};
use crate::run::{ticket_gates, Outlook, Resume};
use crate::sandbox::{ContainSettings, SandboxError};
use crate::verify::checkout::Checkouts;
use planwright_config::SandboxMode;
use planwright_plan::gate_integrity;
use planwright_plan::model::{Gate, ScopeEntry, ScopeOp, Ticket};
use planwright_plan::overlap::{Glob, Overlap};
use planwright_plan::scope::{is_glob, Pattern};
use planwright_plan::Plan;
use serde::Serialize;
use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What was checked (`repo`, `lock`, `base`, `clean`, `git-config`, `sandbox`, `agent`, `gates`, `copy`, `setup`, `scope-ops`, `overlap`, `routing`).
    pub check: &'static str,
    /// `ok`, `warning` or `error`.
    pub status: &'static str,
    /// What was found.
    pub message: String,
    /// How to fix it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Check {
    pub(crate) fn ok(check: &'static str, message: impl Into<String>) -> Check {
        Check {
            check,
            status: "ok",
            message: message.into(),
            hint: None,
        }
    }
    pub(crate) fn error(
        check: &'static str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Check {
        Check::problem(check, "error", message.into(), hint.into())
    }
    pub(crate) fn warning(
        check: &'static str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Check {
        Check::problem(check, "warning", message.into(), hint.into())
    }
    /// A check that found something, with what to do about it.
    fn problem(check: &'static str, status: &'static str, message: String, hint: String) -> Check {
        Check {
            check,
            status,
            message,
            hint: Some(hint),
        }
    }
}

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

/// The `routing` checks: each ticket's adapter and model, a warning for
/// each whose pool hint or model its agent's family could not honour, and
/// an error for each no agent serves or whose agent's family has no model
/// of its tier (see [`Lanes`]).
pub fn check_routing(
    plan: &Plan,
    routing: &planwright_config::Routing,
    families: &planwright_config::Families,
    lanes: &Lanes,
    out: &mut Vec<Check>,
) {
    let mut foreign_fixed: Vec<&str> = Vec::new();
    for t in &plan.tickets {
        let Some(lane) = lanes.get(&t.id) else {
            out.push(Check::error(
                "routing",
                format!("ticket {}: no agent of `[agents]` runs its model family, and `[agent] name` names no agent for the others", t.id),
                format!("map the family {}'s tier and pool hint ask for in `[agents]`, or set `[agent] name`", t.id),
            ));
            continue;
        };
        if let Some(model) = lane.model.as_deref() {
            match crate::run::pools::foreign_family(
                routing,
                families,
                model,
                lane.family.as_deref(),
            ) {
                Some(_) => foreign_fixed.push(&t.id),
                None => out.push(Check::ok(
                    "routing",
                    format!("{} -> {} -> {model} (`[agent] model`)", t.id, lane.agent),
                )),
            }
            continue;
        }
        if let Some(check) = route_check(t, routing, families, lane) {
            out.push(check);
        }
    }
    if let Some(first) = foreign_fixed.first().and_then(|id| lanes.get(id)) {
        out.push(foreign_model(first, routing, families, &foreign_fixed));
    }
}

/// The `routing` error of an `[agent] model` of another family than its
/// agent's, which would run `tickets`: a CLI never gets another family's model.
fn foreign_model(
    lane: &Lane,
    routing: &planwright_config::Routing,
    families: &planwright_config::Families,
    tickets: &[&str],
) -> Check {
    let (agent, own) = (&lane.agent, lane.family.as_deref().unwrap_or_default());
    let model = lane.model.as_deref().unwrap_or_default();
    let of =
        crate::run::pools::foreign_family(routing, families, model, Some(own)).unwrap_or_default();
    let suggestion = families
        .model(own, planwright_config::DEFAULT_TIER)
        .map(|m| format!(" such as `{m}`"))
        .unwrap_or_default();
    let which = if tickets.len() == 1 {
        "ticket"
    } else {
        "tickets"
    };
    Check::error(
        "routing",
        format!(
            "agent `{agent}`: `[agent] model = \"{model}\"` is a {of} model, and the `{agent}` CLI runs only {own} models ({which} {})",
            tickets.join(", ")
        ),
        format!("set `[agent] model` to a {own} model{suggestion}, remove it so that routing picks each ticket's {own} model, or run a {of} agent (`{} NAME` or `[agents] {of} = \"NAME\"`)", planwright_plan::Flag::Agent),
    )
}

/// The `routing` check of ticket `t` in `lane`.
fn route_check(
    t: &Ticket,
    routing: &planwright_config::Routing,
    families: &planwright_config::Families,
    lane: &Lane,
) -> Option<Check> {
    let (agent, family) = (&lane.agent, lane.family.as_deref());
    let explicit = t.model.as_deref();
    let foreign =
        explicit.and_then(|m| crate::run::pools::foreign_family(routing, families, m, family));
    if let (Some(model), None) = (explicit, foreign) {
        return Some(Check::ok(
            "routing",
            format!("{} -> {agent} -> {model}", t.id),
        ));
    }
    if t.tier.is_none() && t.pool_hint.is_none() && explicit.is_none() {
        let route = format!("{} -> {agent} -> the CLI's default model", t.id);
        return Some(Check::ok("routing", route));
    }
    let tier = t.tier.as_deref().unwrap_or(planwright_config::DEFAULT_TIER);
    let hint = t.pool_hint.as_deref().unwrap_or("auto");
    let route = routing.for_family(families, tier, hint, family);
    let fam = family.unwrap_or_default();
    let Some(first) = route.models.first() else {
        return Some(Check::error(
            "routing",
            format!("ticket {}: the family table has no {fam} model of tier `{tier}` for the `{agent}` CLI", t.id),
            format!("give {} a tier the {fam} family serves, add `{tier} = \"MODEL\"` to `[families.{fam}]`, or pick an agent of the family its pool hint `{hint}` names", t.id),
        ));
    };
    let line = format!("{} -> {agent} -> {}", t.id, first.name);
    let asked = match (explicit, foreign) {
        (Some(model), Some(of)) => Some(format!("model `{model}` (family {of})")),
        _ if !route.honoured => Some(format!("pool hint `{hint}`")),
        _ => None,
    };
    Some(match asked {
        None => Check::ok("routing", line),
        Some(asked) => Check::warning(
            "routing",
            format!("{line}: its {asked} cannot run on the `{agent}` CLI, so it gets the {fam} model of tier `{tier}`"),
            format!("pick an agent of the family {} asks for (`[agents]`), or drop its {asked}", t.id),
        ),
    })
}

/// Whether any check failed.
pub fn failed(checks: &[Check]) -> bool {
    checks.iter().any(|c| c.status == "error")
}

/// Runs every check. `extra_gates` are the configured and `--gate` gates;
/// `allow` is the `[commands] allow` list that a codeboost plan's own
/// commands must be on before they run; `contain` the sandbox settings;
/// `workspace` the `[workspace]` settings (its `copy` files, its set-up);
/// `review` says whether a reviewer will judge the tickets' checks;
/// `routing` and `families` are the routing tables ([`check_routing`]).
#[allow(clippy::too_many_arguments)]
pub fn preflight(
    dir: &Path,
    plan: &Plan,
    extra_gates: &[Gate],
    allow: &[Vec<String>],
    agents: &Agents,
    contain: &ContainSettings,
    workspace: &WorkspaceSettings,
    review: &planwright_config::ReviewSettings,
    routing: &planwright_config::Routing,
    families: &planwright_config::Families,
    executor: (&planwright_config::ExecutorSettings, usize),
) -> Vec<Check> {
    let found = examine(
        dir,
        plan,
        extra_gates,
        allow,
        agents,
        contain,
        &Resume::default(),
    );
    let mut checks = found.checks;
    if let Some(outlook) = &found.outlook {
        check_overlap(plan, None, outlook, &mut checks);
    }
    if let Some(repo) = &found.repo {
        check_copy(repo, &workspace.copy, &mut checks);
        check_setup(repo, plan, workspace, contain, &mut checks);
    }
    let lanes = Lanes::of(plan, routing, families, agents);
    check_routing(plan, routing, families, &lanes, &mut checks);
    checks.extend(unjudged_checks(plan, review));
    if let (Some(repo), false) = (&found.repo, failed(&checks)) {
        check_workers(repo, executor.0, executor.1, contain, &mut checks);
    }
    checks
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

/// [`preflight`] for a run that treats earlier runs as `resume` says (the
/// scope checks skip the tickets that will not run), keeping the
/// repository and the outlook it read.
pub(crate) fn examine(
    dir: &Path,
    plan: &Plan,
    extra_gates: &[Gate],
    allow: &[Vec<String>],
    agents: &Agents,
    contain: &ContainSettings,
    resume: &Resume,
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
    let base_files = repo.as_ref().and_then(|r| check_repo(r, plan, &mut out));
    if let Some(r) = &repo {
        check_lock(r, &mut out);
        check_git_config(r, &contain.allow_config, &mut out);
    }
    check_sandbox(contain, &mut out);
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
        let found = match crate::run::outlook(r, plan, resume) {
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

fn check_repo(repo: &Repo, plan: &Plan, out: &mut Vec<Check>) -> Option<HashSet<String>> {
    let tip = match repo.branch_tip(&plan.base) {
        Ok(Some(tip)) => {
            out.push(Check::ok(
                "base",
                format!(
                    "base branch `{}` is at {}",
                    plan.base,
                    &tip[..tip.len().min(10)]
                ),
            ));
            tip
        }
        _ => {
            out.push(Check::error(
                "base",
                format!("the base branch `{}` does not exist", plan.base),
                format!(
                    "create it (`git branch {} HEAD`) or set the plan's `base`",
                    plan.base
                ),
            ));
            return None;
        }
    };
    match repo.is_clean() {
        Ok(true) => out.push(Check::ok(
            "clean",
            "the working tree has no uncommitted changes",
        )),
        _ => out.push(Check::error(
            "clean",
            "the working tree has uncommitted changes",
            "commit or stash them (`git stash`) first",
        )),
    }
    crate::git::tracked_files(repo.root(), &tip)
        .ok()
        .map(|f| f.into_iter().collect())
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

/// Whether `pattern` matches some file of `files`; compiled once, not per file.
fn matches_any(pattern: &str, files: &HashSet<String>) -> bool {
    let pattern = Pattern::new(pattern);
    files.iter().any(|f| pattern.matches(f))
}

/// The tickets before each ticket, found on first use: most scope entries
/// never ask (a `create`, or a path the base has), and a chain of n tickets
/// has n²/2 ancestor pairs, which took seconds at a few thousand tickets.
struct Ancestry<'p> {
    plan: &'p Plan,
    /// Plan index of each id (a repeated id means its first ticket).
    index: HashMap<&'p str, usize>,
    /// The patterns of each ticket's entries that may create a file,
    /// parsed when an entry first asks about that ticket.
    creates: Vec<OnceCell<Vec<Glob>>>,
}

impl<'p> Ancestry<'p> {
    fn new(plan: &'p Plan) -> Ancestry<'p> {
        let mut index = HashMap::with_capacity(plan.tickets.len());
        for (i, t) in plan.tickets.iter().enumerate() {
            index.entry(t.id.as_str()).or_insert(i);
        }
        Ancestry {
            plan,
            index,
            creates: vec![OnceCell::new(); plan.tickets.len()],
        }
    }

    fn creates(&self, ticket: usize) -> &[Glob] {
        self.creates[ticket].get_or_init(|| {
            self.plan.tickets[ticket]
                .scope
                .iter()
                .filter(|e| !matches!(e.op, ScopeOp::Modify | ScopeOp::Delete))
                .map(|e| Glob::parse(&e.pattern))
                .collect()
        })
    }

    /// Plan indices of the ticket's ancestors; unknown ids are left out.
    fn of(&self, ticket: usize) -> Vec<usize> {
        let mut seen = HashSet::new();
        let mut stack = vec![ticket];
        while let Some(t) = stack.pop() {
            for d in &self.plan.tickets[t].depends_on {
                if let Some(&d) = self.index.get(d.as_str()) {
                    if seen.insert(d) {
                        stack.push(d);
                    }
                }
            }
        }
        seen.into_iter().collect()
    }

    /// Whether some ancestor (`ancestors`) may create a file `pattern` matches.
    fn created_before(&self, ancestors: &[usize], pattern: &str) -> bool {
        let wanted = Glob::parse(pattern);
        ancestors
            .iter()
            .any(|&a| self.creates(a).iter().any(|g| g.intersects(&wanted)))
    }
}

/// Scope operations against the base's files; a ticket that runs again is
/// judged against the base as it was before its own earlier merge
/// (`earlier`).
pub(crate) fn check_scope_ops(
    plan: &Plan,
    base: &HashSet<String>,
    merged: &HashSet<String>,
    earlier: &HashMap<String, crate::verify::Earlier>,
    out: &mut Vec<Check>,
) {
    // Most plans never ask (no entry names a path the base lacks).
    let ancestry = OnceCell::new();
    let before = out.len();
    for (i, t) in plan.tickets.iter().enumerate() {
        if merged.contains(&t.id) {
            continue;
        }
        // A file an ancestor may create counts as existing for this ticket.
        // `pattern` may be a glob: it is compared with the ancestor's by
        // intersection, as the overlap forecast compares scopes.
        let ancestors = OnceCell::new();
        let created_before = |pattern: &str| {
            let ancestry = ancestry.get_or_init(|| Ancestry::new(plan));
            let ancestors = ancestors.get_or_init(|| ancestry.of(i));
            ancestry.created_before(ancestors, pattern)
        };
        let before_own = earlier.get(&t.id).map(|e| e.undo(base));
        let base = before_own.as_ref().unwrap_or(base);
        for e in &t.scope {
            let problem = op_problem(e, base, &created_before);
            if let Some(why) = problem {
                out.push(Check::error(
                    "scope-ops",
                    format!("ticket {}: `{}` {why}", t.id, e.pattern),
                    "fix the scope entry's `op`, or the base branch",
                ));
            }
        }
    }
    ok_if_quiet(
        out,
        before,
        "scope-ops",
        "scope operations agree with the base tree",
    );
}

/// What is wrong with scope entry `e` given the base's files and what an
/// ancestor may create, if anything.
fn op_problem(
    e: &ScopeEntry,
    base: &HashSet<String>,
    created_before: &dyn Fn(&str) -> bool,
) -> Option<&'static str> {
    let exists = |p: &str| base.contains(p) || created_before(p);
    let glob = is_glob(&e.pattern);
    match &e.op {
        ScopeOp::Create if !glob && base.contains(&e.pattern) => {
            Some("is declared `create` but already exists in the base")
        }
        ScopeOp::Modify | ScopeOp::Delete if !glob && !exists(&e.pattern) => {
            Some("is declared `modify`/`delete` but does not exist in the base")
        }
        ScopeOp::Modify | ScopeOp::Delete
            if glob && !matches_any(&e.pattern, base) && !created_before(&e.pattern) =>
        {
            Some("is declared `modify`/`delete` but matches no file of the base")
        }
        ScopeOp::Rename { from } if !exists(from) => {
            Some("renames a file that does not exist in the base")
        }
        _ => None,
    }
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

/// A remote executor's places: each worker greets with this protocol and,
/// unless `[sandbox] mode = "off"`, a sandbox; and there are slots for
/// every job.
pub(crate) fn check_workers(
    repo: &Repo,
    executor: &planwright_config::ExecutorSettings,
    jobs: usize,
    contain: &ContainSettings,
    checks: &mut Vec<Check>,
) {
    use crate::exec::remote;
    let jobs = jobs.max(1);
    let transport = match remote::transport(executor, &repo.state_dir(), jobs) {
        Ok(Some(t)) => t,
        Ok(None) => return,
        Err(e) => {
            let hint = match executor {
                planwright_config::ExecutorSettings::Kubernetes(_) => {
                    "see docs/scaling.md#kubernetes"
                }
                _ => "run planwright by its full path, or set `[executor] command`",
            };
            checks.push(Check::error("executor", e.to_string(), hint));
            return;
        }
    };
    if transport.slots() < jobs {
        checks.push(Check::error(
            "executor",
            format!(
                "{} asked for, but the hosts have {}",
                planwright_plan::words::count(jobs, "slot"),
                transport.slots()
            ),
            format!(
                "pass fewer `{}`, or raise `[executor] slots_per_host` or add hosts",
                planwright_plan::Flag::Jobs
            ),
        ));
    }
    let confine = contain.mode == planwright_config::SandboxMode::Enforce;
    for (slot, place) in remote::places(transport.as_ref()) {
        checks.push(match remote::hello(transport.as_ref(), slot) {
            Ok(g) if confine && !g.sandbox.enforced => Check::error(
                "executor",
                format!("the worker at {place} cannot confine agents: {}", g.sandbox.detail),
                format!("run workers on Linux with Landlock and unprivileged user namespaces, or set `[sandbox] mode = \"off\"` and start them with `planwright worker {}`", planwright_plan::Flag::Unsandboxed),
            ),
            Ok(g) => Check::ok(
                "executor",
                format!(
                    "the worker at {place}: planwright {}, protocol {}, sandbox: {}",
                    g.planwright,
                    remote::protocol::PROTOCOL,
                    g.sandbox.detail
                ),
            ),
            Err(lost) => Check::error("executor", lost.to_string(), unreachable_hint(&place)),
        });
    }
    transport.close();
}

/// How to make the worker at `place` answer.
fn unreachable_hint(place: &str) -> String {
    if let Some(host) = place.strip_prefix("ssh ") {
        return format!(
            "check that `ssh -o BatchMode=yes {host} planwright --version` works with no prompt (your key, the host in known_hosts) and prints this planwright's version; `[executor] command` names another program"
        );
    }
    if place.starts_with("kubernetes ") {
        return "check the image has this planwright version on its PATH, and the coordinator's account may create pods and pods/exec there (deploy/kubernetes/role.yaml; docs/scaling.md#kubernetes)".into();
    }
    "check `[executor] command`: it must start `planwright worker` of this version".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use planwright_plan::model::{Format, Ticket};

    #[test]
    fn the_no_gate_hint_names_the_projects_own_test_command() {
        let dir = tempfile::tempdir().unwrap();
        let generic = no_gate_hint(dir.path());
        assert!(
            !generic.contains("cargo") && !generic.contains("npm"),
            "{generic}"
        );
        std::fs::write(dir.path().join("pyproject.toml"), "").unwrap();
        let python = no_gate_hint(dir.path());
        assert!(
            python.contains(&format!("`{} \"pytest\"`", planwright_plan::Flag::Gate)),
            "{python}"
        );
        assert!(!python.contains("cargo"), "{python}");
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        assert_eq!(
            no_gate_hint(dir.path()),
            format!("add `[gates] run = [[\"cargo\", \"test\"]]` to planwright.toml or pass `{} \"cargo test\"`", planwright_plan::Flag::Gate)
        );
    }

    fn routed(id: &str, tier: &str, hint: Option<&str>, model: Option<&str>) -> Ticket {
        let mut t = Ticket::new(id, "b");
        t.tier = Some(tier.into());
        t.pool_hint = hint.map(String::from);
        t.model = model.map(String::from);
        t
    }

    fn routing_checks(
        plan: &Plan,
        agent: &str,
        families: &planwright_config::Families,
    ) -> Vec<(&'static str, String)> {
        let agent = crate::agent::from_name(agent, None).unwrap();
        let agents = Agents::from(std::sync::Arc::from(agent));
        let routing = planwright_config::Routing::default();
        let lanes = Lanes::of(plan, &routing, families, &agents);
        let mut out = Vec::new();
        check_routing(plan, &routing, families, &lanes, &mut out);
        out.into_iter().map(|c| (c.status, c.message)).collect()
    }

    #[test]
    fn routing_gives_each_ticket_a_model_of_the_agents_family_and_says_so() {
        let plan = Plan::new(
            Format::Agb,
            vec![
                routed("T1", "mid", Some("claude"), None),
                routed("T2", "mid", Some("gemini"), None),
                routed("T3", "cheap", Some("gemini"), None),
                routed("T4", "mid", None, Some("gemini-3-flash")),
                Ticket::new("T5", "b"),
            ],
        );
        let families = planwright_config::Families::default();
        let seen = routing_checks(&plan, "claude", &families);
        assert_eq!(seen[0], ("ok", "T1 -> claude -> claude-sonnet-4-6".into()));
        assert_eq!(seen[1].0, "warning");
        assert!(
            seen[1]
                .1
                .starts_with("T2 -> claude -> claude-sonnet-4-6: its pool hint `gemini`"),
            "{}",
            seen[1].1
        );
        assert_eq!(seen[2].0, "warning");
        assert!(
            seen[2].1.starts_with("T3 -> claude -> claude-haiku-4-5: "),
            "{}",
            seen[2].1
        );
        assert_eq!(seen[3].0, "warning");
        assert!(
            seen[3].1.contains("model `gemini-3-flash` (family gemini)"),
            "{}",
            seen[3].1
        );
        assert_eq!(
            seen[4],
            ("ok", "T5 -> claude -> the CLI's default model".into())
        );
        let no_cheap = families.clone().with(&std::collections::BTreeMap::from([(
            "claude".to_string(),
            planwright_config::FamilyModels {
                mid: Some("claude-sonnet-4-6".into()),
                ..Default::default()
            },
        )]));
        let seen = routing_checks(&plan, "claude", &no_cheap);
        assert_eq!(seen[2].0, "error");
        assert!(seen[2].1.starts_with("ticket T3: "), "{}", seen[2].1);
        assert!(
            seen[2].1.contains("no claude model of tier `cheap`"),
            "{}",
            seen[2].1
        );
        let any = routing_checks(&plan, "opencode", &families);
        assert!(any.iter().all(|c| c.0 == "ok"), "{any:?}");
        assert_eq!(any[1].1, "T2 -> opencode -> gemini-3.1-pro-low");
    }

    #[test]
    fn a_ticket_no_agent_serves_is_a_routing_error_naming_it() {
        let plan = Plan::new(Format::Agb, vec![routed("O", "mid", Some("gpt-oss"), None)]);
        let families = planwright_config::Families::default();
        let spec = planwright_config::AgentsSpec {
            run: None,
            by_family: vec![(
                "claude".into(),
                planwright_config::AgentSpec {
                    name: "claude".into(),
                    options: Default::default(),
                },
            )],
        };
        let agents = Agents::build(&spec).unwrap();
        let routing = planwright_config::Routing::default();
        let lanes = Lanes::of(&plan, &routing, &families, &agents);
        let mut out = Vec::new();
        check_routing(&plan, &routing, &families, &lanes, &mut out);
        assert_eq!(out[0].status, "error");
        assert!(
            out[0]
                .message
                .starts_with("ticket O: no agent of `[agents]`"),
            "{}",
            out[0].message
        );
    }

    fn ticket(id: &str, deps: &[&str], scope: ScopeEntry) -> Ticket {
        Ticket {
            scope: vec![scope],
            depends_on: deps.iter().map(|d| d.to_string()).collect(),
            ..Ticket::new(id, "b")
        }
    }

    #[test]
    fn a_glob_an_ancestor_may_create_counts_as_existing() {
        let modify = |p: &str| ScopeEntry {
            pattern: p.into(),
            op: ScopeOp::Modify,
        };
        let plan = Plan::new(
            Format::Native,
            vec![
                ticket("A", &[], ScopeEntry::any("src/*.rs")),
                ticket("B", &["A"], modify("src/**/*.rs")),
                ticket("C", &["A"], modify("docs/*.md")),
            ],
        );
        let mut out = Vec::new();
        check_scope_ops(
            &plan,
            &HashSet::new(),
            &HashSet::new(),
            &HashMap::new(),
            &mut out,
        );
        let errors: Vec<&str> = out
            .iter()
            .filter(|c| c.status == "error")
            .map(|c| c.message.as_str())
            .collect();
        assert_eq!(
            errors,
            ["ticket C: `docs/*.md` is declared `modify`/`delete` but matches no file of the base"]
        );
    }

    #[test]
    fn a_known_forecast_gives_the_checks_a_fresh_one_does_and_skips_merged_tickets() {
        let plan = Plan::new(
            Format::Native,
            vec![
                ticket("A", &[], ScopeEntry::any("src/*.rs")),
                ticket("B", &[], ScopeEntry::any("src/lib.rs")),
                ticket("C", &[], ScopeEntry::any("src/**")),
            ],
        );
        let messages = |known: Option<&[Overlap]>, outlook: &Outlook| {
            let mut out = Vec::new();
            check_overlap(&plan, known, outlook, &mut out);
            out.into_iter().map(|c| c.message).collect::<Vec<_>>()
        };
        let forecast = planwright_plan::overlap::forecast(&plan);
        let fresh = Outlook::default();
        assert_eq!(
            messages(None, &fresh),
            ["3 tickets may run at the same time and may change the same paths (`src/*.rs`, `src/lib.rs`, `src/**`): A, B, C"]
        );
        assert_eq!(messages(Some(&forecast), &fresh), messages(None, &fresh));
        let a_merged = Outlook {
            merged: vec!["A".into()],
            ..Outlook::default()
        };
        let left = messages(Some(&forecast), &a_merged);
        assert_eq!(left, messages(None, &a_merged));
        assert_eq!(
            left,
            ["B and C may run at the same time and both may change `src/*.rs` / `src/lib.rs` / `src/**`"]
        );
    }
}
