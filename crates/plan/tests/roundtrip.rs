//! Conversion round trips over generated plans: native -> native loses
//! nothing; native -> agb, codeboost or standard_v1 -> native loses nothing
//! that format can express, and every warning of a conversion names
//! something that really was dropped or changed.
#![forbid(unsafe_code)]

use planwright_plan::command;
use planwright_plan::diag::{Diagnostic, Severity};
use planwright_plan::formats::{self, Options};
use planwright_plan::model::{
    Counterfactual, CounterfactualTests, Format, Gate, Mutation, Plan, Review, ScopeEntry, ScopeOp,
    Ticket,
};
use planwright_plan::Document;
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Writes `plan` as `to`, then reads the text back with `options`.
fn through(plan: &Plan, to: Format, options: &Options) -> (Plan, Vec<Diagnostic>) {
    let (back, emitted, errors, text) = attempt(plan, to, options);
    assert!(errors.is_empty(), "{errors:#?}\n{text}");
    (back.expect("valid"), emitted)
}

/// Writes `plan` as `to` and reads it back: the plan read back, the
/// warnings of the writer, the errors of the reader and the text.
fn attempt(
    plan: &Plan,
    to: Format,
    options: &Options,
) -> (Option<Plan>, Vec<Diagnostic>, Vec<Diagnostic>, String) {
    let mut emitted = Vec::new();
    let value = formats::emit(plan, to, &mut emitted);
    let text = serde_json::to_string_pretty(&value).unwrap();
    let doc = Document::parse("plan.json", text.clone()).unwrap();
    let mut found = Vec::new();
    let outcome = formats::validate(&doc, options, &mut found);
    found.retain(|d| d.severity == Severity::Error);
    (outcome.plan, emitted, found, text)
}

fn word() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_-]{0,6}"
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,20}",
        "\\PC{0,12}",
        Just("quote \" and \\ and 'x'".to_string())
    ]
}

fn nonblank() -> impl Strategy<Value = String> {
    any_text().prop_map(|s| format!("do {s}"))
}

/// Valid agb pathspecs, some with globs.
fn pathspec() -> impl Strategy<Value = String> {
    let seg = prop_oneof![word(), Just("*".to_string()), Just("*.rs".to_string())];
    (word(), prop::collection::vec(seg, 0..3), word()).prop_map(|(first, mid, last)| {
        let mut parts = vec![first];
        parts.extend(mid);
        parts.push(last);
        parts.join("/")
    })
}

fn argv() -> impl Strategy<Value = Vec<String>> {
    (word(), prop::collection::vec(any_text(), 0..3)).prop_map(|(p, mut rest)| {
        rest.insert(0, p);
        rest
    })
}

fn metadata() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(word(), any_text(), 0..2)
        .prop_map(|m| m.into_iter().map(|(k, v)| (k, Value::from(v))).collect())
}

fn route() -> impl Strategy<Value = (Option<String>, Option<String>)> {
    let pairs: Vec<(Option<&str>, Option<&str>)> = vec![
        (None, None),
        (Some("cheap"), Some("gemini")),
        (Some("mid"), Some("claude")),
        (Some("frontier"), Some("auto")),
        (None, Some("claude")),
        (Some("frontier"), None),
    ];
    prop::sample::select(pairs).prop_map(|(t, h)| (t.map(String::from), h.map(String::from)))
}

/// What agb can express of a ticket; `deps` are picked among earlier tickets.
fn agb_ticket(i: usize) -> impl Strategy<Value = Ticket> {
    (
        // agb requires a title.
        nonblank(),
        nonblank(),
        prop::collection::vec(pathspec(), 1..4),
        prop::collection::vec(pathspec(), 0..2),
        prop::collection::vec(0..i.max(1), 0..3),
        route(),
    )
        .prop_map(
            move |(title, body, scope, rails, deps, (tier, pool_hint))| {
                let mut deps: Vec<String> = deps
                    .into_iter()
                    .filter(|&d| d < i)
                    .map(|d| format!("T{d}"))
                    .collect();
                deps.sort();
                deps.dedup();
                Ticket {
                    id: format!("T{i}"),
                    title,
                    body,
                    scope: scope.into_iter().map(ScopeEntry::any).collect(),
                    rails,
                    depends_on: deps,
                    tier,
                    pool_hint,
                    model: None,
                    gates: vec![],
                    checks: vec![],
                    counterfactuals: vec![],
                    estimate_minutes: None,
                    metadata: Map::new(),
                }
            },
        )
}

fn agb_plan() -> impl Strategy<Value = Plan> {
    (1usize..6)
        .prop_flat_map(|n| {
            let tickets: Vec<_> = (0..n).map(agb_ticket).collect();
            (
                tickets,
                prop::sample::select(vec!["main", "dev", "release/1.2"]),
                word(),
                prop::option::of(argv()),
                prop::option::of(argv()),
                prop::collection::btree_map(word(), 1u32..9, 0..3),
                1u32..4,
            )
        })
        .prop_map(|(tickets, base, repo, build, test, caps, dry_passes)| {
            let mut gates = Vec::new();
            if let Some(argv) = build {
                gates.push(Gate {
                    name: "build".into(),
                    argv,
                });
            }
            // agb needs at least one gate.
            gates.push(Gate {
                name: "test".into(),
                argv: test.unwrap_or_else(|| vec!["npm".into(), "test".into()]),
            });
            Plan {
                source_format: Format::Native,
                repo: Some(format!("/srv/{repo}")),
                base: base.into(),
                gates,
                tickets,
                caps,
                review: Review { dry_passes },
                metadata: Map::new(),
            }
        })
}

fn scope_op() -> impl Strategy<Value = ScopeOp> {
    prop_oneof![
        Just(ScopeOp::Any),
        Just(ScopeOp::Create),
        Just(ScopeOp::Modify),
        Just(ScopeOp::Delete),
        pathspec().prop_map(|from| ScopeOp::Rename { from }),
    ]
}

fn counterfactual() -> impl Strategy<Value = Counterfactual> {
    (
        pathspec(),
        any_text(),
        any_text(),
        any::<bool>(),
        word(),
        prop::option::of(word()),
    )
        .prop_map(
            |(control_path, find, replace, patch, run, package)| Counterfactual {
                control_path,
                mutation: if patch {
                    Mutation::Patch { patch: find }
                } else {
                    Mutation::FindReplace { find, replace }
                },
                tests: CounterfactualTests {
                    run,
                    package,
                    argv: None,
                },
            },
        )
}

/// Everything the IR can hold.
fn native_plan() -> impl Strategy<Value = Plan> {
    agb_plan()
        .prop_flat_map(|plan| {
            let n = plan.tickets.len();
            let extras = prop::collection::vec(
                (
                    prop::collection::vec((pathspec(), scope_op()), 1..3),
                    prop::option::of(word()),
                    prop::collection::vec((word(), argv()), 0..2),
                    prop::collection::vec(any_text(), 0..2),
                    prop::collection::vec(counterfactual(), 0..2),
                    prop::option::of(0u32..500),
                    metadata(),
                ),
                n,
            );
            (Just(plan), extras, metadata(), prop::option::of(word()))
        })
        .prop_map(|(mut plan, extras, meta, no_repo)| {
            for (t, (scope, model, gates, checks, cfs, minutes, meta)) in
                plan.tickets.iter_mut().zip(extras)
            {
                t.scope = scope
                    .into_iter()
                    .map(|(pattern, op)| ScopeEntry { pattern, op })
                    .collect();
                t.model = model;
                t.gates = gates
                    .into_iter()
                    .map(|(name, argv)| Gate { name, argv })
                    .collect();
                t.checks = checks;
                t.counterfactuals = cfs;
                t.estimate_minutes = minutes;
                t.metadata = meta;
            }
            plan.metadata = meta;
            if no_repo.is_some() {
                plan.repo = None;
            }
            plan
        })
}

/// A few paths, some inside others, so that tickets share them.
const CROWDED: [&str; 5] = ["a", "a/b", "a/b/c", "c", "d/e"];

/// Any plan, its paths drawn from [`CROWDED`]: scopes overlap within and
/// across tickets.
fn crowded_plan() -> impl Strategy<Value = Plan> {
    native_plan().prop_map(|mut plan| {
        let pick = |p: &str| CROWDED[p.bytes().map(usize::from).sum::<usize>() % CROWDED.len()];
        for t in &mut plan.tickets {
            for s in &mut t.scope {
                s.pattern = pick(&s.pattern).to_string();
                if let ScopeOp::Rename { from } = &mut s.op {
                    *from = pick(from).to_string();
                }
            }
        }
        plan
    })
}

/// What agb cannot say: the source format, the order of gates (agb reads
/// build, then test) and of dependencies (agb lists them by the plan order
/// of the tickets that merge first).
fn normalized(mut plan: Plan) -> Plan {
    plan.source_format = Format::Native;
    plan.gates.sort_by(|a, b| a.name.cmp(&b.name));
    let order: BTreeMap<String, usize> = plan
        .tickets
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.clone(), i))
        .collect();
    for t in &mut plan.tickets {
        t.depends_on.sort_by_key(|d| order[d]);
    }
    plan
}

fn lenient() -> Options {
    Options {
        strict_gates: false,
        ..Options::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn native_to_native_loses_nothing(plan in native_plan()) {
        let (back, warnings) = through(&plan, Format::Native, &lenient());
        prop_assert!(warnings.is_empty());
        prop_assert_eq!(back, plan);
    }

    #[test]
    fn native_to_agb_to_native_keeps_what_agb_says(plan in agb_plan()) {
        let (back, warnings) = through(&plan, Format::Agb, &lenient());
        prop_assert!(warnings.is_empty(), "{:?}", warnings);
        prop_assert_eq!(normalized(back), normalized(plan));
    }

    #[test]
    fn agb_warns_for_everything_it_drops(plan in native_plan()) {
        let mut warnings = Vec::new();
        formats::emit(&plan, Format::Agb, &mut warnings);
        let dropped = plan.tickets.iter().any(|t| {
            t.model.is_some()
                || t.title.is_empty()
                || !t.gates.is_empty()
                || !t.checks.is_empty()
                || !t.counterfactuals.is_empty()
                || t.estimate_minutes.is_some()
                || !t.metadata.is_empty()
                || t.scope.iter().any(|s| s.op != ScopeOp::Any)
        }) || !plan.metadata.is_empty() || plan.repo.is_none();
        prop_assert_eq!(dropped, !warnings.is_empty());
    }
}

// ---------------------------------------------------------------- codeboost

/// Literal paths, none inside another: an item may declare any of them.
const CODEBOOST_PATHS: [&str; 9] = [
    "README.md",
    "src/a.rs",
    "src/b.rs",
    "src/c.rs",
    "lib/x.go",
    "lib/y.go",
    "docs/z.md",
    "ui/w.ts",
    "ui/é.ts",
];

/// A non-empty text of at most `max` characters, sometimes exactly `max`.
fn text_upto(max: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        6 => nonblank(),
        1 => Just("x".repeat(max)),
        1 => Just("é".repeat(max)),
    ]
}

/// Arguments the `cmd` grammar can quote: no backslash, control or format
/// characters, but spaces, quotes and shell characters.
fn cmd_arg() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        proptest::char::range('a', 'z'),
        Just(' '),
        Just('\''),
        Just('"'),
        Just('.'),
        Just('-'),
        Just('é'),
        Just('\u{1F600}'),
        prop::sample::select(command::SHELL_CHARS.to_vec()),
    ];
    prop::collection::vec(c, 0..8).prop_map(|v| v.into_iter().collect())
}

fn cmd_gate() -> impl Strategy<Value = Gate> {
    (word(), prop::collection::vec(cmd_arg(), 0..3)).prop_map(|(p, mut argv)| {
        argv.insert(0, p);
        Gate {
            name: command::quote(&argv),
            argv,
        }
    })
}

/// Distinct paths with an operation each; a rename takes two of them.
fn codeboost_scope() -> impl Strategy<Value = Vec<ScopeEntry>> {
    (
        prop::sample::subsequence(CODEBOOST_PATHS.to_vec(), 1..6).prop_shuffle(),
        prop::collection::vec(0u8..4, 6),
    )
        .prop_map(|(paths, ops)| {
            let mut rest = paths.into_iter();
            let mut out = Vec::new();
            while let Some(path) = rest.next() {
                let op = match ops[out.len()] {
                    0 => ScopeOp::Create,
                    1 => ScopeOp::Modify,
                    2 => ScopeOp::Delete,
                    _ => rest.next().map_or(ScopeOp::Modify, |from| ScopeOp::Rename {
                        from: from.to_string(),
                    }),
                };
                out.push(ScopeEntry {
                    pattern: path.to_string(),
                    op,
                });
            }
            out
        })
}

/// What codeboost can express of an item; `deps` among earlier items.
fn codeboost_ticket(i: usize) -> impl Strategy<Value = Ticket> {
    (
        text_upto(120),
        text_upto(600),
        codeboost_scope(),
        prop::collection::vec(0..i.max(1), 0..3),
        prop::collection::vec(any::<bool>(), 1..6),
        prop::collection::vec(cmd_gate(), 6),
        prop::collection::vec(text_upto(400), 6),
        prop::collection::vec(text_upto(1200), 6),
    )
        .prop_map(
            move |(title, body, scope, deps, kinds, mut gates, mut checks, changes)| {
                let mut depends_on: Vec<String> = Vec::new();
                for d in deps.into_iter().filter(|&d| d < i) {
                    let id = format!("P{}", d + 1);
                    if !depends_on.contains(&id) {
                        depends_on.push(id);
                    }
                }
                let cmds = kinds.iter().filter(|k| **k).count();
                gates.truncate(cmds);
                checks.truncate(kinds.len() - cmds);
                let changes: Map<String, Value> = scope
                    .iter()
                    .zip(changes)
                    .map(|(s, c)| (s.pattern.clone(), Value::from(c)))
                    .collect();
                let mut metadata = Map::new();
                metadata.insert("changes".into(), Value::Object(changes));
                // Recorded exactly when a check comes before a cmd.
                if kinds.windows(2).any(|w| !w[0] && w[1]) {
                    let order = kinds.iter().map(|&k| if k { "cmd" } else { "check" });
                    metadata.insert("acceptance".into(), order.collect());
                }
                Ticket {
                    id: format!("P{}", i + 1),
                    title,
                    body,
                    scope,
                    rails: vec![],
                    depends_on,
                    tier: None,
                    pool_hint: None,
                    model: None,
                    gates,
                    checks,
                    counterfactuals: vec![],
                    estimate_minutes: None,
                    metadata,
                }
            },
        )
}

/// Both paths of a scope entry.
fn sides(s: &ScopeEntry) -> Vec<&str> {
    match &s.op {
        ScopeOp::Rename { from } => vec![s.pattern.as_str(), from.as_str()],
        _ => vec![s.pattern.as_str()],
    }
}

/// Adds the dependencies codeboost's producer rule asks for: an item that
/// touches a path an earlier item adds, renames or deletes depends on it.
fn obey_producers(tickets: &mut [Ticket]) {
    let mut reach: Vec<BTreeSet<usize>> = Vec::new();
    for n in 0..tickets.len() {
        let mut mine = BTreeSet::new();
        let add = |k: usize, mine: &mut BTreeSet<usize>| {
            mine.insert(k);
            mine.extend(reach[k].iter().copied());
        };
        for d in &tickets[n].depends_on {
            add(d[1..].parse::<usize>().unwrap() - 1, &mut mine);
        }
        let touched: BTreeSet<String> = tickets[n]
            .scope
            .iter()
            .flat_map(sides)
            .map(String::from)
            .collect();
        for k in 0..n {
            let produces = tickets[k]
                .scope
                .iter()
                .filter(|s| s.op != ScopeOp::Modify)
                .flat_map(sides)
                .any(|p| touched.contains(p));
            if produces && !mine.contains(&k) {
                tickets[n].depends_on.push(format!("P{}", k + 1));
                add(k, &mut mine);
            }
        }
        reach.push(mine);
    }
}

/// Everything codeboost can express: P1..Pn, literal paths with their
/// operations, `cmd` gates and checks in any order, and the metadata
/// codeboost keeps.
fn codeboost_plan() -> impl Strategy<Value = Plan> {
    (1usize..8)
        .prop_flat_map(|n| {
            let tickets: Vec<_> = (0..n).map(codeboost_ticket).collect();
            (
                tickets,
                prop_oneof![1u64..1000, Just(9_007_199_254_740_991u64)],
                1u64..50,
                text_upto(600),
                prop::collection::vec(text_upto(400), 0..4),
            )
        })
        .prop_map(|(mut tickets, issue, revision, summary, questions)| {
            obey_producers(&mut tickets);
            let mut metadata = Map::new();
            metadata.insert("issue".into(), issue.into());
            metadata.insert("revision".into(), revision.into());
            metadata.insert("summary".into(), summary.into());
            metadata.insert("questions".into(), questions.into());
            Plan {
                source_format: Format::Native,
                repo: None,
                base: "main".into(),
                gates: vec![],
                tickets,
                caps: BTreeMap::new(),
                review: Review::default(),
                metadata,
            }
        })
}

fn native(mut plan: Plan) -> Plan {
    plan.source_format = Format::Native;
    plan
}

/// The ticket a warning's pointer (`/tickets/<i>/...`) names.
fn ticket_of<'a>(plan: &'a Plan, w: &Diagnostic) -> Option<&'a Ticket> {
    let tokens = planwright_plan::pointer::tokens(&w.pointer)?;
    (tokens.first()? == "tickets")
        .then(|| plan.tickets.get(tokens.get(1)?.parse::<usize>().ok()?))
        .flatten()
}

/// Whether a codeboost conversion warning names something of `plan` that
/// `back` (the plan read back) really lost or changed.
fn codeboost_warning_is_true(plan: &Plan, back: &Plan, w: &Diagnostic) -> bool {
    let t = ticket_of(plan, w);
    let ids: Vec<&str> = plan.tickets.iter().map(|t| t.id.as_str()).collect();
    let position = |id: &str| ids.iter().position(|x| *x == id);
    let meta = |p: &Plan, k: &str| p.metadata.get(k).cloned();
    match w
        .code
        .strip_prefix("convert.codeboost.")
        .unwrap_or_default()
    {
        "repo" => plan.repo.is_some(),
        "base" => plan.base != "main",
        "caps" => !plan.caps.is_empty(),
        "review" => plan.review.dry_passes != 1,
        "plan-gates" => !plan.gates.is_empty(),
        "items" => !(1..=30).contains(&plan.tickets.len()),
        "order" => plan.tickets.iter().enumerate().any(|(i, t)| {
            t.depends_on
                .iter()
                .any(|d| position(d).is_some_and(|k| k > i))
        }),
        "cycle" => !planwright_plan::dag::cycles(plan).is_empty(),
        "ids" => back.tickets.iter().map(|t| t.id.as_str()).ne(ids.clone()),
        "issue" => meta(plan, "issue") != meta(back, "issue"),
        "summary" => meta(plan, "summary") != meta(back, "summary"),
        "command" if t.is_none() => plan.gates.iter().any(|g| !quotable(g)),
        "metadata" if t.is_none() => plan_metadata_dropped(plan),
        code => t.is_some_and(|t| ticket_warning_is_true(plan, t, code)),
    }
}

/// Plan metadata codeboost has no place for: other keys, a revision that
/// is not a positive integer, questions that are not 0 to 10 texts of 1 to
/// 400 characters.
fn plan_metadata_dropped(plan: &Plan) -> bool {
    let m = &plan.metadata;
    let keys = ["issue", "revision", "summary", "questions"];
    let revision = m
        .get("revision")
        .is_some_and(|r| r.as_u64().is_none_or(|r| r == 0));
    let questions = m.get("questions").is_some_and(|q| {
        q.as_array().is_none_or(|q| {
            q.len() > 10
                || q.iter().any(|q| {
                    q.as_str()
                        .is_none_or(|q| !(1..=400).contains(&q.chars().count()))
                })
        })
    });
    m.keys().any(|k| !keys.contains(&k.as_str())) || revision || questions
}

/// Every id is `P<n>` (1 to 999, no leading zero) and unique.
fn codeboost_ids(plan: &Plan) -> bool {
    let ids: BTreeSet<&str> = plan.tickets.iter().map(|t| t.id.as_str()).collect();
    ids.len() == plan.tickets.len()
        && ids.iter().all(|id| {
            id.strip_prefix('P')
                .and_then(|n| n.parse::<u16>().ok().filter(|v| v.to_string() == n))
                .is_some_and(|n| (1..=999).contains(&n))
        })
}

/// The codes of the warnings codeboost must give for `plan`, except
/// `producer` and `glob`, which depend on which files survive.
fn codeboost_must_warn(plan: &Plan) -> BTreeSet<&'static str> {
    let mut must = BTreeSet::new();
    let m = &plan.metadata;
    let plan_level = [
        ("repo", plan.repo.is_some()),
        ("base", plan.base != "main"),
        ("caps", !plan.caps.is_empty()),
        ("review", plan.review.dry_passes != 1),
        ("plan-gates", !plan.gates.is_empty()),
        ("command", plan.gates.iter().any(|g| !quotable(g))),
        ("items", !(1..=30).contains(&plan.tickets.len())),
        (
            "issue",
            m.get("issue")
                .and_then(Value::as_u64)
                .is_none_or(|i| i == 0),
        ),
        (
            "summary",
            m.get("summary")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty),
        ),
        ("metadata", plan_metadata_dropped(plan)),
        ("ids", !codeboost_ids(plan)),
    ];
    must.extend(plan_level.iter().filter(|(_, w)| *w).map(|(c, _)| *c));
    let codes = [
        "title",
        "intent",
        "depends-on",
        "acceptance",
        "scope-op",
        "rails",
        "tier",
        "pool-hint",
        "model",
        "counterfactuals",
        "estimate-minutes",
        "command",
        "check",
        "files",
        "metadata",
    ];
    for t in &plan.tickets {
        must.extend(codes.iter().filter(|c| ticket_warning_is_true(plan, t, c)));
    }
    must
}

/// Whether the `cmd` grammar can say the gate's argv.
fn quotable(g: &Gate) -> bool {
    command::parse(&command::quote(&g.argv)).ok().as_ref() == Some(&g.argv)
}

fn overlaps(a: &str, b: &str) -> bool {
    let inside = |x: &str, y: &str| x.strip_prefix(y).is_some_and(|r| r.starts_with('/'));
    a == b || inside(a, b) || inside(b, a)
}

/// Tickets `t` depends on, directly or not.
fn ancestors<'a>(plan: &'a Plan, t: &'a Ticket) -> BTreeSet<&'a str> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&str> = t.depends_on.iter().map(String::as_str).collect();
    while let Some(id) = todo.pop() {
        if seen.insert(id) {
            todo.extend(
                plan.ticket(id)
                    .into_iter()
                    .flat_map(|u| u.depends_on.iter().map(String::as_str)),
            );
        }
    }
    seen
}

/// Another ticket, not among `t`'s dependencies, creates, deletes or
/// renames a path `t` touches.
fn missing_producer(plan: &Plan, t: &Ticket) -> bool {
    let before = ancestors(plan, t);
    let mine: Vec<&str> = t.scope.iter().flat_map(sides).collect();
    plan.tickets.iter().any(|u| {
        u.id != t.id
            && !before.contains(u.id.as_str())
            && u.scope
                .iter()
                .filter(|s| !matches!(s.op, ScopeOp::Any | ScopeOp::Modify))
                .flat_map(sides)
                .any(|p| mine.contains(&p))
    })
}

/// Two scope entries (or the two paths of one rename) name the same path,
/// or one inside the other.
fn self_overlap(t: &Ticket) -> bool {
    let all: Vec<&str> = t.scope.iter().flat_map(sides).collect();
    (0..all.len()).any(|i| (i + 1..all.len()).any(|k| overlaps(all[i], all[k])))
}

fn ticket_warning_is_true(plan: &Plan, t: &Ticket, code: &str) -> bool {
    match code {
        "title" => t.title.is_empty(),
        "intent" => t.body.chars().count() > 600,
        "depends-on" => t.depends_on.iter().any(|d| plan.ticket(d).is_none()),
        "acceptance" => {
            !plan.gates.iter().chain(&t.gates).any(quotable)
                && t.checks.iter().all(String::is_empty)
        }
        "scope-op" => t.scope.iter().any(|s| s.op == ScopeOp::Any),
        "glob" => t.scope.iter().any(|s| s.pattern.contains(['*', '?', '['])),
        "rails" => !t.rails.is_empty(),
        "tier" => t.tier.is_some(),
        "pool-hint" => t.pool_hint.is_some(),
        "model" => t.model.is_some(),
        "counterfactuals" => !t.counterfactuals.is_empty(),
        "estimate-minutes" => t.estimate_minutes.is_some(),
        "command" => t.gates.iter().any(|g| !quotable(g)),
        "check" => t.checks.iter().any(String::is_empty),
        "files" => self_overlap(t),
        "producer" => missing_producer(plan, t),
        "metadata" => t
            .metadata
            .keys()
            .any(|k| k != "changes" && k != "acceptance"),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn native_to_codeboost_to_native_keeps_what_codeboost_says(plan in codeboost_plan()) {
        let (back, warnings) = through(&plan, Format::Codeboost, &lenient());
        prop_assert!(warnings.is_empty(), "{:?}", warnings);
        prop_assert_eq!(native(back), plan);
    }

    #[test]
    fn codeboost_warns_for_what_it_changes_and_only_that(
        plan in prop_oneof![native_plan(), crowded_plan()]
    ) {
        let (back, warnings) = through(&plan, Format::Codeboost, &lenient());
        for w in &warnings {
            prop_assert!(codeboost_warning_is_true(&plan, &back, w), "{:?}", w);
        }
        let warned: BTreeSet<&str> = warnings
            .iter()
            .filter_map(|w| w.code.strip_prefix("convert.codeboost."))
            .collect();
        let must = codeboost_must_warn(&plan);
        prop_assert!(must.is_subset(&warned), "{:?} not in {:?}", must, warned);
    }
}

// -------------------------------------------------------------- standard_v1

/// Repository files a standard_v1 plan may scope.
const STANDARD_V1_PATHS: [&str; 8] = [
    "README.md",
    "cmd/main.go",
    "internal/a.go",
    "internal/b.go",
    "internal/c.go",
    "pkg/x.go",
    "pkg/y.go",
    "docs/é.md",
];

fn confidence() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["low", "medium", "high"])
}

fn recommendation() -> impl Strategy<Value = Option<Value>> {
    prop::option::of((word(), nonblank(), confidence())).prop_map(|r| {
        r.map(|(model, why, c)| {
            json!({"implement_model": model, "rationale": why, "complexity_assessed": c})
        })
    })
}

fn std_counterfactual() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(STANDARD_V1_PATHS.to_vec()),
        nonblank(),
        any::<bool>(),
        word(),
        word(),
    )
        .prop_map(|(path, find, patch, run, package)| {
            let mutation = if patch {
                json!({"patch": format!("--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{find}\n+x\n")})
            } else {
                json!({"find": find, "replace": ""})
            };
            json!({
                "control_path": path,
                "mutation": mutation,
                "tests": {"run": run, "package": format!("./{package}")},
                "expect": "red",
            })
        })
}

/// One sub-plan's own fields: title, scope hint, minutes, confidence,
/// dependencies (indexes, kept to earlier ones), model, lines changed.
type SliceParts = (
    String,
    String,
    u32,
    &'static str,
    Vec<usize>,
    Option<Value>,
    Option<u32>,
);

fn slice_parts() -> impl Strategy<Value = SliceParts> {
    (
        any_text(),
        any_text(),
        1u32..300,
        confidence(),
        prop::collection::vec(0usize..4, 0..3),
        recommendation(),
        prop::option::of(0u32..900),
    )
}

fn scope_files(paths: &[&str], ops: &[u8]) -> Value {
    let files: Vec<Value> = paths
        .iter()
        .zip(ops)
        .map(|(p, op)| {
            let op = ["create", "modify", "delete"][*op as usize % 3];
            json!({"path": p, "operation": op})
        })
        .collect();
    files.into()
}

/// Sub-plans owning disjoint slices of `paths`.
fn sub_plans(paths: &[&str], ops: &[u8], parts: Vec<SliceParts>) -> Value {
    let n = parts.len();
    let list: Vec<Value> = parts
        .into_iter()
        .enumerate()
        .map(|(j, (title, hint, minutes, conf, deps, model, lines))| {
            let mine: Vec<&str> = paths.iter().skip(j).step_by(n).copied().collect();
            let my_ops: Vec<u8> = ops.iter().skip(j).step_by(n).copied().collect();
            let mut deps: Vec<usize> = deps.into_iter().filter(|&d| d < j).collect();
            deps.dedup();
            let mut scope = json!({"files": scope_files(&mine, &my_ops)});
            if let Some(lines) = lines {
                scope["estimated_lines_changed"] = lines.into();
            }
            let mut s = json!({
                "title": format!("slice {j}: {title}"),
                "scope_hint": hint,
                "predicted_runtime_minutes": minutes,
                "predicted_runtime_confidence": conf,
                "scope": scope,
            });
            if !deps.is_empty() {
                s["depends_on"] = deps.into();
            }
            if let Some(m) = model {
                s["model_recommendation"] = m;
            }
            s
        })
        .collect();
    list.into()
}

/// A standard_v1 document with one ticket or two to four sub-plans, with
/// the fields the IR maps and a few it keeps in metadata.
fn standard_v1_doc() -> impl Strategy<Value = Value> {
    let shape = (
        prop::sample::subsequence(STANDARD_V1_PATHS.to_vec(), 4..8).prop_shuffle(),
        prop::collection::vec(0u8..3, 8),
        prop_oneof![Just(vec![]), prop::collection::vec(slice_parts(), 2..5)],
        prop::collection::vec(std_counterfactual(), 0..3),
        prop::collection::vec(prop_oneof![nonblank(), Just("It works.".to_string())], 0..4),
    );
    let text = (
        nonblank(),
        prop::collection::vec(nonblank(), 1..3),
        (nonblank(), nonblank()),
        prop::collection::vec(nonblank(), 0..2),
        prop::sample::select(vec!["example/widgets#77", "not a ref..", "T-1"]),
    );
    let numbers = (1u32..500, confidence(), recommendation(), any::<bool>());
    (shape, text, numbers).prop_map(
        |(
            (paths, ops, slices, cfs, statements),
            (summary, steps, (strategy, rollback), risks, id),
            (minutes, conf, model, partial),
        )| {
            let criteria: Vec<Value> = statements
                .iter()
                .enumerate()
                .map(|(i, s)| json!({"id": format!("c-{i}"), "statement": s, "source": "explicit"}))
                .collect();
            let steps: Vec<Value> = steps
                .iter()
                .enumerate()
                .map(|(i, d)| json!({"step": i + 1, "description": d}))
                .collect();
            let mut doc = json!({
                "plan_version": "standard_v1",
                "ticket_reference": {"type": "github_issue", "url": "https://github.com/example/widgets/issues/77", "id": id},
                "generated_by": {"agent": "claude-code", "model": "m", "timestamp": "2026-03-01T12:00:00Z"},
                "summary": summary,
                "scope": {"files": scope_files(&paths, &ops)},
                "approach": steps,
                "verification": {"test_strategy": strategy, "rollback_plan": rollback},
                "predicted_runtime_minutes": minutes,
                "predicted_runtime_confidence": conf,
            });
            if !criteria.is_empty() {
                doc["verification"]["acceptance_criteria"] = criteria.into();
            }
            if !risks.is_empty() {
                doc["risks_and_assumptions"] = risks.into();
            }
            if let Some(m) = model {
                doc["model_recommendation"] = m;
            }
            if !cfs.is_empty() {
                doc["counterfactuals"] = cfs.into();
            }
            if partial {
                // Fields the IR keeps in metadata only.
                doc["delivery"] = "partial".into();
                doc["remaining_scope"] = "the rest".into();
                doc["scope"]["estimated_lines_changed"] = 120.into();
                doc["verification"]["out_of_scope"] = json!(["Currency."]);
                doc["raw_predicted_runtime_minutes"] = (minutes + 1).into();
                doc["new_architectural_decision"] = json!({"rationale": "r", "related_adrs": ["ADR-1"], "decision_summary": "d"});
            }
            if !slices.is_empty() {
                let subs = sub_plans(&paths, &ops, slices);
                doc["decomposition"] = json!({"rationale": "split", "sub_plans": subs});
            }
            doc
        },
    )
}

/// Reads a document that must be valid.
fn read(value: &Value) -> Plan {
    let text = serde_json::to_string_pretty(value).unwrap();
    let doc = Document::parse("plan.json", text.clone()).unwrap();
    let mut found = Vec::new();
    let outcome = formats::validate(&doc, &lenient(), &mut found);
    let errors: Vec<&Diagnostic> = found
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{text}");
    outcome.plan.expect("valid")
}

/// Roughly standard_v1's counterfactual rules (the emitter uses the real ones).
fn std_runnable(c: &Counterfactual) -> bool {
    let path = c.control_path.as_str();
    let path_ok = !path.trim().is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.split('/').any(|s| s == "..")
        && !path.ends_with("_test.go");
    let mutation_ok = match &c.mutation {
        Mutation::FindReplace { find, replace } => !find.is_empty() && find != replace,
        Mutation::Patch { patch } => patch
            .lines()
            .any(|l| l.starts_with("--- ") || l.starts_with("+++ ") || l.starts_with("diff --git")),
    };
    let package_ok =
        c.tests.package.as_deref().is_none_or(|p| {
            !p.is_empty() && !p.starts_with('/') && !p.split('/').any(|s| s == "..")
        });
    path_ok && mutation_ok && package_ok && !c.tests.run.trim().is_empty()
}

/// `t` scopes a file an earlier ticket scopes too (a rename counting its
/// old path), or scopes nothing.
fn shares_a_file(plan: &Plan, t: &Ticket) -> bool {
    let earlier: Vec<&str> = plan
        .tickets
        .iter()
        .take_while(|u| u.id != t.id)
        .flat_map(|u| &u.scope)
        .flat_map(sides)
        .collect();
    t.scope.is_empty() || t.scope.iter().flat_map(sides).any(|p| earlier.contains(&p))
}

/// The codes of the warnings standard_v1 must give for `plan` (read from
/// another format), for what it drops or must make up.
fn standard_v1_must_warn(plan: &Plan) -> BTreeSet<&'static str> {
    let many = plan.tickets.len() >= 2;
    let any_ticket = |f: &dyn Fn(&Ticket) -> bool| plan.tickets.iter().any(f);
    let cfs: usize = plan.tickets.iter().map(|t| t.counterfactuals.len()).sum();
    let must = [
        ("default", true),
        ("gates", !plan.gates.is_empty()),
        ("repo", plan.repo.is_some()),
        ("base", plan.base != "main"),
        ("caps", !plan.caps.is_empty()),
        ("review", plan.review.dry_passes != 1),
        (
            "metadata",
            !plan.metadata.is_empty() || any_ticket(&|t| !t.metadata.is_empty()),
        ),
        ("ids", many),
        ("rails", any_ticket(&|t| !t.rails.is_empty())),
        ("tier", any_ticket(&|t| t.tier.is_some())),
        ("pool-hint", any_ticket(&|t| t.pool_hint.is_some())),
        (
            "scope-op",
            any_ticket(&|t| {
                t.scope
                    .iter()
                    .any(|s| matches!(s.op, ScopeOp::Any | ScopeOp::Rename { .. }))
            }),
        ),
        (
            "glob",
            any_ticket(&|t| t.scope.iter().any(|s| s.pattern.contains(['*', '?', '[']))),
        ),
        (
            "checks",
            any_ticket(&|t| t.checks.iter().any(String::is_empty)),
        ),
        (
            "counterfactuals",
            cfs > 8 || any_ticket(&|t| t.counterfactuals.iter().any(|c| !std_runnable(c))),
        ),
        (
            "body",
            many && any_ticket(&|t| t.body.trim().lines().count() > 1),
        ),
    ];
    must.iter().filter(|(_, w)| *w).map(|(c, _)| *c).collect()
}

/// Whether a standard_v1 conversion warning names something of `plan`
/// that standard_v1 cannot say.
fn standard_v1_warning_is_true(plan: &Plan, w: &Diagnostic) -> bool {
    let t = ticket_of(plan, w);
    let entry = planwright_plan::pointer::tokens(&w.pointer)
        .and_then(|tokens| tokens.get(3)?.parse::<usize>().ok())
        .and_then(|k| t?.scope.get(k));
    let cfs: usize = plan.tickets.iter().map(|t| t.counterfactuals.len()).sum();
    match w
        .code
        .strip_prefix("convert.standard_v1.")
        .unwrap_or_default()
    {
        "gates" => !plan.gates.is_empty(),
        "repo" => plan.repo.is_some(),
        "base" => plan.base != "main",
        "caps" => !plan.caps.is_empty(),
        "review" => plan.review.dry_passes != 1,
        "rails" => t.is_some_and(|t| !t.rails.is_empty()),
        "tier" => t.is_some_and(|t| t.tier.is_some()),
        "pool-hint" => t.is_some_and(|t| t.pool_hint.is_some()),
        "glob" => entry.is_some_and(|s| s.pattern.contains(['*', '?', '['])),
        "scope-op" => entry.is_some_and(|s| matches!(s.op, ScopeOp::Any | ScopeOp::Rename { .. })),
        "counterfactuals" => {
            cfs > 8 || t.is_some_and(|t| t.counterfactuals.iter().any(|c| !std_runnable(c)))
        }
        "checks" => t.is_some_and(|t| t.checks.iter().any(String::is_empty)),
        "scope-overlap" => t.is_some_and(|t| shares_a_file(plan, t)),
        // A value standard_v1 requires that the plan does not have.
        "default" => plan.source_format != Format::StandardV1,
        "metadata" => match t {
            Some(t) => !t.metadata.is_empty(),
            None => !plan.metadata.is_empty(),
        },
        "ids" => plan
            .tickets
            .iter()
            .enumerate()
            .any(|(i, t)| t.id != format!("sub-{}", i + 1)),
        "body" => t.is_some_and(|t| t.body.trim().lines().count() > 1),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The plan is the IR of a standard_v1 document, as `convert --to
    /// native` writes it (its `source_format` says standard_v1, so its
    /// metadata is standard_v1's).
    #[test]
    fn native_to_standard_v1_to_native_keeps_what_standard_v1_says(doc in standard_v1_doc()) {
        let plan = read(&doc);
        let (back, warnings) = through(&plan, Format::StandardV1, &lenient());
        prop_assert!(warnings.is_empty(), "{:?}", warnings);
        prop_assert_eq!(back, plan);
    }

    #[test]
    fn standard_v1_warns_for_what_it_drops_and_only_that(
        plan in prop_oneof![native_plan(), crowded_plan()]
    ) {
        let (_, warnings, errors, text) = attempt(&plan, Format::StandardV1, &lenient());
        for w in &warnings {
            prop_assert!(standard_v1_warning_is_true(&plan, w), "{:?}", w);
        }
        // Valid, unless the writer said it could not be.
        let said = warnings.iter().any(|w| w.message.contains("not a valid plan"));
        prop_assert!(said || errors.is_empty(), "{:#?}\n{}", errors, text);
        let warned: BTreeSet<&str> = warnings
            .iter()
            .filter_map(|w| w.code.strip_prefix("convert.standard_v1."))
            .collect();
        let must = standard_v1_must_warn(&plan);
        prop_assert!(must.is_subset(&warned), "{:?} not in {:?}", must, warned);
    }
}
