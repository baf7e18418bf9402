//! The run loop: schedule ready tickets, run attempts on worker threads,
//! verify what they produce, merge what passes (one at a time, on this
//! thread), retry with evidence up to the strike limit, and record every
//! transition in the state store before its side effect.

use crate::agent::{Agent, AgentOutcome};
use crate::charter::Charter;
use crate::checkout::Checkouts;
use crate::clock;
use crate::error::EngineError;
use crate::events::{Event, JsonLines, Reporter};
use crate::executor::{AttemptInput, Candidate, Executor, LocalExecutor};
use crate::failure::{Failure, FailureKind};
use crate::gates::{GateSettings, Verdict};
use crate::merge::{commit_message, Merge, MergeOutcome};
use crate::process::Cancel;
use crate::repo::Repo;
use crate::sandbox::{ContainSettings, Containment};
use crate::scheduler::Scheduler;
use crate::state::{RunRow, Store, TicketState};
use crate::verify;
use crate::workspace::{PoolSettings, Workspaces};
use planwright_plan::config::Routing;
use planwright_plan::model::{Gate, Ticket};
use planwright_plan::Plan;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::time::Duration;

/// Everything a run is configured with.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The plan file as given (for the record).
    pub plan_path: String,
    /// Tickets worked on at once.
    pub jobs: usize,
    /// Attempts per ticket in this invocation.
    pub strikes: u32,
    /// The agent's wall-clock limit per attempt.
    pub agent_timeout: Option<Duration>,
    /// Gates added to every ticket (from `[gates] run` and `--gate`).
    pub extra_gates: Vec<Gate>,
    /// How gates run.
    pub gates: GateSettings,
    /// How workspaces and gate checkouts are prepared.
    pub pool: PoolSettings,
    /// The sandbox, the accepted git config and the agent's log cap.
    pub contain: ContainSettings,
    /// Pools and caps.
    pub routing: Routing,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    /// The run id.
    pub run: String,
    /// Tickets on the base branch.
    pub merged: Vec<String>,
    /// Tickets out of attempts, with their last failure.
    pub failed: BTreeMap<String, Failure>,
    /// Tickets not started because an ancestor failed.
    pub blocked: Vec<String>,
    /// Whether Ctrl-C stopped it early.
    #[serde(skip)]
    pub interrupted: bool,
}

impl RunSummary {
    /// Whether every ticket merged.
    pub fn all_merged(&self) -> bool {
        self.failed.is_empty() && self.blocked.is_empty() && !self.interrupted
    }
}

/// The gates of one ticket: the plan's, the ticket's, then the configured ones, without repeats.
pub fn ticket_gates(plan: &Plan, ticket: &Ticket, extra: &[Gate]) -> Vec<Gate> {
    let mut seen = HashSet::new();
    plan.gates
        .iter()
        .chain(&ticket.gates)
        .chain(extra)
        .filter(|g| seen.insert(g.argv.clone()))
        .cloned()
        .collect()
}

/// The pool a ticket counts against, from the routing table.
pub fn ticket_pool(ticket: &Ticket, routing: &Routing) -> Option<String> {
    if ticket.tier.is_none() && ticket.pool_hint.is_none() && ticket.model.is_none() {
        return None;
    }
    if let Some(model) = &ticket.model {
        if let Some(m) = routing.models.iter().find(|m| &m.name == model) {
            return Some(m.pool.clone());
        }
    }
    let tier = ticket
        .tier
        .as_deref()
        .unwrap_or(planwright_plan::config::DEFAULT_TIER);
    let hint = ticket.pool_hint.as_deref().unwrap_or("auto");
    routing
        .candidates(tier, hint)
        .first()
        .map(|m| m.pool.clone())
}

fn scheduler(plan: &Plan, routing: &Routing) -> Scheduler {
    let pools: HashMap<String, String> = plan
        .tickets
        .iter()
        .filter_map(|t| ticket_pool(t, routing).map(|p| (t.id.clone(), p)))
        .collect();
    let mut caps = routing.caps.clone();
    caps.extend(plan.caps.clone());
    Scheduler::new(plan, pools, caps)
}

/// The order tickets would start in, as waves of at most `jobs`, assuming every ticket passes.
pub fn dry_run(plan: &Plan, settings: &RunSettings) -> Vec<Vec<String>> {
    let mut s = scheduler(plan, &settings.routing);
    let mut waves = Vec::new();
    loop {
        let wave = s.next(settings.jobs.max(1));
        if wave.is_empty() {
            return waves;
        }
        for id in &wave {
            s.started(id);
        }
        for id in &wave {
            s.merged(id);
        }
        waves.push(wave);
    }
}

/// Tickets of `plan` that an earlier run of the same plan merged (read-only:
/// nothing is created when the repository has no state store).
pub fn already_merged(repo: &Repo, plan: &Plan) -> Result<HashSet<String>, EngineError> {
    let db = repo.state_dir().join("state.db");
    if !db.is_file() {
        return Ok(HashSet::new());
    }
    let store = Store::open(&db)?;
    let Some(run) = store.run_for_digest(&plan_digest(plan))? else {
        return Ok(HashSet::new());
    };
    Ok(store
        .tickets(&run.id)?
        .into_iter()
        .filter(|t| t.state == TicketState::Merged)
        .map(|t| t.id)
        .collect())
}

/// A digest of the plan, so a second `run` of the same plan continues.
pub fn plan_digest(plan: &Plan) -> String {
    let text = serde_json::to_string(plan).expect("plans serialize");
    // FNV-1a: a stable identity, not a security boundary.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

enum Msg {
    Phase {
        ticket: String,
        attempt: u32,
        phase: String,
    },
    Done {
        lane: usize,
        ticket: String,
        attempt: u32,
        base: String,
        result: Result<AttemptResult, EngineError>,
    },
}

enum AttemptResult {
    Passed { candidate: String },
    Rejected(Failure),
    Cancelled,
}

struct Emitter {
    store: Store,
    run: String,
    reporters: Vec<Box<dyn Reporter>>,
}

impl Emitter {
    fn emit(&mut self, event: Event) -> Result<(), EngineError> {
        let at = clock::now();
        let data = serde_json::to_string(&event).expect("events serialize");
        self.store
            .record_event(&self.run, &at, event.ticket(), &event.name(), &data)?;
        for r in &mut self.reporters {
            r.report(&at, &event);
        }
        Ok(())
    }
}

/// Shared, read-only context of the worker threads.
struct Shared<'a> {
    repo: &'a Repo,
    plan: &'a Plan,
    settings: &'a RunSettings,
    store: Store,
    run: String,
    checkouts: Checkouts,
    executor: &'a dyn Executor,
    cancel: &'a Cancel,
    run_dir: PathBuf,
}

/// Runs (or continues) `plan` on `repo` with `agent`.
pub fn run(
    repo: &Repo,
    plan: &Plan,
    settings: &RunSettings,
    agent: Arc<dyn Agent>,
    mut reporters: Vec<Box<dyn Reporter>>,
    cancel: &Cancel,
) -> Result<RunSummary, EngineError> {
    repo.ensure_excluded()?;
    let state_dir = repo.state_dir();
    std::fs::create_dir_all(&state_dir).map_err(|e| EngineError::io(&state_dir, e))?;
    let _lock = crate::lock::RunLock::acquire(&state_dir)?;
    // Before anything is recorded: a kernel or a repository that cannot be
    // trusted stops the run here.
    let (executor, checkouts, containment) = contained(repo, settings, agent)?;
    let store = Store::open(&state_dir.join("state.db"))?;
    let (run_id, continued) = open_run(&store, repo, plan, settings)?;
    let run_dir = state_dir.join("runs").join(&run_id);
    std::fs::create_dir_all(&run_dir).map_err(|e| EngineError::io(&run_dir, e))?;
    let events = run_dir.join("events.jsonl");
    reporters.push(Box::new(
        JsonLines::open(&events).map_err(|e| EngineError::io(&events, e))?,
    ));
    let mut emitter = Emitter {
        store: store.clone(),
        run: run_id.clone(),
        reporters,
    };
    emitter.emit(Event::RunStarted {
        run: run_id.clone(),
        base: plan.base.clone(),
        tickets: plan.tickets.len(),
        continued,
    })?;
    emitter.emit(Event::Contained {
        sandbox: containment.describe(),
    })?;
    let shared = Shared {
        repo,
        plan,
        settings,
        store: store.clone(),
        run: run_id.clone(),
        checkouts,
        executor: &executor,
        cancel,
        run_dir,
    };
    let mut sched = scheduler(plan, &settings.routing);
    for t in store.tickets(&run_id)? {
        if t.state == TicketState::Merged {
            sched.merged(&t.id);
            emitter.emit(Event::AlreadyMerged { ticket: t.id })?;
        }
    }
    let outcome = std::thread::scope(|scope| {
        let outcome = coordinate(scope, &shared, &mut sched, &mut emitter);
        // The scope joins the attempts still in flight before it returns:
        // after an error nothing will merge them, so stop them now instead
        // of waiting for their agents to finish.
        if outcome.is_err() {
            cancel.cancel();
        }
        outcome
    });
    let interrupted = cancel.is_cancelled();
    let summary = summarize(&store, &run_id, interrupted)?;
    store.set_run_status(
        &run_id,
        if interrupted {
            "interrupted"
        } else {
            "finished"
        },
        Some(&clock::now()),
    )?;
    emitter.emit(Event::RunFinished {
        run: run_id,
        merged: summary.merged.len(),
        failed: summary.failed.len(),
        blocked: summary.blocked.len(),
        interrupted,
    })?;
    outcome.map(|()| summary)
}

/// The executor and gate checkouts, confined as `[sandbox]` says; refuses
/// a kernel that cannot confine in enforce mode and a repository whose git
/// config would run programs in planwright's git calls.
fn contained(
    repo: &Repo,
    settings: &RunSettings,
    agent: Arc<dyn Agent>,
) -> Result<(LocalExecutor, Checkouts, Containment), EngineError> {
    let c = &settings.contain;
    let containment = Containment::new(c.mode)?;
    crate::integrity::refuse_risky_config(repo, &c.allow_config)?;
    repo.ensure_own_git(&c.allow_config)?;
    let p = &settings.pool;
    let workspaces = Workspaces::new(repo.clone(), p.pristine, containment, c.writable.clone());
    let executor = LocalExecutor::new(repo.clone(), workspaces, agent, c.agent_log_limit);
    let checkouts = Checkouts::new(
        repo.clone(),
        p.clone(),
        containment,
        c.gate_network,
        &c.writable,
    );
    Ok((executor, checkouts, containment))
}

/// Finds the run to continue (same plan) or records a new one, and settles
/// tickets an earlier invocation left half-way.
fn open_run(
    store: &Store,
    repo: &Repo,
    plan: &Plan,
    settings: &RunSettings,
) -> Result<(String, bool), EngineError> {
    let digest = plan_digest(plan);
    let (id, continued) = match store.run_for_digest(&digest)? {
        Some(run) => (run.id, true),
        None => {
            let mut n = 0;
            let id = loop {
                let id = clock::run_id(n);
                if store.run(&id)?.is_none() {
                    break id;
                }
                n += 1;
            };
            store.create_run(&RunRow {
                id: id.clone(),
                plan_path: settings.plan_path.clone(),
                plan_digest: digest,
                base: plan.base.clone(),
                started_at: clock::now(),
                finished_at: None,
                status: "running".into(),
            })?;
            (id, false)
        }
    };
    store.set_run_status(&id, "running", None)?;
    for (i, t) in plan.tickets.iter().enumerate() {
        store.ensure_ticket(&id, &t.id, i, &t.title)?;
    }
    let tip = repo.branch_tip(&plan.base)?.unwrap_or_default();
    for t in store.tickets(&id)? {
        match t.state {
            TicketState::Merged => {}
            TicketState::Merging => {
                // The ref update may or may not have happened before the stop.
                // A git that cannot answer stops the resume: guessing "not
                // landed" would run the ticket again and merge it twice.
                let landed = match t.merge_commit.as_deref() {
                    Some(c) => repo
                        .git()
                        .args(["merge-base", "--is-ancestor", c, &tip])
                        .succeeds()?
                        .then_some(c),
                    None => None,
                };
                match landed {
                    Some(c) => store.mark_merged(&id, &t.id, c)?,
                    None => store.set_ticket(&id, &t.id, TicketState::Pending, None)?,
                }
            }
            _ => store.set_ticket(&id, &t.id, TicketState::Pending, t.failure.as_ref())?,
        }
    }
    Ok((id, continued))
}

fn summarize(store: &Store, run: &str, interrupted: bool) -> Result<RunSummary, EngineError> {
    let mut s = RunSummary {
        run: run.to_string(),
        merged: vec![],
        failed: BTreeMap::new(),
        blocked: vec![],
        interrupted,
    };
    for t in store.tickets(run)? {
        match t.state {
            TicketState::Merged => s.merged.push(t.id),
            TicketState::Failed => {
                let f = t
                    .failure
                    .unwrap_or_else(|| Failure::new(FailureKind::AgentFailed, "failed"));
                s.failed.insert(t.id, f);
            }
            TicketState::Blocked => s.blocked.push(t.id),
            _ => {}
        }
    }
    Ok(s)
}

struct Loop {
    free: Vec<usize>,
    in_flight: usize,
    strikes_used: HashMap<String, u32>,
    previous: HashMap<String, Failure>,
    fatal: Option<EngineError>,
}

/// The coordinator thread: it alone schedules, merges and records; the
/// attempts run on worker threads and report back through a channel.
struct Coordinator<'c, 'a> {
    sh: &'c Shared<'a>,
    sched: &'c mut Scheduler,
    em: &'c mut Emitter,
    lp: Loop,
}

fn coordinate<'s, 'a: 's>(
    scope: &'s std::thread::Scope<'s, '_>,
    sh: &'s Shared<'a>,
    sched: &'s mut Scheduler,
    em: &'s mut Emitter,
) -> Result<(), EngineError> {
    let mut lp = Loop {
        free: (0..sh.settings.jobs.max(1)).rev().collect(),
        in_flight: 0,
        strikes_used: HashMap::new(),
        previous: HashMap::new(),
        fatal: None,
    };
    for t in sh.store.tickets(&sh.run)? {
        if let Some(f) = t.failure {
            lp.previous.insert(t.id, f);
        }
    }
    Coordinator { sh, sched, em, lp }.drive(scope)
}

impl<'c, 'a: 'c> Coordinator<'c, 'a> {
    /// Starts attempts while lanes are free and settles each as it ends.
    fn drive(mut self, scope: &'c std::thread::Scope<'c, '_>) -> Result<(), EngineError> {
        let (tx, rx) = channel::<Msg>();
        loop {
            if !self.sh.cancel.is_cancelled() && self.lp.fatal.is_none() {
                for id in self.sched.next(self.lp.free.len()) {
                    let lane = self.lp.free.pop().expect("next() respects the free lanes");
                    self.start(scope, &id, lane, tx.clone())?;
                }
            }
            if self.lp.in_flight == 0 {
                break;
            }
            match rx
                .recv()
                .expect("a sender lives while attempts are in flight")
            {
                Msg::Phase {
                    ticket,
                    attempt,
                    phase,
                } => self.em.emit(Event::Phase {
                    ticket,
                    attempt,
                    phase,
                })?,
                Msg::Done {
                    lane,
                    ticket,
                    attempt,
                    base,
                    result,
                } => {
                    self.lp.in_flight -= 1;
                    self.lp.free.push(lane);
                    self.finish(&ticket, attempt, &base, result)?;
                }
            }
        }
        match self.lp.fatal {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Records and spawns attempt n+1 of `id` on `lane`.
    fn start(
        &mut self,
        scope: &'c std::thread::Scope<'c, '_>,
        id: &str,
        lane: usize,
        tx: Sender<Msg>,
    ) -> Result<(), EngineError> {
        let sh = self.sh;
        let ticket = sh
            .plan
            .ticket(id)
            .expect("scheduled tickets are in the plan");
        let base = sh.repo.base_tip(&sh.plan.base)?;
        let attempt = sh
            .store
            .tickets(&sh.run)?
            .iter()
            .find(|t| t.id == id)
            .map_or(0, |t| t.attempts)
            + 1;
        sh.store
            .start_attempt(&sh.run, id, attempt, &base, &clock::now())?;
        self.sched.started(id);
        self.lp.in_flight += 1;
        self.em.emit(Event::AttemptStarted {
            ticket: id.to_string(),
            attempt,
            base_commit: base.clone(),
        })?;
        let gates = ticket_gates(sh.plan, ticket, &sh.settings.extra_gates);
        let charter = Charter {
            ticket,
            gates: &gates,
            attempt,
            previous: self.lp.previous.get(id),
        }
        .render();
        let input = AttemptInput {
            ticket: id.to_string(),
            attempt,
            base_commit: base.clone(),
            charter,
            message: commit_message(ticket, &sh.run),
            files: sh.run_dir.join(id),
            agent_timeout: sh.settings.agent_timeout,
            model: ticket.model.clone(),
        };
        scope.spawn(move || {
            // A panic must still report back, or the coordinator waits for ever.
            let work = std::panic::AssertUnwindSafe(|| {
                attempt_once(sh, ticket, lane, &input, &gates, &tx)
            });
            let result = std::panic::catch_unwind(work).unwrap_or_else(|_| {
                Err(EngineError::Internal(format!(
                    "the attempt of {} panicked",
                    input.ticket
                )))
            });
            let _ = tx.send(Msg::Done {
                lane,
                ticket: input.ticket.clone(),
                attempt,
                base,
                result,
            });
        });
        Ok(())
    }

    /// Settles an attempt that ended: requeues, rejects or lands it.
    fn finish(
        &mut self,
        id: &str,
        attempt: u32,
        base: &str,
        result: Result<AttemptResult, EngineError>,
    ) -> Result<(), EngineError> {
        let sh = self.sh;
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                // An engine failure (git, disk) is not the ticket's fault: stop the run.
                sh.cancel.cancel();
                sh.store
                    .set_ticket(&sh.run, id, TicketState::Pending, None)?;
                self.sched.requeue(id);
                self.lp.fatal.get_or_insert(e);
                return Ok(());
            }
        };
        match result {
            AttemptResult::Cancelled => {
                sh.store
                    .finish_attempt(&sh.run, id, attempt, None, &clock::now())?;
                sh.store.set_phase(&sh.run, id, attempt, "interrupted")?;
                sh.store
                    .set_ticket(&sh.run, id, TicketState::Pending, None)?;
                self.sched.requeue(id);
            }
            AttemptResult::Rejected(f) => {
                sh.store
                    .finish_attempt(&sh.run, id, attempt, Some(&f), &clock::now())?;
                self.reject(id, attempt, f)?;
            }
            AttemptResult::Passed { candidate } => {
                sh.store
                    .finish_attempt(&sh.run, id, attempt, None, &clock::now())?;
                sh.store
                    .set_ticket(&sh.run, id, TicketState::Merging, None)?;
                self.em.emit(Event::Merging {
                    ticket: id.to_string(),
                })?;
                self.land(id, attempt, base, &candidate)?;
            }
        }
        Ok(())
    }

    /// Merges a candidate that passed, or rejects it when it no longer fits.
    fn land(
        &mut self,
        id: &str,
        attempt: u32,
        base: &str,
        candidate: &str,
    ) -> Result<(), EngineError> {
        let sh = self.sh;
        let ticket = sh.plan.ticket(id).expect("tickets are in the plan");
        let gates = ticket_gates(sh.plan, ticket, &sh.settings.extra_gates);
        let merge = Merge {
            repo: sh.repo,
            base: &sh.plan.base,
            checkouts: &sh.checkouts,
            gates: &gates,
            gate_settings: &sh.settings.gates,
        };
        let log = sh.run_dir.join(id).join("ticket.log");
        let store = sh.store.clone();
        let mut record = |commit: &str| -> Result<(), EngineError> {
            Ok(store.begin_merge(&sh.run, id, commit)?)
        };
        let message = commit_message(ticket, &sh.run);
        match merge.land(candidate, base, &message, &log, &mut record, sh.cancel)? {
            MergeOutcome::Merged { commit } => {
                sh.store.mark_merged(&sh.run, id, &commit)?;
                self.sched.merged(id);
                self.em.emit(Event::Merged {
                    ticket: id.to_string(),
                    commit,
                })?;
            }
            MergeOutcome::Rejected(f) => {
                sh.store
                    .finish_attempt(&sh.run, id, attempt, Some(&f), &clock::now())?;
                self.reject(id, attempt, f)?;
            }
            MergeOutcome::Cancelled => {
                sh.store
                    .set_ticket(&sh.run, id, TicketState::Pending, None)?;
                self.sched.requeue(id);
            }
        }
        Ok(())
    }

    /// Counts a strike: requeues with the failure as evidence, or fails the
    /// ticket and blocks its dependents.
    fn reject(&mut self, id: &str, attempt: u32, f: Failure) -> Result<(), EngineError> {
        let sh = self.sh;
        let used = self.lp.strikes_used.entry(id.to_string()).or_default();
        *used += 1;
        let retrying = *used < sh.settings.strikes && !sh.cancel.is_cancelled();
        self.em.emit(Event::AttemptRejected {
            ticket: id.to_string(),
            attempt,
            failure: f.clone(),
            retrying,
        })?;
        if retrying || sh.cancel.is_cancelled() {
            sh.store
                .set_ticket(&sh.run, id, TicketState::Pending, Some(&f))?;
            self.sched.requeue(id);
            self.lp.previous.insert(id.to_string(), f);
            return Ok(());
        }
        sh.store
            .set_ticket(&sh.run, id, TicketState::Failed, Some(&f))?;
        self.em.emit(Event::Failed {
            ticket: id.to_string(),
            failure: f,
        })?;
        for b in self.sched.failed(id) {
            sh.store
                .set_ticket(&sh.run, &b, TicketState::Blocked, None)?;
            self.em.emit(Event::Blocked {
                ticket: b,
                by: id.to_string(),
            })?;
        }
        Ok(())
    }
}

/// One attempt on a worker thread: the executor's candidate, then
/// repository integrity, scope, rails, gate-script integrity and gates (in
/// a planwright-owned checkout of the candidate), all decided here.
fn attempt_once(
    sh: &Shared,
    ticket: &Ticket,
    lane: usize,
    input: &AttemptInput,
    gates: &[Gate],
    tx: &Sender<Msg>,
) -> Result<AttemptResult, EngineError> {
    let progress = |phase: &str| -> Result<(), EngineError> {
        sh.store
            .set_phase(&sh.run, &input.ticket, input.attempt, phase)?;
        let _ = tx.send(Msg::Phase {
            ticket: input.ticket.clone(),
            attempt: input.attempt,
            phase: phase.to_string(),
        });
        Ok(())
    };
    // Integrity around the attempt: an error here stops the run (exit 3)
    // and nothing of this attempt is merged.
    sh.repo.guard().check()?;
    let candidate = sh.executor.attempt(lane, input, &progress, sh.cancel);
    sh.repo.guard().check()?;
    let commit = match agent_verdict(candidate?, sh.settings.agent_timeout) {
        Ok(commit) => commit,
        Err(result) => return Ok(result),
    };
    sh.store
        .set_candidate(&sh.run, &input.ticket, input.attempt, &commit)?;
    progress("verify")?;
    let changes = verify::changes(sh.repo, &input.base_commit, &commit)?;
    let base_files: HashSet<String> =
        crate::git::tracked_files(sh.repo.root(), &input.base_commit)?
            .into_iter()
            .collect();
    if let Err(f) = verify::check_scope(ticket, &changes, &base_files, sh.repo) {
        return Ok(AttemptResult::Rejected(f));
    }
    if let Err(f) = verify::check_symlinks(sh.repo, &input.base_commit, &commit, &changes)? {
        return Ok(AttemptResult::Rejected(f));
    }
    let changed: Vec<String> = changes.iter().map(|c| c.path.clone()).collect();
    if let Err(f) =
        crate::integrity::check_gate_scripts(sh.repo, gates, &input.base_commit, &commit, &changed)?
    {
        return Ok(AttemptResult::Rejected(f));
    }
    progress("gates")?;
    let log = sh.run_dir.join(&input.ticket).join("ticket.log");
    crate::gates::append(
        &log,
        &format!("== attempt {} candidate {}\n", input.attempt, commit),
    )?;
    let name = LocalExecutor::slot(lane);
    let verdict = sh
        .checkouts
        .gate(&name, &commit, gates, &sh.settings.gates, &log, sh.cancel)?;
    sh.repo.guard().check()?;
    Ok(match verdict {
        Verdict::Pass => AttemptResult::Passed { candidate: commit },
        Verdict::Fail(f) => AttemptResult::Rejected(f),
        Verdict::Cancelled => AttemptResult::Cancelled,
    })
}

/// The candidate commit, or how the agent's outcome ends the attempt.
fn agent_verdict(candidate: Candidate, timeout: Option<Duration>) -> Result<String, AttemptResult> {
    let agent_failed = |why: &str| {
        let (first, rest) = why_split(why);
        AttemptResult::Rejected(
            Failure::new(FailureKind::AgentFailed, format!("the agent {first}"))
                .with_evidence(rest),
        )
    };
    match candidate.report.outcome {
        AgentOutcome::Cancelled => Err(AttemptResult::Cancelled),
        AgentOutcome::TimedOut => Err(AttemptResult::Rejected(Failure::new(
            FailureKind::Timeout,
            format!(
                "the agent ran out of time after {}s",
                timeout.map_or(0, |t| t.as_secs())
            ),
        ))),
        AgentOutcome::Blocked(reason) => Err(AttemptResult::Rejected(Failure::new(
            FailureKind::AgentBlocked,
            format!("the agent gave up: {reason}"),
        ))),
        AgentOutcome::Failed(why) => Err(agent_failed(&why)),
        // TODO(resume seam): a pause of the pool, not a strike.
        AgentOutcome::Unavailable { reason, .. } => Err(agent_failed(&format!(
            "could not be served (rate limit or quota): {reason}"
        ))),
        AgentOutcome::Finished => candidate
            .commit
            .ok_or_else(|| agent_failed("produced no commit")),
    }
}

fn why_split(why: &str) -> (String, String) {
    let mut lines = why.splitn(2, '\n');
    let first = lines.next().unwrap_or_default().to_string();
    let rest = lines.next().unwrap_or_default();
    let tail: Vec<&str> = rest.lines().collect();
    (first, tail[tail.len().saturating_sub(40)..].join("\n"))
}
