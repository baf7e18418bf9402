//! Taskmaster's `tasks.json`: the standard form (`{"tasks": [...],
//! "metadata": {...}}`) and the tagged form (`{"master": {"tasks": [...]}}`),
//! checked against Taskmaster's own types and its `validate-dependencies`
//! rules, and mapped to and from the IR (see `docs/formats/taskmaster.md`).

use super::foreign::{self, Stated, Verification};
use super::Options;
use crate::diag::{Diagnostic, Sink};
use crate::model::{Format, Plan, ScopeEntry, ScopeOp, Ticket};
use crate::pointer::Pointer;
use crate::view::{Arr, Obj, Val};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

mod cycles;
mod emit;

/// Taskmaster's task statuses (`TaskStatus`).
pub const STATUSES: [&str; 8] = [
    "pending",
    "in-progress",
    "done",
    "deferred",
    "cancelled",
    "blocked",
    "review",
    "completed",
];

/// Statuses of work that is over: such a task is not run, and a dependency
/// on it is met (`cancelled` with a warning: the work it stood for is not there).
const FINISHED: [&str; 3] = ["done", "completed", "cancelled"];

/// Taskmaster's priorities (`TaskPriority`).
const PRIORITIES: [&str; 4] = ["low", "medium", "high", "critical"];

/// The actions of a `relevantFiles` entry (`RelevantFile.action`).
const ACTIONS: [&str; 3] = ["create", "modify", "reference"];

/// The keys of the standard form; any other top-level key makes the file tagged.
const STANDARD_KEYS: [&str; 2] = ["tasks", "metadata"];

/// The tag Taskmaster reads when none is named.
const DEFAULT_TAG: &str = "master";

/// The task list a document holds, and where it stands.
struct List<'a> {
    /// The tag, for the tagged form.
    tag: Option<&'a str>,
    /// The object holding `tasks`.
    at: Pointer,
    obj: &'a Map<String, Value>,
}

/// One task or subtask as read, with what the checks found about it.
struct Task<'a> {
    at: Pointer,
    obj: &'a Map<String, Value>,
    /// The id as Taskmaster compares it (`"3"`), when it is a valid one.
    id: Option<String>,
    status: &'a str,
    subtasks: Vec<Task<'a>>,
}

impl Task<'_> {
    fn finished(&self) -> bool {
        FINISHED.contains(&self.status)
    }

    fn label(&self, parent: Option<&Task<'_>>) -> String {
        let id = self.id.as_deref().unwrap_or("?");
        match parent {
            Some(p) => format!("subtask {}.{id}", p.id.as_deref().unwrap_or("?")),
            None => format!("task {id}"),
        }
    }
}

/// Validates a Taskmaster document; the plan when there was no error.
pub fn validate(value: &Value, options: &Options, sink: &mut dyn Sink) -> Option<Plan> {
    let Some(root) = value.as_object() else {
        sink.push(Diagnostic::error(
            "taskmaster.root",
            "",
            "a tasks.json must be a JSON object: `{\"tasks\": [...]}` or `{\"master\": {\"tasks\": [...]}}`",
        ));
        return None;
    };
    let list = select(
        root,
        options.tag.as_deref(),
        options.current_tag.as_ref(),
        sink,
    )?;
    let tasks_at = list.at.key("tasks");
    let Some(items) = list.obj.get("tasks").and_then(Value::as_array) else {
        sink.push(
            Diagnostic::error(
                "taskmaster.tasks",
                &tasks_at,
                "`tasks` must be an array of tasks",
            )
            .with_hint("write `\"tasks\": []` with one object per task"),
        );
        return None;
    };
    let mut counting = crate::diag::Counting::new(sink);
    let tasks = read_tasks(items, &tasks_at, None, &mut counting);
    check_ids(&tasks, None, &mut counting);
    let (deps, edges) = resolve(&tasks, &mut counting);
    let plan = build(&list, &tasks, deps, options, &mut counting);
    // Repeated or missing ids make cycles of their own; they are named already.
    if counting.errors == 0 {
        let named = cycles::check_task_cycles(&tasks, edges, &mut counting);
        cycles::check_cycles(&plan, &tasks, &named, &mut counting);
    }
    (counting.errors == 0).then_some(plan)
}

/// The task list Taskmaster would read: the standard form's, else the
/// tag asked for, else Taskmaster's current tag, else `master` (which is
/// also what Taskmaster falls back to when the current tag is not in the
/// file); no `master` then is an error listing the tags.
fn select<'a>(
    root: &'a Map<String, Value>,
    wanted: Option<&'a str>,
    current: Option<&'a super::CurrentTag>,
    sink: &mut dyn Sink,
) -> Option<List<'a>> {
    let tags: Vec<&str> = root
        .keys()
        .map(String::as_str)
        .filter(|k| !STANDARD_KEYS.contains(k))
        .collect();
    if tags.is_empty() {
        if let Some(tag) = wanted.filter(|t| *t != DEFAULT_TAG) {
            sink.push(Diagnostic::error(
                "taskmaster.tag.unknown",
                "",
                format!("no tag `{tag}`: this tasks.json is in the standard form, whose tasks are the `{DEFAULT_TAG}` tag's"),
            ));
            return None;
        }
        return Some(List {
            tag: None,
            at: Pointer::root(),
            obj: root,
        });
    }
    let tag = match wanted {
        Some(t) if tags.contains(&t) => t,
        None => current_or_master(&tags, current, sink)?,
        Some(t) => {
            sink.push(
                Diagnostic::error(
                    "taskmaster.tag.unknown",
                    "",
                    format!(
                        "no tag `{t}` in this tasks.json (it has {})",
                        tag_list(&tags)
                    ),
                )
                .with_hint(format!(
                    "pass `{} NAME` with one of the tags above",
                    crate::Flag::Tag
                )),
            );
            return None;
        }
    };
    let at = Pointer::root().key(tag);
    let others: Vec<&str> = tags.iter().copied().filter(|t| *t != tag).collect();
    if !others.is_empty() {
        sink.push(
            Diagnostic::advisory(
                "taskmaster.tag.others",
                &at,
                format!(
                    "reading the tag `{tag}`; the file also has {}, which are not read",
                    tag_list(&others)
                ),
            )
            .at_key()
            .with_hint(format!(
                "pass `{} NAME` to read another tag",
                crate::Flag::Tag
            )),
        );
    }
    match root.get(tag).and_then(Value::as_object) {
        Some(obj) if obj.contains_key("tasks") => Some(List {
            tag: Some(tag),
            at,
            obj,
        }),
        _ => {
            sink.push(
                Diagnostic::error(
                    "taskmaster.tag.type",
                    &at,
                    format!("the tag `{tag}` must be an object with a `tasks` array"),
                )
                .with_hint("write `{\"tasks\": [...]}` under the tag, or use the standard form `{\"tasks\": [...]}`"),
            );
            None
        }
    }
}

/// The current tag when the file has it, else `master` (with a warning
/// when a current tag was named), else an error listing the tags.
fn current_or_master<'a>(
    tags: &[&'a str],
    current: Option<&'a super::CurrentTag>,
    sink: &mut dyn Sink,
) -> Option<&'a str> {
    if let Some(c) = current {
        if let Some(t) = tags.iter().find(|t| **t == c.tag) {
            return Some(t);
        }
        if c.tag != DEFAULT_TAG {
            sink.push(
                Diagnostic::warning(
                    "taskmaster.tag.current",
                    "",
                    format!("the current tag `{}` (`{}`) is not in this tasks.json; Taskmaster reads `{DEFAULT_TAG}` then", c.tag, c.from),
                )
                .with_hint(format!("pass `{} NAME` to read another tag", crate::Flag::Tag)),
            );
        }
    }
    if let Some(t) = tags.iter().find(|t| **t == DEFAULT_TAG) {
        return Some(t);
    }
    let current = current.map_or(String::new(), |c| format!(" (`{}` in `{}`)", c.tag, c.from));
    sink.push(
        Diagnostic::error(
            "taskmaster.tag.none",
            "",
            format!(
                "no tag to read: Taskmaster reads the current tag{current}, else `{DEFAULT_TAG}`, and this tasks.json has {}",
                tag_list(tags)
            ),
        )
        .with_hint(format!("pass `{} NAME` with one of the tags above", crate::Flag::Tag)),
    );
    None
}

fn tag_list(tags: &[&str]) -> String {
    let shown: Vec<String> = tags.iter().take(10).map(|t| format!("`{t}`")).collect();
    let more = tags.len().saturating_sub(10);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "{} {}{tail}",
        crate::words::plural(tags.len(), "tag"),
        shown.join(", ")
    )
}

/// Reads and checks every task of `items` (the subtasks of `parent`, when given).
fn read_tasks<'a>(
    items: &'a [Value],
    at: &Pointer,
    parent: Option<&Task<'_>>,
    sink: &mut dyn Sink,
) -> Vec<Task<'a>> {
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let Some(obj) = item.as_object() else {
            let what = if parent.is_some() { "subtask" } else { "task" };
            sink.push(Diagnostic::error(
                format!("taskmaster.{what}.type"),
                &at,
                format!("a {what} must be an object"),
            ));
            continue;
        };
        let mut task = Task {
            id: read_id(obj, &at, parent, sink),
            at,
            obj,
            status: "pending",
            subtasks: Vec::new(),
        };
        check_fields(&mut task, parent, sink);
        if parent.is_none() {
            match obj.get("subtasks") {
                None | Some(Value::Null) => {}
                Some(Value::Array(subs)) => {
                    let subs_at = task.at.key("subtasks");
                    task.subtasks = read_tasks(subs, &subs_at, Some(&task), sink);
                    check_ids(&task.subtasks, Some(&task), sink);
                }
                Some(_) => sink.push(Diagnostic::error(
                    "taskmaster.task.subtasks",
                    task.at.key("subtasks"),
                    format!("{}: `subtasks` must be an array", task.label(None)),
                )),
            }
        } else if obj.contains_key("subtasks") {
            sink.push(
                Diagnostic::error(
                    "taskmaster.subtask.subtasks",
                    task.at.key("subtasks"),
                    format!(
                        "{}: a subtask cannot have subtasks of its own",
                        task.label(parent)
                    ),
                )
                .at_key(),
            );
        }
        out.push(task);
    }
    out
}

/// The id: a positive integer, or its digits as a string (Taskmaster
/// writes task ids as strings and subtask ids as numbers, and reads both).
fn read_id(
    obj: &Map<String, Value>,
    at: &Pointer,
    parent: Option<&Task<'_>>,
    sink: &mut dyn Sink,
) -> Option<String> {
    let what = if parent.is_some() { "subtask" } else { "task" };
    let id = match obj.get("id") {
        Some(Value::Number(n)) => n.as_u64().filter(|n| *n > 0).map(|n| n.to_string()),
        Some(Value::String(s)) if is_number(s) => Some(s.clone()),
        _ => None,
    };
    if id.is_none() {
        let message = match obj.get("id") {
            None => format!("the {what} has no `id`"),
            Some(v) => format!("the {what} id {v} is not a positive whole number"),
        };
        sink.push(
            Diagnostic::error(format!("taskmaster.{what}.id"), at.key("id"), message)
                .with_hint("give it `\"id\": N`, N a whole number from 1 not used by another task"),
        );
    }
    id
}

fn is_number(s: &str) -> bool {
    s.len() <= 15 && s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0') && !s.is_empty()
}

/// The field checks of Taskmaster's `Task` type: required `title` and
/// `description`, typed optional fields, known `status` and `priority`.
fn check_fields(task: &mut Task<'_>, parent: Option<&Task<'_>>, sink: &mut dyn Sink) {
    let label = task.label(parent);
    let what = if parent.is_some() { "subtask" } else { "task" };
    for (key, required) in [("title", true), ("description", true)] {
        match task.obj.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => {}
            Some(Value::String(_)) => sink.push(Diagnostic::error(
                format!("taskmaster.{what}.{key}"),
                task.at.key(key),
                format!("{label}: the {key} is blank"),
            )),
            None if !required => {}
            v => sink.push(
                Diagnostic::error(
                    format!("taskmaster.{what}.{key}"),
                    task.at.key(key),
                    match v {
                        None => format!("{label}: no `{key}`"),
                        Some(v) => format!("{label}: `{key}` must be a string, not {v}"),
                    },
                )
                .with_hint(format!(
                    "Taskmaster requires a non-empty `{key}` on every {what}"
                )),
            ),
        }
    }
    for (key, rule) in [("details", "details"), ("testStrategy", "test-strategy")] {
        if let Some(v) = task.obj.get(key).filter(|v| !v.is_string() && !v.is_null()) {
            sink.push(Diagnostic::error(
                format!("taskmaster.{what}.{rule}"),
                task.at.key(key),
                format!("{label}: `{key}` must be a string or null, not {v}"),
            ));
        }
    }
    if let Some(s) = one_of(task, "status", &STATUSES, &label, what, sink) {
        task.status = s;
    }
    one_of(task, "priority", &PRIORITIES, &label, what, sink);
    check_criteria(task, &label, what, sink);
    check_relevant_files(task, &label, what, sink);
    match task.obj.get("dependencies") {
        None | Some(Value::Null) | Some(Value::Array(_)) => {}
        Some(v) => sink.push(Diagnostic::error(
            format!("taskmaster.{what}.dependencies"),
            task.at.key("dependencies"),
            format!("{label}: `dependencies` must be an array of ids, not {v}"),
        )),
    }
}

/// The value of `key` when it is one of `allowed` (null and absent are
/// fine, as Taskmaster's types allow); an error with the nearest name otherwise.
fn one_of<'a>(
    task: &Task<'a>,
    key: &str,
    allowed: &[&'static str],
    label: &str,
    what: &str,
    sink: &mut dyn Sink,
) -> Option<&'a str> {
    let v = task.obj.get(key)?;
    if let Some(s) = v.as_str().and_then(|s| allowed.iter().find(|a| **a == s)) {
        return Some(s);
    }
    if v.is_null() {
        return None;
    }
    let mut d = Diagnostic::error(
        format!("taskmaster.{what}.{key}"),
        task.at.key(key),
        format!("{label}: {key} {v} is not one of {}", allowed.join(", ")),
    );
    if let Some(near) = v
        .as_str()
        .and_then(|s| crate::suggest::closest(s, allowed.iter().copied()))
    {
        d = d.with_hint(format!("did you mean `{near}`?"));
    }
    sink.push(d);
    None
}

fn check_criteria(task: &Task<'_>, label: &str, what: &str, sink: &mut dyn Sink) {
    let key = "acceptanceCriteria";
    let Some(v) = task.obj.get(key) else { return };
    let ok = v
        .as_array()
        .is_some_and(|items| items.iter().all(Value::is_string));
    if !ok {
        sink.push(Diagnostic::error(
            format!("taskmaster.{what}.acceptance-criteria"),
            task.at.key(key),
            format!("{label}: `{key}` must be an array of strings"),
        ));
    }
}

fn check_relevant_files(task: &Task<'_>, label: &str, what: &str, sink: &mut dyn Sink) {
    let Some(v) = task.obj.get("relevantFiles") else {
        return;
    };
    let at = task.at.key("relevantFiles");
    let Some(files) = v.as_array() else {
        sink.push(Diagnostic::error(
            format!("taskmaster.{what}.relevant-files"),
            &at,
            format!("{label}: `relevantFiles` must be an array of {{path, description, action}}"),
        ));
        return;
    };
    for (i, f) in files.iter().enumerate() {
        let at = at.index(i);
        let path = f.get("path").and_then(Value::as_str);
        let action = f.get("action").and_then(Value::as_str);
        if path.is_none() || !action.is_some_and(|a| ACTIONS.contains(&a)) {
            sink.push(
                Diagnostic::error(
                    format!("taskmaster.{what}.relevant-files"),
                    &at,
                    format!("{label}: a relevant file needs a string `path` and an `action` of {}", ACTIONS.join(", ")),
                )
                .with_hint("write {\"path\": \"src/a.ts\", \"description\": \"...\", \"action\": \"modify\"}"),
            );
        }
    }
}

/// Ids unique among their siblings, as Taskmaster looks tasks up by id.
fn check_ids(tasks: &[Task<'_>], parent: Option<&Task<'_>>, sink: &mut dyn Sink) {
    let mut seen = HashSet::new();
    for t in tasks {
        let Some(id) = &t.id else { continue };
        if !seen.insert(id.as_str()) {
            let what = if parent.is_some() { "subtask" } else { "task" };
            sink.push(
                Diagnostic::error(
                    format!("taskmaster.{what}.duplicate-id"),
                    t.at.key("id"),
                    format!("{} is not the only one with this id", t.label(parent)),
                )
                .with_hint("give every task its own number; `task-master fix-dependencies` does not renumber"),
            );
        }
    }
}

/// Each task's ticket dependencies (the ids of unfinished tasks it waits
/// for), after checking every dependency of tasks and subtasks as
/// `validate-dependencies` does: it names a task or subtask that exists,
/// and not the task itself.
///
/// Also gives every edge between tasks and subtasks as Taskmaster follows
/// them (`"2.1"` for a subtask), finished tasks included.
fn resolve(tasks: &[Task<'_>], sink: &mut dyn Sink) -> (Vec<Vec<String>>, Vec<(String, String)>) {
    let by_id: HashMap<&str, &Task<'_>> = tasks
        .iter()
        .filter_map(|t| Some((t.id.as_deref()?, t)))
        .collect();
    let mut out = Vec::new();
    let mut edges = Vec::new();
    for t in tasks {
        let mut deps: Vec<String> = Vec::new();
        let lists = std::iter::once((t, None)).chain(t.subtasks.iter().map(|s| (s, Some(t))));
        for (who, parent) in lists {
            let Some(items) = who.obj.get("dependencies").and_then(Value::as_array) else {
                continue;
            };
            for (j, dep) in items.iter().enumerate() {
                let at = who.at.key("dependencies").index(j);
                let target = reference(dep, who, parent, &by_id, &at, &mut edges, sink);
                if let Some(target) = target {
                    add_dependency(t, target, who, parent, &at, &mut deps, sink);
                }
            }
        }
        out.push(deps);
    }
    (out, edges)
}

/// The task a dependency of `who` (a task, or a subtask of `parent`) waits
/// for, or None when it is inside the same task or wrong (reported).
fn reference<'t, 'a>(
    dep: &Value,
    who: &Task<'_>,
    parent: Option<&Task<'_>>,
    by_id: &HashMap<&str, &'t Task<'a>>,
    at: &Pointer,
    edges: &mut Vec<(String, String)>,
    sink: &mut dyn Sink,
) -> Option<&'t Task<'a>> {
    let label = who.label(parent);
    let text = match dep {
        Value::Number(n) => n.as_u64().filter(|n| *n > 0).map(|n| n.to_string()),
        Value::String(s) => Some(s.trim().to_string()),
        _ => None,
    };
    let parts: Option<(String, Option<String>)> = text.and_then(|s| match s.split_once('.') {
        Some((a, b)) if is_number(a) && is_number(b) => Some((a.to_string(), Some(b.to_string()))),
        None if is_number(&s) => Some((s, None)),
        _ => None,
    });
    let Some((task_id, sub_id)) = parts else {
        sink.push(Diagnostic::error(
            "taskmaster.dependency.form",
            at,
            format!("{label}: dependency {dep} is not a task id (`3`) or a subtask id (`3.2`)"),
        ));
        return None;
    };
    // A bare number in a subtask's list is a sibling subtask when there
    // is one (Taskmaster's reading), else a task.
    let (task_id, sub_id) = match (parent, &sub_id, dep.is_number()) {
        (Some(p), None, true) if p.subtasks.iter().any(|s| s.id.as_ref() == Some(&task_id)) => {
            (p.id.clone().unwrap_or_default(), Some(task_id))
        }
        _ => (task_id, sub_id),
    };
    let shown = match &sub_id {
        Some(s) => format!("{task_id}.{s}"),
        None => task_id.clone(),
    };
    let own = match parent {
        Some(p) => format!(
            "{}.{}",
            p.id.as_deref().unwrap_or("?"),
            who.id.as_deref().unwrap_or("?")
        ),
        None => who.id.clone().unwrap_or_default(),
    };
    if shown == own {
        sink.push(
            Diagnostic::error(
                "taskmaster.dependency.self",
                at,
                format!("{label} depends on itself"),
            )
            .with_hint("remove it; `task-master fix-dependencies` does the same"),
        );
        return None;
    }
    let target = by_id.get(task_id.as_str()).copied();
    let exists = match (&target, &sub_id) {
        (Some(t), Some(s)) => t.subtasks.iter().any(|x| x.id.as_ref() == Some(s)),
        (Some(_), None) => true,
        (None, _) => false,
    };
    if !exists {
        sink.push(
            Diagnostic::error(
                "taskmaster.dependency.unknown",
                at,
                format!("{label} depends on {shown}, which does not exist"),
            )
            .with_hint("name an existing task (`3`) or subtask (`3.2`), or remove it"),
        );
        return None;
    }
    edges.push((own, shown));
    let same_task = parent.map_or(who.id.as_ref(), |p| p.id.as_ref()) == Some(&task_id);
    if same_task {
        return None;
    }
    target
}

/// Adds `target` to `deps` (the dependencies of `t`'s ticket) unless its
/// work is over; a cancelled one is dropped with a warning.
fn add_dependency(
    t: &Task<'_>,
    target: &Task<'_>,
    who: &Task<'_>,
    parent: Option<&Task<'_>>,
    at: &Pointer,
    deps: &mut Vec<String>,
    sink: &mut dyn Sink,
) {
    if t.finished() {
        return;
    }
    let Some(id) = target.id.clone() else { return };
    if target.status == "cancelled" {
        sink.push(
            Diagnostic::warning(
                "taskmaster.dependency.cancelled",
                at,
                format!("{} depends on task {id}, which is cancelled; planwright runs it without waiting", who.label(parent)),
            )
            .with_hint("remove the dependency, or reopen the task it names"),
        );
    } else if !target.finished() && !deps.contains(&id) {
        deps.push(id);
    }
}

/// The plan: one ticket per task whose work is not over, in file order.
fn build(
    list: &List<'_>,
    tasks: &[Task<'_>],
    deps: Vec<Vec<String>>,
    options: &Options,
    sink: &mut dyn Sink,
) -> Plan {
    let mut tickets = Vec::new();
    let mut finished = Vec::new();
    for (t, depends_on) in tasks.iter().zip(deps) {
        if t.finished() {
            finished.push(Value::Object(t.obj.clone()));
            continue;
        }
        let Some(id) = t.id.clone() else { continue };
        tickets.push(ticket(t, id, depends_on, options, sink));
    }
    if !finished.is_empty() {
        sink.push(Diagnostic::advisory(
            "taskmaster.task.finished",
            list.at.key("tasks"),
            format!(
                "{} done or cancelled: not run, and a dependency on one is met",
                crate::words::count(finished.len(), "task")
            ),
        ));
    }
    let mut source = Map::new();
    match list.tag {
        Some(tag) => source.insert("tag".into(), tag.into()),
        None => source.insert("form".into(), "standard".into()),
    };
    if let Some(m) = list.obj.get("metadata") {
        source.insert("metadata".into(), m.clone());
    }
    if !finished.is_empty() {
        source.insert("finished".into(), Value::Array(finished));
    }
    let mut plan = Plan::new(Format::Taskmaster, tickets);
    plan.metadata
        .insert("taskmaster".into(), Value::Object(source));
    plan
}

fn ticket(
    t: &Task<'_>,
    id: String,
    depends_on: Vec<String>,
    options: &Options,
    sink: &mut dyn Sink,
) -> Ticket {
    let label = t.label(None);
    let mut ticket = Ticket::new(id, body(t.obj));
    ticket.title = text(t.obj, "title").to_string();
    ticket.depends_on = depends_on;
    ticket.scope = scope(t, &label, sink);
    for (at, text) in verifications(t) {
        match foreign::verification(
            "taskmaster",
            &label,
            &text,
            Stated::Text,
            &at,
            options,
            sink,
        ) {
            Verification::Gate(g) => ticket.gates.push(g),
            Verification::Check(c) => ticket.checks.push(c),
        }
    }
    ticket
        .metadata
        .insert("taskmaster".into(), Value::Object(t.obj.clone()));
    ticket
}

/// What a task says about how to know it is done, in order: its
/// `testStrategy`, its `acceptanceCriteria`, its subtasks' `testStrategy`.
fn verifications(t: &Task<'_>) -> Vec<(Pointer, String)> {
    let mut out = Vec::new();
    let strategy = |obj: &Map<String, Value>| {
        obj.get("testStrategy")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
    };
    if let Some(s) = strategy(t.obj) {
        out.push((t.at.key("testStrategy"), s));
    }
    let criteria = t.obj.get("acceptanceCriteria").and_then(Value::as_array);
    for (i, c) in criteria.into_iter().flatten().enumerate() {
        if let Some(c) = c.as_str().filter(|c| !c.trim().is_empty()) {
            out.push((t.at.key("acceptanceCriteria").index(i), c.to_string()));
        }
    }
    for s in &t.subtasks {
        if let Some(text) = strategy(s.obj) {
            let id = s.id.as_deref().unwrap_or("?");
            let parent = t.id.as_deref().unwrap_or("?");
            out.push((
                s.at.key("testStrategy"),
                format!("subtask {parent}.{id}: {text}"),
            ));
        }
    }
    out
}

/// The files the task names in `relevantFiles` (create and modify; a
/// `reference` is for reading), else the whole repository with a warning.
fn scope(t: &Task<'_>, label: &str, sink: &mut dyn Sink) -> Vec<ScopeEntry> {
    let mut scope = Vec::new();
    // A refused path is an error already: no warning that none was named.
    let mut refused = false;
    let files = t.obj.get("relevantFiles").and_then(Value::as_array);
    for (i, f) in files.into_iter().flatten().enumerate() {
        let (Some(path), Some(action)) = (
            f.get("path").and_then(Value::as_str),
            f.get("action").and_then(Value::as_str),
        ) else {
            continue;
        };
        let op = match action {
            "create" => ScopeOp::Create,
            "modify" => ScopeOp::Modify,
            _ => continue,
        };
        let at = t.at.key("relevantFiles").index(i).key("path");
        let entry = foreign::scope_entry("taskmaster.task.path", label, path, op, &at, sink);
        refused |= entry.is_none();
        scope.extend(entry);
    }
    if scope.is_empty() && !refused {
        return foreign::everything(
            "taskmaster.task.no-files",
            label,
            "the task names no files to create or modify (`relevantFiles`)",
            &t.at,
            sink,
        );
    }
    scope
}

fn text<'a>(obj: &'a Map<String, Value>, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The prompt of a task's ticket: its description and details, then its
/// subtasks as a checklist in file order (they are steps of one ticket).
pub fn body(obj: &Map<String, Value>) -> String {
    let mut parts: Vec<String> = ["description", "details"]
        .iter()
        .map(|k| text(obj, k).trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let subtasks = obj.get("subtasks").and_then(Value::as_array);
    let lines: Vec<String> = subtasks
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .map(subtask_line)
        .collect();
    if !lines.is_empty() {
        parts.push(format!("Subtasks:\n{}", lines.join("\n")));
    }
    parts.join("\n\n")
}

fn subtask_line(s: &Map<String, Value>) -> String {
    let done = FINISHED.contains(&text(s, "status"));
    let id = match s.get("id") {
        Some(Value::String(id)) => id.clone(),
        Some(v) => v.to_string(),
        None => "?".into(),
    };
    let mut line = format!(
        "- [{}] {id}. {}",
        if done { "x" } else { " " },
        text(s, "title").trim()
    );
    let description = text(s, "description").trim();
    if !description.is_empty() {
        line.push_str(&format!(": {description}"));
    }
    for l in text(s, "details").lines().filter(|l| !l.trim().is_empty()) {
        line.push_str(&format!("\n  {}", l.trim_end()));
    }
    line
}

/// Taskmaster's `tasks.json` in the table of formats.
pub struct Taskmaster;

impl super::PlanFormat for Taskmaster {
    fn format(&self) -> Format {
        Format::Taskmaster
    }

    fn detect(&self, root: Obj<'_>) -> super::Fit {
        use super::Fit;
        let holds_tasks = |v: Val<'_>| v.get("tasks").is_some_and(Val::is_array);
        if root.keys().all(|k| STANDARD_KEYS.contains(&k)) && holds_tasks(Val::Object(root)) {
            return Fit::Full;
        }
        let tags: Vec<Val<'_>> = root
            .iter()
            .filter(|(k, _)| !STANDARD_KEYS.contains(k))
            .map(|(_, v)| v)
            .collect();
        if !tags.is_empty() && !root.contains_key("tasks") && tags.iter().all(|v| holds_tasks(*v)) {
            return Fit::Full;
        }
        if root.contains_key("tasks") || tags.iter().any(|v| v.get("tasks").is_some()) {
            return Fit::Partial(
                "`tasks` is not an array of tasks at the top or under every tag".into(),
            );
        }
        Fit::No("no `tasks` key, at the top or under a tag".into())
    }

    fn validate(
        &self,
        doc: &crate::doc::Document,
        options: &Options,
        sink: &mut dyn Sink,
    ) -> Option<Plan> {
        validate(&doc.value(), options, sink)
    }

    fn emit(&self, plan: &Plan, sink: &mut dyn Sink) -> Value {
        emit::emit(plan, sink)
    }

    fn schema(&self) -> Option<Value> {
        None
    }

    fn pointer(&self, i: usize) -> [Pointer; 2] {
        let task = Pointer::root().key("tasks").index(i);
        [task.key("relevantFiles"), task]
    }

    fn ticket_pointers(&self, root: Val<'_>, plan: &Plan) -> Option<Vec<Vec<Pointer>>> {
        let tag = plan
            .metadata
            .get("taskmaster")
            .and_then(|m| m.get("tag"))
            .and_then(Value::as_str);
        let list = match tag {
            Some(tag) => Pointer::root().key(tag),
            None => Pointer::root(),
        };
        let mut place: HashMap<String, usize> = HashMap::new();
        for (k, t) in list_tasks(root, tag)
            .into_iter()
            .flat_map(Arr::iter)
            .enumerate()
        {
            if let Some(id) = t.get("id").and_then(id_of) {
                place.entry(id).or_insert(k);
            }
        }
        Some(
            (plan.tickets.iter())
                .map(|t| match place.get(&t.id) {
                    Some(&k) => {
                        let task = list.key("tasks").index(k);
                        vec![task.key("relevantFiles"), task]
                    }
                    None => vec![],
                })
                .collect(),
        )
    }
}

fn list_tasks<'a>(root: Val<'a>, tag: Option<&str>) -> Option<Arr<'a>> {
    let list = match tag {
        Some(tag) => root.get(tag),
        None => Some(root),
    };
    list?.get("tasks")?.as_array()
}

/// [`id_text`] of a document's value.
fn id_of(v: Val<'_>) -> Option<String> {
    match v {
        Val::Number(n) => Some(n.number()?.to_string()),
        Val::String(s) => Some(s.to_string()),
        _ => None,
    }
}

fn id_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}
