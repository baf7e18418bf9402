//! codeboost plan v1: strict input, the seed's JSON Schema, every meaning
//! check codeboost makes on import, the `cmd` grammar and allowlist, and the
//! mapping to and from the IR (see `docs/formats/codeboost.md`).

use super::Options;
use crate::command;
use crate::diag::{Diagnostic, Sink};
use crate::doc::{Document, Node, NodeKind};
use crate::model::{Format, Gate, Plan, Review, ScopeEntry, ScopeOp, Ticket};
use crate::pointer::Pointer;
use crate::schema::{Checker, Formats};
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::LazyLock;

mod emit;
mod state;

pub use emit::emit;

/// The seed's JSON Schema, verbatim (published as `schemas/codeboost.schema.json`).
pub const SCHEMA_TEXT: &str = include_str!("../../../../schemas/codeboost.schema.json");

static CHECKER: LazyLock<Checker> =
    LazyLock::new(|| Checker::new(&schema(), "codeboost", Formats::Assert));

/// The largest plan file codeboost reads, in bytes.
pub const MAX_BYTES: usize = 1024 * 1024;

/// The deepest nesting codeboost reads (the root object is level 1).
pub const MAX_DEPTH: usize = 50;

/// `Number.MAX_SAFE_INTEGER`: larger integers lose precision in JavaScript.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// An item id: `P` and a number without leading zeros, up to 999.
pub static ID_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^P[1-9][0-9]{0,2}$").expect("valid regex"));

/// The schema as a JSON value.
pub fn schema() -> Value {
    serde_json::from_str(SCHEMA_TEXT).expect("the embedded codeboost schema is JSON")
}

/// What a file entry does to its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Edit,
    Add,
    Delete,
    Rename,
}

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "edit" => Kind::Edit,
            "add" => Kind::Add,
            "delete" => Kind::Delete,
            "rename" => Kind::Rename,
            _ => return None,
        })
    }

    fn verb(self) -> &'static str {
        match self {
            Kind::Edit => "edits",
            Kind::Add => "adds",
            Kind::Delete => "deletes",
            Kind::Rename => "renames",
        }
    }
}

/// One file entry, read leniently so that meaning checks can run on a
/// document the schema rejected.
#[derive(Debug)]
struct FileEntry<'a> {
    at: Pointer,
    path: Option<&'a str>,
    kind: Option<Kind>,
    /// `None` for a missing key, `Some(None)` for null.
    renamed_from: Option<Option<&'a str>>,
    change: Option<&'a str>,
}

impl FileEntry<'_> {
    /// The paths the entry touches, with where each is written: the path,
    /// and for a rename the old path too.
    fn sides(&self) -> Vec<(&str, Pointer)> {
        let mut out = Vec::new();
        if let Some(p) = self.path {
            out.push((p, self.at.key("path")));
        }
        if let (Some(Kind::Rename), Some(Some(from))) = (self.kind, self.renamed_from) {
            out.push((from, self.at.key("renamed_from")));
        }
        out
    }
}

/// One acceptance check, read leniently.
#[derive(Debug)]
struct Check<'a> {
    at: Pointer,
    kind: Option<&'a str>,
    text: Option<&'a str>,
}

/// One item, read leniently.
#[derive(Debug)]
struct Item<'a> {
    at: Pointer,
    label: String,
    id: Option<&'a str>,
    obj: &'a Map<String, Value>,
    files: Vec<FileEntry<'a>>,
    checks: Vec<Check<'a>>,
    depends_on: Vec<(Pointer, &'a str)>,
}

/// Validates a codeboost plan; returns the IR (the caller drops it when an
/// error was reported).
pub fn validate(doc: &Document, options: &Options, sink: &mut dyn Sink) -> Option<Plan> {
    if !strict_input(doc, sink) {
        return None;
    }
    // Made once the size is known to be at most `MAX_BYTES`: a refused
    // plan of any size is never copied (issue 53).
    let value = doc.value();
    let mut schema_errors = Vec::new();
    CHECKER.check(&value, &mut schema_errors);
    let mut found = Vec::new();
    let root = value.as_object();
    if let Some(root) = root {
        meaning(root, options, &mut found);
    }
    // A path the meaning checks explain precisely needs no second, vaguer
    // "does not match the pattern" from the schema.
    let explained: HashSet<&str> = found
        .iter()
        .filter(|d| d.code.starts_with("codeboost.path."))
        .map(|d| d.pointer.as_str())
        .collect();
    for d in schema_errors {
        if d.code != "codeboost.schema.pattern" {
            sink.push(d);
        } else if !explained.contains(d.pointer.as_str()) {
            sink.push(pattern_hint(d));
        }
    }
    for d in found {
        sink.push(d);
    }
    root.map(build)
}

/// The schema's patterns, said in words.
fn pattern_hint(d: Diagnostic) -> Diagnostic {
    let tokens = crate::pointer::tokens(&d.pointer).unwrap_or_default();
    let field = tokens.iter().rev().find(|t| t.parse::<usize>().is_err());
    match field.map(String::as_str) {
        Some("id" | "depends_on") => {
            d.with_hint("item ids are `P` and a number without leading zeros: P1, P2, ... P999")
        }
        Some("path") => {
            d.with_hint("paths are relative to the repository root: no leading `/`, no backslash")
        }
        _ => d,
    }
}

fn meaning(root: &Map<String, Value>, options: &Options, sink: &mut Vec<Diagnostic>) {
    check_issue(root, options.issue, sink);
    let items = read_items(root);
    check_ids(&items, sink);
    let index = first_index(&items);
    let reach = check_depends_on(&items, &index, sink);
    for item in &items {
        check_files(item, sink);
    }
    check_producers(&items, &reach, sink);
    if let Some(files) = &options.repo_files {
        state::check(&items, files, sink);
    }
    check_commands(&items, options, sink);
    if let Some(Value::Array(q)) = root.get("questions") {
        if !q.is_empty() {
            sink.push(
                Diagnostic::warning(
                    "codeboost.questions.open",
                    "/questions",
                    format!(
                        "the plan has {} for the reviewer",
                        crate::words::count(q.len(), "open question")
                    ),
                )
                .with_hint("answer them and revise the plan so that `questions` is empty before running it"),
            );
        }
    }
}

/// Size, nesting, duplicate keys and safe integers: what codeboost checks
/// before it looks at the content. `false` when the document is too big or
/// too deep to look at further.
fn strict_input(doc: &Document, sink: &mut dyn Sink) -> bool {
    if doc.text.len() > MAX_BYTES {
        sink.push(
            Diagnostic::error(
                "codeboost.input.size",
                "",
                format!(
                    "the plan file is {} bytes; codeboost reads at most {MAX_BYTES} bytes (1 MiB)",
                    doc.text.len()
                ),
            )
            .with_hint("a plan describes the work; move long text out of it"),
        );
        return false;
    }
    if let Some(at) = too_deep(doc.root()) {
        sink.push(
            Diagnostic::error(
                "codeboost.input.depth",
                at,
                format!("the plan is nested more than {MAX_DEPTH} levels deep"),
            )
            .with_hint("a codeboost plan is nested at most 5 levels; remove the extra nesting"),
        );
        return false;
    }
    for (at, _) in doc.duplicate_keys() {
        let key = crate::pointer::tokens(at.as_str())
            .and_then(|t| t.last().cloned())
            .unwrap_or_default();
        sink.push(
            Diagnostic::error(
                "codeboost.input.duplicate-key",
                &at,
                format!("the key `{key}` appears twice in the same object"),
            )
            .at_key()
            .with_hint("remove one of them; codeboost rejects duplicate keys"),
        );
    }
    unsafe_numbers(doc.root(), &Pointer::root(), sink);
    true
}

/// The pointer of the first value nested deeper than [`MAX_DEPTH`].
fn too_deep(root: Node<'_>) -> Option<Pointer> {
    let mut stack = vec![(root, Pointer::root(), 1usize)];
    while let Some((node, at, depth)) = stack.pop() {
        let children: Vec<(Node, Pointer)> = match node.kind() {
            NodeKind::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, n)| (n, at.index(i)))
                .collect(),
            NodeKind::Object(members) => members
                .iter()
                .map(|m| (m.value(), at.key(m.key())))
                .collect(),
            _ => continue,
        };
        if depth > MAX_DEPTH {
            return Some(at);
        }
        stack.extend(children.into_iter().map(|(n, p)| (n, p, depth + 1)));
    }
    None
}

fn unsafe_numbers(node: Node<'_>, at: &Pointer, sink: &mut dyn Sink) {
    match node.kind() {
        NodeKind::Number(raw) => {
            let v: f64 = raw.parse().unwrap_or(f64::INFINITY);
            if !v.is_finite() || (v.fract() == 0.0 && v.abs() > MAX_SAFE_INTEGER) {
                sink.push(
                    Diagnostic::error(
                        "codeboost.input.unsafe-integer",
                        at,
                        format!("{raw} is larger than the largest safe integer (2^53 - 1)"),
                    )
                    .with_hint("numbers in a plan are small integers such as an issue number"),
                );
            }
        }
        NodeKind::Array(items) => {
            for (i, n) in items.iter().enumerate() {
                unsafe_numbers(n, &at.index(i), sink);
            }
        }
        NodeKind::Object(members) => {
            for m in members.iter() {
                unsafe_numbers(m.value(), &at.key(m.key()), sink);
            }
        }
        _ => {}
    }
}

/// An integer written as `7`, `7.0` or `7e0` (JSON Schema counts all three
/// as integers), within the safe range.
fn int(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    let f = v.as_f64()?;
    (f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER).then_some(f as i64)
}

fn check_issue(root: &Map<String, Value>, selected: Option<u64>, sink: &mut Vec<Diagnostic>) {
    let (Some(selected), Some(issue)) = (selected, root.get("issue").and_then(int)) else {
        return;
    };
    if u64::try_from(issue).ok() != Some(selected) {
        sink.push(
            Diagnostic::error(
                "codeboost.issue.mismatch",
                "/issue",
                format!("Plan issue does not match the selected issue: the plan is for issue {issue}, issue {selected} is selected"),
            )
            .with_hint("import the plan for the issue it was written for, or write a plan for this issue"),
        );
    }
}

fn read_items(root: &Map<String, Value>) -> Vec<Item<'_>> {
    let Some(Value::Array(items)) = root.get("items") else {
        return Vec::new();
    };
    let list = Pointer::root().key("items");
    items
        .iter()
        .enumerate()
        .filter_map(|(i, v)| Some(read_item(list.index(i), i, v.as_object()?)))
        .collect()
}

fn array<'a>(obj: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    obj.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn read_item(at: Pointer, i: usize, obj: &Map<String, Value>) -> Item<'_> {
    let id = obj.get("id").and_then(Value::as_str);
    let files = array(obj, "files")
        .iter()
        .enumerate()
        .filter_map(|(k, f)| {
            let f = f.as_object()?;
            Some(FileEntry {
                at: at.key("files").index(k),
                path: f.get("path").and_then(Value::as_str),
                kind: f.get("kind").and_then(Value::as_str).and_then(Kind::parse),
                renamed_from: f.get("renamed_from").map(Value::as_str),
                change: f.get("change").and_then(Value::as_str),
            })
        })
        .collect();
    let checks = array(obj, "acceptance")
        .iter()
        .enumerate()
        .filter_map(|(k, c)| {
            let c = c.as_object()?;
            Some(Check {
                at: at.key("acceptance").index(k),
                kind: c.get("type").and_then(Value::as_str),
                text: c.get("text").and_then(Value::as_str),
            })
        })
        .collect();
    let depends_on = array(obj, "depends_on")
        .iter()
        .enumerate()
        .filter_map(|(k, d)| Some((at.key("depends_on").index(k), d.as_str()?)))
        .collect();
    Item {
        label: id.map_or_else(|| format!("items[{i}]"), str::to_string),
        at,
        id,
        obj,
        files,
        checks,
        depends_on,
    }
}

/// Item id -> position of its first occurrence.
fn first_index<'a>(items: &[Item<'a>]) -> HashMap<&'a str, usize> {
    let mut index = HashMap::new();
    for (n, item) in items.iter().enumerate() {
        if let Some(id) = item.id {
            index.entry(id).or_insert(n);
        }
    }
    index
}

fn check_ids(items: &[Item<'_>], sink: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<&str, &Item<'_>> = HashMap::new();
    for item in items {
        let Some(id) = item.id else { continue };
        match seen.get(id) {
            Some(first) => sink.push(
                Diagnostic::error(
                    "codeboost.item.duplicate-id",
                    item.at.key("id"),
                    format!("duplicate item id `{id}`"),
                )
                .with_hint(format!(
                    "{} already uses it; number the items P1, P2, ... without repeats",
                    first.at
                )),
            ),
            None => {
                seen.insert(id, item);
            }
        }
    }
}

/// Checks `depends_on`; returns, for each item, the items it depends on
/// directly or transitively (through valid, earlier dependencies only).
fn check_depends_on(
    items: &[Item<'_>],
    index: &HashMap<&str, usize>,
    sink: &mut Vec<Diagnostic>,
) -> Vec<BTreeSet<usize>> {
    let mut reach: Vec<BTreeSet<usize>> = Vec::with_capacity(items.len());
    for (n, item) in items.iter().enumerate() {
        let mut mine = BTreeSet::new();
        let mut listed = HashSet::new();
        for (at, dep) in &item.depends_on {
            let label = &item.label;
            let problem = if !listed.insert(*dep) {
                Some((
                    "duplicate",
                    format!("{label} lists `{dep}` in depends_on twice"),
                    "remove the repeat".to_string(),
                ))
            } else if Some(*dep) == item.id {
                Some((
                    "self",
                    format!("{label} depends on itself"),
                    "remove it from its own depends_on".into(),
                ))
            } else {
                match index.get(dep) {
                    None => Some(("unknown", format!("{label} depends on `{dep}`, which is not an item of this plan"), "name an earlier item's id".into())),
                    Some(&k) if k > n => Some(("later", format!("{label} depends on `{dep}`, which comes after it; items may only depend on earlier items"), format!("move {dep} before {label}, or drop the dependency"))),
                    Some(&k) => {
                        mine.insert(k);
                        mine.extend(reach[k].iter().copied());
                        None
                    }
                }
            };
            if let Some((rule, message, hint)) = problem {
                sink.push(
                    Diagnostic::error(format!("codeboost.depends-on.{rule}"), at, message)
                        .with_hint(hint),
                );
            }
        }
        reach.push(mine);
    }
    reach
}

/// Why a path cannot be used, as (rule, reason).
fn path_problem(path: &str) -> Option<(&'static str, &'static str)> {
    if path.is_empty() {
        return Some(("empty", "is empty"));
    }
    if path.contains('\\') {
        return Some(("backslash", "contains a backslash; use forward slashes"));
    }
    if path.contains(':') {
        return Some(("colon", "contains `:`"));
    }
    if path.chars().any(char::is_control) {
        return Some(("control", "contains a control character"));
    }
    if path.starts_with('/') {
        return Some((
            "absolute",
            "is absolute; paths start at the repository root without a leading `/`",
        ));
    }
    for component in path.split('/') {
        let problem = match component {
            "" => (
                "empty-component",
                "has an empty component (`//` or a trailing `/`)",
            ),
            "." => ("dot", "has a `.` component"),
            ".." => ("dot-dot", "has a `..` component"),
            c if c.eq_ignore_ascii_case(".git") => ("git", "names `.git`, which belongs to git"),
            _ => continue,
        };
        return Some(problem);
    }
    None
}

fn check_files(item: &Item<'_>, sink: &mut Vec<Diagnostic>) {
    let label = &item.label;
    // path -> its position among the item's declared paths
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut sides: Vec<(&str, Pointer)> = Vec::new();
    for file in &item.files {
        check_renamed_from(item, file, sink);
        for (path, at) in file.sides() {
            if let Some((rule, why)) = path_problem(path) {
                sink.push(
                    Diagnostic::error(
                        format!("codeboost.path.{rule}"),
                        &at,
                        format!("{label}: path `{path}` {why}"),
                    )
                    .with_hint("paths are relative to the repository root, with forward slashes, without `.`, `..` or `.git`"),
                );
                continue;
            }
            if seen.contains_key(path) {
                sink.push(
                    Diagnostic::error(
                        "codeboost.files.duplicate",
                        &at,
                        format!("{label} declares `{path}` more than once"),
                    )
                    .with_hint(
                        "declare each path once per item (a rename counts its old and new path)",
                    ),
                );
                continue;
            }
            seen.insert(path, sides.len());
            sides.push((path, at));
        }
    }
    for (n, (path, at)) in sides.iter().enumerate() {
        for (cut, _) in path.match_indices('/') {
            let parent = &path[..cut];
            let Some(&p) = seen.get(parent) else { continue };
            // Underline whichever of the two was declared second.
            let later = if p > n { &sides[p].1 } else { at };
            sink.push(
                Diagnostic::error(
                    "codeboost.files.overlap",
                    later,
                    format!("{label} declares both `{parent}` and `{path}`, which is inside it"),
                )
                .with_hint("declare the files themselves, not a directory and a file in it"),
            );
        }
    }
}

fn check_renamed_from(item: &Item<'_>, file: &FileEntry<'_>, sink: &mut Vec<Diagnostic>) {
    let Some(kind) = file.kind else { return };
    let at = file.at.key("renamed_from");
    let path = file.path.unwrap_or("?");
    let label = &item.label;
    match (kind, file.renamed_from) {
        (Kind::Rename, Some(None)) => sink.push(
            Diagnostic::error(
                "codeboost.file.renamed-from",
                at,
                format!("{label}: the rename to `{path}` does not say where from"),
            )
            .with_hint("set `renamed_from` to the old path"),
        ),
        (Kind::Rename, _) | (_, None | Some(None)) => {}
        (_, Some(Some(from))) => sink.push(
            Diagnostic::error(
                "codeboost.file.renamed-from",
                at,
                format!("{label}: `{path}` is not a rename, but `renamed_from` is `{from}`"),
            )
            .with_hint("set `renamed_from` to null, or `kind` to \"rename\""),
        ),
    }
}

/// A later item that touches a path an earlier item adds, renames or
/// deletes must depend on that item, directly or transitively.
fn check_producers(items: &[Item<'_>], reach: &[BTreeSet<usize>], sink: &mut Vec<Diagnostic>) {
    // path -> items (by position) that add, rename or delete it, in order
    let mut producers: BTreeMap<&str, Vec<(usize, Kind)>> = BTreeMap::new();
    for (n, item) in items.iter().enumerate() {
        for file in &item.files {
            for (path, at) in file.sides() {
                let Some(before) = producers.get(path) else {
                    continue;
                };
                let missing: Vec<String> = before
                    .iter()
                    .filter(|(k, _)| !reach[n].contains(k))
                    .map(|(k, kind)| format!("{} {} it", items[*k].label, kind.verb()))
                    .collect();
                if !missing.is_empty() {
                    let ids: Vec<String> = before
                        .iter()
                        .filter(|(k, _)| !reach[n].contains(k))
                        .map(|(k, _)| format!("\"{}\"", items[*k].label))
                        .collect();
                    sink.push(
                        Diagnostic::error(
                            "codeboost.depends-on.producer",
                            at,
                            format!(
                                "{} touches `{path}`, but {}; it must depend on that item",
                                item.label,
                                missing.join(" and ")
                            ),
                        )
                        .with_hint(format!(
                            "add {} to {}'s depends_on",
                            ids.join(", "),
                            item.label
                        )),
                    );
                }
            }
        }
        for file in &item.files {
            let Some(kind) = file.kind.filter(|k| *k != Kind::Edit) else {
                continue;
            };
            for (path, _) in file.sides() {
                producers.entry(path).or_default().push((n, kind));
            }
        }
    }
}

fn check_commands(items: &[Item<'_>], options: &Options, sink: &mut Vec<Diagnostic>) {
    let allow = &options.allowed_commands;
    let mut commands = 0;
    for item in items {
        for check in &item.checks {
            if check.kind != Some("cmd") {
                continue;
            }
            commands += 1;
            let Some(text) = check.text else { continue };
            let at = check.at.key("text");
            match command::parse(text) {
                Err(e) => sink.push(
                    Diagnostic::error(
                        "codeboost.command.syntax",
                        at,
                        format!("{}: `{text}` is not a valid command: {e}", item.label),
                    )
                    .with_hint("a `cmd` is one program and literal arguments, run without a shell; quote arguments that hold special characters ('Test.*')"),
                ),
                Ok(argv) if !allow.contains(&argv) => sink.push(
                    Diagnostic::warning(
                        "codeboost.command.not-allowed",
                        at,
                        format!("{}: `{text}` is not on the command allowlist, so it will not run until approved", item.label),
                    )
                    .with_hint(format!(
                        "to approve exactly this command, add to planwright.toml under [commands]: allow = [{}]",
                        toml_argv(&argv)
                    )),
                ),
                Ok(_) => {}
            }
        }
    }
    if commands == 0 && !items.is_empty() {
        sink.push(
            Diagnostic::warning(
                "codeboost.command.none",
                "/items",
                "no item has a `cmd` check, so nothing will be run to verify the work",
            )
            .with_hint(command_none_hint(options.repo_files.as_deref())),
        );
    }
}

/// The repository's own test command when its files are known (`--repo`),
/// else no particular one.
fn command_none_hint(repo_files: Option<&BTreeSet<String>>) -> String {
    let test = repo_files.and_then(|files| crate::project::test_command(|f| files.contains(f)));
    match test {
        Some(argv) => format!(
            "add an acceptance entry that runs the tests, such as {{\"type\": \"cmd\", \"text\": \"{}\"}}",
            argv.join(" ")
        ),
        None => "add an acceptance entry that runs the project's tests: {\"type\": \"cmd\", \"text\": \"<test command>\"}".to_string(),
    }
}

/// An argv as a TOML array of basic strings.
pub fn toml_argv(argv: &[String]) -> String {
    let words: Vec<String> = argv
        .iter()
        .map(|a| {
            let mut s = String::from("\"");
            for c in a.chars() {
                match c {
                    '"' => s.push_str("\\\""),
                    '\\' => s.push_str("\\\\"),
                    c if c.is_control() => s.push_str(&format!("\\u{:04X}", c as u32)),
                    c => s.push(c),
                }
            }
            s.push('"');
            s
        })
        .collect();
    format!("[{}]", words.join(", "))
}

fn build(root: &Map<String, Value>) -> Plan {
    let mut metadata = Map::new();
    for key in ["issue", "revision", "summary", "questions"] {
        if let Some(v) = root.get(key) {
            metadata.insert(key.into(), v.clone());
        }
    }
    let tickets = read_items(root).iter().map(build_ticket).collect();
    Plan {
        source_format: Format::Codeboost,
        repo: None,
        base: "main".into(),
        gates: Vec::new(),
        tickets,
        caps: BTreeMap::new(),
        review: Review::default(),
        metadata,
    }
}

fn build_ticket(item: &Item<'_>) -> Ticket {
    let text = |k: &str| {
        item.obj
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut changes = Map::new();
    let mut scope = Vec::new();
    for f in &item.files {
        let (Some(path), Some(kind)) = (f.path, f.kind) else {
            continue;
        };
        let op = match kind {
            Kind::Edit => ScopeOp::Modify,
            Kind::Add => ScopeOp::Create,
            Kind::Delete => ScopeOp::Delete,
            Kind::Rename => ScopeOp::Rename {
                from: f.renamed_from.flatten().unwrap_or_default().to_string(),
            },
        };
        scope.push(ScopeEntry {
            pattern: path.to_string(),
            op,
        });
        if let Some(change) = f.change {
            changes.insert(path.to_string(), change.into());
        }
    }
    let mut gates = Vec::new();
    let mut checks = Vec::new();
    let mut order = Vec::new();
    for c in &item.checks {
        let (Some(kind), Some(text)) = (c.kind, c.text) else {
            continue;
        };
        match kind {
            "cmd" => gates.push(Gate {
                name: text.to_string(),
                argv: command::parse(text).unwrap_or_default(),
            }),
            _ => checks.push(text.to_string()),
        }
        order.push(Value::from(kind));
    }
    let mut metadata = Map::new();
    metadata.insert("changes".into(), Value::Object(changes));
    // The IR keeps gates and checks apart; remember how they interleaved.
    if !order.windows(2).all(|w| w[0] == "cmd" || w[1] == "check") {
        metadata.insert("acceptance".into(), Value::Array(order));
    }
    Ticket {
        id: item.id.unwrap_or_default().to_string(),
        title: text("title"),
        body: text("intent"),
        scope,
        rails: Vec::new(),
        depends_on: item.depends_on.iter().map(|(_, d)| d.to_string()).collect(),
        tier: None,
        pool_hint: None,
        model: None,
        gates,
        checks,
        counterfactuals: Vec::new(),
        estimate_minutes: None,
        metadata: metadata.into(),
    }
}

/// codeboost plan v1 in the table of formats.
pub struct Codeboost;

impl super::PlanFormat for Codeboost {
    fn check_nouns(&self) -> [&'static str; 2] {
        ["codeboost `check` item", "codeboost `check` items"]
    }

    /// An agent writes codeboost plans.
    fn commands_need_approval(&self) -> bool {
        true
    }

    fn format(&self) -> crate::model::Format {
        crate::model::Format::Codeboost
    }

    fn detect(&self, root: crate::view::Obj<'_>) -> super::Fit {
        use super::Fit;
        match (root.get("schema_version"), root.contains_key("items")) {
            (Some(v), true) if v == 1 => Fit::Full,
            (Some(_), false) => Fit::Partial("no `items` key".into()),
            (Some(v), true) => Fit::Partial(format!("`schema_version` is {v}, expected 1")),
            (None, true) => Fit::Partial("no `schema_version` key".into()),
            (None, false) => Fit::No("no `schema_version` and `items` keys".into()),
        }
    }

    fn validate(&self, doc: &Document, options: &Options, sink: &mut dyn Sink) -> Option<Plan> {
        validate(doc, options, sink)
    }

    fn emit(&self, plan: &Plan, sink: &mut dyn Sink) -> Value {
        emit(plan, sink)
    }

    fn schema(&self) -> Option<Value> {
        Some(schema())
    }

    fn pointer(&self, i: usize) -> [Pointer; 2] {
        let item = Pointer::root().key("items").index(i);
        [item.key("files"), item]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_schema_is_the_seed_verbatim() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let seed = dir.join("../../../shared/seeds/002_3a64f7a9c958d3ba.txt");
        let expected = match std::fs::read_to_string(&seed) {
            // The seed is a title line, a blank line, then the schema.
            Ok(text) => text.splitn(3, '\n').nth(2).unwrap_or_default().to_string(),
            Err(_) => {
                std::fs::read_to_string(dir.join("tests/data/codeboost.seed.schema.json")).unwrap()
            }
        };
        assert_eq!(SCHEMA_TEXT, expected);
        let _ = &*CHECKER;
    }

    #[test]
    fn path_rules() {
        assert_eq!(path_problem("src/a.rs"), None);
        assert_eq!(path_problem(".github/workflows/ci.yml"), None);
        for (p, rule) in [
            ("", "empty"),
            ("a\\b", "backslash"),
            ("c:/x", "colon"),
            ("a\u{7}b", "control"),
            ("/etc/passwd", "absolute"),
            ("a//b", "empty-component"),
            ("a/", "empty-component"),
            ("./a", "dot"),
            ("a/../b", "dot-dot"),
            (".GIT/config", "git"),
            ("sub/.Git", "git"),
        ] {
            assert_eq!(path_problem(p).map(|x| x.0), Some(rule), "{p:?}");
        }
    }

    #[test]
    fn toml_argv_quotes() {
        let argv = vec!["go".to_string(), "a\"b\\".to_string()];
        assert_eq!(toml_argv(&argv), r#"["go", "a\"b\\"]"#);
    }
}
