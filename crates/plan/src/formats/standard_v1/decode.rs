//! What fishhawk's typed decode refuses after its schema check passed.
//!
//! `plan.Parse` decodes the document into Go structs with `encoding/json`,
//! which is stricter than the schema in three ways: an `int` field takes
//! only an integer literal within 64 bits (`30.0`, `1e2` and
//! `9223372036854775808` pass the schema's `integer`), a `time.Time` field
//! takes only RFC 3339 as Go writes it (the schema's `format: date-time` is
//! an annotation there, asserted by nobody), and a repeated key is decoded
//! once per occurrence, so every value of it, not only the last one the
//! schema sees, must fit the field.

use super::resolve;
use crate::diag::{Diagnostic, Sink};
use crate::doc::{Document, Node, NodeKind};
use crate::pointer::Pointer;
use serde_json::Value;

/// Pushes one error per value fishhawk's decoder would refuse.
pub(super) fn check(doc: &Document, schema: &Value, sink: &mut dyn Sink) {
    walk(schema, schema, doc.root(), &Pointer::root(), false, sink);
}

/// `earlier`: the node is the value of a repeated key that a later
/// occurrence overrides, which the schema never saw.
fn walk(
    root: &Value,
    schema: &Value,
    node: Node<'_>,
    at: &Pointer,
    earlier: bool,
    sink: &mut dyn Sink,
) {
    let schema = resolve(root, schema);
    if earlier {
        if let Some(want) = unfit_type(schema, node.kind()) {
            sink.push(duplicate_unfit(at, want, node.kind()));
            return;
        }
    }
    match node.kind() {
        NodeKind::Number(raw) if wants(schema, "integer") => integer(raw, at, sink),
        NodeKind::String(s)
            if schema.get("format").and_then(Value::as_str) == Some("date-time") =>
        {
            if let Some(why) = timestamp_problem(s) {
                sink.push(
                    Diagnostic::error(
                        "standard_v1.decode.timestamp",
                        at,
                        format!("{} is not a timestamp fishhawk reads: {why}", Value::from(s)),
                    )
                    .with_hint("write RFC 3339 as Go does: `2026-04-30T14:22:11Z` (upper-case `T` and `Z`, seconds 00-59, or an offset such as `+02:00`)"),
                );
            }
        }
        NodeKind::Object(members) => {
            let props = schema.get("properties");
            for (i, m) in members.iter().enumerate() {
                let Some(sub) = props.and_then(|p| p.get(m.key())) else {
                    continue;
                };
                let overridden = members.iter().skip(i + 1).any(|l| l.key() == m.key());
                walk(
                    root,
                    sub,
                    m.value(),
                    &at.key(m.key()),
                    earlier || overridden,
                    sink,
                );
            }
        }
        NodeKind::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    walk(root, sub, item, &at.index(i), earlier, sink);
                }
            }
        }
        _ => {}
    }
}

fn wants(schema: &Value, ty: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == ty),
        _ => false,
    }
}

/// The type the schema wants, when `kind` cannot be decoded into it. A
/// JSON null decodes into anything (Go leaves the field as it was).
fn unfit_type(schema: &Value, kind: NodeKind<'_>) -> Option<&'static str> {
    schema.get("type")?;
    let fits = match kind {
        NodeKind::Null => true,
        NodeKind::Bool(_) => wants(schema, "boolean"),
        NodeKind::Number(raw) => {
            wants(schema, "number") || (wants(schema, "integer") && is_go_int(raw))
        }
        NodeKind::String(_) => wants(schema, "string"),
        NodeKind::Array(_) => wants(schema, "array"),
        NodeKind::Object(_) => wants(schema, "object"),
    };
    if fits {
        return None;
    }
    ["string", "integer", "number", "boolean", "array", "object"]
        .into_iter()
        .find(|t| wants(schema, t))
}

fn duplicate_unfit(at: &Pointer, want: &str, kind: NodeKind<'_>) -> Diagnostic {
    let found = match kind {
        NodeKind::Null => "null",
        NodeKind::Bool(_) => "a boolean",
        NodeKind::Number(_) => "a number",
        NodeKind::String(_) => "a string",
        NodeKind::Array(_) => "an array",
        NodeKind::Object(_) => "an object",
    };
    Diagnostic::error(
        "standard_v1.decode.duplicate-key",
        at,
        format!("an earlier `{at}` is {found}, where fishhawk wants {}; its decoder reads every occurrence of a repeated key, so the plan is refused although the last one fits", article(want)),
    )
    .at_key()
    .with_hint("remove the earlier occurrence of the key")
}

fn article(ty: &str) -> String {
    match ty {
        "integer" | "array" | "object" => format!("an {ty}"),
        _ => format!("a {ty}"),
    }
}

/// Go's `int` (64 bits) from a JSON number: digits only, in range.
fn is_go_int(raw: &str) -> bool {
    raw.bytes().all(|b| b.is_ascii_digit() || b == b'-') && raw.parse::<i64>().is_ok()
}

fn integer(raw: &str, at: &Pointer, sink: &mut dyn Sink) {
    if is_go_int(raw) {
        return;
    }
    let (message, hint) = if raw.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        (
            format!(
                "{raw} is outside the 64-bit integers fishhawk reads ({} to {})",
                i64::MIN,
                i64::MAX
            ),
            "use a smaller number".to_string(),
        )
    } else {
        let whole = raw
            .parse::<f64>()
            .ok()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            .map_or_else(|| "a whole number".to_string(), |f| format!("`{f}`"));
        (
            format!("{raw} is written with a fraction or an exponent; fishhawk reads this field into an integer and refuses it"),
            format!("write it as {whole}, digits only"),
        )
    };
    sink.push(Diagnostic::error("standard_v1.decode.integer", at, message).with_hint(hint));
}

/// Why Go's `time.Time` would refuse `s`, if it would: RFC 3339 with an
/// upper-case `T` and `Z`, a fraction after `.` or `,`, and every field
/// in its range (no leap second, no 24:00, no 31 April).
pub(super) fn timestamp_problem(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let digits = |from: usize, n: usize| -> Option<u32> {
        let part = s.get(from..from + n)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let layout = "not in the layout 2006-01-02T15:04:05Z07:00".to_string();
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        digits(0, 4),
        digits(5, 2),
        digits(8, 2),
        digits(11, 2),
        digits(14, 2),
        digits(17, 2),
    ) else {
        return Some(layout);
    };
    let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if separators.iter().any(|&(i, c)| b.get(i) != Some(&c)) {
        return Some(layout);
    }
    match b.get(10) {
        Some(b'T') => {}
        Some(b't') => return Some("the `t` between date and time must be upper-case `T`".into()),
        _ => return Some(layout),
    }
    let mut i = 19;
    if matches!(b.get(i), Some(b'.' | b',')) {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return Some(layout);
        }
    }
    match &s[i..] {
        "Z" => {}
        "z" => return Some("the zone `z` must be upper-case `Z`".into()),
        zone => {
            let z = zone.as_bytes();
            let shaped = z.len() == 6 && matches!(z[0], b'+' | b'-') && z[3] == b':';
            let (true, Some(h), Some(m)) = (shaped, digits(i + 1, 2), digits(i + 4, 2)) else {
                return Some(layout);
            };
            if h > 24 || m > 60 {
                return Some("the zone offset is out of range".into());
            }
        }
    }
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => return Some("the month is out of range".into()),
    };
    let out_of_range = [
        (day == 0 || day > days, "the day"),
        (hour > 23, "the hour"),
        (minute > 59, "the minute"),
        (second > 59, "the second (a leap second is refused)"),
    ];
    out_of_range
        .into_iter()
        .find(|(bad, _)| *bad)
        .map(|(_, what)| format!("{what} is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_as_go_reads_them() {
        // Each verdict is Go's `time.Time` JSON decode (go1.27), run 2026-12-01.
        for ok in [
            "2026-04-30T14:22:11Z",
            "2026-04-30T14:22:11.123456789Z",
            "2026-04-30T14:22:11,5Z",
            "2024-02-29T00:00:00Z",
            "2026-04-30T14:22:11+24:00",
            "2026-04-30T14:22:11+02:60",
            "2026-04-30T14:22:11-00:00",
            "0000-01-01T00:00:00Z",
        ] {
            assert_eq!(timestamp_problem(ok), None, "{ok}");
        }
        for bad in [
            "2026-04-30t14:22:11Z",
            "2026-04-30T14:22:11z",
            "2026-06-30T23:59:60Z",
            "2026-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-04-30T24:00:00Z",
            "2026-04-30T14:60:11Z",
            "2026-13-01T00:00:00Z",
            "2026-04-30T14:22:11+25:00",
            "2026-04-30T14:22:11+0200",
            "2026-04-30 14:22:11Z",
            "2026-4-30T14:22:11Z",
            "2026-04-30T14:22:11.Z",
            "2026-04-30T14:22:11.5",
            "2026-04-30T14:22:11Z ",
            "yesterday",
            "２026-04-30T14:22:11Z",
            "",
        ] {
            assert!(timestamp_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn go_ints() {
        assert!(is_go_int("0") && is_go_int("-3") && is_go_int("9223372036854775807"));
        assert!(!is_go_int("9223372036854775808") && !is_go_int("30.0") && !is_go_int("1e2"));
    }
}
