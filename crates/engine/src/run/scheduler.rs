//! Which ticket starts next: a ticket is ready when all its dependencies
//! have merged; ready tickets start in one fixed order, within the job slots
//! and per-pool caps. A failed ticket blocks its descendants only.
//!
//! The order is made once, when the scheduler is made: longest remaining
//! path first (`Graph::key`), unless a run simulated over the estimates at
//! the run's job count ends sooner with another order (module `search`).
//! The ready set of each pool is a `BTreeSet` of ranks, and each ticket
//! counts its dependencies that have not merged, so a pick and a state
//! change cost a logarithm, not a pass over the plan (10,000 tickets used
//! to take seconds to order).

mod search;

use crate::model::{Place, TicketState};
use planwright_plan::graph::TicketGraph;
use planwright_plan::Plan;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::sync::Arc;

/// The scheduler's view of a run. Tickets are known by their plan index
/// in the run's [`TicketGraph`]; a plan a run accepts repeats no id
/// (validation refuses it).
pub(crate) struct Scheduler {
    ids: Vec<String>,
    graph: Arc<TicketGraph>,
    /// Each ticket's estimate in minutes (1 without one).
    minutes: Vec<u64>,
    /// Dependencies not merged yet; a dependency on an id the plan lacks
    /// never merges.
    pending: Vec<usize>,
    /// Position in the start order among ready tickets (0 starts first).
    rank: Vec<usize>,
    by_rank: Vec<usize>,
    /// The pool group of each ticket: an index into `groups`.
    group: Vec<usize>,
    groups: Vec<Group>,
    /// The group of each pool by name (a capped pool no ticket names first
    /// has one too: rerouted tickets may run there).
    pool_group: HashMap<String, usize>,
    /// The group an active ticket counts against: the pool its attempt
    /// runs on, which a paused first pool may have changed.
    active_in: Vec<usize>,
    place: Vec<Place>,
}

/// The tickets of one pool (or of no pool, uncapped).
struct Group {
    cap: Option<u32>,
    active: u32,
    /// Ranks of the waiting tickets whose dependencies have all merged.
    ready: BTreeSet<usize>,
}

impl Scheduler {
    /// A scheduler for `plan`, whose graph is `graph`, on `jobs` slots;
    /// `pool_of` maps tickets to their pool, `caps` limits pools.
    pub(crate) fn new(
        plan: &Plan,
        graph: Arc<TicketGraph>,
        pool_of: HashMap<String, String>,
        caps: BTreeMap<String, u32>,
        jobs: usize,
    ) -> Scheduler {
        let order = Graph::new(plan, &graph);
        let n = order.ids.len();
        let (group, groups, pool_group) = groups(&order.ids, &pool_of, &caps);
        let mut by_rank: Vec<usize> = (0..n).collect();
        by_rank.sort_by_key(|&i| order.key(i));
        let limits = search::Limits {
            jobs,
            group: &group,
            caps: groups.iter().map(|g| g.cap).collect(),
        };
        let by_rank = search::order(&order, &limits, by_rank);
        let mut rank = vec![0; n];
        for (r, &i) in by_rank.iter().enumerate() {
            rank[i] = r;
        }
        let mut s = Scheduler {
            active_in: group.clone(),
            pool_group,
            pending: (0..n).map(|i| order.waits_for(i)).collect(),
            ids: order.ids,
            minutes: order.own,
            rank,
            by_rank,
            group,
            groups,
            place: vec![Place::Waiting; n],
            graph,
        };
        for i in 0..n {
            s.enter(i, Place::Waiting);
        }
        s
    }

    /// Places a ticket where its stored state puts it ([`Place::of`]): how
    /// a continued run takes up what earlier invocations settled.
    pub(crate) fn settled(&mut self, id: &str, state: TicketState) {
        match Place::of(state) {
            Place::Done => self.merged(id),
            Place::Active => self.started(id),
            Place::Waiting => self.requeue(id),
            Place::Dead => self.set(id, Place::Dead),
        }
    }

    /// Marks a ticket merged (also for tickets merged by an earlier run).
    pub(crate) fn merged(&mut self, id: &str) {
        self.set(id, Place::Done);
    }

    /// Marks a ticket as started, counted against its own pool's cap.
    pub(crate) fn started(&mut self, id: &str) {
        let Some(i) = self.graph.index_of(id) else {
            return;
        };
        self.start_in(i, self.group[i]);
    }

    /// Marks a ticket as started on `pool`, the pool its attempt runs on,
    /// whose cap it counts against; `None` counts against no cap (a ticket
    /// without a pool, or one parked until a paused pool reopens).
    pub(crate) fn started_on(&mut self, id: &str, pool: Option<&str>) {
        let Some(i) = self.graph.index_of(id) else {
            return;
        };
        let g = pool.and_then(|p| self.pool_group.get(p)).copied();
        self.start_in(i, g.unwrap_or(0));
    }

    /// Whether `pool` is below its cap (a pool without one always is).
    pub(crate) fn has_room(&self, pool: &str) -> bool {
        self.pool_group.get(pool).is_none_or(|&g| {
            let group = &self.groups[g];
            group.cap.is_none_or(|cap| group.active < cap)
        })
    }

    fn start_in(&mut self, i: usize, g: usize) {
        let from = self.place[i];
        self.leave(i, from);
        self.active_in[i] = g;
        self.place[i] = Place::Active;
        self.enter(i, Place::Active);
    }

    /// Puts a ticket back in the queue (a retry, or an interrupted attempt).
    pub(crate) fn requeue(&mut self, id: &str) {
        self.set(id, Place::Waiting);
    }

    /// Marks a ticket failed; returns its descendants that are now blocked, in plan order.
    pub(crate) fn failed(&mut self, id: &str) -> Vec<String> {
        self.set(id, Place::Dead);
        let Some(root) = self.graph.index_of(id) else {
            return Vec::new();
        };
        let mut seen = vec![false; self.ids.len()];
        let mut stack = vec![root];
        let mut blocked = Vec::new();
        while let Some(t) = stack.pop() {
            for &c in self.graph.dependents(t) {
                if !seen[c] {
                    seen[c] = true;
                    stack.push(c);
                    if self.place[c] == Place::Waiting {
                        blocked.push(c);
                    }
                }
            }
        }
        blocked.sort_unstable();
        blocked
            .into_iter()
            .map(|i| {
                let id = self.ids[i].clone();
                self.set(&id, Place::Dead);
                id
            })
            .collect()
    }

    /// Up to `free` ready tickets to start now, best first: the best head
    /// among the ready sets of the pools below their cap, one at a time.
    pub(crate) fn next(&self, free: usize) -> Vec<String> {
        let mut heads: Vec<_> = self
            .groups
            .iter()
            .map(|g| g.ready.iter().peekable())
            .collect();
        let mut taken = vec![0u32; self.groups.len()];
        let mut out = Vec::new();
        while out.len() < free {
            let best = heads
                .iter_mut()
                .enumerate()
                .filter(|(g, _)| {
                    let group = &self.groups[*g];
                    group.cap.is_none_or(|cap| group.active + taken[*g] < cap)
                })
                .filter_map(|(g, head)| head.peek().map(|&&r| (r, g)))
                .min();
            let Some((r, g)) = best else { break };
            heads[g].next();
            taken[g] += 1;
            out.push(self.ids[self.by_rank[r]].clone());
        }
        out
    }

    /// Plays the rest of the run on `jobs` slots as if every ticket passed
    /// and took its estimate, as a run starts them when the estimates hold
    /// (`run --dry-run`): the tickets that start together, in order, and
    /// the minute the last one ends. Merges take no time and hold the slot
    /// as in a run (see the `search` module).
    pub(crate) fn rehearse(&mut self, jobs: usize) -> (Vec<Vec<String>>, u64) {
        let mut running = BinaryHeap::new();
        let mut batches: Vec<(u64, Vec<String>)> = Vec::new();
        let (mut now, mut merges) = (0, 0);
        let mut merging = None;
        loop {
            for id in self.next(jobs.saturating_sub(running.len())) {
                let i = self
                    .graph
                    .index_of(&id)
                    .expect("a ticket the scheduler offered");
                self.start_in(i, self.group[i]);
                running.push(Reverse((now + self.minutes[i], i, merges)));
                match batches.last_mut() {
                    Some((at, batch)) if *at == now => batch.push(id),
                    _ => batches.push((now, vec![id])),
                }
            }
            if let Some(i) = merging.take() {
                self.set_at(i, Place::Done);
                continue;
            }
            let Some(Reverse((end, i, base))) = running.pop() else {
                return (batches.into_iter().map(|(_, b)| b).collect(), now);
            };
            (now, merges) = (end, merges + 1);
            // A merge that needs no gates holds the slot; another leaves it
            // to the tickets ready already.
            if base + 1 == merges {
                self.set_at(i, Place::Done);
            } else {
                merging = Some(i);
            }
        }
    }

    #[cfg(test)]
    /// Whether nothing is waiting that could still start or is active.
    pub(crate) fn finished(&self) -> bool {
        self.groups.iter().all(|g| g.active == 0) && self.next(1).is_empty()
    }

    /// Moves a ticket; an id the plan does not have (a ticket of an older
    /// plan) has nothing to order, so it is ignored.
    fn set(&mut self, id: &str, to: Place) {
        if let Some(i) = self.graph.index_of(id) {
            self.set_at(i, to);
        }
    }

    fn set_at(&mut self, i: usize, to: Place) {
        let from = self.place[i];
        if from != to {
            self.leave(i, from);
            self.place[i] = to;
            self.enter(i, to);
        }
    }

    fn leave(&mut self, i: usize, from: Place) {
        let g = self.group[i];
        match from {
            Place::Waiting => {
                self.groups[g].ready.remove(&self.rank[i]);
            }
            Place::Active => {
                let a = self.active_in[i];
                self.groups[a].active = self.groups[a].active.saturating_sub(1);
            }
            Place::Done => {
                let graph = Arc::clone(&self.graph);
                for &c in graph.dependents(i) {
                    self.pending[c] += 1;
                    if self.pending[c] == 1 && self.place[c] == Place::Waiting {
                        self.groups[self.group[c]].ready.remove(&self.rank[c]);
                    }
                }
            }
            Place::Dead => {}
        }
    }

    fn enter(&mut self, i: usize, to: Place) {
        let g = self.group[i];
        match to {
            Place::Waiting if self.pending[i] == 0 => {
                self.groups[g].ready.insert(self.rank[i]);
            }
            Place::Active => self.groups[self.active_in[i]].active += 1,
            Place::Done => {
                let graph = Arc::clone(&self.graph);
                for &c in graph.dependents(i) {
                    self.pending[c] = self.pending[c].saturating_sub(1);
                    if self.pending[c] == 0 && self.place[c] == Place::Waiting {
                        self.groups[self.group[c]].ready.insert(self.rank[c]);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Group 0 holds the tickets without a pool (never capped); every pool a
/// ticket names, and every capped pool, gets its own group with the pool's
/// cap, if it has one.
fn groups(
    ids: &[String],
    pool_of: &HashMap<String, String>,
    caps: &BTreeMap<String, u32>,
) -> (Vec<usize>, Vec<Group>, HashMap<String, usize>) {
    let group = |cap| Group {
        cap,
        active: 0,
        ready: BTreeSet::new(),
    };
    let mut groups = vec![group(None)];
    let mut named: HashMap<String, usize> = HashMap::new();
    let mut of = Vec::with_capacity(ids.len());
    for id in ids {
        of.push(match pool_of.get(id) {
            None => 0,
            Some(pool) => *named.entry(pool.clone()).or_insert_with(|| {
                groups.push(group(caps.get(pool).copied()));
                groups.len() - 1
            }),
        });
    }
    for (pool, cap) in caps {
        named.entry(pool.clone()).or_insert_with(|| {
            groups.push(group(Some(*cap)));
            groups.len() - 1
        });
    }
    (of, groups, named)
}

/// The run's ticket graph with what orders ready tickets: the longest
/// remaining path by estimate, then in tickets, then the number of
/// descendants, then plan order (issue 15).
struct Graph<'g> {
    ids: Vec<String>,
    tickets: &'g TicketGraph,
    /// Each ticket's own estimate (1 without one).
    own: Vec<u64>,
    /// The longest remaining path by estimate, the ticket included.
    minutes: Vec<u64>,
    length: Vec<u32>,
    descendants: Vec<u32>,
}

impl<'g> Graph<'g> {
    fn new(plan: &Plan, tickets: &'g TicketGraph) -> Graph<'g> {
        let n = plan.tickets.len();
        let mut g = Graph {
            ids: plan.tickets.iter().map(|t| t.id.clone()).collect(),
            tickets,
            descendants: descendant_counts(tickets),
            own: (plan.tickets.iter())
                .map(planwright_plan::analysis::estimate)
                .collect(),
            minutes: vec![0; n],
            length: vec![0; n],
        };
        for &i in tickets.topo().iter().rev() {
            let kids = tickets.dependents(i);
            let minutes = kids.iter().map(|&c| g.minutes[c]).max().unwrap_or(0);
            let length = kids.iter().map(|&c| g.length[c]).max().unwrap_or(0);
            g.minutes[i] = minutes + g.own[i];
            g.length[i] = length + 1;
        }
        g
    }

    /// The tickets that depend on ticket `i` directly.
    fn children(&self, i: usize) -> &'g [usize] {
        self.tickets.dependents(i)
    }

    /// The tickets ticket `i` depends on directly.
    fn deps(&self, i: usize) -> &'g [usize] {
        self.tickets.deps(i)
    }

    /// How many dependencies ticket `i` waits for at the start: its
    /// tickets', and any on an id the plan lacks, which never merges.
    fn waits_for(&self, i: usize) -> usize {
        self.tickets.deps(i).len() + self.tickets.missing(i)
    }

    /// Sorts ascending into the start order.
    fn key(&self, i: usize) -> (Reverse<u64>, Reverse<u32>, Reverse<u32>, usize) {
        (
            Reverse(self.minutes[i]),
            Reverse(self.length[i]),
            Reverse(self.descendants[i]),
            i,
        )
    }
}

/// How many tickets depend on each ticket, directly or not. Reachability
/// bitsets over one block of 4,096 tickets at a time (512 bytes per
/// ticket) keep memory linear; the time is edges times blocks.
fn descendant_counts(graph: &TicketGraph) -> Vec<u32> {
    const WORDS: usize = 64;
    const BLOCK: usize = WORDS * 64;
    let (n, topo) = (graph.len(), graph.topo());
    let mut counts = vec![0u32; n];
    let mut reach = vec![0u64; n * WORDS];
    for start in (0..n).step_by(BLOCK) {
        reach.fill(0);
        for &i in topo.iter().rev() {
            let mut mine = [0u64; WORDS];
            for &c in graph.dependents(i) {
                for (m, r) in mine.iter_mut().zip(&reach[c * WORDS..(c + 1) * WORDS]) {
                    *m |= r;
                }
                if (start..start + BLOCK).contains(&c) {
                    mine[(c - start) / 64] |= 1 << ((c - start) % 64);
                }
            }
            counts[i] += mine.iter().map(|w| w.count_ones()).sum::<u32>();
            reach[i * WORDS..(i + 1) * WORDS].copy_from_slice(&mine);
        }
    }
    counts
}
#[cfg(test)]
mod tests {
    use super::*;

    fn graph_of(p: &Plan) -> Arc<TicketGraph> {
        Arc::new(TicketGraph::new(p))
    }

    fn plan(edges: &[(&str, &[&str])]) -> Plan {
        let tickets: Vec<_> = edges
            .iter()
            .map(|(id, deps)| serde_json::json!({"id": id, "body": "b", "scope": [{"pattern": "x", "op": "any"}], "depends_on": deps}))
            .collect();
        serde_json::from_value(
            serde_json::json!({"source_format": "native", "base": "main", "tickets": tickets}),
        )
        .unwrap()
    }

    #[test]
    fn longest_path_first_and_failures_block_descendants_only() {
        let p = plan(&[
            ("A", &[]),
            ("B", &[]),
            ("C", &["B"]),
            ("D", &["C"]),
            ("E", &["A"]),
        ]);
        let mut s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 2);
        assert_eq!(s.next(1), ["B"], "B heads the longest chain");
        assert_eq!(s.next(5), ["B", "A"]);
        s.started("B");
        s.started("A");
        assert!(s.next(5).is_empty());
        assert_eq!(s.failed("B"), ["C", "D"]);
        s.merged("A");
        assert_eq!(s.next(5), ["E"]);
        s.started("E");
        s.merged("E");
        assert!(s.finished());
    }

    #[test]
    fn pool_caps_limit_concurrency() {
        let p = plan(&[("A", &[]), ("B", &[]), ("C", &[])]);
        let pools = ["A", "B"]
            .iter()
            .map(|t| (t.to_string(), "claude".to_string()))
            .collect();
        let caps = [("claude".to_string(), 1)].into_iter().collect();
        let mut s = Scheduler::new(&p, graph_of(&p), pools, caps, 2);
        assert_eq!(s.next(3), ["A", "C"]);
        s.started("A");
        assert_eq!(s.next(3), ["C"]);
    }

    #[test]
    fn a_ticket_counts_against_the_pool_it_runs_on() {
        let p = plan(&[("A", &[]), ("B", &[]), ("C", &[])]);
        let pools = [("A", "x"), ("B", "x"), ("C", "y")]
            .iter()
            .map(|(t, pool)| (t.to_string(), pool.to_string()))
            .collect();
        let caps = [
            ("x".to_string(), 2),
            ("y".to_string(), 1),
            ("z".to_string(), 1),
        ]
        .into_iter()
        .collect();
        let mut s = Scheduler::new(&p, graph_of(&p), pools, caps, 2);
        // A's first pool is paused: it runs on y, and takes y's room.
        s.started_on("A", Some("y"));
        assert!(!s.has_room("y") && s.has_room("x"));
        assert_eq!(s.next(3), ["B"], "C's pool y is full; x has room for B");
        s.started_on("B", Some("z"));
        assert!(
            !s.has_room("z"),
            "a capped pool no ticket names first counts too"
        );
        s.requeue("A");
        assert!(s.has_room("y"));
        assert_eq!(s.next(3), ["A", "C"]);
        s.started_on("A", None);
        assert!(
            s.has_room("x") && s.has_room("y"),
            "a parked ticket holds no pool"
        );
        assert!(!s.finished());
    }

    fn estimated(edges: &[(&str, &[&str], u32)]) -> Plan {
        let mut p = plan(&edges.iter().map(|(id, d, _)| (*id, *d)).collect::<Vec<_>>());
        for (t, (_, _, minutes)) in p.tickets.iter_mut().zip(edges) {
            t.estimate_minutes = Some(*minutes);
        }
        p
    }

    /// Every ticket started and merged as soon as it is offered, `jobs` at a time.
    fn batches(s: &mut Scheduler, jobs: usize) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        loop {
            let batch = s.next(jobs);
            if batch.is_empty() {
                return out;
            }
            for id in &batch {
                s.started(id);
                s.merged(id);
            }
            out.push(batch);
        }
    }

    #[test]
    fn a_rehearsal_starts_a_ticket_as_soon_as_a_slot_frees() {
        let p = estimated(&[
            ("A", &[], 3),
            ("B", &[], 1),
            ("C", &["B"], 1),
            ("D", &[], 1),
        ]);
        let mut s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 2);
        let (order, end) = s.rehearse(2);
        // B ends at minute 1 while A runs on: C and then D take its slot.
        assert_eq!(order, [vec!["A", "B"], vec!["C"], vec!["D"]]);
        assert_eq!(end, 3);
        assert!(s.finished());
    }

    #[test]
    fn a_merge_that_needs_gates_leaves_the_slot_to_a_ready_ticket() {
        let p = estimated(&[
            ("B", &[], 2),
            ("C", &["B"], 5),
            ("X", &[], 1),
            ("Z", &["X"], 4),
            ("E", &[], 1),
        ]);
        // Made for one slot, so the order is longest remaining path first.
        let mut s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 1);
        let (order, end) = s.rehearse(2);
        // X's merge needs no gates: Z takes its slot. X merged while B
        // ran, so B's merge runs the gates: its slot goes to E, ready
        // already, and C waits for the next one.
        assert_eq!(order, [vec!["B", "X"], vec!["Z"], vec!["E"], vec!["C"]]);
        assert_eq!(end, 8);
    }

    #[test]
    fn without_estimates_ties_go_to_more_descendants_then_plan_order() {
        // All three chains are two tickets long; C has two dependents, A and E one.
        let p = plan(&[
            ("A", &[]),
            ("B", &["A"]),
            ("C", &[]),
            ("D", &["C"]),
            ("F", &["C"]),
            ("E", &[]),
            ("G", &["E"]),
            ("H", &[]),
        ]);
        let mut s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 2);
        assert_eq!(s.next(8), ["C", "A", "E", "H"]);
        assert_eq!(
            batches(&mut s, 2),
            [
                vec!["C", "A"],
                vec!["E", "B"],
                vec!["D", "F"],
                vec!["G", "H"]
            ]
        );
    }

    #[test]
    fn with_estimates_minutes_decide_then_the_path_in_tickets() {
        // X: 4 minutes alone; Y then Z: 4 minutes over two tickets; W: 5 minutes.
        let p = estimated(&[
            ("X", &[], 4),
            ("Y", &[], 2),
            ("Z", &["Y"], 2),
            ("W", &[], 5),
        ]);
        let s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 2);
        assert_eq!(s.next(4), ["W", "Y", "X"]);
    }

    #[test]
    fn the_order_of_the_earlier_scheduler_is_kept_where_descendants_do_not_tie_break() {
        // The earlier scheduler: longest remaining path first, plan order among equals.
        let p = plan(&[
            ("A", &[]),
            ("B", &[]),
            ("C", &["A", "B"]),
            ("D", &["C"]),
            ("E", &[]),
            ("F", &["E"]),
            ("G", &["D", "F"]),
            ("H", &[]),
        ]);
        let mut s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 2);
        assert_eq!(
            batches(&mut s, 2),
            [
                vec!["A", "B"],
                vec!["C", "E"],
                vec!["D", "F"],
                vec!["G", "H"]
            ]
        );
    }

    #[test]
    fn caps_hold_per_pool_and_free_up_as_tickets_end() {
        let p = plan(&[("A", &[]), ("B", &[]), ("C", &[]), ("D", &[]), ("E", &[])]);
        let pools = [("A", "x"), ("B", "x"), ("C", "y"), ("D", "y"), ("E", "z")]
            .iter()
            .map(|(t, pool)| (t.to_string(), pool.to_string()))
            .collect();
        let caps = [("x".to_string(), 1), ("y".to_string(), 0)]
            .into_iter()
            .collect();
        let mut s = Scheduler::new(&p, graph_of(&p), pools, caps, 2);
        assert_eq!(
            s.next(5),
            ["A", "E"],
            "y is closed, x takes one, z has no cap"
        );
        s.started("A");
        assert_eq!(s.next(5), ["E"]);
        s.requeue("A");
        assert_eq!(s.next(5), ["A", "E"]);
        s.started("A");
        s.merged("A");
        assert_eq!(s.next(5), ["B", "E"]);
        s.started("B");
        s.started("E");
        s.merged("B");
        s.merged("E");
        assert!(s.next(5).is_empty());
        assert!(
            s.finished(),
            "C and D can never start in a pool capped at 0"
        );
    }

    #[test]
    fn requeueing_a_merged_ticket_holds_back_its_dependents_again() {
        let p = plan(&[("A", &[]), ("B", &["A"]), ("C", &["B", "X"])]);
        let mut s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 2);
        s.merged("A");
        assert_eq!(s.next(3), ["B"]);
        s.requeue("A");
        assert_eq!(s.next(3), ["A"]);
        s.merged("A");
        s.merged("B");
        assert!(s.next(3).is_empty(), "C waits for X, which the plan lacks");
        s.merged("unknown");
        assert!(s.finished());
    }

    #[test]
    fn failing_blocks_waiting_descendants_once_in_plan_order() {
        let p = plan(&[
            ("A", &[]),
            ("B", &["A"]),
            ("C", &["A"]),
            ("D", &["B", "C"]),
            ("E", &[]),
        ]);
        let mut s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 2);
        s.started("A");
        assert_eq!(s.failed("A"), ["B", "C", "D"]);
        assert!(s.failed("A").is_empty(), "they are dead already");
        assert_eq!(s.next(5), ["E"]);
    }

    /// A fixed-seed generator of numbers below its argument.
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    /// Reference: filter every ticket and sort by rank, as the scheduler did
    /// before it kept ready sets; both must offer the same tickets at every step.
    fn naive_next(p: &Plan, s: &Scheduler, free: usize) -> Vec<String> {
        let tickets = TicketGraph::new(p);
        let g = Graph::new(p, &tickets);
        let mut ready: Vec<usize> = (0..g.ids.len())
            .filter(|&i| s.place[i] == Place::Waiting)
            .filter(|&i| g.tickets.missing(i) == 0)
            .filter(|&i| g.deps(i).iter().all(|&d| s.place[d] == Place::Done))
            .collect();
        ready.sort_by_key(|&i| s.rank[i]);
        ready
            .into_iter()
            .take(free)
            .map(|i| g.ids[i].clone())
            .collect()
    }

    #[test]
    fn ready_sets_agree_with_a_full_scan_on_random_plans() {
        let mut rand = xorshift(0x2545_f491_4f6c_dd1du64);
        for _ in 0..40 {
            let n = 2 + rand(14) as usize;
            let names: Vec<String> = (0..n).map(|i| format!("T{i}")).collect();
            let deps: Vec<Vec<&str>> = (0..n)
                .map(|i| {
                    (0..i)
                        .filter(|_| rand(4) == 0)
                        .map(|d| names[d].as_str())
                        .collect()
                })
                .collect();
            let edges: Vec<(&str, &[&str])> = names
                .iter()
                .zip(&deps)
                .map(|(n, d)| (n.as_str(), d.as_slice()))
                .collect();
            let p = plan(&edges);
            let mut s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 2);
            for _ in 0..3 * n {
                assert_eq!(s.next(n), naive_next(&p, &s, n));
                let id = names[rand(n as u64) as usize].clone();
                match rand(5) {
                    0 => s.started(&id),
                    1 | 2 => s.merged(&id),
                    3 => s.requeue(&id),
                    _ => {
                        s.failed(&id);
                    }
                }
            }
        }
    }

    /// The bench's DAG (bench/makespan.sh): critical path 38, work 120.
    fn bench_dag(with_estimates: bool) -> Plan {
        let times = [
            2, 3, 9, 2, 5, 4, 4, 8, 6, 3, 7, 10, 4, 9, 5, 7, 3, 12, 11, 6,
        ];
        let deps = [
            "", "", "0", "0", "1", "1", "2", "3", "4", "5", "6", "6 7", "8", "9", "10", "11",
            "12 13", "13", "14", "15 16",
        ];
        let names: Vec<String> = (0..20).map(|i| format!("t{i}")).collect();
        let dep_names: Vec<Vec<String>> = deps
            .iter()
            .map(|ds| ds.split_whitespace().map(|d| format!("t{d}")).collect())
            .collect();
        let dep_refs: Vec<Vec<&str>> = dep_names
            .iter()
            .map(|ds| ds.iter().map(String::as_str).collect())
            .collect();
        let edges: Vec<(&str, &[&str], u32)> = (0..20)
            .map(|i| (names[i].as_str(), dep_refs[i].as_slice(), times[i]))
            .collect();
        timed_plan(&edges, with_estimates)
    }

    /// The plan of (id, dependencies, minutes), with the minutes as
    /// estimates or without any.
    fn timed_plan(edges: &[(&str, &[&str], u32)], estimates: bool) -> Plan {
        if estimates {
            estimated(edges)
        } else {
            plan(&edges.iter().map(|(id, d, _)| (*id, *d)).collect::<Vec<_>>())
        }
    }

    #[test]
    fn with_estimates_the_bench_dag_meets_its_bound() {
        let p = bench_dag(true);
        let mut base = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 1);
        assert_eq!(
            base.rehearse(2).1,
            62,
            "longest remaining path first leaves a slot idle"
        );
        let mut s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 2);
        assert_eq!(s.rehearse(2).1, 60, "work / 2 slots");
        let mut s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 4);
        assert_eq!(s.rehearse(4).1, 38, "the critical path");
    }

    #[test]
    fn without_estimates_the_bench_dag_keeps_the_tie_break_rule() {
        // In equal durations the rule already takes ceil(20 / 2) steps.
        let p = bench_dag(false);
        let base = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 1);
        let s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 2);
        assert_eq!(s.by_rank, base.by_rank);
    }

    /// A random plan of up to `size` tickets, estimates 1 to 12 minutes when asked.
    fn random_plan(rand: &mut impl FnMut(u64) -> u64, size: u64, estimates: bool) -> Plan {
        let n = 2 + rand(size - 1) as usize;
        let names: Vec<String> = (0..n).map(|i| format!("T{i}")).collect();
        let deps: Vec<Vec<&str>> = (0..n)
            .map(|i| {
                (i.saturating_sub(6)..i)
                    .filter(|_| rand(3) == 0)
                    .map(|d| names[d].as_str())
                    .collect()
            })
            .collect();
        let edges: Vec<(&str, &[&str], u32)> = (0..n)
            .map(|i| (names[i].as_str(), deps[i].as_slice(), 1 + rand(12) as u32))
            .collect();
        timed_plan(&edges, estimates)
    }

    #[test]
    fn the_chosen_order_never_runs_longer_than_longest_path_first() {
        let mut rand = xorshift(0x9d2c_5680_1b87_3a5fu64);
        let mut shorter = 0;
        for round in 0..60 {
            let p = random_plan(&mut rand, 30, round % 3 != 0);
            let jobs = 2 + round % 3;
            // On one slot the search is skipped: the base order.
            let mut base = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), 1);
            let mut s = Scheduler::new(&p, graph_of(&p), HashMap::new(), BTreeMap::new(), jobs);
            let (before, after) = (base.rehearse(jobs).1, s.rehearse(jobs).1);
            assert!(after <= before, "round {round}: {after} > {before}");
            if after == before {
                assert_eq!(
                    s.by_rank, base.by_rank,
                    "round {round}: a tie keeps the rule"
                );
            } else {
                shorter += 1;
            }
        }
        assert!(
            shorter > 0,
            "some random plan has a better order than the rule"
        );
    }

    #[test]
    fn the_simulation_predicts_the_scheduler_within_pool_caps() {
        let mut rand = xorshift(0x51f1_5e5c_a1d0_c0deu64);
        for round in 0..30 {
            let p = random_plan(&mut rand, 24, true);
            let mut pools = HashMap::new();
            for t in &p.tickets {
                if rand(2) == 0 {
                    pools.insert(t.id.clone(), format!("pool{}", rand(2)));
                }
            }
            let caps = [("pool0".to_string(), 1), ("pool1".to_string(), 2)]
                .into_iter()
                .collect();
            let jobs = 2 + round % 3;
            let mut s = Scheduler::new(&p, graph_of(&p), pools, caps, jobs);
            let tickets = TicketGraph::new(&p);
            let graph = Graph::new(&p, &tickets);
            let limits = search::Limits {
                jobs,
                group: &s.group,
                caps: s.groups.iter().map(|g| g.cap).collect(),
            };
            let sim = search::Sim {
                graph: &graph,
                limits: &limits,
            };
            let predicted = sim.run(&s.rank, None).makespan;
            assert_eq!(s.rehearse(jobs).1, predicted, "round {round}");
        }
    }
}
