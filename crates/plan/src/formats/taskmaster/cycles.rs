//! Dependency cycles of a Taskmaster file: among tasks and subtasks as
//! Taskmaster follows them, and among the tickets planwright makes.

use super::Task;
use crate::diag::{Diagnostic, Sink};
use crate::model::{Format, Plan, Ticket};
use std::collections::{HashMap, HashSet};

/// One error per dependency cycle among tasks and subtasks as Taskmaster
/// follows them (`validate-dependencies` reports each as `[CIRCULAR]`),
/// finished tasks included; the cycles named.
pub(super) fn check_task_cycles(
    tasks: &[Task<'_>],
    edges: Vec<(String, String)>,
    sink: &mut dyn Sink,
) -> Vec<Vec<String>> {
    let mut nodes: Vec<(String, &Task<'_>)> = Vec::new();
    for t in tasks {
        let Some(id) = t.id.as_deref() else { continue };
        nodes.push((id.to_string(), t));
        for s in &t.subtasks {
            if let Some(sub) = s.id.as_deref() {
                nodes.push((format!("{id}.{sub}"), s));
            }
        }
    }
    let mut deps: HashMap<String, Vec<String>> = HashMap::new();
    for (from, to) in edges {
        deps.entry(from).or_default().push(to);
    }
    let tickets = nodes
        .iter()
        .map(|(id, _)| {
            let mut t = Ticket::new(id.clone(), "");
            t.depends_on = deps.remove(id).unwrap_or_default();
            t
        })
        .collect();
    let graph = Plan::new(Format::Taskmaster, tickets);
    let cycles = crate::dag::cycles(&graph);
    for cycle in &cycles {
        let name = |id: &String| {
            let kind = if id.contains('.') { "subtask" } else { "task" };
            format!("{kind} {id}")
        };
        let names: Vec<String> = cycle.iter().map(name).collect();
        let at = nodes
            .iter()
            .find(|(id, _)| Some(id) == cycle.first())
            .map(|(_, t)| t.at.key("dependencies"))
            .unwrap_or_default();
        let first = names[0].clone();
        let first = first[..1].to_ascii_uppercase() + &first[1..];
        sink.push(
            Diagnostic::error(
                "taskmaster.dag.cycle",
                at,
                format!("dependency cycle: {} (Taskmaster: `[CIRCULAR] {first} is part of a circular dependency chain`)", names.join(" -> ")),
            )
            .with_hint("remove one of these dependencies; Taskmaster never makes any of these tasks next"),
        );
    }
    cycles
}

/// One error per dependency cycle among the tickets, at its first task,
/// unless it is one of the cycles of tasks already `named`: a cycle that
/// only the tickets have (a subtask waiting for a task that waits for its
/// parent), since subtasks are steps of their task's one ticket.
pub(super) fn check_cycles(plan: &Plan, tasks: &[Task<'_>], named: &[Vec<String>], sink: &mut dyn Sink) {
    let same = |a: &[String], b: &[String]| {
        let set: HashSet<&String> = a.iter().collect();
        b.len() == a.len() && b.iter().all(|x| set.contains(x))
    };
    for cycle in crate::dag::cycles(plan) {
        if named.iter().any(|n| same(n, &cycle)) {
            continue;
        }
        let at = tasks
            .iter()
            .find(|t| t.id.as_ref() == cycle.first())
            .map(|t| t.at.key("dependencies"))
            .unwrap_or_default();
        sink.push(
            Diagnostic::error(
                "taskmaster.dag.cycle",
                at,
                format!("dependency cycle: task {}", cycle.join(" -> task ")),
            )
            .with_hint(
                "remove one of these dependencies; Taskmaster never makes any of these tasks next",
            ),
        );
    }
}
