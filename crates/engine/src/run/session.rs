//! A run's session: preflight, then the run opened, coordinated and closed.

use super::coordinator::coordinate;
use super::preflight::{Check, CheckName};
use super::resume::{open_run, Opened, Outlook, Resume};
use super::routing::{scheduler, Lanes};
use super::settings::RunSettings;
use super::shared::Shared;
use super::summary::{summarize, Held, RunSummary};
use crate::agent::Agents;
use crate::clock;
use crate::error::EngineError;
use crate::events::{Event, JsonLines, Reporter};
use crate::exec::network::Network;
use crate::exec::workspace::Workspaces;
use crate::exec::{remote, Executor, LocalExecutor};
use crate::git::guard::Guard;
use crate::git::identity::ticket_digest;
use crate::git::refs::{self, Sync, Target};
use crate::git::repo::Repo;
use crate::store::{RunStatus, Store};
use crate::verify::checkout::Checkouts;
use planwright_os::process::Cancel;
use planwright_os::sandbox::Containment;
use planwright_plan::graph::TicketGraph;
use planwright_plan::Plan;
use std::sync::Arc;

/// A session whose preflight passed: the only thing [`run`] accepts, and
/// only [`prepare`] makes one, so no front end can skip a check.
pub struct Prepared {
    repo: Repo,
    /// The integrity guard of the run: the executor's and the run's.
    guard: Arc<Guard>,
    plan: Plan,
    settings: RunSettings,
    resume: Resume,
    containment: Containment,
    checks: Vec<Check>,
    outlook: Outlook,
    /// The agents, and which of them does each ticket.
    agents: Agents,
    lanes: Lanes,
    /// The plan's ticket graph, built once by preflight.
    graph: Arc<TicketGraph>,
}

/// Preflight found problems; nothing was started.
#[derive(Debug, Clone)]
pub struct PreflightFailed {
    /// Every check, the failed ones included.
    pub checks: Vec<Check>,
}

/// Runs every preflight check (with what `resume` asks) and, when none
/// fails, returns the session [`run`] needs.
pub fn prepare(
    dir: &std::path::Path,
    mut plan: Plan,
    settings: RunSettings,
    resume: Resume,
    allow: &[Vec<String>],
    agents: &Agents,
) -> Result<Prepared, PreflightFailed> {
    let found = super::preflight::check_all(dir, &mut plan, &settings, &resume, allow, agents);
    let (mut checks, lanes, graph) = (found.checks, found.lanes, found.graph);
    let (Some(repo), false) = (found.repo, super::preflight::failed(&checks)) else {
        return Err(PreflightFailed { checks });
    };
    let containment = match crate::contain::containment(settings.contain.mode) {
        Ok(c) => c,
        Err(e) => {
            checks.push(Check::error(
                CheckName::Sandbox,
                e.to_string(),
                "run on a kernel with Landlock, or set `[sandbox] mode = \"off\"` to run agents unconfined",
            ));
            return Err(PreflightFailed { checks });
        }
    };
    let outlook = found.outlook.unwrap_or_default();
    Ok(Prepared {
        guard: Arc::new(Guard::of(&repo)),
        repo,
        plan,
        settings,
        resume,
        containment,
        checks,
        outlook,
        agents: agents.clone(),
        lanes,
        graph: Arc::new(graph),
    })
}

impl Prepared {
    /// Every preflight check (all passed or warned).
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }
    /// The repository.
    pub fn repo(&self) -> &Repo {
        &self.repo
    }
    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }
    /// The settings.
    pub fn settings(&self) -> &RunSettings {
        &self.settings
    }
    /// What the run will do with each ticket.
    pub fn outlook(&self) -> &Outlook {
        &self.outlook
    }

    /// The executor that runs attempts in this repository's workspaces,
    /// confined as `[sandbox]` says, with the agents preflight checked.
    pub fn local_executor(&self) -> Arc<dyn Executor> {
        let c = &self.settings.contain;
        let workspaces = Workspaces::new(
            self.repo.clone(),
            self.settings.workspace.clone(),
            self.containment,
            c.writable.clone(),
        )
        .with_network(Network::new(c))
        .with_readable(c.readable.clone())
        .with_limits(crate::contain::limits(c));
        Arc::new(
            LocalExecutor::new(
                self.repo.clone(),
                self.guard.clone(),
                workspaces,
                self.agents.clone(),
                c.agent_log_limit,
            )
            .with_min_free(self.settings.min_free),
        )
    }

    /// The executor `[executor]` names: the local one, or workers reached
    /// through a process, `ssh` or Kubernetes (whose places preflight greeted),
    /// answering to `cancel`, the run's Ctrl-C, from now on.
    pub fn executor(&self, cancel: &Cancel) -> Result<Arc<dyn Executor>, EngineError> {
        let slots = self.settings.jobs.max(1);
        let state = self.repo.state_dir();
        let executor = &self.settings.executor;
        let Some(transport) = remote::transport(executor, &state, slots, cancel)? else {
            return Ok(self.local_executor());
        };
        let settings = crate::exec::remote::protocol::WorkerSettings::from(&self.settings);
        let (repo, agents) = (self.repo.clone(), self.agents.clone());
        let remote = remote::RemoteExecutor::new(transport, repo, agents, settings)?;
        Ok(Arc::new(remote.with_link(self.settings.worker_link)))
    }

    /// The order tickets that will run would start in, as batches that
    /// start together (at most `jobs`), assuming every ticket passes and
    /// takes its estimate (`run --dry-run`).
    pub fn start_order(&self) -> Vec<Vec<String>> {
        let jobs = self.settings.jobs.max(1);
        let (routing, families) = (&self.settings.routing, &self.settings.families);
        let graph = Arc::clone(&self.graph);
        let mut s = scheduler(&self.plan, graph, routing, families, &self.lanes, jobs);
        for id in self.outlook.skipped() {
            s.merged(&id);
        }
        s.rehearse(jobs).0
    }
}

/// Cancels when dropped during a panic, so a panicking coordinator stops
/// every attempt before the thread scope waits for them.
pub(super) struct CancelOnPanic<'a>(&'a Cancel);

impl Drop for CancelOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.cancel();
        }
    }
}

/// The repository made ready for a run, under the run lock it returns:
/// planwright's folder, its own git, the guard and the disk's floor.
fn ready(
    repo: &Repo,
    guard: &Guard,
    settings: &RunSettings,
    containment: &Containment,
) -> Result<super::lock::RunLock, EngineError> {
    repo.ensure_excluded()?;
    let state_dir = repo.state_dir();
    std::fs::create_dir_all(&state_dir).map_err(|e| EngineError::io(&state_dir, e))?;
    let lock = super::lock::RunLock::acquire(repo)?;
    // A repository whose git config would run programs in planwright's own
    // git calls is refused before anything runs (exit 3).
    crate::git::integrity::refuse_risky_config(repo, &settings.contain.allow_config)?;
    repo.ensure_own_git(&settings.contain.allow_config)?;
    // Confined agents cannot write the user's checkout: a change there is
    // the user's own edit, which holds the merges rather than stopping the run.
    guard.watch_checkout(!containment.confines_writes());
    // Below the floor the store gets the reserve's room; above, it is kept.
    crate::exec::disk::at_open(&state_dir, settings.min_free);
    Ok(lock)
}

/// How agents are confined in this run, for its `contained` event.
fn contained(sh: &Shared, mut sandbox: String) -> String {
    if sh.checkouts.overlay() {
        sandbox.push_str(", gate overlay");
    }
    if let Some(elsewhere) = sh.executor.elsewhere() {
        sandbox.push_str(&format!("; {elsewhere}"));
    }
    sandbox
}

/// Runs (or continues) a prepared session, its attempts through `executor`.
pub fn run(
    session: Prepared,
    executor: Arc<dyn Executor>,
    reporters: Vec<Box<dyn Reporter>>,
    cancel: &Cancel,
) -> Result<RunSummary, EngineError> {
    let Prepared {
        repo,
        guard,
        plan,
        settings,
        resume,
        containment,
        outlook,
        lanes,
        graph,
        ..
    } = session;
    let state_dir = repo.state_dir();
    let _lock = ready(&repo, &guard, &settings, &containment)?;
    let described = containment.describe();
    let store = Store::open(&state_dir.join("state.db"))?;
    // Each ticket's digest, in plan order: asked once, as it serializes the ticket.
    let digests: Vec<String> = plan.tickets.iter().map(ticket_digest).collect();
    let Opened {
        run: row,
        continued,
        removed,
    } = open_run(&store, &repo, &guard, &plan, &digests, &settings, &resume)?;
    let inputs = super::inputs::read(&repo, &settings.plan_path, settings.config_source.as_ref())?;
    let recorded = store.run_inputs(&row.id)?;
    store.set_run_inputs(&row.id, &super::inputs::record(&inputs))?;
    store.set_run_graph(
        &row.id,
        &super::graph::RunGraph::of(&plan, &graph).to_json(),
    )?;
    let run_dir = state_dir.join("runs").join(&row.id);
    std::fs::create_dir_all(&run_dir).map_err(|e| EngineError::io(&run_dir, e))?;
    let mut reporters = reporters;
    let events = run_dir.join("events.jsonl");
    reporters.push(Box::new(
        JsonLines::open(&events).map_err(|e| EngineError::io(&events, e))?,
    ));
    let last_seq = store.last_event_seq(&row.id)?;
    let (emitter, reporting) =
        crate::events::start(store.clone(), row.id.clone(), last_seq, reporters);
    let shared = Shared {
        target: Target::new(&plan.base, &row.id),
        graph: &graph,
        digests,
        repo: &repo,
        guard: &guard,
        plan: &plan,
        settings: &settings,
        store: store.clone(),
        run: row.id.clone(),
        checkouts: Checkouts::new(
            repo.clone(),
            settings.workspace.clone(),
            containment,
            &settings.contain,
        ),
        executor,
        lanes,
        cancel,
        run_dir,
        emitter: emitter.clone(),
        run_rails: super::inputs::rails(&inputs, settings.allow_config_change),
        earlier: outlook.earlier,
        verifying: Default::default(),
        flakes: Default::default(),
    };
    emitter.emit(Event::RunStarted {
        run: row.id.clone(),
        base: plan.base.clone(),
        ticket_count: plan.tickets.len(),
        continued,
    });
    for ticket in removed {
        emitter.emit(Event::Removed { ticket });
    }
    if let Some(recorded) = recorded {
        for event in input_changes(&shared, &recorded, &inputs)? {
            emitter.emit(event);
        }
    }
    emitter.emit(Event::Contained {
        sandbox: contained(&shared, described),
    });
    let result = work(&shared);
    emitter.close();
    let _ = reporting.join();
    result
}

/// The run after it was opened: land what an earlier invocation held back,
/// coordinate, land what this one merged, record how it ended.
pub(super) fn work(sh: &Shared) -> Result<RunSummary, EngineError> {
    sync(sh)?;

    let outcome = std::thread::scope(|scope| {
        let _stop = CancelOnPanic(sh.cancel);
        let outcome = coordinate(scope, sh);
        // The scope joins the attempts still in flight before it returns:
        // after an error nothing will merge them, so stop them now instead
        // of waiting for their agents to finish.
        if outcome.is_err() {
            sh.cancel.cancel();
        }
        outcome
    });
    let interrupted = sh.cancel.is_cancelled();
    let held = match &outcome {
        Ok(_) => sync(sh)?,
        Err(_) => None,
    };
    let (outcome, stops) = match outcome {
        Ok(stops) => (Ok(()), stops),
        Err(e) => (Err(e), Default::default()),
    };
    let mut summary = summarize(&sh.store, &sh.run, held, interrupted, stops)?;
    summary.flaky = std::mem::take(&mut sh.flakes.lock().unwrap_or_else(|e| e.into_inner()));
    let status = if interrupted {
        RunStatus::Interrupted
    } else {
        RunStatus::Finished
    };
    sh.store.end_run(&sh.run, status, &clock::now())?;
    sh.emitter.emit(Event::RunFinished {
        run: sh.run.clone(),
        merged_count: summary.merged.len(),
        changed_count: summary.changed.len(),
        failed_count: summary.failed.len(),
        blocked_count: summary.blocked.len(),
        interrupted,
    });
    outcome.map(|_| summary)
}

/// Lands the run's branch on the base when that harms no checkout.
pub(super) fn sync(sh: &Shared) -> Result<Option<Held>, EngineError> {
    Ok(match refs::sync(sh.repo, sh.guard, &sh.target)? {
        Sync::Nothing => None,
        Sync::Advanced { commit } => {
            sh.emitter.emit(Event::BaseAdvanced {
                base: sh.target.base.clone(),
                commit,
            });
            None
        }
        Sync::Held { reason } => {
            sh.emitter.emit(Event::MergesHeld {
                branch: sh.target.held.clone(),
                reason: reason.clone(),
            });
            Some(Held {
                branch: sh.target.held.clone(),
                reason,
            })
        }
    })
}

/// An event for each file deciding the run whose content differs from what
/// the run recorded when it last started, naming the run's merges that
/// changed it (none: the user's own edit).
pub(super) fn input_changes(
    sh: &Shared,
    recorded: &str,
    inputs: &[super::inputs::RunInput],
) -> Result<Vec<Event>, EngineError> {
    let merged: Vec<(String, String)> = (sh.store.tickets(&sh.run)?.into_iter())
        .filter_map(|t| Some((t.id, t.merge_commit?)))
        .collect();
    let mut events = Vec::new();
    for (input, before) in super::inputs::changed(recorded, inputs) {
        let merged_by = match &input.in_repo {
            Some(path) => super::inputs::merged_by(sh.repo, path, &merged)?,
            None => Vec::new(),
        };
        events.push(Event::InputChanged {
            role: input.role.to_string(),
            file: input.shown.clone(),
            before,
            after: input.blob.clone(),
            merged_by,
        });
    }
    Ok(events)
}
