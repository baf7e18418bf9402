//! Strict YAML input: YAML 1.2, restricted to the JSON data model.
//!
//! A plan in YAML must mean exactly what the same plan in JSON means, so
//! everything that YAML can say and JSON cannot is rejected: anchors,
//! aliases, tags, merge keys, several documents, directives other than
//! `%YAML 1.2`, empty values, `.nan`/`.inf`, numbers JSON cannot write
//! (hex, octal, `+1`, `01`, `1_000`, `.5`), and keys that are not strings.
//! Plain scalars resolve as codeboost's reader resolves them: `null`,
//! `true`, `false` and JSON numbers; the core schema's other spellings of
//! null and the booleans (`~`, `Null`, `TRUE`, ...) are refused, not read as
//! text; everything else, and every quoted or block scalar, is a string.
//!
//! The tree keeps byte spans for values and keys, and duplicate keys, like
//! the JSON reader, so diagnostics carry line and column for YAML too.

use crate::diag::Diagnostic;
use crate::doc::{Document, Span, Syntax, SyntaxError, MAX_DEPTH};
use crate::tree::{Builder, Raw, Text, Tree};
use regex::Regex;
use saphyr_parser::{Event, Parser, ScalarStyle, ScanError};
use std::sync::LazyLock;

/// A JSON number (RFC 8259).
static JSON_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$").expect("valid regex")
});

/// What the YAML 1.2 core schema (or YAML 1.1) would read as a number but
/// JSON cannot write: hex, octal, binary, a leading `+`, leading zeros,
/// digit separators, a bare or trailing decimal point.
static OTHER_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^([-+]?0[xX][0-9a-fA-F_]+|[-+]?0[oO][0-7_]+|[-+]?0[bB][01_]+|[-+]?(\.[0-9_]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?)$",
    )
    .expect("valid regex")
});

/// `.nan`, `.inf` and `-.inf` in the spellings YAML allows.
static NON_FINITE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\.(nan|NaN|NAN)|[-+]?\.(inf|Inf|INF))$").expect("valid regex"));

/// Parses `text` as strict YAML.
pub fn parse(path: &str, text: String) -> Result<Document, SyntaxError> {
    Document::parse_as(path, text, Syntax::Yaml)
}

/// The tree of `text`, read as strict YAML.
pub(crate) fn tree(text: &str) -> Result<Tree, SyntaxError> {
    Reader::new(text).read()
}

/// A collection being read: where it starts, and where its items or
/// members start on the builder's stack.
enum Frame {
    Seq {
        start: usize,
        mark: usize,
    },
    Map {
        start: usize,
        mark: usize,
        key: Option<(Text, Span)>,
    },
}

struct Reader<'a> {
    text: &'a str,
    /// Byte offset of every character, plus the end: saphyr's markers count
    /// characters, spans count bytes.
    offsets: Vec<usize>,
    stack: Vec<Frame>,
    tree: Builder<'a>,
    root: Option<Raw>,
    documents: usize,
}

fn error(code: &str, span: Span, message: String, hint: &str) -> SyntaxError {
    SyntaxError {
        diagnostic: Diagnostic::error(code, "", message).with_hint(hint),
        span,
    }
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        let mut offsets: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        offsets.push(text.len());
        Reader {
            text,
            offsets,
            stack: Vec::new(),
            tree: Builder::new(text),
            root: None,
            documents: 0,
        }
    }

    fn byte(&self, char_index: usize) -> usize {
        self.offsets
            .get(char_index)
            .copied()
            .unwrap_or(self.text.len())
    }

    fn span(&self, s: saphyr_parser::Span) -> Span {
        Span::new(self.byte(s.start.index()), self.byte(s.end.index()))
    }

    /// A span of at least one character at `at`, for underlining.
    fn point(&self, at: usize) -> Span {
        let end = self.text[at..]
            .chars()
            .next()
            .map_or(at, |c| at + c.len_utf8());
        Span::new(at, end)
    }

    fn read(mut self) -> Result<Tree, SyntaxError> {
        let mut parser = Parser::new_from_str(self.text);
        loop {
            let (event, span) = match parser.next_event() {
                None => break,
                Some(Ok(e)) => e,
                Some(Err(e)) => return Err(self.scan_error(&e)),
            };
            let span = self.span(span);
            if self.event(event, span)? {
                break;
            }
        }
        match self.root {
            Some(root) => self.tree.finish(root),
            None => Err(error(
                "yaml.syntax",
                Span::new(0, self.text.len().min(1)),
                "invalid YAML: the file holds no document".into(),
                "write the plan as one YAML mapping",
            )),
        }
    }

    fn scan_error(&self, e: &ScanError) -> SyntaxError {
        let at = self.byte(e.marker().index());
        // The scanner stops deep flow nesting (`[[[...`) itself, before
        // `open` sees it: the same finding as `yaml.depth`, so the same code.
        if e.info().contains("recursion limit") {
            return error(
                "yaml.depth",
                self.point(at),
                format!("the document is nested more than {MAX_DEPTH} levels deep"),
                "plans are shallow; flatten the structure",
            );
        }
        error(
            "yaml.syntax",
            self.point(at),
            format!("invalid YAML: {}", e.info()),
            "check the indentation and the quoting around this place",
        )
    }

    /// Handles one event; `true` at the end of the stream.
    fn event(&mut self, event: Event<'_>, span: Span) -> Result<bool, SyntaxError> {
        match event {
            Event::StreamEnd => return Ok(true),
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => {}
            Event::DocumentStart(explicit) => self.document_start(explicit, span)?,
            Event::Alias(_) => {
                return Err(error(
                    "yaml.alias",
                    span,
                    "YAML aliases (`*name`) are not allowed in a plan".into(),
                    "write the value out in full",
                ))
            }
            Event::Scalar(value, style, anchor, tag) => {
                self.props(anchor, tag.is_some(), span)?;
                self.scalar(&value, style, span)?;
            }
            Event::SequenceStart(anchor, tag) => {
                self.props(anchor, tag.is_some(), span)?;
                self.open(false, span)?;
            }
            Event::MappingStart(anchor, tag) => {
                self.props(anchor, tag.is_some(), span)?;
                self.open(true, span)?;
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(span)?,
        }
        Ok(false)
    }

    fn document_start(&mut self, explicit: bool, span: Span) -> Result<(), SyntaxError> {
        self.documents += 1;
        if self.documents > 1 {
            return Err(error(
                "yaml.multiple-documents",
                span,
                "the file holds more than one YAML document".into(),
                "a plan file holds exactly one document: remove the second `---` and what follows, or split the file",
            ));
        }
        if explicit {
            self.directives(span.start)?;
        }
        Ok(())
    }

    /// Directives may only stand before the first `---`; only `%YAML 1.2`
    /// is accepted, since YAML 1.1 reads `yes`, `0777` and `1_000` otherwise.
    fn directives(&self, end: usize) -> Result<(), SyntaxError> {
        let mut at = 0;
        for line in self.text[..end].split_inclusive('\n') {
            let trimmed = line.trim_end();
            if trimmed.starts_with('%') && !is_yaml_12(trimmed) && !is_tag_directive(trimmed) {
                let len = trimmed.len();
                return Err(error(
                    "yaml.directive",
                    Span::new(at, at + len),
                    format!("YAML directive `{trimmed}` is not allowed; plans are YAML 1.2"),
                    "remove the directive (`%YAML 1.2` is the only one accepted)",
                ));
            }
            at += line.len();
        }
        Ok(())
    }

    fn props(&self, anchor: usize, tagged: bool, span: Span) -> Result<(), SyntaxError> {
        if anchor != 0 {
            return Err(error(
                "yaml.anchor",
                span,
                "YAML anchors (`&name`) are not allowed in a plan".into(),
                "remove the anchor; write repeated values out in full",
            ));
        }
        if tagged {
            return Err(error(
                "yaml.tag",
                span,
                "YAML tags (`!name`, `!!str`) are not allowed in a plan".into(),
                "remove the tag; quote the value if it must be a string",
            ));
        }
        Ok(())
    }

    fn scalar(&mut self, value: &str, style: ScalarStyle, span: Span) -> Result<(), SyntaxError> {
        let plain = style == ScalarStyle::Plain;
        if let Some(Frame::Map {
            key: key @ None, ..
        }) = self.stack.last_mut()
        {
            if plain && value == "<<" {
                return Err(error(
                    "yaml.merge-key",
                    span,
                    "YAML merge keys (`<<`) are not allowed in a plan".into(),
                    "write the merged keys out in full",
                ));
            }
            let is_string = !plain || matches!(resolve(value), Ok(Scalar::String));
            if !is_string {
                let shown = if value.is_empty() {
                    "an empty key"
                } else {
                    value
                };
                return Err(error(
                    "yaml.non-string-key",
                    span,
                    format!("keys must be strings; `{shown}` is not one"),
                    "quote the key",
                ));
            }
            *key = Some((self.tree.place(value, span), span));
            return Ok(());
        }
        let scalar = if plain {
            resolve(value).map_err(|(code, message, hint)| error(code, span, message, hint))?
        } else {
            Scalar::String
        };
        let node = match scalar {
            Scalar::Null => Raw::null(span),
            Scalar::Bool(b) => Raw::bool(b, span),
            Scalar::Number => Raw::number(self.tree.place(value, span), span),
            Scalar::String => Raw::string(self.tree.place(value, span), span),
        };
        self.push(node)
    }

    fn open(&mut self, mapping: bool, span: Span) -> Result<(), SyntaxError> {
        if let Some(Frame::Map { key: None, .. }) = self.stack.last() {
            return Err(error(
                "yaml.non-string-key",
                span,
                "keys must be strings, not lists or mappings".into(),
                "use a plain string as the key",
            ));
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err(error(
                "yaml.depth",
                span,
                format!("the document is nested more than {MAX_DEPTH} levels deep"),
                "plans are shallow; flatten the structure",
            ));
        }
        let start = span.start;
        self.stack.push(if mapping {
            Frame::Map {
                start,
                mark: self.tree.members_mark(),
                key: None,
            }
        } else {
            Frame::Seq {
                start,
                mark: self.tree.items_mark(),
            }
        });
        Ok(())
    }

    fn close(&mut self, span: Span) -> Result<(), SyntaxError> {
        let frame = self.stack.pop().expect("the parser balances collections");
        // A flow collection ends at its bracket; a block one at its last value.
        let end_of = |last: Option<usize>, start: usize| {
            if span.end > span.start {
                span.end
            } else {
                last.unwrap_or(start)
            }
        };
        let node = match frame {
            Frame::Seq { start, mark } => {
                let end = end_of(self.tree.last_item_end(mark), start);
                self.tree.array(mark, Span::new(start, end))
            }
            Frame::Map { start, mark, .. } => {
                let end = end_of(self.tree.last_member_end(mark), start);
                self.tree.object(mark, Span::new(start, end))
            }
        };
        self.push(node)
    }

    fn push(&mut self, node: Raw) -> Result<(), SyntaxError> {
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { .. }) => self.tree.push_item(node),
            Some(Frame::Map { key, .. }) => {
                let (key, key_span) = key.take().expect("a value follows its key");
                self.tree.push_member(key, key_span, node);
            }
        }
        Ok(())
    }
}

fn is_yaml_12(directive: &str) -> bool {
    let words: Vec<&str> = directive.split_whitespace().collect();
    words.len() >= 2
        && words[0] == "%YAML"
        && words[1] == "1.2"
        && words[2..].iter().all(|w| w.starts_with('#'))
}

fn is_tag_directive(directive: &str) -> bool {
    directive.split_whitespace().next() == Some("%TAG")
}

type Rejection = (&'static str, String, &'static str);

/// What a plain scalar is; a number and a string are its text.
enum Scalar {
    Null,
    Bool(bool),
    Number,
    String,
}

/// The value of a plain scalar under the YAML 1.2 core schema, restricted
/// to what JSON can write.
fn resolve(raw: &str) -> Result<Scalar, Rejection> {
    Ok(match raw {
        "" => {
            return Err((
                "yaml.empty-value",
                "empty value; write `null` or `\"\"` if that is meant".into(),
                "give the key a value",
            ))
        }
        "null" => Scalar::Null,
        "true" => Scalar::Bool(true),
        "false" => Scalar::Bool(false),
        // codeboost's reader refuses the other core-schema spellings rather
        // than read them as text: so must we, or the plan means two things.
        "Null" | "NULL" | "~" | "True" | "TRUE" | "False" | "FALSE" => {
            let json = match raw {
                "True" | "TRUE" => "true",
                "False" | "FALSE" => "false",
                _ => "null",
            };
            return Err((
                "yaml.literal-spelling",
                format!("`{raw}` is YAML's `{json}` in a spelling JSON does not have; plans take only `null`, `true` and `false`"),
                "write it in lower case as JSON does, or quote it if it is text",
            ));
        }
        _ if JSON_NUMBER.is_match(raw) => Scalar::Number,
        _ if NON_FINITE.is_match(raw) => {
            return Err((
                "yaml.non-finite",
                format!("`{raw}` is not a finite number; plans only hold JSON numbers"),
                "use a number, or quote the value if it is text",
            ))
        }
        _ if OTHER_NUMBER.is_match(raw) => {
            return Err((
                "yaml.number-form",
                format!("`{raw}` is a number in a form JSON cannot write (hex, octal, `+`, leading zeros, `_` or a bare `.`)"),
                "write the number in plain decimal (`1000`, `0.5`), or quote it if it is text",
            ))
        }
        _ => Scalar::String,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(text: &str) -> Document {
        parse("t.yaml", text.to_string()).unwrap_or_else(|e| panic!("{text:?}: {:?}", e.diagnostic))
    }

    fn code(text: &str) -> String {
        parse("t.yaml", text.to_string())
            .map(|d| panic!("{text:?} was accepted: {:?}", d.value()))
            .unwrap_err()
            .diagnostic
            .code
    }

    #[test]
    fn reads_the_json_data_model() {
        let d = doc("a: \"x y\"\nb:\n  - 1\n  - 'q'\nc: |\n  lit\nd: [1, {e: f}]\nh: null\ni: true\nj: -2.5e3\nk: 0.5\nl: yes\nm: '01'\nn: '~'\n");
        assert_eq!(
            d.value(),
            json!({"a": "x y", "b": [1, "q"], "c": "lit\n", "d": [1, {"e": "f"}],
                   "h": null, "i": true, "j": -2.5e3, "k": 0.5, "l": "yes", "m": "01", "n": "~"})
        );
        assert_eq!(d.syntax, Syntax::Yaml);
    }

    #[test]
    fn spans_are_bytes_and_locate_lines() {
        let d = doc("é: ü\nlist:\n  - name: \"ñ\"\n");
        let s = d.locate("/list/0/name");
        assert_eq!(&d.text[s.start..s.end], "\"ñ\"");
        assert_eq!(d.line_col(s.start), (3, 11));
        let m = match d.root().kind() {
            crate::doc::NodeKind::Object(m) => m,
            _ => unreachable!(),
        };
        let key = m.get(1).unwrap().key_span();
        assert_eq!(&d.text[key.start..key.end], "list");
        let list = d.locate("/list");
        assert_eq!(&d.text[list.start..list.end], "- name: \"ñ\"");
        let flow = doc("a: [1, 2]\n");
        let s = flow.locate("/a");
        assert_eq!(&flow.text[s.start..s.end], "[1, 2]");
    }

    #[test]
    fn locates_keys() {
        let d = doc("a:\n  b: 1\n  'b': [2]\nc: {d: 3}\n");
        let key = |p: &str| {
            let s = d.locate_key(p);
            (&d.text[s.start..s.end], d.line_col(s.start))
        };
        assert_eq!(
            key("/a/b"),
            ("'b'", (3, 3)),
            "the last of the repeated keys"
        );
        assert_eq!(key("/c/d"), ("d", (4, 5)));
    }

    #[test]
    fn keeps_duplicate_keys() {
        let d = doc("a: 1\na: 2\n");
        assert_eq!(d.value(), json!({"a": 2}));
        assert_eq!(d.duplicate_keys()[0].0.as_str(), "/a");
    }

    #[test]
    fn rejects_what_json_cannot_say() {
        let cases = [
            ("a: &x 1\n", "yaml.anchor"),
            ("a: &x [1]\n", "yaml.anchor"),
            ("a: 1\nb: *a\n", "yaml.syntax"),
            ("a: &x 1\nb: *x\n", "yaml.anchor"),
            ("a: [*x]\n", "yaml.syntax"),
            ("a: !!str 1\n", "yaml.tag"),
            ("a: !custom {b: 1}\n", "yaml.tag"),
            ("<<: {a: 1}\n", "yaml.merge-key"),
            ("a: 1\n---\nb: 2\n", "yaml.multiple-documents"),
            ("a:\n", "yaml.empty-value"),
            ("a: [1, ]\nb:\n", "yaml.empty-value"),
            ("- \n- 1\n", "yaml.empty-value"),
            ("a: .nan\n", "yaml.non-finite"),
            ("a: -.Inf\n", "yaml.non-finite"),
            ("a: 0x1F\n", "yaml.number-form"),
            ("a: 0o17\n", "yaml.number-form"),
            ("a: +1\n", "yaml.number-form"),
            ("a: 01\n", "yaml.number-form"),
            ("a: 1_000\n", "yaml.number-form"),
            ("a: .5\n", "yaml.number-form"),
            ("a: 1.\n", "yaml.number-form"),
            ("1: a\n", "yaml.non-string-key"),
            ("true: a\n", "yaml.non-string-key"),
            ("null: a\n", "yaml.non-string-key"),
            ("? [a]\n: 1\n", "yaml.non-string-key"),
            ("a: [1,\nb: 2\n", "yaml.syntax"),
            ("%YAML 1.1\n---\na: 1\n", "yaml.directive"),
            ("%FOO bar\n---\na: 1\n", "yaml.directive"),
            ("%TAG !e! tag:x,2000:\n---\na: !e!f 1\n", "yaml.tag"),
            ("a: ~\n", "yaml.literal-spelling"),
            ("a: Null\n", "yaml.literal-spelling"),
            ("a: [NULL]\n", "yaml.literal-spelling"),
            ("a: True\n", "yaml.literal-spelling"),
            ("a: FALSE\n", "yaml.literal-spelling"),
            ("~: a\n", "yaml.non-string-key"),
            ("", "yaml.syntax"),
            ("# only a comment\n", "yaml.syntax"),
        ];
        for (text, want) in cases {
            assert_eq!(code(text), want, "{text:?}");
        }
    }

    #[test]
    fn the_alias_itself_is_rejected() {
        // saphyr reports the alias only after the anchor, which is rejected
        // first; an alias in a position without its anchor is a parse error.
        let mut r = Reader::new("a: *x\n");
        let e = r.event(Event::Alias(1), Span::new(3, 5)).unwrap_err();
        assert_eq!(e.diagnostic.code, "yaml.alias");
    }

    #[test]
    fn accepts_the_12_directive_and_quoted_keys() {
        assert_eq!(doc("%YAML 1.2\n---\na: 1\n").value(), json!({"a": 1}));
        assert_eq!(
            doc("%TAG ! tag:x,2000:\n---\na: 1\n").value(),
            json!({"a": 1})
        );
        assert_eq!(
            doc("'1': a\n\"true\": b\n").value(),
            json!({"1": "a", "true": "b"})
        );
        assert_eq!(doc("a: \"\"\n").value(), json!({"a": ""}));
    }

    #[test]
    fn errors_carry_a_position() {
        let e = parse("t.yaml", "a: 1\nb: 0x10\n".into()).unwrap_err();
        assert_eq!(
            crate::doc::line_col("a: 1\nb: 0x10\n", e.span.start),
            (2, 4)
        );
        let e = parse("t.yaml", "é: [1,\nb: 2\n".into()).unwrap_err();
        assert!(e.span.start <= "é: [1,\nb: 2\n".len());
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let text = "- ".repeat(MAX_DEPTH + 10) + "1\n";
        assert_eq!(code(&text), "yaml.depth");
        let flow = "[".repeat(100_000);
        assert_eq!(code(&flow), "yaml.depth");
    }
}
