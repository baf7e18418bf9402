//! Budgets: `[budget]` ceilings on cost and tokens for a run, and
//! `[budget.ticket]` for each ticket over all its attempts.
//!
//! Pure bookkeeping; the run loop asks it before each attempt and tells it
//! what each attempt used. Reaching a run ceiling starts no new attempt (the
//! run ends cleanly and resumes when the ceiling is raised); reaching a
//! ticket ceiling fails that ticket with kind `budget`. An attempt whose
//! cost is unknown (no figure from the CLI, no price for the model) counts
//! its tokens, and its tokens at its model family's highest price as
//! dollars (the store prices them), so no budget is blind to it.

use crate::model::failure::{Failure, FailureKind};
use planwright_config::BudgetSettings;
use std::collections::BTreeMap;

pub(crate) use crate::model::report::Spent;

/// May another attempt start?
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Admission {
    /// Yes.
    Start,
    /// No attempt of any ticket: the run's ceiling is reached (the message
    /// says which and by how much).
    RunExhausted(String),
    /// Not this ticket: it fails with this failure (kind `budget`).
    TicketExhausted(Failure),
}

/// Cost and tokens against the ceilings.
#[derive(Debug, Clone)]
pub(crate) struct BudgetTracker {
    limits: BudgetSettings,
    run: Spent,
    tickets: BTreeMap<String, Spent>,
}

impl BudgetTracker {
    /// A tracker with nothing spent.
    pub(crate) fn new(limits: &BudgetSettings) -> BudgetTracker {
        BudgetTracker {
            limits: limits.clone(),
            run: Spent::default(),
            tickets: BTreeMap::new(),
        }
    }

    /// A tracker that continues from what earlier attempts used (a resumed
    /// run, from the state store).
    pub(crate) fn resume(
        limits: &BudgetSettings,
        used: impl IntoIterator<Item = (String, Spent)>,
    ) -> BudgetTracker {
        let mut t = BudgetTracker::new(limits);
        for (ticket, spent) in used {
            t.record(&ticket, spent);
        }
        t
    }

    /// Adds one attempt's use.
    pub(crate) fn record(&mut self, ticket: &str, spent: Spent) {
        self.run.add(spent);
        self.tickets
            .entry(ticket.to_string())
            .or_default()
            .add(spent);
    }

    #[cfg(test)]
    /// The whole run's use.
    pub(crate) fn run_spent(&self) -> Spent {
        self.run
    }

    /// One ticket's use.
    pub(crate) fn ticket_spent(&self, ticket: &str) -> Spent {
        self.tickets.get(ticket).copied().unwrap_or_default()
    }

    /// Whether an attempt of `ticket` may start.
    pub(crate) fn admit(&self, ticket: &str) -> Admission {
        if let Some(why) = over(self.run, self.limits.max_cost_usd, self.limits.max_tokens) {
            return Admission::RunExhausted(format!(
                "the run's budget is used up ({why}); raise `[budget]` in planwright.toml and run again to continue"
            ));
        }
        let t = &self.limits.ticket;
        match over(self.ticket_spent(ticket), t.max_cost_usd, t.max_tokens) {
            Some(why) => Admission::TicketExhausted(Failure::new(
                FailureKind::Budget,
                format!("ticket {ticket} used up its budget ({why})"),
            )),
            None => Admission::Start,
        }
    }

    /// Dollars an attempt of `ticket` may still spend (the smaller of what
    /// is left for the run and for the ticket), for CLIs that take a budget;
    /// `None` when no dollar ceiling applies.
    pub(crate) fn remaining_usd(&self, ticket: &str) -> Option<f64> {
        let left = |max: Option<f64>, spent: f64| max.map(|m| (m - spent).max(0.0));
        let run = left(self.limits.max_cost_usd, self.run.cost_usd);
        let own = left(
            self.limits.ticket.max_cost_usd,
            self.ticket_spent(ticket).cost_usd,
        );
        match (run, own) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Whether `limits` set no ceiling at all: then every attempt may start,
/// with no dollar figure to pass on, whatever was spent.
pub(crate) fn unlimited(limits: &BudgetSettings) -> bool {
    let t = &limits.ticket;
    limits.max_cost_usd.is_none()
        && limits.max_tokens.is_none()
        && t.max_cost_usd.is_none()
        && t.max_tokens.is_none()
}

/// Which ceiling `spent` reached, if any.
fn over(spent: Spent, max_cost: Option<f64>, max_tokens: Option<u64>) -> Option<String> {
    if let Some(max) = max_cost.filter(|m| spent.cost_usd >= *m) {
        let bound = match spent.unpriced {
            0 => String::new(),
            n => format!(
                ", {} unpriced counted at their model family's highest price",
                planwright_plan::words::count(n, "attempt")
            ),
        };
        return Some(format!("${:.2} of ${max:.2}{bound}", spent.cost_usd));
    }
    max_tokens.filter(|m| spent.tokens >= *m).map(|max| {
        let tokens = planwright_plan::words::plural(max as usize, "token");
        format!("{} of {max} {tokens}", spent.tokens)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::report::Usage;
    use planwright_config::TicketBudget;

    fn limits() -> BudgetSettings {
        BudgetSettings {
            max_cost_usd: Some(10.0),
            max_tokens: None,
            ticket: TicketBudget {
                max_cost_usd: Some(4.0),
                max_tokens: Some(1000),
            },
        }
    }

    fn spent(cost: f64, tokens: u64) -> Spent {
        Spent {
            cost_usd: cost,
            tokens,
            unpriced: 0,
        }
    }

    #[test]
    fn a_ceiling_reached_with_unpriced_attempts_says_how_they_counted() {
        let mut b = BudgetTracker::new(&limits());
        let mut bound = spent(4.5, 100);
        bound.unpriced = 2;
        b.record("T1", bound);
        let Admission::TicketExhausted(f) = b.admit("T1") else {
            panic!("T1 is over its budget")
        };
        assert!(
            f.message.contains(
                "$4.50 of $4.00, 2 attempts unpriced counted at their model family's highest price"
            ),
            "{}",
            f.message
        );
    }

    #[test]
    fn ticket_ceiling_fails_only_that_ticket() {
        let mut b = BudgetTracker::new(&limits());
        assert_eq!(b.admit("T1"), Admission::Start);
        assert_eq!(b.remaining_usd("T1"), Some(4.0));
        b.record("T1", spent(3.0, 100));
        assert_eq!(b.remaining_usd("T1"), Some(1.0));
        b.record("T1", spent(1.5, 100));
        let Admission::TicketExhausted(f) = b.admit("T1") else {
            panic!("T1 is over its budget")
        };
        assert_eq!(f.kind, FailureKind::Budget);
        assert!(f.message.contains("$4.50 of $4.00"), "{}", f.message);
        assert_eq!(b.admit("T2"), Admission::Start);
        b.record("T2", spent(0.0, 1000));
        assert!(
            matches!(b.admit("T2"), Admission::TicketExhausted(_)),
            "tokens count too"
        );
    }

    #[test]
    fn run_ceiling_stops_everything_and_resume_continues() {
        let used = [
            ("T1".to_string(), spent(3.9, 0)),
            ("T2".to_string(), spent(3.9, 0)),
        ];
        let mut b = BudgetTracker::resume(&limits(), used);
        assert!(
            (b.remaining_usd("T3").unwrap() - 2.2).abs() < 1e-9,
            "the run's rest is smaller"
        );
        b.record("T3", spent(2.5, 0));
        let Admission::RunExhausted(why) = b.admit("T4") else {
            panic!("the run is over its budget")
        };
        assert!(why.contains("raise `[budget]`"), "{why}");
        assert_eq!(b.remaining_usd("T4"), Some(0.0));
        // A higher ceiling, the same history: work goes on.
        let raised = BudgetSettings {
            max_cost_usd: Some(50.0),
            ..limits()
        };
        let b = BudgetTracker::resume(&raised, [("T1".to_string(), b.run_spent())]);
        assert_eq!(b.admit("T4"), Admission::Start);
        assert_eq!(
            BudgetTracker::new(&BudgetSettings::default()).remaining_usd("T"),
            None
        );
    }

    #[test]
    fn unknown_costs_count_tokens_only() {
        let usage = Usage {
            input_tokens: 5,
            output_tokens: 6,
            cache_read_tokens: 7,
            cache_write_tokens: 8,
        };
        assert_eq!(Spent::of(Some(&usage), None), spent(0.0, 26));
        assert_eq!(Spent::of(None, Some(f64::NAN)), spent(0.0, 0));
    }

    #[test]
    fn any_one_ceiling_makes_a_budget_limited() {
        assert!(unlimited(&BudgetSettings::default()));
        let mut each = [
            BudgetSettings::default(),
            BudgetSettings::default(),
            BudgetSettings::default(),
            BudgetSettings::default(),
        ];
        each[0].max_cost_usd = Some(1.0);
        each[1].max_tokens = Some(1);
        each[2].ticket.max_cost_usd = Some(1.0);
        each[3].ticket.max_tokens = Some(1);
        for limits in each {
            assert!(!unlimited(&limits), "{limits:?}");
        }
    }
}
