//! The `continue` and `changed` checks: what earlier runs merged, which
//! this run skips, continues or runs again.

use super::{Check, CheckName};
use crate::git::repo::Repo;
use crate::run::{Outlook, Resume};
use planwright_plan::Plan;

/// What earlier runs merged (the `continue` check fails when the state
/// store cannot be read), said as checks.
pub(super) fn check_earlier(
    repo: &Repo,
    plan: &Plan,
    plan_path: &str,
    resume: &Resume,
    out: &mut Vec<Check>,
) -> Outlook {
    let found = match crate::run::outlook(repo, plan, plan_path, resume) {
        Ok(o) => o,
        Err(e) => {
            out.push(Check::error(
                CheckName::Continue,
                format!("cannot read what earlier runs merged: {e}"),
                "if `.planwright/state.db` is damaged, move `.planwright/` aside (git still says what merged)",
            ));
            Default::default()
        }
    };
    continue_checks(&found, out);
    found
}

/// What earlier runs merged: skipped tickets, and tickets merged from a
/// definition the plan has changed since (reported, not run again).
pub(super) fn continue_checks(o: &crate::run::Outlook, out: &mut Vec<Check>) {
    if let Some(other) = &o.other {
        out.push(Check::ok(
            CheckName::Continue,
            format!(
                "a new run starts: run {} on this base branch is of another plan (`{}`); `{}` continues it instead",
                other.id,
                other.plan_path,
                planwright_plan::Flag::Continue
            ),
        ));
    }
    if !o.merged.is_empty() {
        out.push(Check::ok(
            CheckName::Continue,
            format!(
                "{} already on the base branch {} skipped",
                planwright_plan::words::count(o.merged.len(), "ticket"),
                if o.merged.len() == 1 { "is" } else { "are" }
            ),
        ));
    }
    for id in &o.changed {
        out.push(Check::warning(
            CheckName::Changed,
            format!("ticket {id} was merged from an older definition; it is not run again"),
            format!(
                "to run it again, pass `{} {id}` (or `{}` for all such tickets)",
                planwright_plan::Flag::Rerun,
                planwright_plan::Flag::RerunChanged
            ),
        ));
    }
    if !o.rerun.is_empty() {
        out.push(Check::ok(
            CheckName::Continue,
            format!("merged tickets run again: {}", o.rerun.join(", ")),
        ));
    }
}

/// The `rerun` check: each id `--rerun` names is a ticket of the plan.
pub(crate) fn check_rerun(plan: &Plan, resume: &Resume, out: &mut Vec<Check>) {
    for id in resume.rerun.iter().filter(|id| plan.ticket(id).is_none()) {
        out.push(Check::error(
            CheckName::Rerun,
            format!(
                "`{} {id}` names no ticket of the plan",
                planwright_plan::Flag::Rerun
            ),
            "pass the id of a ticket of the plan",
        ));
    }
}
