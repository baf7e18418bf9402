//! DAG analysis of a plan: waves, critical path, ready set, the longest
//! remaining path of each ticket, and the scope-overlap forecast.
//!
//! Everything here is linear in tickets plus dependencies, except the
//! overlap forecast (see [`crate::overlap`]). A plan with a cycle (which the
//! validators reject) never makes it panic or loop: tickets on a cycle or
//! after one are left out of the waves and of the critical path.
//!
//! Ids are compared as strings, byte by byte (`T10` sorts before `T2`).
//! A dependency on an unknown id is ignored; with duplicate ids, a
//! dependency means the first ticket with that id.

use crate::graph::TicketGraph;
use crate::model::{Plan, Ticket};
use crate::overlap::{self, Overlap};
use serde::Serialize;
use std::collections::HashMap;

/// What `planwright show --output json` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Analysis {
    /// Number of tickets.
    pub ticket_count: usize,
    /// `ticket_count` under its former name, written for one release more.
    pub tickets: usize,
    /// Topological levels: wave 1 (index 0) holds the tickets without
    /// dependencies; a ticket is in the wave after its latest dependency.
    /// Ids sorted within a wave.
    pub waves: Vec<Vec<String>>,
    /// The longest path by estimate, from a ticket without dependencies to
    /// a ticket nothing depends on (see [`critical_path`] for ties).
    pub critical_path: Vec<String>,
    /// The sum of the estimates on the critical path.
    pub critical_path_minutes: u64,
    /// Tickets that may run at the same time and may change the same path.
    pub overlaps: Vec<Overlap>,
}

impl Analysis {
    /// The tickets that can start at once: the first wave.
    pub fn ready(&self) -> &[String] {
        self.waves.first().map_or(&[], Vec::as_slice)
    }
}

/// Analyses `plan`.
pub fn analyse(plan: &Plan) -> Analysis {
    let order = TicketGraph::new(plan);
    let (critical_path, critical_path_minutes) = order.critical_path(plan);
    Analysis {
        ticket_count: plan.tickets.len(),
        tickets: plan.tickets.len(),
        waves: order.waves(plan),
        critical_path,
        critical_path_minutes,
        overlaps: overlap::forecast(plan),
    }
}

/// The estimate of a ticket in minutes: `estimate_minutes`, else 1.
pub fn estimate(ticket: &Ticket) -> u64 {
    ticket.estimate_minutes.map_or(1, u64::from)
}

/// The waves of `plan` (see [`Analysis::waves`]).
pub fn waves(plan: &Plan) -> Vec<Vec<String>> {
    TicketGraph::new(plan).waves(plan)
}

/// Each ticket's wave, by id, from 0 (see [`Analysis::waves`]): for
/// formats that write a plan as phases.
pub fn wave_of(plan: &Plan) -> HashMap<String, usize> {
    (waves(plan).into_iter().enumerate())
        .flat_map(|(k, wave)| wave.into_iter().map(move |id| (id, k)))
        .collect()
}

/// The tickets without dependencies, sorted by id.
pub fn ready(plan: &Plan) -> Vec<String> {
    let graph = TicketGraph::new(plan);
    let mut ids: Vec<String> = (plan.tickets.iter().enumerate())
        .filter(|&(i, _)| graph.deps(i).is_empty())
        .map(|(_, t)| t.id.clone())
        .collect();
    ids.sort_unstable();
    ids
}

/// The critical path of `plan` and its minutes.
///
/// Among all paths from a ticket without dependencies to a ticket nothing
/// depends on, the one with the largest sum of estimates. Ties are broken
/// from the start: the path starts at the smallest id among the tickets
/// without dependencies whose longest remaining path is the longest; each
/// next ticket is the smallest id among the dependents that keep the path
/// longest. So of equally long paths, the one whose id sequence is
/// smallest, compared from the start, wins.
pub fn critical_path(plan: &Plan) -> (Vec<String>, u64) {
    TicketGraph::new(plan).critical_path(plan)
}

/// For each ticket, the sum of estimates on the longest path from it to a
/// ticket nothing depends on, itself included. The engine starts ready
/// tickets with the longest remaining path first unless a simulated run
/// over the estimates finds a shorter order. With duplicate ids the
/// first ticket's value is kept.
pub fn longest_remaining(plan: &Plan) -> HashMap<String, u64> {
    let order = TicketGraph::new(plan);
    let rem = order.remaining(plan);
    let mut out = HashMap::with_capacity(plan.tickets.len());
    for (t, r) in plan.tickets.iter().zip(rem) {
        out.entry(t.id.clone()).or_insert(r);
    }
    out
}

/// Every dependency edge as plan indices `(dependency, dependent)`, in plan
/// order of the dependent, then of the dependency; unknown ids and repeats
/// left out.
pub fn edges(plan: &Plan) -> Vec<(usize, usize)> {
    TicketGraph::new(plan).edges()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Format, ScopeEntry};

    fn t(id: &str, deps: &[&str], minutes: Option<u32>) -> Ticket {
        Ticket {
            scope: vec![ScopeEntry::any(format!("{id}.txt"))],
            depends_on: deps.iter().map(|d| d.to_string()).collect(),
            estimate_minutes: minutes,
            ..Ticket::new(id, "b")
        }
    }

    fn plan(tickets: Vec<Ticket>) -> Plan {
        Plan::new(Format::Native, tickets)
    }

    fn ids(w: &[Vec<String>]) -> Vec<Vec<&str>> {
        w.iter()
            .map(|w| w.iter().map(String::as_str).collect())
            .collect()
    }

    #[test]
    fn agb_template_waves_and_path() {
        // T1 -> T3; T2 alone. All estimates 1: T1, T3 is longest (2).
        let p = plan(vec![
            t("T1", &[], None),
            t("T2", &[], None),
            t("T3", &["T1"], None),
        ]);
        let a = analyse(&p);
        assert_eq!(ids(&a.waves), [vec!["T1", "T2"], vec!["T3"]]);
        assert_eq!(a.critical_path, ["T1", "T3"]);
        assert_eq!(a.critical_path_minutes, 2);
        assert_eq!(a.ready(), ["T1", "T2"]);
        assert!(a.overlaps.is_empty());
    }

    #[test]
    fn diamond_with_estimates() {
        //   A(5) -> B(10) -> D(1)
        //   A(5) -> C(30) -> D(1)
        //   E(20)           (alone)
        // Waves: [A, E], [B, C], [D]. Longest: A, C, D = 36.
        let p = plan(vec![
            t("D", &["B", "C"], Some(1)),
            t("C", &["A"], Some(30)),
            t("B", &["A"], Some(10)),
            t("A", &[], Some(5)),
            t("E", &[], Some(20)),
        ]);
        let a = analyse(&p);
        assert_eq!(ids(&a.waves), [vec!["A", "E"], vec!["B", "C"], vec!["D"]]);
        assert_eq!(a.critical_path, ["A", "C", "D"]);
        assert_eq!(a.critical_path_minutes, 36);
        let rem = longest_remaining(&p);
        assert_eq!(rem["A"], 36);
        assert_eq!(rem["B"], 11);
        assert_eq!(rem["C"], 31);
        assert_eq!(rem["D"], 1);
        assert_eq!(rem["E"], 20);
        assert_eq!(ready(&p), ["A", "E"]);
    }

    #[test]
    fn ties_go_to_the_smallest_id_from_the_start() {
        // Two sources of equal length: X -> Z and W -> Y, all 1 minute;
        // W starts the path; after W, only Y. Then a fork where both
        // dependents tie: the smaller id is taken.
        let p = plan(vec![
            t("X", &[], None),
            t("Z", &["X"], None),
            t("W", &[], None),
            t("Y2", &["W"], None),
            t("Y1", &["W"], None),
        ]);
        let (path, minutes) = critical_path(&p);
        assert_eq!(path, ["W", "Y1"]);
        assert_eq!(minutes, 2);
    }

    #[test]
    fn wave_follows_the_latest_dependency() {
        // A -> B -> C, and A -> C directly: C is in wave 3, not 2.
        let p = plan(vec![
            t("A", &[], None),
            t("B", &["A"], None),
            t("C", &["A", "B", "A"], None),
        ]);
        assert_eq!(ids(&waves(&p)), [vec!["A"], vec!["B"], vec!["C"]]);
    }

    #[test]
    fn cycles_and_unknown_ids_do_not_panic() {
        let p = plan(vec![
            t("A", &[], None),
            t("B", &["C"], None),
            t("C", &["B"], None),
            t("D", &["C"], None),
            t("E", &["nowhere"], None),
        ]);
        let a = analyse(&p);
        assert_eq!(ids(&a.waves), [vec!["A", "E"]]);
        assert_eq!(a.critical_path, ["A"]);
        let rem = longest_remaining(&p);
        assert_eq!(rem.len(), 5);
        assert_eq!(rem["D"], 1);
        assert_eq!(analyse(&plan(vec![])).critical_path_minutes, 0);
    }

    #[test]
    fn reachability_across_blocks() {
        // A chain longer than one bitset block, plus a free ticket: the
        // chain's ends are ordered; the free ticket is unordered with all.
        let n = 5000;
        let mut tickets: Vec<Ticket> = (0..n)
            .map(|i| {
                let deps = if i == 0 {
                    vec![]
                } else {
                    vec![format!("c{}", i - 1)]
                };
                let mut x = t(&format!("c{i}"), &[], None);
                x.depends_on = deps;
                x
            })
            .collect();
        tickets.push(t("free", &[], None));
        let p = plan(tickets);
        let order = TicketGraph::new(&p);
        let got = order.unordered(&[(0, n - 1), (n - 1, 4200), (n, 4500), (10, n), (4097, 4096)]);
        assert_eq!(got, [false, false, true, true, false]);
    }

    fn random_plan(deps: &[Vec<usize>], minutes: &[u32]) -> Plan {
        plan(
            deps.iter()
                .enumerate()
                .map(|(i, ds)| {
                    let ds: Vec<String> = ds
                        .iter()
                        .filter(|&&d| d < i)
                        .map(|d| format!("t{d}"))
                        .collect();
                    let mut x = t(&format!("t{i}"), &[], Some(minutes[i]));
                    x.depends_on = ds;
                    x
                })
                .collect(),
        )
    }

    fn reaches(p: &Plan, from: usize, to: usize) -> bool {
        let mut stack = vec![to];
        let mut seen = vec![false; p.tickets.len()];
        while let Some(i) = stack.pop() {
            if i == from {
                return true;
            }
            for d in &p.tickets[i].depends_on {
                let j: usize = d[1..].parse().unwrap();
                if !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        false
    }

    proptest::proptest! {
        #[test]
        fn analysis_agrees_with_brute_force(
            deps in proptest::collection::vec(proptest::collection::vec(0usize..12, 0..3), 1..12),
            minutes in proptest::collection::vec(0u32..5, 12),
        ) {
            let p = random_plan(&deps, &minutes);
            let n = p.tickets.len();
            let order = TicketGraph::new(&p);
            let pairs: Vec<(usize, usize)> = (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).filter(|(a, b)| a != b).collect();
            let got = order.unordered(&pairs);
            for (&(a, b), &free) in pairs.iter().zip(&got) {
                proptest::prop_assert_eq!(free, !reaches(&p, a, b) && !reaches(&p, b, a), "{} {}", a, b);
            }
            // Every ticket is one wave after its latest dependency.
            let wave_of: HashMap<String, usize> = waves(&p).iter().enumerate()
                .flat_map(|(w, ids)| ids.iter().map(move |id| (id.clone(), w))).collect();
            proptest::prop_assert_eq!(wave_of.len(), n);
            for tk in &p.tickets {
                let want = tk.depends_on.iter().map(|d| wave_of[d] + 1).max().unwrap_or(0);
                proptest::prop_assert_eq!(wave_of[&tk.id], want);
            }
            // The critical path is a chain from a source to a sink whose
            // minutes are the longest remaining path of any ticket.
            let (path, total) = critical_path(&p);
            let rem = longest_remaining(&p);
            proptest::prop_assert_eq!(total, rem.values().copied().max().unwrap());
            let sum: u64 = path.iter().map(|id| estimate(p.ticket(id).unwrap())).sum();
            proptest::prop_assert_eq!(sum, total);
            proptest::prop_assert!(p.ticket(&path[0]).unwrap().depends_on.is_empty());
            for w in path.windows(2) {
                proptest::prop_assert!(p.ticket(&w[1]).unwrap().depends_on.contains(&w[0]));
            }
            let last = path.last().unwrap();
            proptest::prop_assert!(p.tickets.iter().all(|tk| !tk.depends_on.contains(last)));
        }
    }
}
