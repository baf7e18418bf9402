//! Each ticket's gates and model pool, and the scheduler built from them.

use crate::run::lanes::Lanes;
use crate::run::scheduler::Scheduler;
use planwright_config::{Families, Routing};
use planwright_plan::graph::TicketGraph;
use planwright_plan::model::{Gate, Ticket};
use planwright_plan::Plan;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The gates of one ticket: the plan's, the ticket's, then the configured ones, without repeats.
pub fn ticket_gates(plan: &Plan, ticket: &Ticket, extra: &[Gate]) -> Vec<Gate> {
    let mut seen = HashSet::new();
    plan.gates
        .iter()
        .chain(&ticket.gates)
        .chain(extra)
        .filter(|g| seen.insert(g.argv.clone()))
        .cloned()
        .collect()
}

/// The model pool a ticket counts against, from the routing tables, for a
/// CLI of `family` (see [`crate::run::pools::choose`]).
pub fn ticket_pool(
    ticket: &Ticket,
    routing: &Routing,
    families: &Families,
    family: Option<&str>,
) -> Option<String> {
    if ticket.tier.is_none() && ticket.pool_hint.is_none() && ticket.model.is_none() {
        return None;
    }
    if let Some(model) = &ticket.model {
        if let Some(m) = routing.models.iter().find(|m| &m.name == model) {
            if family.is_none_or(|f| f == m.family) {
                return Some(m.pool.clone());
            }
        }
    }
    let tier = ticket
        .tier
        .as_deref()
        .unwrap_or(planwright_config::DEFAULT_TIER);
    let hint = ticket.pool_hint.as_deref().unwrap_or("auto");
    routing
        .for_family(families, tier, hint, family)
        .models
        .into_iter()
        .next()
        .map(|m| m.pool)
}

pub(super) fn scheduler(
    plan: &Plan,
    graph: Arc<TicketGraph>,
    routing: &Routing,
    families: &Families,
    lanes: &Lanes,
    jobs: usize,
) -> Scheduler {
    // Tickets share a few routes (model, tier, pool hint, family): each is
    // looked up in the routing tables once, not once per ticket.
    let mut routes = HashMap::new();
    let pools: HashMap<String, String> = plan
        .tickets
        .iter()
        .filter_map(|t| {
            let family = lanes.family(&t.id);
            // `[agent] model`, when the lane's agent has one, is the model.
            let fixed = lanes.get(&t.id).and_then(|l| l.model.as_deref());
            let route = (
                fixed.or(t.model.as_deref()),
                t.tier.as_deref(),
                t.pool_hint.as_deref(),
                family,
            );
            let pool = routes
                .entry(route)
                .or_insert_with(|| ticket_pool(&lanes.routed(t), routing, families, family));
            Some((t.id.clone(), pool.clone()?))
        })
        .collect();
    let mut caps = routing.caps.clone();
    caps.extend(plan.caps.clone());
    Scheduler::new(plan, graph, pools, caps, jobs)
}
