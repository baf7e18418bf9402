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

/// The state whose colour an event's line takes (as `status` colours its
/// states: see [`crate::render::paint`]); None for a line left plain.
fn tone(event: &Event) -> Option<&'static str> {
    Some(match event {
        Event::Merged { .. } | Event::Unchanged { .. } | Event::AlreadyMerged { .. } => "merged",
        Event::Changed { .. } => "changed",
        Event::Failed { .. } => "failed",
        Event::AttemptRejected { .. } => "rejected",
        Event::Blocked { .. } => "blocked",
        Event::AttemptStarted { .. } | Event::Merging { .. } => "running",
        Event::RunFinished {
            interrupted: true, ..
        } => "interrupted",
        Event::RunFinished {
            failed_count,
            blocked_count,
            ..
        } => match failed_count + blocked_count {
            0 => "merged",
            _ => "failed",
        },
        _ => return None,
    })
}

/// [`describe`]'s line, in its event's colour when `color`.
pub(crate) fn describe_painted(event: &Event, color: bool) -> Option<String> {
    let line = describe(event)?;
    Some(match tone(event) {
        Some(state) => crate::render::paint(&line, state, color),
        None => line,
    })
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
        | Event::WorkerResumed { .. }
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
            format!("{ticket}: no longer in the plan; kept in the run's views as removed, with its attempts")
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
        Event::WorkerResumed {
            ticket,
            place,
            reason,
            after_ms,
            ..
        } => format!(
            "{ticket}: the connection to its worker at {place} broke ({reason}); a new one resumed the attempt after {:.1}s",
            *after_ms as f64 / 1000.0
        ),
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
    /// Whether lines are in their event's colour (`--color`, `NO_COLOR`).
    color: bool,
}

impl<W: Write + Send> Plain<W> {
    /// The same reporter, its lines in colour when `color`.
    pub(crate) fn colored(self, color: bool) -> Self {
        Plain { color, ..self }
    }

    /// Writes to `out`.
    pub(crate) fn new(out: W) -> Self {
        Plain {
            out,
            phases: false,
            queue: true,
            color: false,
        }
    }

    /// Writes to `out`, with a line for every phase of an attempt too (`--verbose`).
    pub(crate) fn verbose(out: W) -> Self {
        Plain {
            out,
            phases: true,
            queue: true,
            color: false,
        }
    }

    /// Writes to `out` what happened to each ticket, without the merge
    /// queue's own steps (the demo's first look).
    pub(crate) fn brief(out: W) -> Self {
        Plain {
            out,
            phases: false,
            queue: false,
            color: false,
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
            _ => describe_painted(event, self.color),
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
    /// As [`Plain`]'s: whether lines are in their event's colour.
    color: bool,
}

impl Terminal {
    /// A reporter drawing on stderr.
    pub(crate) fn new() -> Self {
        Terminal {
            multi: MultiProgress::new(),
            bars: HashMap::new(),
            queue: true,
            color: false,
        }
    }

    /// The same reporter, its lines in colour when `color`.
    pub(crate) fn colored(self, color: bool) -> Self {
        Terminal { color, ..self }
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
        if let Some(line) = describe_painted(event, self.color) {
            if !matches!(event, Event::AttemptStarted { .. } | Event::Merging { .. }) {
                let _ = self.multi.println(line);
            }
        }
    }
}

#[cfg(test)]
mod tests;
