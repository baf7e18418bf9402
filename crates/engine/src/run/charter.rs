//! The charter: the prompt an agent gets for one attempt of one ticket.

use crate::model::failure::{Failure, FailureKind};
use planwright_plan::model::{Gate, ScopeOp, Ticket};
use std::fmt::Write;

/// Everything the charter says.
pub struct Charter<'a> {
    /// The ticket.
    pub ticket: &'a Ticket,
    /// All gates the ticket must pass (plan's, ticket's, configured).
    pub gates: &'a [Gate],
    /// The attempt number (1-based).
    pub attempt: u32,
    /// The previous attempt's failure, on a retry.
    pub previous: Option<&'a Failure>,
    /// Whether a reviewer will judge the ticket's checks; without one they
    /// are the agent's guidance only, and the charter says so.
    pub checks_judged: bool,
}

fn op_text(op: &ScopeOp) -> String {
    match op {
        ScopeOp::Any => "create, modify or delete".into(),
        ScopeOp::Create => "create (must not exist yet)".into(),
        ScopeOp::Modify => "modify (must already exist)".into(),
        ScopeOp::Delete => "delete".into(),
        ScopeOp::Rename { from } => format!("rename from `{from}`"),
    }
}

impl Charter<'_> {
    /// The prompt text (Markdown).
    pub fn render(&self) -> String {
        let t = self.ticket;
        let mut s = String::new();
        let title = if t.title.is_empty() { &t.id } else { &t.title };
        let _ = writeln!(s, "# Ticket {}: {title}\n", t.id);
        let _ = writeln!(s, "{}\n", t.body.trim());
        let _ = writeln!(s, "## Scope\n\nYou may change only these paths:\n");
        for e in &t.scope {
            let _ = writeln!(s, "- `{}`: {}", e.pattern, op_text(&e.op));
        }
        self.changes(&mut s);
        if !t.rails.is_empty() {
            let _ = writeln!(
                s,
                "\n## Rails\n\nNever change these paths (read them freely):\n"
            );
            for r in &t.rails {
                let _ = writeln!(s, "- `{r}`");
            }
        }
        if !self.gates.is_empty() {
            let _ = writeln!(
                s,
                "\n## Gates\n\nThese commands must exit 0 on your result:\n"
            );
            for g in self.gates {
                let _ = writeln!(s, "- `{}`", g.command_line());
            }
        }
        if !t.checks.is_empty() {
            let _ = if self.checks_judged {
                writeln!(s, "\n## Checks a reviewer will make\n")
            } else {
                writeln!(
                    s,
                    "\n## Checks to satisfy\n\nNo reviewer will judge these; only the gates decide. \
                     Meet them anyway: they say what the finished change does.\n"
                )
            };
            for c in &t.checks {
                let _ = writeln!(s, "- {c}");
            }
        }
        let _ = writeln!(
            s,
            "\n## Definition of done\n\nThe change is complete, stays inside the scope, leaves the rails untouched, \
             and every gate passes. You need not commit: planwright commits the workspace as one commit (commits you make are folded into it). \
             If you cannot finish, print a last line `TICKET-BLOCKED: <reason>`."
        );
        if let Some(f) = self.previous {
            self.previous_failure(&mut s, f);
        }
        s
    }

    /// What the plan says to change in each file (codeboost's per-file
    /// `change`, kept as the ticket's `changes`), file by file in scope order.
    fn changes(&self, s: &mut String) {
        let Some(changes) = self
            .ticket
            .metadata
            .get("changes")
            .and_then(|c| c.as_object())
        else {
            return;
        };
        let texts: Vec<(&str, &str)> = (self.ticket.scope.iter())
            .filter_map(|e| {
                let text = changes.get(&e.pattern)?.as_str()?.trim();
                (!text.is_empty()).then_some((e.pattern.as_str(), text))
            })
            .collect();
        if texts.is_empty() {
            return;
        }
        let _ = writeln!(s, "\n## What to change, file by file\n");
        for (path, text) in texts {
            let _ = writeln!(s, "- `{path}`: {}", text.replace('\n', "\n  "));
        }
    }

    /// What the previous attempt ran into. A merge conflict is not the
    /// agent's mistake: it is told what moved under it and rebuilds.
    fn previous_failure(&self, s: &mut String, f: &Failure) {
        let before = self.attempt - 1;
        if f.kind == FailureKind::MergeConflict {
            let _ = writeln!(
                s,
                "\n## Attempt {before} could not be merged\n\nIts change passed every check, but the base branch moved \
                 meanwhile and the change no longer merges onto it ({}). This attempt starts from the current base: \
                 make the change again on top of it, keeping what the other side changed.",
                f.message
            );
        } else {
            let _ = writeln!(
                s,
                "\n## Attempt {before} was rejected\n\nThis is attempt {} of this ticket. Fix this first:\n\n{}: {}",
                self.attempt, f.kind, f.message
            );
        }
        if !f.evidence.is_empty() {
            let _ = writeln!(s, "\n```\n{}\n```", f.evidence.trim_end());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_charter_carries_the_evidence() {
        let ticket: Ticket = serde_json::from_value(serde_json::json!({
            "id": "T1", "title": "t", "body": "Do it.",
            "scope": [{"pattern": "a.txt", "op": "create"}], "rails": ["b.txt"]
        }))
        .unwrap();
        let gates = [Gate {
            name: "test".into(),
            argv: vec!["npm".into(), "test".into()],
        }];
        let f =
            Failure::new(FailureKind::GateFailure, "`npm test` exited 1").with_evidence("not ok 1");
        let text = Charter {
            ticket: &ticket,
            gates: &gates,
            attempt: 2,
            previous: Some(&f),
            checks_judged: true,
        }
        .render();
        for needle in [
            "Do it.",
            "`a.txt`: create",
            "`b.txt`",
            "`npm test`",
            "gate_failure",
            "not ok 1",
        ] {
            assert!(text.contains(needle), "{needle} missing in:\n{text}");
        }
    }

    #[test]
    fn unjudged_checks_are_guidance_and_each_files_change_is_said() {
        let ticket: Ticket = serde_json::from_value(serde_json::json!({
            "id": "T1", "title": "t", "body": "Do it.",
            "scope": [{"pattern": "b.rs", "op": "create"}, {"pattern": "a.rs", "op": "modify"}, {"pattern": "c.rs", "op": "delete"}],
            "checks": ["add() rejects NaN"],
            "metadata": {"changes": {"a.rs": "call b::check\nbefore adding", "b.rs": "define check()", "c.rs": " "}}
        }))
        .unwrap();
        let charter = |checks_judged| {
            Charter {
                ticket: &ticket,
                gates: &[],
                attempt: 1,
                previous: None,
                checks_judged,
            }
            .render()
        };
        let guidance = charter(false);
        assert!(
            guidance.contains("## Checks to satisfy\n\nNo reviewer will judge these")
                && guidance.contains("- add() rejects NaN")
                && !guidance.contains("reviewer will make"),
            "{guidance}"
        );
        // `c.rs` has only blanks to say: it has no line.
        assert!(
            guidance.contains(
                "## What to change, file by file\n\n- `b.rs`: define check()\n- `a.rs`: call b::check\n  before adding\n\n"
            ),
            "{guidance}"
        );
        assert!(charter(true).contains("## Checks a reviewer will make"));
    }
}
