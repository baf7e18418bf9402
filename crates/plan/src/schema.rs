//! JSON Schema checks with a maintained draft 2020-12 validator, turned into
//! diagnostics a person understands.

use crate::diag::{Diagnostic, Sink};
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
    /// Every property name the schema declares, for "did you mean".
    names: Vec<String>,
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
        let mut names = Vec::new();
        property_names(schema, &mut names);
        names.sort();
        names.dedup();
        Checker {
            validator,
            code: format!("{format}.schema"),
            names,
        }
    }

    /// Pushes one error per schema violation of `instance`.
    pub fn check(&self, instance: &Value, sink: &mut dyn Sink) -> usize {
        let mut n = 0;
        for error in self.validator.iter_errors(instance) {
            n += 1;
            sink.push(self.diagnostic(&error));
        }
        n
    }

    fn diagnostic(&self, error: &ValidationError<'_>) -> Diagnostic {
        let pointer = error.instance_path().to_string();
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
        let hint = self.did_you_mean(kind, error.instance());
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

    /// The likely intended field name or enum value.
    fn did_you_mean(&self, kind: &ValidationErrorKind, instance: &Value) -> Option<String> {
        match kind {
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                let found: Vec<String> = unexpected
                    .iter()
                    .filter_map(|k| {
                        let near =
                            crate::suggest::closest(k, self.names.iter().map(String::as_str))?;
                        Some(format!("`{near}` for `{k}`"))
                    })
                    .collect();
                (!found.is_empty()).then(|| format!("did you mean {}?", found.join(", ")))
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

/// Collects the keys of every `properties` object in `schema`.
fn property_names(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            for v in map.values() {
                property_names(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| property_names(v, out)),
        _ => {}
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
}
