//! The ticket graph: references, cycles, and order.

use crate::diag::{Diagnostic, Sink};
use crate::model::Plan;
use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::{HashMap, HashSet};

/// The plan's tickets as a graph: an edge `a -> b` means `a` merges before `b` starts.
pub fn graph(plan: &Plan) -> DiGraph<&str, ()> {
    let mut g = DiGraph::with_capacity(plan.tickets.len(), plan.tickets.len());
    let index: HashMap<&str, _> = plan
        .tickets
        .iter()
        .map(|t| (t.id.as_str(), g.add_node(t.id.as_str())))
        .collect();
    for t in &plan.tickets {
        for dep in &t.depends_on {
            if let Some(&from) = index.get(dep.as_str()) {
                g.add_edge(from, index[t.id.as_str()], ());
            }
        }
    }
    g
}

/// Every cycle of the graph (one per strongly connected group), each as a
/// closed walk: it starts at the group's first ticket in plan order, follows
/// "merges before" edges, and ends where it started (`T2, T3, T2`).
pub fn cycles(plan: &Plan) -> Vec<Vec<String>> {
    let g = graph(plan);
    let order: HashMap<&str, usize> = plan
        .tickets
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    // Kosaraju's walk keeps its own stack: Tarjan's recursion overflows on a
    // chain of tens of thousands of tickets.
    let mut out: Vec<Vec<String>> = kosaraju_scc(&g)
        .into_iter()
        .filter(|scc| scc.len() > 1 || g.contains_edge(scc[0], scc[0]))
        .map(|scc| {
            let start = *scc
                .iter()
                .min_by_key(|n| order[g[**n]])
                .expect("an SCC is not empty");
            closed_walk(&g, &scc, start)
                .into_iter()
                .map(|n| g[n].to_string())
                .collect()
        })
        .collect();
    out.sort_by_key(|ids| order[ids[0].as_str()]);
    out
}

/// The shortest walk from `start` back to itself inside `group` (breadth
/// first, so the message names as few tickets as the cycle needs).
fn closed_walk(g: &DiGraph<&str, ()>, group: &[NodeIndex], start: NodeIndex) -> Vec<NodeIndex> {
    let inside: HashSet<NodeIndex> = group.iter().copied().collect();
    let mut came_from: HashMap<NodeIndex, NodeIndex> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        for next in g.neighbors(n) {
            if next == start {
                let mut walk = vec![start, n];
                let mut at = n;
                while at != start {
                    at = came_from[&at];
                    walk.push(at);
                }
                // Built backwards from the end: `start, n, ..., start`.
                walk.reverse();
                return walk;
            }
            if inside.contains(&next) && !came_from.contains_key(&next) {
                came_from.insert(next, n);
                queue.push_back(next);
            }
        }
    }
    vec![start, start]
}

/// Checks that ids are unique, dependencies name existing tickets, and the
/// graph is acyclic. `format` prefixes the codes (`native.dag.cycle`).
pub fn check_references(plan: &Plan, format: &str, sink: &mut dyn Sink) {
    let mut seen = HashSet::new();
    let ids: HashSet<&str> = plan.tickets.iter().map(|t| t.id.as_str()).collect();
    for (i, t) in plan.tickets.iter().enumerate() {
        if !seen.insert(t.id.as_str()) {
            sink.push(Diagnostic::error(
                format!("{format}.ticket.duplicate-id"),
                format!("/tickets/{i}/id"),
                format!("duplicate ticket id '{}'", t.id),
            ));
        }
        for (j, dep) in t.depends_on.iter().enumerate() {
            if !ids.contains(dep.as_str()) {
                sink.push(Diagnostic::error(
                    format!("{format}.ticket.unknown-dependency"),
                    format!("/tickets/{i}/depends_on/{j}"),
                    format!("{}: depends on unknown ticket '{dep}'", t.id),
                ));
            }
        }
    }
    for cycle in cycles(plan) {
        let i = plan
            .tickets
            .iter()
            .position(|t| t.id == cycle[0])
            .unwrap_or(0);
        sink.push(Diagnostic::error(
            format!("{format}.dag.cycle"),
            format!("/tickets/{i}"),
            format!("dependency cycle: {}", cycle.join(" -> ")),
        ));
    }
}
