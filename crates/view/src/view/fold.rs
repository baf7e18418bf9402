//! Folding typed [`Event`]s into a [`RunView`]. A line of the log is read
//! as an [`Event`] with the stamp the engine's JSON-lines reporter adds; a
//! line naming an event this version does not know (a newer engine's, or
//! one without a field this version needs) is counted and passed over, so
//! a log from another engine version folds as far as it can.

use super::{AttemptOutcome, AttemptView, CheckResult, PausedPool, RunView};
use planwright_engine::agent::Activity;
use planwright_engine::clock::days_from_civil;
use planwright_engine::Event;
use planwright_engine::Failure;
use planwright_engine::{transition, Phase, RunStatus, Step, TicketState};
use serde::Deserialize;
use std::path::Path;

/// One line of `events.jsonl` that is an event this version knows.
#[derive(Deserialize)]
struct Logged {
    /// RFC 3339 UTC, the only time of older logs.
    #[serde(default)]
    at: Option<String>,
    /// Milliseconds since the epoch, when the engine stamped them.
    #[serde(default)]
    at_ms: Option<i64>,
    #[serde(flatten)]
    event: Event,
}

/// One line that names an event, of a kind (or shape) this version does
/// not know: it still takes its place in the order of events.
#[derive(Deserialize)]
struct Unknown {
    #[serde(rename = "event")]
    _event: String,
    #[serde(default)]
    at: Option<String>,
    #[serde(default)]
    at_ms: Option<i64>,
}

/// What one line of the log is.
pub(super) enum Line {
    /// An event, with its time in ms since the epoch.
    Event(Box<Event>, Option<i64>),
    /// An event this version does not know, with its time.
    Unknown(Option<i64>),
    /// Not an event (half-written, foreign).
    Foreign,
}

/// Reads one line of the log.
pub(super) fn read_line(line: &str) -> Line {
    let time = |at: Option<String>, at_ms: Option<i64>| {
        at_ms.or_else(|| at.as_deref().and_then(parse_time))
    };
    if let Ok(l) = serde_json::from_str::<Logged>(line) {
        return Line::Event(Box::new(l.event), time(l.at, l.at_ms));
    }
    match serde_json::from_str::<Unknown>(line) {
        Ok(u) => Line::Unknown(time(u.at, u.at_ms)),
        Err(_) => Line::Foreign,
    }
}

/// Parses RFC 3339 UTC (`2026-11-29T21:42:11Z`, optional fraction, or an
/// offset) into ms since the epoch; None for anything else.
pub fn parse_time(s: &str) -> Option<i64> {
    let s = s.trim();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = s.get(19..)?;
    let mut ms = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        let padded = format!("{:0<3}", &frac[..digits.min(3)]);
        ms = padded.parse::<i64>().ok()?;
        rest = &frac[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" => 0,
        o if o.len() == 6 && (o.starts_with('+') || o.starts_with('-')) => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            let hh: i64 = o.get(1..3)?.parse().ok()?;
            let mm: i64 = o.get(4..6)?.parse().ok()?;
            sign * (hh * 60 + mm)
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d)?;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs * 1000 + ms)
}

impl RunView {
    /// Folds one event, which happened at `at_ms` (ms since the epoch)
    /// when known.
    pub fn apply(&mut self, event: &Event, at_ms: Option<i64>) {
        self.stamp(at_ms);
        match event {
            Event::RunStarted { base, .. } => self.run_started(base, at_ms),
            Event::RunFinished { interrupted, .. } => self.run_finished(*interrupted, at_ms),
            Event::PoolPaused {
                pool,
                reason,
                until,
                ..
            } => {
                if let Some(pool) = pool {
                    let (reason, until) = (reason.clone(), until.clone());
                    self.paused
                        .insert(pool.clone(), PausedPool { reason, until });
                }
            }
            Event::PoolResumed { pool } => {
                self.paused.remove(pool);
            }
            Event::Removed { ticket } => self.removed(ticket),
            Event::BatchStarted { tickets, .. } => self.batches.push(super::BatchView {
                tickets: tickets.clone(),
                state: "checking".into(),
                flaky: false,
                landed: Vec::new(),
                culprit: None,
            }),
            Event::BatchVerified { tickets, flaky, .. } => {
                if let Some(b) = self.batch_mut(tickets) {
                    b.state = "verified".into();
                    b.flaky = *flaky;
                }
            }
            Event::BatchFailed { tickets, .. } => {
                if let Some(b) = self.batch_mut(tickets) {
                    b.state = "failed".into();
                }
            }
            Event::BatchCancelled { tickets, .. } => {
                if let Some(b) = self.batch_mut(tickets) {
                    b.state = "cancelled".into();
                }
            }
            Event::BatchLanded { tickets, .. } => {
                if let Some(b) = self.batch_mut(tickets) {
                    b.state = "landed".into();
                    b.landed = tickets.clone();
                }
            }
            Event::Bisected { culprit, .. } => {
                // The shortest red stack ends with its culprit.
                let shortest = (self.batches.iter_mut().rev())
                    .find(|b| b.state == "failed" && b.tickets.last() == Some(culprit));
                if let Some(b) = shortest {
                    b.culprit = Some(culprit.clone());
                }
            }
            _ => {
                if let Some(id) = event.ticket() {
                    let i = self.ticket_index(id);
                    self.ticket_event(i, event, at_ms);
                }
            }
        }
    }

    /// The newest stack of `tickets`, which its outcome belongs to.
    fn batch_mut(&mut self, tickets: &[String]) -> Option<&mut super::BatchView> {
        (self.batches.iter_mut().rev()).find(|b| b.tickets == tickets)
    }

    /// Counts an event this version does not know: it keeps its place in
    /// the order of events and its time.
    pub(super) fn apply_unknown(&mut self, at_ms: Option<i64>) {
        self.stamp(at_ms);
    }

    fn stamp(&mut self, at: Option<i64>) {
        self.events += 1;
        if at.is_some() {
            self.run.last_event_ms = at;
        }
        self.subsecond_times |= at.is_some_and(|ms| ms % 1000 != 0);
    }

    fn run_started(&mut self, base: &str, at: Option<i64>) {
        self.run.status = RunStatus::Running;
        self.run.finished_ms = None;
        self.run.base = base.to_string();
        if self.run.started_ms.is_none() || self.events == 1 {
            self.run.started_ms = at.or(self.run.started_ms);
        }
        // A continued run starts every unmerged ticket afresh (as the
        // engine does); attempts the log never saw end stopped with it.
        self.close_open_attempts(at);
        for t in &mut self.tickets {
            if !matches!(t.state, TicketState::Merged) {
                replay(&mut t.state, Step::Reopen);
                t.blocked_by = None;
            }
            t.phase = None;
            // `removed` events follow for what this invocation's plan lacks.
            t.removed = false;
        }
    }

    fn run_finished(&mut self, interrupted: bool, at: Option<i64>) {
        self.run.status = if interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Finished
        };
        self.run.finished_ms = at;
        self.close_open_attempts(at);
    }

    fn close_open_attempts(&mut self, at: Option<i64>) {
        self.end_open_attempts(at);
        for t in &mut self.tickets {
            // What the log never saw end stopped with the run.
            if matches!(t.state, TicketState::Running | TicketState::Merging) {
                replay(&mut t.state, Step::Reopen);
            }
        }
    }

    /// Ends every attempt still open as interrupted at `at`, and frees
    /// every slot.
    pub(super) fn end_open_attempts(&mut self, at: Option<i64>) {
        for t in &mut self.tickets {
            if let Some(a) = t.attempts.last_mut() {
                if a.outcome == AttemptOutcome::Running {
                    a.outcome = AttemptOutcome::Interrupted;
                    a.ended_ms = at;
                    a.ended_event = Some(self.events);
                }
            }
            t.phase = None;
        }
        self.slots.iter_mut().for_each(|s| *s = None);
    }

    /// Marks ticket `id` removed: the plan of the run's invocation that
    /// just started no longer has it. It keeps its attempts, its place in
    /// the list and the waves it had when the view was laid out (a view
    /// laid out since holds the plan's tickets only).
    fn removed(&mut self, id: &str) {
        if let Some(&i) = self.index.get(id) {
            self.tickets[i].removed = true;
        }
    }

    /// The index of ticket `id`, adding a ticket the state store did not
    /// list (a log read before the store caught up).
    fn ticket_index(&mut self, id: &str) -> usize {
        if let Some(&i) = self.index.get(id) {
            return i;
        }
        let i = self.tickets.len();
        self.tickets.push(super::TicketView::new(id, ""));
        self.index.insert(id.to_string(), i);
        match self.waves.last_mut() {
            Some(w) => {
                w.push(i);
                self.tickets[i].wave = self.waves.len() - 1;
            }
            None => self.waves.push(vec![i]),
        }
        i
    }

    fn ticket_event(&mut self, i: usize, event: &Event, at: Option<i64>) {
        match event {
            Event::AlreadyMerged { .. } => replay(&mut self.tickets[i].state, Step::Landed),
            Event::AttemptStarted {
                attempt,
                base_commit,
                agent,
                place,
                ..
            } => {
                self.attempt_started(i, *attempt, base_commit, at);
                if let Some(a) = self.attempt_mut(i, Some(*attempt)) {
                    a.ran_by = agent.clone();
                    a.ran_at = place.clone();
                }
            }
            Event::Phase { attempt, phase, .. } => {
                if let Some(a) = self.attempt_mut(i, Some(*attempt)) {
                    a.phase = *phase;
                }
                self.tickets[i].phase = Some(*phase);
            }
            Event::AttemptRejected {
                attempt, failure, ..
            } => self.attempt_rejected(i, *attempt, failure, at),
            Event::Merging { .. } => {
                self.end_attempt(i, None, at, AttemptOutcome::Passed);
                replay(&mut self.tickets[i].state, Step::BeginMerge);
                // Its attempt is over: the state says it is merging.
                self.tickets[i].phase = None;
            }
            Event::Merged { commit, .. } => self.merged(i, commit),
            Event::Unchanged {
                attempt, commit, ..
            } => {
                self.end_attempt(i, Some(*attempt), at, AttemptOutcome::Unchanged);
                let t = &mut self.tickets[i];
                replay(&mut t.state, Step::Landed);
                t.phase = None;
                t.failure = None;
                t.merged_commit = Some(commit.clone());
            }
            Event::Failed { failure, .. } => {
                let t = &mut self.tickets[i];
                replay(&mut t.state, Step::Fail);
                t.phase = None;
                t.failure = Some(failure.clone());
            }
            Event::Blocked { by, .. } => {
                let t = &mut self.tickets[i];
                replay(&mut t.state, Step::Block);
                t.blocked_by = Some(by.clone());
            }
            _ => self.attempt_report(i, event),
        }
    }

    fn attempt_started(&mut self, i: usize, n: u32, base_commit: &str, at: Option<i64>) {
        // An attempt the log never saw end was stopped by an interrupt.
        if let Some(prev) = self.tickets[i].attempts.last().map(|a| a.n) {
            self.end_attempt_n(i, prev, at, AttemptOutcome::Interrupted);
        }
        let slot = (self.slots.iter().position(Option::is_none)).unwrap_or(self.slots.len());
        if self.slots.len() <= slot {
            self.slots.resize(slot + 1, None);
        }
        self.slots[slot] = Some((i, n));
        let t = &mut self.tickets[i];
        t.attempts.retain(|a| a.n != n);
        t.attempts
            .push(AttemptView::new(n, slot, base_commit, at, self.events));
        replay(&mut t.state, Step::Start);
        t.phase = Some(Phase::Starting);
        t.blocked_by = None;
        if self.base_before.is_none() {
            self.base_before = Some(base_commit.to_string());
        }
    }

    fn attempt_rejected(&mut self, i: usize, n: u32, failure: &Failure, at: Option<i64>) {
        self.end_attempt(i, Some(n), at, AttemptOutcome::Rejected);
        if let Some(a) = self.attempt_mut(i, Some(n)) {
            a.outcome = AttemptOutcome::Rejected;
            a.failure = Some(failure.clone());
        }
        let t = &mut self.tickets[i];
        replay(&mut t.state, Step::Retry);
        t.phase = None;
        t.failure = Some(failure.clone());
    }

    fn merged(&mut self, i: usize, commit: &str) {
        if let Some(a) = self.tickets[i].attempts.last_mut() {
            if a.outcome == AttemptOutcome::Passed {
                a.outcome = AttemptOutcome::Merged;
            }
        }
        let t = &mut self.tickets[i];
        replay(&mut t.state, Step::Merge);
        t.phase = None;
        t.failure = None;
        t.merged_commit = Some(commit.to_string());
        self.base_after = Some(commit.to_string());
    }

    /// What the agent, the reviewers and the counterfactuals of an attempt
    /// said about it.
    fn attempt_report(&mut self, i: usize, event: &Event) {
        match event {
            Event::AgentUsage {
                attempt,
                model,
                usage,
                ..
            } => {
                if let Some(a) = self.attempt_mut(i, Some(*attempt)) {
                    // The last figure wins: a running total grows.
                    a.usage = Some(*usage);
                    a.model = model.clone().or(a.model.take());
                }
            }
            Event::AgentActivity {
                attempt,
                kind,
                text,
                status,
                ..
            } => {
                if let Some(a) = self.attempt_mut(i, Some(*attempt)) {
                    a.activity.push(Activity {
                        kind: *kind,
                        text: text.clone(),
                        status: status.clone(),
                    });
                }
            }
            Event::AgentReported {
                attempt,
                outcome,
                model,
                usage,
                cost_usd,
                cost_source,
                ..
            } => {
                if let Some(a) = self.attempt_mut(i, Some(*attempt)) {
                    a.usage = usage.or(a.usage);
                    a.cost_usd = cost_usd.or(a.cost_usd);
                    a.model = model.clone().or(a.model.take());
                    a.cost_source = cost_source.or(a.cost_source);
                    a.agent_outcome = Some(*outcome);
                }
            }
            Event::Review {
                attempt,
                reviewer,
                verdict,
                passed,
                ..
            } => {
                if let Some(a) = self.attempt_mut(i, Some(*attempt)) {
                    a.reviews.push(CheckResult {
                        name: reviewer.clone().unwrap_or_default(),
                        passed: Some(*passed),
                        detail: verdict.to_string(),
                        output_excerpt: None,
                    });
                }
            }
            Event::Counterfactual {
                attempt,
                test,
                passed,
                message,
                output_excerpt,
                ..
            } => {
                if let Some(a) = self.attempt_mut(i, Some(*attempt)) {
                    a.counterfactuals.push(CheckResult {
                        name: test.clone(),
                        passed: Some(*passed),
                        detail: message.clone(),
                        output_excerpt: Some(output_excerpt.clone()),
                    });
                }
            }
            _ => {}
        }
    }

    /// Attempt `n` of ticket `i` (its newest with that number), else its last.
    fn attempt_mut(&mut self, i: usize, n: Option<u32>) -> Option<&mut AttemptView> {
        let attempts = &mut self.tickets[i].attempts;
        match n {
            Some(n) => attempts.iter_mut().rev().find(|a| a.n == n),
            None => attempts.last_mut(),
        }
    }

    /// Ends attempt `n` (else the last) if it still runs, freeing its slot.
    fn end_attempt(&mut self, i: usize, n: Option<u32>, at: Option<i64>, how: AttemptOutcome) {
        let n = self.attempt_mut(i, n).map(|a| a.n);
        if let Some(n) = n {
            self.end_attempt_n(i, n, at, how);
        }
    }

    fn end_attempt_n(&mut self, i: usize, n: u32, at: Option<i64>, how: AttemptOutcome) {
        if let Some(a) = self.tickets[i].attempts.iter_mut().find(|a| a.n == n) {
            if a.outcome == AttemptOutcome::Running {
                a.outcome = how;
                a.ended_ms = at;
                a.ended_event = Some(self.events);
            }
        }
        for s in &mut self.slots {
            if *s == Some((i, n)) {
                *s = None;
            }
        }
    }
}

/// Gate results from each ticket's `ticket.log` (`== attempt N ...`, then
/// `$ command` and `-> exit` per gate), for attempts whose events carry
/// none. Followers call it again after new events: the log only grows.
pub fn read_gate_logs(view: &mut RunView, run_dir: &Path) {
    for t in &mut view.tickets {
        let Ok(log) = std::fs::read_to_string(run_dir.join(&t.id).join("ticket.log")) else {
            continue;
        };
        for (n, checks) in parse_gate_log(&log) {
            if let Some(a) = t.attempts.iter_mut().find(|a| a.n == n) {
                a.gates = checks;
            }
        }
    }
}

/// (attempt, its gate results) from a ticket log. Gates run again after a
/// merge onto a moved base are counted with the attempt before them.
pub(crate) fn parse_gate_log(log: &str) -> Vec<(u32, Vec<CheckResult>)> {
    let mut out: Vec<(u32, Vec<CheckResult>)> = vec![];
    let mut pending: Option<String> = None;
    let mut merged_tree = false;
    for line in log.lines() {
        if let Some(rest) = line.strip_prefix("== attempt ") {
            if let Some(n) = rest.split_whitespace().next().and_then(|n| n.parse().ok()) {
                out.push((n, vec![]));
                merged_tree = false;
            }
        } else if line.starts_with("-- gates again on the merged tree") {
            merged_tree = true;
        } else if let Some(cmd) = line.strip_prefix("$ ") {
            let cmd = cmd.split("   (in ").next().unwrap_or(cmd).trim();
            let suffix = if merged_tree { " (merged tree)" } else { "" };
            pending = Some(format!("{cmd}{suffix}"));
        } else if let Some(exit) = line.strip_prefix("-> ") {
            if let (Some(name), Some((_, checks))) = (pending.take(), out.last_mut()) {
                let exit = exit.trim();
                checks.push(CheckResult {
                    name,
                    passed: Some(exit == "exit code 0"),
                    detail: exit.to_string(),
                    output_excerpt: None,
                });
            }
        }
    }
    out
}

/// A ticket's state after the engine's `step`, by the engine's one state
/// machine. Where the log lacks the step before (a run stopped between
/// them, a verified ticket an earlier invocation left), the state is the
/// step's own target, as the engine's store says it is.
fn replay(state: &mut TicketState, step: Step) {
    *state = transition(*state, step).unwrap_or(step.to());
}
