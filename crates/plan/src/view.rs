//! A parsed document read as JSON values in place.
//!
//! The formats read plans through [`Val`] rather than a
//! `serde_json::Value` built from the document's tree: a copy of a large
//! plan as a `Value` held twelve times the file (issue 53). A [`Val`] is a
//! borrowed look at one [`Node`] with `serde_json::Value`'s meaning, so a
//! reader written against it says exactly what it said against a `Value`:
//! for a repeated key the last value wins, and an object's keys come in the
//! order of their last occurrence.

use crate::doc::{Items, Member, Members, Node, NodeKind};
use serde_json::{Map, Number, Value};
use std::collections::HashSet;
use std::fmt;

/// One value of a parsed document.
#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Num<'a>),
    /// A string.
    String(&'a str),
    /// An array.
    Array(Arr<'a>),
    /// An object.
    Object(Obj<'a>),
}

/// A number as written in the document, read as `serde_json` reads it.
#[derive(Debug, Clone, Copy)]
pub struct Num<'a>(&'a str);

/// An array of a parsed document.
#[derive(Debug, Clone, Copy)]
pub struct Arr<'a>(Items<'a>);

/// An object of a parsed document: its members as written, repeated keys
/// included; read through it, the last of a repeated key wins.
#[derive(Debug, Clone, Copy)]
pub struct Obj<'a>(Members<'a>);

impl<'a> Node<'a> {
    /// This node as a JSON value.
    pub fn val(self) -> Val<'a> {
        match self.kind() {
            NodeKind::Null => Val::Null,
            NodeKind::Bool(b) => Val::Bool(b),
            NodeKind::Number(raw) => Val::Number(Num(raw)),
            NodeKind::String(s) => Val::String(s),
            NodeKind::Array(items) => Val::Array(Arr(items)),
            NodeKind::Object(members) => Val::Object(Obj(members)),
        }
    }
}

impl<'a> Val<'a> {
    /// The value of `key`, when this is an object that has it.
    pub fn get(self, key: &str) -> Option<Val<'a>> {
        self.as_object()?.get(key)
    }

    /// The object, when this is one.
    pub fn as_object(self) -> Option<Obj<'a>> {
        match self {
            Val::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The array, when this is one.
    pub fn as_array(self) -> Option<Arr<'a>> {
        match self {
            Val::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            Val::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, when this is one.
    pub fn as_bool(self) -> Option<bool> {
        match self {
            Val::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The number, when this is one.
    pub fn as_number(self) -> Option<Number> {
        match self {
            Val::Number(n) => n.number(),
            _ => None,
        }
    }

    /// As `serde_json::Value::as_u64`.
    pub fn as_u64(self) -> Option<u64> {
        self.as_number()?.as_u64()
    }

    /// As `serde_json::Value::as_i64`.
    pub fn as_i64(self) -> Option<i64> {
        self.as_number()?.as_i64()
    }

    /// As `serde_json::Value::as_f64`.
    pub fn as_f64(self) -> Option<f64> {
        self.as_number()?.as_f64()
    }

    /// Whether this is `null`.
    pub fn is_null(self) -> bool {
        matches!(self, Val::Null)
    }

    /// Whether this is an object.
    pub fn is_object(self) -> bool {
        matches!(self, Val::Object(_))
    }

    /// Whether this is an array.
    pub fn is_array(self) -> bool {
        matches!(self, Val::Array(_))
    }

    /// Whether this is a string.
    pub fn is_string(self) -> bool {
        matches!(self, Val::String(_))
    }

    /// Whether this is a number.
    pub fn is_number(self) -> bool {
        matches!(self, Val::Number(_))
    }

    /// Whether this is a boolean.
    pub fn is_boolean(self) -> bool {
        matches!(self, Val::Bool(_))
    }

    /// A `serde_json::Value` of this value, for what a plan keeps as it was
    /// written (metadata) and for messages.
    pub fn to_value(self) -> Value {
        match self {
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(b),
            Val::Number(n) => n.number().map(Value::Number).unwrap_or(Value::Null),
            Val::String(s) => Value::String(s.to_string()),
            Val::Array(a) => Value::Array(a.iter().map(Val::to_value).collect()),
            Val::Object(o) => Value::Object(o.to_map()),
        }
    }
}

/// As `serde_json::Value`'s: the compact JSON text.
impl fmt::Display for Val<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_value().fmt(f)
    }
}

impl PartialEq<str> for Val<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Val<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

/// As `serde_json::Value == i64`: an integer of that value.
impl PartialEq<i64> for Val<'_> {
    fn eq(&self, other: &i64) -> bool {
        self.as_i64() == Some(*other)
    }
}

impl Num<'_> {
    /// The number, as `serde_json` reads its text (`None` for none, which
    /// the readers never give).
    pub fn number(self) -> Option<Number> {
        serde_json::from_str(self.0).ok()
    }
}

impl<'a> Arr<'a> {
    /// How many items.
    pub fn len(self) -> usize {
        self.0.len()
    }

    /// Whether there is none.
    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }

    /// Item `i`.
    pub fn get(self, i: usize) -> Option<Val<'a>> {
        self.0.get(i).map(Node::val)
    }

    /// The items in order.
    pub fn iter(self) -> impl DoubleEndedIterator<Item = Val<'a>> + ExactSizeIterator + 'a {
        self.0.iter().map(Node::val)
    }

    /// The nodes, for their places.
    pub fn nodes(self) -> Items<'a> {
        self.0
    }
}

impl<'a> Obj<'a> {
    /// The value of `key` (the last, when it is repeated).
    pub fn get(self, key: &str) -> Option<Val<'a>> {
        self.0.last_of(key).map(|m| m.value().val())
    }

    /// Whether `key` is there.
    pub fn contains_key(self, key: &str) -> bool {
        self.0.iter().any(|m| m.key() == key)
    }

    /// The keys and values, each key once, in the order of its last
    /// occurrence (as a `serde_json::Map` of the document holds them).
    pub fn iter(self) -> Distinct<'a> {
        Distinct {
            members: self.0,
            next: 0,
            shadowed: shadowed(self.0),
        }
    }

    /// The keys, as [`Obj::iter`] gives them.
    pub fn keys(self) -> impl Iterator<Item = &'a str> {
        self.iter().map(|(k, _)| k)
    }

    /// How many distinct keys.
    pub fn len(self) -> usize {
        self.iter().count()
    }

    /// Whether there is no member.
    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }

    /// A `serde_json::Map` of this object.
    pub fn to_map(self) -> Map<String, Value> {
        self.iter()
            .map(|(k, v)| (k.to_string(), v.to_value()))
            .collect()
    }
}

impl<'a> IntoIterator for Obj<'a> {
    type Item = (&'a str, Val<'a>);
    type IntoIter = Distinct<'a>;

    fn into_iter(self) -> Distinct<'a> {
        self.iter()
    }
}

/// The members of an [`Obj`], each key once.
pub struct Distinct<'a> {
    members: Members<'a>,
    next: usize,
    /// Which members a later one of the same key overrides (empty when no
    /// key repeats, the usual case).
    shadowed: Vec<bool>,
}

impl<'a> Iterator for Distinct<'a> {
    type Item = (&'a str, Val<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        while let Some(m) = self.members.get(self.next) {
            let i = self.next;
            self.next += 1;
            if !self.shadowed.get(i).copied().unwrap_or(false) {
                return Some((m.key(), m.value().val()));
            }
        }
        None
    }
}

/// For each member, whether a later member has its key; empty when none
/// has (found without allocating for small objects).
fn shadowed(members: Members<'_>) -> Vec<bool> {
    const SMALL: usize = 16;
    let repeats = if members.len() <= SMALL {
        members.iter().enumerate().any(|(i, m)| {
            let key = m.key();
            members.iter().skip(i + 1).any(|l: Member| l.key() == key)
        })
    } else {
        let mut seen = HashSet::with_capacity(members.len());
        !members.iter().all(|m| seen.insert(m.key()))
    };
    if !repeats {
        return Vec::new();
    }
    let mut later = HashSet::new();
    let mut out = vec![false; members.len()];
    for (i, m) in members.iter().enumerate().rev() {
        out[i] = !later.insert(m.key());
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::doc::Document;
    use serde_json::json;

    fn both(text: &str) {
        let doc = Document::parse("t.json", text.to_string()).unwrap();
        assert_eq!(doc.root().val().to_value(), doc.value(), "{text}");
        assert_eq!(doc.root().val().to_string(), doc.value().to_string());
    }

    #[test]
    fn reads_as_serde_json_does() {
        both(r#"{"a": 1, "b": [true, null, 1.5, -0, 1e2, "x"], "c": {"d": {}}}"#);
        both(r#"{"a": 1, "b": 2, "a": 3}"#);
        both(r#"[18446744073709551615, 18446744073709551616, -9223372036854775808]"#);
    }

    #[test]
    fn a_repeated_key_gives_its_last_value_at_its_last_place() {
        let doc = Document::parse("t.json", r#"{"a": 1, "b": 2, "a": 3}"#.to_string()).unwrap();
        let obj = doc.root().val().as_object().unwrap();
        assert_eq!(obj.get("a").unwrap().as_u64(), Some(3));
        assert_eq!(obj.keys().collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(obj.len(), 2);
        let map = doc.value();
        let keys: Vec<&String> = map.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["b", "a"], "as serde_json's map holds them");
    }

    #[test]
    fn a_large_object_with_a_repeated_key_keeps_each_key_once() {
        let mut members: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
        members.push("\"k3\": \"last\"".into());
        let text = format!("{{{}}}", members.join(", "));
        both(&text);
        let doc = Document::parse("t.json", text).unwrap();
        let obj = doc.root().val().as_object().unwrap();
        assert_eq!(obj.len(), 40);
        assert_eq!(obj.get("k3").unwrap(), "last");
        assert_eq!(obj.keys().last(), Some("k3"));
    }

    #[test]
    fn compares_as_serde_json_does() {
        let doc = Document::parse("t.json", r#"[1, 1.0, "1"]"#.to_string()).unwrap();
        let items: Vec<_> = doc.root().val().as_array().unwrap().iter().collect();
        let values = json!([1, 1.0, "1"]);
        for (v, j) in items.iter().zip(values.as_array().unwrap()) {
            assert_eq!(*v == 1, *j == 1, "{v}");
            assert_eq!(*v == "1", *j == "1", "{v}");
        }
    }
}
