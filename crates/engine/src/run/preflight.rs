//! Everything `run` checks before it starts, reported all at once, in the
//! order of [`check_all`]: the one list of every check, which both `run`
//! and `planwright preflight` go through. Each check is a function in the
//! file of its concern: git and the repository (`repo.rs`: `git`, `repo`,
//! `base`, `clean`, `lock`, `git-config`), the branch merged into (`base.rs`), the sandbox
//! (`sandbox.rs`: `sandbox`, `limits`), the agents (`agent.rs`), the gates
//! (`gates.rs`: `gates`, `gate-files`; the names a gate gives its tool,
//! `commands.rs`; the gates on the base commit and the lock files,
//! `probe.rs`: `gate-probe`), what earlier runs merged (`earlier.rs`:
//! `continue`, `changed`), the scopes (`scope.rs`: `scope-ops`, `overlap`),
//! the workspace (`workspace.rs`: `copy`, `setup`), the tickets' checks
//! (`judged.rs`: `checks`), routing (`routing.rs`), the models' prices
//! (`prices.rs`) and, last, the workers
//! of a remote executor (`exec/remote/checks.rs`: `executor`).

use crate::agent::Agents;
use crate::git::repo::Repo;
use crate::run::routing::Lanes;
use crate::run::{Outlook, Resume, RunSettings};
use planwright_plan::graph::TicketGraph;
use planwright_plan::Plan;
use std::path::Path;

mod agent;
mod base;
mod commands;
mod earlier;
mod gates;
mod judged;
mod offers;
mod prices;
mod probe;
mod repo;
mod routing;
mod sandbox;
mod scope;
mod workspace;
pub use base::current_branch;
pub(crate) use base::settle as settle_base;
pub use judged::{checks_judged, unjudged_checks};
pub use probe::missing_setup;
pub(crate) use routing::{check_reviewer, check_routing};
pub(crate) use scope::check_scope_ops;

pub use crate::model::{Check, CheckName, CheckStatus};

/// Whether any check failed.
pub fn failed(checks: &[Check]) -> bool {
    checks.iter().any(|c| c.status == CheckStatus::Error)
}

/// Runs every check `run` makes before it starts, with `settings` as
/// `run` would have them; `allow` is the `[commands] allow` list that the
/// commands of a plan an agent wrote must be on before they run.
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

/// Every check, in the order they are reported, for a run that treats
/// earlier runs as `resume` says (the scope checks skip the tickets that
/// will not run), with `plan.base` set to the branch the run merges into
/// ([`settle_base`]). A new check is one call here.
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
    let graph = TicketGraph::new(plan);
    let (contain, extra) = (&settings.contain, &settings.extra_gates);
    let mut out = Vec::new();
    repo::check_git_version(&mut out);
    let repo = repo::open_repo(dir, &mut out);
    let base_files = (repo.as_ref()).and_then(|r| repo::check_repo(r, plan, &base, &mut out));
    if let Some(r) = &repo {
        repo::check_lock(r, &mut out);
        repo::check_git_config(r, &contain.allow_config, &mut out);
    }
    sandbox::check_sandbox(contain, &mut out);
    sandbox::check_limits(contain, &mut out);
    let mut offers = Vec::new();
    for (entry, agent) in agents.entries() {
        agent::check_agent(agent, &mut out);
        agent::check_agent_setup(agent, contain, &mut out);
        if let Some(models) = agent::probe_agent(agent, contain, &mut out) {
            offers.push((entry.map(String::from), models));
        }
    }
    let setup = !settings.workspace.setup.is_empty();
    gates::check_gates(dir, plan, extra, setup, &mut out);
    gates::check_gate_files(plan, extra, &mut out);
    gates::check_allowed(plan, allow, &mut out);
    let mut outlook = None;
    if let (Some(files), Some(r)) = (base_files, &repo) {
        let found = earlier::check_earlier(r, plan, &settings.plan_path, resume, &mut out);
        let (skipped, earlier) = (&found.skipped(), &found.earlier);
        check_scope_ops(plan, &graph, &files, skipped, earlier, &mut out);
        scope::check_overlap(plan, &graph, settings.overlaps.as_deref(), &found, &mut out);
        outlook = Some(found);
    }
    if let Some(r) = &repo {
        if let Ok(Some(tip)) = r.branch_tip(&plan.base) {
            let gates = gates::every_gate(plan, extra);
            commands::check_gate_commands(r, &tip, &gates, &mut out);
        }
        workspace::check_copy(r, &settings.workspace.copy, &mut out);
        let local = matches!(
            settings.executor,
            planwright_config::ExecutorSettings::Local
        );
        workspace::check_setup(r, plan, &settings.workspace, contain, local, &mut out);
        probe::check_lock_files(r, plan, settings, &mut out);
        probe::check_gate_probe(r, plan, settings, &mut out);
    }
    out.extend(unjudged_checks(plan, &settings.beyond));
    let (routing, families) = (&settings.routing, &settings.families);
    let lanes = Lanes::of(plan, routing, families, agents);
    check_routing(plan, routing, families, &lanes, &mut out);
    check_reviewer(&settings.beyond, routing, families, &mut out);
    offers::check_offered(plan, routing, families, &lanes, &offers, &mut out);
    prices::check_prices(plan, settings, &lanes, &mut out);
    earlier::check_rerun(plan, resume, &mut out);
    if let (Some(r), false) = (&repo, failed(&out)) {
        // Last: it starts the workers, which costs a connection per place.
        let (executor, jobs, link) = (&settings.executor, settings.jobs, &settings.worker_link);
        crate::exec::remote::check_workers(r, executor, jobs, link, contain, agents, &mut out);
    }
    Examined {
        checks: out,
        repo,
        outlook,
        lanes,
        graph,
    }
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
    /// The plan's ticket graph, which the run keeps.
    pub graph: TicketGraph,
}

/// Agents and gates are looked up in planwright's own PATH (gates keep it in their scrubbed environment).
fn path() -> Option<String> {
    std::env::var("PATH").ok()
}

/// A check that reports each problem it finds says once that all is well
/// when it found none since `before`.
fn ok_if_quiet(out: &mut Vec<Check>, before: usize, check: CheckName, message: &str) {
    if out.len() == before {
        out.push(Check::ok(check, message));
    }
}

#[cfg(test)]
mod tests;
