//! Conversion round trips over generated plans: native -> native loses
//! nothing; native -> agb, codeboost or standard_v1 -> native loses nothing
//! that format can express, and every warning of a conversion names
//! something that really was dropped or changed.

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
                    metadata: Map::new().into(),
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
                t.metadata = meta.into();
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

mod codeboost;
mod standard_v1;
