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

use crate::model::{Plan, Ticket};
use crate::overlap::{self, Overlap};
use serde::Serialize;
use std::collections::{HashMap, HashSet, VecDeque};

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
    let order = Order::new(plan);
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
    Order::new(plan).waves(plan)
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
    let mut ids: Vec<String> = Order::new(plan)
        .deps
        .iter()
        .zip(&plan.tickets)
        .filter(|(deps, _)| deps.is_empty())
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
    Order::new(plan).critical_path(plan)
}

/// For each ticket, the sum of estimates on the longest path from it to a
/// ticket nothing depends on, itself included. The engine starts ready
/// tickets with the longest remaining path first unless a simulated run
/// over the estimates finds a shorter order. With duplicate ids the
/// first ticket's value is kept.
pub fn longest_remaining(plan: &Plan) -> HashMap<String, u64> {
    let order = Order::new(plan);
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
    let order = Order::new(plan);
    order
        .deps
        .iter()
        .enumerate()
        .flat_map(|(i, deps)| deps.iter().map(move |&d| (d, i)))
        .collect()
}

/// The ticket graph by plan index, in topological order.
pub(crate) struct Order {
    /// Dependencies of each ticket (plan indices, without repeats).
    deps: Vec<Vec<usize>>,
    /// Dependents of each ticket.
    dependents: Vec<Vec<usize>>,
    /// Tickets in topological order (Kahn's); those on or after a cycle are missing.
    topo: Vec<usize>,
    /// Position in `topo`, `usize::MAX` when missing.
    position: Vec<usize>,
    /// 0-based wave, `usize::MAX` when missing.
    level: Vec<usize>,
}

impl Order {
    pub(crate) fn new(plan: &Plan) -> Order {
        let n = plan.tickets.len();
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(n);
        for (i, t) in plan.tickets.iter().enumerate() {
            index.entry(t.id.as_str()).or_insert(i);
        }
        let mut deps: Vec<Vec<usize>> = Vec::with_capacity(n);
        let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, t) in plan.tickets.iter().enumerate() {
            let mut mine: Vec<usize> = t
                .depends_on
                .iter()
                .filter_map(|d| index.get(d.as_str()).copied())
                .collect();
            mine.sort_unstable();
            mine.dedup();
            for &d in &mine {
                dependents[d].push(i);
            }
            deps.push(mine);
        }
        let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
        let mut level = vec![usize::MAX; n];
        let mut queue: VecDeque<usize> = (0..n).filter(|&i| waiting[i] == 0).collect();
        let mut topo = Vec::with_capacity(n);
        while let Some(i) = queue.pop_front() {
            level[i] = deps[i].iter().map(|&d| level[d] + 1).max().unwrap_or(0);
            topo.push(i);
            for &s in &dependents[i] {
                waiting[s] -= 1;
                if waiting[s] == 0 {
                    queue.push_back(s);
                }
            }
        }
        let mut position = vec![usize::MAX; n];
        for (p, &i) in topo.iter().enumerate() {
            position[i] = p;
        }
        Order {
            deps,
            dependents,
            topo,
            position,
            level,
        }
    }

    fn waves(&self, plan: &Plan) -> Vec<Vec<String>> {
        let count = self
            .topo
            .iter()
            .map(|&i| self.level[i] + 1)
            .max()
            .unwrap_or(0);
        let mut waves: Vec<Vec<String>> = vec![Vec::new(); count];
        for &i in &self.topo {
            waves[self.level[i]].push(plan.tickets[i].id.clone());
        }
        for w in &mut waves {
            w.sort_unstable();
        }
        waves
    }

    /// Longest remaining path of every ticket, by plan index. A ticket on or
    /// after a cycle counts its own estimate plus what was computed of its
    /// dependents.
    fn remaining(&self, plan: &Plan) -> Vec<u64> {
        let mut rem: Vec<u64> = plan.tickets.iter().map(estimate).collect();
        for &i in self.topo.iter().rev() {
            let tail = self.dependents[i]
                .iter()
                .map(|&s| rem[s])
                .max()
                .unwrap_or(0);
            rem[i] = estimate(&plan.tickets[i]).saturating_add(tail);
        }
        rem
    }

    fn critical_path(&self, plan: &Plan) -> (Vec<String>, u64) {
        let rem = self.remaining(plan);
        let id = |i: usize| plan.tickets[i].id.as_str();
        let best = |candidates: &mut dyn Iterator<Item = usize>| {
            candidates.fold(None, |best: Option<usize>, i| match best {
                Some(b)
                    if (rem[b], std::cmp::Reverse(id(b))) >= (rem[i], std::cmp::Reverse(id(i))) =>
                {
                    Some(b)
                }
                _ => Some(i),
            })
        };
        let mut sources = self
            .topo
            .iter()
            .copied()
            .filter(|&i| self.deps[i].is_empty());
        let Some(mut at) = best(&mut sources) else {
            return (Vec::new(), 0);
        };
        let minutes = rem[at];
        let mut path = vec![plan.tickets[at].id.clone()];
        // Only tickets in the topological order: a walk into a cycle would not end.
        let in_order = |&i: &usize| self.position[i] != usize::MAX;
        while let Some(next) = best(&mut self.dependents[at].iter().copied().filter(in_order)) {
            at = next;
            path.push(plan.tickets[at].id.clone());
        }
        (path, minutes)
    }

    /// For each pair of plan indices, whether neither ticket depends on the
    /// other, directly or transitively.
    ///
    /// Tickets in one wave are never ordered. Other pairs are answered from
    /// ancestor bitsets over one block of topological positions at a time,
    /// so memory stays at `BLOCK / 8` bytes per ticket. A ticket on or after
    /// a cycle counts as unordered with every other.
    pub(crate) fn unordered(&self, pairs: &[(usize, usize)]) -> Vec<bool> {
        const BLOCK: usize = 4096;
        let mut out = vec![true; pairs.len()];
        // (earlier position, later ticket, pair index), grouped by block below.
        let mut queries: Vec<(usize, usize, usize)> = Vec::new();
        for (q, &(a, b)) in pairs.iter().enumerate() {
            let (pa, pb) = (self.position[a], self.position[b]);
            if pa == usize::MAX || pb == usize::MAX || self.level[a] == self.level[b] {
                continue;
            }
            let (early, late) = if pa < pb { (pa, b) } else { (pb, a) };
            queries.push((early, late, q));
        }
        queries.sort_unstable();
        let words = BLOCK.min(self.topo.len()).div_ceil(64).max(1);
        let mut anc = vec![0u64; self.topo.len() * words];
        for chunk in queries.chunk_by(|x, y| x.0 / BLOCK == y.0 / BLOCK) {
            let lo = chunk[0].0 / BLOCK * BLOCK;
            self.ancestors_in_block(lo, words, &mut anc);
            for &(early, late, q) in chunk {
                let bit = early - lo;
                let row = self.position[late] * words;
                out[q] = anc[row + bit / 64] & (1 << (bit % 64)) == 0;
            }
        }
        out
    }

    /// `tickets` (plan indices) cut into runs that follow one another: every
    /// ticket of a run is an ancestor of every ticket of the runs after it,
    /// and no finer cut has that property (the connected components of "may
    /// run at the same time" among `tickets`, treating them as one
    /// clique). Each run is ascending in plan index; runs are in
    /// topological order.
    ///
    /// One sweep in topological order: each ticket's latest ancestor among
    /// `tickets` (one pass over the span of the order they cover) tells
    /// which runs so far it may run beside; only when that ancestor ends a
    /// run of several tickets is the run's every ticket looked for among its
    /// ancestors, by a walk that stops at the run's start. `work` counts the
    /// tickets and dependencies looked at. A ticket on or after a cycle
    /// makes one run of all.
    pub(crate) fn series(&self, tickets: &[usize], work: &mut u64) -> Vec<Vec<usize>> {
        let mut u: Vec<usize> = tickets.to_vec();
        if u.iter().any(|&t| self.position[t] == usize::MAX) {
            u.sort_unstable();
            return vec![u];
        }
        u.sort_unstable_by_key(|&t| self.position[t]);
        let Some((&first, &last)) = u.first().zip(u.last()) else {
            return vec![];
        };
        let (lo, hi) = (self.position[first], self.position[last]);
        let upos: HashMap<usize, usize> = u.iter().enumerate().map(|(k, &t)| (t, k)).collect();
        // The latest ancestor among `u` of each ticket of the span, by place in `u`.
        let mut latest: Vec<Option<usize>> = vec![None; hi - lo + 1];
        for p in lo..=hi {
            let i = self.topo[p];
            let mut best = None;
            for &d in &self.deps[i] {
                *work += 1;
                let pd = self.position[d];
                if pd < lo {
                    continue;
                }
                best = best.max(upos.get(&d).copied().or(latest[pd - lo]));
            }
            latest[p - lo] = best;
        }
        // The start (place in `u`) of each run so far.
        let mut starts: Vec<usize> = Vec::new();
        for (k, &y) in u.iter().enumerate() {
            *work += 1;
            let Some(m) = latest[self.position[y] - lo] else {
                starts.truncate(1);
                if starts.is_empty() {
                    starts.push(k);
                }
                continue;
            };
            let j = starts.partition_point(|&s| s <= m) - 1;
            let end = starts.get(j + 1).map_or(k - 1, |&s| s - 1);
            let before = m == end && self.reaches_all(&u[starts[j]..=end], y, work);
            if !before {
                starts.truncate(j + 1);
            } else if j + 1 == starts.len() {
                starts.push(k);
            } else {
                starts.truncate(j + 2);
            }
        }
        let mut runs: Vec<Vec<usize>> = Vec::with_capacity(starts.len());
        for (r, &s) in starts.iter().enumerate() {
            let end = starts.get(r + 1).copied().unwrap_or(u.len());
            let mut run = u[s..end].to_vec();
            run.sort_unstable();
            runs.push(run);
        }
        runs
    }

    /// Whether every ticket of `run` (in topological order) is an ancestor
    /// of `y`: a walk up from `y` that never goes below the run's first
    /// ticket and stops once it has met them all.
    fn reaches_all(&self, run: &[usize], y: usize, work: &mut u64) -> bool {
        if run.len() == 1 {
            return true;
        }
        let floor = self.position[run[0]];
        let wanted: HashSet<usize> = run.iter().copied().collect();
        let mut seen: HashSet<usize> = HashSet::new();
        let mut stack = vec![y];
        let mut met = 0;
        while let Some(i) = stack.pop() {
            for &d in &self.deps[i] {
                *work += 1;
                if self.position[d] < floor || !seen.insert(d) {
                    continue;
                }
                if wanted.contains(&d) {
                    met += 1;
                    if met == run.len() {
                        return true;
                    }
                }
                stack.push(d);
            }
        }
        false
    }

    /// Fills `anc[position * words ..]` with the ancestors of each ticket
    /// whose topological position is in `lo .. lo + words * 64`.
    fn ancestors_in_block(&self, lo: usize, words: usize, anc: &mut [u64]) {
        let hi = lo + words * 64;
        anc.fill(0);
        for (p, &i) in self.topo.iter().enumerate().skip(lo) {
            for &d in &self.deps[i] {
                let pd = self.position[d];
                if pd < lo {
                    continue;
                }
                let (before, row) = anc.split_at_mut(p * words);
                let row = &mut row[..words];
                row.iter_mut()
                    .zip(&before[pd * words..pd * words + words])
                    .for_each(|(r, a)| *r |= a);
                if pd < hi {
                    row[(pd - lo) / 64] |= 1 << ((pd - lo) % 64);
                }
            }
        }
    }
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
        let order = Order::new(&p);
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
            let order = Order::new(&p);
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
