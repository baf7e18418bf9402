//! standard_v1: schema, semantic rules, counterfactual rules, plan-gate
//! advisories, coercion, the IR mapping, conversion back, and the generated
//! field reference.

use planwright_plan::formats::standard_v1;
use planwright_plan::model::{Format, Mutation, ScopeOp};
use planwright_plan::{schema_doc, validate_text, Diagnostic, Options, Plan, Severity};
use serde_json::{json, Value};

const MINIMAL: &str = include_str!("../../../../examples/standard_v1/plan.json");
const FULL: &str = include_str!("../../../../examples/standard_v1/plan.full.json");
const SNAPSHOT: &str = include_str!("../data/standard_v1.snapshot.schema.json");
const SEED: &str = include_str!("../data/standard_v1.seed-reference.txt");

fn minimal() -> Value {
    serde_json::from_str(MINIMAL).unwrap()
}

fn full() -> Value {
    serde_json::from_str(FULL).unwrap()
}

fn capped(n: u32) -> Options {
    Options {
        max_files_changed: Some(n),
        ..Options::default()
    }
}

fn run(v: &Value, options: &Options) -> (Vec<Diagnostic>, Option<Plan>) {
    let text = serde_json::to_string_pretty(v).unwrap();
    let report = validate_text("plan.json", text, options);
    assert_eq!(report.format, Some(Format::StandardV1));
    let ds = report
        .diagnostics
        .into_iter()
        .map(|l| l.diagnostic)
        .collect();
    (ds, report.plan)
}

fn diags(v: &Value) -> Vec<Diagnostic> {
    run(v, &capped(50)).0
}

fn of(ds: &[Diagnostic], s: Severity) -> Vec<(String, String)> {
    ds.iter()
        .filter(|d| d.severity == s)
        .map(|d| (d.code.clone(), d.pointer.clone()))
        .collect()
}

/// Asserts that `ds` has a diagnostic with this code at this pointer, and returns it.
#[track_caller]
fn find<'a>(ds: &'a [Diagnostic], code: &str, pointer: &str) -> &'a Diagnostic {
    ds.iter()
        .find(|d| d.code == code && d.pointer == pointer)
        .unwrap_or_else(|| panic!("no {code} at {pointer:?} in {ds:#?}"))
}

fn set(v: &mut Value, pointer: &str, new: Value) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let target = if parent.is_empty() {
        &mut *v
    } else {
        v.pointer_mut(parent).unwrap()
    };
    match target {
        Value::Object(m) => {
            m.insert(key.to_string(), new);
        }
        Value::Array(a) => a[key.parse::<usize>().unwrap()] = new,
        _ => panic!("cannot set {pointer}"),
    }
}

fn remove(v: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    v.pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove(key);
}

/// The minimal plan with `edit` applied must be rejected with `code` at `pointer`.
#[track_caller]
fn rejects(mut v: Value, edit: impl FnOnce(&mut Value), code: &str, pointer: &str) -> Diagnostic {
    edit(&mut v);
    let (ds, plan) = run(&v, &capped(50));
    assert!(plan.is_none(), "accepted: {ds:#?}");
    let d = find(&ds, code, pointer).clone();
    assert_eq!(d.severity, Severity::Error, "{d:?}");
    d
}

fn criterion(id: &str) -> Value {
    json!({"id": id, "statement": format!("{id} holds"), "source": "explicit"})
}

fn sub_plan(title: &str, files: &[&str]) -> Value {
    let files: Vec<Value> = files
        .iter()
        .map(|p| json!({"path": p, "operation": "modify"}))
        .collect();
    json!({"title": title, "scope_hint": "x", "predicted_runtime_minutes": 5,
           "predicted_runtime_confidence": "low", "scope": {"files": files}})
}

fn phase(title: &str, files: &[&str]) -> Value {
    let files: Vec<Value> = files
        .iter()
        .map(|p| json!({"path": p, "operation": "modify"}))
        .collect();
    json!({"title": title, "scope": {"files": files}})
}

fn counterfactual(path: &str) -> Value {
    json!({"control_path": path, "mutation": {"find": "a", "replace": "b"},
           "tests": {"run": "^TestX$", "package": "./x"}, "expect": "red"})
}

fn with_counterfactual(c: Value) -> impl FnOnce(&mut Value) {
    move |v| set(v, "/counterfactuals", json!([c]))
}

// ---- valid plans ---------------------------------------------------------

#[test]
fn full_plan_using_every_optional_field_validates_clean() {
    let (ds, plan) = run(&full(), &capped(50));
    assert!(of(&ds, Severity::Error).is_empty(), "{ds:#?}");
    assert!(of(&ds, Severity::Warning).is_empty(), "{ds:#?}");
    let mut advisories: Vec<String> = of(&ds, Severity::Advisory)
        .into_iter()
        .map(|(c, _)| c)
        .collect();
    advisories.sort();
    assert_eq!(
        advisories,
        [
            "standard_v1.counterfactuals.decomposed",
            "standard_v1.decision.new",
            "standard_v1.delivery.partial",
        ]
    );
    assert!(plan.is_some());
}

#[test]
fn the_full_example_uses_every_field_of_the_schema() {
    let schema = standard_v1::schema();
    let plan = full();
    let mut missing = Vec::new();
    for key in schema["properties"].as_object().unwrap().keys() {
        // irreducible and split_proposal are mutually exclusive; the
        // irreducible test below covers the other one.
        if plan.get(key).is_none() && key != "irreducible" {
            missing.push(key.clone());
        }
    }
    for key in schema["$defs"]["verification"]["properties"]
        .as_object()
        .unwrap()
        .keys()
    {
        if plan["verification"].get(key).is_none() {
            missing.push(format!("verification.{key}"));
        }
    }
    assert!(missing.is_empty(), "{missing:?}");
}

#[test]
fn minimal_plan_is_valid_and_one_ticket() {
    let (ds, plan) = run(&minimal(), &capped(50));
    assert!(of(&ds, Severity::Error).is_empty(), "{ds:#?}");
    assert!(of(&ds, Severity::Warning).is_empty(), "{ds:#?}");
    let plan = plan.unwrap();
    assert_eq!(plan.tickets.len(), 1);
    let t = &plan.tickets[0];
    assert_eq!(t.id, "example/widgets#42");
    assert_eq!(t.estimate_minutes, Some(15));
    assert_eq!(t.scope.len(), 2);
    assert_eq!(t.scope[0].op, ScopeOp::Modify);
    assert!(t.body.contains("1. Validate the quantity"), "{}", t.body);
}

// ---- schema ----------------------------------------------------------------

#[test]
fn schema_rejects_unknown_fields_everywhere() {
    rejects(
        minimal(),
        |v| set(v, "/extra", json!(1)),
        "standard_v1.schema.additional-properties",
        "/extra",
    );
    rejects(
        minimal(),
        |v| set(v, "/scope/files/0/mode", json!("x")),
        "standard_v1.schema.additional-properties",
        "/scope/files/0/mode",
    );
    rejects(
        minimal(),
        |v| {
            set(
                v,
                "/counterfactuals",
                json!([{"control_path": "a.go", "mutation": {"find": "a", "replace": "b", "x": 1}, "tests": {"run": "r", "package": "./p"}, "expect": "red"}]),
            )
        },
        "standard_v1.schema.additional-properties",
        "/counterfactuals/0/mutation/x",
    );
}

/// The codes of the errors planwright gives the text `text`.
fn error_codes(text: &str, options: &Options) -> Vec<(String, String)> {
    let report = validate_text("plan.json", text.to_string(), options);
    report
        .diagnostics
        .into_iter()
        .filter(|l| l.diagnostic.severity == Severity::Error)
        .map(|l| (l.diagnostic.code, l.diagnostic.pointer))
        .collect()
}

#[test]
fn format_is_an_annotation_as_in_fishhawk() {
    let mut v = minimal();
    set(&mut v, "/ticket_reference/url", json!("not a uri"));
    let (ds, plan) = run(&v, &capped(50));
    assert!(plan.is_some(), "{ds:#?}");
}

#[test]
fn timestamps_are_read_as_go_reads_them() {
    for bad in [
        "yesterday",
        "2026-03-01t12:00:00Z",
        "2026-03-01T12:00:00z",
        "2026-06-30T23:59:60Z",
    ] {
        let d = rejects(
            minimal(),
            |v| set(v, "/generated_by/timestamp", json!(bad)),
            "standard_v1.decode.timestamp",
            "/generated_by/timestamp",
        );
        assert!(
            d.message.contains("not a timestamp fishhawk reads"),
            "{}",
            d.message
        );
    }
    let mut v = minimal();
    set(
        &mut v,
        "/generated_by/timestamp",
        json!("2026-03-01T12:00:00.5+02:00"),
    );
    assert!(run(&v, &capped(50)).1.is_some());
}

#[test]
fn integers_are_read_as_go_ints() {
    let at = "/predicted_runtime_minutes";
    for written in ["30.0", "1e2", "9223372036854775808"] {
        let text = MINIMAL.replace(
            "\"predicted_runtime_minutes\": 15",
            &format!("\"predicted_runtime_minutes\": {written}"),
        );
        assert_eq!(
            error_codes(&text, &capped(50)),
            [("standard_v1.decode.integer".to_string(), at.to_string())],
            "{written}"
        );
    }
}

#[test]
fn every_occurrence_of_a_repeated_key_must_fit() {
    let text = MINIMAL.replace(
        "\"summary\": \"Reject",
        "\"summary\": 5,\n  \"summary\": \"Reject",
    );
    assert_eq!(
        error_codes(&text, &capped(50)),
        [(
            "standard_v1.decode.duplicate-key".to_string(),
            "/summary".to_string()
        )]
    );
    let text = MINIMAL.replace(
        "\"summary\": \"Reject",
        "\"summary\": \"first\",\n  \"summary\": \"Reject",
    );
    assert_eq!(error_codes(&text, &capped(50)), []);
    // Inside an earlier value, the same rules as anywhere.
    let text = MINIMAL.replace(
        "\"plan_version\": \"standard_v1\",",
        "\"plan_version\": \"standard_v1\",\n  \"generated_by\": {\"agent\": 1, \"model\": \"m\", \"timestamp\": \"2026-03-01T12:00:00Z\"},",
    );
    assert!(error_codes(&text, &capped(50)).contains(&(
        "standard_v1.decode.duplicate-key".to_string(),
        "/generated_by/agent".to_string()
    )));
}

#[test]
fn conditionals_of_the_schema() {
    rejects(
        minimal(),
        |v| {
            set(
                v,
                "/verification/acceptance_criteria",
                json!([{"id": "a", "statement": "s", "source": "inferred"}]),
            )
        },
        "standard_v1.schema.required",
        "/verification/acceptance_criteria/0/rationale",
    );
    rejects(
        minimal(),
        |v| {
            set(
                v,
                "/verification/acceptance_criteria",
                json!([{"id": "a", "statement": "s", "source": "explicit", "skip_expected": true}]),
            )
        },
        "standard_v1.schema.required",
        "/verification/acceptance_criteria/0/expectation_basis",
    );
    let d = rejects(
        minimal(),
        |v| set(v, "/delivery", json!("partial")),
        "standard_v1.schema.required",
        "/remaining_scope",
    );
    assert!(d.message.contains("remaining_scope"), "{}", d.message);
    // skip_expected false and explicit criteria need neither.
    let mut v = minimal();
    set(
        &mut v,
        "/verification/acceptance_criteria",
        json!([{"id": "a", "statement": "s", "source": "explicit", "skip_expected": false}]),
    );
    assert!(of(&diags(&v), Severity::Error).is_empty());
}

#[test]
fn enums_and_limits_of_the_new_fields() {
    rejects(
        minimal(),
        |v| set(v, "/delivery", json!("half")),
        "standard_v1.schema.enum",
        "/delivery",
    );
    rejects(
        minimal(),
        |v| set(v, "/verification/acceptance_surface", json!("http")),
        "standard_v1.schema.enum",
        "/verification/acceptance_surface",
    );
    rejects(
        minimal(),
        |v| {
            set(v, "/delivery", json!("partial"));
            set(v, "/remaining_scope", json!("x".repeat(2001)));
        },
        "standard_v1.schema.max-length",
        "/remaining_scope",
    );
    let mut c = counterfactual("a.go");
    c["expect"] = json!("green");
    rejects(
        minimal(),
        with_counterfactual(c),
        "standard_v1.schema.enum",
        "/counterfactuals/0/expect",
    );
    rejects(
        minimal(),
        |v| {
            set(
                v,
                "/new_architectural_decision",
                json!({"rationale": "r", "decision_summary": "d"}),
            )
        },
        "standard_v1.schema.required",
        "/new_architectural_decision/related_adrs",
    );
}

#[test]
fn split_phase_without_files_is_a_schema_error() {
    rejects(
        minimal(),
        |v| {
            set(
                v,
                "/split_proposal",
                json!({"rationale": "r", "phases": [phase("a", &["x"]), {"title": "b", "scope": {"files": []}}]}),
            )
        },
        "standard_v1.schema.min-items",
        "/split_proposal/phases/1/scope/files",
    );
}

// ---- semantic rules ----------------------------------------------------------

#[test]
fn duplicate_criterion_id() {
    let d = rejects(
        minimal(),
        |v| {
            set(
                v,
                "/verification/acceptance_criteria",
                json!([criterion("a"), criterion("b"), criterion("a")]),
            )
        },
        "standard_v1.criterion.duplicate-id",
        "/verification/acceptance_criteria/2/id",
    );
    assert!(d.message.starts_with("plan: semantic: "), "{}", d.message);
}

#[test]
fn acceptance_surface_none_beside_a_drivable_criterion() {
    let skip = json!({"id": "s", "statement": "s", "source": "explicit", "skip_expected": true, "expectation_basis": "e2e test"});
    let blank_basis = json!({"id": "b", "statement": "s", "source": "explicit", "skip_expected": true, "expectation_basis": "  "});
    rejects(
        minimal(),
        |v| {
            set(v, "/verification/acceptance_surface", json!("none"));
            set(
                v,
                "/verification/acceptance_criteria",
                json!([skip, criterion("d"), blank_basis]),
            );
        },
        "standard_v1.acceptance-surface.drivable-criterion",
        "/verification/acceptance_criteria/1",
    );
    // Every criterion skip_expected with a basis: none is drivable.
    let mut v = minimal();
    set(&mut v, "/verification/acceptance_surface", json!("none"));
    set(
        &mut v,
        "/verification/acceptance_criteria",
        json!([{"id": "s", "statement": "s", "source": "explicit", "skip_expected": true, "expectation_basis": "e2e test"}]),
    );
    assert!(of(&diags(&v), Severity::Error).is_empty());
}

#[test]
fn split_phase_rules() {
    let split = |phases: Value| {
        move |v: &mut Value| {
            set(
                v,
                "/split_proposal",
                json!({"rationale": "r", "phases": phases}),
            )
        }
    };
    rejects(
        minimal(),
        split(json!([phase("a", &["x"]), phase("a", &["y"])])),
        "standard_v1.phase.duplicate-title",
        "/split_proposal/phases/1/title",
    );
    let mut p = phase("b", &["y"]);
    p["depends_on"] = json!([5]);
    let d = rejects(
        minimal(),
        split(json!([phase("a", &["x"]), p])),
        "standard_v1.phase.depends-on-range",
        "/split_proposal/phases/1/depends_on/0",
    );
    assert_eq!(
        d.message,
        "plan: semantic: split_proposal phase 1 depends_on index 5 out of range [0,2)"
    );
    let mut p = phase("b", &["y"]);
    p["depends_on"] = json!([1]);
    rejects(
        minimal(),
        split(json!([phase("a", &["x"]), p])),
        "standard_v1.phase.depends-on-self",
        "/split_proposal/phases/1/depends_on/0",
    );
    let (mut a, mut b) = (phase("a", &["x"]), phase("b", &["y"]));
    a["depends_on"] = json!([1]);
    b["depends_on"] = json!([0]);
    let d = rejects(
        minimal(),
        split(json!([a, b])),
        "standard_v1.phase.cycle",
        "/split_proposal/phases/0/depends_on",
    );
    assert!(
        d.message
            .ends_with("dependency cycle among split_proposal phases [0 1]"),
        "{}",
        d.message
    );
}

#[test]
fn irreducible_rules() {
    let split = json!({"rationale": "r", "phases": [phase("a", &["x"]), phase("b", &["y"])]});
    rejects(
        minimal(),
        |v| {
            set(v, "/split_proposal", split);
            set(v, "/irreducible", json!({"rationale": "atomic"}));
        },
        "standard_v1.irreducible.with-split",
        "/irreducible",
    );
    rejects(
        minimal(),
        |v| set(v, "/irreducible", json!({"rationale": " \t"})),
        "standard_v1.irreducible.blank-rationale",
        "/irreducible/rationale",
    );
    let mut v = minimal();
    set(
        &mut v,
        "/irreducible",
        json!({"rationale": "receiver types", "atomicity_basis": "Go methods"}),
    );
    assert!(of(&diags(&v), Severity::Error).is_empty());
}

#[test]
fn sub_plan_rules() {
    let dec = |subs: Value| {
        move |v: &mut Value| {
            set(
                v,
                "/decomposition",
                json!({"rationale": "r", "sub_plans": subs}),
            )
        }
    };
    rejects(
        minimal(),
        dec(json!([sub_plan("a", &["x"]), sub_plan("a", &["y"])])),
        "standard_v1.sub-plan.duplicate-title",
        "/decomposition/sub_plans/1/title",
    );
    let mut no_scope = sub_plan("b", &[]);
    no_scope.as_object_mut().unwrap().remove("scope");
    rejects(
        minimal(),
        dec(json!([sub_plan("a", &["x"]), no_scope])),
        "standard_v1.sub-plan.no-files",
        "/decomposition/sub_plans/1",
    );
    let d = rejects(
        minimal(),
        dec(json!([
            sub_plan("a", &["x", "z"]),
            sub_plan("b", &["y", "x"])
        ])),
        "standard_v1.sub-plan.file-overlap",
        "/decomposition/sub_plans/1/scope/files/1/path",
    );
    assert!(
        d.message
            .contains("'x' is scoped by sub_plan 0 and sub_plan 1"),
        "{}",
        d.message
    );
    let mut b = sub_plan("b", &["y"]);
    b["depends_on"] = json!([2]);
    let d = rejects(
        minimal(),
        dec(json!([sub_plan("a", &["x"]), b])),
        "standard_v1.sub-plan.depends-on-range",
        "/decomposition/sub_plans/1/depends_on/0",
    );
    assert_eq!(
        d.message,
        "plan: semantic: sub_plan 1 depends_on index 2 out of range [0,2)"
    );
    let mut a = sub_plan("a", &["x"]);
    a["depends_on"] = json!([0]);
    let d = rejects(
        minimal(),
        dec(json!([a, sub_plan("b", &["y"])])),
        "standard_v1.sub-plan.depends-on-self",
        "/decomposition/sub_plans/0/depends_on/0",
    );
    assert_eq!(d.message, "plan: semantic: sub_plan 0 depends_on itself");
    let (mut a, mut b, mut c) = (
        sub_plan("a", &["x"]),
        sub_plan("b", &["y"]),
        sub_plan("c", &["z"]),
    );
    a["depends_on"] = json!([2]);
    b["depends_on"] = json!([0]);
    c["depends_on"] = json!([1]);
    let d = rejects(
        minimal(),
        dec(json!([a, b, c])),
        "standard_v1.sub-plan.cycle",
        "/decomposition/sub_plans/0/depends_on",
    );
    assert_eq!(
        d.message,
        "plan: semantic: dependency cycle among sub_plans [0 1 2]"
    );
}

#[test]
fn remaining_scope_rules() {
    rejects(
        minimal(),
        |v| set(v, "/remaining_scope", json!("later")),
        "standard_v1.remaining-scope.not-partial",
        "/remaining_scope",
    );
    rejects(
        minimal(),
        |v| {
            set(v, "/delivery", json!("full"));
            set(v, "/remaining_scope", json!("later"));
        },
        "standard_v1.remaining-scope.not-partial",
        "/remaining_scope",
    );
    rejects(
        minimal(),
        |v| {
            set(v, "/delivery", json!("partial"));
            set(v, "/remaining_scope", json!("   "));
        },
        "standard_v1.remaining-scope.blank",
        "/remaining_scope",
    );
}

#[test]
fn blank_architectural_decision() {
    let decision = |d: Value| move |v: &mut Value| set(v, "/new_architectural_decision", d);
    rejects(
        minimal(),
        decision(json!({"rationale": " ", "related_adrs": [], "decision_summary": "d"})),
        "standard_v1.decision.blank",
        "/new_architectural_decision/rationale",
    );
    rejects(
        minimal(),
        decision(json!({"rationale": "r", "related_adrs": [], "decision_summary": "\n"})),
        "standard_v1.decision.blank",
        "/new_architectural_decision/decision_summary",
    );
    rejects(
        minimal(),
        decision(
            json!({"rationale": "r", "related_adrs": ["ADR-1", " "], "decision_summary": "d"}),
        ),
        "standard_v1.decision.blank",
        "/new_architectural_decision/related_adrs/1",
    );
}

// ---- counterfactual rules ------------------------------------------------------

#[test]
fn counterfactual_control_path() {
    for (path, why) in [
        ("  ", "is blank"),
        ("/etc/x.go", "is absolute"),
        ("a/../x.go", "`..`"),
        ("a\\x.go", "backslash"),
    ] {
        let d = rejects(
            minimal(),
            with_counterfactual(counterfactual(path)),
            "standard_v1.counterfactual.control-path",
            "/counterfactuals/0/control_path",
        );
        assert!(d.message.contains(why), "{path}: {}", d.message);
    }
    rejects(
        minimal(),
        with_counterfactual(counterfactual("x/a_test.go")),
        "standard_v1.counterfactual.test-file",
        "/counterfactuals/0/control_path",
    );
    rejects(
        minimal(),
        with_counterfactual(counterfactual("")),
        "standard_v1.schema.min-length",
        "/counterfactuals/0/control_path",
    );
}

mod limits;
