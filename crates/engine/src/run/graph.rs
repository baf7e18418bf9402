//! The plan's dependency graph as a run keeps it in the state store: the
//! views (`report`, `watch`, `serve`) draw waves and edges from this record,
//! never from the plan file, whose path was typed relative to wherever
//! `run` was started.

use planwright_plan::graph::TicketGraph;
use planwright_plan::Plan;
use serde::{Deserialize, Serialize};

/// Waves and edges by ticket id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunGraph {
    /// Ticket ids by wave: wave 1 has no dependencies.
    pub waves: Vec<Vec<String>>,
    /// Dependency edges (dependency, dependent).
    pub edges: Vec<(String, String)>,
}

impl RunGraph {
    /// The graph of `plan`, whose ticket graph is `graph`.
    pub fn of(plan: &Plan, graph: &TicketGraph) -> RunGraph {
        let id = |i: usize| plan.tickets[i].id.clone();
        RunGraph {
            waves: graph.waves(plan),
            edges: (graph.edges().into_iter())
                .map(|(d, t)| (id(d), id(t)))
                .collect(),
        }
    }

    /// As the store keeps it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a graph of strings serializes")
    }

    /// Read back from the store; None when the text is no graph (written
    /// by another version), which a view reports rather than guesses.
    pub fn from_json(text: &str) -> Option<RunGraph> {
        serde_json::from_str(text).ok()
    }
}
