//! Reading a Spec Kit `tasks.md` into a document tree: the Markdown is not
//! parsed in general, only the lines the tasks template gives meaning to
//! (`#` title, `##` phases, `###` sections, `- [ ] T001 [P] [US1] ...`
//! task lines and the lines indented under them), each value keeping its
//! span so that diagnostics point at the Markdown line and column.
//!
//! The tree: `{"title", "phases": [{"heading", "notes": [..], "tasks":
//! [{"line", "checkbox" | "marker", "id", "parallel", "story",
//! "description", "section", "nested", "more": [..]}]}], "setext": [..]}`;
//! a key is absent when the line lacks it. `marker` is what a task line
//! that breaks the checklist format starts with instead of `- [ ]`;
//! `setext` holds the text of headings underlined with `---`.

use crate::doc::{Document, Span, Syntax, SyntaxError};
use crate::tree::{Builder, Raw, Text, Tree};

/// The `**Label**:` lines of a phase that say what it is for; they go
/// into the prompts of its tasks.
const NOTES: [&str; 4] = [
    "**Purpose**",
    "**Goal**",
    "**Independent Test**",
    "**Checkpoint**",
];

/// Reads `text` as a tasks.md. Every text is one: a file with no task line
/// reads as no phases, which the validator reports (the only error is a
/// text too large to place, `doc.too-large`).
pub fn parse(path: &str, text: String) -> Result<Document, SyntaxError> {
    Document::parse_as(path, text, Syntax::Markdown)
}

/// The tree of the task lines of `text`.
pub(crate) fn tree(text: &str) -> Result<Tree, SyntaxError> {
    let draft = Reader::new(text).read();
    let mut builder = Builder::new(text);
    let root = build(&draft, &mut builder, &mut Vec::new());
    builder.finish(root)
}

/// A value of the tree being read: lines are read one by one and a task's
/// continuation lines join it afterwards, so the tree is drafted first and
/// built once the whole text is read.
enum Draft<'t> {
    Null(Span),
    True(Span),
    /// A task's section number.
    Number(usize, Span),
    /// Text of the line, at its place.
    String(&'t str, Span),
    Array(Span, Vec<Draft<'t>>),
    Object(Span, Vec<Field<'t>>),
}

/// A member of a drafted object.
struct Field<'t> {
    key: &'static str,
    key_span: Span,
    value: Draft<'t>,
}

impl Draft<'_> {
    fn span(&self) -> Span {
        match self {
            Draft::Null(s) | Draft::True(s) | Draft::Number(_, s) | Draft::String(_, s) => *s,
            Draft::Array(s, _) | Draft::Object(s, _) => *s,
        }
    }
}

/// Builds `draft` into the tree; `keys` places each key's text once.
fn build(draft: &Draft<'_>, b: &mut Builder<'_>, keys: &mut Vec<(&'static str, Text)>) -> Raw {
    match draft {
        Draft::Null(span) => Raw::null(*span),
        Draft::True(span) => Raw::bool(true, *span),
        Draft::Number(n, span) => Raw::number(b.own(&n.to_string()), *span),
        Draft::String(s, span) => Raw::string(b.place(s, *span), *span),
        Draft::Array(span, items) => {
            let mark = b.items_mark();
            for item in items {
                let raw = build(item, b, keys);
                b.push_item(raw);
            }
            b.array(mark, *span)
        }
        Draft::Object(span, fields) => {
            let mark = b.members_mark();
            for f in fields {
                let key = match keys.iter().find(|(k, _)| *k == f.key) {
                    Some((_, text)) => *text,
                    None => {
                        let text = b.own(f.key);
                        keys.push((f.key, text));
                        text
                    }
                };
                let raw = build(&f.value, b, keys);
                b.push_member(key, f.key_span, raw);
            }
            b.object(mark, *span)
        }
    }
}

struct Phase<'t> {
    heading: Draft<'t>,
    notes: Vec<Draft<'t>>,
    tasks: Vec<Draft<'t>>,
    section: usize,
}

struct Reader<'t> {
    text: &'t str,
    title: Option<Draft<'t>>,
    phases: Vec<Phase<'t>>,
    /// The text of each setext heading (a line underlined with `---`).
    setext: Vec<Draft<'t>>,
}

fn string(s: &str, start: usize) -> Draft<'_> {
    Draft::String(s, Span::new(start, start + s.len()))
}

fn member<'t>(key: &'static str, value: Draft<'t>) -> Field<'t> {
    Field {
        key,
        key_span: value.span(),
        value,
    }
}

fn object(span: Span, members: Vec<Field<'_>>) -> Draft<'_> {
    Draft::Object(span, members)
}

fn array(span: Span, items: Vec<Draft<'_>>) -> Draft<'_> {
    Draft::Array(span, items)
}

impl<'t> Reader<'t> {
    fn new(text: &'t str) -> Self {
        Reader {
            text,
            title: None,
            phases: Vec::new(),
            setext: Vec::new(),
        }
    }

    fn read(mut self) -> Draft<'t> {
        let mut fence: Option<&str> = None;
        let mut comment = false;
        let mut continuing = false;
        // The paragraph line just read, which a `---` under it makes a heading.
        let mut plain: Option<(&str, usize)> = None;
        let mut offset = 0;
        let mut front_matter = self.text.starts_with("---");
        for (n, raw) in self.text.split_inclusive('\n').enumerate() {
            let start = offset;
            offset += raw.len();
            let line = raw.trim_end_matches(['\n', '\r']);
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            let plain_before = plain.take();
            if front_matter {
                front_matter = !(n > 0 && line.trim_end() == "---");
                continue;
            }
            if comment {
                comment = !line.contains("-->");
                continue;
            }
            if let Some(f) = fence {
                if trimmed.starts_with(f) {
                    fence = None;
                }
                continue;
            }
            if let Some(f) = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f)) {
                fence = Some(f);
                continuing = false;
                continue;
            }
            if trimmed.starts_with("<!--") {
                comment = !trimmed.contains("-->");
                continue;
            }
            if indent >= 2 && task_with_id(trimmed) {
                // A task indented under another is a task of its own.
                self.task_line(trimmed, start + indent, continuing);
                continuing = true;
                continue;
            }
            if continuing && indent >= 2 && !trimmed.is_empty() {
                self.continuation(trimmed, start + indent);
                continue;
            }
            continuing = false;
            if let Some((text, at)) = plain_before.filter(|_| indent <= 3 && underline(trimmed)) {
                self.setext.push(string(text, at));
                continue;
            }
            if indent <= 3 && self.line(trimmed, start + indent) {
                continuing = true;
            } else if indent <= 3 && is_plain(trimmed) {
                plain = Some((trimmed.trim_end(), start + indent));
            }
        }
        self.finish()
    }

    /// Reads one line that is not code, a comment or a continuation;
    /// whether it was a task line.
    fn line(&mut self, line: &'t str, at: usize) -> bool {
        if let Some(title) = line.strip_prefix("# ") {
            let text = title.trim();
            if self.title.is_none() {
                self.title = Some(string(
                    text,
                    at + 2 + (title.len() - title.trim_start().len()),
                ));
            }
            return false;
        }
        if let Some(heading) = line.strip_prefix("## ") {
            let text = heading.trim();
            let lead = heading.len() - heading.trim_start().len();
            self.phases.push(Phase {
                heading: string(text, at + 3 + lead),
                notes: vec![],
                tasks: vec![],
                section: 0,
            });
            return false;
        }
        if line.starts_with("### ") || line.starts_with("#### ") {
            if let Some(p) = self.phases.last_mut() {
                p.section += 1;
            }
            return false;
        }
        if NOTES.iter().any(|n| line.starts_with(n)) {
            let note = string(line.trim_end(), at);
            self.phase().notes.push(note);
            return false;
        }
        self.task_line(line, at, false)
    }

    /// Reads `line` as a task line if it is one (`nested`: indented under
    /// another task); whether it was.
    fn task_line(&mut self, line: &'t str, at: usize, nested: bool) -> bool {
        let Some(mut members) = task(line, at) else {
            return false;
        };
        let section = self.phase().section;
        let here = Span::new(at, at);
        members.push(member("section", Draft::Number(section, here)));
        if nested {
            members.push(member("nested", Draft::True(here)));
        }
        let span = Span::new(at, at + line.trim_end().len());
        self.phase().tasks.push(object(span, members));
        true
    }

    /// The phase tasks go into: the last `##` section, or one without a
    /// heading for tasks above every heading.
    fn phase(&mut self) -> &mut Phase<'t> {
        if self.phases.is_empty() {
            self.phases.push(Phase {
                heading: Draft::Null(Span::new(0, 0)),
                notes: vec![],
                tasks: vec![],
                section: 0,
            });
        }
        let last = self.phases.len() - 1;
        &mut self.phases[last]
    }

    fn continuation(&mut self, line: &'t str, at: usize) {
        let Some(Draft::Object(_, members)) = self.phase().tasks.last_mut() else {
            return;
        };
        let node = string(line.trim_end(), at);
        match members.iter_mut().find(|m| m.key == "more") {
            Some(Field {
                value: Draft::Array(span, items),
                ..
            }) => {
                span.end = node.span().end;
                items.push(node);
            }
            _ => members.push(member("more", array(node.span(), vec![node]))),
        }
    }

    fn finish(self) -> Draft<'t> {
        let end = self.text.len();
        let mut members = Vec::new();
        if let Some(title) = self.title {
            members.push(member("title", title));
        }
        let phases: Vec<Draft> = self
            .phases
            .into_iter()
            .map(|p| {
                let span = p.heading.span();
                let notes = array(span, p.notes);
                let tasks = array(span, p.tasks);
                object(
                    span,
                    vec![
                        member("heading", p.heading),
                        member("notes", notes),
                        member("tasks", tasks),
                    ],
                )
            })
            .collect();
        members.push(member("phases", array(Span::new(0, end.min(1)), phases)));
        if let Some(first) = self.setext.first() {
            let span = first.span();
            members.push(member("setext", array(span, self.setext)));
        }
        object(Span::new(0, end), members)
    }
}

/// The parts of a task line, or None when the line is not one: a list item
/// with a checkbox, or a line (or list item) that starts with a task id.
///
/// A line that starts with a task id after something else than `- [ ]`
/// (`- [] T003`, `[ ] T003`, `1. [ ] T003`, `- T003`, `T003`) is one too,
/// with that `marker`, so that the validator names it instead of the task
/// being dropped.
fn task(line: &str, at: usize) -> Option<Vec<Field<'_>>> {
    let mut members = vec![member("line", string(line.trim_end(), at))];
    let (lead, dash) = list_marker(line);
    let after = &line[lead..];
    let boxed = checkbox(after);
    let (rest, pos) = match boxed {
        Some((len, Some(mark))) if dash => {
            members.push(member("checkbox", string(mark, at + lead + 1)));
            (&after[len..], at + lead + len)
        }
        _ => {
            let len = lead + boxed.map_or(0, |(len, _)| len);
            let tail = &line[len..];
            let skip = tail.len() - tail.trim_start().len();
            if !starts_with_id(&tail[skip..]) {
                return None;
            }
            members.push(member("marker", string(line[..len].trim_end(), at)));
            (&tail[skip..], at + len + skip)
        }
    };
    let mut words = Words { rest, pos };
    if let Some((word, start)) = words.peek().filter(|(w, _)| !w.starts_with('[')) {
        if looks_like_id(word) {
            members.push(member("id", string(word, start)));
            words.next();
        }
    }
    while let Some((word, start)) = words.peek() {
        if word == "[P]" {
            members.push(member("parallel", Draft::True(Span::new(start, start + 3))));
        } else if let Some(story) = word
            .strip_prefix('[')
            .and_then(|w| w.strip_suffix(']'))
            .filter(|w| {
                w.starts_with("US") && w.len() > 2 && w[2..].bytes().all(|b| b.is_ascii_digit())
            })
        {
            members.push(member("story", string(story, start + 1)));
        } else {
            break;
        }
        words.next();
    }
    let description = words.rest.trim();
    let lead = words.rest.len() - words.rest.trim_start().len();
    members.push(member("description", string(description, words.pos + lead)));
    Some(members)
}

/// The list marker a line starts with (`- `, `* `, `+ `, or a number
/// and `.` or `)` and a space): its length, and whether it is a bullet.
fn list_marker(line: &str) -> (usize, bool) {
    if ["- ", "* ", "+ "].iter().any(|b| line.starts_with(b)) {
        return (2, true);
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &line[digits..];
    if digits > 0 && (rest.starts_with(". ") || rest.starts_with(") ")) {
        return (digits + 2, false);
    }
    (0, false)
}

/// A bracket of at most two characters at the start of `rest` (`[ ]`,
/// `[x]`, `[]`, `[-]`): its length, and the mark when it is a checkbox
/// (` `, `x` or `X`).
fn checkbox(rest: &str) -> Option<(usize, Option<&str>)> {
    let close = rest.strip_prefix('[')?.find(']').filter(|&c| c <= 2)? + 1;
    let inner = &rest[1..close];
    let mark = matches!(inner, " " | "x" | "X").then_some(inner);
    Some((close + 1, mark))
}

/// A list item or checkbox line with a task id in its place (for lines
/// indented under another task, where a bare `T012 and T013 ...` is text).
fn task_with_id(line: &str) -> bool {
    let marked = |m: &Field| {
        m.key == "checkbox"
            || (m.key == "marker" && !matches!(&m.value, Draft::String(s, _) if s.is_empty()))
    };
    task(line, 0).is_some_and(|m| m.iter().any(|m| m.key == "id") && m.iter().any(marked))
}

/// A setext heading's underline: `--` or more, nothing else.
fn underline(line: &str) -> bool {
    let line = line.trim_end();
    line.len() >= 2 && line.bytes().all(|b| b == b'-')
}

/// A line of paragraph text, which an underline makes a heading.
fn is_plain(line: &str) -> bool {
    !line.is_empty()
        && list_marker(line).0 == 0
        && !line.starts_with(['#', '>', '|', '-', '*', '+', '['])
}

/// `T` then a digit: a task line that has lost its checkbox.
fn starts_with_id(rest: &str) -> bool {
    let b = rest.as_bytes();
    b.len() >= 2 && b[0] == b'T' && b[1].is_ascii_digit()
}

/// A word in the id's place that is meant as one: `T001`, or the
/// template's `TXXX`.
fn looks_like_id(word: &str) -> bool {
    word.len() >= 2
        && word.starts_with('T')
        && word[1..].bytes().all(|b| b.is_ascii_digit() || b == b'X')
}

/// The words of a line with their byte offsets.
struct Words<'a> {
    rest: &'a str,
    pos: usize,
}

impl<'a> Words<'a> {
    fn peek(&self) -> Option<(&'a str, usize)> {
        let lead = self.rest.len() - self.rest.trim_start().len();
        let word = self.rest[lead..].split_whitespace().next()?;
        Some((word, self.pos + lead))
    }

    fn next(&mut self) {
        if let Some((word, start)) = self.peek() {
            let skip = start - self.pos + word.len();
            self.rest = &self.rest[skip..];
            self.pos += skip;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> serde_json::Value {
        parse("tasks.md", text.to_string()).unwrap().value()
    }

    #[test]
    fn reads_task_lines_with_their_labels() {
        let v = read("# Tasks: X\n\n## Phase 1: Setup\n\n- [ ] T001 [P] [US1] Create src/a.py\n  more words\n- [x] T002 Done\n");
        let task = &v["phases"][0]["tasks"][0];
        assert_eq!(v["title"], "Tasks: X");
        assert_eq!(task["id"], "T001");
        assert_eq!(task["parallel"], true);
        assert_eq!(task["story"], "US1");
        assert_eq!(task["description"], "Create src/a.py");
        assert_eq!(task["more"][0], "more words");
        assert_eq!(v["phases"][0]["tasks"][1]["checkbox"], "x");
    }

    #[test]
    fn spans_are_lines_and_columns() {
        let d = parse("t.md", "## P\n\n- [ ] T001 Do it\n".to_string()).unwrap();
        let s = d.locate("/phases/0/tasks/0/id");
        assert_eq!(&d.text[s.start..s.end], "T001");
        assert_eq!(d.line_col(s.start), (3, 7));
    }

    #[test]
    fn code_comments_and_front_matter_are_not_read() {
        let v = read("---\ndescription: x\n---\n<!--\n- [ ] T009 no\n-->\n```\n- [ ] T008 no\n```\n## P\n- [ ] T001 yes\n");
        assert_eq!(v["phases"].as_array().unwrap().len(), 1);
        assert_eq!(v["phases"][0]["tasks"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn lines_that_lost_parts_are_still_tasks() {
        let v =
            read("## P\nT001 [US1] Create model\n- [ ] [US1] Create User model\n- plain item\n");
        let tasks = v["phases"][0]["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 2);
        assert!(tasks[0].get("checkbox").is_none());
        assert!(tasks[1].get("id").is_none());
    }
}
