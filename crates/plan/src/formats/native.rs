//! The native format: the IR as JSON, with `"planwright": 1`.

use crate::diag::{Diagnostic, Sink};
use crate::model::Plan;
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
