//! Folding one event into a [`RunView`]. Every field is optional: an event
//! without the fields it needs changes nothing, so a log from another
//! engine version folds as far as it can.

use super::{failure_of, AttemptOutcome, AttemptView, Check, PausedPool, RunView};
use crate::agent::Usage;
use crate::store::TicketState;
use serde_json::Value;
use std::path::Path;

fn text<'v>(e: &'v Value, key: &str) -> Option<&'v str> {
    e.get(key).and_then(Value::as_str)
}

fn number(e: &Value, key: &str) -> Option<u64> {
    e.get(key).and_then(Value::as_u64)
}

/// The event's time in ms since the epoch: a numeric millisecond field
/// (`at_ms`, `ts_ms`, `ts`), or `at` as RFC 3339 text or a number.
fn event_time(e: &Value) -> Option<i64> {
    for key in ["at_ms", "ts_ms", "ts", "time_ms"] {
        if let Some(ms) = e.get(key).and_then(Value::as_i64) {
            return Some(ms);
        }
    }
    match e.get("at")? {
        Value::String(s) => parse_time(s),
        Value::Number(n) => n.as_i64(),
        _ => None,
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
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs * 1000 + ms)
}

// Howard Hinnant's civil-to-days algorithm (the inverse of clock.rs's).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Usage from an event: a `usage` object with token counts.
fn usage_of(e: &Value) -> Option<Usage> {
    let u = e.get("usage").filter(|u| u.is_object())?;
    let n = |k: &str| number(u, k).unwrap_or(0);
    Some(Usage {
        input_tokens: n("input_tokens"),
        output_tokens: n("output_tokens"),
        cache_read_tokens: n("cache_read_tokens"),
        cache_write_tokens: n("cache_write_tokens"),
    })
}

/// Cost in US dollars: `cost_usd`, a numeric `cost`, or `cost.usd` / `cost.amount`.
fn cost_of(e: &Value) -> Option<f64> {
    if let Some(c) = e.get("cost_usd").and_then(Value::as_f64) {
        return Some(c);
    }
    match e.get("cost")? {
        Value::Number(n) => n.as_f64(),
        obj @ Value::Object(_) => ["usd", "amount", "value"]
            .iter()
            .find_map(|k| obj.get(*k).and_then(Value::as_f64)),
        _ => None,
    }
}

/// A gate, review or counterfactual result from an event.
fn check_of(e: &Value) -> Check {
    let name = ["name", "gate", "check", "test", "reviewer"]
        .iter()
        .find_map(|k| text(e, k))
        .unwrap_or("")
        .to_string();
    let passed = ["passed", "ok", "pass"]
        .iter()
        .find_map(|k| e.get(*k).and_then(Value::as_bool))
        .or_else(|| e.get("exit_code").and_then(Value::as_i64).map(|c| c == 0));
    let detail = ["verdict", "detail", "result", "message", "exit"]
        .iter()
        .find_map(|k| {
            e.get(*k)
                .map(|v| v.as_str().map_or(v.to_string(), String::from))
        })
        .unwrap_or_default();
    Check {
        name,
        passed,
        detail,
        output_excerpt: text(e, "output_excerpt").map(String::from),
    }
}

impl RunView {
    /// Folds one event (a JSON object).
    pub fn apply(&mut self, e: &Value) {
        let Some(name) = text(e, "event") else {
            self.skipped_lines += 1;
            return;
        };
        self.events += 1;
        let at = event_time(e);
        if at.is_some() {
            self.run.last_event_ms = at;
        }
        self.subsecond_times |= at.is_some_and(|ms| ms % 1000 != 0);
        match name {
            "run_started" => self.run_started(e, at),
            "run_finished" => self.run_finished(e, at),
            "pool_paused" => {
                if let Some(pool) = text(e, "pool") {
                    let reason = text(e, "reason").unwrap_or("").to_string();
                    let until = text(e, "until").map(String::from);
                    self.paused
                        .insert(pool.to_string(), PausedPool { reason, until });
                }
            }
            "removed" => {
                if let Some(id) = text(e, "ticket") {
                    self.forget(id);
                }
            }
            "pool_resumed" => {
                if let Some(pool) = text(e, "pool") {
                    self.paused.remove(pool);
                }
            }
            _ => self.ticket_event(name, e, at),
        }
        self.attach_extras(name, e);
    }

    fn run_started(&mut self, e: &Value, at: Option<i64>) {
        self.run.status = "running".into();
        self.run.finished_ms = None;
        if let Some(base) = text(e, "base") {
            self.run.base = base.to_string();
        }
        if self.run.started_ms.is_none() || self.events == 1 {
            self.run.started_ms = at.or(self.run.started_ms);
        }
        // A continued run starts every unmerged ticket afresh (as the
        // engine does); attempts the log never saw end stopped with it.
        self.close_open_attempts(at);
        for t in &mut self.tickets {
            if !matches!(t.state, TicketState::Merged) {
                t.state = TicketState::Pending;
                t.blocked_by = None;
            }
            t.phase = None;
        }
    }

    fn run_finished(&mut self, e: &Value, at: Option<i64>) {
        let interrupted = e.get("interrupted").and_then(Value::as_bool) == Some(true);
        self.run.status = if interrupted {
            "interrupted"
        } else {
            "finished"
        }
        .into();
        self.run.finished_ms = at;
        self.close_open_attempts(at);
    }

    fn close_open_attempts(&mut self, at: Option<i64>) {
        for t in &mut self.tickets {
            if let Some(a) = t.attempts.last_mut() {
                if a.outcome == AttemptOutcome::Running {
                    a.outcome = AttemptOutcome::Interrupted;
                    a.ended_ms = at;
                    a.ended_event = Some(self.events);
                }
            }
            if matches!(t.state, TicketState::Running | TicketState::Merging) {
                t.state = TicketState::Pending;
            }
            t.phase = None;
        }
        self.slots.iter_mut().for_each(|s| *s = None);
    }

    /// Forgets ticket `id`, which a continued run's plan no longer has, as
    /// the run does: each index past it moves down by one.
    fn forget(&mut self, id: &str) {
        let Some(gone) = self.index.remove(id) else {
            return;
        };
        self.tickets.remove(gone);
        let shift = |i: usize| if i > gone { i - 1 } else { i };
        self.index.values_mut().for_each(|i| *i = shift(*i));
        for wave in &mut self.waves {
            wave.retain(|&i| i != gone);
            wave.iter_mut().for_each(|i| *i = shift(*i));
        }
        self.waves.retain(|w| !w.is_empty());
        for (w, wave) in self.waves.iter().enumerate() {
            wave.iter().for_each(|&i| self.tickets[i].wave = w);
        }
        self.edges = (self.edges.iter())
            .filter(|&&(d, t)| d != gone && t != gone)
            .map(|&(d, t)| (shift(d), shift(t)))
            .collect();
        for slot in &mut self.slots {
            *slot = slot.filter(|&(i, _)| i != gone).map(|(i, n)| (shift(i), n));
        }
    }

    /// The ticket index of an event about a ticket, adding a ticket the
    /// state store did not list (a log read before the store caught up).
    fn ticket_index(&mut self, e: &Value) -> Option<usize> {
        let id = text(e, "ticket")?;
        if let Some(&i) = self.index.get(id) {
            return Some(i);
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
        Some(i)
    }

    fn ticket_event(&mut self, name: &str, e: &Value, at: Option<i64>) {
        let Some(i) = self.ticket_index(e) else {
            return;
        };
        match name {
            "already_merged" => self.tickets[i].state = TicketState::Merged,
            "attempt_started" => self.attempt_started(i, e, at),
            "phase" => {
                let phase = text(e, "phase").unwrap_or("").to_string();
                if let Some(a) = self.attempt_mut(i, e) {
                    a.phase = phase.clone();
                }
                self.tickets[i].phase = Some(phase);
            }
            "attempt_rejected" => {
                let failure = failure_of(e.get("failure"));
                self.end_attempt(i, e, at, AttemptOutcome::Rejected);
                if let Some(a) = self.attempt_mut(i, e) {
                    a.outcome = AttemptOutcome::Rejected;
                    a.failure = failure.clone();
                }
                let t = &mut self.tickets[i];
                t.state = TicketState::Pending;
                t.phase = None;
                t.failure = failure.or(t.failure.take());
            }
            "merging" => {
                self.end_attempt(i, e, at, AttemptOutcome::Passed);
                self.tickets[i].state = TicketState::Merging;
                self.tickets[i].phase = Some("merge".into());
            }
            "merged" => self.merged(i, e),
            "failed" => {
                let t = &mut self.tickets[i];
                t.state = TicketState::Failed;
                t.phase = None;
                t.failure = failure_of(e.get("failure")).or(t.failure.take());
            }
            "blocked" => {
                let t = &mut self.tickets[i];
                t.state = TicketState::Blocked;
                t.blocked_by = text(e, "by").map(String::from);
            }
            _ => {}
        }
    }

    fn attempt_started(&mut self, i: usize, e: &Value, at: Option<i64>) {
        let n = number(e, "attempt").unwrap_or(self.tickets[i].attempts.len() as u64 + 1) as u32;
        // An attempt the log never saw end was stopped by an interrupt.
        if let Some(prev) = self.tickets[i].attempts.last().map(|a| a.n) {
            self.end_attempt_n(i, prev, at, AttemptOutcome::Interrupted);
        }
        let explicit = ["slot", "lane"]
            .iter()
            .find_map(|k| number(e, k))
            .map(|s| s as usize);
        let slot = explicit.unwrap_or_else(|| {
            self.slots
                .iter()
                .position(Option::is_none)
                .unwrap_or(self.slots.len())
        });
        if self.slots.len() <= slot {
            self.slots.resize(slot + 1, None);
        }
        self.slots[slot] = Some((i, n));
        let t = &mut self.tickets[i];
        t.attempts.retain(|a| a.n != n);
        t.attempts.push(AttemptView {
            n,
            slot: Some(slot),
            base_commit: text(e, "base_commit").map(String::from),
            started_ms: at,
            started_event: self.events,
            ended_event: None,
            ended_ms: None,
            phase: "starting".into(),
            outcome: AttemptOutcome::Running,
            failure: None,
            usage: None,
            cost_usd: None,
            cost_source: None,
            agent_outcome: None,
            model: text(e, "model").map(String::from),
            gates: vec![],
            reviews: vec![],
            counterfactuals: vec![],
            gates_from_events: false,
        });
        t.state = TicketState::Running;
        t.phase = Some("starting".into());
        t.blocked_by = None;
        if self.base_before.is_none() {
            self.base_before = text(e, "base_commit").map(String::from);
        }
    }

    fn merged(&mut self, i: usize, e: &Value) {
        let commit = text(e, "commit").map(String::from);
        if let Some(a) = self.tickets[i].attempts.last_mut() {
            if a.outcome == AttemptOutcome::Passed {
                a.outcome = AttemptOutcome::Merged;
            }
        }
        let t = &mut self.tickets[i];
        t.state = TicketState::Merged;
        t.phase = None;
        t.failure = None;
        if commit.is_some() {
            t.merged_commit = commit.clone();
            self.base_after = commit;
        }
    }

    /// The attempt an event names (`attempt`), else the ticket's last.
    fn attempt_mut(&mut self, i: usize, e: &Value) -> Option<&mut AttemptView> {
        let attempts = &mut self.tickets[i].attempts;
        match number(e, "attempt") {
            Some(n) => attempts.iter_mut().rev().find(|a| u64::from(a.n) == n),
            None => attempts.last_mut(),
        }
    }

    /// Ends the attempt an event names if it still runs, freeing its slot.
    fn end_attempt(&mut self, i: usize, e: &Value, at: Option<i64>, how: AttemptOutcome) {
        let n = self.attempt_mut(i, e).map(|a| a.n);
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

    /// Usage, cost, model and check results any event about an attempt may carry.
    fn attach_extras(&mut self, name: &str, e: &Value) {
        let Some(i) = text(e, "ticket").and_then(|id| self.index.get(id).copied()) else {
            return;
        };
        let (usage, cost, model) = (usage_of(e), cost_of(e), text(e, "model"));
        let kind = if name.starts_with("gate") {
            Some(0)
        } else if name.starts_with("review") {
            Some(1)
        } else if name.starts_with("counterfactual") {
            Some(2)
        } else {
            None
        };
        let Some(a) = self.attempt_mut(i, e) else {
            return;
        };
        // The last figure wins: an engine may repeat an attempt's totals.
        a.usage = usage.or(a.usage);
        a.cost_usd = cost.or(a.cost_usd);
        if let Some(m) = model {
            a.model = Some(m.to_string());
        }
        if let Some(src) = text(e, "cost_source") {
            a.cost_source = Some(src.to_string());
        }
        if name == "agent_reported" {
            a.agent_outcome = text(e, "outcome").map(String::from);
        }
        match kind {
            Some(0) => {
                if !a.gates_from_events {
                    a.gates.clear();
                    a.gates_from_events = true;
                }
                a.gates.push(check_of(e));
            }
            Some(1) => a.reviews.push(check_of(e)),
            Some(2) => a.counterfactuals.push(check_of(e)),
            _ => {}
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
                if !a.gates_from_events {
                    a.gates = checks;
                }
            }
        }
    }
}

/// (attempt, its gate results) from a ticket log. Gates run again after a
/// merge onto a moved base are counted with the attempt before them.
pub fn parse_gate_log(log: &str) -> Vec<(u32, Vec<Check>)> {
    let mut out: Vec<(u32, Vec<Check>)> = vec![];
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
                checks.push(Check {
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
