//! The start order by simulation (issue 15). Longest remaining path first
//! is a good rule but not an optimal one: on two slots it can leave a slot
//! idle that another order would have filled. So runs are simulated over
//! the estimates, for the base order and a bounded number of others, and
//! the order whose run ends first is kept; ties keep the base order, so
//! nothing changes where no other order helps.
//!
//! A simulated run does what a run does when every ticket passes and takes
//! its estimate: whenever a slot is free it starts the first ready ticket
//! in the order whose pool is below its cap ([`super::Scheduler::next`]).
//! Merges take no time; one that needs no gates (nothing merged since its
//! attempt started) holds the slot for the dependents it readies, and any
//! other leaves the slot to the tickets ready already, as a run does.
//!
//! The other orders: a few classic priority rules, each improved by
//! forward-backward passes (a run is replayed backwards in time, latest
//! finish first, then forwards again, earliest start in the backward run
//! first, which packs the slots tighter while it shortens the run), then
//! orders whose remaining paths are jittered by a fixed-seed generator, so
//! a plan always gets the same order.
//!
//! Without estimates every ticket weighs 1 and the base order already
//! breaks ties by tickets then descendants; another order replaces it only
//! if it is strictly shorter in that equal-duration run. The search sees
//! the whole plan: a resumed run keeps the order chosen for all of it.

use super::Graph;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The simulation budget, in tickets plus dependencies per simulated run
/// (a run costs a few heap steps for each): a plan of 20 tickets gets
/// [`MAX_RUNS`] runs, one of 10,000 tickets about a dozen, and a plan too
/// large for [`MIN_RUNS`] keeps its base order without simulating at all.
const BUDGET: usize = 250_000;
const MAX_RUNS: usize = 300;
const MIN_RUNS: usize = 4;
/// Forward-backward passes from one order, stopping at the first that does not shorten it.
const PASSES: usize = 8;

/// What bounds a run's concurrency.
pub(super) struct Limits<'a> {
    /// Job slots.
    pub jobs: usize,
    /// The pool group of each ticket, an index into `caps`.
    pub group: &'a [usize],
    /// Each pool group's cap (group 0, no pool, has none).
    pub caps: Vec<Option<u32>>,
}

/// The start order to use (tickets, first first): `base` unless a
/// simulated run of another order ends strictly sooner.
pub(super) fn order(graph: &Graph<'_>, limits: &Limits, base: Vec<usize>) -> Vec<usize> {
    let edges: usize = (0..graph.ids.len()).map(|i| graph.children(i).len()).sum();
    let runs = (BUDGET / (graph.ids.len() + edges + 1)).min(MAX_RUNS);
    // On one slot every order takes the whole work.
    if limits.jobs < 2 || runs < MIN_RUNS {
        return base;
    }
    let sim = Sim { graph, limits };
    let (mut search, first) = Search::new(sim, &base, runs);
    search.explore(first);
    match search.best {
        Some((_, rank)) => {
            let mut order = vec![0; rank.len()];
            for (i, &r) in rank.iter().enumerate() {
                order[r] = i;
            }
            order
        }
        None => base,
    }
}

/// When each ticket started in a simulated run (`None`: never), and when
/// the last one ended.
pub(super) struct Timeline {
    pub start: Vec<Option<u64>>,
    pub makespan: u64,
}

/// A run in minutes over the estimates, driven by a rank per ticket (lower
/// starts first).
pub(super) struct Sim<'a> {
    pub graph: &'a Graph<'a>,
    pub limits: &'a Limits<'a>,
}

/// Ready tickets of each pool group, best rank first.
type Ready = Vec<BinaryHeap<Reverse<(usize, usize)>>>;

impl Sim<'_> {
    /// Runs forwards, or, given the tickets that run forwards, backwards in
    /// time: dependents first, over the same slots and caps (a schedule
    /// turned around in time keeps within them).
    pub(super) fn run(&self, rank: &[usize], backward: Option<&[bool]>) -> Timeline {
        let (g, caps, group) = (self.graph, &self.limits.caps, self.limits.group);
        let (mut pending, mut ready) = self.waiting(rank, backward);
        let mut active = vec![0u32; caps.len()];
        let mut running = BinaryHeap::new();
        let mut start = vec![None; g.ids.len()];
        // Merges so far, and how many there were when each ticket started.
        let (mut merges, mut base) = (0, vec![0; g.ids.len()]);
        let (mut now, mut merging) = (0, None);
        loop {
            while running.len() < self.limits.jobs {
                let Some(k) = pick(&ready, &active, caps) else {
                    break;
                };
                let Some(Reverse((_, i))) = ready[k].pop() else {
                    break;
                };
                active[k] += 1;
                (start[i], base[i]) = (Some(now), merges);
                running.push(Reverse((now + g.own[i], i)));
            }
            let i = match merging.take() {
                Some(i) => i,
                None => {
                    let Some(Reverse((end, i))) = running.pop() else {
                        break;
                    };
                    (now, merges) = (end, merges + 1);
                    // As in a run: a merge that needs no gates (nothing
                    // merged since the attempt started) holds the slot for
                    // the dependents it readies; any other merge leaves it
                    // to the tickets ready already, while the ticket still
                    // counts against its pool's cap until it merges.
                    if base[i] + 1 != merges {
                        merging = Some(i);
                        continue;
                    }
                    i
                }
            };
            active[group[i]] -= 1;
            self.release(i, rank, backward, &mut pending, &mut ready);
        }
        Timeline {
            start,
            makespan: now,
        }
    }

    /// Each ticket's unmet dependencies (dependents, backwards), and the
    /// tickets with none.
    fn waiting(&self, rank: &[usize], backward: Option<&[bool]>) -> (Vec<usize>, Ready) {
        let g = self.graph;
        let pending: Vec<usize> = match backward {
            None => (0..g.ids.len()).map(|i| g.waits_for(i)).collect(),
            Some(runs) => (0..g.ids.len())
                .map(|i| g.children(i).iter().filter(|&&c| runs[c]).count())
                .collect(),
        };
        let mut ready = vec![BinaryHeap::new(); self.limits.caps.len()];
        for i in 0..pending.len() {
            if pending[i] == 0 && backward.is_none_or(|runs| runs[i]) {
                ready[self.limits.group[i]].push(Reverse((rank[i], i)));
            }
        }
        (pending, ready)
    }

    /// `i` merged: the tickets waiting only for it are ready.
    fn release(
        &self,
        i: usize,
        rank: &[usize],
        backward: Option<&[bool]>,
        pending: &mut [usize],
        ready: &mut Ready,
    ) {
        let mut release = |n: usize| {
            pending[n] -= 1;
            if pending[n] == 0 {
                ready[self.limits.group[n]].push(Reverse((rank[n], n)));
            }
        };
        match backward {
            None => self.graph.children(i).iter().for_each(|&c| release(c)),
            Some(_) => self.graph.deps(i).iter().for_each(|&d| release(d)),
        }
    }
}

/// The group whose best ready ticket is best among those below their cap.
fn pick(ready: &Ready, active: &[u32], caps: &[Option<u32>]) -> Option<usize> {
    (0..ready.len())
        .filter(|&k| caps[k].is_none_or(|cap| active[k] < cap))
        .filter_map(|k| ready[k].peek().map(|Reverse(head)| (*head, k)))
        .min()
        .map(|(_, k)| k)
}

/// A bounded search for a start order whose run ends before the base one's.
struct Search<'a> {
    sim: Sim<'a>,
    /// Each ticket's rank in the base order, which breaks every tie.
    base: Vec<usize>,
    /// The tickets the base run starts; the others wait, whatever the
    /// order, on an id the plan lacks, a cycle or a pool capped at 0.
    runs: Vec<bool>,
    /// Simulated runs still allowed.
    left: usize,
    /// No order ends sooner: max(critical path, work / jobs).
    bound: u64,
    /// The base run's makespan.
    first: u64,
    /// A strictly shorter order than the base one, with its makespan.
    best: Option<(u64, Vec<usize>)>,
}

impl<'a> Search<'a> {
    /// The search, and the base order's run.
    fn new(sim: Sim<'a>, order: &[usize], runs: usize) -> (Search<'a>, Timeline) {
        let mut base = vec![0; order.len()];
        for (r, &i) in order.iter().enumerate() {
            base[i] = r;
        }
        let timeline = sim.run(&base, None);
        let ran: Vec<bool> = timeline.start.iter().map(Option::is_some).collect();
        let bound = lower_bound(sim.graph, &ran, sim.limits.jobs);
        let search = Search {
            sim,
            base,
            runs: ran,
            left: runs - 1,
            bound,
            first: timeline.makespan,
            best: None,
        };
        (search, timeline)
    }

    /// The end of the shortest run so far.
    fn makespan(&self) -> u64 {
        self.best.as_ref().map_or(self.first, |(m, _)| *m)
    }

    /// The base order, the classic rules, then jittered remaining paths,
    /// each improved, until the budget runs out or a run meets the bound.
    fn explore(&mut self, first: Timeline) {
        self.improve(first);
        if self.done() {
            return;
        }
        let g = self.sim.graph;
        let head = heads(g);
        let critical = g.minutes.iter().copied().max().unwrap_or(0);
        for rule in 0..4 {
            if self.done() {
                return;
            }
            let rank = match rule {
                // Least slack: latest start minus earliest start.
                0 => self.ranked(|i| (critical - g.minutes[i]).saturating_sub(head[i])),
                1 => self.ranked(|i| Reverse(g.descendants[i])),
                // The longest path after the ticket: what it unblocks.
                2 => self.ranked(|i| Reverse(g.minutes[i] - g.own[i])),
                _ => self.ranked(|i| Reverse(g.children(i).len())),
            };
            self.attempt(rank);
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        while !self.done() {
            let keys: Vec<u64> = g
                .minutes
                .iter()
                .map(|&m| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // The remaining path times 0.75 to 1.25.
                    m * (12 + seed % 9)
                })
                .collect();
            let rank = self.ranked(|i| Reverse(keys[i]));
            self.attempt(rank);
        }
    }

    /// Whether the budget is spent or the best run meets the bound.
    fn done(&self) -> bool {
        self.left == 0 || self.makespan() <= self.bound
    }

    /// Simulates an order and improves it.
    fn attempt(&mut self, rank: Vec<usize>) {
        if let Some(timeline) = self.forward(rank) {
            self.improve(timeline);
        }
    }

    /// Forward-backward passes while they shorten the run.
    fn improve(&mut self, mut timeline: Timeline) {
        for _ in 0..PASSES {
            if self.done() {
                return;
            }
            self.left -= 1;
            let own = &self.sim.graph.own;
            let finish = |t: &Timeline, i: usize| t.start[i].map_or(0, |s| s + own[i]);
            let back_rank = self.ranked(|i| Reverse(finish(&timeline, i)));
            let back = self.sim.run(&back_rank, Some(&self.runs));
            // Finishing last backwards is starting first forwards.
            let rank = self.ranked(|i| Reverse(finish(&back, i)));
            match self.forward(rank) {
                Some(next) if next.makespan < timeline.makespan => timeline = next,
                _ => return,
            }
        }
    }

    /// Simulates an order forwards, keeping it if it beats the best so far.
    fn forward(&mut self, rank: Vec<usize>) -> Option<Timeline> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let timeline = self.sim.run(&rank, None);
        if timeline.makespan < self.makespan() {
            self.best = Some((timeline.makespan, rank));
        }
        Some(timeline)
    }

    /// A rank per ticket by `key`, ties in base order, the tickets that
    /// never run last.
    fn ranked<K: Ord>(&self, key: impl Fn(usize) -> K) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.base.len()).collect();
        order.sort_unstable_by_key(|&i| (!self.runs[i], key(i), self.base[i]));
        let mut rank = vec![0; order.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r;
        }
        rank
    }
}

/// The earliest start of each ticket with unlimited slots.
fn heads(g: &Graph<'_>) -> Vec<u64> {
    let mut head = vec![0; g.ids.len()];
    for &i in g.tickets.topo() {
        for &c in g.children(i) {
            head[c] = head[c].max(head[i] + g.own[i]);
        }
    }
    head
}

/// max(critical path, work / jobs, rounded up) over the tickets that run.
fn lower_bound(g: &Graph<'_>, runs: &[bool], jobs: usize) -> u64 {
    let head = heads(g);
    let ran = (0..runs.len()).filter(|&i| runs[i]);
    let critical = ran.clone().map(|i| head[i] + g.own[i]).max().unwrap_or(0);
    let work: u64 = ran.map(|i| g.own[i]).sum();
    critical.max(work.div_ceil(jobs as u64))
}
