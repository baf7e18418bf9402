//! The native format: the IR as JSON, with `"planwright": 1`.

use crate::diag::{Diagnostic, Sink};
use crate::model::Plan;
use crate::pointer::Pointer;
use crate::refname::ref_name_problem;
use crate::schema::Checker;
use serde_json::Value;
use std::sync::LazyLock;

/// The version written in the `planwright` key.
pub const VERSION: u64 = 1;

/// Writes `plan` as a native document.
pub fn emit(plan: &Plan) -> Value {
    let mut doc = serde_json::Map::new();
    doc.insert("planwright".into(), VERSION.into());
    if let Value::Object(fields) = serde_json::to_value(plan).expect("the IR always serializes") {
        doc.extend(fields);
    }
    Value::Object(doc)
}

static CHECKER: LazyLock<Checker> = LazyLock::new(|| Checker::new(&schema(), "native"));

/// Reads a native document back into the IR.
pub fn validate(value: &Value, sink: &mut dyn Sink) -> Option<Plan> {
    if CHECKER.check(value, sink) > 0 {
        return None;
    }
    let mut fields = value.as_object()?.clone();
    fields.remove("planwright");
    match serde_json::from_value::<Plan>(Value::Object(fields)) {
        Ok(plan) => {
            crate::dag::check_references(&plan, "native", sink);
            check_names(&plan, sink);
            Some(plan)
        }
        Err(e) => {
            sink.push(Diagnostic::error(
                "native.schema",
                "",
                format!("not a valid native plan: {e}"),
            ));
            None
        }
    }
}

/// What the schema cannot say: ids and the base must be git branch names,
/// and scope and rail patterns must stay inside the repository.
fn check_names(plan: &Plan, sink: &mut dyn Sink) {
    if let Some(why) = ref_name_problem(&plan.base) {
        sink.push(Diagnostic::error(
            "native.plan.base",
            "/base",
            format!("base '{}' is not a valid branch name: {why}", plan.base),
        ));
    }
    for (i, t) in plan.tickets.iter().enumerate() {
        let at = Pointer::root().key("tickets").index(i);
        if let Some(why) = ref_name_problem(&format!("planwright/{}", t.id)) {
            sink.push(Diagnostic::error(
                "native.ticket.id-ref",
                at.key("id"),
                format!("ticket id '{}' cannot be a git branch name: {why}", t.id),
            ));
        }
        let scope = t.scope.iter().map(|s| s.pattern.as_str());
        let fields = [
            ("scope", scope.collect::<Vec<_>>()),
            ("rails", t.rails.iter().map(String::as_str).collect()),
        ];
        for (field, patterns) in fields {
            for (k, pattern) in patterns.into_iter().enumerate() {
                let place = if field == "scope" {
                    at.key(field).index(k).key("pattern")
                } else {
                    at.key(field).index(k)
                };
                if let Some(why) = pattern_problem(pattern) {
                    sink.push(Diagnostic::error(
                        "native.scope.pattern",
                        place,
                        format!("{}: {field} pattern '{pattern}' {why}", t.id),
                    ).with_hint("write a path or glob relative to the repository root, with `/` between segments"));
                }
            }
        }
    }
}

/// Why a scope or rail pattern cannot name files inside the repository.
fn pattern_problem(pattern: &str) -> Option<&'static str> {
    if pattern.is_empty() {
        return Some("is empty");
    }
    if pattern.starts_with('/') || pattern.contains('\\') {
        return Some("must be relative, with forward slashes");
    }
    if pattern
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return Some("has a `.`, `..` or empty segment");
    }
    None
}

/// The JSON Schema of the native format, generated from the IR types.
pub fn schema() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(Plan)).expect("schemas serialize");
    if let Some(obj) = schema.as_object_mut() {
        obj.insert("title".into(), "planwright native plan".into());
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            let mut with_version = serde_json::Map::new();
            with_version.insert(
                "planwright".into(),
                serde_json::json!({"description": "Native format version.", "const": VERSION}),
            );
            with_version.extend(std::mem::take(props));
            *props = with_version;
        }
        if let Some(Value::Array(req)) = obj.get_mut("required") {
            req.insert(0, "planwright".into());
        }
    }
    schema
}
