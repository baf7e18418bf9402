//! standard_v1 documents: generated, converted and read back.

use super::codeboost::{sides, ticket_of};
use super::*;

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
