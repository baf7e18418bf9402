//! Writing any plan (IR) as a codeboost plan, with a warning for everything
//! codeboost cannot say.

use super::ID_RE;
use crate::command;
use crate::diag::{Diagnostic, Sink};
use crate::model::{Gate, Plan, ScopeOp, Ticket};
use crate::pointer::Pointer;
use serde_json::{json, Value};
use std::collections::HashMap;

/// The most items a codeboost plan may have.
const MAX_ITEMS: usize = 30;

/// The longest `intent` codeboost accepts, in characters.
const MAX_INTENT: usize = 600;

fn warn(sink: &mut dyn Sink, code: &str, at: impl Into<String>, message: String) {
    sink.push(Diagnostic::warning(
        format!("convert.codeboost.{code}"),
        at,
        message,
    ));
}

/// Writes `plan` as a codeboost plan; pushes a warning (with a pointer into
/// the IR) for everything that is dropped or had to be made up.
pub fn emit(plan: &Plan, sink: &mut dyn Sink) -> Value {
    plan_level_drops(plan, sink);
    let order = order(plan, sink);
    let ids = renumber(plan, &order, sink);
    if plan.tickets.len() > MAX_ITEMS || plan.tickets.is_empty() {
        warn(
            sink,
            "items",
            "/tickets",
            format!(
                "codeboost plans have 1 to {MAX_ITEMS} items; this one has {}",
                plan.tickets.len()
            ),
        );
    }
    if !plan.gates.is_empty() {
        warn(
            sink,
            "plan-gates",
            "/gates",
            "codeboost has no plan-wide gates; they became `cmd` checks of every item".into(),
        );
    }
    let items: Vec<Value> = order
        .iter()
        .map(|&i| emit_item(plan, i, &ids, sink))
        .collect();
    let meta = &plan.metadata;
    let positive = |k: &str| meta.get(k).and_then(Value::as_u64).filter(|n| *n >= 1);
    let issue = positive("issue").unwrap_or_else(|| {
        warn(
            sink,
            "issue",
            "/metadata",
            "the plan names no issue; wrote issue 1 (set `issue` before importing it)".into(),
        );
        1
    });
    let summary = match meta.get("summary").and_then(Value::as_str) {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => {
            warn(
                sink,
                "summary",
                "/metadata",
                "the plan has no summary; wrote one from the ticket titles".into(),
            );
            made_up_summary(plan)
        }
    };
    let questions: Vec<Value> = meta
        .get("questions")
        .and_then(Value::as_array)
        .map(|q| q.iter().filter(|v| v.is_string()).cloned().collect())
        .unwrap_or_default();
    json!({
        "schema_version": 1,
        "issue": issue,
        "revision": positive("revision").unwrap_or(1),
        "summary": summary,
        "items": items,
        "questions": questions,
    })
}

fn made_up_summary(plan: &Plan) -> String {
    let titles: Vec<&str> = plan
        .tickets
        .iter()
        .map(|t| {
            if t.title.is_empty() {
                t.id.as_str()
            } else {
                t.title.as_str()
            }
        })
        .collect();
    let mut s = format!(
        "Plan converted from {}: {}",
        plan.source_format,
        titles.join("; ")
    );
    if s.chars().count() > 600 {
        s = s.chars().take(597).collect::<String>() + "...";
    }
    s
}

fn plan_level_drops(plan: &Plan, sink: &mut dyn Sink) {
    if plan.repo.is_some() {
        warn(
            sink,
            "repo",
            "/repo",
            "codeboost plans name no repository; dropped `repo`".into(),
        );
    }
    if plan.base != "main" {
        warn(
            sink,
            "base",
            "/base",
            format!(
                "codeboost plans name no base branch; dropped base `{}`",
                plan.base
            ),
        );
    }
    if !plan.caps.is_empty() {
        warn(
            sink,
            "caps",
            "/caps",
            "codeboost plans have no pool caps; dropped `caps`".into(),
        );
    }
    if plan.review.dry_passes != 1 {
        warn(
            sink,
            "review",
            "/review/dry_passes",
            "codeboost plans have no review settings; dropped `dry_passes`".into(),
        );
    }
}

/// Ticket positions in an order where every item depends only on earlier
/// ones; the source order wherever it already is one.
fn order(plan: &Plan, sink: &mut dyn Sink) -> Vec<usize> {
    let index: HashMap<&str, usize> = plan
        .tickets
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let deps: Vec<Vec<usize>> = plan
        .tickets
        .iter()
        .map(|t| {
            t.depends_on
                .iter()
                .filter_map(|d| index.get(d.as_str()).copied())
                .collect()
        })
        .collect();
    let mut placed = vec![false; plan.tickets.len()];
    let mut out = Vec::with_capacity(plan.tickets.len());
    while out.len() < plan.tickets.len() {
        let next = (0..plan.tickets.len())
            .find(|&i| !placed[i] && deps[i].iter().all(|&d| placed[d] || d == i));
        let Some(i) = next else {
            let rest: Vec<usize> = (0..plan.tickets.len()).filter(|&i| !placed[i]).collect();
            let names: Vec<&str> = rest.iter().map(|&i| plan.tickets[i].id.as_str()).collect();
            warn(
                sink,
                "cycle",
                "/tickets",
                format!(
                    "the dependencies of {} form a cycle; kept them in source order",
                    names.join(", ")
                ),
            );
            out.extend(rest);
            break;
        };
        placed[i] = true;
        out.push(i);
    }
    if out.iter().enumerate().any(|(k, &i)| k != i) {
        let names: Vec<&str> = out.iter().map(|&i| plan.tickets[i].id.as_str()).collect();
        warn(
            sink,
            "order",
            "/tickets",
            format!(
                "codeboost items may only depend on earlier items; reordered them: {}",
                names.join(", ")
            ),
        );
    }
    out
}

/// Old id -> codeboost id. Ids are kept when every one is already `P<n>`
/// and unique; otherwise all are renumbered P1, P2, ... in `order`.
fn renumber(plan: &Plan, order: &[usize], sink: &mut dyn Sink) -> HashMap<String, String> {
    let mut unique = std::collections::HashSet::new();
    let keep = plan
        .tickets
        .iter()
        .all(|t| ID_RE.is_match(&t.id) && unique.insert(t.id.as_str()));
    if keep {
        return plan
            .tickets
            .iter()
            .map(|t| (t.id.clone(), t.id.clone()))
            .collect();
    }
    let mut ids = HashMap::new();
    let mut pairs = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let old = &plan.tickets[i].id;
        let new = format!("P{}", k + 1);
        pairs.push(format!("{old} -> {new}"));
        ids.entry(old.clone()).or_insert(new);
    }
    warn(
        sink,
        "ids",
        "/tickets",
        format!(
            "codeboost item ids are P1, P2, ...; renumbered {}",
            pairs.join(", ")
        ),
    );
    ids
}

fn emit_item(plan: &Plan, i: usize, ids: &HashMap<String, String>, sink: &mut dyn Sink) -> Value {
    let t = &plan.tickets[i];
    let at = Pointer::root().key("tickets").index(i);
    let title = if t.title.is_empty() {
        let first = t.body.lines().next().unwrap_or_default();
        let title: String = if first.is_empty() {
            t.id.clone()
        } else {
            first.chars().take(120).collect()
        };
        warn(
            sink,
            "title",
            at.key("title"),
            format!("{}: no title; used `{title}`", t.id),
        );
        title
    } else {
        t.title.clone()
    };
    let depends_on: Vec<Value> = t
        .depends_on
        .iter()
        .filter_map(|d| {
            let new = ids.get(d);
            if new.is_none() {
                warn(
                    sink,
                    "depends-on",
                    at.key("depends_on"),
                    format!("{}: dropped the dependency on unknown ticket `{d}`", t.id),
                );
            }
            new.map(|n| Value::from(n.as_str()))
        })
        .collect();
    dropped_fields(t, &at, sink);
    let length = t.body.chars().count();
    if length > MAX_INTENT {
        warn(
            sink,
            "intent",
            at.key("body"),
            format!("{}: the body is {length} characters, codeboost allows {MAX_INTENT} in `intent`; shorten it before importing", t.id),
        );
    }
    json!({
        "id": ids.get(&t.id).cloned().unwrap_or_else(|| t.id.clone()),
        "title": title,
        "intent": t.body,
        "files": files(t, &at, sink),
        "acceptance": acceptance(plan, t, &at, sink),
        "depends_on": depends_on,
    })
}

fn dropped_fields(t: &Ticket, at: &Pointer, sink: &mut dyn Sink) {
    let dropped = [
        ("rails", !t.rails.is_empty()),
        ("tier", t.tier.is_some()),
        ("pool_hint", t.pool_hint.is_some()),
        ("model", t.model.is_some()),
        ("counterfactuals", !t.counterfactuals.is_empty()),
        ("estimate_minutes", t.estimate_minutes.is_some()),
    ];
    for (field, present) in dropped {
        if present {
            warn(
                sink,
                &field.replace('_', "-"),
                at.key(field),
                format!("{}: codeboost items have no `{field}`; dropped", t.id),
            );
        }
    }
}

fn files(t: &Ticket, at: &Pointer, sink: &mut dyn Sink) -> Vec<Value> {
    let changes = t.metadata.get("changes").and_then(Value::as_object);
    let mut any = Vec::new();
    let mut out = Vec::new();
    for (k, s) in t.scope.iter().enumerate() {
        let (kind, from) = match &s.op {
            ScopeOp::Any => {
                any.push(s.pattern.as_str());
                ("edit", None)
            }
            ScopeOp::Modify => ("edit", None),
            ScopeOp::Create => ("add", None),
            ScopeOp::Delete => ("delete", None),
            ScopeOp::Rename { from } => ("rename", Some(from.clone())),
        };
        if s.pattern.contains(['*', '?', '[']) {
            warn(
                sink,
                "glob",
                at.key("scope").index(k),
                format!(
                    "{}: codeboost declares files, not globs; `{}` is kept as a path",
                    t.id, s.pattern
                ),
            );
        }
        let change = changes
            .and_then(|c| c.get(&s.pattern))
            .and_then(Value::as_str)
            .map_or_else(|| default_change(kind), str::to_string);
        out.push(json!({"path": s.pattern, "kind": kind, "renamed_from": from, "change": change}));
    }
    if !any.is_empty() {
        warn(
            sink,
            "scope-op",
            at.key("scope"),
            format!(
                "{}: codeboost needs an operation per file; wrote `edit` for {}",
                t.id,
                any.iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    out
}

fn default_change(kind: &str) -> String {
    match kind {
        "add" => "New file, as the intent describes.",
        "delete" => "Removed, as the intent describes.",
        "rename" => "Moved here, as the intent describes.",
        _ => "Changed as the intent describes.",
    }
    .to_string()
}

/// The command text of a gate: its name when that is the same command
/// (keeps the author's quoting), else the argv re-quoted.
fn command_text(g: &Gate) -> String {
    match command::parse(&g.name) {
        Ok(argv) if argv == g.argv => g.name.clone(),
        _ => command::quote(&g.argv),
    }
}

fn acceptance(plan: &Plan, t: &Ticket, at: &Pointer, sink: &mut dyn Sink) -> Vec<Value> {
    let mut cmds: Vec<Value> = plan
        .gates
        .iter()
        .chain(&t.gates)
        .map(|g| json!({"type": "cmd", "text": command_text(g)}))
        .collect();
    let mut checks: Vec<Value> = t
        .checks
        .iter()
        .map(|c| json!({"type": "check", "text": c}))
        .collect();
    let order: Vec<&str> = t
        .metadata
        .get("acceptance")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fits = order.iter().filter(|k| **k == "cmd").count() == cmds.len()
        && order.iter().filter(|k| **k == "check").count() == checks.len()
        && order.len() == cmds.len() + checks.len();
    let out: Vec<Value> = if fits && !order.is_empty() {
        let (mut c, mut s) = (cmds.drain(..), checks.drain(..));
        order
            .iter()
            .filter_map(|k| if *k == "cmd" { c.next() } else { s.next() })
            .collect()
    } else {
        cmds.into_iter().chain(checks).collect()
    };
    if out.is_empty() {
        warn(
            sink,
            "acceptance",
            at.key("gates"),
            format!(
                "{}: no gates or checks; codeboost needs at least one acceptance entry",
                t.id
            ),
        );
    }
    out
}
