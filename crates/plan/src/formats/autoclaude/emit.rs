//! Writing a plan as an Auto-Claude `implementation_plan.json`. A plan read
//! from one keeps its phases when they still say the plan's order; any
//! other plan is written as one phase per wave of the DAG.

use super::Subtask;
use crate::diag::{Diagnostic, Sink};
use crate::model::{Plan, ScopeOp, Ticket};
use crate::pointer::Pointer;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// What of the document the IR has no place for: every field but the
/// phases, and each phase with its subtasks as ids (completed ones whole).
pub(super) fn outline(root: &Map<String, Value>) -> Map<String, Value> {
    let mut out = root.clone();
    let phases = root
        .get("phases")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let phases: Vec<Value> = phases
        .into_iter()
        .map(|mut p| {
            if let Some(Value::Array(subs)) = p.get_mut("subtasks") {
                for s in subs.iter_mut() {
                    let done = s.get("status").and_then(Value::as_str) == Some("completed");
                    if !done {
                        *s = s.get("id").cloned().unwrap_or(Value::Null);
                    }
                }
            }
            p
        })
        .collect();
    out.insert("phases".into(), Value::Array(phases));
    out
}

/// Writes `plan` as an Auto-Claude document.
pub(super) fn emit(plan: &Plan, sink: &mut dyn Sink) -> Value {
    if !plan.gates.is_empty() {
        sink.push(
            Diagnostic::warning(
                "autoclaude.emit.plan-gates",
                "/gates",
                "Auto-Claude has no plan-wide gates; they are not written",
            )
            .with_hint(format!(
                "give them at run time with `[gates] run` or `{}`",
                crate::Flag::Gate
            )),
        );
    }
    let source = plan.metadata.get("autoclaude").and_then(Value::as_object);
    let phases = source
        .and_then(|s| s.get("phases"))
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let subtasks: HashMap<&str, Value> = plan
        .tickets
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), Value::Object(subtask(t, i, phases, sink))))
        .collect();
    if let Some(doc) = source.and_then(|s| as_read(s, plan, &subtasks)) {
        return doc;
    }
    waves(plan, source, &subtasks, sink)
}

/// The source's phases with the tickets put back, when every ticket is in
/// them and reading the result gives the plan's dependencies.
fn as_read(
    source: &Map<String, Value>,
    plan: &Plan,
    subtasks: &HashMap<&str, Value>,
) -> Option<Value> {
    let mut doc = source.clone();
    let mut placed = 0;
    for p in doc.get_mut("phases")?.as_array_mut()? {
        for s in p
            .get_mut("subtasks")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(id) = s.as_str() {
                *s = subtasks.get(id)?.clone();
                placed += 1;
            }
        }
    }
    if placed != plan.tickets.len() {
        return None;
    }
    let doc = Value::Object(doc);
    let back = super::validate(&doc, &super::Options::default(), &mut Vec::new())?;
    let order = |p: &Plan| -> Vec<(String, Vec<String>)> {
        let mut v: Vec<_> = p
            .tickets
            .iter()
            .map(|t| (t.id.clone(), sorted(&t.depends_on)))
            .collect();
        v.sort();
        v
    };
    (order(&back) == order(plan)).then_some(doc)
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

/// One phase per wave: a ticket goes in the phase after its deepest
/// dependency's, each phase waiting for the one before.
fn waves(
    plan: &Plan,
    source: Option<&Map<String, Value>>,
    subtasks: &HashMap<&str, Value>,
    sink: &mut dyn Sink,
) -> Value {
    let depth = crate::analysis::wave_of(plan, &crate::graph::TicketGraph::new(plan));
    let count = depth.values().max().map_or(0, |d| d + 1);
    let mut phases: Vec<Value> = Vec::new();
    for k in 0..count {
        let members: Vec<&Ticket> = plan
            .tickets
            .iter()
            .filter(|t| depth.get(t.id.as_str()) == Some(&k))
            .collect();
        let before: Vec<&str> = plan
            .tickets
            .iter()
            .filter(|t| depth.get(t.id.as_str()) == Some(&(k.wrapping_sub(1))))
            .map(|t| t.id.as_str())
            .collect();
        let adds_waits = k > 0
            && members
                .iter()
                .any(|t| before.iter().any(|b| !t.depends_on.iter().any(|d| d == b)));
        if adds_waits {
            let names: Vec<&str> = members.iter().map(|t| t.id.as_str()).take(5).collect();
            sink.push(Diagnostic::warning(
                "autoclaude.emit.order",
                "/tickets",
                format!("Auto-Claude orders whole phases: in phase {}, {} wait for every ticket of the phase before, not only their dependencies", k + 1, names.join(", ")),
            ));
        }
        let mut phase = json!({
            "id": format!("phase-{}", k + 1),
            "name": format!("Phase {}", k + 1),
            "type": "implementation",
            "depends_on": if k == 0 { json!([]) } else { json!([format!("phase-{k}")]) },
            "parallel_safe": true,
        });
        let subs: Vec<Value> = members
            .iter()
            .filter_map(|t| subtasks.get(t.id.as_str()).cloned())
            .collect();
        phase["subtasks"] = Value::Array(subs);
        phases.push(phase);
    }
    let mut doc = Map::new();
    let field = |k: &str, default: &str| {
        source
            .and_then(|s| s.get(k))
            .cloned()
            .unwrap_or_else(|| default.into())
    };
    doc.insert(
        "feature".into(),
        field(
            "feature",
            &format!("plan converted from {}", plan.source_format),
        ),
    );
    doc.insert("workflow_type".into(), field("workflow_type", "feature"));
    doc.insert("phases".into(), Value::Array(phases));
    Value::Object(doc)
}

fn subtask(t: &Ticket, i: usize, phases: &[Value], sink: &mut dyn Sink) -> Map<String, Value> {
    let meta = t.metadata.get("autoclaude");
    let original = meta
        .and_then(|m| m.get("subtask"))
        .and_then(Value::as_object);
    let key = meta.and_then(|m| m.get("phase"));
    let phase = phases
        .iter()
        .enumerate()
        .filter_map(|(k, p)| Some((k, p.as_object()?)))
        .find(|(k, p)| {
            key.is_some_and(|key| super::key_text(&super::phase_key(p, *k)) == super::key_text(key))
        })
        .map(|(_, p)| p);
    let mut s = original.cloned().unwrap_or_else(|| {
        let mut m = Map::new();
        m.insert("status".into(), "pending".into());
        m
    });
    s.insert("id".into(), t.id.clone().into());
    let unchanged =
        original.is_some_and(|o| super::body(phase.unwrap_or(&Map::new()), o) == t.body);
    if !unchanged {
        let first = t.body.lines().next().unwrap_or_default().trim();
        let description = match t.title.is_empty() || first == t.title {
            true => t.body.clone(),
            false => format!("{}\n\n{}", t.title, t.body),
        };
        s.insert("description".into(), description.into());
        for k in ["patterns_from", "expected_output", "service"] {
            s.remove(k);
        }
    }
    files(t, i, original, &mut s, sink);
    verification(t, i, original, &mut s, sink);
    s
}

fn files(
    t: &Ticket,
    i: usize,
    original: Option<&Map<String, Value>>,
    s: &mut Map<String, Value>,
    sink: &mut dyn Sink,
) {
    if let Some(o) = original {
        let read = Subtask {
            at: Pointer::root(),
            obj: o,
            id: None,
        };
        if super::scope(&read, "", &mut Vec::new()) == t.scope {
            return;
        }
    }
    let (mut modify, mut create) = (Vec::new(), Vec::new());
    let everything =
        t.scope.len() == 1 && t.scope[0].pattern == "**" && t.scope[0].op == ScopeOp::Any;
    for e in t.scope.iter().filter(|_| !everything) {
        let at = Pointer::root().key("tickets").index(i).key("scope");
        match &e.op {
            ScopeOp::Create => create.push(e.pattern.clone()),
            ScopeOp::Modify => modify.push(e.pattern.clone()),
            ScopeOp::Any => {
                sink.push(Diagnostic::warning("autoclaude.emit.scope-op", at, format!("{}: Auto-Claude's files are modified or created; `{}` (any change) is written as modified", t.id, e.pattern)));
                modify.push(e.pattern.clone());
            }
            ScopeOp::Delete | ScopeOp::Rename { .. } => {
                sink.push(Diagnostic::warning("autoclaude.emit.scope-op", at, format!("{}: Auto-Claude cannot say that `{}` is deleted or renamed; it is not written", t.id, e.pattern)));
            }
        }
    }
    s.insert("files_to_modify".into(), json!(modify));
    s.insert("files_to_create".into(), json!(create));
}

fn verification(
    t: &Ticket,
    i: usize,
    original: Option<&Map<String, Value>>,
    s: &mut Map<String, Value>,
    sink: &mut dyn Sink,
) {
    let mut texts: Vec<String> = t
        .gates
        .iter()
        .map(|g| g.name.clone())
        .chain(t.checks.iter().cloned())
        .collect();
    texts.sort();
    if let Some(o) = original {
        let read = Subtask {
            at: Pointer::root(),
            obj: o,
            id: None,
        };
        let mut was: Vec<String> =
            super::verification(&read, "", &super::Options::default(), &mut Vec::new())
                .into_iter()
                .map(|v| match v {
                    super::Verification::Gate(g) => g.name,
                    super::Verification::Check(c) => c,
                })
                .collect();
        was.sort();
        if was == texts {
            return;
        }
    }
    let at = Pointer::root().key("tickets").index(i);
    let verification = match (t.gates.first(), t.checks.as_slice()) {
        (Some(g), checks) => {
            for c in checks {
                sink.push(Diagnostic::warning("autoclaude.emit.check", at.key("checks"), format!("{}: an Auto-Claude subtask has one verification, the command `{}`; the check `{c}` is not written", t.id, g.command_line())));
            }
            json!({"type": "command", "command": g.command_line()})
        }
        (None, []) => json!({"type": "none"}),
        (None, [one]) => json!({"type": "manual", "instructions": one}),
        (None, many) => {
            sink.push(Diagnostic::warning("autoclaude.emit.check", at.key("checks"), format!("{}: an Auto-Claude subtask has one verification; its {} are written as the lines of one manual instruction", t.id, crate::words::count(many.len(), "check"))));
            json!({"type": "manual", "instructions": many.join("\n")})
        }
    };
    for g in t.gates.iter().skip(1) {
        sink.push(Diagnostic::warning("autoclaude.emit.gates", at.key("gates"), format!("{}: an Auto-Claude subtask has one verification command; the gate `{}` is not written", t.id, g.command_line())));
    }
    s.insert("verification".into(), verification);
}
