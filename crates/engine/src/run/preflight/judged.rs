//! The `checks` check: whether a reviewer will judge the tickets' checks,
//! named as the plan's format names them.

use super::{Check, CheckName};
use planwright_config::ReviewSettings;
use planwright_plan::Plan;

/// Whether a reviewer will judge the tickets' checks: one is configured
/// and the plan asks for at least one review pass.
pub fn checks_judged(plan: &Plan, review: &ReviewSettings) -> bool {
    review.reviewer.is_some() && plan.review.dry_passes > 0
}

/// What a run without a reviewer leaves unverified: the tickets' checks
/// (codeboost `check` items, native `checks`, standard_v1 acceptance
/// criteria), said as a warning, or `None` when a reviewer judges them
/// or there are none.
pub fn unjudged_checks(plan: &Plan, review: &ReviewSettings) -> Option<Check> {
    let count: usize = plan.tickets.iter().map(|t| t.checks.len()).sum();
    if count == 0 || checks_judged(plan, review) {
        return None;
    }
    let [one, many] = planwright_plan::formats::plan_format(plan.source_format).check_nouns();
    let what = match count {
        1 => format!("1 {one}"),
        _ => format!("{count} {many}"),
    };
    let why = if review.reviewer.is_none() {
        "no reviewer is configured"
    } else {
        "the plan asks for no review pass"
    };
    Some(Check::warning(
        CheckName::Checks,
        format!("{what} will not be judged: {why}, so agents get them as guidance only and only gates decide"),
        "set `[review] agent` in planwright.toml to have a reviewer judge them, or make them gates",
    ))
}
