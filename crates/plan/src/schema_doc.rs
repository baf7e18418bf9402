//! Markdown generated from a JSON Schema: the field reference of a format,
//! and the shape delta between two versions of a schema.
//!
//! Pure functions of the schema values, so the reference can never drift
//! from the schema the binary embeds.

use serde_json::Value;
use std::collections::BTreeMap;

/// One object of the schema rendered as one table.
struct Section<'a> {
    /// `top-level`, a definition name, or the path of an inline object.
    name: String,
    /// The object's own description (definitions and inline objects).
    description: Option<&'a str>,
    schema: &'a Value,
}

/// The Markdown field reference of `schema`: a table of the top-level
/// fields, then one per definition, then one per inline object.
pub fn reference(schema: &Value, name: &str) -> String {
    let mut out = format!("## Field reference — {name}\n\n");
    out.push_str(&format!("### {name} — top-level fields\n\n"));
    out.push_str(&table(schema));
    let defs = definitions(schema);
    if !defs.is_empty() {
        out.push_str(&format!("\n### {name} — definitions\n"));
        for section in &defs {
            out.push_str(&render_section(section));
        }
    }
    let inline = inline_objects(schema);
    if !inline.is_empty() {
        out.push_str(&format!("\n### {name} — inline objects\n"));
        for section in &inline {
            out.push_str(&render_section(section));
        }
    }
    out
}

fn render_section(section: &Section<'_>) -> String {
    let mut out = format!("\n#### {}\n\n", section.name);
    if let Some(d) = section.description {
        out.push_str(&one_line(d));
        out.push_str("\n\n");
    }
    out.push_str(&table(section.schema));
    out
}

fn definitions(schema: &Value) -> Vec<Section<'_>> {
    schema
        .get("$defs")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, def)| Section {
            name: name.clone(),
            description: def.get("description").and_then(Value::as_str),
            schema: def,
        })
        .collect()
}

/// Objects declared in place (`decomposition`), not through a definition,
/// named by their path (`decomposition`, `scope.files`).
fn inline_objects(schema: &Value) -> Vec<Section<'_>> {
    let mut out = Vec::new();
    let mut owners: Vec<(String, &Value)> = vec![(String::new(), schema)];
    owners.extend(definitions(schema).into_iter().map(|s| (s.name, s.schema)));
    for (owner, obj) in owners {
        for (field, prop) in properties(obj) {
            let target = prop.get("items").unwrap_or(prop);
            if target.get("properties").is_some() {
                let name = if owner.is_empty() {
                    field.clone()
                } else {
                    format!("{owner}.{field}")
                };
                out.push(Section {
                    name,
                    description: None,
                    schema: target,
                });
            }
        }
    }
    out
}

fn properties(obj: &Value) -> Vec<(&String, &Value)> {
    obj.get("properties")
        .and_then(Value::as_object)
        .map(|p| p.iter().collect())
        .unwrap_or_default()
}

fn required(obj: &Value) -> Vec<&str> {
    obj.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Required fields first, then optional ones, each in declaration order.
fn ordered_fields(obj: &Value) -> Vec<(&String, &Value, bool)> {
    let req = required(obj);
    let props = properties(obj);
    let (mut first, rest): (Vec<_>, Vec<_>) = props
        .into_iter()
        .map(|(k, v)| (k, v, req.contains(&k.as_str())))
        .partition(|(_, _, r)| *r);
    first.extend(rest);
    first
}

/// The variants of a `oneOf`.
fn variants(obj: &Value) -> &[Value] {
    obj.get("oneOf")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// A definition that is one of several constant strings (`Format`): a list
/// of them, not an empty table.
fn constants(obj: &Value) -> Option<String> {
    let lines: Option<Vec<String>> = variants(obj)
        .iter()
        .map(|v| {
            let c = v.get("const")?.as_str()?;
            let d = v.get("description").and_then(Value::as_str).unwrap_or("");
            Some(format!("- `{c}`: {}\n", one_line(d)))
        })
        .collect();
    lines
        .filter(|l| !l.is_empty())
        .map(|l| format!("One of:\n\n{}", l.concat()))
}

/// Rows for the fields of a tagged union (a scope entry's `op`, a
/// mutation's `form`): the tag, required, with its values; then each
/// variant's own fields, required when the tag has that variant's value.
fn variant_rows(obj: &Value) -> String {
    let vs = variants(obj);
    let tag = vs.first().and_then(|v| {
        properties(v).into_iter().map(|(k, _)| k).find(|k| {
            vs.iter()
                .all(|v| v["properties"][k.as_str()].get("const").is_some())
        })
    });
    let Some(tag) = tag else { return String::new() };
    let values: Vec<String> = vs
        .iter()
        .map(|v| format!("`{}`", plain(&v["properties"][tag.as_str()]["const"])))
        .collect();
    let meanings: Vec<String> = vs
        .iter()
        .map(|v| {
            let d = v.get("description").and_then(Value::as_str).unwrap_or("");
            let d = one_line(d);
            format!(
                "`{}`: {}",
                plain(&v["properties"][tag.as_str()]["const"]),
                d.trim_end_matches('.')
            )
        })
        .collect();
    let mut out = format!(
        "| {tag} | string | required | one of: {} | {} |\n",
        values.join(", "),
        cell(&meanings.join("; "))
    );
    for v in vs {
        let value = plain(&v["properties"][tag.as_str()]["const"]);
        for (name, prop, req) in ordered_fields(v).into_iter().filter(|(n, _, _)| *n != tag) {
            let when = if req { "required" } else { "optional" };
            out.push_str(&format!(
                "| {name} | {} | {when} when `{tag}` is `{value}` | {} | {} |\n",
                type_name(prop),
                cell(&constraints(prop)),
                cell(&one_line(
                    prop.get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                )),
            ));
        }
    }
    out
}

fn table(obj: &Value) -> String {
    if properties(obj).is_empty() {
        if let Some(list) = constants(obj) {
            return list;
        }
    }
    let mut out = String::from(
        "| Field | Type | Required | Constraints | Description |\n|---|---|---|---|---|\n",
    );
    let rows = out.len();
    out.push_str(&table_rows(obj));
    out.push_str(&variant_rows(obj));
    if out.len() == rows {
        return "No fields.\n".to_string();
    }
    out
}

fn table_rows(obj: &Value) -> String {
    let mut out = String::new();
    for (name, prop, req) in ordered_fields(obj) {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            name,
            type_name(prop),
            if req { "required" } else { "optional" },
            cell(&constraints(prop)),
            cell(&one_line(
                prop.get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            )),
        ));
    }
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// `string`, `array of approach-step`, a definition name, `object`.
pub fn type_name(prop: &Value) -> String {
    if let Some(r) = prop.get("$ref").and_then(Value::as_str) {
        return r.rsplit('/').next().unwrap_or(r).to_string();
    }
    match prop.get("type") {
        Some(Value::String(t)) if t == "array" => match prop.get("items") {
            Some(items) => format!("array of {}", type_name(items)),
            None => "array".into(),
        },
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => match prop.get("enum").or_else(|| prop.get("const")) {
            Some(Value::Array(vs)) => vs.first().map_or("any".into(), json_type),
            Some(v) => json_type(v),
            None if prop.get("properties").is_some() => "object".into(),
            None => "any".into(),
        },
    }
}

fn json_type(v: &Value) -> String {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
    .into()
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `enum: low, medium, high`, `minLength: 1; maxLength: 200`, `min: 1`.
pub fn constraints(prop: &Value) -> String {
    const KEYS: [(&str, &str); 13] = [
        ("const", "const"),
        ("enum", "enum"),
        ("format", "format"),
        ("pattern", "pattern"),
        ("minLength", "minLength"),
        ("maxLength", "maxLength"),
        ("minimum", "min"),
        ("maximum", "max"),
        ("exclusiveMinimum", "exclusiveMin"),
        ("exclusiveMaximum", "exclusiveMax"),
        ("minItems", "minItems"),
        ("maxItems", "maxItems"),
        ("default", "default"),
    ];
    let mut parts = Vec::new();
    for (key, label) in KEYS {
        match prop.get(key) {
            Some(Value::Array(vs)) if key == "enum" => parts.push(format!(
                "{label}: {}",
                vs.iter().map(plain).collect::<Vec<_>>().join(", ")
            )),
            Some(v) => parts.push(format!("{label}: {}", plain(v))),
            None => {}
        }
    }
    if prop.get("uniqueItems") == Some(&Value::Bool(true)) {
        parts.push("uniqueItems".into());
    }
    parts.join("; ")
}

/// What `diff` compares of one field.
#[derive(PartialEq)]
struct Shape {
    ty: String,
    required: bool,
    members: Vec<String>,
    default: Option<String>,
}

/// section -> field -> shape, for every table of the reference.
fn shapes(schema: &Value) -> BTreeMap<String, Vec<(String, Shape)>> {
    let mut out = BTreeMap::new();
    let mut sections = vec![Section {
        name: "top-level".into(),
        description: None,
        schema,
    }];
    sections.extend(definitions(schema));
    sections.extend(inline_objects(schema));
    for s in sections {
        let fields = ordered_fields(s.schema)
            .into_iter()
            .map(|(name, prop, required)| {
                let members = prop
                    .get("enum")
                    .and_then(Value::as_array)
                    .map(|vs| vs.iter().map(plain).collect())
                    .unwrap_or_default();
                let shape = Shape {
                    ty: type_name(prop),
                    required,
                    members,
                    default: prop.get("default").map(plain),
                };
                (name.clone(), shape)
            })
            .collect();
        out.insert(s.name, fields);
    }
    out
}

fn req_word(r: bool) -> &'static str {
    if r {
        "required"
    } else {
        "optional"
    }
}

/// What changed in one field's shape, as table cells.
fn changes(old: &Shape, new: &Shape) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    if old.ty != new.ty {
        out.push(("type".into(), old.ty.clone(), new.ty.clone()));
    }
    if old.required != new.required {
        out.push((
            "requiredness".into(),
            req_word(old.required).into(),
            req_word(new.required).into(),
        ));
    }
    let added: Vec<&String> = new
        .members
        .iter()
        .filter(|m| !old.members.contains(m))
        .collect();
    let removed: Vec<&String> = old
        .members
        .iter()
        .filter(|m| !new.members.contains(m))
        .collect();
    if !added.is_empty() || !removed.is_empty() {
        let list = |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
        out.push(("enum members".into(), list(&removed), list(&added)));
    }
    if old.default != new.default {
        let show = |d: &Option<String>| d.clone().unwrap_or_else(|| "(none)".into());
        out.push(("default".into(), show(&old.default), show(&new.default)));
    }
    out
}

/// Markdown delta tables between two versions of a schema, comparing shape
/// only (type, requiredness, enum members, default): description-only
/// edits do not show.
pub fn diff(old: &Value, new: &Value) -> String {
    let (old, new) = (shapes(old), shapes(new));
    let mut added_sections = Vec::new();
    let mut removed_sections = Vec::new();
    let mut added = Vec::new();
    let mut removed = Vec::new();
    let mut changed = Vec::new();
    let empty = Vec::new();
    for (section, fields) in &new {
        let before = old.get(section).unwrap_or_else(|| {
            added_sections.push(section.clone());
            &empty
        });
        for (name, shape) in fields {
            match before.iter().find(|(n, _)| n == name) {
                None => added.push(format!(
                    "| {section} | {name} | {} | {} |",
                    shape.ty,
                    req_word(shape.required)
                )),
                Some((_, was)) => {
                    for (what, from, to) in changes(was, shape) {
                        changed.push(format!("| {section} | {name} | {what} | {from} | {to} |"));
                    }
                }
            }
        }
    }
    for (section, fields) in &old {
        let after = new.get(section).unwrap_or_else(|| {
            removed_sections.push(section.clone());
            &empty
        });
        for (name, shape) in fields {
            if !after.iter().any(|(n, _)| n == name) {
                removed.push(format!(
                    "| {section} | {name} | {} | {} |",
                    shape.ty,
                    req_word(shape.required)
                ));
            }
        }
    }
    render_diff(added_sections, removed_sections, added, removed, changed)
}

fn render_diff(
    added_sections: Vec<String>,
    removed_sections: Vec<String>,
    added: Vec<String>,
    removed: Vec<String>,
    changed: Vec<String>,
) -> String {
    let mut out = String::from("## Schema delta\n");
    if added_sections.is_empty()
        && removed_sections.is_empty()
        && added.is_empty()
        && removed.is_empty()
        && changed.is_empty()
    {
        out.push_str("\nNo shape changes (type, requiredness, enum members, default).\n");
        return out;
    }
    let mut block = |title: &str, header: &str, rows: Vec<String>| {
        if !rows.is_empty() {
            out.push_str(&format!("\n### {title}\n\n{header}\n"));
            for r in rows {
                out.push_str(&r);
                out.push('\n');
            }
        }
    };
    let defs = |v: Vec<String>| v.into_iter().map(|s| format!("| {s} |")).collect();
    block(
        "Added definitions",
        "| Definition |\n|---|",
        defs(added_sections),
    );
    block(
        "Removed definitions",
        "| Definition |\n|---|",
        defs(removed_sections),
    );
    let fields = "| Section | Field | Type | Required |\n|---|---|---|---|";
    block("Added fields", fields, added);
    block("Removed fields", fields, removed);
    block(
        "Changed fields",
        "| Section | Field | Change | Old | New |\n|---|---|---|---|---|",
        changed,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_and_constraints() {
        assert_eq!(
            type_name(&json!({"type": "array", "items": {"$ref": "#/$defs/approach-step"}})),
            "array of approach-step"
        );
        assert_eq!(
            constraints(&json!({"type": "string", "minLength": 1, "maxLength": 200})),
            "minLength: 1; maxLength: 200"
        );
        assert_eq!(
            constraints(&json!({"enum": ["low", "medium", "high"]})),
            "enum: low, medium, high"
        );
        assert_eq!(
            constraints(&json!({"type": "integer", "minimum": 1})),
            "min: 1"
        );
    }

    #[test]
    fn diff_ignores_descriptions_and_sees_shape() {
        let old = json!({"properties": {"a": {"type": "string", "description": "x"}, "b": {"enum": ["x", "y"]}}, "required": ["a"]});
        let same = json!({"properties": {"a": {"type": "string", "description": "changed"}, "b": {"enum": ["x", "y"]}}, "required": ["a"]});
        assert!(diff(&old, &same).contains("No shape changes"));
        let new = json!({"properties": {"a": {"type": "integer"}, "b": {"enum": ["x", "z"], "default": "x"}}});
        let d = diff(&old, &new);
        assert!(
            d.contains("| top-level | a | type | string | integer |"),
            "{d}"
        );
        assert!(
            d.contains("| top-level | a | requiredness | required | optional |"),
            "{d}"
        );
        assert!(
            d.contains("| top-level | b | enum members | y | z |"),
            "{d}"
        );
        assert!(
            d.contains("| top-level | b | default | (none) | x |"),
            "{d}"
        );
    }
}
