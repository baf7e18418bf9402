//! The forecast's work grows with the plan, not with its square, and
//! cutting tickets into runs that follow one another changes no group.

use super::*;
use crate::model::{Format, Plan, ScopeEntry, Ticket};

fn ticket(i: usize, deps: Vec<usize>, scope: &str) -> Ticket {
    Ticket {
        scope: vec![ScopeEntry::any(scope)],
        depends_on: deps.into_iter().map(|d| format!("T{d}")).collect(),
        ..Ticket::new(format!("T{i}"), "b")
    }
}

/// Plans of `n` tickets in the shapes the readers make, every ticket in
/// one shared folder: a chain (Spec Kit tasks without `[P]`), phases of
/// ten side-by-side tickets, each waiting for the whole phase before
/// (`[P]` runs, Auto-Claude's phases), runs of `[P]` tickets between
/// tickets that wait for them (Spec Kit's sections), and runs whose
/// tickets are in different waves (so that their order is asked).
fn shape(n: usize, kind: usize) -> Plan {
    let tickets = (0..n)
        .map(|i| {
            let deps: Vec<usize> = match kind {
                0 => (i > 0).then(|| i - 1).into_iter().collect(),
                1 => {
                    let phase = i / 10;
                    (phase.saturating_sub(1) * 10..phase * 10).collect()
                }
                2 => match i % 4 {
                    0 if i > 0 => (i - 3..i).collect(),
                    0 => vec![],
                    _ => vec![i - i % 4],
                },
                // a, then b after a, and c beside both, between barriers.
                _ => match i % 4 {
                    0 if i > 0 => vec![i - 2, i - 1],
                    0 => vec![],
                    1 | 2 => vec![i - 1],
                    _ => vec![i - 3],
                },
            };
            ticket(i, deps, "docs/**")
        })
        .collect();
    Plan::new(Format::Native, tickets)
}

fn work(plan: &Plan) -> (u64, usize) {
    let mut work = 0;
    let groups = forecast_counted(plan, &mut work);
    (work, groups.len())
}

#[test]
fn work_is_linear_in_tickets_for_every_shape() {
    for (kind, groups_per_1000) in [(0, 0), (1, 100), (2, 250), (3, 250)] {
        let (small, g1) = work(&shape(5_000, kind));
        let (large, g2) = work(&shape(10_000, kind));
        assert_eq!((g1, g2), (groups_per_1000 * 5, groups_per_1000 * 10));
        assert!(
            large <= 2 * small + small / 10,
            "shape {kind}: {small} at 5,000 tickets, {large} at 10,000"
        );
        assert!(large <= 60 * 10_000, "shape {kind}: {large} at 10,000");
    }
}

/// Every group the pairwise definition gives, for comparison.
fn by_pairs(plan: &Plan) -> Vec<Vec<usize>> {
    let order = TicketGraph::new(plan);
    let n = plan.tickets.len();
    let pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect();
    let mut sets = UnionFind::new(n);
    for (&(a, b), concurrent) in pairs.iter().zip(order.unordered(&pairs)) {
        let meet = sides(&plan.tickets[a])
            .any(|p| sides(&plan.tickets[b]).any(|q| Glob::parse(p).intersects(&Glob::parse(q))));
        if concurrent && meet {
            sets.union(a, b);
        }
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    for i in 0..n {
        groups.entry(sets.find(i)).or_default().push(i);
    }
    let mut out: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() > 1).collect();
    out.sort();
    out
}

#[test]
fn runs_change_no_group() {
    let mut seed = 7u64;
    let mut next = |below: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % below
    };
    let scopes = ["docs/**", "docs/a.md", "src/x.rs", "src/**", "docs/b.md"];
    for _ in 0..300 {
        let n = 2 + next(24);
        let tickets = (0..n)
            .map(|i| {
                let deps = (0..next(3)).filter(|_| i > 0).map(|_| next(i)).collect();
                ticket(i, deps, scopes[next(scopes.len())])
            })
            .collect();
        let plan = Plan::new(Format::Native, tickets);
        let mut found: Vec<Vec<usize>> = forecast(&plan).into_iter().map(|g| g.indices).collect();
        found.sort();
        let shown: Vec<String> = (plan.tickets.iter())
            .map(|t| {
                format!(
                    "{} after [{}] in {}",
                    t.id,
                    t.depends_on.join(", "),
                    t.scope[0].pattern
                )
            })
            .collect();
        assert_eq!(found, by_pairs(&plan), "{}", shown.join("; "));
    }
}
