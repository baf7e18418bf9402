//! Reporters for `run` and `demo`: one progress line per running ticket on a
//! terminal (indicatif), plain timestamped lines otherwise, with a
//! heartbeat line per running ticket now and then.

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use planwright_engine::{Event, Phase, RebuildReason, Reporter, Stamped, StartsFrom};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// What a started attempt's line adds when its workspace holds attempt
/// `before`'s change.
fn with_change(starts_from: StartsFrom, before: u32) -> String {
    match starts_from {
        StartsFrom::Candidate => format!(" with attempt {before}'s change"),
        StartsFrom::CandidateCarried => format!(" with attempt {before}'s change carried onto it"),
        _ => String::new(),
    }
}

/// One line for an event, or None for events that only move a progress line.
pub(crate) fn describe(event: &Event) -> Option<String> {
    // What agents, gates and file names put in an event is shown, never
    // acted on by the terminal.
    line(event).map(|l| planwright_plan::words::inert(&l).into_owned())
}

/// The line of each event: the run's own in [`run_line`], the merge
/// queue's in [`queue_line`], where an attempt runs in [`slot_line`], the
/// rest here. Every event is named in this match, so a new one must say
/// whether it prints.
fn line(event: &Event) -> Option<String> {
    Some(match event {
        Event::RunStarted { .. }
        | Event::AlreadyMerged { .. }
        | Event::InputChanged { .. }
        | Event::Removed { .. }
        | Event::Changed { .. }
        | Event::PoolResumed { .. }
        | Event::BudgetReached { .. }
        | Event::DiskLow { .. }
        | Event::BaseAdvanced { .. }
        | Event::MergesHeld { .. }
        | Event::RunFinished { .. }
        | Event::Contained { .. } => return run_line(event),
        Event::BatchStarted { .. }
        | Event::BatchVerified { .. }
        | Event::BatchCancelled { .. }
        | Event::BatchLanded { .. }
        | Event::BatchFailed { .. }
        | Event::Bisected { .. } => return queue_line(event),
        Event::PoolPaused { .. }
        | Event::WorkerWaiting { .. }
        | Event::WorkerLost { .. } => return slot_line(event),
        Event::AgentUsage { .. } | Event::AgentActivity { .. } | Event::AgentReported { .. } => {
            return None
        }
        Event::Counterfactual {
            ticket,
            control_path,
            outcome,
            ..
        } => format!("{ticket}: counterfactual on `{control_path}`: {outcome}"),
        Event::Review {
            ticket,
            pass,
            verdict,
            summary,
            ..
        } => format!("{ticket}: review pass {pass}: {verdict}: {summary}"),
        Event::AttemptStarted {
            ticket,
            attempt,
            base_commit,
            starts_from,
            place,
            ..
        } => {
            let from = with_change(*starts_from, attempt.saturating_sub(1));
            // On a worker, where: on this machine it goes without saying.
            let on = (place.as_ref())
                .filter(|p| p.worker.is_some())
                .map_or(String::new(), |p| format!(" on {}", p.text()));
            format!(
                "{ticket}: attempt {attempt} started from {}{from}{on}",
                short(base_commit)
            )
        }
        Event::Phase { .. } => return None,
        Event::AttemptRejected {
            ticket,
            attempt,
            failure,
            retrying,
        } => {
            let next = if *retrying {
                ", retrying with the evidence"
            } else {
                ""
            };
            format!("{ticket}: attempt {attempt} rejected: {failure}{next}")
        }
        Event::Merging { ticket } => format!("{ticket}: passed, merging"),
        Event::Merged { ticket, commit } => format!("{ticket}: merged as {}", short(commit)),
        Event::Unchanged { ticket, commit, .. } => format!(
            "{ticket}: nothing to change; stays merged as {}",
            short(commit)
        ),
        Event::Rebuild { ticket, reason } => match reason {
            RebuildReason::Conflict => format!("{ticket}: no longer merges; rebuilt on the current tip, no strike"),
            RebuildReason::Combination => format!("{ticket}: breaks the gates together with what landed ahead of it; rebuilt on the current tip"),
        },
        Event::GateRetried {
            ticket,
            gate,
            message,
            passed,
            ..
        } => match passed {
            true => format!("{ticket}: gate `{gate}` is flaky: it failed ({message}), then passed on the same tree"),
            false => format!("{ticket}: gate `{gate}` failed again on the same tree"),
        },
        Event::Failed { ticket, failure } => format!("{ticket}: FAILED: {failure}"),
        Event::Blocked { ticket, by } => format!("{ticket}: blocked, because {by} failed"),
    })
}

/// The run's own events, which `line` hands on; `None` for others.
fn run_line(event: &Event) -> Option<String> {
    Some(match event {
        Event::RunStarted {
            run,
            base,
            ticket_count,
            continued,
        } => {
            let how = if *continued { "continuing run" } else { "run" };
            format!(
                "{how} {run}: {} onto `{base}`",
                crate::render::count(*ticket_count, "ticket")
            )
        }
        Event::AlreadyMerged { ticket } => format!("{ticket}: merged by an earlier run, skipped"),
        Event::InputChanged {
            role,
            file,
            merged_by,
            ..
        } => match merged_by.as_slice() {
            [] => format!("the {role} `{file}` changed since the run last started; this run follows it as it is now"),
            by => format!(
                "the {role} `{file}` was changed by the merge of {} (allowed by `--allow-config-change`); this run follows it as it is now",
                by.join(", ")
            ),
        },
        Event::Removed { ticket } => {
            format!("{ticket}: no longer in the plan, forgotten by the run")
        }
        Event::Changed { ticket, commit } => format!(
            "{ticket}: merged as {} from an older definition, not run again (`--rerun {ticket}` runs it)",
            short(commit)
        ),
        Event::PoolResumed { pool } => format!("pool {pool} answered again: it is open"),
        Event::BudgetReached { reason } => format!("no new attempts: {reason}"),
        Event::DiskLow { reason } => format!("no new attempts: {reason}"),
        Event::BaseAdvanced { base, commit } => {
            format!("`{base}` and its checkout moved to {}", short(commit))
        }
        Event::MergesHeld { branch, reason } => {
            format!("the merged tickets wait on `{branch}`: {reason}")
        }
        Event::RunFinished {
            run,
            merged_count: merged,
            failed_count: failed,
            blocked_count: blocked,
            interrupted,
            ..
        } => {
            let stop = if *interrupted {
                " (interrupted; run again to continue)"
            } else {
                ""
            };
            format!("run {run} finished: {merged} merged, {failed} failed, {blocked} blocked{stop}")
        }
        Event::Contained { sandbox } => format!("sandbox: {sandbox}"),
        _ => return None,
    })
}

/// The merge queue's events, which `line` hands on; `None` for others.
fn queue_line(event: &Event) -> Option<String> {
    Some(match event {
        Event::BatchStarted { tickets, tip } => format!(
            "merge queue: checking {} stacked on {}",
            tickets.join(", "),
            short(tip)
        ),
        Event::BatchVerified { tickets, flaky, .. } => {
            let flaky = if *flaky {
                " (flaky: it failed first, then passed)"
            } else {
                ""
            };
            format!("merge queue: {} passed together{flaky}", tickets.join(", "))
        }
        Event::BatchCancelled { tickets, reason } => format!(
            "merge queue: check of {} stopped: {reason}",
            tickets.join(", ")
        ),
        Event::BatchLanded { tickets, commit } => format!(
            "merge queue: {} landed as {}",
            tickets.join(", "),
            short(commit)
        ),
        Event::BatchFailed { tickets, message } => format!(
            "merge queue: {} failed together ({message})",
            tickets.join(", ")
        ),
        Event::Bisected {
            landed,
            culprit,
            requeued,
            gate_runs,
        } => {
            let landed = match landed.as_slice() {
                [] => "nothing lands".to_string(),
                l => format!("{} land", l.join(", ")),
            };
            let again = match requeued.as_slice() {
                [] => String::new(),
                r => format!("; {} queued again", r.join(", ")),
            };
            format!(
                "merge queue: {landed}, {culprit} breaks the gates on top of them{again} ({})",
                crate::render::count(*gate_runs as usize, "gate run")
            )
        }
        _ => return None,
    })
}

/// Where an attempt runs: its model's pool and its worker, which `line` hands on; `None` for others.
fn slot_line(event: &Event) -> Option<String> {
    Some(match event {
        Event::PoolPaused {
            ticket,
            pool: Some(pool),
            wait_ms,
            reason,
            ..
        } => format!(
            "{ticket}: pool {pool} could not serve it ({reason}); paused {}s, its tickets go to another model or wait, no strike used",
            wait_ms.div_ceil(1000)
        ),
        Event::PoolPaused {
            ticket,
            wait_ms,
            reason,
            ..
        } => format!(
            "{ticket}: the model could not serve it ({reason}); trying again in {}s, no strike used",
            wait_ms.div_ceil(1000)
        ),
        Event::WorkerWaiting {
            ticket,
            place,
            waiting_for,
            ..
        } => format!("{ticket}: its worker at {place} waits: {waiting_for}"),
        Event::WorkerLost {
            ticket,
            place,
            reason,
            slots_left,
            rest_ms,
            losses_left,
            ..
        } => {
            let next = match losses_left {
                0 => "the run stops: `[executor] max_lost` workers were lost".to_string(),
                n => format!(
                    "its slot rests {}s; the run stops after {n} more lost {}",
                    rest_ms.div_ceil(1000),
                    planwright_plan::words::plural(*n, "worker")
                ),
            };
            format!(
                "{ticket}: the worker at {place} failed the attempt ({reason}); it runs again, no strike used ({} working; {next})",
                crate::render::count(*slots_left, "slot")
            )
        }
        _ => return None,
    })
}

/// Plain `<timestamp> <line>` output.
pub(crate) struct Plain<W: Write + Send> {
    out: W,
    phases: bool,
    /// Whether the merge queue's own steps (stacks checked, passed,
    /// stopped, landed, bisected) get lines.
    queue: bool,
}

impl<W: Write + Send> Plain<W> {
    /// Writes to `out`.
    pub(crate) fn new(out: W) -> Self {
        Plain {
            out,
            phases: false,
            queue: true,
        }
    }

    /// Writes to `out`, with a line for every phase of an attempt too (`--verbose`).
    pub(crate) fn verbose(out: W) -> Self {
        Plain {
            out,
            phases: true,
            queue: true,
        }
    }

    /// Writes to `out` what happened to each ticket, without the merge
    /// queue's own steps (the demo's first look).
    pub(crate) fn brief(out: W) -> Self {
        Plain {
            out,
            phases: false,
            queue: false,
        }
    }
}

/// Whether `event` is a step of the merge queue itself, which a ticket's
/// own `merged` line already sums up.
fn queue_step(event: &Event) -> bool {
    matches!(
        event,
        Event::BatchStarted { .. }
            | Event::BatchVerified { .. }
            | Event::BatchCancelled { .. }
            | Event::BatchLanded { .. }
            | Event::BatchFailed { .. }
            | Event::Bisected { .. }
    )
}

impl<W: Write + Send> Reporter for Plain<W> {
    fn report(&mut self, at: &str, event: &Event) {
        let line = match event {
            Event::Phase {
                ticket,
                attempt,
                phase,
            } if self.phases => Some(format!("{ticket}: attempt {attempt}: {phase}")),
            _ if !self.queue && queue_step(event) => None,
            _ => describe(event),
        };
        // A closed pipe (`run | head -2`) must not stop the run: its agents
        // and merges go on, and a later `status` shows where it stands.
        if let Some(line) = line {
            let _ = writeln!(self.out, "{at} {line}");
        }
    }
}

/// The wall clock in milliseconds since the epoch, as events are stamped.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// How often plain output says what each running ticket is doing, unless
/// `run --heartbeat` says otherwise.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(30);

/// What the heartbeat says of a running attempt.
#[derive(Debug, Clone, PartialEq)]
struct Running {
    attempt: u32,
    phase: Option<Phase>,
    started_ms: i64,
    tokens: Option<u64>,
    /// Its worker's machine, when not this one.
    worker: Option<String>,
    /// What its worker waits for before it can start, until it starts.
    waiting: Option<String>,
}

/// The attempts running now, as the events tell.
#[derive(Debug, Default)]
struct Pulse {
    running: BTreeMap<String, Running>,
    /// Tickets whose worker was lost, waiting for a slot: where it was.
    waiting: BTreeMap<String, String>,
}

impl Pulse {
    fn record(&mut self, at_ms: i64, event: &Event) {
        match event {
            Event::AttemptStarted {
                ticket,
                attempt,
                place,
                ..
            } => {
                let running = Running {
                    attempt: *attempt,
                    phase: None,
                    started_ms: at_ms,
                    tokens: None,
                    worker: place.as_ref().and_then(|p| p.worker.clone()),
                    waiting: None,
                };
                self.waiting.remove(ticket);
                self.running.insert(ticket.clone(), running);
            }
            Event::WorkerLost { ticket, place, .. } => {
                self.running.remove(ticket);
                self.waiting.insert(ticket.clone(), place.clone());
            }
            Event::Phase { ticket, phase, .. } => {
                if let Some(r) = self.running.get_mut(ticket) {
                    r.phase = Some(*phase);
                    r.waiting = None;
                }
            }
            Event::WorkerWaiting {
                ticket,
                waiting_for,
                ..
            } => {
                if let Some(r) = self.running.get_mut(ticket) {
                    r.waiting = Some(waiting_for.clone());
                }
            }
            Event::AgentUsage { ticket, usage, .. } => {
                if let Some(r) = self.running.get_mut(ticket) {
                    r.tokens = Some(usage.total());
                }
            }
            // The attempt ended: verified, rejected, or its model paused.
            Event::Merging { ticket }
            | Event::Merged { ticket, .. }
            | Event::Unchanged { ticket, .. }
            | Event::AttemptRejected { ticket, .. }
            | Event::Failed { ticket, .. }
            | Event::Blocked { ticket, .. }
            | Event::PoolPaused { ticket, .. } => {
                self.running.remove(ticket);
            }
            Event::RunFinished { .. } => {
                self.running.clear();
                self.waiting.clear();
            }
            _ => {}
        }
    }

    /// `T3 still running (attempt 1, agent, 2m 30s, 12.3k tokens)`, one
    /// per running attempt, by ticket id.
    fn lines(&self, now_ms: i64) -> Vec<String> {
        let line = |(ticket, r): (&String, &Running)| {
            let mut parts = vec![format!("attempt {}", r.attempt)];
            parts.extend(r.phase.map(|p| p.to_string()));
            parts.push(planwright_view::duration_text(
                (now_ms - r.started_ms).max(0),
            ));
            parts.extend(r.tokens.map(|n| {
                let noun = planwright_plan::words::plural(n as usize, "token");
                format!("{} {noun}", tokens_text(n))
            }));
            parts.extend(r.worker.as_ref().map(|w| format!("on {w}")));
            parts.extend(r.waiting.as_ref().map(|w| format!("its worker waits: {w}")));
            format!("{ticket} still running ({})", parts.join(", "))
        };
        let waits = self.waiting.iter().map(|(ticket, place)| {
            format!("{ticket} waiting for a slot (its worker at {place} was lost)")
        });
        let mut lines: Vec<String> = self.running.iter().map(line).collect();
        lines.extend(waits);
        lines.sort();
        lines
    }
}

/// `950`, `12.3k`, `4.1M`.
fn tokens_text(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// Every `every`, a plain line per running attempt, so that a log that is
/// not a terminal (a CI job's) shows the run is alive while agents work.
/// The lines go out from a thread of its own, which ends when the
/// reporter is dropped (after the run's last event).
pub(crate) struct Heartbeat {
    pulse: Arc<Mutex<Pulse>>,
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeat {
    /// Writes to `out` every `every`, each line timestamped like [`Plain`]'s.
    pub(crate) fn start<W: Write + Send + 'static>(mut out: W, every: Duration) -> Heartbeat {
        let pulse = Arc::new(Mutex::new(Pulse::default()));
        let (stop, stopped) = channel::<()>();
        let seen = pulse.clone();
        let thread = std::thread::spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                let now = now_ms();
                let lines = seen.lock().unwrap_or_else(|e| e.into_inner()).lines(now);
                let at = planwright_engine::clock::format_unix_ms(now.max(0) as u64);
                for line in lines {
                    // As in `Plain`: a closed pipe must not stop the run.
                    let _ = writeln!(out, "{at} {}", planwright_plan::words::inert(&line));
                }
            }
        });
        Heartbeat {
            pulse,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn record(&self, at_ms: i64, event: &Event) {
        (self.pulse.lock().unwrap_or_else(|e| e.into_inner())).record(at_ms, event);
    }
}

impl Reporter for Heartbeat {
    fn report(&mut self, _at: &str, event: &Event) {
        self.record(now_ms(), event);
    }

    fn stamped(&mut self, e: &Stamped) {
        self.record(e.at_ms as i64, &e.event);
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One spinner line per running ticket, updated in place; finished events
/// are printed above them.
pub(crate) struct Terminal {
    multi: MultiProgress,
    bars: HashMap<String, ProgressBar>,
    /// As [`Plain`]'s: whether the merge queue's own steps get lines.
    queue: bool,
}

impl Terminal {
    /// A reporter drawing on stderr.
    pub(crate) fn new() -> Self {
        Terminal {
            multi: MultiProgress::new(),
            bars: HashMap::new(),
            queue: true,
        }
    }

    /// [`Terminal::new`] without the merge queue's own steps.
    pub(crate) fn brief() -> Self {
        Terminal {
            queue: false,
            ..Terminal::new()
        }
    }

    fn bar(&mut self, ticket: &str) -> &ProgressBar {
        let multi = &self.multi;
        self.bars.entry(ticket.to_string()).or_insert_with(|| {
            let bar = multi.add(ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix:.bold} {msg} ({elapsed})")
                    .expect("valid template"),
            );
            bar.set_prefix(ticket.to_string());
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        })
    }
}

impl Reporter for Terminal {
    fn report(&mut self, _at: &str, event: &Event) {
        match event {
            Event::AttemptStarted {
                ticket, attempt, ..
            } => {
                self.bar(ticket)
                    .set_message(format!("attempt {attempt}: starting"));
            }
            Event::Phase {
                ticket,
                attempt,
                phase,
            } => {
                self.bar(ticket)
                    .set_message(format!("attempt {attempt}: {phase}"));
            }
            Event::Merging { ticket } => self.bar(ticket).set_message("merging"),
            _ => {}
        }
        let done = matches!(
            event,
            Event::Merged { .. }
                | Event::Unchanged { .. }
                | Event::Failed { .. }
                | Event::AttemptRejected { .. }
        );
        if done {
            if let Some(bar) = event.ticket().and_then(|t| self.bars.remove(t)) {
                bar.finish_and_clear();
                self.multi.remove(&bar);
            }
        }
        if !self.queue && queue_step(event) {
            return;
        }
        if let Some(line) = describe(event) {
            if !matches!(event, Event::AttemptStarted { .. } | Event::Merging { .. }) {
                let _ = self.multi.println(line);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use planwright_engine::agent::Usage;
    use planwright_engine::{Failure, FailureKind};

    /// When the test's events happen (ms since the epoch).
    const T0: i64 = 1_764_453_600_000;

    fn started(ticket: &str, attempt: u32) -> Event {
        Event::AttemptStarted {
            ticket: ticket.into(),
            attempt,
            base_commit: "0123456789".into(),
            starts_from: StartsFrom::Base,
            agent: None,
            place: None,
        }
    }

    #[test]
    fn the_heartbeat_names_each_running_attempt_its_phase_time_and_tokens() {
        let mut pulse = Pulse::default();
        pulse.record(T0, &started("T3", 1));
        pulse.record(T0 + 1_000, &started("T1", 2));
        let phase = |ticket: &str, phase: Phase| Event::Phase {
            ticket: ticket.into(),
            attempt: 1,
            phase,
        };
        pulse.record(T0 + 2_000, &phase("T3", Phase::Agent));
        let usage = Usage {
            input_tokens: 12_000,
            output_tokens: 300,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        };
        pulse.record(
            T0 + 3_000,
            &Event::AgentUsage {
                ticket: "T3".into(),
                attempt: 1,
                model: None,
                usage,
            },
        );
        assert_eq!(
            pulse.lines(T0 + 150_000),
            [
                "T1 still running (attempt 2, 2m 29s)",
                "T3 still running (attempt 1, agent, 2m 30s, 12.3k tokens)",
            ]
        );
        let f = Failure::new(FailureKind::ScopeViolation, "out of scope");
        pulse.record(
            T0 + 4_000,
            &Event::AttemptRejected {
                ticket: "T1".into(),
                attempt: 2,
                failure: f,
                retrying: true,
            },
        );
        pulse.record(
            T0 + 5_000,
            &Event::Merging {
                ticket: "T3".into(),
            },
        );
        assert!(pulse.lines(T0 + 150_000).is_empty());
    }

    /// On a worker, the heartbeat says where; once its worker is lost,
    /// that the ticket waits for a slot, not that it still runs.
    #[test]
    fn the_heartbeat_names_the_worker_and_a_ticket_whose_worker_was_lost() {
        let mut pulse = Pulse::default();
        let on = |ticket: &str, attempt| {
            let mut e = started(ticket, attempt);
            if let Event::AttemptStarted { place, .. } = &mut e {
                *place = Some(planwright_engine::AttemptPlace {
                    executor: "ssh".into(),
                    worker: Some("ssh build-2".into()),
                    slot: 2,
                });
            }
            e
        };
        pulse.record(T0, &on("A", 1));
        assert_eq!(
            pulse.lines(T0 + 60_000),
            ["A still running (attempt 1, 1m 00s, on ssh build-2)"]
        );
        let lost = Event::WorkerLost {
            ticket: "A".into(),
            attempt: 1,
            place: "ssh build-2".into(),
            reason: "stopped answering".into(),
            slots_left: 1,
            rest_ms: 10_000,
            losses_left: 3,
        };
        pulse.record(T0 + 61_000, &lost);
        assert_eq!(
            pulse.lines(T0 + 90_000),
            ["A waiting for a slot (its worker at ssh build-2 was lost)"]
        );
        pulse.record(T0 + 95_000, &on("A", 2));
        let waits = Event::WorkerWaiting {
            ticket: "A".into(),
            attempt: 2,
            place: "ssh build-2".into(),
            waiting_for: "Unschedulable: 0/1 nodes are available".into(),
        };
        pulse.record(T0 + 95_500, &waits);
        assert_eq!(
            pulse.lines(T0 + 96_000),
            ["A still running (attempt 2, 1.0s, on ssh build-2, its worker waits: Unschedulable: 0/1 nodes are available)"]
        );
        let phase = Event::Phase {
            ticket: "A".into(),
            attempt: 2,
            phase: Phase::Workspace,
        };
        pulse.record(T0 + 95_900, &phase);
        assert_eq!(
            pulse.lines(T0 + 96_000),
            ["A still running (attempt 2, workspace, 1.0s, on ssh build-2)"]
        );
    }

    #[test]
    fn token_counts_are_short() {
        let shown: Vec<String> = [950, 12_345, 4_100_000].map(tokens_text).into();
        assert_eq!(shown, ["950", "12.3k", "4.1M"]);
    }

    /// A writer the test reads while the heartbeat's thread writes to it.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_heartbeat_writes_on_its_own_until_it_is_dropped() {
        let out = Shared::default();
        let mut beat = Heartbeat::start(out.clone(), Duration::from_millis(10));
        beat.report("2026-11-29T22:00:00Z", &started("T3", 1));
        // No event follows: the line comes from the heartbeat's own thread.
        let text = || String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !text().contains(" T3 still running (attempt 1, ") {
            assert!(std::time::Instant::now() < deadline, "no heartbeat");
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(beat);
        let before = text();
        let last = before.lines().last().unwrap();
        let (at, line) = last.split_once(' ').unwrap();
        assert!(at.ends_with('Z') && at.len() == 24, "{last}");
        assert!(line.starts_with("T3 still running (attempt 1, ") && line.ends_with("s)"));
    }

    #[test]
    fn every_event_line() {
        let f = Failure::new(
            FailureKind::ScopeViolation,
            "modifies `README.md`, which is outside the ticket's scope",
        );
        let events = [
            Event::RunStarted {
                run: "r1".into(),
                base: "main".into(),
                ticket_count: 3,
                continued: false,
            },
            Event::RunStarted {
                run: "r1".into(),
                base: "main".into(),
                ticket_count: 3,
                continued: true,
            },
            Event::AlreadyMerged {
                ticket: "T1".into(),
            },
            Event::Removed {
                ticket: "T0".into(),
            },
            Event::AttemptStarted {
                ticket: "T2".into(),
                attempt: 1,
                base_commit: "0123456789abcdef".into(),
                starts_from: StartsFrom::Base,
                agent: None,
                place: None,
            },
            Event::Phase {
                ticket: "T2".into(),
                attempt: 1,
                phase: Phase::Agent,
            },
            Event::AttemptRejected {
                ticket: "T2".into(),
                attempt: 1,
                failure: f.clone(),
                retrying: true,
            },
            Event::AttemptRejected {
                ticket: "T2".into(),
                attempt: 2,
                failure: f.clone(),
                retrying: false,
            },
            Event::Merging {
                ticket: "T3".into(),
            },
            Event::Merged {
                ticket: "T3".into(),
                commit: "fedcba9876543210".into(),
            },
            Event::Failed {
                ticket: "T2".into(),
                failure: f,
            },
            Event::Blocked {
                ticket: "T4".into(),
                by: "T2".into(),
            },
            Event::Changed {
                ticket: "T5".into(),
                commit: "abcdef0123456789".into(),
            },
            Event::PoolPaused {
                ticket: "T6".into(),
                pool: None,
                wait_ms: 1500,
                retry_after_ms: None,
                until: None,
                reason: "429".into(),
            },
            Event::BaseAdvanced {
                base: "main".into(),
                commit: "fedcba9876543210".into(),
            },
            Event::MergesHeld {
                branch: "planwright/run/r1".into(),
                reason: "the checkout is dirty".into(),
            },
            Event::RunFinished {
                run: "r1".into(),
                merged_count: 1,
                changed_count: 0,
                failed_count: 1,
                blocked_count: 1,
                interrupted: false,
            },
            Event::RunFinished {
                run: "r1".into(),
                merged_count: 1,
                changed_count: 0,
                failed_count: 0,
                blocked_count: 0,
                interrupted: true,
            },
        ];
        let mut out = Vec::new();
        let mut plain = Plain::new(&mut out);
        for e in &events {
            plain.report("2026-11-29T22:00:00Z", e);
        }
        insta::assert_snapshot!(String::from_utf8(out).unwrap(), @r"
        2026-11-29T22:00:00Z run r1: 3 tickets onto `main`
        2026-11-29T22:00:00Z continuing run r1: 3 tickets onto `main`
        2026-11-29T22:00:00Z T1: merged by an earlier run, skipped
        2026-11-29T22:00:00Z T0: no longer in the plan, forgotten by the run
        2026-11-29T22:00:00Z T2: attempt 1 started from 0123456789
        2026-11-29T22:00:00Z T2: attempt 1 rejected: scope_violation: modifies `README.md`, which is outside the ticket's scope, retrying with the evidence
        2026-11-29T22:00:00Z T2: attempt 2 rejected: scope_violation: modifies `README.md`, which is outside the ticket's scope
        2026-11-29T22:00:00Z T3: passed, merging
        2026-11-29T22:00:00Z T3: merged as fedcba9876
        2026-11-29T22:00:00Z T2: FAILED: scope_violation: modifies `README.md`, which is outside the ticket's scope
        2026-11-29T22:00:00Z T4: blocked, because T2 failed
        2026-11-29T22:00:00Z T5: merged as abcdef0123 from an older definition, not run again (`--rerun T5` runs it)
        2026-11-29T22:00:00Z T6: the model could not serve it (429); trying again in 2s, no strike used
        2026-11-29T22:00:00Z `main` and its checkout moved to fedcba9876
        2026-11-29T22:00:00Z the merged tickets wait on `planwright/run/r1`: the checkout is dirty
        2026-11-29T22:00:00Z run r1 finished: 1 merged, 1 failed, 1 blocked
        2026-11-29T22:00:00Z run r1 finished: 1 merged, 0 failed, 0 blocked (interrupted; run again to continue)
        ");
    }

    /// The brief lines (the demo's) leave out the merge queue's own steps
    /// and keep what happened to each ticket.
    #[test]
    fn brief_lines_leave_out_the_merge_queues_own_steps() {
        let events = [
            Event::BatchStarted {
                tickets: vec!["T1".into(), "T2".into()],
                tip: "0123456789abcdef".into(),
            },
            Event::Merged {
                ticket: "T1".into(),
                commit: "fedcba9876543210".into(),
            },
        ];
        let lines = |mut plain: Plain<&mut Vec<u8>>| {
            events.iter().for_each(|e| plain.report("at", e));
        };
        let (mut brief, mut all) = (Vec::new(), Vec::new());
        lines(Plain::brief(&mut brief));
        lines(Plain::new(&mut all));
        assert_eq!(
            String::from_utf8(brief).unwrap(),
            "at T1: merged as fedcba9876\n"
        );
        assert!(String::from_utf8(all)
            .unwrap()
            .contains("merge queue: checking T1, T2"));
    }
}
