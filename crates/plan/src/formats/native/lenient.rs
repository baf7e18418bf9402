//! A native document read leniently, for the semantic checks of a document
//! the schema rejected: every part that reads as its IR type is kept, and
//! every part that does not is replaced by a placeholder whose place is
//! recorded, so that no check speaks about a spot the schema already named.

use crate::model::{Format, Gate, Plan, ScopeEntry, Ticket};
use crate::pointer::Pointer;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A dependency that could not be read: it names no ticket (no id holds a
/// NUL), so it can neither close a cycle nor satisfy another reference.
const UNREADABLE_DEPENDENCY: &str = "\0";

/// The plan as far as it reads; pushes onto `flagged` the pointer of every
/// part replaced by a placeholder.
pub(super) fn read(value: &Value, flagged: &mut Vec<String>) -> Plan {
    let root = Pointer::root();
    let mut plan = Plan::new(Format::Native, Vec::new());
    if let Some(base) = field(value, &root, "base", flagged) {
        plan.base = base;
    }
    plan.gates = list(value, &root, "gates", no_gate, flagged);
    plan.tickets = list(value, &root, "tickets", |_| Value::Null, flagged)
        .iter()
        .enumerate()
        .map(|(i, t)| ticket(t, &root.key("tickets").index(i), i, flagged))
        .collect();
    plan
}

/// One ticket; a ticket without a readable id is called `tickets[i]`
/// in messages about its other fields.
fn ticket(value: &Value, at: &Pointer, i: usize, flagged: &mut Vec<String>) -> Ticket {
    if !value.is_object() {
        flagged.push(at.to_string());
    }
    let id = field(value, at, "id", flagged).unwrap_or_else(|| format!("tickets[{i}]"));
    let body: String = field(value, at, "body", flagged).unwrap_or_default();
    Ticket {
        scope: list(value, at, "scope", |_| ScopeEntry::any(""), flagged),
        rails: list(value, at, "rails", |_| String::new(), flagged),
        depends_on: list(
            value,
            at,
            "depends_on",
            |_| UNREADABLE_DEPENDENCY.to_string(),
            flagged,
        ),
        gates: list(value, at, "gates", no_gate, flagged),
        ..Ticket::new(id, body)
    }
}

fn no_gate(_: &Value) -> Gate {
    Gate {
        name: String::new(),
        argv: Vec::new(),
    }
}

/// `value[key]` as a `T`; `None` when it is missing (the schema names a
/// missing required field) or does not read (flagged here).
fn field<T: DeserializeOwned>(
    value: &Value,
    at: &Pointer,
    key: &str,
    flagged: &mut Vec<String>,
) -> Option<T> {
    let v = value.get(key)?;
    let read = serde_json::from_value(v.clone()).ok();
    if read.is_none() {
        flagged.push(at.key(key).to_string());
    }
    read
}

/// `value[key]` as a list of `T`, one placeholder for each entry that does
/// not read, so that the entries keep their places (and their pointers).
/// A value that is not a list is one placeholder: present, but unreadable.
fn list<T: DeserializeOwned>(
    value: &Value,
    at: &Pointer,
    key: &str,
    placeholder: impl Fn(&Value) -> T,
    flagged: &mut Vec<String>,
) -> Vec<T> {
    let Some(v) = value.get(key) else {
        return Vec::new();
    };
    let at = at.key(key);
    let Some(items) = v.as_array() else {
        flagged.push(at.to_string());
        return vec![placeholder(v)];
    };
    items
        .iter()
        .enumerate()
        .map(|(k, item)| {
            serde_json::from_value(item.clone()).unwrap_or_else(|_| {
                flagged.push(at.index(k).to_string());
                placeholder(item)
            })
        })
        .collect()
}

/// Whether a finding at `pointer` speaks about the flagged spot `flag`:
/// the spot itself or a part of it.
pub(super) fn covers(flag: &str, pointer: &str) -> bool {
    pointer == flag
        || pointer
            .strip_prefix(flag)
            .is_some_and(|rest| rest.starts_with('/'))
}
