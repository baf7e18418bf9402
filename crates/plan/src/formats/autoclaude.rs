//! Auto-Claude's `implementation_plan.json`: checked as Auto-Claude's own
//! `ImplementationPlanValidator` checks it (required fields, the enums, phase
//! dependencies that exist and point backwards), plus what planwright needs
//! to run it, and mapped to and from the IR (see `docs/formats/autoclaude.md`).

use super::foreign::{self, Stated, Verification};
use super::Options;
use crate::diag::{Diagnostic, Sink};
use crate::model::{Format, Plan, ScopeEntry, ScopeOp, Ticket};
use crate::pointer::Pointer;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

mod emit;

/// `workflow_type` values the validator accepts.
pub const WORKFLOW_TYPES: [&str; 7] = [
    "feature",
    "refactor",
    "investigation",
    "migration",
    "simple",
    "bugfix",
    "bug_fix",
];

/// Phase `type` values.
const PHASE_TYPES: [&str; 5] = [
    "setup",
    "implementation",
    "investigation",
    "integration",
    "cleanup",
];

/// Subtask `status` values.
const STATUSES: [&str; 5] = ["pending", "in_progress", "completed", "blocked", "failed"];

/// `verification.type` values.
const VERIFICATION_TYPES: [&str; 7] = [
    "command",
    "api",
    "browser",
    "component",
    "e2e",
    "manual",
    "none",
];

/// One phase as read.
struct Phase<'a> {
    at: Pointer,
    obj: &'a Map<String, Value>,
    /// How the validator names it: `id`, else `phase`, else its position.
    key: Value,
    subtasks: Vec<Subtask<'a>>,
}

/// One subtask as read.
struct Subtask<'a> {
    at: Pointer,
    obj: &'a Map<String, Value>,
    id: Option<&'a str>,
}

impl Subtask<'_> {
    fn completed(&self) -> bool {
        self.obj.get("status").and_then(Value::as_str) == Some("completed")
    }
}

/// Validates an Auto-Claude plan; the plan when there was no error.
pub fn validate(value: &Value, options: &Options, sink: &mut dyn Sink) -> Option<Plan> {
    let Some(root) = value.as_object() else {
        sink.push(Diagnostic::error(
            "autoclaude.root",
            "",
            "an implementation_plan.json must be a JSON object with `feature`, `workflow_type` and `phases`",
        ));
        return None;
    };
    let mut counting = crate::diag::Counting::new(sink);
    for field in ["feature", "workflow_type", "phases"] {
        if !root.contains_key(field) {
            counting.push(
                Diagnostic::error(
                    "autoclaude.plan.required",
                    "",
                    format!("missing required field `{field}`"),
                )
                .with_hint(format!(
                    "add `{field}`, as Auto-Claude's validator requires"
                )),
            );
        }
    }
    if let Some(v) = root.get("workflow_type") {
        enum_value(
            v,
            &WORKFLOW_TYPES,
            "autoclaude.plan.workflow-type",
            &Pointer::root().key("workflow_type"),
            "workflow_type",
            &mut counting,
        );
    }
    let phases = read_phases(root, &mut counting);
    check_phase_ids(&phases, &mut counting);
    check_dependencies(&phases, &mut counting);
    check_ids(&phases, &mut counting);
    let plan = build(root, &phases, options, &mut counting);
    (counting.errors == 0).then_some(plan)
}

/// An error unless `v` is one of `allowed`, with the nearest one as a hint.
fn enum_value(
    v: &Value,
    allowed: &[&str],
    code: &str,
    at: &Pointer,
    what: &str,
    sink: &mut dyn Sink,
) {
    if v.as_str().is_some_and(|s| allowed.contains(&s)) {
        return;
    }
    let mut d = Diagnostic::error(
        code,
        at,
        format!("invalid {what} {v}: expected one of {}", allowed.join(", ")),
    );
    if let Some(near) = v
        .as_str()
        .and_then(|s| crate::suggest::closest(s, allowed.iter().copied()))
    {
        d = d.with_hint(format!("did you mean `{near}`?"));
    }
    sink.push(d);
}

fn read_phases<'a>(root: &'a Map<String, Value>, sink: &mut dyn Sink) -> Vec<Phase<'a>> {
    let at = Pointer::root().key("phases");
    let items = match root.get("phases") {
        None => return vec![],
        Some(Value::Array(items)) => items,
        Some(_) => {
            sink.push(Diagnostic::error(
                "autoclaude.plan.phases",
                &at,
                "`phases` must be an array of phases",
            ));
            return vec![];
        }
    };
    if items.is_empty() {
        sink.push(
            Diagnostic::error("autoclaude.plan.phases", &at, "no phases defined")
                .with_hint("add at least one phase with subtasks"),
        );
    }
    let mut phases = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let Some(obj) = item.as_object() else {
            sink.push(Diagnostic::error(
                "autoclaude.phase.object",
                &at,
                format!("phase {}: must be an object", i + 1),
            ));
            continue;
        };
        phases.push(read_phase(i, at, obj, sink));
    }
    if !items.is_empty() && phases.iter().all(|p| p.subtasks.is_empty()) {
        sink.push(
            Diagnostic::error(
                "autoclaude.plan.no-subtasks",
                "/phases",
                "no subtasks defined in any phase",
            )
            .with_hint("add subtasks to the phases"),
        );
    }
    phases
}

/// Python's truth: the validator takes `id` unless it is empty, zero or null.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The phase's name in `depends_on`: `id`, else `phase`, else its
/// position from 1 (the validator's `p.get("id") or p.get("phase", i + 1)`).
fn phase_key(obj: &Map<String, Value>, i: usize) -> Value {
    match obj.get("id").filter(|v| truthy(v)) {
        Some(id) => id.clone(),
        None => obj
            .get("phase")
            .cloned()
            .unwrap_or_else(|| Value::from(i + 1)),
    }
}

fn read_phase<'a>(
    i: usize,
    at: Pointer,
    obj: &'a Map<String, Value>,
    sink: &mut dyn Sink,
) -> Phase<'a> {
    let label = format!("phase {}", i + 1);
    for field in ["name", "subtasks"] {
        if !obj.contains_key(field) {
            sink.push(Diagnostic::error(
                "autoclaude.phase.required",
                &at,
                format!("{label}: missing required field `{field}`"),
            ));
        }
    }
    if !obj.contains_key("id") && !obj.contains_key("phase") {
        sink.push(
            Diagnostic::error(
                "autoclaude.phase.required",
                &at,
                format!("{label}: missing required field (need one of: phase, id)"),
            )
            .with_hint("give the phase an `id` such as \"phase-1-backend\""),
        );
    }
    if let Some(v) = obj.get("type") {
        enum_value(
            v,
            &PHASE_TYPES,
            "autoclaude.phase.type",
            &at.key("type"),
            &format!("{label} type"),
            sink,
        );
    }
    if obj.get("parallel_safe").is_some_and(|v| !v.is_boolean()) {
        sink.push(Diagnostic::error(
            "autoclaude.phase.parallel-safe",
            at.key("parallel_safe"),
            format!("{label}: `parallel_safe` must be true or false"),
        ));
    }
    let key = phase_key(obj, i);
    let mut subtasks = Vec::new();
    match obj.get("subtasks") {
        None => {}
        Some(Value::Array(items)) => {
            for (j, item) in items.iter().enumerate() {
                let at = at.key("subtasks").index(j);
                let label = format!("{label}, subtask {}", j + 1);
                match item.as_object() {
                    Some(sub) => subtasks.push(read_subtask(&label, at, sub, sink)),
                    None => sink.push(Diagnostic::error(
                        "autoclaude.subtask.object",
                        &at,
                        format!("{label}: must be an object"),
                    )),
                }
            }
        }
        Some(_) => sink.push(Diagnostic::error(
            "autoclaude.phase.subtasks",
            at.key("subtasks"),
            format!("{label}: `subtasks` must be an array"),
        )),
    }
    Phase {
        at,
        obj,
        key,
        subtasks,
    }
}

fn read_subtask<'a>(
    label: &str,
    at: Pointer,
    obj: &'a Map<String, Value>,
    sink: &mut dyn Sink,
) -> Subtask<'a> {
    for field in ["id", "description", "status"] {
        if !obj.contains_key(field) {
            sink.push(Diagnostic::error(
                "autoclaude.subtask.required",
                &at,
                format!("{label}: missing required field `{field}`"),
            ));
        }
    }
    if let Some(v) = obj.get("status") {
        enum_value(
            v,
            &STATUSES,
            "autoclaude.subtask.status",
            &at.key("status"),
            &format!("{label} status"),
            sink,
        );
    }
    if obj.get("description").is_some_and(|v| !v.is_string()) {
        sink.push(Diagnostic::error(
            "autoclaude.subtask.description",
            at.key("description"),
            format!("{label}: `description` must be a string"),
        ));
    }
    for key in ["files_to_modify", "files_to_create", "patterns_from"] {
        let ok = obj
            .get(key)
            .is_none_or(|v| v.as_array().is_some_and(|a| a.iter().all(Value::is_string)));
        if !ok {
            sink.push(Diagnostic::error(
                "autoclaude.subtask.files",
                at.key(key),
                format!("{label}: `{key}` must be an array of paths"),
            ));
        }
    }
    if let Some(v) = obj.get("verification") {
        let vat = at.key("verification");
        match v.get("type") {
            None => sink.push(Diagnostic::error(
                "autoclaude.verification.type",
                &vat,
                format!("{label}: verification missing `type`"),
            )),
            Some(t) => enum_value(
                t,
                &VERIFICATION_TYPES,
                "autoclaude.verification.type",
                &vat.key("type"),
                &format!("{label} verification type"),
                sink,
            ),
        }
    }
    let id = obj.get("id").and_then(Value::as_str);
    if obj.contains_key("id") && id.is_none_or(|id| id.trim().is_empty()) {
        sink.push(Diagnostic::error(
            "autoclaude.subtask.id",
            at.key("id"),
            format!("{label}: the id must be a non-empty string"),
        ));
    }
    Subtask { at, obj, id }
}

/// A phase key as text that compares as the validator compares keys
/// (numbers by value, strings as text), for lookups.
fn key_text(v: &Value) -> String {
    match v.as_f64() {
        Some(x) => format!("n{x}"),
        None => format!("v{v}"),
    }
}

/// Where each phase key stands: its first phase, by position.
fn key_index(phases: &[Phase<'_>]) -> HashMap<String, usize> {
    let mut index = HashMap::new();
    for (i, p) in phases.iter().enumerate() {
        index.entry(key_text(&p.key)).or_insert(i);
    }
    index
}

/// Every phase key is used once: Auto-Claude maps a key to its last phase,
/// so `depends_on` of a repeated key means another phase than it says.
fn check_phase_ids(phases: &[Phase<'_>], sink: &mut dyn Sink) {
    let index = key_index(phases);
    for (i, p) in phases.iter().enumerate() {
        let first = index[&key_text(&p.key)];
        if first != i {
            let at = if p.obj.contains_key("id") {
                p.at.key("id")
            } else {
                p.at.clone()
            };
            sink.push(
                Diagnostic::error(
                    "autoclaude.phase.duplicate-id",
                    at,
                    format!("phase {}: phases {} and {} have this id", p.key, first + 1, i + 1),
                )
                .with_hint("give every phase its own `id`; Auto-Claude reads `depends_on` on a repeated id as the last of them"),
            );
        }
    }
}

/// Every `depends_on` names an existing phase that comes earlier.
fn check_dependencies(phases: &[Phase<'_>], sink: &mut dyn Sink) {
    let index = key_index(phases);
    for (i, p) in phases.iter().enumerate() {
        let deps = match p.obj.get("depends_on") {
            None => continue,
            Some(Value::Array(deps)) => deps,
            Some(_) => {
                sink.push(Diagnostic::error(
                    "autoclaude.phase.depends-on",
                    p.at.key("depends_on"),
                    format!(
                        "phase {}: `depends_on` must be an array of phase ids",
                        p.key
                    ),
                ));
                continue;
            }
        };
        for (j, dep) in deps.iter().enumerate() {
            let at = p.at.key("depends_on").index(j);
            match index.get(&key_text(dep)).copied() {
                None => sink.push(
                    Diagnostic::error(
                        "autoclaude.phase.unknown-dependency",
                        &at,
                        format!("phase {}: depends on non-existent phase {dep}", p.key),
                    )
                    .with_hint("name an earlier phase by its `id` (or `phase` number)"),
                ),
                Some(k) if k >= i => sink.push(
                    Diagnostic::error(
                        "autoclaude.phase.forward-dependency",
                        &at,
                        format!(
                            "phase {}: cannot depend on phase {dep} (would create cycle)",
                            p.key
                        ),
                    )
                    .with_hint(
                        "a phase may only depend on phases listed before it; move it below them",
                    ),
                ),
                Some(_) => {}
            }
        }
    }
}

/// Subtask ids are ticket ids: unique in the plan, and git branch names.
fn check_ids(phases: &[Phase<'_>], sink: &mut dyn Sink) {
    let mut seen = HashSet::new();
    for s in phases.iter().flat_map(|p| &p.subtasks) {
        let Some(id) = s.id else { continue };
        if !seen.insert(id) {
            sink.push(
                Diagnostic::error(
                    "autoclaude.subtask.duplicate-id",
                    s.at.key("id"),
                    format!("subtask id '{id}' is used more than once"),
                )
                .with_hint("give every subtask its own id, such as \"subtask-2-3\""),
            );
        } else if let Some(why) = crate::refname::ref_name_problem(&format!("planwright/{id}")) {
            sink.push(
                Diagnostic::error(
                    "autoclaude.subtask.id",
                    s.at.key("id"),
                    format!("subtask id '{id}' cannot be a git branch name: {why}"),
                )
                .with_hint("use letters, digits and `-`, such as \"subtask-2-3\""),
            );
        }
    }
}

/// For each phase, the subtasks a phase depending on it waits for: all of
/// its open subtasks when they run side by side, else the last (it waits
/// for the rest); for a phase with no open subtask, what it waits for
/// itself, so that an empty phase still orders the phases around it.
fn exits<'p>(phases: &'p [Phase<'_>]) -> Vec<Vec<&'p str>> {
    let index = key_index(phases);
    let mut out: Vec<Vec<&'p str>> = Vec::with_capacity(phases.len());
    for p in phases {
        let open: Vec<&str> = p
            .subtasks
            .iter()
            .filter(|s| !s.completed())
            .filter_map(|s| s.id)
            .collect();
        let mine = if open.is_empty() {
            let mut waits: Vec<&str> = Vec::new();
            let mut seen = HashSet::new();
            for k in depends_on(p).filter_map(|d| index.get(&key_text(d))) {
                let ids = out.get(*k).into_iter().flatten();
                waits.extend(ids.filter(|id| seen.insert(**id)));
            }
            waits
        } else if parallel_safe(p) {
            open
        } else {
            open.last().copied().into_iter().collect()
        };
        out.push(mine);
    }
    out
}

fn depends_on<'v>(p: &'v Phase<'_>) -> impl Iterator<Item = &'v Value> {
    p.obj
        .get("depends_on")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn parallel_safe(p: &Phase<'_>) -> bool {
    p.obj.get("parallel_safe").and_then(Value::as_bool) == Some(true)
}

/// One ticket per subtask not yet completed, in file order.
fn build(
    root: &Map<String, Value>,
    phases: &[Phase<'_>],
    options: &Options,
    sink: &mut dyn Sink,
) -> Plan {
    let mut tickets = Vec::new();
    let mut completed = 0;
    let index = key_index(phases);
    let exits = exits(phases);
    for p in phases {
        let mut waits: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for k in depends_on(p).filter_map(|d| index.get(&key_text(d))) {
            let ids = exits[*k].iter().filter(|id| seen.insert(**id));
            waits.extend(ids.map(|id| id.to_string()));
        }
        let mut previous: Option<&str> = None;
        for s in &p.subtasks {
            if s.completed() {
                completed += 1;
                continue;
            }
            let Some(id) = s.id else { continue };
            let mut t = ticket(p, s, id, options, sink);
            t.depends_on = waits.clone();
            if let Some(prev) = previous.filter(|_| !parallel_safe(p)) {
                t.depends_on.push(prev.to_string());
            }
            previous = Some(id);
            tickets.push(t);
        }
    }
    if completed > 0 {
        sink.push(Diagnostic::advisory(
            "autoclaude.subtask.completed",
            "/phases",
            format!(
                "{} completed: not run, and a phase waiting for them is not held up",
                crate::words::count(completed, "subtask")
            ),
        ));
    }
    let mut plan = Plan::new(Format::Autoclaude, tickets);
    plan.metadata
        .insert("autoclaude".into(), Value::Object(emit::outline(root)));
    plan
}

fn ticket(
    p: &Phase<'_>,
    s: &Subtask<'_>,
    id: &str,
    options: &Options,
    sink: &mut dyn Sink,
) -> Ticket {
    let description = s
        .obj
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut t = Ticket::new(id, body(p.obj, s.obj));
    t.title = description
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .chars()
        .take(120)
        .collect();
    t.scope = scope(s, id, sink);
    for v in verification(s, id, options, sink) {
        match v {
            Verification::Gate(g) => t.gates.push(g),
            Verification::Check(c) => t.checks.push(c),
        }
    }
    let mut meta = Map::new();
    meta.insert("phase".into(), p.key.clone());
    meta.insert("subtask".into(), Value::Object(s.obj.clone()));
    t.metadata.insert("autoclaude".into(), Value::Object(meta));
    t
}

fn strings<'a>(obj: &'a Map<String, Value>, key: &str) -> Vec<&'a str> {
    obj.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The prompt: the subtask's description, then what the plan says around
/// it (its phase, service, the files whose patterns to follow, the
/// expected output of an investigation).
pub fn body(phase: &Map<String, Value>, s: &Map<String, Value>) -> String {
    let text = |obj: &Map<String, Value>, k: &str| {
        obj.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let mut parts = vec![text(s, "description")];
    let phase_line = match (text(phase, "name"), text(phase, "description")) {
        (n, d) if d.is_empty() => n,
        (n, d) => format!("{n}: {d}"),
    };
    if !phase_line.is_empty() {
        parts.push(format!("Phase: {phase_line}"));
    }
    let service = text(s, "service");
    if !service.is_empty() {
        parts.push(format!("Service: {service}"));
    }
    let patterns = strings(s, "patterns_from");
    if !patterns.is_empty() {
        parts.push(format!("Follow the patterns in: {}", patterns.join(", ")));
    }
    let expected = text(s, "expected_output");
    if !expected.is_empty() {
        parts.push(format!("Expected output: {expected}"));
    }
    parts.retain(|p| !p.is_empty());
    parts.join("\n\n")
}

/// `files_to_modify` and `files_to_create`, else the whole repository with a warning.
fn scope(s: &Subtask<'_>, id: &str, sink: &mut dyn Sink) -> Vec<ScopeEntry> {
    let mut scope = Vec::new();
    // A refused path is an error already: no warning that none was named.
    let mut refused = false;
    for (key, op) in [
        ("files_to_modify", ScopeOp::Modify),
        ("files_to_create", ScopeOp::Create),
    ] {
        let paths = s.obj.get(key).and_then(Value::as_array);
        for (k, path) in paths.into_iter().flatten().enumerate() {
            let Some(path) = path.as_str() else { continue };
            let at = s.at.key(key).index(k);
            let entry =
                foreign::scope_entry("autoclaude.subtask.path", id, path, op.clone(), &at, sink);
            refused |= entry.is_none();
            scope.extend(entry);
        }
    }
    if scope.is_empty() && !refused {
        return foreign::everything(
            "autoclaude.subtask.no-files",
            id,
            "the subtask names no `files_to_modify` or `files_to_create`",
            &s.at,
            sink,
        );
    }
    scope
}

/// The subtask's `verification`: a command as a gate or a check, any
/// other kind as a check saying what to look at.
fn verification(
    s: &Subtask<'_>,
    id: &str,
    options: &Options,
    sink: &mut dyn Sink,
) -> Vec<Verification> {
    let Some(v) = s.obj.get("verification").and_then(Value::as_object) else {
        return vec![];
    };
    let at = s.at.key("verification");
    let text = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
    };
    let kind = text("type").unwrap_or("none");
    let mut out = Vec::new();
    match kind {
        "command" => {
            let key = if text("command").is_some() {
                "command"
            } else {
                "run"
            };
            if let Some(cmd) = text(key) {
                out.push(foreign::verification(
                    "autoclaude",
                    id,
                    cmd,
                    Stated::Command,
                    &at.key(key),
                    options,
                    sink,
                ));
                if let Some(expected) = text("expected") {
                    out.push(Verification::Check(format!("`{cmd}` outputs {expected}")));
                }
            }
        }
        "manual" => out.extend(
            text("instructions")
                .or(text("scenario"))
                .map(|t| Verification::Check(t.to_string())),
        ),
        "none" => {}
        _ => out.push(Verification::Check(describe(kind, v))),
    }
    out
}

/// An API, browser, component or end-to-end verification in one sentence.
fn describe(kind: &str, v: &Map<String, Value>) -> String {
    let mut words = vec![format!("{kind} check:")];
    for key in ["method", "url"] {
        if let Some(s) = v.get(key).and_then(Value::as_str) {
            words.push(s.to_string());
        }
    }
    for key in ["expect_status", "expected_status"] {
        if let Some(n) = v.get(key).filter(|n| !n.is_null()) {
            words.push(format!("answers {n}"));
        }
    }
    if let Some(s) = v.get("expect_contains").and_then(Value::as_str) {
        words.push(format!("containing {}", crate::words::quoted(s)));
    }
    for key in ["scenario", "instructions"] {
        if let Some(s) = v.get(key).and_then(Value::as_str) {
            words.push(s.to_string());
        }
    }
    for key in ["checks", "steps"] {
        let items: Vec<&str> = v
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !items.is_empty() {
            words.push(items.join("; "));
        }
    }
    words.join(" ")
}

/// Auto-Claude's `implementation_plan.json` in the table of formats.
pub struct Autoclaude;

impl super::PlanFormat for Autoclaude {
    fn format(&self) -> Format {
        Format::Autoclaude
    }

    fn detect(&self, root: crate::view::Obj<'_>) -> super::Fit {
        use super::Fit;
        let has = |k: &str| root.contains_key(k);
        match (has("phases"), has("workflow_type"), has("feature")) {
            (true, true, true) => Fit::Full,
            (true, true, false) | (true, false, true) | (false, true, true) => {
                Fit::Partial("not all of `feature`, `workflow_type` and `phases`".into())
            }
            _ => Fit::No("no `feature`, `workflow_type` and `phases` keys".into()),
        }
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
        let phase = Pointer::root().key("phases").index(i);
        [phase.key("subtasks"), phase]
    }

    fn ticket_pointers(
        &self,
        root: crate::view::Val<'_>,
        plan: &Plan,
    ) -> Option<Vec<Vec<Pointer>>> {
        let items = super::phase_items(root, "subtasks");
        Some(
            (plan.tickets.iter())
                .map(|t| match items.get(&t.id) {
                    Some(at) => vec![
                        at.key("files_to_modify"),
                        at.key("files_to_create"),
                        at.clone(),
                    ],
                    None => vec![],
                })
                .collect(),
        )
    }
}
