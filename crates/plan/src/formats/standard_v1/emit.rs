//! Writing any plan (IR) as standard_v1. A plan read from standard_v1 comes
//! back as it was (its `metadata` holds what the IR has no field for);
//! from another format, what standard_v1 cannot say draws a warning and a
//! required field the IR lacks gets a visible placeholder and a warning.

use super::ir::BASE;
use super::{COERCED_TIMESTAMP, MAX_COUNTERFACTUALS, SCHEMA};
use crate::diag::{Diagnostic, Sink};
use crate::model::{Counterfactual, Format, Mutation, Plan, ScopeOp, Ticket};
use crate::pointer::Pointer;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};

/// Marks every value planwright had to invent.
pub(super) const PLACEHOLDER: &str = "(placeholder written by planwright convert)";

fn warn(sink: &mut dyn Sink, code: &str, at: impl Into<String>, message: impl Into<String>) {
    sink.push(Diagnostic::warning(
        format!("convert.standard_v1.{code}"),
        at,
        message,
    ));
}

/// Writes `plan` as a standard_v1 document; pushes a warning for everything
/// standard_v1 cannot say and for every placeholder it had to write.
pub fn emit(plan: &Plan, sink: &mut dyn Sink) -> Value {
    let meta = if plan.source_format == Format::StandardV1 {
        plan.metadata.clone()
    } else {
        Map::new()
    };
    unsayable(plan, sink);
    let mut out = meta.clone();
    out.insert("plan_version".into(), "standard_v1".into());
    let mut fill = |key: &str, value: Value, what: &str, sink: &mut dyn Sink| {
        if !out.contains_key(key) {
            warn(
                sink,
                "default",
                "",
                format!("standard_v1 requires `{key}`; wrote {what} {PLACEHOLDER}"),
            );
            out.insert(key.into(), value);
        }
    };
    let first = plan.tickets.first().map_or("plan", |t| t.id.as_str());
    fill(
        "ticket_reference",
        json!({"type": "github_issue", "url": "https://example.invalid/planwright/unknown-ticket", "id": first}),
        "a ticket reference to https://example.invalid",
        sink,
    );
    fill(
        "generated_by",
        json!({"agent": "planwright", "model": "unknown", "timestamp": COERCED_TIMESTAMP}),
        "agent `planwright`, model `unknown` and the Unix epoch",
        sink,
    );
    fill(
        "predicted_runtime_confidence",
        "low".into(),
        "confidence `low`",
        sink,
    );
    if !out.contains_key("summary") {
        out.insert("summary".into(), summary(plan).into());
    }
    if !out.contains_key("approach") {
        out.insert("approach".into(), approach(plan));
    }
    verification(plan, &mut out, sink);
    runtime(plan, &mut out, sink);
    if plan.tickets.len() >= 2 {
        slices(plan, &mut out, sink);
    } else {
        single(plan, &mut out, sink);
    }
    counterfactuals(plan, &mut out, sink);
    ordered(out)
}

/// `out` in the schema's field order, so converted files read like
/// hand-written ones.
fn ordered(mut out: Map<String, Value>) -> Value {
    let mut doc = Map::new();
    if let Some(props) = SCHEMA["properties"].as_object() {
        for key in props.keys() {
            if let Some(v) = out.remove(key) {
                doc.insert(key.clone(), v);
            }
        }
    }
    doc.extend(out);
    Value::Object(doc)
}

fn first_line(s: &str) -> &str {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

fn label(t: &Ticket) -> String {
    if t.title.trim().is_empty() {
        let line = first_line(&t.body);
        if line.is_empty() {
            t.id.clone()
        } else {
            line.to_string()
        }
    } else {
        t.title.clone()
    }
}

fn summary(plan: &Plan) -> String {
    match plan.tickets.as_slice() {
        [] => format!("An empty plan {PLACEHOLDER}"),
        [one] => label(one),
        many => many.iter().map(label).collect::<Vec<_>>().join("; "),
    }
}

fn approach(plan: &Plan) -> Value {
    let steps: Vec<Value> = match plan.tickets.as_slice() {
        [] => vec![json!({"step": 1, "description": format!("Nothing to do {PLACEHOLDER}")})],
        [one] => vec![
            json!({"step": 1, "description": if one.body.trim().is_empty() { label(one) } else { one.body.clone() }}),
        ],
        many => many
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"step": i + 1, "description": format!("{}: {}", t.id, label(t))}))
            .collect(),
    };
    steps.into()
}

fn gates_text(plan: &Plan) -> String {
    let mut all: Vec<String> = plan.gates.iter().map(|g| g.argv.join(" ")).collect();
    for t in &plan.tickets {
        all.extend(t.gates.iter().map(|g| g.argv.join(" ")));
    }
    all.dedup();
    all.iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn verification(plan: &Plan, out: &mut Map<String, Value>, sink: &mut dyn Sink) {
    let mut v = match out.remove("verification") {
        Some(Value::Object(v)) => v,
        _ => {
            let gates = gates_text(plan);
            let strategy = if gates.is_empty() {
                warn(sink, "default", "", format!("standard_v1 requires `verification.test_strategy`; wrote a placeholder {PLACEHOLDER}"));
                format!("Not stated in the source plan {PLACEHOLDER}")
            } else {
                format!("Run {gates}")
            };
            warn(sink, "default", "", format!("standard_v1 requires `verification.rollback_plan`; wrote `Revert PR` {PLACEHOLDER}"));
            let mut v = Map::new();
            v.insert("test_strategy".into(), strategy.into());
            v.insert(
                "rollback_plan".into(),
                format!("Revert PR {PLACEHOLDER}").into(),
            );
            v
        }
    };
    let known = v.remove("acceptance_criteria");
    let known: Vec<Value> = known
        .and_then(|k| k.as_array().cloned())
        .unwrap_or_default();
    let mut used = vec![false; known.len()];
    let mut ids: HashSet<String> = HashSet::new();
    let mut criteria = Vec::new();
    let mut seen = HashSet::new();
    for (i, t) in plan.tickets.iter().enumerate() {
        for (k, statement) in t.checks.iter().enumerate() {
            if statement.is_empty() {
                let at = Pointer::root()
                    .key("tickets")
                    .index(i)
                    .key("checks")
                    .index(k);
                let m = format!(
                    "{}: an acceptance criterion needs a statement; dropped an empty check",
                    t.id
                );
                warn(sink, "checks", at, m);
            }
        }
    }
    let statements = plan.tickets.iter().flat_map(|t| &t.checks);
    for statement in statements.filter(|s| !s.is_empty()) {
        let found = known.iter().enumerate().find(|(i, c)| {
            !used[*i] && c.get("statement").and_then(Value::as_str) == Some(statement)
        });
        // Several tickets may share a check; the plan states it once. Two
        // criteria of the source plan with one statement stay two.
        let repeat = !seen.insert(statement.as_str());
        let c = match found {
            Some((i, c)) => {
                used[i] = true;
                c.clone()
            }
            None if repeat => continue,
            None => {
                let mut n = criteria.len() + 1;
                while ids.contains(&format!("check-{n}")) {
                    n += 1;
                }
                json!({"id": format!("check-{n}"), "statement": statement, "source": "explicit"})
            }
        };
        if let Some(id) = c.get("id").and_then(Value::as_str) {
            ids.insert(id.to_string());
        }
        criteria.push(c);
    }
    if !criteria.is_empty() {
        let mut ordered = Map::new();
        for (k, val) in v {
            ordered.insert(k.clone(), val);
            if k == "rollback_plan" {
                ordered.insert("acceptance_criteria".into(), criteria.clone().into());
            }
        }
        if !ordered.contains_key("acceptance_criteria") {
            ordered.insert("acceptance_criteria".into(), criteria.into());
        }
        v = ordered;
    }
    out.insert("verification".into(), Value::Object(v));
}

fn runtime(plan: &Plan, out: &mut Map<String, Value>, sink: &mut dyn Sink) {
    let single = match plan.tickets.as_slice() {
        [one] => one.estimate_minutes,
        _ => None,
    };
    if let Some(m) = single {
        out.insert("predicted_runtime_minutes".into(), m.max(1).into());
        return;
    }
    if out.contains_key("predicted_runtime_minutes") {
        return;
    }
    let estimates: Vec<u32> = plan
        .tickets
        .iter()
        .filter_map(|t| t.estimate_minutes)
        .collect();
    let total: u32 = estimates.iter().sum();
    if estimates.is_empty() {
        warn(
            sink,
            "default",
            "",
            format!("standard_v1 requires `predicted_runtime_minutes`; wrote 1 {PLACEHOLDER}"),
        );
    }
    out.insert("predicted_runtime_minutes".into(), total.max(1).into());
}

/// Scope files of `t` as standard_v1 scope-file objects.
fn files(t: &Ticket, i: usize, sink: &mut dyn Sink) -> Vec<Value> {
    let at = Pointer::root().key("tickets").index(i).key("scope");
    let mut files = Vec::new();
    for (k, s) in t.scope.iter().enumerate() {
        if s.pattern.contains(['*', '?', '[']) {
            warn(
                sink,
                "glob",
                at.index(k),
                format!(
                    "{}: standard_v1 scope lists files, not globs; wrote '{}' as a path",
                    t.id, s.pattern
                ),
            );
        }
        let op = match &s.op {
            ScopeOp::Create => "create",
            ScopeOp::Modify => "modify",
            ScopeOp::Delete => "delete",
            ScopeOp::Any => {
                warn(sink, "scope-op", at.index(k), format!("{}: '{}' may be changed in any way, which standard_v1 cannot say; wrote `modify`", t.id, s.pattern));
                "modify"
            }
            ScopeOp::Rename { from } => {
                warn(
                    sink,
                    "scope-op",
                    at.index(k),
                    format!(
                        "{}: standard_v1 has no rename; wrote delete '{from}' and create '{}'",
                        t.id, s.pattern
                    ),
                );
                files.push(json!({"path": from, "operation": "delete"}));
                "create"
            }
        };
        files.push(json!({"path": s.pattern, "operation": op}));
    }
    files
}

fn scope_with(rest: Option<&Value>, files: Vec<Value>) -> Value {
    let mut scope = Map::new();
    scope.insert("files".into(), files.into());
    if let Some(Value::Object(rest)) = rest {
        for (k, v) in rest {
            if k != "files" {
                scope.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(scope)
}

fn recommendation(
    model: Option<&str>,
    known: Option<&Value>,
    at: Pointer,
    sink: &mut dyn Sink,
) -> Option<Value> {
    let model = model?;
    if let Some(k) =
        known.filter(|k| k.get("implement_model").and_then(Value::as_str) == Some(model))
    {
        return Some(k.clone());
    }
    warn(sink, "default", at, format!("standard_v1's model_recommendation needs a rationale and a complexity; wrote placeholders for model `{model}`"));
    Some(
        json!({"implement_model": model, "rationale": format!("Model named by the source plan {PLACEHOLDER}"), "complexity_assessed": "medium"}),
    )
}

fn single(plan: &Plan, out: &mut Map<String, Value>, sink: &mut dyn Sink) {
    // A split plan whose IR was cut down to one ticket is no longer split.
    for (key, list) in [("decomposition", "sub_plans"), ("split_proposal", "phases")] {
        if out.get(key).is_some_and(|v| v.get(list).is_none()) {
            out.remove(key);
        }
    }
    let files: Vec<Value> = plan
        .tickets
        .iter()
        .enumerate()
        .flat_map(|(i, t)| files(t, i, sink))
        .collect();
    if files.is_empty() {
        warn(sink, "default", "", "standard_v1 requires at least one scope file; the plan has none, so the output is not a valid plan");
    }
    let scope = scope_with(out.get("scope"), files);
    out.insert("scope".into(), scope);
    let t = plan.tickets.first();
    let rec = recommendation(
        t.and_then(|t| t.model.as_deref()),
        out.get("model_recommendation"),
        Pointer::root().key("tickets").index(0).key("model"),
        sink,
    );
    match rec {
        Some(r) => out.insert("model_recommendation".into(), r),
        None => out.remove("model_recommendation"),
    };
}

/// Two or more tickets: `split_proposal.phases` when the plan came from
/// phases, else `decomposition.sub_plans`.
fn slices(plan: &Plan, out: &mut Map<String, Value>, sink: &mut dyn Sink) {
    let phases = out
        .get("split_proposal")
        .is_some_and(|s| s.get("phases").is_none());
    let mut titles = HashSet::new();
    let mut union: Vec<Value> = Vec::new();
    let mut list = Vec::new();
    let mut owner: HashMap<String, usize> = HashMap::new();
    for (i, t) in plan.tickets.iter().enumerate() {
        let files = own_files(plan, i, files(t, i, sink), &mut owner, sink);
        for f in &files {
            if !union.contains(f) {
                union.push(f.clone());
            }
        }
        let mut title = label(t);
        if !titles.insert(title.clone()) {
            title = format!("{title} ({})", t.id);
        }
        list.push(slice(plan, i, title, files, phases, sink));
    }
    if out.get("scope").is_none_or(|s| s.get("files").is_none()) {
        let scope = scope_with(out.get("scope"), union);
        out.insert("scope".into(), scope);
    }
    let (key, field) = if phases {
        ("split_proposal", "phases")
    } else {
        ("decomposition", "sub_plans")
    };
    let mut holder = match out.remove(key) {
        Some(Value::Object(h)) => h,
        _ => {
            warn(
                sink,
                "default",
                "",
                format!(
                    "standard_v1 requires `{key}.rationale`; wrote a placeholder {PLACEHOLDER}"
                ),
            );
            let rationale = format!(
                "Split into {} by the source plan {PLACEHOLDER}",
                crate::words::count(plan.tickets.len(), "ticket")
            );
            let mut h = Map::new();
            h.insert("rationale".into(), rationale.into());
            h
        }
    };
    holder.insert(field.into(), list.into());
    out.insert(key.into(), Value::Object(holder));
}

/// The files of ticket `i` that no earlier slice has: standard_v1 gives
/// each file to one slice.
fn own_files(
    plan: &Plan,
    i: usize,
    files: Vec<Value>,
    owner: &mut HashMap<String, usize>,
    sink: &mut dyn Sink,
) -> Vec<Value> {
    let t = &plan.tickets[i];
    let at = Pointer::root().key("tickets").index(i).key("scope");
    let mut kept = Vec::new();
    for f in files {
        let path = f["path"].as_str().unwrap_or_default().to_string();
        match owner.get(&path) {
            Some(&k) if k != i => {
                let m = format!("{}: '{path}' is already in the slice of {}; standard_v1 gives each file one slice, so dropped it here", t.id, plan.tickets[k].id);
                warn(sink, "scope-overlap", &at, m);
            }
            _ => {
                owner.insert(path, i);
                kept.push(f);
            }
        }
    }
    if kept.is_empty() {
        let m = format!("{}: no file of its own is left and a sub-plan needs one, so the output is not a valid plan", t.id);
        warn(sink, "scope-overlap", &at, m);
    }
    kept
}

/// Ticket `i` as a sub-plan, or as a phase when `phase`.
fn slice(
    plan: &Plan,
    i: usize,
    title: String,
    files: Vec<Value>,
    phase: bool,
    sink: &mut dyn Sink,
) -> Value {
    let t = &plan.tickets[i];
    let at = Pointer::root().key("tickets").index(i);
    let std = plan.source_format == Format::StandardV1;
    // Another format's ticket metadata means something else.
    let get = |key: &str| t.metadata.get(key).filter(|_| std).cloned();
    let mut s = Map::new();
    s.insert(
        "title".into(),
        title.chars().take(200).collect::<String>().into(),
    );
    // Required of a sub-plan, optional for a phase.
    match get("scope_hint") {
        Some(hint) => {
            s.insert("scope_hint".into(), hint);
        }
        None if !phase || !std => {
            let hint = first_line(&t.body);
            if t.body.trim() != hint {
                let m = format!("{}: a sub-plan has no place for a ticket's whole body; kept its first line as `scope_hint`", t.id);
                warn(sink, "body", at.key("body"), m);
            }
            s.insert("scope_hint".into(), hint.into());
        }
        None => {}
    }
    if !phase {
        let minutes = t.estimate_minutes.unwrap_or_else(|| {
            let m = format!(
                "{}: a sub-plan requires predicted_runtime_minutes; wrote 1 {PLACEHOLDER}",
                t.id
            );
            warn(sink, "default", at.key("estimate_minutes"), m);
            1
        });
        s.insert("predicted_runtime_minutes".into(), minutes.max(1).into());
        let confidence = get("predicted_runtime_confidence").unwrap_or_else(|| {
            let m = format!(
                "{}: a sub-plan requires predicted_runtime_confidence; wrote `low` {PLACEHOLDER}",
                t.id
            );
            warn(sink, "default", &at, m);
            "low".into()
        });
        s.insert("predicted_runtime_confidence".into(), confidence);
    }
    s.insert("scope".into(), scope_with(get("scope").as_ref(), files));
    let deps: Vec<usize> = t
        .depends_on
        .iter()
        .filter_map(|d| plan.tickets.iter().position(|o| &o.id == d))
        .collect();
    if !deps.is_empty() {
        s.insert("depends_on".into(), deps.into());
    }
    if !phase {
        let known = get("model_recommendation");
        if let Some(r) = recommendation(t.model.as_deref(), known.as_ref(), at.key("model"), sink) {
            s.insert("model_recommendation".into(), r);
        }
    }
    Value::Object(s)
}

fn counterfactual(c: &Counterfactual, at: Pointer, sink: &mut dyn Sink) -> Value {
    let mutation = match &c.mutation {
        Mutation::FindReplace { find, replace } => json!({"find": find, "replace": replace}),
        Mutation::Patch { patch } => json!({"patch": patch}),
    };
    let package = c.tests.package.clone().unwrap_or_else(|| {
        warn(
            sink,
            "default",
            at.key("tests").key("package"),
            "a standard_v1 counterfactual requires tests.package; wrote `./...`",
        );
        "./...".into()
    });
    if c.tests.argv.is_some() {
        warn(
            sink,
            "counterfactual-command",
            at.key("tests").key("argv"),
            "standard_v1 counterfactuals run Go's tests; dropped the test command `tests.argv`",
        );
    }
    json!({"control_path": c.control_path, "mutation": mutation, "tests": {"run": c.tests.run, "package": package}, "expect": "red"})
}

/// Why standard_v1 rejects counterfactual `v`, if it does.
fn unrunnable(v: &Value, at: &Pointer) -> Option<String> {
    let empty = [
        "control_path",
        "mutation/find",
        "mutation/patch",
        "tests/run",
    ]
    .into_iter()
    .find(|k| v.pointer(&format!("/{k}")) == Some(&Value::from("")));
    if let Some(k) = empty {
        return Some(format!("`{}` is empty", k.replace('/', ".")));
    }
    let mut found: Vec<Diagnostic> = Vec::new();
    super::semantic::counterfactual(v, at, 0, &mut found);
    found.into_iter().next().map(|d| {
        d.message
            .trim_start_matches("plan: semantic: ")
            .replacen("counterfactuals[0].", "", 1)
    })
}

fn counterfactuals(plan: &Plan, out: &mut Map<String, Value>, sink: &mut dyn Sink) {
    let mut list = Vec::new();
    for (i, t) in plan.tickets.iter().enumerate() {
        for (k, c) in t.counterfactuals.iter().enumerate() {
            let at = Pointer::root()
                .key("tickets")
                .index(i)
                .key("counterfactuals")
                .index(k);
            let v = counterfactual(c, at.clone(), sink);
            if let Some(why) = unrunnable(&v, &at) {
                let m = format!(
                    "{}: standard_v1 cannot say this counterfactual ({why}); dropped it",
                    t.id
                );
                warn(sink, "counterfactuals", &at, m);
                continue;
            }
            if list.len() == MAX_COUNTERFACTUALS {
                warn(
                    sink,
                    "counterfactuals",
                    &at,
                    format!(
                        "{}: standard_v1 allows at most {}; dropped this one",
                        t.id,
                        crate::words::count(MAX_COUNTERFACTUALS, "counterfactual")
                    ),
                );
                continue;
            }
            list.push(v);
        }
    }
    // A split plan spreads its counterfactuals over the slices; the source
    // order survives in metadata and wins while the entries are the same.
    let known = out.remove("counterfactuals");
    let same = known
        .as_ref()
        .and_then(Value::as_array)
        .is_some_and(|k| k.len() == list.len() && k.iter().all(|c| list.contains(c)));
    match known {
        Some(k) if same => {
            out.insert("counterfactuals".into(), k);
        }
        _ if !list.is_empty() => {
            out.insert("counterfactuals".into(), list.into());
        }
        _ => {}
    }
}

/// Warnings for what the IR says and standard_v1 cannot.
fn unsayable(plan: &Plan, sink: &mut dyn Sink) {
    let root = Pointer::root();
    if !plan.gates.is_empty() {
        warn(sink, "gates", root.key("gates"), "standard_v1 has no gates; they are named in verification.test_strategy only when the plan had none (configure them for the run)");
    }
    if let Some(repo) = &plan.repo {
        warn(
            sink,
            "repo",
            root.key("repo"),
            format!("standard_v1 names no repository; dropped '{repo}'"),
        );
    }
    if plan.base != BASE {
        warn(sink, "base", root.key("base"), format!("standard_v1 names no base branch; dropped '{}' (a standard_v1 plan runs on `{BASE}`)", plan.base));
    }
    if !plan.caps.is_empty() {
        warn(
            sink,
            "caps",
            root.key("caps"),
            "standard_v1 has no pool caps; dropped",
        );
    }
    if plan.review.dry_passes != 1 {
        warn(
            sink,
            "review",
            root.key("review"),
            format!(
                "standard_v1 has no review passes; dropped dry_passes = {}",
                plan.review.dry_passes
            ),
        );
    }
    let other = plan.source_format != Format::StandardV1;
    if other && !plan.metadata.is_empty() {
        let m = "standard_v1 has no place for the source format's extra fields; dropped `metadata`";
        warn(sink, "metadata", root.key("metadata"), m);
    }
    let renamed: Vec<String> = plan
        .tickets
        .iter()
        .enumerate()
        .filter(|(i, t)| t.id != format!("sub-{}", i + 1))
        .map(|(i, t)| format!("{} -> sub-{}", t.id, i + 1))
        .collect();
    if other && plan.tickets.len() >= 2 && !renamed.is_empty() {
        let m = format!(
            "standard_v1 numbers its sub-plans; reading this plan back renames {}",
            renamed.join(", ")
        );
        warn(sink, "ids", root.key("tickets"), m);
    }
    for (i, t) in plan.tickets.iter().enumerate() {
        let at = root.key("tickets").index(i);
        if other && !t.metadata.is_empty() {
            let m = format!("{}: standard_v1 has no place for the source format's extra fields; dropped `metadata`", t.id);
            warn(sink, "metadata", at.key("metadata"), m);
        }
        let dropped = [
            ("rails", "rails", !t.rails.is_empty()),
            ("gates", "gates", !t.gates.is_empty()),
            ("tier", "tier", t.tier.is_some()),
            ("pool-hint", "pool_hint", t.pool_hint.is_some()),
        ];
        for (code, field, present) in dropped {
            if present {
                warn(
                    sink,
                    code,
                    at.key(field),
                    format!("{}: standard_v1 has no per-ticket `{field}`; dropped", t.id),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CounterfactualTests, ScopeEntry};

    fn ticket(id: &str, files: &[&str]) -> Ticket {
        Ticket {
            title: format!("{id} title"),
            scope: files
                .iter()
                .map(|f| ScopeEntry {
                    pattern: f.to_string(),
                    op: ScopeOp::Modify,
                })
                .collect(),
            estimate_minutes: Some(5),
            ..Ticket::new(id, "do it")
        }
    }

    fn plan(tickets: Vec<Ticket>) -> Plan {
        Plan {
            base: BASE.into(),
            ..Plan::new(Format::Native, tickets)
        }
    }

    fn with(sink: &[Diagnostic], code: &str) -> Vec<String> {
        sink.iter()
            .filter(|d| d.code == format!("convert.standard_v1.{code}"))
            .map(|d| format!("{} {}", d.pointer, d.message))
            .collect()
    }

    #[test]
    fn two_criteria_with_one_statement_stay_two() {
        let mut p = plan(vec![ticket("T1", &["a.go"])]);
        p.source_format = Format::StandardV1;
        p.tickets[0].checks = vec!["It works.".into(), "It works.".into()];
        let c = |id: &str| json!({"id": id, "statement": "It works.", "source": "explicit"});
        let verification = json!({"test_strategy": "t", "rollback_plan": "r", "acceptance_criteria": [c("a"), c("b")]});
        p.metadata.insert("verification".into(), verification);
        let doc = emit(&p, &mut Vec::new());
        let criteria = &doc["verification"]["acceptance_criteria"];
        assert_eq!(criteria, &json!([c("a"), c("b")]));
        // Tickets sharing a check still state it once.
        let mut p = plan(vec![ticket("T1", &["a.go"]), ticket("T2", &["b.go"])]);
        p.tickets[0].checks = vec!["It works.".into()];
        p.tickets[1].checks = vec!["It works.".into(), String::new()];
        let mut sink = Vec::new();
        let doc = emit(&p, &mut sink);
        assert_eq!(
            doc["verification"]["acceptance_criteria"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
        assert_eq!(with(&sink, "checks").len(), 1);
    }

    #[test]
    fn a_file_goes_to_the_first_slice_that_names_it() {
        let p = plan(vec![
            ticket("T1", &["a.go", "b.go"]),
            ticket("T2", &["b.go", "c.go"]),
            ticket("T3", &["a.go"]),
        ]);
        let mut sink = Vec::new();
        let doc = emit(&p, &mut sink);
        let subs = &doc["decomposition"]["sub_plans"];
        assert_eq!(
            subs[1]["scope"]["files"],
            json!([{"path": "c.go", "operation": "modify"}])
        );
        assert_eq!(subs[2]["scope"]["files"], json!([]));
        let warned = with(&sink, "scope-overlap");
        assert_eq!(warned.len(), 3, "{warned:?}");
        assert!(warned[0].starts_with("/tickets/1/scope T2: 'b.go' is already in the slice of T1"));
        assert!(warned[2].contains("not a valid plan"));
    }

    #[test]
    fn counterfactuals_standard_v1_rejects_are_dropped() {
        let cf = |path: &str, mutation: Mutation| Counterfactual {
            control_path: path.into(),
            mutation,
            tests: CounterfactualTests {
                run: "^TestA$".into(),
                package: Some("./a".into()),
                argv: None,
            },
        };
        let fr = |f: &str, r: &str| Mutation::FindReplace {
            find: f.into(),
            replace: r.into(),
        };
        let mut p = plan(vec![ticket("T1", &["a.go"])]);
        p.tickets[0].counterfactuals = vec![
            cf("a.go", fr("x", "y")),
            cf("a.go", fr("x", "x")),
            cf("a.go", fr("", "y")),
            cf("a_test.go", fr("x", "y")),
            cf(
                "a.go",
                Mutation::Patch {
                    patch: "-x\n+y\n".into(),
                },
            ),
        ];
        let mut sink = Vec::new();
        let doc = emit(&p, &mut sink);
        assert_eq!(doc["counterfactuals"].as_array().map(Vec::len), Some(1));
        let warned = with(&sink, "counterfactuals");
        assert_eq!(warned.len(), 4, "{warned:?}");
        assert!(warned[0].contains("replace equals find"), "{warned:?}");
        assert!(warned[1].contains("`mutation.find` is empty"), "{warned:?}");
    }

    #[test]
    fn warns_for_ids_bodies_and_metadata_it_drops() {
        let mut p = plan(vec![ticket("T1", &["a.go"]), ticket("sub-2", &["b.go"])]);
        p.tickets[0].body = "First line.\nThe rest of the prompt.".into();
        p.tickets[1].metadata.insert("changes".into(), json!({}));
        p.metadata.insert("issue".into(), 3.into());
        let mut sink = Vec::new();
        let doc = emit(&p, &mut sink);
        assert_eq!(
            doc["decomposition"]["sub_plans"][0]["scope_hint"],
            "First line."
        );
        assert_eq!(with(&sink, "body"), ["/tickets/0/body T1: a sub-plan has no place for a ticket's whole body; kept its first line as `scope_hint`"]);
        assert_eq!(with(&sink, "ids"), ["/tickets standard_v1 numbers its sub-plans; reading this plan back renames T1 -> sub-1"]);
        let metadata = with(&sink, "metadata");
        assert_eq!(metadata.len(), 2);
        assert!(metadata[0].starts_with("/metadata "));
        assert!(metadata[1].starts_with("/tickets/1/metadata sub-2: "));
        // A plan read from standard_v1 keeps its metadata: no warning.
        p.source_format = Format::StandardV1;
        let mut sink = Vec::new();
        emit(&p, &mut sink);
        assert!(with(&sink, "metadata").is_empty() && with(&sink, "ids").is_empty());
    }
}
