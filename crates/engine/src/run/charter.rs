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
            let _ = writeln!(s, "\n## Checks a reviewer will make\n");
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
}
