//! The run loop. A run belongs to a repository and its base branch: which
//! tickets are merged is read back from git (see [`crate::identity`]).
//!
//! [`prepare`] runs every preflight check and is the only way to get a
//! [`Prepared`] session, which is all [`run`] accepts. The coordinator thread
//! schedules ready tickets and starts attempts through an [`Executor`] on
//! worker threads; verified candidates go to one merger thread (merging and
//! re-gating never hold up the coordinator); events go through a channel to
//! the reporter thread. Every transition is written to the state store before
//! its side effect; docs/running.md lists each with its recovery rule.

use crate::agent::{limits, Agent, AgentOutcome};
use crate::budget::{self, BudgetTracker};
use crate::charter::Charter;
use crate::checkout::Checkouts;
use crate::clock;
use crate::error::EngineError;
use crate::events::{Emitter, Event, JsonLines, Reporter};
use crate::executor::{AttemptInput, Candidate, Executor, LocalExecutor};
use crate::failure::{Failure, FailureKind};
use crate::gates::Verdict;
use crate::identity::{standing, ticket_digest, Ledger, Standing};
use crate::merge::{self, commit_message, Merge, MergeOutcome, Sync, Target};
use crate::pools::{self, Choice, PoolPauses};
use crate::preflight::Check;
use crate::process::Cancel;
use crate::repo::Repo;
use crate::sandbox::Containment;
use crate::scheduler::Scheduler;
use crate::state::{RunRow, RunStatus, Store, TicketRow, TicketState};
use crate::verify;
use crate::workspace::Workspaces;
use planwright_config::Routing;
use planwright_plan::model::{Gate, Ticket};
use planwright_plan::Plan;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The defaults and the settings of a run live in planwright-config,
/// which resolves them from flags and `planwright.toml`.
pub use planwright_config::{defaults, RunSettings};

/// How this invocation treats what earlier ones did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resume {
    /// Start a new run: only its own merges count as merged.
    pub new_run: bool,
    /// Merged tickets to run again (`--rerun ID`).
    pub rerun: Vec<String>,
    /// Run again every ticket merged from an older definition.
    pub rerun_changed: bool,
}

/// Merges that wait on the run's branch instead of the base branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Held {
    /// The branch (`planwright/run/<id>`).
    pub branch: String,
    /// Why, and the command that lands them.
    pub reason: String,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    /// The run id.
    pub run: String,
    /// Tickets merged from the plan's current definition.
    pub merged: Vec<String>,
    /// Tickets merged from an older definition and not run again.
    pub changed: Vec<String>,
    /// Tickets out of strikes, with their last failure.
    pub failed: BTreeMap<String, Failure>,
    /// Tickets not started because an ancestor failed.
    pub blocked: Vec<String>,
    /// Merges waiting on the run's branch, if any.
    pub held: Option<Held>,
    /// Whether a signal stopped it early.
    #[serde(skip)]
    pub interrupted: bool,
    /// Why the run's budget stopped it before every ticket ran, if it did
    /// (raising `[budget]` and running again continues it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
}

impl RunSummary {
    /// Whether every ticket is merged (possibly on the run's branch).
    pub fn all_merged(&self) -> bool {
        self.failed.is_empty()
            && self.blocked.is_empty()
            && !self.interrupted
            && self.budget.is_none()
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

/// The model pool a ticket counts against, from the routing table.
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
        .unwrap_or(planwright_config::DEFAULT_TIER);
    let hint = ticket.pool_hint.as_deref().unwrap_or("auto");
    routing
        .candidates(tier, hint)
        .first()
        .map(|m| m.pool.clone())
}

fn scheduler(plan: &Plan, routing: &Routing, jobs: usize) -> Scheduler {
    // Tickets share a few routes (model, tier, pool hint): each is looked
    // up in the routing table once, not once per ticket.
    let mut routes = HashMap::new();
    let pools: HashMap<String, String> = plan
        .tickets
        .iter()
        .filter_map(|t| {
            let route = (
                t.model.as_deref(),
                t.tier.as_deref(),
                t.pool_hint.as_deref(),
            );
            let pool = routes
                .entry(route)
                .or_insert_with(|| ticket_pool(t, routing));
            Some((t.id.clone(), pool.clone()?))
        })
        .collect();
    let mut caps = routing.caps.clone();
    caps.extend(plan.caps.clone());
    Scheduler::new(plan, pools, caps, jobs)
}

/// What an invocation would do with each ticket, read without changing
/// anything (nothing is created when the repository has no state store).
#[derive(Debug, Clone, Default)]
pub struct Outlook {
    /// The run that would be continued.
    pub run: Option<String>,
    /// Tickets merged from their current definition: skipped.
    pub merged: Vec<String>,
    /// Tickets merged from an older definition and not asked to run again: skipped.
    pub changed: Vec<String>,
    /// Merged tickets that run again (`--rerun`, `--rerun-changed`).
    pub rerun: Vec<String>,
}

impl Outlook {
    /// The tickets that will not run.
    pub fn skipped(&self) -> HashSet<String> {
        self.merged.iter().chain(&self.changed).cloned().collect()
    }
}

/// Reads what `resume` would do with each ticket of `plan` on `repo`.
pub fn outlook(repo: &Repo, plan: &Plan, resume: &Resume) -> Result<Outlook, EngineError> {
    let db = repo.state_dir().join("state.db");
    let store = if db.is_file() {
        Some(Store::open(&db)?)
    } else {
        None
    };
    let run = match (&store, resume.new_run) {
        (Some(s), false) => s.run_for_base(&plan.base)?,
        _ => None,
    };
    let reruns = match (&store, &run) {
        (Some(s), Some(r)) => s.reruns(&r.id)?,
        _ => HashMap::new(),
    };
    let held = match (&run, resume.new_run) {
        (Some(r), _) => Some(r.id.clone()),
        (None, false) => held_run(repo, &plan.base)?,
        (None, true) => None,
    };
    let mut refs = vec![format!("refs/heads/{}", plan.base)];
    if let Some(id) = &held {
        refs = Target::new(&plan.base, id).refs();
    }
    let ledger = Ledger::read(repo, &refs)?;
    let own = run.as_ref().filter(|r| r.fresh).map(|r| r.id.as_str());
    let mut out = Outlook {
        run: run.as_ref().map(|r| r.id.clone()),
        ..Outlook::default()
    };
    if resume.new_run {
        return Ok(out);
    }
    for t in &plan.tickets {
        let rerun_of = reruns.get(&t.id).map(String::as_str);
        let st = standing(&ledger, &t.id, || ticket_digest(t), own, rerun_of);
        let asked = resume.rerun.contains(&t.id);
        match st {
            Standing::Open => {}
            Standing::Merged(_) if asked => out.rerun.push(t.id.clone()),
            Standing::Changed(_) if asked || resume.rerun_changed => out.rerun.push(t.id.clone()),
            Standing::Merged(_) => out.merged.push(t.id.clone()),
            Standing::Changed(_) => out.changed.push(t.id.clone()),
        }
    }
    Ok(out)
}

/// A session whose preflight passed: the only thing [`run`] accepts, and
/// only [`prepare`] makes one, so no front end can skip a check.
pub struct Prepared {
    repo: Repo,
    plan: Plan,
    settings: RunSettings,
    resume: Resume,
    containment: Containment,
    checks: Vec<Check>,
    outlook: Outlook,
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
    plan: Plan,
    settings: RunSettings,
    resume: Resume,
    allow: &[Vec<String>],
    agent: &dyn Agent,
) -> Result<Prepared, PreflightFailed> {
    let found = crate::preflight::examine(
        dir,
        &plan,
        &settings.extra_gates,
        allow,
        agent,
        &settings.contain,
        &resume,
    );
    let mut checks = found.checks;
    if let Some(outlook) = &found.outlook {
        let known = settings.overlaps.as_deref();
        crate::preflight::check_overlap(&plan, known, outlook, &mut checks);
    }
    if let Some(repo) = &found.repo {
        crate::preflight::check_copy(repo, &settings.pool.copy, &mut checks);
    }
    for id in resume.rerun.iter().filter(|id| plan.ticket(id).is_none()) {
        checks.push(Check::error(
            "rerun",
            format!("`--rerun {id}` names no ticket of the plan"),
            "pass the id of a ticket of the plan",
        ));
    }
    let (Some(repo), false) = (found.repo, crate::preflight::failed(&checks)) else {
        return Err(PreflightFailed { checks });
    };
    let containment = match crate::sandbox::containment(settings.contain.mode) {
        Ok(c) => c,
        Err(e) => {
            checks.push(Check::error(
                "sandbox",
                e.to_string(),
                "run on a kernel with Landlock, or set `[sandbox] mode = \"off\"` to run agents unconfined",
            ));
            return Err(PreflightFailed { checks });
        }
    };
    let outlook = found.outlook.unwrap_or_default();
    Ok(Prepared {
        repo,
        plan,
        settings,
        resume,
        containment,
        checks,
        outlook,
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
    /// confined as `[sandbox]` says.
    pub fn local_executor(&self, agent: Arc<dyn Agent>) -> Arc<dyn Executor> {
        let c = &self.settings.contain;
        let workspaces = Workspaces::new(
            self.repo.clone(),
            self.settings.pool.clone(),
            self.containment,
            c.writable.clone(),
        );
        Arc::new(LocalExecutor::new(
            self.repo.clone(),
            workspaces,
            agent,
            c.agent_log_limit,
        ))
    }

    /// The order tickets that will run would start in, as batches that
    /// start together (at most `jobs`), assuming every ticket passes and
    /// takes its estimate (`run --dry-run`).
    pub fn start_order(&self) -> Vec<Vec<String>> {
        let jobs = self.settings.jobs.max(1);
        let mut s = scheduler(&self.plan, &self.settings.routing, jobs);
        for id in self.outlook.skipped() {
            s.merged(&id);
        }
        s.rehearse(jobs).0
    }
}

/// Cancels when dropped during a panic, so a panicking coordinator stops
/// every attempt before the thread scope waits for them.
struct CancelOnPanic<'a>(&'a Cancel);

impl Drop for CancelOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.cancel();
        }
    }
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
        plan,
        settings,
        resume,
        containment,
        ..
    } = session;
    repo.ensure_excluded()?;
    let state_dir = repo.state_dir();
    std::fs::create_dir_all(&state_dir).map_err(|e| EngineError::io(&state_dir, e))?;
    let _lock = crate::lock::RunLock::acquire(&repo)?;
    // A repository whose git config would run programs in planwright's own
    // git calls is refused before anything runs (exit 3).
    crate::integrity::refuse_risky_config(&repo, &settings.contain.allow_config)?;
    repo.ensure_own_git(&settings.contain.allow_config)?;
    // Confined agents cannot write the user's checkout: a change there is
    // the user's own edit, which holds the merges rather than stopping the run.
    repo.guard()
        .watch_checkout(containment.sandbox == crate::sandbox::Sandbox::Off);
    let store = Store::open(&state_dir.join("state.db"))?;
    // Each ticket's digest, in plan order: asked once, as it serializes the ticket.
    let digests: Vec<String> = plan.tickets.iter().map(ticket_digest).collect();
    let Opened {
        run: row,
        continued,
        removed,
    } = open_run(&store, &repo, &plan, &digests, &settings, &resume)?;
    let inputs =
        crate::run_inputs::read(&repo, &settings.plan_path, settings.config_path.as_deref())?;
    let recorded = store.run_inputs(&row.id)?;
    store.set_run_inputs(&row.id, &crate::run_inputs::record(&inputs))?;
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
        index: plan
            .tickets
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.clone(), i))
            .collect(),
        digests,
        repo: &repo,
        plan: &plan,
        settings: &settings,
        store: store.clone(),
        run: row.id.clone(),
        checkouts: Checkouts::new(
            repo.clone(),
            settings.pool.clone(),
            containment,
            &settings.contain,
        ),
        executor,
        cancel,
        run_dir,
        emitter: emitter.clone(),
        run_rails: crate::run_inputs::rails(&inputs, settings.allow_config_change),
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
    let mut sandbox = containment.describe();
    if shared.checkouts.overlay() {
        sandbox.push_str(", gate overlay");
    }
    emitter.emit(Event::Contained { sandbox });
    let result = work(&shared);
    emitter.close();
    let _ = reporting.join();
    result
}

/// The run after it was opened: land what an earlier invocation held back,
/// coordinate, land what this one merged, record how it ended.
fn work(sh: &Shared) -> Result<RunSummary, EngineError> {
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
    let budget = outcome.as_ref().ok().cloned().flatten();
    let summary = summarize(&sh.store, &sh.run, held, interrupted, budget)?;
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
fn sync(sh: &Shared) -> Result<Option<Held>, EngineError> {
    Ok(match merge::sync(sh.repo, &sh.target)? {
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
fn input_changes(
    sh: &Shared,
    recorded: &str,
    inputs: &[crate::run_inputs::RunInput],
) -> Result<Vec<Event>, EngineError> {
    let merged: Vec<(String, String)> = (sh.store.tickets(&sh.run)?.into_iter())
        .filter_map(|t| Some((t.id, t.merge_commit?)))
        .collect();
    let mut events = Vec::new();
    for (input, before) in crate::run_inputs::changed(recorded, inputs) {
        let merged_by = match &input.in_repo {
            Some(path) => crate::run_inputs::merged_by(sh.repo, path, &merged)?,
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

/// A run found or recorded by [`open_run`].
struct Opened {
    run: RunRow,
    /// Whether an earlier invocation started it.
    continued: bool,
    /// Its tickets the plan no longer has, forgotten.
    removed: Vec<String>,
}

/// Finds the run to continue (the newest on this base branch, unless
/// `--new-run`) or records a new one, then settles every ticket against
/// what git says landed.
fn open_run(
    store: &Store,
    repo: &Repo,
    plan: &Plan,
    digests: &[String],
    settings: &RunSettings,
    resume: &Resume,
) -> Result<Opened, EngineError> {
    let existing = match resume.new_run {
        true => None,
        false => store.run_for_base(&plan.base)?,
    };
    let (run, continued) = match existing {
        Some(run) => (run, true),
        None => (new_run(store, repo, plan, settings, resume.new_run)?, false),
    };
    store.resume_run(&run.id, &settings.plan_path)?;
    let synced = store.sync_tickets(
        &run.id,
        plan.tickets
            .iter()
            .zip(digests)
            .map(|(t, d)| (t.id.as_str(), t.title.as_str(), d.as_str())),
    )?;
    let target = Target::new(&plan.base, &run.id);
    let ledger = Ledger::read(repo, &target.refs())?;
    let own = run.fresh.then_some(run.id.as_str());
    for row in synced.rows {
        let digest = || row.digest.clone().unwrap_or_default();
        let st = standing(&ledger, &row.id, digest, own, row.rerun_of.as_deref());
        let asked = resume.rerun.contains(&row.id)
            || (resume.rerun_changed && matches!(st, Standing::Changed(_)));
        match st {
            Standing::Merged(c) | Standing::Changed(c) if asked => {
                store.request_rerun(&run.id, &row.id, &c)?;
                let row = store.ticket(&run.id, &row.id)?.expect("the ticket exists");
                settle(store, repo, &run.id, &row, Standing::Open)?;
            }
            st => settle(store, repo, &run.id, &row, st)?,
        }
    }
    sweep_candidates(store, repo, &run.id)?;
    Ok(Opened {
        run,
        continued,
        removed: synced.removed,
    })
}

/// Deletes the candidate refs of tickets that are no longer open (left by
/// a stop between `merged` being written and the ref being deleted).
fn sweep_candidates(store: &Store, repo: &Repo, run: &str) -> Result<(), EngineError> {
    let prefix = merge::candidate_ref("");
    let refs = repo
        .git()
        .args(["for-each-ref", "--format=%(refname)", &prefix])
        .text()?;
    if refs.is_empty() {
        return Ok(());
    }
    let open: HashSet<String> = store
        .tickets(run)?
        .into_iter()
        .filter(|t| !matches!(t.state, TicketState::Merged | TicketState::Changed))
        .map(|t| t.id)
        .collect();
    for name in refs.lines() {
        let id = name.strip_prefix(&prefix).unwrap_or(name);
        if !open.contains(id) {
            merge::delete_ref(repo, name)?;
        }
    }
    Ok(())
}

fn new_run(
    store: &Store,
    repo: &Repo,
    plan: &Plan,
    settings: &RunSettings,
    fresh: bool,
) -> Result<RunRow, EngineError> {
    // A run whose store was lost may still hold merges on its branch: it
    // is adopted, so its merges count and new work builds on them.
    let adopted = match fresh {
        true => None,
        false => held_run(repo, &plan.base)?,
    };
    let id = match adopted {
        Some(id) => id,
        None => unused_run_id(store)?,
    };
    let row = RunRow {
        id,
        plan_path: settings.plan_path.clone(),
        base: plan.base.clone(),
        started_at: clock::now(),
        finished_at: None,
        status: RunStatus::Running,
        fresh,
    };
    store.create_run(&row)?;
    Ok(row)
}

/// A run id from the clock that no run has yet.
fn unused_run_id(store: &Store) -> Result<String, EngineError> {
    let mut n = 0;
    loop {
        let id = clock::run_id(n);
        if store.run(&id)?.is_none() {
            return Ok(id);
        }
        n += 1;
    }
}

/// The run whose branch `planwright/run/<id>` holds merges not yet on
/// `base` (the newest, if several).
fn held_run(repo: &Repo, base: &str) -> Result<Option<String>, EngineError> {
    let text = repo
        .git()
        .args([
            "for-each-ref",
            "--sort=-committerdate",
            "--format=%(refname:strip=4)",
            "refs/heads/planwright/run/",
        ])
        .text()?;
    let tip = repo.base_tip(base)?;
    for id in text.lines().filter(|l| !l.is_empty()) {
        let held = format!("refs/heads/{}", merge::held_branch(id));
        let descends = repo
            .git()
            .args(["merge-base", "--is-ancestor", &tip, &held])
            .succeeds()?;
        if descends {
            return Ok(Some(id.to_string()));
        }
    }
    Ok(None)
}

/// The recovery rules: a ticket's stored state is brought in line with
/// what git says (`st`), so an invocation stopped anywhere continues right.
fn settle(
    store: &Store,
    repo: &Repo,
    run: &str,
    row: &TicketRow,
    st: Standing,
) -> Result<(), EngineError> {
    use TicketState as S;
    match st {
        Standing::Merged(c) => {
            if row.state != S::Merged || row.merge_commit.as_deref() != Some(&c) {
                store.mark_merged(run, &row.id, &c)?;
                merge::delete_ref(repo, &merge::candidate_ref(&row.id))?;
            }
        }
        Standing::Changed(c) => {
            if row.state != S::Changed {
                store.settle_landed(run, &row.id, S::Changed, &c)?;
            }
        }
        Standing::Open => match row.state {
            S::Pending => {}
            S::Verified | S::Merging if candidate_usable(repo, row)? => {
                if row.state != S::Verified {
                    store.set_state(run, &row.id, S::Verified)?;
                }
            }
            S::Running => store.end_attempt_without_verdict(
                run,
                &row.id,
                row.attempt_count,
                "interrupted",
                &clock::now(),
            )?,
            _ => store.set_state(run, &row.id, S::Pending)?,
        },
    }
    Ok(())
}

/// Whether a verified candidate can still be merged: it exists and was
/// built from the ticket's current definition.
fn candidate_usable(repo: &Repo, row: &TicketRow) -> Result<bool, EngineError> {
    let (Some(candidate), Some(_), Some(digest)) = (&row.candidate, &row.verified_on, &row.digest)
    else {
        return Ok(false);
    };
    let format = format!(
        "--format=%(trailers:key={},valueonly)",
        crate::identity::DIGEST_TRAILER
    );
    let out = repo
        .git()
        .args(["log", "-1", &format, candidate, "--"])
        .raw()?;
    Ok(out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == digest)
}

fn summarize(
    store: &Store,
    run: &str,
    held: Option<Held>,
    interrupted: bool,
    budget: Option<String>,
) -> Result<RunSummary, EngineError> {
    let mut s = RunSummary {
        run: run.to_string(),
        merged: vec![],
        changed: vec![],
        failed: BTreeMap::new(),
        blocked: vec![],
        held,
        interrupted,
        budget,
    };
    for t in store.tickets(run)? {
        match t.state {
            TicketState::Merged => s.merged.push(t.id),
            TicketState::Changed => s.changed.push(t.id),
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

/// Shared, read-only context of the coordinator, worker and merger threads.
struct Shared<'a> {
    repo: &'a Repo,
    plan: &'a Plan,
    settings: &'a RunSettings,
    store: Store,
    run: String,
    target: Target,
    /// Each ticket's place in the plan, by id.
    index: HashMap<String, usize>,
    /// Each ticket's digest, in plan order.
    digests: Vec<String>,
    checkouts: Checkouts,
    executor: Arc<dyn Executor>,
    cancel: &'a Cancel,
    run_dir: PathBuf,
    emitter: Emitter,
    /// What no ticket may change (see [`verify::RunRails`]).
    run_rails: verify::RunRails,
}

impl Shared<'_> {
    fn ticket(&self, id: &str) -> &Ticket {
        &self.plan.tickets[self.index[id]]
    }

    fn message(&self, id: &str) -> String {
        commit_message(self.ticket(id), &self.digests[self.index[id]], &self.run)
    }
}

enum Msg {
    Phase {
        ticket: String,
        attempt: u32,
        phase: String,
    },
    Done {
        slot: usize,
        ticket: String,
        attempt: u32,
        base: String,
        result: Result<AttemptResult, EngineError>,
    },
    Landed {
        ticket: String,
        attempt: u32,
        result: Result<MergeOutcome, EngineError>,
    },
    /// The run was cancelled: wakes a coordinator waiting out a pause.
    Cancelled,
}

enum AttemptResult {
    Passed {
        candidate: String,
    },
    Rejected(Failure),
    Cancelled,
    Unavailable {
        retry_after: Option<Duration>,
        reason: String,
    },
}

/// What routing and the budget decided for an attempt about to start.
struct Route {
    model: Option<String>,
    pool: Option<String>,
    budget_usd: Option<f64>,
}

/// A verified candidate for the merger thread.
struct MergeJob {
    ticket: String,
    attempt: u32,
    candidate: String,
    verified_on: String,
}

#[derive(Default)]
struct Loop {
    free: Vec<usize>,
    in_flight: usize,
    merging: usize,
    strikes_used: HashMap<String, u32>,
    /// What the model said each time it could not serve a ticket, since
    /// the ticket's last attempt that got an answer.
    unavailable: HashMap<String, Vec<String>>,
    /// Tickets parked until a time: a pause without a pool, or every
    /// candidate pool paused.
    paused: Vec<(Instant, String)>,
    /// The rate-limited model pools.
    pauses: PoolPauses,
    /// The pool each ticket's attempt in flight counts against.
    attempt_pool: HashMap<String, Option<String>>,
    /// Why the run's budget stops new attempts, once it does.
    budget_stop: Option<String>,
    fatal: Option<EngineError>,
    /// The target's tip as this run last saw it (an attempt's base, or
    /// the commit a merge landed).
    tip: Option<String>,
    /// A merge is in flight that needs no gates (its candidate was
    /// verified on the tip). New attempts wait the few git calls it
    /// takes: started from the merged tip, their own merge needs no second
    /// gate run, which would cost a whole gate run to save those calls.
    quick_merge: bool,
}

/// The coordinator thread: it alone schedules and decides; attempts run on
/// worker threads and merges on the merger thread, and both report back
/// through a channel.
struct Coordinator<'c, 'a> {
    sh: &'c Shared<'a>,
    sched: Scheduler,
    lp: Loop,
    merges: Sender<MergeJob>,
}

/// Coordinates the run; `Some(why)` when the run's budget stopped it.
fn coordinate<'s, 'a: 's>(
    scope: &'s std::thread::Scope<'s, '_>,
    sh: &'s Shared<'a>,
) -> Result<Option<String>, EngineError> {
    let (tx, rx) = channel::<Msg>();
    let wake = tx.clone();
    sh.cancel.on_cancel(move || {
        let _ = wake.send(Msg::Cancelled);
    });
    let (merges, jobs) = channel::<MergeJob>();
    let merger_tx = tx.clone();
    scope.spawn(move || merger(sh, jobs, merger_tx));
    let mut c = Coordinator {
        sh,
        sched: scheduler(sh.plan, &sh.settings.routing, sh.settings.jobs.max(1)),
        lp: Loop {
            free: (0..sh.settings.jobs.max(1)).rev().collect(),
            pauses: PoolPauses::new(sh.settings.max_pause),
            ..Loop::default()
        },
        merges,
    };
    c.resume()?;
    c.drive(scope, tx, rx)
}

/// The merger thread: lands verified candidates one at a time.
fn merger(sh: &Shared, jobs: Receiver<MergeJob>, tx: Sender<Msg>) {
    for job in jobs {
        let work = std::panic::AssertUnwindSafe(|| land(sh, &job));
        let result = std::panic::catch_unwind(work).unwrap_or_else(|_| {
            Err(EngineError::Internal(format!(
                "the merge of {} panicked",
                job.ticket
            )))
        });
        let _ = tx.send(Msg::Landed {
            ticket: job.ticket,
            attempt: job.attempt,
            result,
        });
    }
}

/// Merges one verified candidate; the merge commit is recorded before the
/// target moves (and the candidate's ref goes with that move), `merged`
/// after.
fn land(sh: &Shared, job: &MergeJob) -> Result<MergeOutcome, EngineError> {
    if sh.cancel.is_cancelled() {
        return Ok(MergeOutcome::Cancelled);
    }
    let id = job.ticket.as_str();
    let gates = ticket_gates(sh.plan, sh.ticket(id), &sh.settings.extra_gates);
    let log = sh.run_dir.join(id).join("ticket.log");
    let merge = Merge {
        repo: sh.repo,
        target: &sh.target,
        checkouts: &sh.checkouts,
        gates: &gates,
        gate_settings: &sh.settings.gates,
        log: &log,
    };
    let mut record = |commit: &str| -> Result<(), EngineError> {
        Ok(sh.store.begin_merge(&sh.run, id, commit)?)
    };
    let outcome = merge.land(
        &job.candidate,
        &merge::candidate_ref(id),
        &job.verified_on,
        &sh.message(id),
        &mut record,
        sh.cancel,
    )?;
    if let MergeOutcome::Merged { commit } = &outcome {
        sh.store.mark_merged(&sh.run, id, commit)?;
    }
    Ok(outcome)
}

impl<'c, 'a: 'c> Coordinator<'c, 'a> {
    /// Tells the scheduler what earlier invocations settled, and sends
    /// their verified candidates to be merged without another agent run.
    fn resume(&mut self) -> Result<(), EngineError> {
        let sh = self.sh;
        // A pool an earlier invocation paused stays paused until its time,
        // within this invocation's bound.
        let now = clock::unix_now();
        for (pool, until, strikes) in sh.store.pauses()? {
            let kept = self.lp.pauses.restore(&pool, until, strikes, now);
            if kept != until {
                sh.store.save_pause(&pool, kept, strikes)?;
            }
        }
        for t in sh.store.settled_tickets(&sh.run)? {
            match t.state {
                TicketState::Merged => {
                    self.sched.merged(&t.id);
                    sh.emitter.emit(Event::AlreadyMerged { ticket: t.id });
                }
                TicketState::Changed => {
                    self.sched.merged(&t.id);
                    let commit = t.merge_commit.unwrap_or_default();
                    sh.emitter.emit(Event::Changed {
                        ticket: t.id,
                        commit,
                    });
                }
                TicketState::Verified => {
                    let (Some(candidate), Some(verified_on)) = (t.candidate, t.verified_on) else {
                        continue;
                    };
                    self.sched.started(&t.id);
                    self.queue_merge(MergeJob {
                        ticket: t.id,
                        attempt: t.attempt_count,
                        candidate,
                        verified_on,
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn queue_merge(&mut self, job: MergeJob) {
        self.sh.emitter.emit(Event::Merging {
            ticket: job.ticket.clone(),
        });
        self.lp.quick_merge =
            self.lp.merging == 0 && self.lp.tip.as_deref() == Some(job.verified_on.as_str());
        self.lp.merging += 1;
        // The merger lives as long as this sender.
        let _ = self.merges.send(job);
    }

    /// Starts attempts while slots are free and settles each attempt and
    /// merge as it ends.
    fn drive(
        mut self,
        scope: &'c std::thread::Scope<'c, '_>,
        tx: Sender<Msg>,
        rx: Receiver<Msg>,
    ) -> Result<Option<String>, EngineError> {
        loop {
            self.unpause();
            let stopping = self.sh.cancel.is_cancelled() || self.lp.fatal.is_some();
            if !stopping && !self.lp.quick_merge {
                self.start_ready(scope, &tx)?;
            }
            // A used-up budget ends the run like a stop, without cancelling
            // the attempts in flight: what they did is paid for.
            let stopping = stopping || self.lp.budget_stop.is_some();
            let busy = self.lp.in_flight + self.lp.merging > 0;
            if !busy && (stopping || self.lp.paused.is_empty()) {
                break;
            }
            let msg = match self.lp.paused.iter().map(|p| p.0).min() {
                Some(until) if !stopping => {
                    // A cancel wakes it with `Msg::Cancelled`.
                    let left = until.saturating_duration_since(Instant::now());
                    match rx.recv_timeout(left) {
                        Ok(msg) => msg,
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                _ => rx.recv().expect("a sender lives while work is in flight"),
            };
            self.handle(msg)?;
        }
        match self.lp.fatal {
            Some(e) => Err(e),
            None => Ok(self.lp.budget_stop),
        }
    }

    fn handle(&mut self, msg: Msg) -> Result<(), EngineError> {
        match msg {
            Msg::Phase {
                ticket,
                attempt,
                phase,
            } => self.sh.emitter.emit(Event::Phase {
                ticket,
                attempt,
                phase,
            }),
            Msg::Done {
                slot,
                ticket,
                attempt,
                base,
                result,
            } => {
                self.lp.in_flight -= 1;
                self.lp.free.push(slot);
                self.finish(&ticket, attempt, &base, result)?;
            }
            Msg::Landed {
                ticket,
                attempt,
                result,
            } => {
                self.lp.merging -= 1;
                self.lp.quick_merge = false;
                self.landed(&ticket, attempt, result)?;
            }
            // The loop sees the flag as it goes round.
            Msg::Cancelled => {}
        }
        Ok(())
    }

    /// Puts tickets whose pause is over back in the queue.
    fn unpause(&mut self) {
        let now = Instant::now();
        let (over, waiting): (Vec<_>, Vec<_>) = self
            .lp
            .paused
            .drain(..)
            .partition(|(until, _)| *until <= now);
        self.lp.paused = waiting;
        for (_, id) in over {
            self.sched.requeue(&id);
        }
    }

    /// Starts ready tickets while slots are free. A ticket the budget or a
    /// paused pool holds back leaves its slot to the next one, so this asks
    /// the scheduler again until nothing more starts. A ticket whose open
    /// pools are all at their cap is set aside until this round ends, and
    /// tried again after the next attempt ends.
    fn start_ready(
        &mut self,
        scope: &'c std::thread::Scope<'c, '_>,
        tx: &Sender<Msg>,
    ) -> Result<(), EngineError> {
        let mut full = Vec::new();
        let started = self.start_round(scope, tx, &mut full);
        for id in full {
            self.sched.requeue(&id);
        }
        started
    }

    fn start_round(
        &mut self,
        scope: &'c std::thread::Scope<'c, '_>,
        tx: &Sender<Msg>,
        full: &mut Vec<String>,
    ) -> Result<(), EngineError> {
        loop {
            let ready = self.sched.next(self.lp.free.len());
            if ready.is_empty() || self.lp.budget_stop.is_some() {
                return Ok(());
            }
            for id in ready {
                let Some(budget_usd) = self.admit(&id)? else {
                    continue;
                };
                let Some(route) = self.route(&id, budget_usd, full) else {
                    continue;
                };
                let slot = self.lp.free.pop().expect("next() respects the free slots");
                self.start(scope, &id, slot, route, tx.clone())?;
            }
        }
    }

    /// Asks the budget (rebuilt from the store, so earlier invocations
    /// count) whether `id` may start an attempt: `Some(dollars left)` when
    /// it may. A used-up run budget stops new attempts; a used-up ticket
    /// budget fails the ticket.
    fn admit(&mut self, id: &str) -> Result<Option<Option<f64>>, EngineError> {
        let sh = self.sh;
        if budget::unlimited(&sh.settings.budget) {
            // Nothing to count against: summing every attempt of the run
            // would cost more with each ticket done.
            return Ok(Some(None));
        }
        let tracker = BudgetTracker::resume(&sh.settings.budget, sh.store.spent(&sh.run)?);
        match tracker.admit(id) {
            budget::Admission::Start => Ok(Some(tracker.remaining_usd(id))),
            budget::Admission::RunExhausted(reason) => {
                if self.lp.budget_stop.is_none() {
                    sh.emitter.emit(Event::BudgetReached {
                        reason: reason.clone(),
                    });
                    self.lp.budget_stop = Some(reason);
                }
                Ok(None)
            }
            budget::Admission::TicketExhausted(f) => {
                sh.store.fail_ticket(&sh.run, id, &f)?;
                self.fail(id, f)?;
                Ok(None)
            }
        }
    }

    /// The model of `id`'s next attempt through the routing table, the
    /// paused pools and the pools' caps; `None` when every candidate pool
    /// is paused, and the ticket is parked until the earliest may be
    /// probed, or when every open one is at its cap, and the ticket is put
    /// in `full` (out of the scheduler's ready set until the round ends).
    fn route(
        &mut self,
        id: &str,
        budget_usd: Option<f64>,
        full: &mut Vec<String>,
    ) -> Option<Route> {
        let sh = self.sh;
        let now = clock::unix_now();
        let sched = &self.sched;
        let room = |pool: &str| sched.has_room(pool);
        let choice = pools::choose(
            sh.ticket(id),
            &sh.settings.routing,
            &mut self.lp.pauses,
            now,
            &room,
        );
        let (model, pool) = match choice {
            Choice::CliDefault => (None, None),
            Choice::Model { model, pool, .. } => (Some(model), pool),
            Choice::Wait { until } => {
                let wait = Duration::from_secs(until.saturating_sub(now));
                // Parked, it holds no pool's cap.
                self.sched.started_on(id, None);
                self.lp.paused.push((Instant::now() + wait, id.to_string()));
                return None;
            }
            Choice::Full => {
                self.sched.started_on(id, None);
                full.push(id.to_string());
                return None;
            }
        };
        Some(Route {
            model,
            pool,
            budget_usd,
        })
    }

    /// Records and spawns the next attempt of `id` in `slot`.
    fn start(
        &mut self,
        scope: &'c std::thread::Scope<'c, '_>,
        id: &str,
        slot: usize,
        route: Route,
        tx: Sender<Msg>,
    ) -> Result<(), EngineError> {
        let sh = self.sh;
        let ticket = sh.ticket(id);
        let row = sh
            .store
            .ticket(&sh.run, id)?
            .expect("run tickets are stored");
        let base = sh.target.tip(sh.repo)?;
        self.lp.tip = Some(base.clone());
        let attempt = row.attempt_count + 1;
        sh.store
            .start_attempt(&sh.run, id, attempt, &base, &clock::now())?;
        // The attempt counts against the cap of the pool it runs on, which
        // is not the ticket's first when that one is paused.
        self.sched.started_on(id, route.pool.as_deref());
        self.lp.in_flight += 1;
        self.lp.attempt_pool.insert(id.to_string(), route.pool);
        sh.emitter.emit(Event::AttemptStarted {
            ticket: id.to_string(),
            attempt,
            base_commit: base.clone(),
        });
        let gates = ticket_gates(sh.plan, ticket, &sh.settings.extra_gates);
        let charter = Charter {
            ticket,
            gates: &gates,
            attempt,
            previous: row.failure.as_ref(),
        }
        .render();
        let input = AttemptInput {
            ticket: id.to_string(),
            attempt,
            base_commit: base.clone(),
            charter,
            message: sh.message(id),
            files: sh.run_dir.join(id),
            agent_timeout: sh.settings.agent_timeout,
            model: route.model,
            budget_usd: route.budget_usd,
            candidate_ref: merge::candidate_ref(id),
            usage_sink: Some(usage_events(&sh.emitter, id, attempt)),
        };
        scope.spawn(move || {
            // A panic must still report back, or the coordinator waits for ever.
            let work = std::panic::AssertUnwindSafe(|| {
                attempt_once(sh, ticket, slot, &input, &gates, &tx)
            });
            let result = std::panic::catch_unwind(work).unwrap_or_else(|_| {
                Err(EngineError::Internal(format!(
                    "the attempt of {} panicked",
                    input.ticket
                )))
            });
            let _ = tx.send(Msg::Done {
                slot,
                ticket: input.ticket.clone(),
                attempt,
                base,
                result,
            });
        });
        Ok(())
    }

    /// Settles an attempt that ended: requeues, pauses, rejects, or sends
    /// its candidate to be merged.
    fn finish(
        &mut self,
        id: &str,
        attempt: u32,
        base: &str,
        result: Result<AttemptResult, EngineError>,
    ) -> Result<(), EngineError> {
        let sh = self.sh;
        let now = clock::now();
        let pool = self.lp.attempt_pool.remove(id).flatten();
        if let Ok(AttemptResult::Passed { .. } | AttemptResult::Rejected(_)) = &result {
            self.lp.unavailable.remove(id);
            if let Some(pool) = &pool {
                self.answered(pool)?;
            }
        }
        match result {
            Err(e) => {
                // An engine failure (git, disk) is not the ticket's fault: stop the run.
                sh.cancel.cancel();
                sh.store
                    .end_attempt_without_verdict(&sh.run, id, attempt, "interrupted", &now)?;
                self.sched.requeue(id);
                self.lp.fatal.get_or_insert(e);
            }
            Ok(AttemptResult::Cancelled) => {
                sh.store
                    .end_attempt_without_verdict(&sh.run, id, attempt, "interrupted", &now)?;
                self.sched.requeue(id);
            }
            Ok(AttemptResult::Unavailable {
                retry_after,
                reason,
            }) => {
                sh.store
                    .end_attempt_without_verdict(&sh.run, id, attempt, "unavailable", &now)?;
                self.unavailable(id, pool, retry_after, reason)?;
            }
            Ok(AttemptResult::Rejected(f)) => self.reject(id, attempt, f)?,
            Ok(AttemptResult::Passed { candidate }) => {
                sh.store
                    .verified(&sh.run, id, attempt, &candidate, base, &now)?;
                self.queue_merge(MergeJob {
                    ticket: id.to_string(),
                    attempt,
                    candidate,
                    verified_on: base.to_string(),
                });
            }
        }
        Ok(())
    }

    /// The model could not serve the ticket: no strike is used, the pool
    /// (or, without one, the ticket) pauses, and the ticket waits for it or
    /// goes to another candidate model; after `max_unavailable` such
    /// outcomes in a row the ticket fails as `unavailable` instead.
    fn unavailable(
        &mut self,
        id: &str,
        pool: Option<String>,
        retry_after: Option<Duration>,
        reason: String,
    ) -> Result<(), EngineError> {
        let reasons = self.lp.unavailable.entry(id.to_string()).or_default();
        reasons.push(reason.clone());
        let streak = reasons.len() as u32;
        let exhausted = streak >= self.sh.settings.max_unavailable;
        match pool {
            Some(pool) => {
                self.pause_pool(id, &pool, retry_after, reason)?;
                if !exhausted {
                    self.sched.requeue(id);
                }
            }
            None if !exhausted => self.pause(id, retry_after, streak, reason),
            None => {}
        }
        if !exhausted {
            return Ok(());
        }
        let reasons = self.lp.unavailable.remove(id).unwrap_or_default();
        let f = unavailable_failure(&reasons);
        self.sh.store.fail_ticket(&self.sh.run, id, &f)?;
        self.fail(id, f)
    }

    /// The model of a pool could not serve a ticket: the whole pool pauses,
    /// and routing sends its queued tickets to another candidate model or
    /// parks them.
    fn pause_pool(
        &mut self,
        id: &str,
        pool: &str,
        retry_after: Option<Duration>,
        reason: String,
    ) -> Result<(), EngineError> {
        let now = clock::unix_now();
        self.lp.pauses.pause(pool, now, retry_after);
        let (until, strikes) = self.lp.pauses.pause_of(pool).unwrap_or((now, 1));
        // Saved, so a run continued after this one ends still waits.
        self.sh.store.save_pause(pool, until, strikes)?;
        self.sh.emitter.emit(Event::PoolPaused {
            ticket: id.to_string(),
            pool: Some(pool.to_string()),
            wait_ms: until.saturating_sub(now).saturating_mul(1000),
            until: Some(clock::format_unix(until)),
            reason,
        });
        Ok(())
    }

    /// A pool's model answered: a paused pool is open again.
    fn answered(&mut self, pool: &str) -> Result<(), EngineError> {
        if self.lp.pauses.pause_of(pool).is_some() {
            self.lp.pauses.answered(pool);
            self.sh.store.clear_pause(pool)?;
            self.sh.emitter.emit(Event::PoolResumed {
                pool: pool.to_string(),
            });
        }
        Ok(())
    }

    /// A model outside the routing table could not serve the ticket, the
    /// `streak`-th time in a row: the ticket alone waits, as long as a pool
    /// would.
    fn pause(&mut self, id: &str, retry_after: Option<Duration>, streak: u32, reason: String) {
        let wait = pools::pause_length(retry_after, streak, self.sh.settings.max_pause);
        self.lp.paused.push((Instant::now() + wait, id.to_string()));
        self.sh.emitter.emit(Event::PoolPaused {
            ticket: id.to_string(),
            pool: None,
            wait_ms: wait.as_millis() as u64,
            until: None,
            reason,
        });
    }

    /// Settles a merge the merger thread finished.
    fn landed(
        &mut self,
        id: &str,
        attempt: u32,
        result: Result<MergeOutcome, EngineError>,
    ) -> Result<(), EngineError> {
        match result {
            Err(e) => {
                // The ticket stays `verified` or `merging`; the next
                // invocation settles it from git.
                self.sh.cancel.cancel();
                self.lp.fatal.get_or_insert(e);
            }
            Ok(MergeOutcome::Merged { commit }) => {
                self.sched.merged(id);
                self.lp.tip = Some(commit.clone());
                self.sh.emitter.emit(Event::Merged {
                    ticket: id.to_string(),
                    commit,
                });
            }
            Ok(MergeOutcome::Rejected(f)) => self.reject(id, attempt, f)?,
            // The ticket stays `verified`: the next invocation merges it.
            Ok(MergeOutcome::Cancelled) => {}
        }
        Ok(())
    }

    /// Counts a strike: requeues with the failure as evidence, or fails the
    /// ticket (its last candidate kept under `refs/planwright/quarantine/`)
    /// and blocks its dependents.
    fn reject(&mut self, id: &str, attempt: u32, f: Failure) -> Result<(), EngineError> {
        let sh = self.sh;
        let used = self.lp.strikes_used.entry(id.to_string()).or_default();
        *used += 1;
        let retrying = *used < sh.settings.strikes && !sh.cancel.is_cancelled();
        let then = if retrying || sh.cancel.is_cancelled() {
            TicketState::Pending
        } else {
            TicketState::Failed
        };
        sh.store
            .reject(&sh.run, id, attempt, &f, then, &clock::now())?;
        sh.emitter.emit(Event::AttemptRejected {
            ticket: id.to_string(),
            attempt,
            failure: f.clone(),
            retrying,
        });
        if then == TicketState::Pending {
            self.sched.requeue(id);
            return Ok(());
        }
        self.fail(id, f)
    }

    /// A ticket failed for good (its state is stored): its last candidate
    /// is quarantined and its dependents are blocked.
    fn fail(&mut self, id: &str, f: Failure) -> Result<(), EngineError> {
        let sh = self.sh;
        let candidate = merge::candidate_ref(id);
        if let Some(commit) = merge::ref_tip(sh.repo, &candidate)? {
            merge::set_ref(sh.repo, &merge::quarantine_ref(id), &commit)?;
            merge::delete_ref(sh.repo, &candidate)?;
        }
        sh.emitter.emit(Event::Failed {
            ticket: id.to_string(),
            failure: f,
        });
        for b in self.sched.failed(id) {
            sh.store.set_state(&sh.run, &b, TicketState::Blocked)?;
            sh.emitter.emit(Event::Blocked {
                ticket: b,
                by: id.to_string(),
            });
        }
        Ok(())
    }
}

/// One attempt on a worker thread: the executor's candidate, recorded
/// before it is verified, then scope, rails, gate-script integrity and
/// gates, all decided here.
fn attempt_once(
    sh: &Shared,
    ticket: &Ticket,
    slot: usize,
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
    let candidate = sh.executor.attempt(slot, input, &progress, sh.cancel);
    sh.repo.guard().check()?;
    let candidate = candidate?;
    if let Some(f) = candidate.setup_failed {
        // The agent never ran: nothing of it to record.
        return Ok(AttemptResult::Rejected(f));
    }
    record_agent(sh, input, &candidate)?;
    let commit = match agent_verdict(candidate, sh.settings.agent_timeout) {
        Ok(commit) => commit,
        Err(result) => return Ok(result),
    };
    sh.store
        .set_candidate(&sh.run, &input.ticket, input.attempt, &commit)?;
    verify_and_gate(sh, ticket, slot, input, gates, &commit, &progress)
}

/// Emits `agent_usage` with each running total an attempt's agent reports.
fn usage_events(emitter: &Emitter, ticket: &str, attempt: u32) -> crate::agent::UsageSink {
    let (emitter, ticket) = (emitter.clone(), ticket.to_string());
    crate::agent::UsageSink::new(move |so_far| {
        emitter.emit(Event::AgentUsage {
            ticket: ticket.clone(),
            attempt,
            model: so_far.model.clone(),
            usage: so_far.usage,
        });
    })
}

/// Stores and reports what the agent said (usage, cost, model, final
/// message, session id).
fn record_agent(sh: &Shared, input: &AttemptInput, c: &Candidate) -> Result<(), EngineError> {
    // The model routing chose is the attempt's model when the CLI names none.
    let mut r = c.report.clone();
    r.model = r.model.or_else(|| input.model.clone());
    let r = &r;
    sh.store
        .record_agent(&sh.run, &input.ticket, input.attempt, r)?;
    sh.emitter.emit(Event::AgentReported {
        ticket: input.ticket.clone(),
        attempt: input.attempt,
        outcome: crate::state::outcome_name(&r.outcome).to_string(),
        model: r.model.clone(),
        usage: r.usage,
        cost_usd: r.cost.map(|c| c.0),
        cost_source: r.cost.map(|c| c.1),
        session_id: r.session_id.clone(),
        final_message: r.final_message.clone(),
    });
    Ok(())
}

/// Verification and gates of a recorded candidate.
fn verify_and_gate(
    sh: &Shared,
    ticket: &Ticket,
    slot: usize,
    input: &AttemptInput,
    gates: &[Gate],
    commit: &str,
    progress: &dyn Fn(&str) -> Result<(), EngineError>,
) -> Result<AttemptResult, EngineError> {
    progress("verify")?;
    let changes = verify::changes(sh.repo, &input.base_commit, commit)?;
    if let Err(f) = verify::check_scope(ticket, &sh.run_rails, &changes, sh.repo) {
        return Ok(AttemptResult::Rejected(f));
    }
    if let Err(f) = verify::check_symlinks(sh.repo, &input.base_commit, commit, &changes)? {
        return Ok(AttemptResult::Rejected(f));
    }
    // Both sides of a rename: moving a gate's file away changes it too.
    let changed: Vec<String> = (changes.iter())
        .flat_map(|c| c.from.iter().chain([&c.path]))
        .cloned()
        .collect();
    if let Err(f) = crate::integrity::check_gate_scripts(
        sh.repo,
        gates,
        &sh.settings.pool.setup,
        &ticket.scope,
        &input.base_commit,
        commit,
        &changed,
    )? {
        return Ok(AttemptResult::Rejected(f));
    }
    progress("gates")?;
    let log = sh.run_dir.join(&input.ticket).join("ticket.log");
    crate::gates::append(
        &log,
        &format!("== attempt {} candidate {}\n", input.attempt, commit),
    )?;
    // Gates run in planwright's own checkout of the candidate, never in
    // the agent's workspace.
    let name = LocalExecutor::slot(slot);
    let verdict = sh
        .checkouts
        .gate(&name, commit, gates, &sh.settings.gates, &log, sh.cancel)?;
    sh.repo.guard().check()?;
    match verdict {
        Verdict::Pass => {}
        Verdict::Fail(f) => return Ok(AttemptResult::Rejected(f)),
        Verdict::Cancelled => return Ok(AttemptResult::Cancelled),
    }
    progress("beyond gates")?;
    judge(sh, ticket, &name, input, gates, commit)
}

/// Counterfactuals and review passes of a candidate that passed its gates.
fn judge(
    sh: &Shared,
    ticket: &Ticket,
    checkout: &str,
    input: &AttemptInput,
    gates: &[Gate],
    commit: &str,
) -> Result<AttemptResult, EngineError> {
    use crate::beyond_gates::{self as beyond, Judgement};
    let skip_expected = beyond::skip_expected(sh.plan);
    let cx = beyond::Context {
        repo: sh.repo,
        checkouts: &sh.checkouts,
        gates: &sh.settings.gates,
        settings: &sh.settings.beyond,
        dry_passes: sh.plan.review.dry_passes,
        routing: &sh.settings.routing,
        skip_expected: &skip_expected,
        emitter: &sh.emitter,
        store: &sh.store,
        run: &sh.run,
        cancel: sh.cancel,
    };
    let candidate = beyond::Candidate {
        ticket,
        attempt: input.attempt,
        base_commit: &input.base_commit,
        commit,
        gates,
        checkout,
        writer: input.model.as_deref(),
        files: &input.files,
    };
    Ok(match beyond::judge(&cx, &candidate)? {
        Judgement::Pass => AttemptResult::Passed {
            candidate: commit.to_string(),
        },
        Judgement::Reject(f) => AttemptResult::Rejected(f),
        Judgement::Cancelled => AttemptResult::Cancelled,
        Judgement::Unavailable { retry_after } => AttemptResult::Unavailable {
            retry_after,
            reason: "the reviewer's model could not serve the review".into(),
        },
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
        AgentOutcome::Unavailable {
            retry_after,
            reason,
        } => Err(AttemptResult::Unavailable {
            retry_after,
            reason,
        }),
        AgentOutcome::Finished => candidate
            .commit
            .ok_or_else(|| agent_failed("produced no commit")),
    }
}

/// The failure of a ticket whose model could not serve it `reasons.len()`
/// times in a row: the last reason in its message, each in its evidence.
fn unavailable_failure(reasons: &[String]) -> Failure {
    let last = reasons.last().map_or("", |r| limits::last_line(r));
    let evidence: Vec<String> = reasons
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{}. {}", i + 1, r.trim()))
        .collect();
    Failure::new(
        FailureKind::Unavailable,
        format!(
            "its model could not serve it {} times in a row (`[agent] max_unavailable`): {last}",
            reasons.len()
        ),
    )
    .with_evidence(evidence.join("\n"))
}

fn why_split(why: &str) -> (String, String) {
    let mut lines = why.splitn(2, '\n');
    let first = lines.next().unwrap_or_default().to_string();
    let rest = lines.next().unwrap_or_default();
    let tail: Vec<&str> = rest.lines().collect();
    (first, tail[tail.len().saturating_sub(40)..].join("\n"))
}
