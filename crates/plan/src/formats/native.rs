//! The native format: the IR as JSON, with `"planwright": 1`.

use crate::diag::{Diagnostic, Sink};
use crate::model::{Plan, Ticket};
use crate::pointer::Pointer;
use crate::refname::ref_name_problem;
use crate::schema::{Checker, Formats};
use crate::view::{Arr, Val};
use serde_json::Value;
use std::sync::LazyLock;

mod lenient;

/// The version written in the `planwright` key.
pub const VERSION: u64 = 1;

/// Writes `plan` as a native document.
pub fn emit(plan: &Plan) -> Value {
    let mut doc = serde_json::Map::new();
    doc.insert("planwright".into(), VERSION.into());
    if let Value::Object(fields) = serde_json::to_value(plan).expect("the IR always serializes") {
        doc.extend(fields);
    }
    Value::Object(doc)
}

static CHECKER: LazyLock<Checker> =
    LazyLock::new(|| Checker::new(&schema(), "native", Formats::Assert));

/// The schema of one ticket: a plan is checked with its tickets left out,
/// then a ticket at a time (see [`check_schema`]).
static TICKET_CHECKER: LazyLock<Checker> = LazyLock::new(|| {
    let ticket = crate::schema::items_schema(&schema(), "tickets")
        .expect("the native schema's `tickets` is an array of tickets");
    Checker::new(&ticket, "native", Formats::Assert)
});

/// The values a scope entry's `op` may have.
const OPS: [&str; 5] = ["any", "create", "modify", "delete", "rename"];

/// Reads a native document back into the IR. Schema and semantic errors
/// are reported together: when the schema rejects the document, the
/// semantic checks run on what reads leniently, and stay quiet about every
/// spot the schema (or the lenient read) already named.
pub fn validate(root: Val<'_>, sink: &mut dyn Sink) -> Option<Plan> {
    let bad_ops = check_ops(root, sink);
    let (mut schema_errors, tickets) = check_schema(root, bad_ops.is_empty());
    let mut flagged: Vec<String> = schema_errors.iter().map(|d| d.pointer.clone()).collect();
    flagged.extend(bad_ops.iter().cloned());
    // A misspelt `op` is already named with its fix; the schema's "none of
    // the shapes" for the same entry would only repeat it, vaguely.
    schema_errors.retain(|d| !bad_ops.iter().any(|b| lenient::covers(b, &d.pointer)));
    schema_errors.into_iter().for_each(|d| sink.push(d));
    if !flagged.is_empty() {
        let plan = lenient::read(&root.to_value(), &mut flagged);
        let mut found = Vec::new();
        semantic(&plan, &mut found);
        found
            .into_iter()
            .filter(|d| !flagged.iter().any(|f| lenient::covers(f, &d.pointer)))
            .for_each(|d| sink.push(d));
        return None;
    }
    match tickets.and_then(|tickets| read_plan(root, tickets)) {
        Some(plan) => {
            semantic(&plan, sink);
            Some(plan)
        }
        None => read_whole(&root.to_value(), sink),
    }
}

/// The schema's errors of the document, checked without a `Value` of the
/// whole (a large plan's peak memory, issue 53): the document with an empty
/// `tickets` array, then each ticket as a `Value` of its own, its errors
/// placed under `/tickets/<i>`. While there is no error (and `read`), each
/// ticket is read into the IR as it is checked; the tickets, when all read.
fn check_schema(root: Val<'_>, read: bool) -> (Vec<Diagnostic>, Option<Vec<Ticket>>) {
    let mut errors = Vec::new();
    CHECKER.check(&without_tickets(root), &mut errors);
    let items = root.get("tickets").and_then(Val::as_array);
    // At its size: a list grown by doubling has up to twice the room.
    let count = items.map_or(0, Arr::len);
    let mut tickets = (read && errors.is_empty()).then(|| Vec::with_capacity(count));
    for (i, item) in items.into_iter().flat_map(Arr::iter).enumerate() {
        let value = item.to_value();
        let at = Pointer::root().key("tickets").index(i);
        if TICKET_CHECKER.check_at(&value, &at, &mut errors) > 0 {
            tickets = None;
        }
        if let Some(read) = tickets.as_mut() {
            match serde_json::from_value::<Ticket>(value) {
                Ok(ticket) => read.push(ticket),
                Err(_) => tickets = None,
            }
        }
    }
    (errors, tickets)
}

/// The document with an empty array for its tickets (when they are one).
fn without_tickets(root: Val<'_>) -> Value {
    let Some(fields) = root.as_object() else {
        return root.to_value();
    };
    let fields = fields.iter().map(|(key, value)| {
        let value = match value {
            Val::Array(_) if key == "tickets" => Value::Array(Vec::new()),
            _ => value.to_value(),
        };
        (key.to_string(), value)
    });
    Value::Object(fields.collect())
}

/// The plan of a document the schema accepts, from its fields without the
/// tickets and the tickets already read; `None` when the fields do not
/// read (then [`read_whole`] says why, as it always has).
fn read_plan(root: Val<'_>, tickets: Vec<Ticket>) -> Option<Plan> {
    let Value::Object(mut fields) = without_tickets(root) else {
        return None;
    };
    fields.remove("planwright");
    let plan = serde_json::from_value::<Plan>(Value::Object(fields)).ok()?;
    Some(Plan { tickets, ..plan })
}

/// The document read into the IR as one `Value`: the error of a document
/// the schema accepts but serde does not.
fn read_whole(value: &Value, sink: &mut dyn Sink) -> Option<Plan> {
    let mut fields = value.as_object()?.clone();
    fields.remove("planwright");
    match serde_json::from_value::<Plan>(Value::Object(fields)) {
        Ok(plan) => {
            semantic(&plan, sink);
            Some(plan)
        }
        Err(e) => {
            sink.push(Diagnostic::error(
                "native.schema",
                "",
                format!("not a valid native plan: {e}"),
            ));
            None
        }
    }
}

/// Every check the schema cannot make: references, names, and the
/// warnings of a plan written by hand.
fn semantic(plan: &Plan, sink: &mut dyn Sink) {
    crate::dag::check_references(plan, "native", sink);
    check_names(plan, sink);
    lint(plan, sink);
}

/// One error per scope entry whose `op` is not one of [`OPS`], with the
/// likely intended one; returns the pointers of those entries.
fn check_ops(root: Val<'_>, sink: &mut dyn Sink) -> Vec<String> {
    let mut bad = Vec::new();
    let tickets = root.get("tickets").and_then(Val::as_array);
    for (i, t) in tickets.into_iter().flat_map(Arr::iter).enumerate() {
        let scope = t.get("scope").and_then(Val::as_array);
        for (j, entry) in scope.into_iter().flat_map(Arr::iter).enumerate() {
            let Some(op) = entry.get("op").and_then(Val::as_str) else {
                continue;
            };
            if OPS.contains(&op) {
                continue;
            }
            let at = Pointer::root()
                .key("tickets")
                .index(i)
                .key("scope")
                .index(j);
            let hint = match op {
                // codeboost's and standard_v1's words for the same things.
                "edit" => Some("native calls it `modify`".to_string()),
                "add" => Some("native calls it `create`".to_string()),
                _ => crate::suggest::closest(op, OPS).map(|near| format!("did you mean `{near}`?")),
            };
            let d = Diagnostic::error(
                "native.scope.op",
                at.key("op"),
                format!("scope op '{op}' is not one of {}", OPS.join(", ")),
            );
            sink.push(match hint {
                Some(h) => d.with_hint(h),
                None => d,
            });
            bad.push(String::from(at));
        }
    }
    bad
}

/// Warnings for a plan that is valid but probably not what was meant: a
/// blank body, an empty scope, a scope of the whole repository, no gate.
fn lint(plan: &Plan, sink: &mut dyn Sink) {
    for (i, t) in plan.tickets.iter().enumerate() {
        let at = Pointer::root().key("tickets").index(i);
        if t.body.trim().is_empty() {
            sink.push(
                Diagnostic::warning(
                    "native.ticket.body-blank",
                    at.key("body"),
                    format!(
                        "{}: the body is blank; the agent gets no instructions",
                        t.id
                    ),
                )
                .with_hint("say what to change and how to know it is done"),
            );
        }
        if t.scope.is_empty() {
            sink.push(
                Diagnostic::warning(
                    "native.ticket.scope-empty",
                    at.key("scope"),
                    format!(
                        "{}: the scope is empty; every change the agent makes will be rejected",
                        t.id
                    ),
                )
                .with_hint("list the files or globs the ticket may change"),
            );
        }
        for (k, s) in t.scope.iter().enumerate() {
            if matches!(s.pattern.as_str(), "**" | "**/*") {
                sink.push(
                    Diagnostic::warning("native.scope.everything", at.key("scope").index(k).key("pattern"), format!("{}: scope `{}` lets the ticket change every file of the repository", t.id, s.pattern))
                        .with_hint("narrow it to the folders the ticket needs, so overlaps and scope violations can be caught"),
                );
            }
        }
    }
    if plan.gates.is_empty() && plan.tickets.iter().all(|t| t.gates.is_empty()) {
        sink.push(
            Diagnostic::warning("native.plan.no-gates", "/gates", "the plan has no gates; nothing checks that a ticket's work is correct")
                .with_hint(format!("add `gates` that run the project's tests (`{{\"name\": \"test\", \"argv\": [PROGRAM, ARGUMENTS...]}}`), or give them at run time with `[gates] run` or `{}`", crate::Flag::Gate)),
        );
    }
}

/// What the schema cannot say: ids and the base must be git branch names,
/// and scope and rail patterns must stay inside the repository.
fn check_names(plan: &Plan, sink: &mut dyn Sink) {
    if let Some(why) = ref_name_problem(&plan.base) {
        sink.push(Diagnostic::error(
            "native.plan.base",
            "/base",
            format!("base '{}' is not a valid branch name: {why}", plan.base),
        ));
    }
    for (i, t) in plan.tickets.iter().enumerate() {
        let at = Pointer::root().key("tickets").index(i);
        if let Some(why) = ref_name_problem(&format!("planwright/{}", t.id)) {
            sink.push(Diagnostic::error(
                "native.ticket.id-ref",
                at.key("id"),
                format!("ticket id '{}' cannot be a git branch name: {why}", t.id),
            ));
        }
        let scope = t.scope.iter().map(|s| s.pattern.as_str());
        let fields = [
            ("scope", scope.collect::<Vec<_>>()),
            ("rails", t.rails.iter().map(String::as_str).collect()),
        ];
        for (field, patterns) in fields {
            for (k, pattern) in patterns.into_iter().enumerate() {
                let place = if field == "scope" {
                    at.key(field).index(k).key("pattern")
                } else {
                    at.key(field).index(k)
                };
                if let Some(why) = pattern_problem(pattern) {
                    sink.push(Diagnostic::error(
                        "native.scope.pattern",
                        place,
                        format!("{}: {field} pattern '{pattern}' {why}", t.id),
                    ).with_hint("write a path or glob relative to the repository root, with `/` between segments"));
                }
            }
        }
    }
}

/// Why a scope or rail pattern cannot name files inside the repository.
pub(crate) fn pattern_problem(pattern: &str) -> Option<&'static str> {
    if pattern.is_empty() {
        return Some("is empty");
    }
    if pattern.starts_with('/') || pattern.contains('\\') {
        return Some("must be relative, with forward slashes");
    }
    if pattern
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return Some("has a `.`, `..` or empty segment");
    }
    None
}

/// The JSON Schema of the native format, generated from the IR types.
pub fn schema() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(Plan)).expect("schemas serialize");
    if let Some(obj) = schema.as_object_mut() {
        obj.insert("title".into(), "planwright native plan".into());
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            let mut with_version = serde_json::Map::new();
            with_version.insert(
                "planwright".into(),
                serde_json::json!({"description": "Native format version.", "const": VERSION}),
            );
            with_version.extend(std::mem::take(props));
            *props = with_version;
        }
        if let Some(Value::Array(req)) = obj.get_mut("required") {
            req.insert(0, "planwright".into());
        }
    }
    schema
}
/// The native format in the table of formats.
pub struct Native;

impl super::PlanFormat for Native {
    fn format(&self) -> crate::model::Format {
        crate::model::Format::Native
    }

    fn detect(&self, root: crate::view::Obj<'_>) -> super::Fit {
        use super::Fit;
        match root.get("planwright") {
            Some(v) if v == 1 => Fit::Full,
            Some(v) => Fit::Partial(format!("`planwright` is {v}, expected 1")),
            None => Fit::No("no `planwright` key".into()),
        }
    }

    fn validate(
        &self,
        doc: &crate::doc::Document,
        _options: &super::Options,
        sink: &mut dyn Sink,
    ) -> Option<Plan> {
        validate(doc.root().val(), sink)
    }

    fn emit(&self, plan: &Plan, _sink: &mut dyn Sink) -> Value {
        emit(plan)
    }

    fn schema(&self) -> Option<Value> {
        Some(schema())
    }

    fn pointer(&self, i: usize) -> [crate::pointer::Pointer; 2] {
        let ticket = crate::pointer::Pointer::root().key("tickets").index(i);
        [ticket.key("scope"), ticket]
    }
}
