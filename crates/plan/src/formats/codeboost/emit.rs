//! Writing any plan (IR) as a codeboost plan, with a warning for everything
//! codeboost cannot say.

use super::ID_RE;
use crate::command;
use crate::diag::{Diagnostic, Sink};
use crate::model::{Gate, Plan, ScopeOp, Ticket};
use crate::pointer::Pointer;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};

/// The most items a codeboost plan may have.
const MAX_ITEMS: usize = 30;

/// The longest `intent` codeboost accepts, in characters.
const MAX_INTENT: usize = 600;

/// The check written for a ticket that has no gates and no checks:
/// codeboost needs at least one acceptance entry.
const PLACEHOLDER_CHECK: &str = "The change does what the intent describes.";

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
    let plan_cmds = cmds(&plan.gates, &Pointer::root().key("gates"), "the plan", sink);
    let mut items: Vec<Value> = order
        .iter()
        .map(|&i| emit_item(plan, i, &ids, &plan_cmds, sink))
        .collect();
    obey_producers(plan, &order, &mut items, sink);
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
    let questions = questions(meta, sink);
    let revision = positive("revision").unwrap_or_else(|| {
        if meta.contains_key("revision") {
            let m = "the plan's `revision` is not a number of at least 1; wrote 1".into();
            warn(sink, "metadata", "/metadata/revision", m);
        }
        1
    });
    let extra: Vec<&str> = meta
        .keys()
        .map(String::as_str)
        .filter(|k| !["issue", "revision", "summary", "questions"].contains(k))
        .collect();
    if !extra.is_empty() {
        let m = format!(
            "codeboost plans have no place for {}; dropped",
            fields(&extra)
        );
        warn(sink, "metadata", "/metadata", m);
    }
    json!({
        "schema_version": 1,
        "issue": issue,
        "revision": revision,
        "summary": summary,
        "items": items,
        "questions": questions,
    })
}

/// The most questions a codeboost plan may have, and their longest text.
const MAX_QUESTIONS: (usize, usize) = (10, 400);

/// The plan's `questions` that codeboost can take; a warning for the rest.
fn questions(meta: &serde_json::Map<String, Value>, sink: &mut dyn Sink) -> Vec<Value> {
    let Some(given) = meta.get("questions") else {
        return Vec::new();
    };
    let all = given.as_array().map_or(&[][..], Vec::as_slice);
    let kept: Vec<Value> = all
        .iter()
        .filter(|q| {
            q.as_str()
                .is_some_and(|q| (1..=MAX_QUESTIONS.1).contains(&q.chars().count()))
        })
        .take(MAX_QUESTIONS.0)
        .cloned()
        .collect();
    if !given.is_array() || kept.len() < all.len() {
        let (n, len) = MAX_QUESTIONS;
        let m = format!("codeboost plans have at most {n} questions, each a text of 1 to {len} characters; dropped the rest");
        warn(sink, "metadata", "/metadata/questions", m);
    }
    kept
}

fn fields(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
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
    let graph = crate::graph::TicketGraph::new(plan);
    let mut placed = vec![false; plan.tickets.len()];
    let mut out = Vec::with_capacity(plan.tickets.len());
    while out.len() < plan.tickets.len() {
        let next = (0..plan.tickets.len())
            .find(|&i| !placed[i] && graph.deps(i).iter().all(|&d| placed[d] || d == i));
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

fn emit_item(
    plan: &Plan,
    i: usize,
    ids: &HashMap<String, String>,
    plan_cmds: &[Value],
    sink: &mut dyn Sink,
) -> Value {
    let t = &plan.tickets[i];
    let at = Pointer::root().key("tickets").index(i);
    let title = if t.title.is_empty() {
        let title = t.made_up_title();
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
        "acceptance": acceptance(plan_cmds, t, &at, sink),
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
    let extra: Vec<&str> = t
        .metadata
        .keys()
        .map(String::as_str)
        .filter(|k| !["changes", "acceptance"].contains(k))
        .collect();
    if !extra.is_empty() {
        let m = format!(
            "{}: codeboost items have no place for {}; dropped",
            t.id,
            fields(&extra)
        );
        warn(sink, "metadata", at.key("metadata"), m);
    }
}

fn files(t: &Ticket, at: &Pointer, sink: &mut dyn Sink) -> Vec<Value> {
    let changes = t.metadata.get("changes").and_then(Value::as_object);
    let mut any = Vec::new();
    let mut out = Vec::new();
    let mut declared: Vec<&str> = Vec::new();
    for (k, s) in t.scope.iter().enumerate() {
        let (kind, from) = match &s.op {
            ScopeOp::Rename { from } if overlaps(from, &s.pattern) => {
                warn(
                    sink,
                    "files",
                    at.key("scope").index(k),
                    format!(
                        "{}: codeboost cannot rename `{from}` to `{}`, which overlaps it; wrote an edit of `{}`",
                        t.id, s.pattern, s.pattern
                    ),
                );
                ("edit", None)
            }
            ScopeOp::Any => {
                any.push(s.pattern.as_str());
                ("edit", None)
            }
            ScopeOp::Modify => ("edit", None),
            ScopeOp::Create => ("add", None),
            ScopeOp::Delete => ("delete", None),
            ScopeOp::Rename { from } => ("rename", Some(from.as_str())),
        };
        let mut sides = vec![s.pattern.as_str()];
        sides.extend(from);
        if let Some(old) = sides
            .iter()
            .find_map(|p| declared.iter().find(|d| overlaps(d, p)))
        {
            warn(
                sink,
                "files",
                at.key("scope").index(k),
                format!(
                    "{}: codeboost declares each path once per item, none inside another; dropped `{}`, which overlaps `{old}`",
                    t.id, s.pattern
                ),
            );
            continue;
        }
        declared.extend(sides);
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

/// The same path, or one inside the other.
fn overlaps(a: &str, b: &str) -> bool {
    let inside = |x: &str, y: &str| x.strip_prefix(y).is_some_and(|r| r.starts_with('/'));
    a == b || inside(a, b) || inside(b, a)
}

/// The paths an item's files touch, each with whether the item adds,
/// renames or deletes it.
fn touched(item: &Value) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    for f in item["files"].as_array().map_or(&[][..], Vec::as_slice) {
        let produces = f["kind"] != "edit";
        out.extend(f["path"].as_str().map(|p| (p, produces)));
        out.extend(f["renamed_from"].as_str().map(|p| (p, produces)));
    }
    out
}

/// codeboost's producer rule: an item that touches a path an earlier item
/// adds, renames or deletes must depend on that item. Adds what is missing.
fn obey_producers(plan: &Plan, order: &[usize], items: &mut [Value], sink: &mut dyn Sink) {
    let mut index: HashMap<String, usize> = HashMap::new();
    for (n, item) in items.iter().enumerate() {
        let id = item["id"].as_str().unwrap_or_default().to_string();
        index.entry(id).or_insert(n);
    }
    let mut reach: Vec<BTreeSet<usize>> = Vec::with_capacity(items.len());
    let mut producers: HashMap<String, Vec<usize>> = HashMap::new();
    for n in 0..items.len() {
        let mut mine = BTreeSet::new();
        let deps = items[n]["depends_on"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for d in deps.iter().filter_map(Value::as_str) {
            if let Some(&k) = index.get(d).filter(|&&k| k < n) {
                mine.insert(k);
                mine.extend(reach[k].iter().copied());
            }
        }
        let paths: Vec<(String, bool)> = touched(&items[n])
            .into_iter()
            .map(|(p, produces)| (p.to_string(), produces))
            .collect();
        for (path, _) in &paths {
            for &k in producers.get(path).map_or(&[][..], Vec::as_slice) {
                if mine.insert(k) {
                    mine.extend(reach[k].iter().copied());
                    let dep = items[k]["id"].clone();
                    let (me, them) = (&plan.tickets[order[n]].id, &plan.tickets[order[k]].id);
                    warn(
                        sink,
                        "producer",
                        Pointer::root().key("tickets").index(order[n]).key("depends_on"),
                        format!("{me}: touches `{path}`, which {them} adds, renames or deletes first; codeboost requires a dependency, so added one on {them}"),
                    );
                    if let Some(list) = items[n]["depends_on"].as_array_mut() {
                        list.push(dep);
                    }
                }
            }
        }
        for (path, produces) in paths {
            if produces {
                producers.entry(path).or_default().push(n);
            }
        }
        reach.push(mine);
    }
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
/// (keeps the author's quoting), else the argv re-quoted; `None` when the
/// `cmd` grammar cannot say the argv (a backslash, a control or format
/// character, an empty program name).
fn command_text(g: &Gate) -> Option<String> {
    match command::parse(&g.name) {
        Ok(argv) if argv == g.argv => Some(g.name.clone()),
        _ => {
            let text = command::quote(&g.argv);
            (command::parse(&text).ok()? == g.argv).then_some(text)
        }
    }
}

/// `gates` (at `at`) as `cmd` checks, without those the grammar cannot say.
fn cmds(gates: &[Gate], at: &Pointer, owner: &str, sink: &mut dyn Sink) -> Vec<Value> {
    let mut out = Vec::new();
    for (k, g) in gates.iter().enumerate() {
        match command_text(g) {
            Some(text) => out.push(json!({"type": "cmd", "text": text})),
            None => warn(
                sink,
                "command",
                at.index(k),
                format!(
                    "{owner}: the gate `{}` cannot be written as a codeboost command (no backslash, control or invisible characters, a program name); dropped",
                    g.name
                ),
            ),
        }
    }
    out
}

fn acceptance(plan_cmds: &[Value], t: &Ticket, at: &Pointer, sink: &mut dyn Sink) -> Vec<Value> {
    let mut cmds = plan_cmds.to_vec();
    cmds.extend(self::cmds(&t.gates, &at.key("gates"), &t.id, sink));
    let mut checks = Vec::new();
    for (k, c) in t.checks.iter().enumerate() {
        if c.is_empty() {
            let m = format!("{}: codeboost has no empty checks; dropped one", t.id);
            warn(sink, "check", at.key("checks").index(k), m);
        } else {
            checks.push(json!({"type": "check", "text": c}));
        }
    }
    let order: Vec<&str> = t
        .metadata
        .get("acceptance")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fits = order.iter().filter(|k| **k == "cmd").count() == cmds.len()
        && order.iter().filter(|k| **k == "check").count() == checks.len()
        && order.len() == cmds.len() + checks.len();
    let mut out: Vec<Value> = if fits && !order.is_empty() {
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
                "{}: no gates or checks; codeboost needs at least one acceptance entry, so wrote the check `{PLACEHOLDER_CHECK}`",
                t.id
            ),
        );
        out.push(json!({"type": "check", "text": PLACEHOLDER_CHECK}));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Format, ScopeEntry};
    use serde_json::Map;

    fn ticket(id: &str, scope: Vec<ScopeEntry>, gates: Vec<Gate>) -> Ticket {
        Ticket {
            title: format!("{id} title"),
            scope,
            gates,
            ..Ticket::new(id, "do it")
        }
    }

    fn plan(tickets: Vec<Ticket>) -> Plan {
        let mut metadata = Map::new();
        metadata.insert("issue".into(), 7.into());
        metadata.insert("summary".into(), "s".into());
        Plan {
            metadata,
            ..Plan::new(Format::Native, tickets)
        }
    }

    fn gate(argv: &[&str]) -> Gate {
        Gate {
            name: "g".into(),
            argv: argv.iter().map(|a| a.to_string()).collect(),
        }
    }

    fn codes(d: &[Diagnostic]) -> Vec<&str> {
        d.iter().map(|d| d.code.as_str()).collect()
    }

    #[test]
    fn adds_the_dependency_the_producer_rule_needs() {
        let create = ScopeEntry {
            pattern: "a.rs".into(),
            op: ScopeOp::Create,
        };
        let ok = vec![gate(&["cargo", "test"])];
        let p = plan(vec![
            ticket("P1", vec![create], ok.clone()),
            ticket("P2", vec![ScopeEntry::any("b.rs")], ok.clone()),
            ticket("P3", vec![ScopeEntry::any("a.rs")], ok),
        ]);
        let mut sink = Vec::new();
        let v = emit(&p, &mut sink);
        assert_eq!(v["items"][2]["depends_on"], json!(["P1"]));
        assert_eq!(v["items"][1]["depends_on"], json!([]));
        assert!(codes(&sink).contains(&"convert.codeboost.producer"));
        assert!(sink.iter().any(|d| d.pointer == "/tickets/2/depends_on"));
    }

    #[test]
    fn drops_overlapping_files_unquotable_gates_and_empty_checks() {
        let scope = vec![
            ScopeEntry::any("a/b"),
            ScopeEntry::any("a"),
            ScopeEntry::any("a/b"),
            ScopeEntry {
                pattern: "c/d".into(),
                op: ScopeOp::Rename { from: "c".into() },
            },
        ];
        let mut t = ticket("P1", scope, vec![gate(&["go", "a\\b"]), gate(&["", "x"])]);
        t.checks = vec![String::new()];
        let mut sink = Vec::new();
        let v = emit(&plan(vec![t]), &mut sink);
        let files = &v["items"][0]["files"];
        assert_eq!(files.as_array().unwrap().len(), 2, "{files}");
        assert_eq!(
            files[1],
            json!({"path": "c/d", "kind": "edit", "renamed_from": null, "change": "Changed as the intent describes."})
        );
        assert_eq!(
            v["items"][0]["acceptance"],
            json!([{"type": "check", "text": PLACEHOLDER_CHECK}])
        );
        let codes = codes(&sink);
        for code in ["files", "command", "check", "acceptance"] {
            assert!(
                codes.contains(&format!("convert.codeboost.{code}").as_str()),
                "{code}: {codes:?}"
            );
        }
        assert_eq!(
            codes
                .iter()
                .filter(|c| **c == "convert.codeboost.files")
                .count(),
            3
        );
        assert_eq!(
            codes
                .iter()
                .filter(|c| **c == "convert.codeboost.command")
                .count(),
            2
        );
    }

    #[test]
    fn warns_for_metadata_it_has_no_place_for() {
        let mut t = ticket("P1", vec![ScopeEntry::any("a.rs")], vec![gate(&["make"])]);
        t.metadata.insert("changes".into(), json!({}));
        t.metadata.insert("owner".into(), "me".into());
        let mut p = plan(vec![t]);
        p.metadata.insert("revision".into(), 0.into());
        p.metadata
            .insert("questions".into(), json!(["Why?", "", 3]));
        p.metadata.insert("jira".into(), "X-1".into());
        let mut sink = Vec::new();
        let v = emit(&p, &mut sink);
        assert_eq!(v["questions"], json!(["Why?"]));
        assert_eq!(v["revision"], 1);
        let warned: Vec<(&str, &str)> = sink
            .iter()
            .filter(|d| d.code == "convert.codeboost.metadata")
            .map(|d| (d.pointer.as_str(), d.message.as_str()))
            .collect();
        let pointers: Vec<&str> = warned.iter().map(|w| w.0).collect();
        assert_eq!(
            pointers,
            [
                "/tickets/0/metadata",
                "/metadata/questions",
                "/metadata/revision",
                "/metadata"
            ]
        );
        assert!(warned[3].1.contains("`jira`"));
        assert!(warned[0].1.contains("`owner`") && !warned[0].1.contains("changes"));
    }
}
