//! Writing a plan as a Taskmaster `tasks.json`: a task read from one is
//! written back as it was, but for what the plan changed; a warning for
//! each thing Taskmaster cannot hold.

use super::{body, is_number, Task, DEFAULT_TAG};
use crate::diag::{Diagnostic, Sink};
use crate::model::{Plan, ScopeOp, Ticket};
use crate::pointer::Pointer;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// Writes `plan` as a Taskmaster document.
pub(super) fn emit(plan: &Plan, sink: &mut dyn Sink) -> Value {
    let source = plan.metadata.get("taskmaster").and_then(Value::as_object);
    let finished: Vec<Value> = source
        .and_then(|s| s.get("finished"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let ids = numbers(plan, &finished, sink);
    if !plan.gates.is_empty() {
        sink.push(
            Diagnostic::warning(
                "taskmaster.emit.plan-gates",
                "/gates",
                "Taskmaster has no plan-wide gates; they are not written",
            )
            .with_hint(format!(
                "give them at run time with `[gates] run` or `{}`",
                crate::Flag::Gate
            )),
        );
    }
    let mut tasks: Vec<Value> = finished;
    for (i, t) in plan.tickets.iter().enumerate() {
        tasks.push(Value::Object(task(t, i, &ids, sink)));
    }
    let numeric = |v: &Value| {
        v.get("id")
            .and_then(|id| super::id_text(Some(id))?.parse::<u64>().ok())
    };
    if tasks.iter().all(|t| numeric(t).is_some()) {
        tasks.sort_by_key(|t| numeric(t).unwrap_or_default());
    }
    let mut list = Map::new();
    list.insert("tasks".into(), Value::Array(tasks));
    if let Some(m) = source.and_then(|s| s.get("metadata")) {
        list.insert("metadata".into(), m.clone());
    }
    let standard = source.and_then(|s| s.get("form")).and_then(Value::as_str) == Some("standard");
    if standard {
        return Value::Object(list);
    }
    let tag = source
        .and_then(|s| s.get("tag"))
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_TAG);
    let mut root = Map::new();
    root.insert(tag.to_string(), Value::Object(list));
    Value::Object(root)
}

/// The Taskmaster id of every ticket: its own when all are whole numbers
/// that no finished task holds, else 1, 2, ... after the finished tasks'.
fn numbers(plan: &Plan, finished: &[Value], sink: &mut dyn Sink) -> HashMap<String, u64> {
    let taken: Vec<u64> = finished
        .iter()
        .filter_map(|t| super::id_text(t.get("id"))?.parse().ok())
        .collect();
    let own: Option<Vec<u64>> = plan
        .tickets
        .iter()
        .map(|t| Some(t.id.as_str()).filter(|id| is_number(id))?.parse().ok())
        .collect();
    if let Some(own) = own.filter(|own| own.iter().all(|n| !taken.contains(n))) {
        return plan.tickets.iter().map(|t| t.id.clone()).zip(own).collect();
    }
    let start = taken.iter().max().copied().unwrap_or(0);
    let mut out = HashMap::new();
    for (i, t) in plan.tickets.iter().enumerate() {
        let n = start + i as u64 + 1;
        sink.push(Diagnostic::warning(
            "taskmaster.emit.id",
            Pointer::root().key("tickets").index(i).key("id"),
            format!(
                "{}: Taskmaster ids are whole numbers; written as task {n}",
                t.id
            ),
        ));
        out.insert(t.id.clone(), n);
    }
    out
}

fn task(
    t: &Ticket,
    i: usize,
    ids: &HashMap<String, u64>,
    sink: &mut dyn Sink,
) -> Map<String, Value> {
    let original = t.metadata.get("taskmaster").and_then(Value::as_object);
    let mut task = original.cloned().unwrap_or_else(|| {
        let mut m = Map::new();
        m.insert("status".into(), "pending".into());
        m.insert("priority".into(), "medium".into());
        m
    });
    let id = ids.get(&t.id).copied().unwrap_or(i as u64 + 1);
    let keeps_string = original.is_some_and(|o| o.get("id").is_some_and(Value::is_string));
    task.insert(
        "id".into(),
        if keeps_string {
            id.to_string().into()
        } else {
            id.into()
        },
    );
    let title = if t.title.is_empty() {
        t.made_up_title()
    } else {
        t.title.clone()
    };
    task.insert("title".into(), title.into());
    if original.map(body) != Some(t.body.clone()) {
        task.insert("description".into(), t.body.clone().into());
        task.insert("details".into(), "".into());
        task.remove("subtasks");
    }
    if original.map(|o| stated(o, ids)) != Some(sorted(&t.depends_on)) {
        let deps: Vec<Value> = t
            .depends_on
            .iter()
            .filter_map(|d| ids.get(d))
            .map(|n| json!(n))
            .collect();
        task.insert("dependencies".into(), Value::Array(deps));
        // The ticket's dependencies are the task's now; its subtasks keep
        // only those on each other.
        if let Some(Value::Array(subs)) = task.get_mut("subtasks") {
            for s in subs.iter_mut().filter_map(Value::as_object_mut) {
                if let Some(Value::Array(d)) = s.get_mut("dependencies") {
                    d.retain(Value::is_number);
                }
            }
        }
    }
    verification(t, i, original, &mut task, sink);
    files(t, i, original, &mut task, sink);
    task
}

/// The tickets a task read from a file waits for, as the reader found
/// them: every task its dependencies and its subtasks' name, other than
/// itself, that is still a ticket (a finished one is met).
fn stated(o: &Map<String, Value>, ids: &HashMap<String, u64>) -> Vec<String> {
    let own = super::id_text(o.get("id"));
    let subs = o
        .get("subtasks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    let lists = std::iter::once(o.get("dependencies")).chain(subs.map(|s| s.get("dependencies")));
    let mut out: Vec<String> = Vec::new();
    for (k, list) in lists.enumerate() {
        for d in list.and_then(Value::as_array).into_iter().flatten() {
            // A bare number in a subtask's list is a sibling: not a ticket's.
            if k > 0 && d.is_number() {
                continue;
            }
            let Some(text) = super::id_text(Some(d)) else {
                continue;
            };
            let task = text.split('.').next().unwrap_or_default().to_string();
            if Some(&task) != own.as_ref() && ids.contains_key(&task) && !out.contains(&task) {
                out.push(task);
            }
        }
    }
    out.sort();
    out
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

/// The ticket's texts as a task read back would give them.
fn texts(t: &Ticket) -> Vec<String> {
    let mut all: Vec<String> = t
        .gates
        .iter()
        .map(|g| g.name.clone())
        .chain(t.checks.iter().cloned())
        .collect();
    all.sort();
    all
}

fn verification(
    t: &Ticket,
    i: usize,
    original: Option<&Map<String, Value>>,
    task: &mut Map<String, Value>,
    sink: &mut dyn Sink,
) {
    if let Some(o) = original {
        let read = Task {
            at: Pointer::root(),
            obj: o,
            id: super::id_text(o.get("id")),
            status: "pending",
            subtasks: subtasks(o),
        };
        let mut was: Vec<String> = super::verifications(&read)
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        was.sort();
        if was == texts(t) {
            return;
        }
    }
    let mut checks = t.checks.clone();
    let strategy = match t.gates.first() {
        Some(g) => g.command_line(),
        None if !checks.is_empty() => checks.remove(0),
        None => String::new(),
    };
    for g in t.gates.iter().skip(1) {
        sink.push(Diagnostic::warning(
            "taskmaster.emit.gates",
            Pointer::root().key("tickets").index(i).key("gates"),
            format!(
                "{}: Taskmaster has one `testStrategy`; the gate `{}` is not written",
                t.id,
                g.command_line()
            ),
        ));
    }
    task.insert("testStrategy".into(), strategy.into());
    match checks.is_empty() {
        true => task.remove("acceptanceCriteria"),
        false => task.insert("acceptanceCriteria".into(), json!(checks)),
    };
    if let Some(Value::Array(subs)) = task.get_mut("subtasks") {
        for s in subs.iter_mut().filter_map(Value::as_object_mut) {
            s.insert("testStrategy".into(), Value::Null);
        }
    }
}

fn subtasks(o: &Map<String, Value>) -> Vec<Task<'_>> {
    let subs = o.get("subtasks").and_then(Value::as_array);
    subs.into_iter()
        .flatten()
        .filter_map(|s| {
            let obj = s.as_object()?;
            Some(Task {
                at: Pointer::root(),
                obj,
                id: super::id_text(obj.get("id")),
                status: "pending",
                subtasks: vec![],
            })
        })
        .collect()
}

/// The scope as `relevantFiles`: `create` and `modify` as themselves; a
/// lone `**` (no files named) as none.
fn files(
    t: &Ticket,
    i: usize,
    original: Option<&Map<String, Value>>,
    task: &mut Map<String, Value>,
    sink: &mut dyn Sink,
) {
    if let Some(o) = original {
        let read = Task {
            at: Pointer::root(),
            obj: o,
            id: None,
            status: "pending",
            subtasks: vec![],
        };
        if super::scope(&read, "", &mut Vec::new()) == t.scope {
            return;
        }
    }
    let mut kept: Vec<Value> = task
        .get("relevantFiles")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|f| f.get("action").and_then(Value::as_str) == Some("reference"))
        .cloned()
        .collect();
    let everything =
        t.scope.len() == 1 && t.scope[0].pattern == "**" && t.scope[0].op == ScopeOp::Any;
    for s in t.scope.iter().filter(|_| !everything) {
        let action = match &s.op {
            ScopeOp::Create => "create",
            ScopeOp::Modify => "modify",
            ScopeOp::Any => {
                sink.push(Diagnostic::warning(
                    "taskmaster.emit.scope-op",
                    Pointer::root().key("tickets").index(i).key("scope"),
                    format!("{}: Taskmaster's files are created or modified; `{}` (any change) is written as modify", t.id, s.pattern),
                ));
                "modify"
            }
            ScopeOp::Delete | ScopeOp::Rename { .. } => {
                sink.push(Diagnostic::warning(
                    "taskmaster.emit.scope-op",
                    Pointer::root().key("tickets").index(i).key("scope"),
                    format!("{}: Taskmaster cannot say that `{}` is deleted or renamed; it is not written", t.id, s.pattern),
                ));
                continue;
            }
        };
        kept.push(json!({"path": s.pattern, "description": "", "action": action}));
    }
    match kept.is_empty() {
        true => task.remove("relevantFiles"),
        false => task.insert("relevantFiles".into(), Value::Array(kept)),
    };
}
