//! fishhawk's plan-gate advisories (`plan_warnings`): notes for the person
//! approving the plan, never errors, except the one over-cap rejection.

use super::access::{arr, file_count, str};
use super::NEAR_CAP;
use crate::diag::{Diagnostic, Sink};
use crate::pointer::Pointer;
use crate::words::quoted;
use regex::Regex;
use serde_json::Value;
use std::sync::LazyLock;

/// Below this predicted runtime (minutes) an expensive test strategy draws an advisory.
pub(super) const CHEAP_RUNTIME: u64 = 20;

/// `-count N` at or above this is an expensive test strategy.
pub(super) const EXPENSIVE_COUNT: u64 = 50;

static COUNT_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"-count[= ]+(\d+)").expect("valid regex"));

fn advisory(code: &str, at: impl Into<String>, message: impl Into<String>) -> Diagnostic {
    Diagnostic::advisory(format!("standard_v1.{code}"), at, message)
}

/// Pushes the plan-gate advisories of `plan`; `cap` is the implement stage's
/// `max_files_changed`, when known; `calibration_hint` says the planner's
/// prompt rendered a calibration hint.
pub(super) fn advise(plan: &Value, cap: Option<u32>, calibration_hint: bool, sink: &mut dyn Sink) {
    sub_plans(plan, sink);
    if calibration_hint && plan.get("raw_predicted_runtime_minutes").is_none() {
        sink.push(
            advisory(
                "calibration.raw-missing",
                "/predicted_runtime_minutes",
                "the prompt rendered a calibration hint but the plan omits raw_predicted_runtime_minutes: \
                 the implement-budget gate cannot verify that calibration did not pull the plan under the budget",
            )
            .with_hint("add `raw_predicted_runtime_minutes`, the estimate before the calibration factor"),
        );
    }
    expensive_tests(plan, sink);
    match cap {
        Some(cap) => file_cap(plan, cap as usize, sink),
        None => sink.push(
            advisory(
                "cap.unchecked",
                "/scope/files",
                "the max_files_changed cap checks were not run: the cap is unknown",
            )
            .with_hint(format!(
                "pass `{} N` or set `max_files_changed = N` under `[standard_v1]` in planwright.toml",
                crate::Flag::MaxFilesChanged
            )),
        ),
    }
    declarations(plan, sink);
    criteria(plan, sink);
}

fn runtime(v: &Value) -> Option<u64> {
    v.get("predicted_runtime_minutes").and_then(Value::as_u64)
}

fn sub_plans(plan: &Value, sink: &mut dyn Sink) {
    let Some(dec) = plan.get("decomposition") else {
        return;
    };
    let list = arr(dec, "sub_plans");
    let at = Pointer::root().key("decomposition").key("sub_plans");
    let sum: u64 = list.iter().filter_map(runtime).sum();
    if let Some(parent) = runtime(plan).filter(|p| list.len() >= 2 && sum < *p) {
        sink.push(advisory(
            "sub-plans.runtime-sum",
            &at,
            format!("the sub-plans add up to {}, less than the plan's predicted_runtime_minutes of {parent}; a slice may be missing or underestimated", crate::words::count(sum as usize, "minute")),
        ));
    }
    let ordered = list.iter().any(|p| !arr(p, "depends_on").is_empty());
    if list.len() >= 2 && !ordered {
        sink.push(
            advisory(
                "sub-plans.unordered",
                &at,
                format!("{} sub-plans and no depends_on anywhere: every slice runs in the first wave, at the same time", list.len()),
            )
            .with_hint("add depends_on where one slice needs another's changes"),
        );
    }
    if !arr(plan, "counterfactuals").is_empty() && !list.is_empty() {
        sink.push(advisory(
            "counterfactuals.decomposed",
            "/counterfactuals",
            "fishhawk does not execute the counterfactuals of a plan carrying decomposition.sub_plans; planwright runs each with the slice that scopes its control_path",
        ));
    }
}

fn expensive_tests(plan: &Value, sink: &mut dyn Sink) {
    let Some(strategy) = plan
        .get("verification")
        .and_then(|v| str(v, "test_strategy"))
    else {
        return;
    };
    let Some(minutes) = runtime(plan).filter(|m| *m < CHEAP_RUNTIME) else {
        return;
    };
    let count = COUNT_RE
        .captures_iter(strategy)
        .filter_map(|c| c[1].parse::<u64>().ok())
        .find(|n| *n >= EXPENSIVE_COUNT);
    let why = match count {
        Some(n) => Some(format!("`-count {n}`")),
        None if strategy.contains("-race") && strategy.contains("./...") => {
            Some("`-race` over `./...`".to_string())
        }
        None => None,
    };
    if let Some(why) = why {
        sink.push(advisory(
            "tests.expensive",
            "/verification/test_strategy",
            format!("the test strategy runs {why}, which is expensive for a plan predicted at {} (under {CHEAP_RUNTIME})", crate::words::count(minutes as usize, "minute")),
        ).with_hint("raise predicted_runtime_minutes or narrow the test run"));
    }
}

/// `1 file`, `6 files`.
fn files(n: usize) -> String {
    crate::words::count(n, "file")
}

fn file_cap(plan: &Value, cap: usize, sink: &mut dyn Sink) {
    let n = file_count(plan);
    let at = "/scope/files";
    if n > cap {
        sink.push(advisory(
            "cap.over",
            at,
            format!("scope.files lists {}, over the max_files_changed cap of {cap} (counted; `over_cap` is not read)", files(n)),
        ));
        let split = plan.get("split_proposal").is_some();
        let irreducible = plan.get("irreducible");
        match (split, irreducible) {
            (false, None) => sink.push(
                Diagnostic::error(
                    "standard_v1.cap.no-split",
                    at,
                    format!("scope.files lists {}, over the max_files_changed cap of {cap}, and the plan carries neither split_proposal nor irreducible", files(n)),
                )
                .with_hint("split the work into `split_proposal.phases` at or under the cap, or declare `irreducible` with a rationale if the change is compile-atomic"),
            ),
            (false, Some(irr)) => sink.push(advisory(
                "cap.irreducible",
                "/irreducible",
                format!(
                    "the plan is over the cap and declares itself irreducible, a claim to challenge: {}; the implement stage still enforces the cap on the real diff",
                    quoted(str(irr, "rationale").unwrap_or(""))
                ),
            )),
            _ => {}
        }
    } else if n + NEAR_CAP >= cap {
        sink.push(advisory(
            "cap.near",
            at,
            format!("scope.files lists {}, within {NEAR_CAP} of the max_files_changed cap of {cap}; a file or two of drift fails the implement stage", files(n)),
        ));
    }
    if let Some(sp) = plan.get("split_proposal") {
        for (i, phase) in arr(sp, "phases").iter().enumerate() {
            let k = file_count(phase);
            if k > cap {
                sink.push(advisory(
                    "cap.phase-over",
                    Pointer::root().key("split_proposal").key("phases").index(i).key("scope").key("files"),
                    format!("split_proposal phase {i} lists {}, itself over the max_files_changed cap of {cap}", files(k)),
                ).with_hint("split this phase further"));
            }
        }
    }
}

fn declarations(plan: &Value, sink: &mut dyn Sink) {
    if str(plan, "delivery") == Some("partial") {
        sink.push(advisory(
            "delivery.partial",
            "/delivery",
            format!(
                "PARTIAL DELIVERY: the plan delivers only part of the issue (the PR says `Refs`, not `Closes`); remaining: {}",
                str(plan, "remaining_scope").map_or("(not stated)".to_string(), quoted)
            ),
        ));
    }
    if let Some(d) = plan.get("new_architectural_decision") {
        let adrs: Vec<&str> = arr(d, "related_adrs")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        sink.push(
            advisory(
                "decision.new",
                "/new_architectural_decision",
                format!(
                    "new architectural direction: {}; rationale: {}; related ADRs: {}",
                    quoted(str(d, "decision_summary").unwrap_or("")),
                    quoted(str(d, "rationale").unwrap_or("")),
                    if adrs.is_empty() {
                        "none".to_string()
                    } else {
                        adrs.join(", ")
                    }
                ),
            )
            .with_hint("decide whether this direction needs an ADR"),
        );
    }
}

fn criteria(plan: &Value, sink: &mut dyn Sink) {
    let Some(v) = plan.get("verification") else {
        return;
    };
    let list = arr(v, "acceptance_criteria");
    let all_skip = !list.is_empty()
        && list
            .iter()
            .all(|c| c.get("skip_expected") == Some(&Value::Bool(true)));
    if all_skip && str(v, "acceptance_surface") != Some("none") {
        sink.push(advisory(
            "criteria.all-skip-expected",
            "/verification/acceptance_criteria",
            "every acceptance criterion is skip_expected: acceptance verifies none of them and records not_validated, never passed",
        ).with_hint("if the change has no observable surface, declare `verification.acceptance_surface: \"none\"`"));
    }
}
