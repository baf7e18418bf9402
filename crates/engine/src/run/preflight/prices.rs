//! Prices: a model routing sends an agent to that the price table does
//! not know leaves its attempts' cost unknown, which preflight says
//! before the run rather than leave it to the agent log.

use super::{Check, CheckName};
use crate::run::lanes::Lanes;
use planwright_plan::Plan;

/// One `prices` warning per model a ticket's first route gives a CLI or
/// ACP agent (the ones that report tokens) and `prices` has no entry
/// for: its cost will be unknown unless the CLI reports one, and budgets
/// count its tokens at its family's highest price.
pub(super) fn check_prices(
    plan: &Plan,
    settings: &planwright_config::RunSettings,
    lanes: &Lanes,
    out: &mut Vec<Check>,
) {
    let (routing, families) = (&settings.routing, &settings.families);
    let mut unpriced: Vec<(String, Vec<&str>)> = Vec::new();
    for t in &plan.tickets {
        let Some(lane) = lanes.get(&t.id) else {
            continue;
        };
        let reports_tokens = crate::agent::adapter(&lane.agent).is_some() || lane.agent == "acp";
        if !reports_tokens {
            continue;
        }
        let model = lane.model.clone().or_else(|| {
            let own = lane.family.as_deref();
            let routed = crate::run::pools::candidates(t, routing, families, own)?;
            routed.into_iter().next()
        });
        let Some(model) = model.filter(|m| settings.prices.find(m).is_none()) else {
            continue;
        };
        match unpriced.iter_mut().find(|(m, _)| *m == model) {
            Some((_, ids)) => ids.push(&t.id),
            None => unpriced.push((model, vec![&t.id])),
        }
    }
    for (model, ids) in unpriced {
        let which = if ids.len() == 1 { "ticket" } else { "tickets" };
        out.push(Check::warning(
            CheckName::Prices,
            format!(
                "no price for model `{model}` ({which} {}): its attempts' cost is unknown unless its CLI reports one, and budgets count its tokens at its family's highest price",
                ids.join(", ")
            ),
            format!("add `[prices.{model}]` to planwright.toml (`input`, `output`, `cache_read`, `cache_write`: US dollars per million tokens)"),
        ));
    }
}
