//! Offers: an ACP agent lists the models its session offers (preflight's
//! probe asks it), and a model routing may send a ticket to that it does
//! not offer would end each such attempt as `Unavailable`, pausing the
//! ticket again and again for what is a configuration error: said here,
//! before the run.

use super::{Check, CheckName};
use crate::agent::acp::{not_offered, offered_as};
use crate::run::lanes::Lanes;
use planwright_config::{Families, Routing};
use planwright_plan::Plan;

/// The models an agent's probe found it offers, by its `[agents]` entry
/// (`None`: the run's own agent).
pub(super) type Offers = [(Option<String>, Vec<String>)];

/// One `routing` error per model some ticket may be routed to (its own
/// `model`, else every candidate of its tier and pool hint) that its
/// agent does not offer, matched as an attempt matches it (the same, its
/// `-preview`, an alias), naming the tickets and listing what is
/// offered. `[agent] model`, every ticket's, is the probe's to check.
pub(super) fn check_offered(
    plan: &Plan,
    routing: &Routing,
    families: &Families,
    lanes: &Lanes,
    offers: &Offers,
    out: &mut Vec<Check>,
) {
    // (agent, model, what it offers, tickets), in the plan's order.
    let mut missing: Vec<(&str, String, &[String], Vec<&str>)> = Vec::new();
    for t in &plan.tickets {
        let Some(lane) = lanes.get(&t.id).filter(|l| l.model.is_none()) else {
            continue;
        };
        let offered = offers.iter().find(|(e, _)| *e == lane.entry);
        let Some((_, offered)) = offered else {
            continue;
        };
        let family = lane.family.as_deref();
        let routed = crate::run::pools::candidates(t, routing, families, family);
        for model in routed.unwrap_or_default() {
            if offered_as(&model, offered).is_some() {
                continue;
            }
            let known = missing
                .iter_mut()
                .find(|(a, m, o, _)| *a == lane.agent && *m == model && *o == &offered[..]);
            match known {
                Some((_, _, _, ids)) => ids.push(&t.id),
                None => missing.push((&lane.agent, model, offered, vec![&t.id])),
            }
        }
    }
    for (agent, model, offered, ids) in missing {
        let which = if ids.len() == 1 { "ticket" } else { "tickets" };
        let ids = ids.join(", ");
        out.push(Check::error(
            CheckName::Routing,
            format!(
                "agent `{agent}`: {which} {ids} may be routed to model `{model}`, and {}",
                not_offered(&model, offered)
            ),
            format!(
                "route {ids} to a model the agent offers: the ticket's `model`, a `[[routing.models]]` entry of its tier, or `[agent] model`"
            ),
        ));
    }
}
