//! One view of a run for every reader: `status`, `report --to html`,
//! `watch` and `serve` all show a [`RunView`], folded from the run's event
//! log (`runs/<run>/events.jsonl`), with the state store supplying only what
//! events do not carry (the run's plan path, ticket titles, plan order and the plan's graph).
//!
//! Each line is read back as the engine's typed [`Event`]: unknown events
//! and fields are passed over and a half-written last line waits, so a
//! reader never breaks on a log written by another version of the engine
//! or by a run still writing it.

use planwright_engine::agent::{Activity, CostSource, Usage};
use planwright_engine::EngineError;
#[cfg(doc)]
use planwright_engine::Event;
use planwright_engine::Failure;
use planwright_engine::Phase;
use planwright_engine::Repo;
use planwright_engine::RunGraph;
use planwright_engine::{AgentOutcomeKind, RunRow, RunStatus, Store, TicketState};
use planwright_engine::{AttemptAgent, AttemptPlace};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

/// A run as every view shows it.
#[derive(Debug, Clone)]
pub struct RunView {
    /// The run.
    pub run: RunInfo,
    /// Its tickets, in plan order.
    pub tickets: Vec<TicketView>,
    /// Waves of ticket indices (into `tickets`): wave 1 has no dependencies.
    pub waves: Vec<Vec<usize>>,
    /// Dependency edges as ticket indices (dependency, dependent).
    pub edges: Vec<(usize, usize)>,
    /// Pools paused (rate limit, quota), by name.
    pub paused: BTreeMap<String, PausedPool>,
    /// The stacks the merge queue checked, in order.
    pub batches: Vec<BatchView>,
    /// The base branch's tip before the first attempt, when known.
    pub base_before: Option<String>,
    /// The base branch's tip after the last merge, when something merged.
    pub base_after: Option<String>,
    /// Event-log lines that were not events (half-written, foreign).
    pub skipped_lines: usize,
    /// Events folded so far.
    pub events: usize,
    /// Whether some event time has milliseconds (else times are whole
    /// seconds, too coarse to draw a run of a few seconds).
    pub subsecond_times: bool,
    /// Whether the run recorded its plan's graph. A run made by an older
    /// planwright did not: its tickets are shown in one wave, without edges,
    /// and every view says so rather than draw a wrong graph.
    pub graph_recorded: bool,
    index: HashMap<String, usize>,
    /// Which attempt holds each slot: (ticket index, attempt number).
    slots: Vec<Option<(usize, u32)>>,
}

/// A stack of verified candidates the merge queue checked as one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchView {
    /// Its tickets, in landing order.
    pub tickets: Vec<String>,
    /// `checking`, `verified` (its gates passed), `landed` (the target
    /// moved to it), `failed` (its gates failed) or `cancelled` (a shorter
    /// stack it is built on failed, or a longer one that holds it passed).
    pub state: String,
    /// Its gates failed first and passed when run again.
    pub flaky: bool,
    /// Its tickets once it landed.
    pub landed: Vec<String>,
    /// Its last ticket, when a bisection found that it breaks the gates
    /// on top of the others (it is rebuilt).
    pub culprit: Option<String>,
}

/// Said of a run an older planwright made, which kept no graph.
pub(crate) const GRAPH_NOT_RECORDED: &str =
    "this run was recorded before planwright stored its plan's graph: its DAG shows one wave and no edges";

/// The run itself.
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// The run id.
    pub id: String,
    /// The plan file as given to `run`.
    pub plan_path: String,
    /// The base branch.
    pub base: String,
    /// `running`, `finished` or `interrupted` (also a run recorded as
    /// running whose process is gone: see [`RunView::process_gone`]).
    pub status: RunStatus,
    /// When it first started (ms since the epoch).
    pub started_ms: Option<i64>,
    /// When it last finished (ms since the epoch).
    pub finished_ms: Option<i64>,
    /// The newest event's time (ms since the epoch).
    pub last_event_ms: Option<i64>,
}

/// A pool that stopped starting attempts for a while.
#[derive(Debug, Clone)]
pub struct PausedPool {
    /// Why, as the agent said.
    pub reason: String,
    /// Until when, as the event said it (free text).
    pub until: Option<String>,
}

/// One ticket.
#[derive(Debug, Clone)]
pub struct TicketView {
    /// The ticket id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Where it stands.
    pub state: TicketState,
    /// The phase of its running attempt.
    pub phase: Option<Phase>,
    /// 0-based wave.
    pub wave: usize,
    /// Its attempts, oldest first.
    pub attempts: Vec<AttemptView>,
    /// The commit on the base branch.
    pub merged_commit: Option<String>,
    /// The last failure.
    pub failure: Option<Failure>,
    /// The failed ancestor, when blocked.
    pub blocked_by: Option<String>,
    /// The plan no longer has it: the run keeps it, with its attempts, in
    /// no wave, and runs it no more.
    pub removed: bool,
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// Still running.
    Running,
    /// Passed verification; merging.
    Passed,
    /// Landed on the base branch.
    Merged,
    /// Rejected, with a failure.
    Rejected,
    /// A rerun that found nothing to change: the ticket stays merged.
    Unchanged,
    /// Stopped by an interrupt (or the log ends without its end).
    Interrupted,
}

impl AttemptOutcome {
    /// The name shown.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Running => "running",
            AttemptOutcome::Passed => "passed",
            AttemptOutcome::Merged => "merged",
            AttemptOutcome::Rejected => "rejected",
            AttemptOutcome::Unchanged => "unchanged",
            AttemptOutcome::Interrupted => "interrupted",
        }
    }
}

/// One attempt.
#[derive(Debug, Clone)]
pub struct AttemptView {
    /// 1-based attempt number.
    pub n: u32,
    /// The slot it ran in (0-based): the lowest free one when it started.
    pub slot: Option<usize>,
    /// The base commit it started from.
    pub base_commit: Option<String>,
    /// When it started (ms since the epoch).
    pub started_ms: Option<i64>,
    /// When its slot was freed (ms since the epoch).
    pub ended_ms: Option<i64>,
    /// How many events the log had when it started (1-based position of
    /// its start event).
    pub started_event: usize,
    /// The same for its end.
    pub ended_event: Option<usize>,
    /// The last phase it entered.
    pub phase: Phase,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// Why it was rejected.
    pub failure: Option<Failure>,
    /// Tokens, when the agent reported them.
    pub usage: Option<Usage>,
    /// Cost in US dollars, when known.
    pub cost_usd: Option<f64>,
    /// Where the cost came from, when said.
    pub cost_source: Option<CostSource>,
    /// How the agent ended (`finished`, `blocked`, ...), once it reported.
    pub agent_outcome: Option<AgentOutcomeKind>,
    /// The model, when known.
    pub model: Option<String>,
    /// Who ran it (adapter, program, routed model), from its start event.
    pub ran_by: Option<AttemptAgent>,
    /// Where it ran (executor, worker, slot), from its start event.
    pub ran_at: Option<AttemptPlace>,
    /// Gate results, from the ticket's log.
    pub gates: Vec<CheckResult>,
    /// Review verdicts, from `review` events.
    pub reviews: Vec<CheckResult>,
    /// Counterfactual results, from `counterfactual` events.
    pub counterfactuals: Vec<CheckResult>,
    /// What its agent did while it ran (messages, tool calls, plans), from
    /// `agent_activity` events: only agents that stream it (`acp`) send any.
    pub activity: Vec<Activity>,
}

impl AttemptView {
    /// Attempt `n`, started in `slot` from `base_commit` at `at` (ms), as
    /// the log's `event`th event.
    fn new(n: u32, slot: usize, base_commit: &str, at: Option<i64>, event: usize) -> AttemptView {
        AttemptView {
            n,
            slot: Some(slot),
            base_commit: Some(base_commit.to_string()),
            started_ms: at,
            started_event: event,
            ended_event: None,
            ended_ms: None,
            phase: Phase::Starting,
            outcome: AttemptOutcome::Running,
            failure: None,
            usage: None,
            cost_usd: None,
            cost_source: None,
            agent_outcome: None,
            model: None,
            ran_by: None,
            ran_at: None,
            gates: vec![],
            reviews: vec![],
            counterfactuals: vec![],
            activity: vec![],
        }
    }
}

/// One gate, review or counterfactual result (named apart from preflight's
/// checks and a plan's review checks).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    /// What was checked.
    pub name: String,
    /// Whether it passed, when said.
    pub passed: Option<bool>,
    /// More, as given (verdict, exit status).
    pub detail: String,
    /// The end of the check's output, when the event carries it (a
    /// counterfactual's mutated test run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_excerpt: Option<String>,
}

/// Tickets per state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// On the base branch.
    pub merged: usize,
    /// Out of attempts.
    pub failed: usize,
    /// Behind a failed ancestor.
    pub blocked: usize,
    /// Running, verified or merging.
    pub running: usize,
    /// Left running, verified or merging by a run whose process is gone.
    pub interrupted: usize,
    /// Not started, or waiting for a retry.
    pub pending: usize,
    /// No longer in the plan (kept, with their attempts, in none of the
    /// counts above).
    pub removed: usize,
}

impl Counts {
    /// The counts as every view names and orders them: in a run whose
    /// process is gone, `interrupted` stands where `running` stands
    /// (nothing it started still runs).
    pub fn shown(&self, run: RunStatus) -> [(&'static str, usize); 5] {
        let fourth = match run {
            RunStatus::Interrupted => ("interrupted", self.interrupted),
            _ => ("running", self.running),
        };
        [
            ("merged", self.merged),
            ("failed", self.failed),
            ("blocked", self.blocked),
            fourth,
            ("pending", self.pending),
        ]
    }

    /// `3 tickets: 1 merged, 1 failed, 1 blocked, 0 running, 0 pending`,
    /// then `; 1 removed from the plan` when the run kept some.
    pub fn line(&self, run: RunStatus) -> String {
        let shown = self.shown(run);
        let parts: Vec<String> = (shown.iter())
            .map(|(name, n)| format!("{n} {name}"))
            .collect();
        let tickets: usize = shown.iter().map(|(_, n)| n).sum();
        let mut line = format!(
            "{}: {}",
            planwright_plan::words::count(tickets, "ticket"),
            parts.join(", ")
        );
        if self.removed > 0 {
            line.push_str(&format!("; {} removed from the plan", self.removed));
        }
        line
    }
}

/// A ticket's state as every view shows it: its recorded state, except in
/// a run whose process is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShownState {
    /// The state the run recorded.
    Recorded(TicketState),
    /// Recorded as running, verified or merging in a run whose process is
    /// gone: nothing works on it any more, and the next `run` takes it up.
    Interrupted,
}

impl ShownState {
    /// How a ticket in `state` shows in a run that is `run`.
    pub fn of(run: RunStatus, state: TicketState) -> ShownState {
        match state {
            TicketState::Running | TicketState::Verified | TicketState::Merging
                if run == RunStatus::Interrupted =>
            {
                ShownState::Interrupted
            }
            state => ShownState::Recorded(state),
        }
    }

    /// The printed name.
    pub fn as_str(self) -> &'static str {
        match self {
            ShownState::Recorded(state) => state.as_str(),
            ShownState::Interrupted => "interrupted",
        }
    }
}

impl serde::Serialize for ShownState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl RunView {
    /// An empty view of `run` with its tickets `(id, title)` in plan order.
    pub fn new(run: &RunRow, tickets: &[(String, String)]) -> RunView {
        let index = tickets
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (id.clone(), i))
            .collect();
        RunView {
            run: RunInfo {
                id: run.id.clone(),
                plan_path: run.plan_path.clone(),
                base: run.base.clone(),
                status: run.status,
                started_ms: parse_time(&run.started_at),
                finished_ms: run.finished_at.as_deref().and_then(parse_time),
                last_event_ms: None,
            },
            tickets: tickets
                .iter()
                .map(|(id, title)| TicketView::new(id, title))
                .collect(),
            waves: vec![(0..tickets.len()).collect()],
            edges: vec![],
            paused: BTreeMap::new(),
            batches: Vec::new(),
            base_before: None,
            base_after: None,
            skipped_lines: 0,
            events: 0,
            subsecond_times: false,
            graph_recorded: false,
            index,
            slots: vec![],
        }
    }

    /// Tickets per state, as shown (see [`ShownState`]).
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for t in &self.tickets {
            if t.removed {
                c.removed += 1;
                continue;
            }
            match self.shown_state(t) {
                ShownState::Interrupted => c.interrupted += 1,
                // A ticket merged from an older definition is on the base.
                ShownState::Recorded(TicketState::Merged | TicketState::Changed) => c.merged += 1,
                ShownState::Recorded(TicketState::Failed) => c.failed += 1,
                ShownState::Recorded(TicketState::Blocked) => c.blocked += 1,
                ShownState::Recorded(
                    TicketState::Running | TicketState::Verified | TicketState::Merging,
                ) => c.running += 1,
                ShownState::Recorded(TicketState::Pending) => c.pending += 1,
            }
        }
        c
    }

    /// How `t` shows in this run: see [`ShownState`].
    pub fn shown_state(&self, t: &TicketView) -> ShownState {
        ShownState::of(self.run.status, t.state)
    }

    /// The run's process is gone without a word (killed: no `run_finished`
    /// in its log), as the free run lock shows: the run is interrupted,
    /// its open attempts end with its last event and its slots are free.
    /// Its tickets keep their recorded state, which every view shows as
    /// interrupted. A run that is not recorded as running is left as it is.
    pub fn process_gone(&mut self) {
        if self.run.status == RunStatus::Running {
            self.run.status = RunStatus::Interrupted;
            self.end_open_attempts(self.run.last_event_ms);
        }
    }

    /// Tokens and cost of every attempt that reported them.
    pub fn usage(&self) -> (Option<Usage>, Option<f64>) {
        let attempts = self.tickets.iter().flat_map(|t| &t.attempts);
        let mut usage: Option<Usage> = None;
        let mut cost: Option<f64> = None;
        for a in attempts {
            if let Some(u) = a.usage {
                *usage.get_or_insert_with(Usage::default) += u;
            }
            if let Some(c) = a.cost_usd {
                *cost.get_or_insert(0.0) += c;
            }
        }
        (usage, cost)
    }

    /// The number of job slots seen.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// What each slot is doing now: the ticket index and attempt number.
    pub fn slot_holders(&self) -> &[Option<(usize, u32)>] {
        &self.slots
    }

    /// The ticket with this id.
    pub fn ticket(&self, id: &str) -> Option<&TicketView> {
        self.index.get(id).map(|&i| &self.tickets[i])
    }

    /// Marks `ids`, which the run's plan no longer has, removed and takes
    /// them out of the waves (the graph is the plan's); the event log says
    /// the same as it is folded.
    pub fn set_removed<'a>(&mut self, ids: impl IntoIterator<Item = &'a str>) {
        for id in ids {
            let Some(&i) = self.index.get(id) else {
                continue;
            };
            self.tickets[i].removed = true;
            self.waves.iter_mut().for_each(|w| w.retain(|&j| j != i));
        }
        self.waves.retain(|w| !w.is_empty());
        for (w, wave) in self.waves.iter().enumerate() {
            wave.iter().for_each(|&i| self.tickets[i].wave = w);
        }
    }

    /// Lays the tickets out by the plan's dependencies (waves and edges);
    /// tickets the plan lacks go into a wave after the others.
    pub fn set_plan(&mut self, plan: &planwright_plan::Plan) {
        let tickets = planwright_plan::graph::TicketGraph::new(plan);
        self.set_graph(&RunGraph::of(plan, &tickets));
    }

    /// Lays the tickets out by the graph the run recorded; tickets it lacks
    /// go into a wave after the others, but for those marked removed.
    pub fn set_graph(&mut self, graph: &RunGraph) {
        let pos = |id: &str| self.index.get(id).copied();
        let mut waves: Vec<Vec<usize>> = (graph.waves.iter())
            .map(|w| w.iter().filter_map(|id| pos(id)).collect())
            .collect();
        let placed: std::collections::HashSet<usize> = waves.iter().flatten().copied().collect();
        let rest: Vec<usize> = (0..self.tickets.len())
            .filter(|&i| !placed.contains(&i) && !self.tickets[i].removed)
            .collect();
        if !rest.is_empty() {
            waves.push(rest);
        }
        waves.retain(|w| !w.is_empty());
        self.edges = (graph.edges.iter())
            .filter_map(|(d, t)| Some((pos(d)?, pos(t)?)))
            .collect();
        for (w, ids) in waves.iter().enumerate() {
            for &i in ids {
                self.tickets[i].wave = w;
            }
        }
        self.waves = waves;
        self.graph_recorded = true;
    }

    /// The merge queue in one line, for every view: the stacks it checked,
    /// the flaky and bisected ones, and what it checks now. `None` when it
    /// checked no stack (every merge was of one candidate).
    pub fn queue_line(&self) -> Option<String> {
        self.batches.last()?;
        let landed: usize = self.batches.iter().map(|b| b.landed.len()).sum();
        let mut line = format!(
            "merge queue: {} checked, {landed} landed from them",
            planwright_plan::words::count(self.batches.len(), "stack")
        );
        let flaky = self.batches.iter().filter(|b| b.flaky).count();
        if flaky > 0 {
            line.push_str(&format!(", {flaky} flaky"));
        }
        let culprits: Vec<&str> = (self.batches.iter())
            .filter_map(|b| b.culprit.as_deref())
            .collect();
        if !culprits.is_empty() {
            line.push_str(&format!(
                ", {} bisected (rebuilt: {})",
                culprits.len(),
                culprits.join(", ")
            ));
        }
        let checking: Vec<String> = (self.batches.iter())
            .filter(|b| b.state == "checking")
            .map(|b| b.tickets.join(", "))
            .collect();
        if !checking.is_empty() && self.run.status == RunStatus::Running {
            line.push_str(&format!("; now checking {}", checking.join(" and ")));
        }
        Some(line)
    }

    /// What every view says of a run that recorded no graph.
    pub fn graph_note(&self) -> Option<&'static str> {
        (!self.graph_recorded).then_some(GRAPH_NOT_RECORDED)
    }

    /// Folds the complete lines of `text` (one event each); returns how many
    /// bytes were consumed (up to the last newline).
    pub fn fold_text(&mut self, text: &str) -> usize {
        let end = text.rfind('\n').map_or(0, |i| i + 1);
        for line in text[..end].lines().filter(|l| !l.trim().is_empty()) {
            match fold::read_line(line) {
                fold::Line::Event(event, at_ms) => self.apply(&event, at_ms),
                fold::Line::Unknown(at_ms) => self.apply_unknown(at_ms),
                fold::Line::Foreign => self.skipped_lines += 1,
            }
        }
        end
    }
}

impl TicketView {
    /// Tokens and cost summed over its attempts.
    pub fn totals(&self) -> crate::report::Totals {
        let mut totals = crate::report::Totals::default();
        for a in &self.attempts {
            totals.add(a.usage, a.cost_usd);
        }
        totals
    }

    fn new(id: &str, title: &str) -> TicketView {
        TicketView {
            id: id.to_string(),
            title: title.to_string(),
            state: TicketState::Pending,
            phase: None,
            wave: 0,
            attempts: vec![],
            merged_commit: None,
            failure: None,
            blocked_by: None,
            removed: false,
        }
    }

    /// The attempt still holding a slot, if any.
    pub fn open_attempt(&self) -> Option<&AttemptView> {
        self.attempts
            .last()
            .filter(|a| a.outcome == AttemptOutcome::Running)
    }

    /// Where its logs are, relative to the run's folder.
    pub fn log_dir(&self) -> String {
        self.id.clone()
    }
}

mod fold;
#[cfg(test)]
use fold::parse_gate_log;
pub use fold::{parse_time, read_gate_logs};

/// Reads the event log from where the last read stopped, so `watch` and
/// `serve` fold only what is new; a line still being written waits for its
/// newline. A tail of a run's files also watches the run lock, so that a
/// run whose process is gone shows as interrupted (see
/// [`RunView::process_gone`]) in every view.
#[derive(Debug)]
pub struct Tail {
    path: PathBuf,
    offset: u64,
    lock: Option<PathBuf>,
    checked: Option<std::time::Instant>,
}

/// How often a tail looks at the run lock of a run recorded as running: a
/// look waits a little while a run holds the lock.
const LOCK_LOOK_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

impl Tail {
    /// Follows the event log at `path` from its start.
    pub fn new(path: PathBuf) -> Tail {
        Tail {
            path,
            offset: 0,
            lock: None,
            checked: None,
        }
    }

    /// Follows the event log of `files` from its start, and the run lock of
    /// their repository when they name it.
    pub fn of(files: &RunFiles) -> Tail {
        Tail {
            lock: files.lock.clone(),
            ..Tail::new(files.events.clone())
        }
    }

    /// Folds what was appended since the last call into `view`, then marks
    /// the run interrupted when its process is gone; returns whether the
    /// view changed. A missing file is no news.
    pub fn poll(&mut self, view: &mut RunView) -> Result<bool, EngineError> {
        let news = self.fold_new(view)?;
        Ok(self.look_at_lock(view)? || news)
    }

    /// Marks the run interrupted when it is recorded as running and no
    /// process holds its lock; the first look is at once, the next ones
    /// [`LOCK_LOOK_EVERY`] apart. Returns whether it marked it.
    fn look_at_lock(&mut self, view: &mut RunView) -> Result<bool, EngineError> {
        let Some(lock) = &self.lock else {
            return Ok(false);
        };
        let due = self
            .checked
            .is_none_or(|at| at.elapsed() >= LOCK_LOOK_EVERY);
        if view.run.status != RunStatus::Running || !due {
            return Ok(false);
        }
        self.checked = Some(std::time::Instant::now());
        if planwright_engine::run_lock_held_at(lock)? {
            return Ok(false);
        }
        view.process_gone();
        Ok(true)
    }

    fn fold_new(&mut self, view: &mut RunView) -> Result<bool, EngineError> {
        let mut file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(EngineError::io(&self.path, e)),
        };
        let io = |e| EngineError::io(&self.path, e);
        file.seek(SeekFrom::Start(self.offset)).map_err(io)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        // Only whole lines: a writer may be half-way through the last one.
        let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if end == 0 {
            return Ok(false);
        }
        view.fold_text(&String::from_utf8_lossy(&bytes[..end]));
        self.offset += end as u64;
        Ok(true)
    }
}

/// Where a run's files are.
#[derive(Debug, Clone)]
pub struct RunFiles {
    /// `.planwright/runs/<run>`.
    pub dir: PathBuf,
    /// Its event log.
    pub events: PathBuf,
    /// The run lock of its repository, which tells a run going on from
    /// one whose process is gone; None for a run folder read on its own.
    pub lock: Option<PathBuf>,
}

impl RunFiles {
    /// The files of run `id` in `repo`.
    pub fn new(repo: &Repo, id: &str) -> Result<RunFiles, EngineError> {
        let dir = repo.state_dir().join("runs").join(id);
        Ok(RunFiles {
            events: dir.join("events.jsonl"),
            dir,
            lock: Some(planwright_engine::run_lock_path(repo)?),
        })
    }
}

/// The state store and its row of run `id` (the newest when None); None
/// when the repository has no store or no such run. Never creates the
/// store: reading a run must not leave one behind.
pub(crate) fn find_run(
    repo: &Repo,
    id: Option<&str>,
) -> Result<Option<(Store, RunRow)>, EngineError> {
    let db = repo.state_dir().join("state.db");
    if !db.is_file() {
        return Ok(None);
    }
    let store = Store::open(&db)?;
    let run = match id {
        Some(id) => store.run(id)?,
        None => store.latest_run()?,
    };
    Ok(run.map(|run| (store, run)))
}

/// The view of run `id` (the newest when None) before any event is folded,
/// with its files; None when the repository has no such run. Never creates
/// the state store.
pub fn open_view(
    repo: &Repo,
    id: Option<&str>,
) -> Result<Option<(RunView, RunFiles)>, EngineError> {
    match find_run(repo, id)? {
        Some((store, run)) => view_of(repo, &store, &run).map(Some),
        None => Ok(None),
    }
}

/// The view of run `id` (the newest when None) with its whole event log
/// folded, and the gate results of each ticket's log.
pub fn load_view(
    repo: &Repo,
    id: Option<&str>,
) -> Result<Option<(RunView, RunFiles)>, EngineError> {
    match find_run(repo, id)? {
        Some((store, run)) => fold_all(repo, &store, &run).map(Some),
        None => Ok(None),
    }
}

/// The view of `run` before any event is folded: its tickets from the
/// store, laid out by the graph the run recorded.
fn view_of(repo: &Repo, store: &Store, run: &RunRow) -> Result<(RunView, RunFiles), EngineError> {
    let rows = store.tickets(&run.id)?;
    let tickets: Vec<(String, String)> = (rows.iter())
        .map(|t| (t.id.clone(), t.title.clone()))
        .collect();
    let mut view = RunView::new(run, &tickets);
    view.set_removed(rows.iter().filter(|t| t.removed).map(|t| t.id.as_str()));
    let files = RunFiles::new(repo, &run.id)?;
    let graph = store.run_graph(&run.id)?;
    if let Some(graph) = graph.as_deref().and_then(RunGraph::from_json) {
        view.set_graph(&graph);
    }
    Ok((view, files))
}

/// The view of `run` with its whole event log and its gate logs folded,
/// interrupted when its process is gone.
pub(crate) fn fold_all(
    repo: &Repo,
    store: &Store,
    run: &RunRow,
) -> Result<(RunView, RunFiles), EngineError> {
    let (mut view, files) = view_of(repo, store, run)?;
    Tail::of(&files).poll(&mut view)?;
    read_gate_logs(&mut view, &files.dir);
    Ok((view, files))
}

#[cfg(test)]
mod tests;
