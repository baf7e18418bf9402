//! Reading a Spec Kit `tasks.md` into a document tree: the Markdown is not
//! parsed in general, only the lines the tasks template gives meaning to
//! (`#` title, `##` phases, `###` sections, `- [ ] T001 [P] [US1] ...`
//! task lines and the lines indented under them), each value keeping its
//! span so that diagnostics point at the Markdown line and column.
//!
//! The tree: `{"title", "phases": [{"heading", "notes": [..], "tasks":
//! [{"line", "checkbox", "id", "parallel", "story", "description",
//! "section", "more": [..]}]}]}`; a key is absent when the line lacks it.

use crate::doc::{Document, Member, Node, NodeKind, Span, Syntax};

/// The `**Label**:` lines of a phase that say what it is for; they go
/// into the prompts of its tasks.
const NOTES: [&str; 4] = [
    "**Purpose**",
    "**Goal**",
    "**Independent Test**",
    "**Checkpoint**",
];

/// Reads `text` as a tasks.md. Every text is one: a file with no task line
/// reads as no phases, which the validator reports.
pub fn parse(path: &str, text: String) -> Document {
    let root = Reader::new(&text).read();
    Document {
        path: path.to_string(),
        text,
        syntax: Syntax::Markdown,
        root,
    }
}

struct Phase {
    heading: Node,
    notes: Vec<Node>,
    tasks: Vec<Node>,
    section: usize,
}

struct Reader<'t> {
    text: &'t str,
    title: Option<Node>,
    phases: Vec<Phase>,
}

fn string(s: &str, start: usize) -> Node {
    Node {
        span: Span::new(start, start + s.len()),
        kind: NodeKind::String(s.to_string()),
    }
}

fn member(key: &str, value: Node) -> Member {
    Member {
        key: key.to_string(),
        key_span: value.span,
        value,
    }
}

fn object(span: Span, members: Vec<Member>) -> Node {
    Node {
        span,
        kind: NodeKind::Object(members),
    }
}

fn array(span: Span, items: Vec<Node>) -> Node {
    Node {
        span,
        kind: NodeKind::Array(items),
    }
}

impl<'t> Reader<'t> {
    fn new(text: &'t str) -> Self {
        Reader {
            text,
            title: None,
            phases: Vec::new(),
        }
    }

    fn read(mut self) -> Node {
        let mut fence: Option<&str> = None;
        let mut comment = false;
        let mut continuing = false;
        let mut offset = 0;
        let mut front_matter = self.text.starts_with("---");
        for (n, raw) in self.text.split_inclusive('\n').enumerate() {
            let start = offset;
            offset += raw.len();
            let line = raw.trim_end_matches(['\n', '\r']);
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
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
            if continuing && indent >= 2 && !trimmed.is_empty() {
                self.continuation(trimmed, start + indent);
                continue;
            }
            continuing = false;
            if indent <= 3 && self.line(trimmed, start + indent) {
                continuing = true;
            }
        }
        self.finish()
    }

    /// Reads one line that is not code, a comment or a continuation;
    /// whether it was a task line.
    fn line(&mut self, line: &str, at: usize) -> bool {
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
        match task(line, at) {
            Some(members) => {
                let section = self.phase().section;
                let mut members = members;
                members.push(member(
                    "section",
                    Node {
                        span: Span::new(at, at),
                        kind: NodeKind::Number(section.to_string()),
                    },
                ));
                let span = Span::new(at, at + line.trim_end().len());
                self.phase().tasks.push(object(span, members));
                true
            }
            None => false,
        }
    }

    /// The phase tasks go into: the last `##` section, or one without a
    /// heading for tasks above every heading.
    fn phase(&mut self) -> &mut Phase {
        if self.phases.is_empty() {
            self.phases.push(Phase {
                heading: Node {
                    span: Span::new(0, 0),
                    kind: NodeKind::Null,
                },
                notes: vec![],
                tasks: vec![],
                section: 0,
            });
        }
        let last = self.phases.len() - 1;
        &mut self.phases[last]
    }

    fn continuation(&mut self, line: &str, at: usize) {
        let Some(NodeKind::Object(members)) = self.phase().tasks.last_mut().map(|t| &mut t.kind)
        else {
            return;
        };
        let node = string(line.trim_end(), at);
        match members.iter_mut().find(|m| m.key == "more") {
            Some(Member {
                value:
                    Node {
                        kind: NodeKind::Array(items),
                        span,
                    },
                ..
            }) => {
                span.end = node.span.end;
                items.push(node);
            }
            _ => members.push(member("more", array(node.span, vec![node]))),
        }
    }

    fn finish(self) -> Node {
        let end = self.text.len();
        let mut members = Vec::new();
        if let Some(title) = self.title {
            members.push(member("title", title));
        }
        let phases: Vec<Node> = self
            .phases
            .into_iter()
            .map(|p| {
                let span = p.heading.span;
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
        object(Span::new(0, end), members)
    }
}

/// The parts of a task line, or None when the line is not one: a list item
/// with a checkbox, or a line (or list item) that starts with a task id.
fn task(line: &str, at: usize) -> Option<Vec<Member>> {
    let mut members = vec![member("line", string(line.trim_end(), at))];
    let bullet = ["- ", "* ", "+ "].iter().find(|b| line.starts_with(**b));
    let mut rest = line;
    let mut pos = at;
    if bullet.is_some() {
        rest = &line[2..];
        pos += 2;
    }
    let boxed = rest.len() >= 3 && rest.as_bytes()[0] == b'[' && rest.as_bytes()[2] == b']';
    if bullet.is_some() && boxed && matches!(rest.as_bytes()[1], b' ' | b'x' | b'X') {
        members.push(member("checkbox", string(&rest[1..2], pos + 1)));
        rest = &rest[3..];
        pos += 3;
    } else if !starts_with_id(rest) {
        return None;
    }
    let mut words = Words { rest, pos };
    if let Some((word, start)) = words.peek().filter(|(w, _)| !w.starts_with('[')) {
        if looks_like_id(word) {
            members.push(member("id", string(word, start)));
            words.next();
        }
    }
    while let Some((word, start)) = words.peek() {
        if word == "[P]" {
            members.push(member(
                "parallel",
                Node {
                    span: Span::new(start, start + 3),
                    kind: NodeKind::Bool(true),
                },
            ));
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
        parse("tasks.md", text.to_string()).value()
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
        let d = parse("t.md", "## P\n\n- [ ] T001 Do it\n".to_string());
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
