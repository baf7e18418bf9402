//! Source documents: the text of a plan file parsed into a tree that
//! remembers where every value stands, so that a diagnostic's JSON Pointer
//! can be shown as a line, a column and an underlined span.

use crate::diag::Diagnostic;
use crate::pointer::{self, Pointer};
use crate::tree::{self, Tree};
use serde_json::Value;

/// Deeper nesting than this is refused while reading (JSON and YAML alike),
/// so that the recursive walks over the tree can never exhaust the stack.
pub const MAX_DEPTH: usize = 256;

/// A byte range in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end`.
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }
}

/// The surface syntax a document was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// JSON (RFC 8259).
    Json,
    /// YAML 1.2, restricted to the JSON data model.
    Yaml,
    /// Markdown: a Spec Kit `tasks.md`, read as the tree of its task lines.
    Markdown,
}

impl Syntax {
    /// YAML for `.yaml`/`.yml`, Markdown for `.md`/`.markdown`, else JSON.
    fn of_path(path: &str) -> Syntax {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            Syntax::Yaml
        } else if lower.ends_with(".md") || lower.ends_with(".markdown") {
            Syntax::Markdown
        } else {
            Syntax::Json
        }
    }
}

pub use crate::tree::{Items, Member, Members, Node, NodeKind};

/// A parsed plan file.
#[derive(Debug, Clone)]
pub struct Document {
    /// The file name as the user gave it.
    pub path: String,
    /// The whole text.
    pub text: String,
    /// JSON or YAML.
    pub syntax: Syntax,
    /// The values, read through [`Document::root`].
    pub(crate) tree: Tree,
}

/// Why a text could not be read as a document: a diagnostic with a span.
#[derive(Debug, Clone)]
pub struct SyntaxError {
    /// The diagnostic (code `json.syntax` or `yaml.syntax` and the like).
    pub diagnostic: Diagnostic,
    /// Where the parser stopped.
    pub span: Span,
}

impl Document {
    /// Parses `text` as JSON, as YAML when `path` ends in `.yaml`/`.yml`,
    /// or as a Spec Kit tasks.md when it ends in `.md`.
    pub fn parse(path: &str, text: String) -> Result<Document, SyntaxError> {
        Document::read(path, text, None).map_err(|failed| failed.0)
    }

    /// Parses `text` in the given syntax, whatever `path` is called (standard
    /// input has no file name to go by).
    pub fn parse_as(path: &str, text: String, syntax: Syntax) -> Result<Document, SyntaxError> {
        Document::read(path, text, Some(syntax)).map_err(|failed| failed.0)
    }

    /// [`Document::parse_as`] (by the file name's extension when `syntax`
    /// is None), giving the text back with a syntax error, so that a
    /// caller that places the error needs no copy of a large text.
    pub fn read(
        path: &str,
        text: String,
        syntax: Option<Syntax>,
    ) -> Result<Document, Box<(SyntaxError, String)>> {
        let syntax = syntax.unwrap_or_else(|| Syntax::of_path(path));
        let tree = if text.len() > tree::MAX_TEXT {
            Err(tree::too_large(text.len()))
        } else {
            match syntax {
                Syntax::Json => crate::json::tree(&text),
                Syntax::Yaml => crate::yaml::tree(&text),
                Syntax::Markdown => crate::formats::speckit::read::tree(&text),
            }
        };
        match tree {
            Ok(tree) => Ok(Document {
                path: path.to_string(),
                text,
                syntax,
                tree,
            }),
            Err(e) => Err(Box::new((e, text))),
        }
    }

    /// The root value.
    pub fn root(&self) -> Node<'_> {
        self.tree.root(&self.text)
    }

    /// Frees the values, keeping the text and the root's place: what
    /// follows validation needs only the plan (a large plan's peak memory,
    /// issue 53).
    pub fn free_tree(&mut self) {
        self.tree = Tree::freed(self.tree.root_span());
    }

    /// The document as a `serde_json::Value` (for a duplicate key, the last wins).
    pub fn value(&self) -> Value {
        to_value(self.root())
    }

    /// The node at `pointer`, if there is one.
    pub fn node(&self, pointer: &str) -> Option<Node<'_>> {
        let mut node = self.root();
        for token in pointer::tokens(pointer)? {
            node = child(node, &token)?;
        }
        Some(node)
    }

    /// The span to underline for `pointer`: the value itself, or the nearest
    /// enclosing value that exists (a missing key underlines its object).
    pub fn locate(&self, pointer: &str) -> Span {
        let Some(tokens) = pointer::tokens(pointer) else {
            return self.root().span();
        };
        let mut node = self.root();
        for token in tokens {
            match child(node, &token) {
                Some(n) => node = n,
                None => return opening(node.span()),
            }
        }
        node.span()
    }

    /// The span of the key `pointer` ends in (its last occurrence, the one
    /// whose value counts), for faults of the key itself: an unknown field,
    /// a repeated key. Where there is no such key, as [`Document::locate`].
    pub fn locate_key(&self, pointer: &str) -> Span {
        let key_span = pointer::tokens(pointer).and_then(|mut tokens| {
            let key = tokens.pop()?;
            let mut node = self.root();
            for token in &tokens {
                node = child(node, token)?;
            }
            match node.kind() {
                NodeKind::Object(members) => Some(members.last_of(&key)?.key_span()),
                _ => None,
            }
        });
        key_span.unwrap_or_else(|| self.locate(pointer))
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        line_col(&self.text, offset)
    }

    /// Every key that appears more than once in its object: the pointer of
    /// the object member and the span of the repeated key.
    pub fn duplicate_keys(&self) -> Vec<(Pointer, Span)> {
        let mut out = Vec::new();
        collect_duplicates(self.root(), &Pointer::root(), &mut out);
        out
    }
}

/// The value of `token` in `node`: the last member of that key, or the
/// item of that index.
fn child<'a>(node: Node<'a>, token: &str) -> Option<Node<'a>> {
    match node.kind() {
        NodeKind::Object(members) => Some(members.last_of(token)?.value()),
        NodeKind::Array(items) => items.get(token.parse::<usize>().ok()?),
        _ => None,
    }
}

/// The first character of a span, so that a missing key underlines the
/// object's opening brace rather than the whole (possibly huge) object.
fn opening(span: Span) -> Span {
    Span::new(
        span.start,
        (span.start + 1).min(span.end.max(span.start + 1)),
    )
}

/// 1-based line and column (in characters) of a byte offset in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    LineIndex::new(text).line_col(text, offset)
}

/// The start of every line of a text, for many line/column lookups: one
/// pass over the text instead of one per lookup, which would be quadratic
/// in the diagnostics of a big plan.
pub struct LineIndex {
    starts: Vec<usize>,
    /// Columns of an ASCII text are byte distances: no counting along a
    /// (possibly megabytes long, minified) line for every lookup.
    ascii: bool,
}

impl LineIndex {
    /// Indexes `text`.
    pub fn new(text: &str) -> LineIndex {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex {
            starts,
            ascii: text.is_ascii(),
        }
    }

    /// 1-based line and column (in characters) of byte `offset` in `text`,
    /// the text this index was built from.
    pub fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        if self.ascii {
            return (line, offset - start + 1);
        }
        (line, text[start..offset].chars().count() + 1)
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn collect_duplicates(node: Node<'_>, at: &Pointer, out: &mut Vec<(Pointer, Span)>) {
    match node.kind() {
        NodeKind::Object(members) => {
            let mut seen = std::collections::HashSet::with_capacity(members.len());
            for m in members.iter() {
                if !seen.insert(m.key()) {
                    out.push((at.key(m.key()), m.key_span()));
                }
                collect_duplicates(m.value(), &at.key(m.key()), out);
            }
        }
        NodeKind::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_duplicates(item, &at.index(i), out);
            }
        }
        _ => {}
    }
}

/// Converts a node tree to a `serde_json::Value`.
pub fn to_value(node: Node<'_>) -> Value {
    match node.kind() {
        NodeKind::Null => Value::Null,
        NodeKind::Bool(b) => Value::Bool(b),
        NodeKind::Number(raw) => serde_json::from_str::<serde_json::Number>(raw)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        NodeKind::String(s) => Value::String(s.to_string()),
        NodeKind::Array(items) => Value::Array(items.iter().map(to_value).collect()),
        NodeKind::Object(members) => {
            let mut map = serde_json::Map::new();
            for m in members.iter() {
                // Remove first so a repeated key keeps its last value *and*
                // the position of that last occurrence (`shift_remove`: a
                // plain `remove` would move the map's last key into the gap).
                map.shift_remove(m.key());
                map.insert(m.key().to_string(), to_value(m.value()));
            }
            Value::Object(map)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_counts_lines_and_characters() {
        let text = "ab\né\n\nxé";
        let lines = LineIndex::new(text);
        let at = |o| lines.line_col(text, o);
        assert_eq!(at(0), (1, 1));
        assert_eq!(at(2), (1, 3), "the newline ends its own line");
        assert_eq!(at(3), (2, 1));
        assert_eq!(at(4), (2, 1), "inside `é`: its first byte");
        assert_eq!(at(5), (2, 2));
        assert_eq!(at(6), (3, 1));
        assert_eq!(at(text.len()), (4, 3));
        assert_eq!(at(99), (4, 3), "past the end: the end");
    }

    fn doc(text: &str) -> Document {
        Document::parse("t.json", text.to_string()).unwrap()
    }

    #[test]
    fn locates_values_and_missing_keys() {
        let d = doc("{\n  \"a\": [1, {\"b\": \"x\"}]\n}\n");
        let s = d.locate("/a/1/b");
        assert_eq!(&d.text[s.start..s.end], "\"x\"");
        assert_eq!(d.line_col(s.start), (2, 18));
        let missing = d.locate("/a/1/zzz");
        assert_eq!(&d.text[missing.start..missing.end], "{");
    }

    #[test]
    fn locates_keys() {
        let d = doc("{\"a\": {\"b\": 1, \"b\": [2]}, \"c\": [{\"d\": 3}]}");
        let key = |p: &str| {
            let s = d.locate_key(p);
            &d.text[s.start..s.end]
        };
        assert_eq!(key("/a/b"), "\"b\"");
        assert_eq!(
            d.locate_key("/a/b").start,
            15,
            "the last of the repeated keys"
        );
        assert_eq!(key("/c/0/d"), "\"d\"");
        assert_eq!(key("/c/0"), "{\"d\": 3}", "not a key: the value, as locate");
        assert_eq!(key("/a/zzz"), "{", "no such key: its object, as locate");
    }

    #[test]
    fn duplicate_keys_are_kept_and_reported() {
        let d = doc("{\"a\": 1, \"a\": 2}");
        assert_eq!(d.value()["a"], 2);
        let dups = d.duplicate_keys();
        assert_eq!(dups.len(), 1);
        assert_eq!(dups[0].0.as_str(), "/a");
    }
}
