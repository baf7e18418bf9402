//! GitHub Spec Kit's `tasks.md`: the checklist lines of its tasks template
//! (`- [ ] T012 [P] [US1] Create User model in src/models/user.py`),
//! phases as barriers, `[P]` as "runs beside its neighbours". Spec Kit has
//! no validator; these rules follow its template and its `/tasks` and
//! `/implement` commands, and are planwright's own (see
//! `docs/formats/speckit.md`).

pub mod read;

mod emit;

use super::Options;
use crate::diag::{Diagnostic, Sink};
use crate::doc::Document;
use crate::model::{Format, Plan, ScopeEntry, ScopeOp, Ticket};
use crate::pointer::Pointer;
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::LazyLock;

/// A task id: `T` and a number.
static ID_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^T[0-9]+$").expect("valid regex"));

/// A dependency stated in a description: `(depends on T012, T013)`,
/// `after T003`, `requires T004 and T005`, `blocked by T002`.
static DEPENDS_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:depends on|after|requires|blocked by)\s+(T[0-9]+(?:\s*(?:,|and|&)\s*T[0-9]+)*)",
    )
    .expect("valid regex")
});

/// A task id inside a dependency phrase.
static REF_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"T[0-9]+").expect("valid regex"));

/// A placeholder the template leaves for the author: `[Entity1]`, `[name]`.
static PLACEHOLDER_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[[^\]\s][^\]]*\]").expect("valid regex"));

/// One task line as read, with its place.
struct Task<'a> {
    at: Pointer,
    obj: &'a Map<String, Value>,
    phase: usize,
    id: Option<&'a str>,
    done: bool,
    parallel: bool,
    section: u64,
}

impl Task<'_> {
    fn label(&self) -> String {
        self.id.map_or_else(|| "a task".to_string(), str::to_string)
    }

    fn description(&self) -> &str {
        text(self.obj, "description")
    }
}

fn text<'a>(obj: &'a Map<String, Value>, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Validates a tasks.md read by [`read::parse`]; the plan when there was no error.
pub fn validate(value: &Value, sink: &mut dyn Sink) -> Option<Plan> {
    let mut counting = crate::diag::Counting::new(sink);
    let phases = value
        .get("phases")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let tasks = read_tasks(phases, &mut counting);
    sequence(&tasks, &mut counting);
    setext(value, &mut counting);
    if tasks.is_empty() {
        counting.push(
            Diagnostic::error("speckit.plan.empty", "", "no task lines: a tasks.md lists its tasks as `- [ ] T001 Description with file path`")
                .with_hint("write one checklist line per task, under `## Phase N: ...` headings"),
        );
        return None;
    }
    let deps = dependencies(&tasks, &mut counting);
    let plan = build(value, phases, &tasks, deps, &mut counting);
    // Repeated or missing ids make cycles of their own; they are named already.
    let cycles = if counting.errors == 0 {
        crate::dag::cycles(&plan)
    } else {
        vec![]
    };
    for cycle in cycles {
        let at = tasks
            .iter()
            .find(|t| t.id == cycle.first().map(String::as_str))
            .map(|t| t.at.key("description"));
        counting.push(
            Diagnostic::error(
                "speckit.dag.cycle",
                at.unwrap_or_default(),
                format!("dependency cycle: {}", cycle.join(" -> ")),
            )
            .with_hint("remove one of these `depends on` notes"),
        );
    }
    (counting.errors == 0).then_some(plan)
}

/// Every task line, checked against the template's checklist format.
fn read_tasks<'a>(phases: &'a [Value], sink: &mut dyn Sink) -> Vec<Task<'a>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (p, phase) in phases.iter().enumerate() {
        let heading = phase
            .get("heading")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let lower = heading.to_ascii_lowercase();
        let story_phase = lower.contains("user story");
        let no_story = ["Setup", "Foundational", "Polish"]
            .into_iter()
            .find(|k| lower.contains(&k.to_ascii_lowercase()));
        let items = phase
            .get("tasks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for (k, item) in items.enumerate() {
            let Some(obj) = item.as_object() else {
                continue;
            };
            let at = Pointer::root().key("phases").index(p).key("tasks").index(k);
            let task = Task {
                phase: p,
                id: obj.get("id").and_then(Value::as_str),
                done: matches!(text(obj, "checkbox"), "x" | "X"),
                parallel: obj.get("parallel").and_then(Value::as_bool) == Some(true),
                section: obj.get("section").and_then(Value::as_u64).unwrap_or(0),
                at,
                obj,
            };
            check_line(&task, story_phase, no_story, &mut seen, sink);
            out.push(task);
        }
    }
    out
}

fn check_line<'a>(
    task: &Task<'a>,
    story_phase: bool,
    no_story: Option<&str>,
    seen: &mut HashSet<&'a str>,
    sink: &mut dyn Sink,
) {
    let label = task.label();
    if !task.obj.contains_key("checkbox") {
        let marker = text(task.obj, "marker");
        let message = if marker.is_empty() || marker == "-" {
            format!("{label}: a task line starts with a checkbox, `- [ ]`")
        } else {
            format!("{label}: the line starts with `{marker}`, and a task line starts with a checkbox, `- [ ]` (`- [x]` when done); Spec Kit's agents may skip it")
        };
        sink.push(
            Diagnostic::error("speckit.task.checkbox", task.at.key("line"), message).with_hint(
                format!(
                    "write it as `- [ ] {} Description`",
                    task.id.unwrap_or("T001")
                ),
            ),
        );
    }
    if task.obj.contains_key("nested") {
        sink.push(
            Diagnostic::warning(
                "speckit.task.nested",
                task.at.key("line"),
                format!("{label} is indented under the task above: read as a task of its own, in file order, though the template's task lines are not nested"),
            )
            .with_hint("start the line at the margin, `- [ ] T011 ...`"),
        );
    }
    check_id(task, seen, sink);
    let description = task.description();
    if description.is_empty() {
        sink.push(
            Diagnostic::error(
                "speckit.task.description",
                task.at.key("line"),
                format!("{label}: the task has no description"),
            )
            .with_hint("say what to do and name the exact file paths"),
        );
    }
    if let Some(m) = PLACEHOLDER_RE.find(description) {
        sink.push(
            Diagnostic::warning(
                "speckit.task.placeholder",
                task.at.key("description"),
                format!(
                    "{label}: `{}` looks like a placeholder of the template",
                    m.as_str()
                ),
            )
            .with_hint("fill in the real name; the template's sample tasks are not meant to stay"),
        );
    }
    check_story(task, story_phase, no_story, sink);
}

/// The task's id: there, `T` and a number, and not an earlier task's.
fn check_id<'a>(task: &Task<'a>, seen: &mut HashSet<&'a str>, sink: &mut dyn Sink) {
    match task.id {
        None => sink.push(
            Diagnostic::error(
                "speckit.task.id",
                task.at.key("line"),
                "a task line has no task id after its checkbox",
            )
            .with_hint("number it: `- [ ] T001 Description`, ids in execution order"),
        ),
        Some(id) if !ID_RE.is_match(id) => sink.push(
            Diagnostic::error(
                "speckit.task.id",
                task.at.key("id"),
                format!("'{id}' is not a task id: `T` and a number, such as T001"),
            )
            .with_hint("replace the template's TXXX with the next number"),
        ),
        Some(id) if !seen.insert(id) => sink.push(
            Diagnostic::error(
                "speckit.task.duplicate-id",
                task.at.key("id"),
                format!("{id} is the id of an earlier task too"),
            )
            .with_hint("number every task once"),
        ),
        Some(_) => {}
    }
}

/// The task's story label against its phase: a user story phase's tasks
/// have one, the setup's and polish's (`no_story` names which) none.
fn check_story(task: &Task<'_>, story_phase: bool, no_story: Option<&str>, sink: &mut dyn Sink) {
    let label = task.label();
    if let (Some(kind), Some(story)) = (no_story, task.obj.get("story").and_then(Value::as_str)) {
        sink.push(
            Diagnostic::warning(
                "speckit.task.story-phase",
                task.at.key("story"),
                format!("{label}: a task of the {kind} phase has the story label [{story}], which the template gives to tasks of user story phases only"),
            )
            .with_hint("move the task to its story's phase, or remove the label"),
        );
    }
    if story_phase && !task.obj.contains_key("story") && !task.done {
        sink.push(
            Diagnostic::warning(
                "speckit.task.story",
                task.at.key("line"),
                format!("{label}: a task of a user story phase has no story label such as [US1]"),
            )
            .with_hint("add the story label after the id (and `[P]`)"),
        );
    }
}

/// A warning where ids break the template's "sequential number (T001,
/// T002, T003...) in execution order": `T000`, a gap, or an id no greater
/// than the one before. Repeated ids are errors of their own.
fn sequence(tasks: &[Task<'_>], sink: &mut dyn Sink) {
    let mut before: Option<(u64, &str)> = None;
    for t in tasks {
        let Some(id) = t.id.filter(|id| ID_RE.is_match(id)) else {
            continue;
        };
        let Ok(n) = id[1..].parse::<u64>() else {
            continue;
        };
        let width = id.len() - 1;
        let problem = match before {
            _ if n == 0 => Some("ids start at T001".to_string()),
            None if n > 1 => Some(format!("the first task is {id}, not T{:0width$}", 1)),
            Some((b, _)) if n == b => None,
            Some((b, prev)) if n < b => {
                Some(format!("{id} comes after {prev}, out of execution order"))
            }
            Some((b, prev)) if n > b + 1 => Some(format!(
                "{id} follows {prev}: T{:0width$} is missing",
                b + 1
            )),
            _ => None,
        };
        if let Some(problem) = problem {
            sink.push(
                Diagnostic::warning("speckit.task.sequence", t.at.key("id"), problem)
                    .with_hint("number the tasks T001, T002, T003... in the order they run, as the template asks"),
            );
        }
        if before.is_none_or(|(b, _)| n > b) {
            before = Some((n, id));
        }
    }
}

/// A warning for each setext heading (a line underlined with `---`): it
/// looks like a phase to a reader, but only `## ` headings start one.
fn setext(value: &Value, sink: &mut dyn Sink) {
    let headings = value.get("setext").and_then(Value::as_array);
    for (k, heading) in headings.into_iter().flatten().enumerate() {
        let heading = heading.as_str().unwrap_or_default();
        sink.push(
            Diagnostic::warning(
                "speckit.phase.setext",
                Pointer::root().key("setext").index(k),
                format!("`{heading}` is underlined with `---`, a heading that does not start a phase here: its tasks stay in the phase above"),
            )
            .with_hint(format!("write it as `## {heading}`")),
        );
    }
}

/// The `depends on T012` notes of each task's description, checked.
fn dependencies(tasks: &[Task<'_>], sink: &mut dyn Sink) -> Vec<Vec<String>> {
    let ids: HashSet<&str> = tasks.iter().filter_map(|t| t.id).collect();
    tasks
        .iter()
        .map(|t| {
            let mut deps = Vec::new();
            for phrase in DEPENDS_RE.captures_iter(t.description()) {
                for r in REF_RE.find_iter(&phrase[1]) {
                    let r = r.as_str();
                    if Some(r) == t.id {
                        sink.push(Diagnostic::error(
                            "speckit.dependency.self",
                            t.at.key("description"),
                            format!("{r} depends on itself"),
                        ));
                    } else if !ids.contains(r) {
                        sink.push(
                            Diagnostic::error(
                                "speckit.dependency.unknown",
                                t.at.key("description"),
                                format!(
                                    "{}: depends on {r}, which is no task of this file",
                                    t.label()
                                ),
                            )
                            .with_hint("name a task id of this file, or remove the note"),
                        );
                    } else if !deps.iter().any(|d| d == r) {
                        deps.push(r.to_string());
                    }
                }
            }
            deps
        })
        .collect()
}

/// The tasks each task waits for besides the notes: within a phase, a
/// task without `[P]` waits for every task above it in its section, a
/// `[P]` task for the last task without `[P]` above it (so a run of `[P]`
/// tasks goes side by side), and a section for the one before; the first
/// tasks of a phase wait for the whole phase before (phases are barriers).
fn order(tasks: &[Task<'_>]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); tasks.len()];
    // Whether a later task of its phase waits for a task: the open tasks
    // of a phase or section that none waits for are what the next phase
    // or section waits for. Marked as waits are made, read at the
    // boundaries, so a wide `[P]` run costs its length, not its square.
    let mut waited = vec![false; tasks.len()];
    let mut phase_tasks: Vec<usize> = Vec::new();
    let mut section_tasks: Vec<usize> = Vec::new();
    let mut section_entry: Vec<usize> = Vec::new();
    // What a `[P]` task waits for, and the `[P]` tasks since.
    let mut base: Vec<usize> = Vec::new();
    let mut group: Vec<usize> = Vec::new();
    let mut at: Option<(usize, u64)> = None;
    let ends = |list: &mut Vec<usize>, waited: &[bool]| -> Vec<usize> {
        std::mem::take(list)
            .into_iter()
            .filter(|&j| !waited[j])
            .collect()
    };
    for (i, t) in tasks.iter().enumerate() {
        if t.done {
            continue;
        }
        match at {
            Some((p, _)) if p != t.phase => {
                section_entry = ends(&mut phase_tasks, &waited);
                section_tasks.clear();
                base = section_entry.clone();
                group.clear();
            }
            Some((_, s)) if s != t.section => {
                let section_ends = ends(&mut section_tasks, &waited);
                if !section_ends.is_empty() {
                    section_entry = section_ends;
                }
                base = section_entry.clone();
                group.clear();
            }
            _ => {}
        }
        at = Some((t.phase, t.section));
        let mut waits = base.clone();
        if t.parallel {
            group.push(i);
        } else {
            waits.append(&mut group);
            base = vec![i];
        }
        for &j in &waits {
            waited[j] = true;
        }
        phase_tasks.push(i);
        section_tasks.push(i);
        out[i] = waits;
    }
    out
}

/// One ticket per task not yet checked off, in file order.
fn build(
    value: &Value,
    phases: &[Value],
    tasks: &[Task<'_>],
    notes: Vec<Vec<String>>,
    sink: &mut dyn Sink,
) -> Plan {
    let waits = order(tasks);
    let done: HashSet<&str> = tasks
        .iter()
        .filter(|t| t.done)
        .filter_map(|t| t.id)
        .collect();
    let mut tickets = Vec::new();
    for ((t, from_notes), from_order) in tasks.iter().zip(notes).zip(waits) {
        let (Some(id), false) = (t.id, t.done) else {
            continue;
        };
        let mut depends_on: Vec<String> = from_order
            .iter()
            .filter_map(|&j| tasks[j].id)
            .map(String::from)
            .collect();
        for d in from_notes {
            if !done.contains(d.as_str()) && !depends_on.contains(&d) {
                depends_on.push(d);
            }
        }
        let mut ticket = Ticket::new(id, body(t, &phases[t.phase]));
        ticket.title = t.description().chars().take(120).collect();
        ticket.depends_on = depends_on;
        ticket.scope = scope(t, sink);
        let mut meta = Map::new();
        meta.insert("phase".into(), t.phase.into());
        meta.insert("section".into(), t.section.into());
        meta.insert("description".into(), t.description().into());
        if let Some(more) = t.obj.get("more") {
            meta.insert("more".into(), more.clone());
        }
        if t.parallel {
            meta.insert("parallel".into(), true.into());
        }
        if let Some(story) = t.obj.get("story") {
            meta.insert("story".into(), story.clone());
        }
        ticket
            .metadata
            .insert("speckit".into(), Value::Object(meta));
        tickets.push(ticket);
    }
    if let Some(first) = tasks.iter().find(|t| t.done) {
        sink.push(Diagnostic::advisory(
            "speckit.task.done",
            first.at.key("checkbox"),
            format!(
                "{} checked off (`[X]`): not run, and a dependency on one is met",
                crate::words::count(done.len(), "task")
            ),
        ));
    }
    let mut plan = Plan::new(Format::Speckit, tickets);
    let mut source = Map::new();
    if let Some(title) = value.get("title") {
        source.insert("title".into(), title.clone());
    }
    let outline: Vec<Value> = phases
        .iter()
        .map(|p| {
            let mut o = Map::new();
            for key in ["heading", "notes"] {
                o.insert(key.into(), p.get(key).cloned().unwrap_or(Value::Null));
            }
            Value::Object(o)
        })
        .collect();
    source.insert("phases".into(), Value::Array(outline));
    plan.metadata
        .insert("speckit".into(), Value::Object(source));
    plan
}

/// The prompt: the task line's description and the lines under it, then
/// its phase and what the phase is for.
fn body(t: &Task<'_>, phase: &Value) -> String {
    let mut first = t.description().to_string();
    for more in t
        .obj
        .get("more")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        first.push('\n');
        first.push_str(more);
    }
    let mut parts = vec![first];
    if let Some(story) = t.obj.get("story").and_then(Value::as_str) {
        parts.push(format!("User story: {story}"));
    }
    if let Some(heading) = phase.get("heading").and_then(Value::as_str) {
        let notes: Vec<&str> = phase
            .get("notes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut context = format!("Phase: {heading}");
        for n in notes {
            context.push('\n');
            context.push_str(n);
        }
        parts.push(context);
    }
    parts.join("\n\n")
}

/// The file paths of the description (and the lines under it), else the
/// whole repository with a warning.
fn scope(t: &Task<'_>, sink: &mut dyn Sink) -> Vec<ScopeEntry> {
    let mut scope: Vec<ScopeEntry> = Vec::new();
    let mut texts = vec![t.description()];
    texts.extend(
        t.obj
            .get("more")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str),
    );
    let mut refused = false;
    for path in texts.into_iter().flat_map(paths) {
        let entry = super::foreign::scope_entry(
            "speckit.task.path",
            &t.label(),
            &path,
            ScopeOp::Any,
            &t.at.key("description"),
            sink,
        );
        match entry {
            Some(entry) if !scope.iter().any(|s| s.pattern == entry.pattern) => scope.push(entry),
            Some(_) => {}
            None => refused = true,
        }
    }
    if scope.is_empty() && !refused {
        return super::foreign::everything(
            "speckit.task.no-files",
            &t.label(),
            "the description names no file path",
            &t.at.key("description"),
            sink,
        );
    }
    scope
}

/// The words of `text` that are file paths: with a `/` and a file name
/// with an extension, or ending in `/` (a folder), or any file name in
/// backticks. An endpoint (`/api/users`), a URL or `and/or` is none.
pub fn paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split_whitespace() {
        let quoted = word.starts_with('`');
        let w = word.trim_matches(|c: char| {
            matches!(c, '`' | '"' | '\'' | '(' | ')' | ',' | ';' | ':' | '*')
        });
        let w = w.trim_end_matches('.');
        if w.is_empty() || w.contains("://") || w.starts_with('-') {
            continue;
        }
        let name = w.rsplit('/').next().unwrap_or(w);
        let has_extension = name.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty() && !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric())
        });
        let folder = w.ends_with('/') && w.len() > 1;
        let path_like = w
            .chars()
            .all(|c| c.is_alphanumeric() || "/._-[]{}*@+~".contains(c));
        // An endpoint (`/api/users`) is no path; `/etc/app.conf` or
        // `/srv/data/` is one, outside the repository, which the scope refuses.
        if path_like
            && ((w.contains('/') && (has_extension || folder)) || (quoted && has_extension))
        {
            out.push(w.to_string());
        }
    }
    out
}

/// Spec Kit's `tasks.md` in the table of formats.
pub struct Speckit;

impl super::PlanFormat for Speckit {
    fn format(&self) -> Format {
        Format::Speckit
    }

    fn detect(&self, _root: crate::view::Obj<'_>) -> super::Fit {
        super::Fit::No(format!(
            "a Spec Kit tasks.md is Markdown (a `.md` file, or `{} speckit`)",
            crate::Flag::Format
        ))
    }

    fn validate(&self, doc: &Document, _options: &Options, sink: &mut dyn Sink) -> Option<Plan> {
        validate(&doc.value(), sink)
    }

    fn emit(&self, plan: &Plan, sink: &mut dyn Sink) -> Value {
        Value::String(emit::emit(plan, sink))
    }

    fn write(&self, plan: &Plan, sink: &mut dyn Sink) -> String {
        emit::emit(plan, sink)
    }

    fn schema(&self) -> Option<Value> {
        None
    }

    fn pointer(&self, _i: usize) -> [Pointer; 2] {
        [Pointer::root().key("phases"), Pointer::root()]
    }

    fn ticket_pointers(
        &self,
        root: crate::view::Val<'_>,
        plan: &Plan,
    ) -> Option<Vec<Vec<Pointer>>> {
        let items = super::phase_items(root, "tasks");
        Some(
            (plan.tickets.iter())
                .map(|t| match items.get(&t.id) {
                    Some(at) => vec![at.key("description"), at.clone()],
                    None => vec![],
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_in_descriptions() {
        let p = |s: &str| paths(s);
        assert_eq!(
            p("Create User model in src/models/user.py"),
            ["src/models/user.py"]
        );
        assert_eq!(
            p("Implement GET /api/users in src/api/users.ts."),
            ["src/api/users.ts"]
        );
        assert_eq!(
            p("Implement authentication/authorization framework"),
            Vec::<String>::new()
        );
        assert_eq!(p("Documentation updates in docs/"), ["docs/"]);
        assert_eq!(p("Edit `package.json` and README.md"), ["package.json"]);
        assert_eq!(p("see https://example.com/a.html"), Vec::<String>::new());
        assert_eq!(p("Serve GET /api/users"), Vec::<String>::new());
        assert_eq!(
            p("Read /etc/app.conf and ../x.py"),
            ["/etc/app.conf", "../x.py"]
        );
    }
}
