//! JSON Schema checks with a maintained draft 2020-12 validator, turned into
//! diagnostics a person understands.

use crate::diag::{Diagnostic, Sink};
use crate::pointer::Pointer;
use crate::words::{count, plural};
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, ValidationError, Validator};
use serde_json::Value;

/// Whether a schema's `format` keywords are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formats {
    /// A value must be of its format (`date-time`, `uri`, ...).
    Assert,
    /// `format` is a note for the reader, as draft 2020-12 has it by default.
    Annotate,
}

/// A compiled schema. Compile once, check many documents.
pub struct Checker {
    validator: Validator,
    code: String,
    /// The schema: "did you mean" looks up the fields valid where an
    /// unknown one is.
    schema: Value,
}

impl Checker {
    /// Compiles `schema`; diagnostics get the code `<format>.schema.<keyword>`.
    ///
    /// Panics when the schema itself is invalid: schemas are embedded in the
    /// binary and covered by tests, so that is a bug, not user input.
    pub fn new(schema: &Value, format: &str, formats: Formats) -> Checker {
        let validator = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .should_validate_formats(formats == Formats::Assert)
            .build(schema)
            .unwrap_or_else(|e| panic!("embedded {format} schema does not compile: {e}"));
        Checker {
            validator,
            code: format!("{format}.schema"),
            schema: schema.clone(),
        }
    }

    /// Pushes one error per schema violation of `instance`.
    pub fn check(&self, instance: &Value, sink: &mut dyn Sink) -> usize {
        self.check_at(instance, &Pointer::root(), sink)
    }

    /// As [`Checker::check`], for `instance` standing at `at` in its
    /// document: the errors' pointers are under `at`. A large document is
    /// checked a part at a time, so that no `Value` of the whole is held
    /// (issue 53); see [`items_schema`].
    pub fn check_at(&self, instance: &Value, at: &Pointer, sink: &mut dyn Sink) -> usize {
        let mut n = 0;
        for error in self.validator.iter_errors(instance) {
            n += 1;
            sink.push(self.diagnostic(&error, at));
        }
        n
    }

    fn diagnostic(&self, error: &ValidationError<'_>, at: &Pointer) -> Diagnostic {
        let pointer = format!("{at}{}", error.instance_path());
        let kind = error.kind();
        let (pointer, message) = match kind {
            ValidationErrorKind::Required { property } => {
                let name = property
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| property.to_string());
                // The pointer names the missing field, as in every format's
                // own checks; it locates to the enclosing object.
                (
                    format!("{pointer}/{}", escape(&name)),
                    format!("missing required field `{name}`"),
                )
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => (
                // Point at the first unknown key so the underline lands on it.
                unexpected
                    .first()
                    .map_or(pointer.clone(), |k| format!("{pointer}/{}", escape(k))),
                format!(
                    "unknown {} {}",
                    plural(unexpected.len(), "field"),
                    ticked(unexpected)
                ),
            ),
            _ => (pointer, describe(kind, error.instance())),
        };
        let code = format!("{}.{}", self.code, keyword_code(kind.keyword()));
        let hint = self.did_you_mean(kind, error.instance(), &error.schema_path().to_string());
        let mut d = Diagnostic::error(code, pointer, message);
        if matches!(
            kind,
            ValidationErrorKind::AdditionalProperties { .. }
                | ValidationErrorKind::UnevaluatedProperties { .. }
        ) {
            d = d.at_key();
        }
        match hint {
            Some(h) => d.with_hint(h),
            None => d,
        }
    }

    /// The likely intended field name or enum value. An unknown field is
    /// matched against the fields valid where it is (the object whose
    /// keyword, at `keyword` in the schema, refused it), never against
    /// another object's (`patch` is no scope entry's field); when none is
    /// near, the hint lists them.
    fn did_you_mean(
        &self,
        kind: &ValidationErrorKind,
        instance: &Value,
        keyword: &str,
    ) -> Option<String> {
        match kind {
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                let place = keyword.rsplit_once('/').map_or("", |(place, _)| place);
                let mut names = Vec::new();
                names_at(&self.schema, self.schema.pointer(place)?, 0, &mut names);
                names.sort();
                names.dedup();
                let found: Vec<String> = unexpected
                    .iter()
                    .filter_map(|k| {
                        let near = crate::suggest::closest(k, names.iter().map(String::as_str))?;
                        Some(format!("`{near}` for `{k}`"))
                    })
                    .collect();
                match (found.as_slice(), unexpected.as_slice()) {
                    ([], _) if !names.is_empty() => {
                        Some(format!("the fields here are {}", ticked(&names)))
                    }
                    ([], _) => None,
                    ([one], [_]) => Some(format!(
                        "did you mean {}?",
                        one.split(" for ").next().unwrap_or(one)
                    )),
                    _ => Some(format!("did you mean {}?", found.join(", "))),
                }
            }
            ValidationErrorKind::Enum { options } => {
                let word = instance.as_str()?;
                let options = options.as_array()?.iter().filter_map(Value::as_str);
                crate::suggest::closest(word, options).map(|near| format!("did you mean `{near}`?"))
            }
            _ => None,
        }
    }
}

/// The schema of one item of the array at `property` of `schema`'s root,
/// as a schema of its own: the `items` subschema with the root's `$defs`
/// beside it, so that its local `$ref`s, and the fields "did you mean"
/// looks up, are the same. `None` unless that property is exactly an array
/// of such items (`type` and `items`, and words for the reader): only then
/// is the root checked with an empty array there, and each item with this
/// schema, what checking the whole would say.
pub fn items_schema(schema: &Value, property: &str) -> Option<Value> {
    let array = schema.get("properties")?.get(property)?.as_object()?;
    let annotations = ["type", "items", "description", "title"];
    if array.get("type")? != "array" || array.keys().any(|k| !annotations.contains(&k.as_str())) {
        return None;
    }
    let mut item = array.get("items")?.as_object()?.clone();
    if let Some(defs) = schema.get("$defs") {
        item.insert("$defs".into(), defs.clone());
    }
    Some(Value::Object(item))
}

/// How many `$ref`s [`names_at`] follows in a row: the schemas are ours,
/// but a cycle must not hang.
const REF_DEPTH: usize = 8;

/// Collects the fields one object of `node` may have: its `properties`,
/// and those of the subschemas it applies in place (`allOf`, `anyOf`,
/// `oneOf`, `then`, `else` and a local `$ref` into `root`).
fn names_at(root: &Value, node: &Value, depth: usize, out: &mut Vec<String>) {
    let Value::Object(map) = node else {
        return;
    };
    if let Some(Value::Object(props)) = map.get("properties") {
        out.extend(props.keys().cloned());
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(items)) = map.get(key) {
            items.iter().for_each(|v| names_at(root, v, depth, out));
        }
    }
    for key in ["then", "else"] {
        if let Some(v) = map.get(key) {
            names_at(root, v, depth, out);
        }
    }
    let local = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'));
    if let (Some(pointer), true) = (local, depth < REF_DEPTH) {
        if let Some(target) = root.pointer(pointer) {
            names_at(root, target, depth + 1, out);
        }
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn ticked(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `minLength` -> `min-length`: codes are kebab-case.
fn keyword_code(keyword: &str) -> String {
    let mut out = String::new();
    for c in keyword.chars() {
        if c.is_ascii_uppercase() {
            out.push('-');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn describe(kind: &ValidationErrorKind, instance: &Value) -> String {
    use ValidationErrorKind as K;
    match kind {
        K::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(ts) => ts
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            format!("expected {expected}, found {}", type_name(instance))
        }
        K::Enum { options } => {
            let allowed: Vec<String> = options
                .as_array()
                .map(|a| a.iter().map(|v| v.to_string()).collect())
                .unwrap_or_default();
            format!("{instance} is not one of {}", allowed.join(", "))
        }
        K::Constant { expected_value } => format!("must be {expected_value}, found {instance}"),
        K::MinLength { limit } if *limit == 1 => "must not be empty".to_string(),
        K::MinLength { limit } => format!(
            "must be at least {} long",
            count(*limit as usize, "character")
        ),
        K::MaxLength { limit } => format!(
            "must be at most {} long",
            count(*limit as usize, "character")
        ),
        K::MinItems { limit } if *limit == 1 => "must have at least one entry".to_string(),
        K::MinItems { limit } => format!("must have at least {}", count(*limit as usize, "entry")),
        K::MaxItems { limit } => format!("must have at most {}", count(*limit as usize, "entry")),
        K::Minimum { limit } => format!("{instance} is less than the minimum of {limit}"),
        K::Maximum { limit } => format!("{instance} is more than the maximum of {limit}"),
        K::Pattern { pattern } => format!("{instance} does not match the pattern `{pattern}`"),
        K::Format { format } => format!("{instance} is not a valid {format}"),
        K::UniqueItems => "entries must be unique".to_string(),
        K::OneOfNotValid { .. } | K::AnyOf { .. } => {
            format!("{instance} does not have any of the allowed shapes")
        }
        _ => format!("{instance} is not allowed here ({})", kind.keyword()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_name_the_problem() {
        let schema = json!({
            "type": "object", "additionalProperties": false, "required": ["a"],
            "properties": {"a": {"type": "string", "minLength": 1}, "b": {"enum": ["x", "y"]}}
        });
        let c = Checker::new(&schema, "t", Formats::Assert);
        let mut out = Vec::new();
        c.check(&json!({"a": "", "b": "z", "zz": 1}), &mut out);
        let got: Vec<(String, String, String)> = out
            .into_iter()
            .map(|d| (d.code, d.pointer, d.message))
            .collect();
        assert!(
            got.contains(&(
                "t.schema.min-length".into(),
                "/a".into(),
                "must not be empty".into()
            )),
            "{got:?}"
        );
        assert!(
            got.contains(&(
                "t.schema.enum".into(),
                "/b".into(),
                "\"z\" is not one of \"x\", \"y\"".into()
            )),
            "{got:?}"
        );
        assert!(
            got.contains(&(
                "t.schema.additional-properties".into(),
                "/zz".into(),
                "unknown field `zz`".into()
            )),
            "{got:?}"
        );
        let mut out = Vec::new();
        c.check(&json!({}), &mut out);
        assert_eq!(out[0].message, "missing required field `a`");
        assert_eq!(out[0].pointer, "/a");
    }

    /// A document checked a part at a time (the root with an empty array,
    /// then each item against [`items_schema`] at its place) gets the same
    /// diagnostics as checked whole: pointers, messages and hints, for
    /// errors deep inside an item, behind `$ref`s, and in the root.
    #[test]
    fn an_array_checked_an_item_at_a_time_says_what_the_whole_says() {
        let schema = json!({
            "type": "object", "additionalProperties": false, "required": ["items", "name"],
            "properties": {"name": {"type": "string"},
                           "items": {"description": "d", "type": "array", "items": {"$ref": "#/$defs/item"}}},
            "$defs": {"item": {"type": "object", "additionalProperties": false, "required": ["id"],
                "properties": {"id": {"type": "string"}, "tier": {"enum": ["cheap", "mid"]},
                               "entries": {"type": "array", "items": {"$ref": "#/$defs/entry"}}}},
                      "entry": {"type": "object", "unevaluatedProperties": false,
                "allOf": [{"properties": {"pattern": {"type": "string"}, "op": {}}}]}}
        });
        let whole = Checker::new(&schema, "t", Formats::Assert);
        let item = Checker::new(
            &items_schema(&schema, "items").unwrap(),
            "t",
            Formats::Assert,
        );
        let doc = json!({"nmae": 1, "items": [
            {"id": "a"}, {"id": 2}, "x",
            {"id": "d", "tier": "chaep", "entries": [{"pattern": "a"}, {"patern": "b", "op": 1}, {"pattern": 3}]},
            {"tier": "mid", "extra": true}
        ]});
        let mut expected = Vec::new();
        whole.check(&doc, &mut expected);
        let mut got = Vec::new();
        let mut root = doc.clone();
        root["items"] = json!([]);
        whole.check(&root, &mut got);
        for (i, value) in doc["items"].as_array().unwrap().iter().enumerate() {
            item.check_at(value, &Pointer::root().key("items").index(i), &mut got);
        }
        let key = |d: &Diagnostic| {
            (
                d.pointer.clone(),
                d.code.clone(),
                d.message.clone(),
                d.hint.clone(),
                d.at_key,
            )
        };
        let mut expected: Vec<_> = expected.iter().map(key).collect();
        let mut got: Vec<_> = got.iter().map(key).collect();
        assert!(
            expected.iter().any(|d| d.0 == "/items/3/entries/1/patern"),
            "{expected:?}"
        );
        assert!(expected.iter().any(|d| d.3.is_some()), "{expected:?}");
        // Each item's errors in the order the whole gives them.
        let item_of = |d: &(String, String, String, Option<String>, bool)| {
            let rest = d.0.strip_prefix("/items/")?;
            rest.split('/').next()?.parse::<usize>().ok()
        };
        expected.sort_by_key(item_of);
        got.sort_by_key(item_of);
        assert_eq!(got, expected);
    }

    /// Only an array of nothing but items can be checked in parts: another
    /// keyword on it (`minItems`) would see an empty array at the root.
    #[test]
    fn items_schema_is_only_for_a_plain_array() {
        let schema = json!({"properties": {
            "a": {"type": "array", "items": {"type": "string"}},
            "b": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "c": {"type": "object"}}});
        assert_eq!(items_schema(&schema, "a"), Some(json!({"type": "string"})));
        assert_eq!(items_schema(&schema, "b"), None);
        assert_eq!(items_schema(&schema, "c"), None);
        assert_eq!(items_schema(&schema, "d"), None);
    }

    /// "Did you mean" looks only at the fields valid where the unknown one
    /// is: `path` in a scope entry is not `patch` (another object's field),
    /// and with nothing near the hint lists the entry's fields.
    #[test]
    fn did_you_mean_looks_at_the_fields_valid_at_that_place() {
        let schema = json!({
            "type": "object", "additionalProperties": false,
            "properties": {"entries": {"type": "array", "items": {"$ref": "#/$defs/entry"}},
                           "patch": {"type": "string"}, "format": {"type": "string"}},
            "$defs": {"entry": {"type": "object", "unevaluatedProperties": false,
                "allOf": [{"properties": {"pattern": {}, "op": {}}}],
                "properties": {"from": {}}}}
        });
        let c = Checker::new(&schema, "t", Formats::Assert);
        let hints = |doc: Value| {
            let mut out = Vec::new();
            c.check(&doc, &mut out);
            out.into_iter().filter_map(|d| d.hint).collect::<Vec<_>>()
        };
        assert_eq!(
            hints(json!({"entries": [{"path": "a", "op": "x"}]})),
            ["the fields here are `from`, `op`, `pattern`"]
        );
        assert_eq!(
            hints(json!({"entries": [{"pattern": "a", "opp": "x"}]})),
            ["did you mean `op`?"]
        );
        assert_eq!(hints(json!({"formt": 1})), ["did you mean `format`?"]);
        assert_eq!(
            hints(json!({"formt": 1, "pach": 2})),
            ["did you mean `format` for `formt`, `patch` for `pach`?"]
        );
    }
}
