//! fishhawk's standard_v1 plan: the schema of the seed's version, every
//! semantic rule of `plan.Parse`/`plan.Validate`, the counterfactual rules
//! and the plan-gate advisories, all in one run (see
//! `docs/formats/standard_v1.md`).
//!
//! fishhawk checks the schema and the semantics at different times, so a
//! plan can be schema-valid and semantically unchecked; here a document is
//! never one without the other.

mod decode;
mod emit;
mod gate;
mod ir;
mod semantic;

pub use emit::emit;

use super::Options;
use crate::diag::{Counting, Diagnostic, Sink};
use crate::doc::Document;
use crate::model::Plan;
use crate::pointer::Pointer;
use crate::schema::{Checker, Formats};
use crate::view::Obj;
use serde_json::{Map, Value};
use std::sync::LazyLock;

/// The schema text, as published under `schemas/`.
pub const SCHEMA_TEXT: &str = include_str!("../../../../schemas/standard_v1.schema.json");

/// fishhawk allows at most this many counterfactuals per plan.
pub const MAX_COUNTERFACTUALS: usize = 8;

/// How close to the file cap (in files) a plan draws the near-cap advisory.
pub const NEAR_CAP: usize = 3;

/// The timestamp a coerced `generated_by` gets: fishhawk stamps the clock,
/// but this crate never reads it, so the value is a visible placeholder.
pub const COERCED_TIMESTAMP: &str = "1970-01-01T00:00:00Z";

static SCHEMA: LazyLock<Value> =
    LazyLock::new(|| serde_json::from_str(SCHEMA_TEXT).expect("the embedded schema is JSON"));

// fishhawk's schema library treats `format` as an annotation, as draft
// 2020-12 does by default: a `uri` is any string, and a timestamp is
// checked by the typed decode instead (`decode`).
static CHECKER: LazyLock<Checker> =
    LazyLock::new(|| Checker::new(&SCHEMA, "standard_v1", Formats::Annotate));

/// The JSON Schema of standard_v1 (draft 2020-12).
pub fn schema() -> Value {
    SCHEMA.clone()
}

/// Validates a standard_v1 plan: schema, semantic rules, counterfactual
/// rules and plan-gate advisories; returns the IR when there is no error.
/// `value` is the document's, taken to be coerced in place: a large plan
/// is held as a `Value` once, not twice (issue 53).
pub fn validate(
    doc: &Document,
    mut value: Value,
    options: &Options,
    sink: &mut dyn Sink,
) -> Option<Plan> {
    let mut sink = Counting::new(sink);
    super::warn_duplicate_keys(doc, "standard_v1", "fishhawk", &mut sink);
    if options.coerce {
        drop_optional_nulls(&SCHEMA, &mut value, &mut sink);
        coerce(&SCHEMA, &SCHEMA, &mut value, &Pointer::root(), &mut sink);
    }
    CHECKER.check(&value, &mut sink);
    decode::check(doc, &SCHEMA, &mut sink);
    semantic::check(&value, &mut sink);
    let cap = options
        .max_files_changed
        .or(options.standard_v1.max_files_changed);
    let hint = options.calibration_hint || options.standard_v1.calibration_hint;
    gate::advise(&value, cap, hint, &mut sink);
    if sink.errors > 0 {
        return None;
    }
    ir::to_plan(&value)
}

/// Follows a local `$ref` (`#/$defs/name`) to its definition.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        Some(name) => root["$defs"].get(name).unwrap_or(schema),
        None => schema,
    }
}

/// fishhawk's coercion reads a top-level field that the schema does not
/// require, set to null, as absent.
fn drop_optional_nulls(schema: &Value, value: &mut Value, sink: &mut dyn Sink) {
    let (Some(props), Some(fields)) = (
        schema.get("properties").and_then(Value::as_object),
        value.as_object_mut(),
    ) else {
        return;
    };
    let required = |k: &str| {
        access::arr(schema, "required")
            .iter()
            .any(|r| r.as_str() == Some(k))
    };
    let dropped: Vec<String> = fields
        .iter()
        .filter(|(k, v)| v.is_null() && props.contains_key(k.as_str()) && !required(k))
        .map(|(k, _)| k.clone())
        .collect();
    for key in dropped {
        fields.remove(&key);
        sink.push(
            Diagnostic::warning(
                "standard_v1.coerced",
                Pointer::root().key(&key),
                format!("dropped `{key}`: null, which fishhawk's coercion reads as an absent optional field"),
            )
            .with_hint(format!(
                "remove `{key}` so the plan is valid without `{}`",
                crate::Flag::Coerce
            )),
        );
    }
}

/// The anchor's `--coerce`: a bare string where the schema wants an object
/// whose definition carries `x-coerce-principal` becomes that object, the
/// string its principal field and `x-coerce-defaults` the rest.
fn coerce(root: &Value, schema: &Value, value: &mut Value, at: &Pointer, sink: &mut dyn Sink) {
    let schema = resolve(root, schema);
    match value {
        Value::String(s) => {
            let Some(principal) = schema.get("x-coerce-principal").and_then(Value::as_str) else {
                return;
            };
            let mut obj = Map::new();
            obj.insert(principal.to_string(), Value::String(s.clone()));
            let mut filled = Vec::new();
            if let Some(Value::Object(defaults)) = schema.get("x-coerce-defaults") {
                for (k, v) in defaults {
                    let v = match v.as_str() {
                        Some("<<runtime:now>>") => Value::from(COERCED_TIMESTAMP),
                        _ => v.clone(),
                    };
                    filled.push(format!("{k} = {v}"));
                    obj.insert(k.clone(), v);
                }
            }
            sink.push(
                Diagnostic::warning(
                    "standard_v1.coerced",
                    at,
                    format!(
                        "coerced the string {} into an object with `{principal}` set to it{}",
                        Value::String(s.clone()),
                        if filled.is_empty() {
                            String::new()
                        } else {
                            format!(" and the defaults {}", filled.join(", "))
                        }
                    ),
                )
                .with_hint(format!(
                    "write the object out (`{{\"{principal}\": ...}}`) so the plan is valid without `{}`",
                    crate::Flag::Coerce
                )),
            );
            *value = Value::Object(obj);
        }
        Value::Object(fields) => {
            let Some(props) = schema.get("properties") else {
                return;
            };
            for (k, v) in fields.iter_mut() {
                if let Some(sub) = props.get(k) {
                    coerce(root, sub, v, &at.key(k), sink);
                }
            }
        }
        Value::Array(items) => {
            let Some(sub) = schema.get("items") else {
                return;
            };
            for (i, v) in items.iter_mut().enumerate() {
                coerce(root, sub, v, &at.index(i), sink);
            }
        }
        _ => {}
    }
}

/// Small accessors over a document that may not match the schema: every
/// rule runs on schema-invalid documents too, so nothing here may assume a
/// shape.
mod access {
    use serde_json::Value;

    /// `v[key]` as an array, or an empty slice.
    pub(super) fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
        v.get(key)
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// `v[key]` as a string.
    pub(super) fn str<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
        v.get(key).and_then(Value::as_str)
    }

    /// `v.scope.files[*].path`, with the index of each entry.
    pub(super) fn files(v: &Value) -> Vec<(usize, &str)> {
        v.get("scope")
            .map(|s| arr(s, "files"))
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .filter_map(|(i, f)| str(f, "path").map(|p| (i, p)))
            .collect()
    }

    /// Whether `v[key]` is an array with at least one file entry.
    pub(super) fn file_count(v: &Value) -> usize {
        v.get("scope").map_or(0, |s| arr(s, "files").len())
    }
}
/// standard_v1 in the table of formats.
pub struct StandardV1;

impl super::PlanFormat for StandardV1 {
    fn check_nouns(&self) -> [&'static str; 2] {
        ["acceptance criterion", "acceptance criteria"]
    }

    fn format(&self) -> crate::model::Format {
        crate::model::Format::StandardV1
    }

    fn detect(&self, root: Obj<'_>) -> super::Fit {
        use super::Fit;
        match root.get("plan_version") {
            Some(v) if v == "standard_v1" => Fit::Full,
            Some(v) => Fit::Partial(format!("`plan_version` is {v}, expected \"standard_v1\"")),
            None => Fit::No("no `plan_version` key".into()),
        }
    }

    fn validate(&self, doc: &Document, options: &Options, sink: &mut dyn Sink) -> Option<Plan> {
        validate(doc, doc.value(), options, sink)
    }

    fn emit(&self, plan: &Plan, sink: &mut dyn Sink) -> Value {
        emit(plan, sink)
    }

    fn schema(&self) -> Option<Value> {
        Some(schema())
    }

    fn pointer(&self, i: usize) -> [Pointer; 2] {
        let sub_plan = Pointer::root()
            .key("decomposition")
            .key("sub_plans")
            .index(i);
        [sub_plan.key("scope"), sub_plan]
    }
}
