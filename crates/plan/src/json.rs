//! Strict JSON input: RFC 8259 exactly, for every format.
//!
//! The tools of all three formats read plans with strict parsers
//! (`JSON.parse`, codeboost's own reader, Go's `encoding/json`), so a
//! document one of them refuses must not pass here: whitespace is space,
//! tab, line feed and carriage return only, and a string holds no raw
//! control character. Errors point at the offending character and name it,
//! since the usual culprits (a no-break space, a raw tab) are invisible.
//!
//! The tree keeps byte spans, duplicate keys and the number text as
//! written, like the YAML reader, and refuses nesting deeper than
//! [`MAX_DEPTH`] so that no later walk over the tree can exhaust the stack.

use crate::diag::Diagnostic;
use crate::doc::{Document, Span, Syntax, SyntaxError, MAX_DEPTH};
use crate::tree::{Builder, Raw, Text, Tree};
use crate::unicode;

const HINT: &str = "the file must be one JSON value (RFC 8259): no comments, no trailing commas";

/// Parses `text` as strict JSON.
pub fn parse(path: &str, text: String) -> Result<Document, SyntaxError> {
    Document::parse_as(path, text, Syntax::Json)
}

/// The tree of `text`, read as strict JSON.
pub(crate) fn tree(text: &str) -> Result<Tree, SyntaxError> {
    Reader {
        text,
        at: 0,
        depth: 0,
        tree: Builder::new(text),
    }
    .document()
}

type Read<T> = Result<T, SyntaxError>;

struct Reader<'a> {
    text: &'a str,
    /// Byte offset of the next character.
    at: usize,
    /// Collections open around `at`.
    depth: usize,
    tree: Builder<'a>,
}

impl Reader<'_> {
    fn document(mut self) -> Read<Tree> {
        // agb's JSON.parse fails on a byte order mark with a bare
        // "Unexpected token"; name the invisible character instead.
        if self.text.starts_with('\u{feff}') {
            let mut e = self.error(
                Span::new(0, '\u{feff}'.len_utf8()),
                "invalid JSON: the file starts with a byte order mark (U+FEFF)".into(),
            );
            e.diagnostic.hint = Some("save the file as UTF-8 without a byte order mark".into());
            return Err(e);
        }
        self.skip_whitespace();
        if self.peek().is_none() {
            let span = Span::new(0, self.text.len());
            return Err(self.error(span, "invalid JSON: the file is empty".into()));
        }
        let root = self.value()?;
        self.skip_whitespace();
        match self.peek() {
            None => self.tree.finish(root),
            Some(c) => Err(self.unexpected(c, "after the end of the JSON value")),
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    /// Only the four characters RFC 8259 calls whitespace; anything else
    /// that looks like space is left for [`Reader::unexpected`] to name.
    fn skip_whitespace(&mut self) {
        let bytes = self.text.as_bytes();
        while matches!(bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Read<Raw> {
        let start = self.at;
        let value: fn(Span) -> Raw = match self.peek() {
            None => return Err(self.end_of_input("a value")),
            Some('{') => return self.object(),
            Some('[') => return self.array(),
            Some('"') => {
                let text = self.string()?;
                return Ok(Raw::string(text, Span::new(start, self.at)));
            }
            Some(c) if c == '-' || c.is_ascii_digit() => {
                let text = self.number()?;
                return Ok(Raw::number(text, Span::new(start, self.at)));
            }
            Some(c) if c.is_ascii_alphabetic() => self.literal()?,
            Some(c) => return Err(self.unexpected(c, "where a value should be")),
        };
        Ok(value(Span::new(start, self.at)))
    }

    fn open(&mut self) -> Read<usize> {
        let start = self.at;
        if self.depth >= MAX_DEPTH {
            return Err(SyntaxError {
                diagnostic: Diagnostic::error(
                    "json.depth",
                    "",
                    format!("the document is nested more than {MAX_DEPTH} levels deep"),
                )
                .with_hint("plans are shallow; flatten the structure"),
                span: Span::new(start, start + 1),
            });
        }
        self.depth += 1;
        self.at += 1;
        Ok(start)
    }

    /// The span of the collection opened at `start`, closed at `self.at`.
    fn close(&mut self, start: usize) -> Span {
        self.depth -= 1;
        self.at += 1;
        Span::new(start, self.at)
    }

    fn object(&mut self) -> Read<Raw> {
        let start = self.open()?;
        let mark = self.tree.members_mark();
        self.skip_whitespace();
        if self.peek() == Some('}') {
            let span = self.close(start);
            return Ok(self.tree.object(mark, span));
        }
        loop {
            let key_start = self.at;
            let key = match self.peek() {
                Some('"') => self.string()?,
                None => return Err(self.end_of_input("a key")),
                Some(c) => return Err(self.unexpected(c, "where a key in double quotes should be")),
            };
            let key_span = Span::new(key_start, self.at);
            self.skip_whitespace();
            match self.peek() {
                Some(':') => self.at += 1,
                None => return Err(self.end_of_input("`:`")),
                Some(c) => return Err(self.unexpected(c, "where `:` should follow the key")),
            }
            self.skip_whitespace();
            let value = self.value()?;
            self.tree.push_member(key, key_span, value);
            if self.after_item('}')? {
                let span = self.close(start);
                return Ok(self.tree.object(mark, span));
            }
        }
    }

    fn array(&mut self) -> Read<Raw> {
        let start = self.open()?;
        let mark = self.tree.items_mark();
        self.skip_whitespace();
        if self.peek() == Some(']') {
            let span = self.close(start);
            return Ok(self.tree.array(mark, span));
        }
        loop {
            let item = self.value()?;
            self.tree.push_item(item);
            if self.after_item(']')? {
                let span = self.close(start);
                return Ok(self.tree.array(mark, span));
            }
        }
    }

    /// After a member or element: `true` at the closing bracket (not yet
    /// consumed), `false` after a comma with the next item ahead.
    fn after_item(&mut self, closing: char) -> Read<bool> {
        self.skip_whitespace();
        match self.peek() {
            Some(c) if c == closing => return Ok(true),
            Some(',') => {}
            None => return Err(self.end_of_input(&format!("`,` or `{closing}`"))),
            Some(c) => {
                let context = format!("where `,` or `{closing}` should follow");
                return Err(self.unexpected(c, &context));
            }
        }
        let comma = self.at;
        self.at += 1;
        self.skip_whitespace();
        if self.peek() == Some(closing) {
            let span = Span::new(comma, comma + 1);
            return Err(self.error(span, "invalid JSON: trailing commas are not allowed".into()));
        }
        Ok(false)
    }

    /// A string, `self.at` on its opening quote: a place in the text when
    /// it holds no escape (no copy), else its unescaped copy.
    fn string(&mut self) -> Read<Text> {
        let open = self.at;
        self.at += 1;
        let rest = &self.text.as_bytes()[self.at..];
        let run = rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(rest.len());
        if rest.get(run) == Some(&b'"') {
            let text = Builder::in_text(self.at, run);
            self.at += run + 1;
            return Ok(text);
        }
        self.at = open + 1;
        let mut out = String::new();
        loop {
            let rest = &self.text.as_bytes()[self.at..];
            // Every byte that ends a run is ASCII, so `run` ends on a
            // character boundary.
            let run = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(rest.len());
            out.push_str(&self.text[self.at..self.at + run]);
            self.at += run;
            match self.text.as_bytes().get(self.at) {
                None => {
                    let span = Span::new(open, open + 1);
                    return Err(self.error(span, "invalid JSON: the string is never closed".into()));
                }
                Some(b'"') => {
                    self.at += 1;
                    return Ok(self.tree.own(&out));
                }
                Some(b'\\') => out.push(self.escape()?),
                Some(&b) => return Err(self.raw_control(char::from(b))),
            }
        }
    }

    fn raw_control(&self, c: char) -> SyntaxError {
        let escape = match c {
            '\n' => "\\n".to_string(),
            '\t' => "\\t".to_string(),
            '\r' => "\\r".to_string(),
            _ => format!("\\u{:04X}", c as u32),
        };
        let mut e = self.error(
            Span::new(self.at, self.at + 1),
            format!(
                "invalid JSON: a raw {} inside a string; JSON strings cannot hold control characters",
                unicode::describe(c)
            ),
        );
        e.diagnostic.hint = Some(format!(
            "write it as the escape `{escape}`, or close the string before it"
        ));
        e
    }

    /// One escape sequence, `self.at` on its backslash.
    fn escape(&mut self) -> Read<char> {
        let start = self.at;
        self.at += 1;
        let Some(c) = self.peek() else {
            return Err(self.end_of_input("an escape"));
        };
        self.at += c.len_utf8();
        Ok(match c {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => return self.unicode_escape(start),
            _ => {
                let mut e = self.error(
                    Span::new(start, self.at),
                    format!("invalid JSON: `\\{c}` is not a JSON escape"),
                );
                e.diagnostic.hint = Some(
                    "JSON's escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX; write a backslash as \\\\".into(),
                );
                return Err(e);
            }
        })
    }

    /// `\uXXXX`, and the low half after a high surrogate. A lone surrogate
    /// is U+FFFD, as Go's decoder makes it; a Rust string cannot hold it.
    fn unicode_escape(&mut self, start: usize) -> Read<char> {
        let high = self.hex4(start)?;
        if !(0xD800..0xDC00).contains(&high) {
            return Ok(char::from_u32(high).unwrap_or('\u{fffd}'));
        }
        let rest = &self.text[self.at..];
        if !rest.starts_with("\\u") {
            return Ok('\u{fffd}');
        }
        let second = self.at;
        self.at += 2;
        let low = self.hex4(second)?;
        if !(0xDC00..0xE000).contains(&low) {
            // Not a pair: the first is lone, the second stands for itself.
            self.at = second;
            return Ok('\u{fffd}');
        }
        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
        Ok(char::from_u32(code).unwrap_or('\u{fffd}'))
    }

    fn hex4(&mut self, start: usize) -> Read<u32> {
        let digits = self.text.get(self.at..self.at + 4).unwrap_or("");
        match u32::from_str_radix(digits, 16) {
            Ok(n) if digits.bytes().all(|b| b.is_ascii_hexdigit()) => {
                self.at += 4;
                Ok(n)
            }
            _ => {
                let end = self.at.min(self.text.len());
                Err(self.error(
                    Span::new(start, end),
                    "invalid JSON: `\\u` must be followed by four hexadecimal digits".into(),
                ))
            }
        }
    }

    fn number(&mut self) -> Read<Text> {
        let start = self.at;
        let rest = &self.text.as_bytes()[start..];
        let len = rest
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(rest.len());
        let raw = &self.text[start..start + len];
        if !is_json_number(raw) {
            let mut e = self.error(
                Span::new(start, start + len),
                format!("invalid JSON: `{raw}` is not a number RFC 8259 allows"),
            );
            e.diagnostic.hint = Some(
                "write numbers in plain decimal: no leading zeros, no `+`, digits on both sides of `.`".into(),
            );
            return Err(e);
        }
        self.at += len;
        Ok(Builder::in_text(start, len))
    }

    fn literal(&mut self) -> Read<fn(Span) -> Raw> {
        let start = self.at;
        let rest = &self.text.as_bytes()[start..];
        let len = rest
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        let word = &self.text[start..start + len];
        let value: fn(Span) -> Raw = match word {
            "true" => |span| Raw::bool(true, span),
            "false" => |span| Raw::bool(false, span),
            "null" => Raw::null,
            _ => {
                let mut e = self.error(
                    Span::new(start, start + len),
                    format!("invalid JSON: `{word}` is not a JSON value"),
                );
                e.diagnostic.hint = Some(
                    "JSON's words are `true`, `false` and `null`, in lower case; put text in double quotes".into(),
                );
                return Err(e);
            }
        };
        self.at += len;
        Ok(value)
    }

    fn unexpected(&self, c: char, context: &str) -> SyntaxError {
        let span = Span::new(self.at, self.at + c.len_utf8());
        if unicode::is_invisible(c) {
            let mut e = self.error(
                span,
                format!(
                    "invalid JSON: {} is not JSON whitespace",
                    unicode::describe(c)
                ),
            );
            e.diagnostic.hint = Some(
                "JSON whitespace is space, tab, line feed and carriage return only; replace the character with a space or remove it".into(),
            );
            return e;
        }
        let message = match c {
            '/' => "invalid JSON: comments are not allowed".to_string(),
            '\'' => "invalid JSON: strings must be in double quotes, not single".to_string(),
            _ => format!("invalid JSON: unexpected {} {context}", unicode::shown(c)),
        };
        self.error(span, message)
    }

    fn end_of_input(&self, wanted: &str) -> SyntaxError {
        let end = self.text.len();
        self.error(
            Span::new(end, end),
            format!("invalid JSON: the file ends where {wanted} should be"),
        )
    }

    fn error(&self, span: Span, message: String) -> SyntaxError {
        SyntaxError {
            diagnostic: Diagnostic::error("json.syntax", "", message).with_hint(HINT),
            span,
        }
    }
}

/// RFC 8259 number grammar: `-? (0 | [1-9][0-9]*) (\.[0-9]+)? ([eE][+-]?[0-9]+)?`.
pub fn is_json_number(raw: &str) -> bool {
    let b = raw.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    let int_start = i;
    let n = digits(&mut i);
    if n == 0 || (n > 1 && b[int_start] == b'0') {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fails(text: &str) -> (String, String, (usize, usize)) {
        let e = parse("t.json", text.to_string())
            .map(|d| panic!("{text:?} was accepted: {:?}", d.value()))
            .unwrap_err();
        let at = crate::doc::line_col(text, e.span.start);
        (e.diagnostic.code, e.diagnostic.message, at)
    }

    #[test]
    fn reads_rfc_8259() {
        let text = "\t{\"a\": [1, -0.5e+3, true, false, null, \"x\\n\\u00e9\\ud83d\\ude00\\/\"],\r\n \"b\": {}}\n";
        let d = parse("t.json", text.to_string()).unwrap();
        assert_eq!(
            d.value(),
            json!({"a": [1, -500.0, true, false, null, "x\né😀/"], "b": {}})
        );
        let s = d.locate("/a/1");
        assert_eq!(&d.text[s.start..s.end], "-0.5e+3");
        let s = d.locate_key("/b");
        assert_eq!(&d.text[s.start..s.end], "\"b\"");
    }

    #[test]
    fn names_whitespace_json_does_not_have() {
        for (c, name) in [
            ('\u{a0}', "U+00A0 NO-BREAK SPACE"),
            ('\u{b}', "U+000B LINE TABULATION"),
            ('\u{c}', "U+000C FORM FEED"),
            ('\u{85}', "U+0085 NEXT LINE"),
            ('\u{2028}', "U+2028 LINE SEPARATOR"),
            ('\u{3000}', "U+3000 IDEOGRAPHIC SPACE"),
            ('\u{0}', "U+0000 NULL"),
        ] {
            let text = format!("{{\n  \"a\":{c}1\n}}");
            let (code, message, at) = fails(&text);
            assert_eq!(code, "json.syntax");
            assert_eq!(
                message,
                format!("invalid JSON: {name} is not JSON whitespace")
            );
            assert_eq!(at, (2, 7), "{name}");
        }
        let (_, message, at) = fails("{}\u{a0}");
        assert!(message.contains("NO-BREAK SPACE"), "{message}");
        assert_eq!(at, (1, 3));
    }

    #[test]
    fn names_raw_control_characters_in_strings() {
        for c in (0u8..0x20).map(char::from) {
            let text = format!("{{\"a\": \"x{c}y\"}}");
            let (code, message, at) = fails(&text);
            assert_eq!(code, "json.syntax");
            assert!(message.contains(&unicode::describe(c)), "{message}");
            assert!(message.contains("inside a string"), "{message}");
            assert_eq!(at, (1, 9));
        }
        // DEL and C1 characters are allowed raw in a JSON string.
        let d = parse("t.json", "[\"\u{7f}\u{85}\"]".into()).unwrap();
        assert_eq!(d.value(), json!(["\u{7f}\u{85}"]));
    }

    #[test]
    fn rejects_everything_else_at_the_offending_place() {
        let cases = [
            ("{\"a\": 1,}", "trailing commas", (1, 8)),
            ("[1,\n ]", "trailing commas", (1, 3)),
            ("// c\n{}", "comments", (1, 1)),
            ("{'a': 1}", "double quotes", (1, 2)),
            ("{\"a\": 01}", "`01` is not a number", (1, 7)),
            ("{\"a\": +1}", "unexpected `+`", (1, 7)),
            ("{\"a\": .5}", "unexpected `.`", (1, 7)),
            ("{\"a\": 1.}", "`1.` is not a number", (1, 7)),
            ("{\"a\": NaN}", "`NaN` is not a JSON value", (1, 7)),
            ("{\"a\": True}", "`True` is not a JSON value", (1, 7)),
            ("{a: 1}", "unexpected `a` where a key", (1, 2)),
            ("{\"a\" 1}", "where `:` should follow", (1, 6)),
            ("[1 2]", "where `,` or `]` should follow", (1, 4)),
            ("{\"a\": \"x\\q\"}", "`\\q` is not a JSON escape", (1, 9)),
            ("\"\\u12G4\"", "four hexadecimal digits", (1, 2)),
            ("{\"a\": \"x", "never closed", (1, 7)),
            ("[1", "the file ends where `,` or `]`", (1, 3)),
            ("{} {}", "after the end", (1, 4)),
            ("", "empty", (1, 1)),
            (" \n ", "empty", (1, 1)),
        ];
        for (text, want, place) in cases {
            let (code, message, at) = fails(text);
            assert_eq!(code, "json.syntax", "{text:?}");
            assert!(message.contains(want), "{text:?}: {message}");
            assert_eq!(at, place, "{text:?}: {message}");
        }
    }

    #[test]
    fn a_byte_order_mark_is_named() {
        let (code, message, at) = fails("\u{feff}{}");
        assert_eq!(code, "json.syntax");
        assert!(message.contains("byte order mark"), "{message}");
        assert_eq!(at, (1, 1));
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character() {
        let d = parse("t.json", r#"["\ud800", "\udc00x", "\ud800\u0041"]"#.into()).unwrap();
        assert_eq!(d.value(), json!(["\u{fffd}", "\u{fffd}x", "\u{fffd}A"]));
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse("t.json", ok).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(fails(&deep).0, "json.depth");
        assert_eq!(fails(&"{\"a\":".repeat(100_000)).0, "json.depth");
    }
}
