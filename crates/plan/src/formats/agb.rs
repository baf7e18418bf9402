//! agb's plan format: every rule of agb's `validatePlan`, plus the checks
//! agb leaves to run time (see `docs/formats/agb.md`).

use super::Options;
use crate::diag::{Diagnostic, Sink};
use crate::doc::Document;
use crate::model::{Format, Gate, Plan, Review, ScopeEntry, ScopeOp, Ticket};
use crate::pathspec;
use crate::pointer::Pointer;
use crate::refname::ref_name_problem;
use crate::routing::{Routing, DEFAULT_TIER, TIERS};
use crate::view::{Arr, Obj, Val};
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

/// agb's `TICKET_ID_RE`.
pub static TICKET_ID_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$").expect("valid regex"));

/// agb's `NPM_GATE_RE`: the only gate commands strict mode allows.
pub static NPM_GATE_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^npm (test|run [a-zA-Z0-9_:-]+)$").expect("valid regex"));

const PLAN_KEYS: [&str; 6] = ["repo", "base", "gate", "tickets", "caps", "prosecution"];
const TICKET_KEYS: [&str; 9] = [
    "id",
    "title",
    "body",
    "scope",
    "rails",
    "edges",
    "tier",
    "pool_hint",
    "duration",
];
/// The ticket key adlc's ticket store keeps for archived tickets; agb's
/// ticket check refuses it in a plan.
const ARCHIVE_KEY: &str = "_adlcArchive";
const POOL_HINTS: [&str; 5] = ["gemini", "claude", "claude-gpt", "gpt-oss", "auto"];
const DEFAULT_POOL_HINT: &str = "auto";

/// Validates an agb plan; returns the IR when there is no error.
pub fn validate(doc: &Document, options: &Options, sink: &mut dyn Sink) -> Option<Plan> {
    super::warn_duplicate_keys(doc, "agb", "agb", sink);
    let Some(root) = doc.root().val().as_object() else {
        sink.push(Diagnostic::error(
            "agb.plan.type",
            "",
            "an agb plan must be a JSON object",
        ));
        return None;
    };
    let root_ptr = Pointer::root();
    unknown_keys(root, &PLAN_KEYS, &root_ptr, "plan", sink);
    if let Some(v) = root.get("adlcBin") {
        let _ = v;
        sink.push(
            Diagnostic::error(
                "agb.plan.adlc-bin",
                "/adlcBin",
                "plan.adlcBin is prohibited",
            )
            .with_hint(format!(
                "remove `adlcBin`; agents are chosen with `{}`",
                crate::Flag::Agent
            )),
        );
    }
    let repo = match root.get("repo") {
        Some(Val::String(s)) if !s.trim().is_empty() => Some(s.to_string()),
        _ => {
            sink.push(
                Diagnostic::error("agb.plan.repo", "/repo", "plan.repo is required").with_hint(
                    format!(
                    "set `repo` to the path of the target repository (`run {}` may override it)",
                    crate::Flag::Repo
                ),
                ),
            );
            None
        }
    };
    let base = check_base(root, sink);
    let gates = check_gate(root, options.strict_gates, sink);
    let caps = check_caps(root, sink);
    let review = check_prosecution(root, sink);
    let tickets = check_tickets(root, &options.routing, sink);
    let plan = Plan {
        source_format: Format::Agb,
        repo,
        base,
        gates,
        tickets,
        caps,
        review,
        metadata: Map::new(),
    };
    for cycle in crate::dag::cycles(&plan) {
        let i = plan
            .tickets
            .iter()
            .position(|t| t.id == cycle[0])
            .unwrap_or(0);
        sink.push(
            Diagnostic::error(
                "agb.dag.cycle",
                format!("/tickets/{i}"),
                format!("ticket graph has a cycle: {}", cycle.join(" -> ")),
            )
            .with_hint("remove one of the edges between these tickets"),
        );
    }
    Some(plan)
}

fn unknown_keys(obj: Obj<'_>, known: &[&str], at: &Pointer, what: &str, sink: &mut dyn Sink) {
    for key in obj.keys() {
        if !known.contains(&key) && key != "adlcBin" && key != ARCHIVE_KEY {
            sink.push(
                Diagnostic::warning(
                    "agb.field.unknown",
                    at.key(key),
                    format!("unknown {what} field `{key}`; agb ignores it"),
                )
                .at_key()
                .with_hint(format!("known {what} fields: {}", known.join(", "))),
            );
        }
    }
}

fn check_base(root: Obj<'_>, sink: &mut dyn Sink) -> String {
    match root.get("base") {
        None => "main".to_string(),
        Some(Val::String(s)) => {
            if let Some(why) = ref_name_problem(s) {
                sink.push(
                    Diagnostic::error("agb.plan.base", "/base", format!("plan.base '{s}' is not a valid branch name: {why}"))
                        .with_hint("agb would only fail when the run starts; name an existing branch such as `main`"),
                );
            }
            s.to_string()
        }
        Some(_) => {
            sink.push(Diagnostic::error(
                "agb.plan.base",
                "/base",
                "plan.base must be a string naming a branch",
            ));
            "main".to_string()
        }
    }
}

fn check_gate(root: Obj<'_>, strict: bool, sink: &mut dyn Sink) -> Vec<Gate> {
    let missing = || {
        Diagnostic::error(
            "agb.gate.missing",
            "/gate",
            "plan.gate must declare at least one of build/test commands",
        )
        .with_hint("for example `\"gate\": {\"test\": \"npm test\"}`")
    };
    let Some(gate) = root.get("gate").and_then(Val::as_object) else {
        sink.push(missing());
        return Vec::new();
    };
    unknown_keys(
        gate,
        &["build", "test"],
        &Pointer::root().key("gate"),
        "gate",
        sink,
    );
    let mut gates = Vec::new();
    for name in ["build", "test"] {
        let at = Pointer::root().key("gate").key(name);
        match gate.get(name) {
            None => {}
            Some(Val::String(cmd)) if !cmd.trim().is_empty() => {
                if strict && !NPM_GATE_RE.is_match(cmd) {
                    sink.push(
                        Diagnostic::error(
                            "agb.gate.strict",
                            &at,
                            format!("plan.gate.{name} must match {} (got '{cmd}')", NPM_GATE_RE.as_str()),
                        )
                        .with_hint(format!("use `npm test` or `npm run <script>`, or turn strict gates off with `{}` (or AGB_STRICT_GATES=0)", crate::Flag::NoStrictGates)),
                    );
                }
                match shlex::split(cmd) {
                    Some(argv) if !argv.is_empty() => gates.push(Gate { name: name.to_string(), argv }),
                    _ => sink.push(Diagnostic::error(
                        "agb.gate.syntax",
                        &at,
                        format!("plan.gate.{name} cannot be split into words (unbalanced quote?): '{cmd}'"),
                    )),
                }
            }
            Some(_) => sink.push(Diagnostic::error(
                "agb.gate.type",
                &at,
                format!("plan.gate.{name} must be a non-blank command string"),
            )),
        }
    }
    if !gate.contains_key("build") && !gate.contains_key("test") {
        sink.push(missing());
    }
    gates
}

fn check_caps(root: Obj<'_>, sink: &mut dyn Sink) -> BTreeMap<String, u32> {
    let mut caps = BTreeMap::new();
    let Some(v) = root.get("caps") else {
        return caps;
    };
    let Some(obj) = v.as_object() else {
        sink.push(Diagnostic::error(
            "agb.plan.caps",
            "/caps",
            "plan.caps must be an object of pool name -> positive integer",
        ));
        return caps;
    };
    for (pool, n) in obj {
        match n
            .as_u64()
            .filter(|n| *n >= 1)
            .and_then(|n| u32::try_from(n).ok())
        {
            Some(n) => {
                caps.insert(pool.to_string(), n);
            }
            None => sink.push(
                Diagnostic::error(
                    "agb.plan.caps",
                    Pointer::root().key("caps").key(pool),
                    format!("plan.caps.{pool} must be a positive integer (got {n})"),
                )
                .with_hint(
                    "agb does not check caps and misbehaves at run time; use a whole number >= 1",
                ),
            ),
        }
    }
    caps
}

fn check_prosecution(root: Obj<'_>, sink: &mut dyn Sink) -> Review {
    let mut review = Review::default();
    let Some(p) = root.get("prosecution") else {
        return review;
    };
    let Some(obj) = p.as_object() else {
        sink.push(Diagnostic::error(
            "agb.plan.prosecution",
            "/prosecution",
            "plan.prosecution must be an object",
        ));
        return review;
    };
    unknown_keys(
        obj,
        &["dryPasses"],
        &Pointer::root().key("prosecution"),
        "prosecution",
        sink,
    );
    if let Some(n) = obj.get("dryPasses") {
        match n
            .as_u64()
            .filter(|n| *n >= 1)
            .and_then(|n| u32::try_from(n).ok())
        {
            Some(n) => review.dry_passes = n,
            None => sink.push(Diagnostic::error(
                "agb.plan.dry-passes",
                "/prosecution/dryPasses",
                format!("plan.prosecution.dryPasses must be an integer >= 1 (got {n})"),
            )),
        }
    }
    review
}

fn check_tickets(root: Obj<'_>, routing: &Routing, sink: &mut dyn Sink) -> Vec<Ticket> {
    let items = match root.get("tickets") {
        Some(Val::Array(a)) if !a.is_empty() => a,
        Some(Val::Array(_)) | None => {
            sink.push(Diagnostic::error(
                "agb.plan.tickets",
                "/tickets",
                "plan.tickets is empty",
            ));
            return Vec::new();
        }
        Some(_) => {
            sink.push(Diagnostic::error(
                "agb.plan.tickets",
                "/tickets",
                "plan.tickets must be an array of tickets",
            ));
            return Vec::new();
        }
    };
    // The count is known: no spare room, and no copy of a half-built list.
    let mut tickets: Vec<Ticket> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = Pointer::root().key("tickets").index(i);
        let Some(obj) = item.as_object() else {
            sink.push(Diagnostic::error(
                "agb.ticket.type",
                &at,
                format!("tickets[{i}] must be an object"),
            ));
            continue;
        };
        let ticket = check_ticket(obj, &at, routing, sink);
        check_edges(obj, &ticket.id, &at, sink);
        tickets.push(ticket);
    }
    check_ids(&tickets, items, sink);
    link(&mut tickets, items, sink);
    tickets
}

/// Each ticket's id as the document has it (a ticket's own, or empty),
/// with the ticket's index, of every ticket (object) of `items`.
fn ids(items: Arr<'_>) -> impl Iterator<Item = (usize, usize, Obj<'_>, &str)> {
    (items.iter().enumerate())
        .filter_map(|(i, v)| Some((i, v.as_object()?)))
        .enumerate()
        .map(|(k, (i, obj))| (k, i, obj, obj.get("id").and_then(Val::as_str).unwrap_or("")))
}

/// Fills in `depends_on` from the tickets' edges (an edge `A -> B` makes
/// B depend on A), each list made at its size, and reports edges to no
/// ticket. The edges are read from the document twice rather than
/// gathered: a list of every edge, held with the parsed tree and the
/// tickets, was a large plan's peak (issue 53).
fn link(tickets: &mut [Ticket], items: Arr<'_>, sink: &mut dyn Sink) {
    // A repeated id (reported by `check_ids`) names its first ticket.
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(tickets.len());
    for (k, _, _, id) in ids(items) {
        by_id.entry(id).or_insert(k);
    }
    let mut counts = vec![0u32; tickets.len()];
    for (_, i, obj, from) in ids(items) {
        for (j, to) in targets(obj, from) {
            match by_id.get(to) {
                Some(&k) => counts[k] += 1,
                None => sink.push(Diagnostic::error(
                    "agb.edge.unknown-target",
                    Pointer::root()
                        .key("tickets")
                        .index(i)
                        .key("edges")
                        .index(j)
                        .key("to"),
                    format!("{from}: edge to unknown ticket '{to}'"),
                )),
            }
        }
    }
    for (t, n) in tickets.iter_mut().zip(counts) {
        t.depends_on.reserve_exact(n as usize);
    }
    for (_, _, obj, from) in ids(items) {
        for (_, to) in targets(obj, from) {
            if let Some(&k) = by_id.get(to) {
                if !tickets[k].depends_on.iter().any(|d| d == from) {
                    tickets[k].depends_on.push(from.to_string());
                }
            }
        }
    }
}

/// The well-formed edges of the ticket `obj` whose id is `id`: each
/// edge's index and target ([`check_edges`] reports the others).
fn targets<'a>(obj: Obj<'a>, id: &'a str) -> impl Iterator<Item = (usize, &'a str)> + 'a {
    let edges = obj.get("edges").and_then(Val::as_array);
    (edges.into_iter().flat_map(|a| a.iter().enumerate()))
        .filter_map(|(j, edge)| Some((j, edge.get("to").and_then(Val::as_str)?)))
        .filter(move |(_, to)| !to.trim().is_empty() && *to != id)
}

fn check_ids(tickets: &[Ticket], items: Arr<'_>, sink: &mut dyn Sink) {
    let mut exact: HashMap<&str, usize> = HashMap::new();
    let mut lower: HashMap<String, usize> = HashMap::new();
    let positions = items
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_object())
        .map(|(i, _)| i);
    for (t, i) in tickets.iter().zip(positions) {
        let at = Pointer::root().key("tickets").index(i).key("id");
        if t.id.is_empty() {
            continue;
        }
        if let Some(&first) = exact.get(t.id.as_str()) {
            sink.push(
                Diagnostic::error(
                    "agb.ticket.duplicate-id",
                    &at,
                    format!("duplicate ticket id '{}'", t.id),
                )
                .with_hint(format!(
                    "tickets[{first}] has the same id; ids must be unique"
                )),
            );
            continue;
        }
        exact.insert(&t.id, i);
        match lower.get(&t.id.to_lowercase()) {
            Some(&first) => sink.push(
                Diagnostic::error(
                    "agb.ticket.case-collision",
                    &at,
                    format!(
                        "ticket id '{}' collides with '{}' when lower-cased (branch agb/{}, worktree agb-{})",
                        t.id,
                        (items.get(first).and_then(|t| t.get("id")))
                            .and_then(Val::as_str)
                            .unwrap_or(""),
                        t.id.to_lowercase(),
                        t.id.to_lowercase()
                    ),
                )
                .with_hint("ids must differ in more than letter case"),
            ),
            None => {
                lower.insert(t.id.to_lowercase(), i);
            }
        }
    }
}

fn check_ticket(obj: Obj<'_>, at: &Pointer, routing: &Routing, sink: &mut dyn Sink) -> Ticket {
    unknown_keys(obj, &TICKET_KEYS, at, "ticket", sink);
    let id = check_id(obj, at, sink);
    let label = if id.is_empty() {
        at.to_string()
    } else {
        id.clone()
    };
    let title = check_title(obj, at, &label, sink);
    let body = match obj.get("body") {
        Some(Val::String(s)) if !s.trim().is_empty() => s.to_string(),
        _ => {
            sink.push(
                Diagnostic::error(
                    "agb.ticket.body",
                    at.key("body"),
                    format!("{label}: body is required and must be a non-blank string"),
                )
                .with_hint(
                    "the body is the agent's prompt: what to build and how to know it is done",
                ),
            );
            String::new()
        }
    };
    let scope = match obj.get("scope") {
        Some(Val::Array(a)) if !a.is_empty() => {
            pathspecs(a, &at.key("scope"), &label, "scope", sink)
        }
        _ => {
            sink.push(
                Diagnostic::error("agb.ticket.scope", at.key("scope"), format!("{label}: scope must be a non-empty array"))
                    .with_hint("list the files or globs the ticket may change, for example `[\"src/parser.rs\"]`"),
            );
            Vec::new()
        }
    };
    let rails = match obj.get("rails") {
        None => Vec::new(),
        Some(Val::Array(a)) => pathspecs(a, &at.key("rails"), &label, "rails", sink),
        Some(_) => {
            sink.push(Diagnostic::error(
                "agb.ticket.rails",
                at.key("rails"),
                format!("{label}: rails must be an array of pathspecs"),
            ));
            Vec::new()
        }
    };
    let tier = enum_field(obj, "tier", &TIERS, at, &label, sink);
    let pool_hint = enum_field(obj, "pool_hint", &POOL_HINTS, at, &label, sink);
    // An invalid tier or hint is reported above; routing it would only repeat that.
    let known = |key: &str, value: &Option<String>| !obj.contains_key(key) || value.is_some();
    if known("tier", &tier) && known("pool_hint", &pool_hint) {
        check_route(
            tier.as_deref(),
            pool_hint.as_deref(),
            at,
            &label,
            routing,
            sink,
        );
    }
    let mut metadata = Map::new();
    if let Some(duration) = check_duration(obj, at, &label, sink) {
        metadata.insert("duration".into(), duration);
    }
    if obj.contains_key(ARCHIVE_KEY) {
        sink.push(
            Diagnostic::error(
                "agb.ticket.reserved",
                at.key(ARCHIVE_KEY),
                format!("{label}: {ARCHIVE_KEY} is reserved for archived tickets"),
            )
            .at_key()
            .with_hint(format!(
                "remove `{ARCHIVE_KEY}`; a plan holds live tickets only"
            )),
        );
    }
    Ticket {
        title,
        metadata: metadata.into(),
        scope: scope.into_iter().map(ScopeEntry::any).collect(),
        rails,
        tier,
        pool_hint,
        ..Ticket::new(id, body)
    }
}

/// adlc's ticket check, which agb runs on every ticket, wants a title:
/// a string of at least one character (a blank one passes).
fn check_title(obj: Obj<'_>, at: &Pointer, label: &str, sink: &mut dyn Sink) -> String {
    match obj.get("title") {
        Some(Val::String(s)) if !s.is_empty() => s.to_string(),
        _ => {
            sink.push(
                Diagnostic::error(
                    "agb.ticket.title",
                    at.key("title"),
                    format!("{label}: title is required and must be a non-empty string"),
                )
                .with_hint(
                    "give the ticket a short title, for example `\"title\": \"math utilities\"`",
                ),
            );
            String::new()
        }
    }
}

/// adlc's relative build-time estimate: when given, a positive finite
/// number. Kept as ticket metadata so that writing the plan back as agb
/// keeps it.
fn check_duration(obj: Obj<'_>, at: &Pointer, label: &str, sink: &mut dyn Sink) -> Option<Value> {
    let value = obj.get("duration")?;
    match value.as_f64() {
        Some(d) if d.is_finite() && d > 0.0 => Some(value.to_value()),
        _ => {
            sink.push(
                Diagnostic::error(
                    "agb.ticket.duration",
                    at.key("duration"),
                    format!("{label}: duration must be a positive number (got {value})"),
                )
                .with_hint("`duration` is a relative estimate (default 1): write a number above 0, or remove it"),
            );
            None
        }
    }
}

fn check_id(obj: Obj<'_>, at: &Pointer, sink: &mut dyn Sink) -> String {
    let at = at.key("id");
    let Some(id) = obj.get("id").and_then(Val::as_str) else {
        sink.push(Diagnostic::error(
            "agb.ticket.id",
            &at,
            "ticket id is required and must be a string",
        ));
        return String::new();
    };
    if !TICKET_ID_RE.is_match(id) {
        sink.push(Diagnostic::error(
            "agb.ticket.id",
            &at,
            format!("ticket id '{id}' must match {}", TICKET_ID_RE.as_str()),
        ));
    } else if let Some(why) = ref_name_problem(&format!("agb/{}", id.to_lowercase())) {
        sink.push(
            Diagnostic::error("agb.ticket.id-ref", &at, format!("ticket id '{id}' cannot be a git branch name: {why}"))
                .with_hint("agb accepts this id but its run fails when it creates the branch; rename the ticket"),
        );
    }
    id.to_string()
}

/// Reports each edge that is not well-formed ([`targets`] gives the others).
fn check_edges(obj: Obj<'_>, id: &str, at: &Pointer, sink: &mut dyn Sink) {
    let Some(edges) = obj.get("edges") else {
        return;
    };
    let Some(edges) = edges.as_array() else {
        sink.push(Diagnostic::error(
            "agb.ticket.edges",
            at.key("edges"),
            format!("{id}: edges must be an array of {{\"to\": ID}}"),
        ));
        return;
    };
    for (j, edge) in edges.iter().enumerate() {
        let eat = at.key("edges").index(j);
        match edge.get("to").and_then(Val::as_str) {
            Some(to) if !to.trim().is_empty() => {
                if to == id {
                    sink.push(Diagnostic::error(
                        "agb.edge.self",
                        eat.key("to"),
                        format!("{id}: edge to itself"),
                    ));
                }
            }
            _ => sink.push(Diagnostic::error(
                "agb.edge.to",
                eat.key("to"),
                format!("{id}: edge must have a non-blank string `to`"),
            )),
        }
    }
}

fn pathspecs(
    items: Arr<'_>,
    at: &Pointer,
    label: &str,
    field: &str,
    sink: &mut dyn Sink,
) -> Vec<String> {
    let mut out = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let Some(raw) = item.as_str() else {
            sink.push(Diagnostic::error(
                "agb.pathspec.type",
                at.index(k),
                format!("{label}: {field}[{k}] must be a string"),
            ));
            continue;
        };
        match pathspec::check(raw) {
            Ok(spec) => out.push(spec),
            Err(e) => sink.push(Diagnostic::error(
                format!("agb.pathspec.{}", e.rule()),
                at.index(k),
                format!(
                    "{label}: {field}[{k}] '{raw}' is not a valid pathspec: {}",
                    e.reason()
                ),
            )),
        }
    }
    out
}

fn enum_field(
    obj: Obj<'_>,
    key: &str,
    allowed: &[&str],
    at: &Pointer,
    label: &str,
    sink: &mut dyn Sink,
) -> Option<String> {
    let v = obj.get(key)?;
    match v.as_str() {
        Some(s) if allowed.contains(&s) => Some(s.to_string()),
        _ => {
            sink.push(Diagnostic::error(
                format!("agb.ticket.{}", key.replace('_', "-")),
                at.key(key),
                format!(
                    "{label}: {key} must be one of {} (got {v})",
                    allowed.join(", ")
                ),
            ));
            None
        }
    }
}

/// The tier and hint are known (or absent, meaning their defaults); the
/// pair must still leave a model in the routing table.
fn check_route(
    tier: Option<&str>,
    hint: Option<&str>,
    at: &Pointer,
    label: &str,
    routing: &Routing,
    sink: &mut dyn Sink,
) {
    let (tier_name, hint_name) = (
        tier.unwrap_or(DEFAULT_TIER),
        hint.unwrap_or(DEFAULT_POOL_HINT),
    );
    if routing.knows_hint(hint_name) && !routing.candidates(tier_name, hint_name).is_empty() {
        return;
    }
    let field = if hint.is_some() { "pool_hint" } else { "tier" };
    sink.push(
        Diagnostic::error(
            "agb.ticket.no-candidates",
            at.key(field),
            format!(
                "{label}: tier '{tier_name}' with pool_hint '{hint_name}' has no model candidates"
            ),
        )
        .with_hint(
            "pick another tier or pool_hint, or add a model to `[routing]` in planwright.toml",
        ),
    );
}

/// Writes `plan` as an agb plan; pushes a warning for everything agb cannot say.
pub fn emit(plan: &Plan, sink: &mut dyn Sink) -> Value {
    let mut root = Map::new();
    root.insert(
        "repo".into(),
        plan.repo.clone().unwrap_or_else(|| ".".into()).into(),
    );
    if plan.repo.is_none() {
        sink.push(Diagnostic::warning(
            "convert.agb.repo",
            "/repo",
            "agb requires `repo`; wrote \".\" (set it before running agb)",
        ));
    }
    root.insert("base".into(), plan.base.clone().into());
    if !plan.metadata.is_empty() {
        sink.push(Diagnostic::warning(
            "convert.agb.metadata",
            "/metadata",
            "agb plans have no place for the source format's extra fields; dropped `metadata`",
        ));
    }
    let gate = emit_gates(plan, sink);
    root.insert("gate".into(), Value::Object(gate));
    // agb writes an edge on the ticket that merges first: its dependents.
    let graph = crate::graph::TicketGraph::new(plan);
    if plan.tickets.is_empty() {
        sink.push(Diagnostic::warning(
            "convert.agb.tickets",
            "/tickets",
            "agb plans need at least one ticket; this one has none, so the output is not a valid agb plan",
        ));
    }
    let mut tickets = Vec::new();
    for (i, t) in plan.tickets.iter().enumerate() {
        let mut edges: Vec<&str> = Vec::new();
        let first = graph.index_of(&t.id).unwrap_or(i);
        for &d in graph.dependents(first) {
            let id = plan.tickets[d].id.as_str();
            if !edges.contains(&id) {
                edges.push(id);
            }
        }
        tickets.push(emit_ticket(i, t, &edges, sink));
    }
    root.insert("tickets".into(), tickets.into());
    if !plan.caps.is_empty() {
        root.insert(
            "caps".into(),
            serde_json::to_value(&plan.caps).unwrap_or_default(),
        );
    }
    if plan.review.dry_passes != 1 {
        root.insert(
            "prosecution".into(),
            serde_json::json!({"dryPasses": plan.review.dry_passes}),
        );
    }
    Value::Object(root)
}

/// agb has one `build` and one `test` gate: gates with those names keep
/// them; any other gate takes a free one (with a warning) or is dropped.
fn emit_gates(plan: &Plan, sink: &mut dyn Sink) -> Map<String, Value> {
    let command = Gate::command_line;
    let mut gate = Map::new();
    let named = |g: &Gate| g.name == "build" || g.name == "test";
    for (i, g) in plan.gates.iter().enumerate().filter(|(_, g)| named(g)) {
        if gate.contains_key(&g.name) {
            sink.push(Diagnostic::warning(
                "convert.agb.gate",
                format!("/gates/{i}"),
                format!(
                    "agb has one {} gate; dropped the second '{}' gate",
                    g.name, g.name
                ),
            ));
            continue;
        }
        gate.insert(g.name.clone(), command(g).into());
    }
    for (i, g) in plan.gates.iter().enumerate().filter(|(_, g)| !named(g)) {
        let at = format!("/gates/{i}");
        match ["test", "build"]
            .into_iter()
            .find(|n| !gate.contains_key(*n))
        {
            Some(free) => {
                sink.push(Diagnostic::warning(
                    "convert.agb.gate",
                    at,
                    format!(
                        "agb gates are named build and test; gate '{}' became the {free} gate",
                        g.name
                    ),
                ));
                gate.insert(free.into(), command(g).into());
            }
            None => sink.push(Diagnostic::warning(
                "convert.agb.gate",
                at,
                format!(
                    "agb has one build and one test gate; dropped gate '{}'",
                    g.name
                ),
            )),
        }
    }
    if gate.is_empty() {
        // agb rejects a plan without a build or test gate; say so now, not
        // when agb reads the file.
        sink.push(Diagnostic::warning(
            "convert.agb.gate",
            "/gates",
            "agb requires a build or test gate and this plan has no plan-wide gate; wrote an empty `gate`, which agb rejects (add `\"test\": \"<your test command>\"` to it)",
        ));
    }
    gate
}

fn emit_ticket(i: usize, t: &Ticket, edges: &[&str], sink: &mut dyn Sink) -> Value {
    let at = Pointer::root().key("tickets").index(i);
    let mut obj = Map::new();
    obj.insert("id".into(), t.id.clone().into());
    let title = if t.title.is_empty() {
        let title = t.made_up_title();
        sink.push(Diagnostic::warning(
            "convert.agb.title",
            at.key("title"),
            format!("{}: agb tickets need a title; used `{title}`", t.id),
        ));
        title
    } else {
        t.title.clone()
    };
    obj.insert("title".into(), title.into());
    obj.insert("body".into(), t.body.clone().into());
    let mut scope = Vec::new();
    for (k, s) in t.scope.iter().enumerate() {
        if s.op != ScopeOp::Any {
            sink.push(Diagnostic::warning(
                "convert.agb.scope-op",
                at.key("scope").index(k),
                format!(
                    "{}: agb has no per-file operations; '{}' may be changed in any way",
                    t.id, s.pattern
                ),
            ));
        }
        if let ScopeOp::Rename { from } = &s.op {
            scope.push(Value::from(from.clone()));
        }
        scope.push(s.pattern.clone().into());
    }
    obj.insert("scope".into(), scope.into());
    if !t.rails.is_empty() {
        obj.insert("rails".into(), t.rails.clone().into());
    }
    let edges: Vec<Value> = edges
        .iter()
        .map(|to| serde_json::json!({ "to": to }))
        .collect();
    if !edges.is_empty() {
        obj.insert("edges".into(), edges.into());
    }
    if let Some(tier) = &t.tier {
        obj.insert("tier".into(), tier.clone().into());
    }
    if let Some(hint) = &t.pool_hint {
        obj.insert("pool_hint".into(), hint.clone().into());
    }
    let mut metadata = t.metadata.clone();
    if let Some(duration) = metadata.remove("duration").filter(Value::is_number) {
        obj.insert("duration".into(), duration);
    }
    let dropped = [
        ("model", t.model.is_some()),
        ("gates", !t.gates.is_empty()),
        ("checks", !t.checks.is_empty()),
        ("counterfactuals", !t.counterfactuals.is_empty()),
        ("estimate_minutes", t.estimate_minutes.is_some()),
        ("metadata", !metadata.is_empty()),
    ];
    for (field, present) in dropped {
        if present {
            sink.push(Diagnostic::warning(
                format!("convert.agb.{}", field.replace('_', "-")),
                at.key(field),
                format!("{}: agb tickets have no `{field}`; dropped", t.id),
            ));
        }
    }
    Value::Object(obj)
}
/// agb in the table of formats.
pub struct Agb;

impl super::PlanFormat for Agb {
    fn format(&self) -> Format {
        Format::Agb
    }

    fn detect(&self, root: Obj<'_>) -> super::Fit {
        use super::Fit;
        match (root.contains_key("tickets"), root.contains_key("gate")) {
            (true, true) => Fit::Full,
            (true, false) => Fit::Partial("no `gate` key".into()),
            (false, true) => Fit::Partial("no `tickets` key".into()),
            (false, false) => Fit::No("no `tickets` and `gate` keys".into()),
        }
    }

    fn validate(&self, doc: &Document, options: &Options, sink: &mut dyn Sink) -> Option<Plan> {
        validate(doc, options, sink)
    }

    fn emit(&self, plan: &Plan, sink: &mut dyn Sink) -> Value {
        emit(plan, sink)
    }

    fn schema(&self) -> Option<Value> {
        None
    }

    fn pointer(&self, i: usize) -> [Pointer; 2] {
        let ticket = Pointer::root().key("tickets").index(i);
        [ticket.key("scope"), ticket]
    }
}
