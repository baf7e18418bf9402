//! Which ticket starts next: a ticket is ready when all its dependencies
//! have merged; ready tickets start longest remaining path first, within the
//! job slots and per-pool caps. A failed ticket blocks its descendants only.

use planwright_plan::Plan;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Where the scheduler thinks a ticket is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Waiting for its dependencies, a free slot, or the end of a pause.
    Waiting,
    /// An attempt, a merge or a pause is in progress.
    Active,
    /// Merged (or merged from an older definition and not run again).
    Done,
    /// Failed or blocked.
    Dead,
}

/// The scheduler's view of a run.
pub struct Scheduler {
    order: Vec<String>,
    deps: HashMap<String, Vec<String>>,
    children: HashMap<String, Vec<String>>,
    priority: HashMap<String, u64>,
    pool_of: HashMap<String, String>,
    caps: BTreeMap<String, u32>,
    state: HashMap<String, Place>,
}

impl Scheduler {
    /// A scheduler for `plan`; `pool_of` maps tickets to their pool, `caps` limits pools.
    pub fn new(
        plan: &Plan,
        pool_of: HashMap<String, String>,
        caps: BTreeMap<String, u32>,
    ) -> Scheduler {
        let mut children: HashMap<String, Vec<String>> = HashMap::new();
        for t in &plan.tickets {
            for d in &t.depends_on {
                children.entry(d.clone()).or_default().push(t.id.clone());
            }
        }
        Scheduler {
            order: plan.tickets.iter().map(|t| t.id.clone()).collect(),
            deps: plan
                .tickets
                .iter()
                .map(|t| (t.id.clone(), t.depends_on.clone()))
                .collect(),
            children,
            priority: planwright_plan::analysis::longest_remaining(plan),
            pool_of,
            caps,
            state: plan
                .tickets
                .iter()
                .map(|t| (t.id.clone(), Place::Waiting))
                .collect(),
        }
    }

    /// Marks a ticket merged (also for tickets merged by an earlier run).
    pub fn merged(&mut self, id: &str) {
        self.state.insert(id.to_string(), Place::Done);
    }

    /// Marks a ticket as started.
    pub fn started(&mut self, id: &str) {
        self.state.insert(id.to_string(), Place::Active);
    }

    /// Puts a ticket back in the queue (a retry, or an interrupted attempt).
    pub fn requeue(&mut self, id: &str) {
        self.state.insert(id.to_string(), Place::Waiting);
    }

    /// Marks a ticket failed; returns its descendants that are now blocked, in plan order.
    pub fn failed(&mut self, id: &str) -> Vec<String> {
        self.state.insert(id.to_string(), Place::Dead);
        let mut seen = HashSet::new();
        let mut stack = vec![id.to_string()];
        while let Some(t) = stack.pop() {
            for c in self.children.get(&t).into_iter().flatten() {
                if seen.insert(c.clone()) {
                    stack.push(c.clone());
                }
            }
        }
        let blocked: Vec<String> = self
            .order
            .iter()
            .filter(|t| seen.contains(*t) && self.state.get(*t) == Some(&Place::Waiting))
            .cloned()
            .collect();
        for t in &blocked {
            self.state.insert(t.clone(), Place::Dead);
        }
        blocked
    }

    fn active_in_pool(&self, pool: &str) -> u32 {
        self.state
            .iter()
            .filter(|(id, s)| {
                **s == Place::Active && self.pool_of.get(*id).map(String::as_str) == Some(pool)
            })
            .count() as u32
    }

    /// Up to `free` ready tickets to start now, best first.
    pub fn next(&self, free: usize) -> Vec<String> {
        let mut ready: Vec<&String> = self
            .order
            .iter()
            .filter(|id| self.state.get(*id) == Some(&Place::Waiting))
            .filter(|id| {
                self.deps[*id]
                    .iter()
                    .all(|d| self.state.get(d) == Some(&Place::Done))
            })
            .collect();
        // Stable sort keeps plan order among equals.
        ready.sort_by_key(|id| std::cmp::Reverse(self.priority.get(*id).copied().unwrap_or(0)));
        let mut taken: HashMap<&str, u32> = HashMap::new();
        let mut out = Vec::new();
        for id in ready {
            if out.len() >= free {
                break;
            }
            if let Some(pool) = self.pool_of.get(id) {
                let used =
                    self.active_in_pool(pool) + taken.get(pool.as_str()).copied().unwrap_or(0);
                if self.caps.get(pool).is_some_and(|cap| used >= *cap) {
                    continue;
                }
                *taken.entry(pool.as_str()).or_default() += 1;
            }
            out.push(id.clone());
        }
        out
    }

    /// Whether nothing is waiting that could still start or is active.
    pub fn finished(&self) -> bool {
        !self.state.values().any(|s| *s == Place::Active) && self.next(usize::MAX).is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut s = Scheduler::new(&p, HashMap::new(), BTreeMap::new());
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
        let mut s = Scheduler::new(&p, pools, caps);
        assert_eq!(s.next(3), ["A", "C"]);
        s.started("A");
        assert_eq!(s.next(3), ["C"]);
    }
}
