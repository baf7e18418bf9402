//! The parsed tree of a document, held compactly: a large plan's tree is
//! held through validation, and as a tree of boxed nodes with a string per
//! key and value it held six times the file (issue 53).
//!
//! Every value is a 20-byte [`Raw`]; an array's items and an object's
//! members are ranges of two flat lists, and a string or key is a place in
//! the document's text (the text is kept anyway), or in the tree's own
//! buffer when it had to be unescaped. The parsers build the tree through a
//! [`Builder`]; everything else reads it through the borrowed handles
//! [`Node`], [`NodeKind`], [`Items`], [`Members`] and [`Member`], which
//! `doc` re-exports.

use crate::diag::Diagnostic;
use crate::doc::{Span, SyntaxError};
use std::fmt;

/// Where a string stands: `at` counts bytes from the start of the text, and
/// past its end into the tree's buffer of unescaped strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Text {
    at: u32,
    len: u32,
}

/// What a [`Raw`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub(crate) enum Tag {
    #[default]
    Null,
    False,
    True,
    /// A number as written: `a`, `b` are its [`Text`].
    Number,
    /// A string, unescaped: `a`, `b` are its [`Text`].
    String,
    /// `a` is the first item in [`Tree::items`], `b` the count.
    Array,
    /// `a` is the first member in [`Tree::members`], `b` the count.
    Object,
}

/// One value and its place, in 20 bytes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Raw {
    start: u32,
    end: u32,
    a: u32,
    b: u32,
    tag: Tag,
}

/// One `key: value` of an object.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawMember {
    key: Text,
    key_start: u32,
    key_end: u32,
    value: Raw,
}

/// A parsed document's values (without its text, which it points into).
#[derive(Debug, Clone, Default)]
pub(crate) struct Tree {
    items: Vec<Raw>,
    members: Vec<RawMember>,
    /// The strings and keys that are not in the text as they read.
    owned: String,
    root: Raw,
}

impl Tree {
    /// The root of the tree over `text`, the text it was built from.
    pub(crate) fn root<'a>(&'a self, text: &'a str) -> Node<'a> {
        Node {
            src: Src { text, tree: self },
            raw: &self.root,
        }
    }

    /// A tree of nothing but a `null` root at `span`, for a document whose
    /// values are no longer needed.
    pub(crate) fn freed(span: Span) -> Tree {
        Tree {
            root: Raw::null(span),
            ..Tree::default()
        }
    }

    /// The root's place.
    pub(crate) fn root_span(&self) -> Span {
        self.root.span()
    }
}

/// The most bytes a document's text and its unescaped strings may hold
/// together: places are 32-bit.
pub(crate) const MAX_TEXT: usize = u32::MAX as usize;

/// The error of a text too large to place in 32 bits.
pub(crate) fn too_large(len: usize) -> SyntaxError {
    SyntaxError {
        diagnostic: Diagnostic::error(
            "plan.too-large",
            "",
            format!("the file is {len} bytes, too large to read: a plan with its unescaped strings can hold at most {MAX_TEXT} bytes (4 GiB)"),
        )
        .with_hint("split the plan into smaller plans"),
        span: Span::new(0, 0),
    }
}

fn at(i: usize) -> u32 {
    // The parsers are only given texts of at most MAX_TEXT bytes, and a
    // tree's lists hold fewer entries than its text has bytes.
    u32::try_from(i).unwrap_or(u32::MAX)
}

impl Raw {
    fn new(tag: Tag, span: Span, a: u32, b: u32) -> Raw {
        Raw {
            start: at(span.start),
            end: at(span.end),
            a,
            b,
            tag,
        }
    }

    /// `null` at `span`.
    pub(crate) fn null(span: Span) -> Raw {
        Raw::new(Tag::Null, span, 0, 0)
    }

    /// `true` or `false` at `span`.
    pub(crate) fn bool(value: bool, span: Span) -> Raw {
        let tag = if value { Tag::True } else { Tag::False };
        Raw::new(tag, span, 0, 0)
    }

    /// A number as written, at `span`.
    pub(crate) fn number(text: Text, span: Span) -> Raw {
        Raw::new(Tag::Number, span, text.at, text.len)
    }

    /// A string at `span`.
    pub(crate) fn string(text: Text, span: Span) -> Raw {
        Raw::new(Tag::String, span, text.at, text.len)
    }

    /// The value's place.
    pub(crate) fn span(&self) -> Span {
        Span::new(self.start as usize, self.end as usize)
    }

    fn text(&self) -> Text {
        Text {
            at: self.a,
            len: self.b,
        }
    }

    fn range(&self) -> std::ops::Range<usize> {
        self.a as usize..self.a as usize + self.b as usize
    }
}

/// Builds a [`Tree`] from the values of a text, in the order they close:
/// a collection's items and members wait on a stack until it closes, then
/// move together into the tree, so that each collection's are one range.
pub(crate) struct Builder<'t> {
    text: &'t str,
    tree: Tree,
    items: Vec<Raw>,
    members: Vec<RawMember>,
    /// A place did not fit in 32 bits.
    overflow: bool,
    /// [`MAX_TEXT`], but in tests.
    limit: usize,
}

impl<'t> Builder<'t> {
    /// A builder of the tree of `text` (of at most [`MAX_TEXT`] bytes).
    pub(crate) fn new(text: &'t str) -> Self {
        Builder {
            text,
            tree: Tree::default(),
            items: Vec::new(),
            members: Vec::new(),
            overflow: false,
            limit: MAX_TEXT,
        }
    }

    /// The bytes `start..start + len` of the text.
    pub(crate) fn in_text(start: usize, len: usize) -> Text {
        Text {
            at: at(start),
            len: at(len),
        }
    }

    /// Where `value`, a string or key read at `span`, stands: in the text
    /// when the text holds it as it reads there (or within the quotes of
    /// `span`), else a copy in the tree's buffer.
    pub(crate) fn place(&mut self, value: &str, span: Span) -> Text {
        let inner = Span::new(span.start + 1, span.end.saturating_sub(1));
        for s in [span, inner] {
            if s.start <= s.end && self.text.get(s.start..s.end) == Some(value) {
                return Builder::in_text(s.start, value.len());
            }
        }
        self.own(value)
    }

    /// A copy of `value` in the tree's buffer.
    pub(crate) fn own(&mut self, value: &str) -> Text {
        if value.is_empty() {
            return Text::default();
        }
        let start = self.text.len() + self.tree.owned.len();
        if start + value.len() > self.limit {
            self.overflow = true;
            return Text::default();
        }
        self.tree.owned.push_str(value);
        Builder::in_text(start, value.len())
    }

    /// Where the items of a collection opened now start on the stack.
    pub(crate) fn items_mark(&self) -> usize {
        self.items.len()
    }

    /// Where the members of an object opened now start on the stack.
    pub(crate) fn members_mark(&self) -> usize {
        self.members.len()
    }

    /// The next item of the array being read.
    pub(crate) fn push_item(&mut self, value: Raw) {
        self.items.push(value);
    }

    /// The next member of the object being read.
    pub(crate) fn push_member(&mut self, key: Text, key_span: Span, value: Raw) {
        self.members.push(RawMember {
            key,
            key_start: at(key_span.start),
            key_end: at(key_span.end),
            value,
        });
    }

    /// Where the last item pushed since `mark` ends.
    pub(crate) fn last_item_end(&self, mark: usize) -> Option<usize> {
        self.items[mark..].last().map(|r| r.end as usize)
    }

    /// Where the value of the last member pushed since `mark` ends.
    pub(crate) fn last_member_end(&self, mark: usize) -> Option<usize> {
        self.members[mark..].last().map(|m| m.value.end as usize)
    }

    /// The array at `span` of the items pushed since `mark`.
    pub(crate) fn array(&mut self, mark: usize, span: Span) -> Raw {
        let first = self.tree.items.len();
        let count = self.items.len() - mark;
        self.tree.items.extend(self.items.drain(mark..));
        Raw::new(Tag::Array, span, at(first), at(count))
    }

    /// The object at `span` of the members pushed since `mark`.
    pub(crate) fn object(&mut self, mark: usize, span: Span) -> Raw {
        let first = self.tree.members.len();
        let count = self.members.len() - mark;
        self.tree.members.extend(self.members.drain(mark..));
        Raw::new(Tag::Object, span, at(first), at(count))
    }

    /// The tree whose root is `root`, with no spare room (it is held
    /// through validation).
    pub(crate) fn finish(mut self, root: Raw) -> Result<Tree, SyntaxError> {
        if self.overflow {
            return Err(too_large(self.text.len()));
        }
        self.tree.root = root;
        self.tree.items.shrink_to_fit();
        self.tree.members.shrink_to_fit();
        self.tree.owned.shrink_to_fit();
        Ok(self.tree)
    }
}

/// The text and the tree a handle reads.
#[derive(Clone, Copy)]
struct Src<'a> {
    text: &'a str,
    tree: &'a Tree,
}

impl fmt::Debug for Src<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Src")
    }
}

impl<'a> Src<'a> {
    fn str(self, t: Text) -> &'a str {
        let (at, len) = (t.at as usize, t.len as usize);
        let s = match at.checked_sub(self.text.len()) {
            Some(o) if len > 0 => self.tree.owned.get(o..o + len),
            _ => self.text.get(at..at + len),
        };
        s.unwrap_or_default()
    }
}

/// A value of a parsed document with its place in the source.
#[derive(Debug, Clone, Copy)]
pub struct Node<'a> {
    src: Src<'a>,
    raw: &'a Raw,
}

/// What a [`Node`] is: the JSON data model, keeping duplicate keys and
/// the number text as written.
#[derive(Debug, Clone, Copy)]
pub enum NodeKind<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written.
    Number(&'a str),
    /// A string, unescaped.
    String(&'a str),
    /// An array.
    Array(Items<'a>),
    /// An object; members in source order, duplicates kept.
    Object(Members<'a>),
}

/// The items of an array.
#[derive(Debug, Clone, Copy)]
pub struct Items<'a> {
    src: Src<'a>,
    raws: &'a [Raw],
}

/// The members of an object, in source order, repeated keys included.
#[derive(Debug, Clone, Copy)]
pub struct Members<'a> {
    src: Src<'a>,
    raws: &'a [RawMember],
}

/// One `key: value` of an object.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    src: Src<'a>,
    raw: &'a RawMember,
}

impl<'a> Node<'a> {
    /// Where the value stands.
    pub fn span(self) -> Span {
        self.raw.span()
    }

    /// The value.
    pub fn kind(self) -> NodeKind<'a> {
        let (src, raw) = (self.src, self.raw);
        match raw.tag {
            Tag::Null => NodeKind::Null,
            Tag::False => NodeKind::Bool(false),
            Tag::True => NodeKind::Bool(true),
            Tag::Number => NodeKind::Number(src.str(raw.text())),
            Tag::String => NodeKind::String(src.str(raw.text())),
            Tag::Array => NodeKind::Array(Items {
                src,
                raws: src.tree.items.get(raw.range()).unwrap_or_default(),
            }),
            Tag::Object => NodeKind::Object(Members {
                src,
                raws: src.tree.members.get(raw.range()).unwrap_or_default(),
            }),
        }
    }
}

impl<'a> Items<'a> {
    /// How many items.
    pub fn len(self) -> usize {
        self.raws.len()
    }

    /// Whether there is none.
    pub fn is_empty(self) -> bool {
        self.raws.is_empty()
    }

    /// Item `i`.
    pub fn get(self, i: usize) -> Option<Node<'a>> {
        let src = self.src;
        self.raws.get(i).map(|raw| Node { src, raw })
    }

    /// The last item.
    pub fn last(self) -> Option<Node<'a>> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// The items in order.
    pub fn iter(self) -> impl DoubleEndedIterator<Item = Node<'a>> + ExactSizeIterator + 'a {
        let src = self.src;
        self.raws.iter().map(move |raw| Node { src, raw })
    }
}

impl<'a> Members<'a> {
    /// How many members, repeated keys counted each time.
    pub fn len(self) -> usize {
        self.raws.len()
    }

    /// Whether there is none.
    pub fn is_empty(self) -> bool {
        self.raws.is_empty()
    }

    /// Member `i`.
    pub fn get(self, i: usize) -> Option<Member<'a>> {
        let src = self.src;
        self.raws.get(i).map(|raw| Member { src, raw })
    }

    /// The members in source order.
    pub fn iter(self) -> impl DoubleEndedIterator<Item = Member<'a>> + ExactSizeIterator + 'a {
        let src = self.src;
        self.raws.iter().map(move |raw| Member { src, raw })
    }

    /// The last member whose key is `key`: the one whose value counts.
    pub fn last_of(self, key: &str) -> Option<Member<'a>> {
        self.iter().rev().find(|m| m.key() == key)
    }
}

impl<'a> Member<'a> {
    /// The key, unescaped.
    pub fn key(self) -> &'a str {
        self.src.str(self.raw.key)
    }

    /// Where the key stands.
    pub fn key_span(self) -> Span {
        Span::new(self.raw.key_start as usize, self.raw.key_end as usize)
    }

    /// The value.
    pub fn value(self) -> Node<'a> {
        Node {
            src: self.src,
            raw: &self.raw.value,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_small() {
        assert_eq!(std::mem::size_of::<Raw>(), 20);
        assert_eq!(std::mem::size_of::<RawMember>(), 36);
    }

    #[test]
    fn strings_are_places_in_the_text_unless_unescaped() {
        let text = r#"{"a": "x", "b\n": "y\u0041", "a": 1.50}"#;
        let doc = crate::Document::parse("t.json", text.to_string()).unwrap();
        assert!(
            doc.tree.owned.len() <= "b\nyA".len(),
            "{:?}",
            doc.tree.owned
        );
        let NodeKind::Object(members) = doc.root().kind() else {
            panic!("an object")
        };
        let got: Vec<(&str, String)> = members
            .iter()
            .map(|m| (m.key(), format!("{:?}", m.value().kind())))
            .collect();
        assert_eq!(got[0], ("a", "String(\"x\")".into()));
        assert_eq!(got[1], ("b\n", "String(\"yA\")".into()));
        assert_eq!(got[2], ("a", "Number(\"1.50\")".into()));
        assert_eq!(members.last_of("a").unwrap().key_span(), Span::new(29, 32));
    }

    #[test]
    fn strings_that_cannot_be_placed_make_the_document_too_large() {
        let text = "[\"\\u0041\"]";
        let mut b = Builder::new(text);
        b.limit = text.len() + 1;
        let t = b.own("A");
        assert_eq!(t.at as usize, text.len(), "the first byte after the text");
        let _ = b.own("B");
        let e = b.finish(Raw::string(t, Span::new(0, 1))).unwrap_err();
        assert_eq!(e.diagnostic.code, "plan.too-large");
        assert!(e
            .diagnostic
            .message
            .contains("at most 4294967295 bytes (4 GiB)"));
    }

    #[test]
    fn an_empty_text_places_nothing_out_of_bounds() {
        let mut b = Builder::new("");
        let t = b.own("abc");
        let s = b.place("", Span::new(0, 0));
        let root = Raw::string(t, Span::new(0, 0));
        let tree = b.finish(root).unwrap();
        let src = Src {
            text: "",
            tree: &tree,
        };
        assert_eq!(src.str(t), "abc");
        assert_eq!(src.str(s), "");
    }
}
