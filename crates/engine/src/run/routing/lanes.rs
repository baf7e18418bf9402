//! Lanes: which of the run's agents does each ticket, and the model family
//! routing then keeps the ticket to.
//!
//! With one agent every ticket is its. With `[agents]`, a ticket goes to
//! the entry of the first family its routing reaches: its explicit model's
//! family, else its tier's candidates under its pool hint (agb's table, in
//! order), else the first family the hint accepts (`auto`: any `[agents]`
//! maps) that has a model of the tier in the family table. A ticket none
//! reaches goes to the run's own agent (`[agent] name`), if there is one.

use crate::agent::Agents;
use planwright_config::{Families, Routing, DEFAULT_TIER};
use planwright_plan::model::Ticket;
use planwright_plan::Plan;
use std::borrow::Cow;
use std::collections::HashMap;

/// The agent of one ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lane {
    /// The `[agents]` entry (a family) whose agent runs it; `None`: the
    /// run's own agent.
    pub entry: Option<String>,
    /// The agent's name, for routing lines.
    pub agent: String,
    /// The program the agent starts, when it starts one (for the run's
    /// record of who ran each attempt).
    pub program: Option<String>,
    /// The family routing keeps it to: the entry's, else the agent's own
    /// ([`crate::agent::Agent::family`]); `None`: any family.
    pub family: Option<String>,
    /// The model the agent runs whatever routing chose (`[agent] model`,
    /// [`crate::agent::Agent::model`]); `None`: routing's.
    pub model: Option<String>,
}

/// Every ticket's lane; a ticket no agent serves has none.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lanes(HashMap<String, Lane>);

impl Lanes {
    /// The lanes of `plan`'s tickets among `agents`.
    pub(crate) fn of(
        plan: &Plan,
        routing: &Routing,
        families: &Families,
        agents: &Agents,
    ) -> Lanes {
        let mapped: Vec<&str> = agents.families().collect();
        let run = agents.run_agent().map(|a| Lane {
            entry: None,
            agent: a.name().to_string(),
            program: a.program(),
            family: a.family().map(String::from),
            model: a.model().map(String::from),
        });
        let lanes = plan.tickets.iter().filter_map(|t| {
            let lane = match family_of(t, routing, families, &mapped) {
                Some(f) => {
                    let agent = agents.get(Some(&f))?;
                    Lane {
                        entry: Some(f.clone()),
                        agent: agent.name().to_string(),
                        program: agent.program(),
                        family: Some(f),
                        model: None,
                    }
                }
                None => run.clone()?,
            };
            Some((t.id.clone(), lane))
        });
        Lanes(lanes.collect())
    }

    /// The lane of ticket `id`.
    pub(crate) fn get(&self, id: &str) -> Option<&Lane> {
        self.0.get(id)
    }

    /// The family ticket `id` is kept to.
    pub(crate) fn family(&self, id: &str) -> Option<&str> {
        self.get(id).and_then(|l| l.family.as_deref())
    }

    /// `ticket` as routing sees it: its model the lane's `[agent] model`
    /// when the lane's agent has one (then its pool is that model's, as
    /// for a ticket naming it), else as the plan has it.
    pub(crate) fn routed<'t>(&self, ticket: &'t Ticket) -> Cow<'t, Ticket> {
        match self.get(&ticket.id).and_then(|l| l.model.as_ref()) {
            Some(model) => {
                let mut fixed = ticket.clone();
                fixed.model = Some(model.clone());
                Cow::Owned(fixed)
            }
            None => Cow::Borrowed(ticket),
        }
    }

    /// The `[agents]` entry that runs ticket `id` (`None`: the run's agent).
    pub(crate) fn entry(&self, id: &str) -> Option<&str> {
        self.get(id).and_then(|l| l.entry.as_deref())
    }
}

/// The first family among `mapped` that `ticket`'s routing reaches.
fn family_of(
    ticket: &Ticket,
    routing: &Routing,
    families: &Families,
    mapped: &[&str],
) -> Option<String> {
    let is_mapped = |f: &str| mapped.contains(&f);
    if let Some(model) = &ticket.model {
        let of = routing
            .family_of(model)
            .or_else(|| families.family_named(model));
        return of.filter(|f| is_mapped(f)).map(String::from);
    }
    if ticket.tier.is_none() && ticket.pool_hint.is_none() {
        return None;
    }
    let tier = ticket.tier.as_deref().unwrap_or(DEFAULT_TIER);
    let hint = ticket.pool_hint.as_deref().unwrap_or("auto");
    let candidate = routing
        .candidates(tier, hint)
        .into_iter()
        .map(|m| m.family.as_str())
        .find(|f| is_mapped(f));
    let accepted = || {
        mapped
            .iter()
            .copied()
            .filter(|f| routing.accepts(hint, f))
            .find(|f| families.model(f, tier).is_some())
    };
    candidate.or_else(accepted).map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use planwright_config::{AgentOptions, AgentSpec, AgentsSpec};

    fn ticket(id: &str, tier: Option<&str>, hint: Option<&str>, model: Option<&str>) -> Ticket {
        let mut t = Ticket::new(id, "body");
        t.tier = tier.map(String::from);
        t.pool_hint = hint.map(String::from);
        t.model = model.map(String::from);
        t
    }

    fn agents(run: Option<&str>, by_family: &[(&str, &str)]) -> Agents {
        let spec = |name: &str| AgentSpec {
            name: name.into(),
            options: AgentOptions::default(),
        };
        Agents::build(&AgentsSpec {
            run: run.map(spec),
            by_family: by_family
                .iter()
                .map(|(f, a)| (f.to_string(), spec(a)))
                .collect(),
        })
        .unwrap()
    }

    fn lanes_of(tickets: Vec<Ticket>, agents: &Agents) -> Vec<(String, Option<Lane>)> {
        let plan = Plan::new(planwright_plan::Format::Agb, tickets);
        let lanes = Lanes::of(&plan, &Routing::default(), &Families::default(), agents);
        let ids: Vec<String> = plan.tickets.iter().map(|t| t.id.clone()).collect();
        ids.into_iter()
            .map(|id| {
                let lane = lanes.get(&id).cloned();
                (id, lane)
            })
            .collect()
    }

    fn lane(entry: Option<&str>, agent: &str, family: Option<&str>) -> Option<Lane> {
        Some(Lane {
            entry: entry.map(String::from),
            agent: agent.into(),
            // Each CLI adapter's program is its name.
            program: Some(agent.into()),
            family: family.map(String::from),
            model: None,
        })
    }

    #[test]
    fn each_ticket_goes_to_the_agent_of_the_family_its_route_reaches() {
        let two = agents(None, &[("claude", "claude"), ("gemini", "gemini")]);
        let got = lanes_of(
            vec![
                ticket("G", Some("cheap"), Some("gemini"), None),
                ticket("C", Some("mid"), Some("claude"), None),
                ticket("A", Some("frontier"), None, None),
                ticket("M", None, None, Some("claude-opus-4-6")),
                ticket("X", None, None, None),
                ticket("O", Some("mid"), Some("gpt-oss"), None),
            ],
            &two,
        );
        let want = [
            ("G", lane(Some("gemini"), "gemini", Some("gemini"))),
            ("C", lane(Some("claude"), "claude", Some("claude"))),
            // agb's frontier candidates start with gemini-3.1-pro-high.
            ("A", lane(Some("gemini"), "gemini", Some("gemini"))),
            ("M", lane(Some("claude"), "claude", Some("claude"))),
            ("X", None),
            ("O", None),
        ];
        let want: Vec<(String, Option<Lane>)> = want
            .into_iter()
            .map(|(id, l)| (id.to_string(), l))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_ticket_no_entry_serves_goes_to_the_runs_agent() {
        let with_run = agents(Some("opencode"), &[("gpt", "codex")]);
        let got = lanes_of(
            vec![
                ticket("P", Some("cheap"), Some("claude-gpt"), None),
                ticket("G", Some("cheap"), Some("gemini"), None),
                ticket("X", None, None, None),
            ],
            &with_run,
        );
        assert_eq!(got[0].1, lane(Some("gpt"), "codex", Some("gpt")));
        assert_eq!(got[1].1, lane(None, "opencode", None));
        assert_eq!(got[2].1, lane(None, "opencode", None));
        let one = agents(Some("claude"), &[]);
        let got = lanes_of(vec![ticket("G", Some("cheap"), Some("gemini"), None)], &one);
        assert_eq!(got[0].1, lane(None, "claude", Some("claude")));
    }
}
