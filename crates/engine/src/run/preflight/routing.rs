//! Routing: each ticket's adapter and model, and what its family cannot honour.

use super::{Check, CheckName};
use crate::run::routing::{foreign_family, Lane, Lanes};
use planwright_plan::model::Ticket;
use planwright_plan::Plan;

/// The `routing` checks: each ticket's adapter and model, a warning for
/// each whose pool hint or model its agent's family could not honour, and
/// an error for each no agent serves or whose agent's family has no model
/// of its tier (see [`Lanes`]).
pub(crate) fn check_routing(
    plan: &Plan,
    routing: &planwright_config::Routing,
    families: &planwright_config::Families,
    lanes: &Lanes,
    out: &mut Vec<Check>,
) {
    let mut foreign_fixed: Vec<&str> = Vec::new();
    for t in &plan.tickets {
        let Some(lane) = lanes.get(&t.id) else {
            out.push(Check::error(
                CheckName::Routing,
                format!("ticket {}: no agent of `[agents]` runs its model family, and `[agent] name` names no agent for the others", t.id),
                format!("map the family {}'s tier and pool hint ask for in `[agents]`, or set `[agent] name`", t.id),
            ));
            continue;
        };
        if let Some(model) = lane.model.as_deref() {
            match foreign_family(routing, families, model, lane.family.as_deref()) {
                Some(_) => foreign_fixed.push(&t.id),
                None => out.push(Check::ok(
                    CheckName::Routing,
                    format!("{} -> {} -> {model} (`[agent] model`)", t.id, lane.agent),
                )),
            }
            continue;
        }
        if let Some(check) = ticket_line(t, routing, families, lane) {
            out.push(check);
        }
    }
    if let Some(first) = foreign_fixed.first().and_then(|id| lanes.get(id)) {
        out.push(foreign_model(first, routing, families, &foreign_fixed));
    }
}

/// The `routing` error of an `[agent] model` of another family than its
/// agent's, which would run `tickets`: a CLI never gets another family's model.
fn foreign_model(
    lane: &Lane,
    routing: &planwright_config::Routing,
    families: &planwright_config::Families,
    tickets: &[&str],
) -> Check {
    let (agent, own) = (&lane.agent, lane.family.as_deref().unwrap_or_default());
    let model = lane.model.as_deref().unwrap_or_default();
    let of = foreign_family(routing, families, model, Some(own)).unwrap_or_default();
    let suggestion = families
        .model(own, planwright_config::DEFAULT_TIER)
        .map(|m| format!(" such as `{m}`"))
        .unwrap_or_default();
    let which = if tickets.len() == 1 {
        "ticket"
    } else {
        "tickets"
    };
    Check::error(
        CheckName::Routing,
        format!(
            "agent `{agent}`: `[agent] model = \"{model}\"` is a {of} model, and the `{agent}` CLI runs only {own} models ({which} {})",
            tickets.join(", ")
        ),
        format!("set `[agent] model` to a {own} model{suggestion}, remove it so that routing picks each ticket's {own} model, or run a {of} agent (`{} NAME` or `[agents] {of} = \"NAME\"`)", planwright_plan::Flag::Agent),
    )
}

/// The `routing` check of ticket `t` in `lane`.
fn ticket_line(
    t: &Ticket,
    routing: &planwright_config::Routing,
    families: &planwright_config::Families,
    lane: &Lane,
) -> Option<Check> {
    let (agent, family) = (&lane.agent, lane.family.as_deref());
    let explicit = t.model.as_deref();
    let foreign = explicit.and_then(|m| foreign_family(routing, families, m, family));
    if let (Some(model), None) = (explicit, foreign) {
        return Some(Check::ok(
            CheckName::Routing,
            format!("{} -> {agent} -> {model}", t.id),
        ));
    }
    if t.tier.is_none() && t.pool_hint.is_none() && explicit.is_none() {
        let line = format!("{} -> {agent} -> the CLI's default model", t.id);
        return Some(Check::ok(CheckName::Routing, line));
    }
    let tier = t.tier.as_deref().unwrap_or(planwright_config::DEFAULT_TIER);
    let hint = t.pool_hint.as_deref().unwrap_or("auto");
    let candidates = routing.for_family(families, tier, hint, family);
    let fam = family.unwrap_or_default();
    let Some(first) = candidates.models.first() else {
        return Some(Check::error(
            CheckName::Routing,
            format!("ticket {}: the family table has no {fam} model of tier `{tier}` for the `{agent}` CLI", t.id),
            format!("give {} a tier the {fam} family serves, add `{tier} = \"MODEL\"` to `[families.{fam}]`, or pick an agent of the family its pool hint `{hint}` names", t.id),
        ));
    };
    let line = format!("{} -> {agent} -> {}", t.id, first.name);
    let asked = match (explicit, foreign) {
        (Some(model), Some(of)) => Some(format!("model `{model}` (family {of})")),
        _ if !candidates.honoured => Some(format!("pool hint `{hint}`")),
        _ => None,
    };
    Some(match asked {
        None => Check::ok(CheckName::Routing, line),
        Some(asked) => Check::warning(
            CheckName::Routing,
            format!("{line}: its {asked} cannot run on the `{agent}` CLI, so it gets the {fam} model of tier `{tier}`"),
            format!("pick an agent of the family {} asks for (`[agents]`), or drop its {asked}", t.id),
        ),
    })
}

/// The `routing` check of `[review]`'s reviewer: `[review] agent` names an
/// agent, and `[review] model` is one its CLI can run, never another
/// family's (see docs/review.md). The run builds the reviewer only when it
/// first reviews, so this is asked before it starts.
pub(crate) fn check_reviewer(
    review: &planwright_config::ReviewSettings,
    routing: &planwright_config::Routing,
    families: &planwright_config::Families,
    out: &mut Vec<Check>,
) {
    let Some(spec) = &review.reviewer else {
        return;
    };
    let reviewer = match crate::agent::from_options(&spec.name, &spec.options) {
        Ok(reviewer) => reviewer,
        Err(e) => {
            return out.push(Check::error(
                CheckName::Routing,
                format!("`[review] agent`: {e}"),
                "name a reviewer agent as `[agent] name` would, or remove `[review] agent`",
            ))
        }
    };
    let (Some(model), Some(own)) = (review.model.as_deref(), reviewer.family()) else {
        return;
    };
    let Some(of) = foreign_family(routing, families, model, Some(own)) else {
        return;
    };
    out.push(Check::error(
        CheckName::Routing,
        format!("`[review] model = \"{model}\"` is a {of} model, and the reviewer's CLI runs only {own} models"),
        format!("set `[review] model` to a {own} model, remove it so that the reviewer gets its own family's model of each ticket's tier, or pick a reviewer of the {of} family"),
    ));
}
