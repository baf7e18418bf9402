//! What the engine reports while it runs. The engine emits [`Event`]s into
//! a channel; one reporter thread stamps nothing and decides nothing: it
//! stores each batch in `state.db`, hands every event to the reporters (JSON
//! lines here, terminal and plain text in the CLI) and flushes them once per
//! batch. Each event carries a sequence number (per run, across
//! invocations) and a millisecond timestamp, both given when it is emitted.
//! The views read the log back as the same [`Event`]s.

use crate::agent::activity::ActivityKind;
use crate::model::failure::Failure;
use crate::model::report::{AgentOutcomeKind, CostSource, Usage};
use crate::model::{RebuildReason, StartsFrom};
use crate::store::{EventRow, Store};
use serde::{Deserialize, Serialize};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// Something that happened during a run, written to the log and read
/// back from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The run starts (or continues).
    RunStarted {
        /// The run id.
        run: String,
        /// The base branch.
        base: String,
        /// How many tickets the plan has.
        ticket_count: usize,
        /// Whether this continues an earlier invocation of the run.
        continued: bool,
    },
    /// A ticket of a continued run that the plan no longer has, said after
    /// each `run_started`: the run keeps it, with its attempts, as removed
    /// and runs it no more (its merges stay on the base branch); a plan that
    /// has it again brings it back.
    Removed {
        /// The ticket.
        ticket: String,
    },
    /// A file that decides the run (its plan or configuration) is not what
    /// it was when the run last started.
    InputChanged {
        /// `plan` or `configuration`.
        role: String,
        /// The file, as given.
        file: String,
        /// The blob id recorded then.
        before: String,
        /// The blob id now.
        after: String,
        /// The run's merges that changed it (with `--allow-config-change`);
        /// none when the change is not the run's own.
        merged_by: Vec<String>,
    },
    /// A ticket the base branch already holds (from the plan's current
    /// definition) is not run again.
    AlreadyMerged {
        /// The ticket.
        ticket: String,
    },
    /// A ticket the base branch holds from an older definition: reported,
    /// and run again only with `--rerun ID` or `--rerun-changed`.
    Changed {
        /// The ticket.
        ticket: String,
        /// The commit that merged the older definition.
        commit: String,
    },
    /// An attempt starts.
    AttemptStarted {
        /// The ticket.
        ticket: String,
        /// 1-based attempt number.
        attempt: u32,
        /// The base commit it starts from.
        base_commit: String,
        /// Where its workspace starts (see [`StartsFrom`]). Logs written
        /// before it was recorded read as `base`.
        #[serde(default)]
        starts_from: StartsFrom,
        /// Who runs it: the adapter, its program and the routed model.
        /// Logs written before it was recorded have none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<AttemptAgent>,
        /// Where it runs: the executor, its machine, the slot. Logs
        /// written before it was recorded have none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        place: Option<AttemptPlace>,
    },
    /// An attempt enters a phase (`workspace`, `agent`, `commit`,
    /// `verify`, `gates`, `beyond gates`); it is `starting` until the first.
    Phase {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// The phase.
        phase: crate::model::Phase,
    },
    /// The agent of a running attempt reported tokens: its running total,
    /// emitted each time it changes (by CLIs that report usage while they
    /// run; `agent_reported` carries the final figures of every CLI).
    AgentUsage {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// The model, as the CLI named it (else the one asked for).
        model: Option<String>,
        /// Tokens so far, normalized (see [`Usage`]).
        usage: Usage,
    },
    /// What the agent of a running attempt is doing: a message, a tool
    /// call, its plan (see [`crate::agent::activity`]). Only adapters
    /// whose CLI streams these send them (`acp`), at most 500 an attempt.
    AgentActivity {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// `message`, `tool_call`, `plan` or `omitted`.
        kind: ActivityKind,
        /// What it says: inert, at most 300 characters.
        text: String,
        /// A tool call's status.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
    },
    /// The agent of an attempt ended, and said this about it.
    AgentReported {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// Which way it ended (see [`AgentOutcomeKind`]).
        outcome: AgentOutcomeKind,
        /// The model, as the CLI named it.
        model: Option<String>,
        /// Tokens used, normalized (see [`Usage`]).
        usage: Option<Usage>,
        /// Cost in US dollars.
        cost_usd: Option<f64>,
        /// Where the cost came from: `reported` or `computed`.
        cost_source: Option<CostSource>,
        /// The CLI's session id.
        session_id: Option<String>,
        /// The agent's final message.
        final_message: Option<String>,
    },
    /// The model could not serve an attempt (rate limit, quota): no strike
    /// is used. With a pool, the whole pool pauses and its queued tickets go
    /// to another candidate model or wait; without one, the ticket waits.
    PoolPaused {
        /// The ticket.
        ticket: String,
        /// The model pool of the attempt, if the routing table knows it.
        pool: Option<String>,
        /// How long the pool (or ticket) waits, in milliseconds.
        wait_ms: u64,
        /// The reset the agent named, in milliseconds, before the pause's
        /// bounds (at least the backoff, at most `[agent] max_pause`)
        /// made `wait_ms` of it; none when it named none.
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
        /// When the pool may be probed again (RFC 3339), for pools.
        #[serde(skip_serializing_if = "Option::is_none")]
        until: Option<String>,
        /// What the agent reported.
        reason: String,
    },
    /// The machine an attempt ran on failed it (unreachable, gone, refused):
    /// no strike is used, the ticket runs again on another slot, and this
    /// slot rests before it serves again.
    WorkerLost {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// Where its worker ran (`ssh build-1`, `process`).
        place: String,
        /// What happened.
        reason: String,
        /// Slots working (not resting).
        slots_left: usize,
        /// How long the slot rests before a new worker serves it (ms).
        #[serde(default)]
        rest_ms: u64,
        /// Lost workers the run still tolerates (`[executor] max_lost`).
        #[serde(default)]
        losses_left: usize,
    },
    /// An attempt's worker cannot start yet (its pod is not scheduled, its
    /// image is being pulled): what it waits for, each time that changes.
    WorkerWaiting {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// Where its worker is to run (`kubernetes agents/POD`).
        place: String,
        /// What it waits for, as the cluster says (`Unschedulable: 0/3
        /// nodes are available: ...`), made inert.
        waiting_for: String,
    },
    /// An attempt's connection to its worker broke, and a new one to the
    /// same machine resumed it: the attempt goes on where it was.
    WorkerResumed {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// Where its worker runs (`kubernetes agents/POD`, `ssh build-1`).
        place: String,
        /// How the connection broke (`closed the connection`).
        reason: String,
        /// How long the new connection took to resume it (ms).
        after_ms: u64,
    },
    /// A counterfactual of a candidate that passed its gates was run.
    Counterfactual {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// The mutated file.
        control_path: String,
        /// The test command.
        test: String,
        /// `red`, `green`, `timeout` or `error`.
        outcome: crate::model::CounterfactualOutcome,
        /// Whether the tests caught the mutation (`red`).
        passed: bool,
        /// Why, in one line.
        message: String,
        /// The end of the mutated (or, when it failed, the baseline) test
        /// run's output: at most 30 lines and 2 KB.
        output_excerpt: String,
    },
    /// A review pass of a candidate ended with a verdict.
    Review {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// 1-based pass.
        pass: u32,
        /// The reviewer's model, when known.
        reviewer: Option<String>,
        /// `ship` or `block`.
        verdict: planwright_plan::verdict::Decision,
        /// Whether it shipped.
        passed: bool,
        /// The verdict's summary.
        summary: String,
        /// Each check's status (`C1: met`).
        checks: Vec<String>,
    },
    /// A paused pool answered its probe: it is open again.
    PoolResumed {
        /// The pool.
        pool: String,
    },
    /// The run's budget is used up: no new attempt starts, the run ends
    /// once those in flight are settled, and resumes when it is raised.
    BudgetReached {
        /// Which ceiling, and by how much.
        reason: String,
    },
    /// Free space is below `[run] min_free`: no new attempt starts, the
    /// run ends once those in flight are settled.
    DiskLow {
        /// How much is free, the floor, and the largest folders under
        /// `.planwright/`.
        reason: String,
    },
    /// The gates failed on an attempt's candidate in its own gate
    /// checkout (`[gates] flaky_retries`), or on a single candidate's
    /// merged tree (`[merge] flaky_retries`), and ran again on the same tree.
    GateRetried {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// The gate that failed, as its command line.
        gate: String,
        /// How it failed.
        message: String,
        /// Whether the gates passed when run again: the gate is flaky, and
        /// the attempt goes on.
        passed: bool,
    },
    /// An attempt was rejected.
    AttemptRejected {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// Why.
        failure: Failure,
        /// Whether another attempt follows.
        retrying: bool,
    },
    /// A ticket's candidate passed verification and is being merged.
    Merging {
        /// The ticket.
        ticket: String,
    },
    /// The merge queue checks a stack of verified candidates, one commit
    /// per ticket in landing order, on the target's tip.
    BatchStarted {
        /// The stack's tickets, in landing order.
        tickets: Vec<String>,
        /// The tip it is stacked on.
        tip: String,
    },
    /// A stack's gates passed on its top commit.
    BatchVerified {
        /// The stack's tickets.
        tickets: Vec<String>,
        /// The stack's top commit.
        commit: String,
        /// The gates failed first and passed when run again.
        flaky: bool,
    },
    /// A stack's gates failed (after `[merge] flaky_retries` runs again).
    BatchFailed {
        /// The stack's tickets.
        tickets: Vec<String>,
        /// What failed.
        message: String,
    },
    /// A stack's check was stopped: a shorter stack it is built on failed,
    /// or a longer one that holds it passed.
    BatchCancelled {
        /// The stack's tickets.
        tickets: Vec<String>,
        /// Why.
        reason: String,
    },
    /// A verified stack landed: the target moved to its top commit.
    BatchLanded {
        /// The stack's tickets.
        tickets: Vec<String>,
        /// The target's new tip.
        commit: String,
    },
    /// A red stack was bisected: its longest green prefix lands, its first
    /// member after that goes back for a new attempt, the rest are queued again.
    Bisected {
        /// The green prefix, which lands.
        landed: Vec<String>,
        /// The first member that breaks the gates on top of `landed`.
        culprit: String,
        /// The members after the culprit, queued again.
        requeued: Vec<String>,
        /// Gate runs the bisection took.
        gate_runs: u32,
    },
    /// A ticket goes back for a new attempt from the current tip because
    /// its candidate no longer merges (`conflict`, no strike, at most
    /// `[merge] max_rebuilds`) or breaks the gates together with what
    /// landed ahead of it (`combination`, a strike).
    Rebuild {
        /// The ticket.
        ticket: String,
        /// Why (see [`RebuildReason`]).
        reason: RebuildReason,
    },
    /// A ticket landed on the run's target branch.
    Merged {
        /// The ticket.
        ticket: String,
        /// The new commit.
        commit: String,
    },
    /// A merged ticket run again (`--rerun`) whose agent found nothing to
    /// change: it stays merged as `commit`, its earlier merge.
    Unchanged {
        /// The ticket.
        ticket: String,
        /// The attempt that changed nothing.
        attempt: u32,
        /// The commit it stays merged as.
        commit: String,
    },
    /// A ticket ran out of strikes.
    Failed {
        /// The ticket.
        ticket: String,
        /// The last failure.
        failure: Failure,
    },
    /// A ticket cannot start because an ancestor failed.
    Blocked {
        /// The ticket.
        ticket: String,
        /// The failed ancestor.
        by: String,
    },
    /// The base branch (and every clean checkout of it) moved to the
    /// merges held on the run's branch.
    BaseAdvanced {
        /// The base branch.
        base: String,
        /// Its new tip.
        commit: String,
    },
    /// Merges stay on the run's branch, because the base branch cannot be
    /// moved without harming a checkout (or it moved elsewhere).
    MergesHeld {
        /// The branch holding them (`planwright/run/<id>`).
        branch: String,
        /// Why, and what to run.
        reason: String,
    },
    /// The run stopped.
    RunFinished {
        /// The run id.
        run: String,
        /// How many tickets are merged (in any invocation of the run).
        merged_count: usize,
        /// How many were merged from an older definition.
        changed_count: usize,
        /// How many failed.
        failed_count: usize,
        /// How many are blocked.
        blocked_count: usize,
        /// Whether it stopped early.
        interrupted: bool,
    },
    /// How the run confines agents and gates (`[sandbox] mode`), recorded
    /// right after the run starts.
    Contained {
        /// `landlock (ABI 7, scoped signals and abstract sockets),
        /// user+pid+mount namespaces, read-only view, sockets hidden, gate
        /// overlay`, or
        /// `off, ...`.
        sandbox: String,
    },
}

impl Event {
    /// The ticket the event is about, if any.
    pub fn ticket(&self) -> Option<&str> {
        match self {
            Event::AlreadyMerged { ticket }
            | Event::Removed { ticket }
            | Event::Changed { ticket, .. }
            | Event::AttemptStarted { ticket, .. }
            | Event::Phase { ticket, .. }
            | Event::AgentUsage { ticket, .. }
            | Event::AgentActivity { ticket, .. }
            | Event::AgentReported { ticket, .. }
            | Event::PoolPaused { ticket, .. }
            | Event::WorkerLost { ticket, .. }
            | Event::WorkerWaiting { ticket, .. }
            | Event::WorkerResumed { ticket, .. }
            | Event::Counterfactual { ticket, .. }
            | Event::Review { ticket, .. }
            | Event::AttemptRejected { ticket, .. }
            | Event::Merging { ticket }
            | Event::Rebuild { ticket, .. }
            | Event::Merged { ticket, .. }
            | Event::Unchanged { ticket, .. }
            | Event::Failed { ticket, .. }
            | Event::Blocked { ticket, .. } => Some(ticket),
            _ => None,
        }
    }

    /// The event's name (`attempt_started`).
    pub fn name(&self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.get("event").and_then(|e| e.as_str()).map(String::from))
            .unwrap_or_default()
    }
}

/// Who runs an attempt, as [`Event::AttemptStarted`] records it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptAgent {
    /// The adapter (`claude`, `acp`, `cmd`, `scripted`, ...).
    pub adapter: String,
    /// The program it starts (`claude`, or the path `[agent] program`
    /// gives), when it starts one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// The model routing chose for the attempt (`[agent] model`, the
    /// ticket's, or the routing table's); none: the CLI's own default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Where an attempt runs, as [`Event::AttemptStarted`] records it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptPlace {
    /// `[executor] kind`: `local`, `process`, `ssh` or `kubernetes`.
    pub executor: String,
    /// The worker's machine (`ssh build-1`, `process`), or its pod with
    /// its namespace (`kubernetes agents/planwright-...`); none on this
    /// machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// The slot, from 1: attempts of one slot run one after another.
    pub slot: usize,
}

impl AttemptPlace {
    /// `ssh build-1, slot 2`, or `this machine, slot 1`.
    pub fn text(&self) -> String {
        let worker = self.worker.as_deref().unwrap_or("this machine");
        format!("{worker}, slot {}", self.slot)
    }
}

/// An event with its place in the run and its time.
#[derive(Debug, Clone, PartialEq)]
pub struct Stamped {
    /// 1, 2, 3... in the order emitted, continued across invocations.
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The event.
    pub event: Event,
}

impl Stamped {
    /// The time as RFC 3339 UTC with milliseconds.
    pub fn at(&self) -> String {
        crate::clock::format_unix_ms(self.at_ms)
    }
}

/// Receives every event. Reporters run on the reporter thread, never on
/// the coordinator's.
pub trait Reporter: Send {
    /// One event with its timestamp (RFC 3339 UTC).
    fn report(&mut self, at: &str, event: &Event);
    /// One event with its sequence number; by default [`Reporter::report`].
    fn stamped(&mut self, e: &Stamped) {
        self.report(&e.at(), &e.event);
    }
    /// The end of a batch of events: write out what is buffered.
    fn flush(&mut self) {}
}

/// Writes each event as one JSON object per line (`runs/<run>/events.jsonl`)
/// with `seq`, `at` and `at_ms`, buffered and flushed once per batch.
pub struct JsonLines {
    file: BufWriter<std::fs::File>,
}

impl JsonLines {
    /// Appends to `path`, creating it.
    pub fn open(path: &Path) -> std::io::Result<JsonLines> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(JsonLines {
            file: BufWriter::new(file),
        })
    }
}

impl JsonLines {
    fn line(&mut self, event: &Event, extra: [(&str, serde_json::Value); 3]) {
        let mut value = serde_json::to_value(event).expect("events serialize");
        if let Some(obj) = value.as_object_mut() {
            for (k, v) in extra.into_iter().filter(|(_, v)| !v.is_null()) {
                obj.insert(k.into(), v);
            }
        }
        // A full disk must not stop the run; the state store is the record.
        let _ = writeln!(self.file, "{value}");
    }
}

impl Reporter for JsonLines {
    fn report(&mut self, at: &str, event: &Event) {
        let none = serde_json::Value::Null;
        self.line(
            event,
            [("seq", none.clone()), ("at", at.into()), ("at_ms", none)],
        );
    }

    fn stamped(&mut self, e: &Stamped) {
        let extra = [
            ("seq", e.seq.into()),
            ("at", e.at().into()),
            ("at_ms", e.at_ms.into()),
        ];
        self.line(&e.event, extra);
    }

    fn flush(&mut self) {
        let _ = self.file.flush();
    }
}

/// Collects events in memory (tests).
#[derive(Default)]
pub struct Recorder(pub Arc<Mutex<Vec<Event>>>);

impl Reporter for Recorder {
    fn report(&mut self, _at: &str, event: &Event) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event.clone());
    }
}

/// Where the engine emits events; clones share the sequence and the channel.
#[derive(Clone)]
pub struct Emitter {
    // One lock around numbering and sending keeps the channel in `seq` order.
    inner: Arc<Mutex<(u64, Option<Sender<Stamped>>)>>,
}

impl Emitter {
    /// Emits `event`.
    pub fn emit(&self, event: Event) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.0 += 1;
        let stamped = Stamped {
            seq: inner.0,
            at_ms: now_ms(),
            event,
        };
        if let Some(tx) = &inner.1 {
            // The reporter thread outlives every emitter; a send fails only
            // after `close`, when nothing is reported any more.
            let _ = tx.send(stamped);
        }
    }

    /// Stops emitting; the reporter thread drains what was sent and ends.
    pub fn close(&self) {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).1 = None;
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Starts the reporter thread for `run`: events numbered after `last_seq`
/// go to `state.db` and to `reporters`. Join the handle after
/// [`Emitter::close`] to know every event was written.
pub(crate) fn start(
    store: Store,
    run: String,
    last_seq: u64,
    reporters: Vec<Box<dyn Reporter>>,
) -> (Emitter, std::thread::JoinHandle<()>) {
    let (tx, rx) = channel();
    let handle = std::thread::spawn(move || report_all(&store, &run, rx, reporters));
    let emitter = Emitter {
        inner: Arc::new(Mutex::new((last_seq, Some(tx)))),
    };
    (emitter, handle)
}

fn report_all(
    store: &Store,
    run: &str,
    rx: Receiver<Stamped>,
    mut reporters: Vec<Box<dyn Reporter>>,
) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        batch.extend(rx.try_iter());
        let texts: Vec<(String, String, String)> = batch
            .iter()
            .map(|e| {
                let data = serde_json::to_string(&e.event).expect("events serialize");
                (e.at(), e.event.name(), data)
            })
            .collect();
        let rows: Vec<EventRow> = batch
            .iter()
            .zip(&texts)
            .map(|(e, (at, kind, data))| EventRow {
                seq: e.seq,
                at_ms: e.at_ms,
                at,
                ticket: e.event.ticket(),
                kind,
                data,
            })
            .collect();
        // The state store's tables are the truth; the event log is a
        // record, so a failed write here does not stop the run.
        let _ = store.record_events(run, &rows);
        for r in &mut reporters {
            for e in &batch {
                r.stamped(e);
            }
            r.flush();
        }
    }
}

#[cfg(test)]
mod tests;
