//! The ticket graph of a plan: dependencies, dependents and a
//! topological order by plan index, and the questions of order asked of
//! it (waves, the critical path, which tickets may run at the same time).

use crate::analysis::estimate;
use crate::model::Plan;
use std::collections::{HashMap, HashSet, VecDeque};

/// The ticket graph by plan index, in topological order: built once per
/// plan and borrowed by whatever needs dependencies, dependents or an
/// order (validation's analysis, preflight, the scheduler, the run's
/// recorded graph).
pub struct TicketGraph {
    /// Plan index of each id (a repeated id means its first ticket).
    index: HashMap<String, usize>,
    /// Dependencies of each ticket (plan indices, without repeats).
    deps: Vec<Vec<usize>>,
    /// Dependents of each ticket.
    dependents: Vec<Vec<usize>>,
    /// How many distinct ids each ticket depends on that the plan lacks.
    missing: Vec<usize>,
    /// Tickets in topological order (Kahn's); those on or after a cycle are missing.
    topo: Vec<usize>,
    /// Position in `topo`, `usize::MAX` when missing.
    position: Vec<usize>,
    /// 0-based wave, `usize::MAX` when missing.
    level: Vec<usize>,
}

impl TicketGraph {
    /// The graph of `plan`.
    pub fn new(plan: &Plan) -> TicketGraph {
        let n = plan.tickets.len();
        let mut index: HashMap<String, usize> = HashMap::with_capacity(n);
        for (i, t) in plan.tickets.iter().enumerate() {
            index.entry(t.id.clone()).or_insert(i);
        }
        let mut deps: Vec<Vec<usize>> = Vec::with_capacity(n);
        let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut missing = Vec::with_capacity(n);
        for (i, t) in plan.tickets.iter().enumerate() {
            let mut mine: Vec<usize> = t
                .depends_on
                .iter()
                .filter_map(|d| index.get(d).copied())
                .collect();
            mine.sort_unstable();
            mine.dedup();
            let mut unknown: Vec<&str> = (t.depends_on.iter())
                .map(String::as_str)
                .filter(|d| !index.contains_key(*d))
                .collect();
            unknown.sort_unstable();
            unknown.dedup();
            missing.push(unknown.len());
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
        TicketGraph {
            index,
            deps,
            dependents,
            missing,
            topo,
            position,
            level,
        }
    }

    /// How many tickets the plan has.
    pub fn len(&self) -> usize {
        self.deps.len()
    }

    /// Whether the plan has no ticket.
    pub fn is_empty(&self) -> bool {
        self.deps.is_empty()
    }

    /// The plan index of the (first) ticket with this id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The ticket's dependencies: plan indices, ascending, without
    /// repeats or unknown ids.
    pub fn deps(&self, ticket: usize) -> &[usize] {
        &self.deps[ticket]
    }

    /// How many distinct ids the ticket depends on that the plan lacks
    /// (which validation rejects): such a dependency never merges.
    pub fn missing(&self, ticket: usize) -> usize {
        self.missing[ticket]
    }

    /// The tickets that depend on this one directly, in plan order.
    pub fn dependents(&self, ticket: usize) -> &[usize] {
        &self.dependents[ticket]
    }

    /// Every ticket in topological order (Kahn's, first ready first);
    /// tickets on or after a cycle (which validation rejects) are missing.
    pub fn topo(&self) -> &[usize] {
        &self.topo
    }

    /// Every dependency edge as plan indices `(dependency, dependent)`, in
    /// plan order of the dependent, then of the dependency.
    pub fn edges(&self) -> Vec<(usize, usize)> {
        (self.deps.iter().enumerate())
            .flat_map(|(i, deps)| deps.iter().map(move |&d| (d, i)))
            .collect()
    }

    /// The ticket's ancestors: every ticket it depends on, directly or
    /// not, as plan indices in no particular order.
    pub fn ancestors(&self, ticket: usize) -> Vec<usize> {
        let mut seen = HashSet::new();
        let mut stack = vec![ticket];
        while let Some(t) = stack.pop() {
            for &d in &self.deps[t] {
                if seen.insert(d) {
                    stack.push(d);
                }
            }
        }
        seen.into_iter().collect()
    }

    /// The waves of `plan` (see [`crate::analysis::Analysis::waves`]).
    pub fn waves(&self, plan: &Plan) -> Vec<Vec<String>> {
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
    pub(crate) fn remaining(&self, plan: &Plan) -> Vec<u64> {
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

    pub(crate) fn critical_path(&self, plan: &Plan) -> (Vec<String>, u64) {
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
        self.unordered_counted(pairs, &mut 0)
    }

    /// [`TicketGraph::unordered`], adding to `work` the topological positions
    /// whose ancestors it computed.
    pub(crate) fn unordered_counted(&self, pairs: &[(usize, usize)], work: &mut u64) -> Vec<bool> {
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
        let mut anc: Vec<u64> = Vec::new();
        for chunk in queries.chunk_by(|x, y| x.0 / BLOCK == y.0 / BLOCK) {
            // Only the span the questions reach (the chunk's earliest
            // position, within one block of it, to its latest): a few
            // tickets asked about cost their span, not the plan.
            let lo = chunk[0].0;
            let last = (chunk.iter())
                .map(|&(_, late, _)| self.position[late])
                .max()
                .unwrap_or(lo);
            *work += (last - lo + 1) as u64;
            let words = (last - lo + 1).min(BLOCK).div_ceil(64);
            self.ancestors_in_block(lo, last, words, &mut anc);
            for &(early, late, q) in chunk {
                let bit = early - lo;
                let row = (self.position[late] - lo) * words;
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

    /// Fills `anc[(position - lo) * words ..]`, for each topological
    /// position from `lo` to `last`, with the ticket's ancestors whose
    /// position is in `lo .. lo + words * 64`.
    fn ancestors_in_block(&self, lo: usize, last: usize, words: usize, anc: &mut Vec<u64>) {
        let hi = lo + words * 64;
        anc.clear();
        anc.resize((last - lo + 1) * words, 0);
        for p in lo..=last {
            for &d in &self.deps[self.topo[p]] {
                let pd = self.position[d];
                if pd < lo {
                    continue;
                }
                let (before, row) = anc.split_at_mut((p - lo) * words);
                let row = &mut row[..words];
                let from = (pd - lo) * words;
                row.iter_mut()
                    .zip(&before[from..from + words])
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
    use crate::model::{Format, Ticket};

    fn t(id: &str, deps: &[&str]) -> Ticket {
        Ticket {
            depends_on: deps.iter().map(|d| d.to_string()).collect(),
            ..Ticket::new(id, "b")
        }
    }

    /// What every user of the graph asks of it, on one plan: D depends on
    /// C twice and on an id the plan lacks.
    #[test]
    fn one_graph_answers_dependencies_dependents_order_and_ancestors() {
        let plan = Plan::new(
            Format::Native,
            vec![
                t("A", &[]),
                t("B", &["A"]),
                t("C", &["B", "A"]),
                t("D", &["C", "C", "X"]),
            ],
        );
        let g = TicketGraph::new(&plan);
        assert_eq!(
            (g.len(), g.index_of("C"), g.index_of("X")),
            (4, Some(2), None)
        );
        assert_eq!((g.deps(2), g.deps(3)), (&[0, 1][..], &[2][..]));
        assert_eq!((g.dependents(0), g.dependents(2)), (&[1, 2][..], &[3][..]));
        assert_eq!((g.missing(3), g.missing(2)), (1, 0));
        assert_eq!(g.topo(), [0, 1, 2, 3]);
        assert_eq!(g.edges(), [(0, 1), (0, 2), (1, 2), (2, 3)]);
        let mut up = g.ancestors(3);
        up.sort_unstable();
        assert_eq!(up, [0, 1, 2]);
        assert_eq!(g.waves(&plan), [["A"], ["B"], ["C"], ["D"]]);
    }
}
