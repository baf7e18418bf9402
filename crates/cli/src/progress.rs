//! Reporters for `run` and `demo`: one progress line per running ticket on a
//! terminal (indicatif), plain timestamped lines otherwise.

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use planwright_engine::{Event, Reporter};
use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// One line for an event, or None for events that only move a progress line.
pub fn describe(event: &Event) -> Option<String> {
    // What agents, gates and file names put in an event is shown, never
    // acted on by the terminal.
    line(event).map(|l| planwright_plan::words::inert(&l).into_owned())
}

fn line(event: &Event) -> Option<String> {
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
        Event::AgentUsage { .. } | Event::AgentReported { .. } => return None,
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
        Event::PoolResumed { pool } => format!("pool {pool} answered again: it is open"),
        Event::BudgetReached { reason } => format!("no new attempts: {reason}"),
        Event::BaseAdvanced { base, commit } => {
            format!("`{base}` and its checkout moved to {}", short(commit))
        }
        Event::MergesHeld { branch, reason } => {
            format!("the merged tickets wait on `{branch}`: {reason}")
        }
        Event::AttemptStarted {
            ticket,
            attempt,
            base_commit,
        } => {
            format!(
                "{ticket}: attempt {attempt} started from {}",
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
        Event::Failed { ticket, failure } => format!("{ticket}: FAILED: {failure}"),
        Event::Blocked { ticket, by } => format!("{ticket}: blocked, because {by} failed"),
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
    })
}

/// Plain `<timestamp> <line>` output.
pub struct Plain<W: Write + Send> {
    out: W,
    phases: bool,
}

impl<W: Write + Send> Plain<W> {
    /// Writes to `out`.
    pub fn new(out: W) -> Self {
        Plain { out, phases: false }
    }

    /// Writes to `out`, with a line for every phase of an attempt too (`--verbose`).
    pub fn verbose(out: W) -> Self {
        Plain { out, phases: true }
    }
}

impl<W: Write + Send> Reporter for Plain<W> {
    fn report(&mut self, at: &str, event: &Event) {
        let line = match event {
            Event::Phase {
                ticket,
                attempt,
                phase,
            } if self.phases => Some(format!("{ticket}: attempt {attempt}: {phase}")),
            _ => describe(event),
        };
        // A closed pipe (`run | head -2`) must not stop the run: its agents
        // and merges go on, and a later `status` shows where it stands.
        if let Some(line) = line {
            let _ = writeln!(self.out, "{at} {line}");
        }
    }
}

/// One spinner line per running ticket, updated in place; finished events
/// are printed above them.
pub struct Terminal {
    multi: MultiProgress,
    bars: HashMap<String, ProgressBar>,
}

impl Terminal {
    /// A reporter drawing on stderr.
    pub fn new() -> Self {
        Terminal {
            multi: MultiProgress::new(),
            bars: HashMap::new(),
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
            Event::Merged { .. } | Event::Failed { .. } | Event::AttemptRejected { .. }
        );
        if done {
            if let Some(bar) = event.ticket().and_then(|t| self.bars.remove(t)) {
                bar.finish_and_clear();
                self.multi.remove(&bar);
            }
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
    use planwright_engine::{Failure, FailureKind};

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
            },
            Event::Phase {
                ticket: "T2".into(),
                attempt: 1,
                phase: "agent".into(),
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
}
