//! standard_v1: the counterfactual rules, the file caps and what follows.

use super::*;

#[test]
fn counterfactual_mutation_forms() {
    for (mutation, why) in [
        (json!({"find": "a"}), "find without replace"),
        (json!({"replace": "a"}), "replace without find"),
        (json!({"find": "a", "replace": "b", "patch": "p"}), "both"),
        (json!({}), "neither"),
    ] {
        let mut c = counterfactual("a.go");
        c["mutation"] = mutation;
        let d = rejects(
            minimal(),
            with_counterfactual(c),
            "standard_v1.counterfactual.mutation-form",
            "/counterfactuals/0/mutation",
        );
        assert!(d.message.contains(why), "{}", d.message);
    }
    let mut c = counterfactual("a.go");
    c["mutation"] = json!({"find": "x", "replace": "x"});
    rejects(
        minimal(),
        with_counterfactual(c),
        "standard_v1.counterfactual.mutation-noop",
        "/counterfactuals/0/mutation/replace",
    );
    // An empty replacement deletes the match: allowed.
    let mut c = counterfactual("a.go");
    c["mutation"] = json!({"find": "x", "replace": ""});
    let mut v = minimal();
    with_counterfactual(c)(&mut v);
    assert!(of(&diags(&v), Severity::Error).is_empty());
}

#[test]
fn counterfactual_patch_touches_only_control_path() {
    let mut c = counterfactual("a.go");
    c["mutation"] = json!({"patch": "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n--- a/b.go\n+++ b/b.go\n@@ -1 +1 @@\n-x\n+y\n"});
    let d = rejects(
        minimal(),
        with_counterfactual(c),
        "standard_v1.counterfactual.patch-file",
        "/counterfactuals/0/mutation/patch",
    );
    assert!(d.message.contains("'b.go'"), "{}", d.message);
    let mut c = counterfactual("a.go");
    c["mutation"] = json!({"patch": "@@ -1 +1 @@\n-x\n+y\n"});
    rejects(
        minimal(),
        with_counterfactual(c),
        "standard_v1.counterfactual.patch-file",
        "/counterfactuals/0/mutation/patch",
    );
    let mut c = counterfactual("a.go");
    c["mutation"] =
        json!({"patch": "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n"});
    let mut v = minimal();
    with_counterfactual(c)(&mut v);
    assert!(of(&diags(&v), Severity::Error).is_empty());
}

#[test]
fn at_most_eight_counterfactuals() {
    let d = rejects(
        minimal(),
        |v| {
            set(
                v,
                "/counterfactuals",
                Value::Array(vec![counterfactual("a.go"); 9]),
            )
        },
        "standard_v1.counterfactual.count",
        "/counterfactuals/8",
    );
    assert!(d.message.contains("at most 8"), "{}", d.message);
    let mut v = minimal();
    set(
        &mut v,
        "/counterfactuals",
        Value::Array(vec![counterfactual("a.go"); 8]),
    );
    assert!(of(&diags(&v), Severity::Error).is_empty());
}

#[test]
fn counterfactual_tests() {
    let mut c = counterfactual("a.go");
    c["tests"]["run"] = json!("  ");
    rejects(
        minimal(),
        with_counterfactual(c),
        "standard_v1.counterfactual.tests-run",
        "/counterfactuals/0/tests/run",
    );
    for pkg in ["/abs/pkg", "./a/../b", "../up"] {
        let mut c = counterfactual("a.go");
        c["tests"]["package"] = json!(pkg);
        rejects(
            minimal(),
            with_counterfactual(c),
            "standard_v1.counterfactual.tests-package",
            "/counterfactuals/0/tests/package",
        );
    }
    let mut c = counterfactual("a.go");
    c["tests"]["package"] = json!("./backend/...");
    let mut v = minimal();
    with_counterfactual(c)(&mut v);
    assert!(of(&diags(&v), Severity::Error).is_empty());
}

// ---- plan-gate advisories and the file cap --------------------------------------

fn files(n: usize) -> Value {
    (0..n)
        .map(|i| json!({"path": format!("f{i}.go"), "operation": "modify"}))
        .collect::<Vec<_>>()
        .into()
}

#[test]
fn unknown_cap_says_the_checks_did_not_run() {
    let (ds, plan) = run(&minimal(), &Options::default());
    let d = find(&ds, "standard_v1.cap.unchecked", "/scope/files");
    assert_eq!(d.severity, Severity::Advisory);
    // The hint names the setting; the CLI spells it `--max-files-changed`.
    let flag = planwright_plan::Flag::MaxFilesChanged.to_string();
    assert!(d.hint.as_deref().unwrap().contains(&format!("`{flag} N`")));
    assert!(plan.is_some());
    // From the configuration, too.
    let mut options = Options::default();
    options.standard_v1.max_files_changed = Some(1);
    let mut v = minimal();
    set(&mut v, "/scope/files", files(3));
    let (ds, _) = run(&v, &options);
    assert!(ds.iter().all(|d| d.code != "standard_v1.cap.unchecked"));
    find(&ds, "standard_v1.cap.no-split", "/scope/files");
}

#[test]
fn over_the_cap_without_split_or_irreducible_is_an_error() {
    let mut v = minimal();
    set(&mut v, "/scope/files", files(6));
    set(&mut v, "/over_cap", json!(false));
    let (ds, plan) = run(&v, &capped(5));
    assert!(plan.is_none());
    assert_eq!(
        find(&ds, "standard_v1.cap.over", "/scope/files").severity,
        Severity::Advisory
    );
    assert_eq!(
        find(&ds, "standard_v1.cap.no-split", "/scope/files").severity,
        Severity::Error
    );
    // Exactly at the cap: fine, but near it.
    let (ds, plan) = run(&v, &capped(6));
    assert!(plan.is_some());
    find(&ds, "standard_v1.cap.near", "/scope/files");
    let (ds, _) = run(&v, &capped(10));
    assert!(
        ds.iter().all(|d| !d.code.starts_with("standard_v1.cap.")),
        "{ds:#?}"
    );
}

#[test]
fn irreducible_over_the_cap_is_an_advisory_quoting_the_rationale() {
    let mut v = minimal();
    set(&mut v, "/scope/files", files(6));
    set(
        &mut v,
        "/irreducible",
        json!({"rationale": "Go needs the receiver type in the package"}),
    );
    let (ds, plan) = run(&v, &capped(5));
    assert!(plan.is_some(), "{ds:#?}");
    find(&ds, "standard_v1.cap.over", "/scope/files");
    let d = find(&ds, "standard_v1.cap.irreducible", "/irreducible");
    assert_eq!(d.severity, Severity::Advisory);
    assert!(
        d.message
            .contains("Go needs the receiver type in the package"),
        "{}",
        d.message
    );
}

#[test]
fn split_over_the_cap_and_a_phase_over_the_cap() {
    let mut v = minimal();
    set(&mut v, "/scope/files", files(6));
    let big: Vec<String> = (0..4).map(|i| format!("f{i}.go")).collect();
    let big: Vec<&str> = big.iter().map(String::as_str).collect();
    set(
        &mut v,
        "/split_proposal",
        json!({"rationale": "r", "phases": [phase("a", &big), phase("b", &["f4.go", "f5.go"])]}),
    );
    let (ds, plan) = run(&v, &capped(3));
    assert!(plan.is_some(), "{ds:#?}");
    find(&ds, "standard_v1.cap.over", "/scope/files");
    let d = find(
        &ds,
        "standard_v1.cap.phase-over",
        "/split_proposal/phases/0/scope/files",
    );
    assert_eq!(d.severity, Severity::Advisory);
    let plan = plan.unwrap();
    let ids: Vec<&str> = plan.tickets.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["phase-1", "phase-2"]);
}

#[test]
fn sub_plan_advisories() {
    let mut v = minimal();
    set(
        &mut v,
        "/decomposition",
        json!({"rationale": "r", "sub_plans": [sub_plan("a", &["x"]), sub_plan("b", &["y"])]}),
    );
    let ds = diags(&v);
    // 5 + 5 < 15
    assert_eq!(
        find(
            &ds,
            "standard_v1.sub-plans.runtime-sum",
            "/decomposition/sub_plans"
        )
        .severity,
        Severity::Advisory
    );
    find(
        &ds,
        "standard_v1.sub-plans.unordered",
        "/decomposition/sub_plans",
    );
    set(&mut v, "/decomposition/sub_plans/1/depends_on", json!([0]));
    set(
        &mut v,
        "/decomposition/sub_plans/1/predicted_runtime_minutes",
        json!(10),
    );
    let ds = diags(&v);
    assert!(
        ds.iter()
            .all(|d| !d.code.starts_with("standard_v1.sub-plans.")),
        "{ds:#?}"
    );
}

#[test]
fn expensive_test_strategy_for_a_short_plan() {
    for strategy in [
        "go test -count 100 ./x",
        "go test -count=50 ./x",
        "go test -race ./...",
    ] {
        let mut v = minimal();
        set(&mut v, "/verification/test_strategy", json!(strategy));
        let ds = diags(&v);
        find(
            &ds,
            "standard_v1.tests.expensive",
            "/verification/test_strategy",
        );
        set(&mut v, "/predicted_runtime_minutes", json!(20));
        assert!(diags(&v)
            .iter()
            .all(|d| d.code != "standard_v1.tests.expensive"));
    }
    let mut v = minimal();
    set(
        &mut v,
        "/verification/test_strategy",
        json!("go test -count 49 ./x -race"),
    );
    assert!(diags(&v)
        .iter()
        .all(|d| d.code != "standard_v1.tests.expensive"));
}

#[test]
fn declaration_advisories() {
    let mut v = minimal();
    set(&mut v, "/delivery", json!("partial"));
    set(&mut v, "/remaining_scope", json!("the checkout half"));
    let ds = diags(&v);
    let d = find(&ds, "standard_v1.delivery.partial", "/delivery");
    assert!(d.message.contains("the checkout half"));
    set(
        &mut v,
        "/new_architectural_decision",
        json!({"rationale": "why", "related_adrs": [], "decision_summary": "a new boundary"}),
    );
    let ds = diags(&v);
    let d = find(
        &ds,
        "standard_v1.decision.new",
        "/new_architectural_decision",
    );
    assert!(
        d.message.contains("a new boundary") && d.message.contains("related ADRs: none"),
        "{}",
        d.message
    );
}

#[test]
fn all_criteria_skip_expected() {
    let skip = |id: &str| json!({"id": id, "statement": "s", "source": "explicit", "skip_expected": true, "expectation_basis": "e2e"});
    let mut v = minimal();
    set(
        &mut v,
        "/verification/acceptance_criteria",
        json!([skip("a"), skip("b")]),
    );
    find(
        &diags(&v),
        "standard_v1.criteria.all-skip-expected",
        "/verification/acceptance_criteria",
    );
    set(&mut v, "/verification/acceptance_surface", json!("none"));
    assert!(diags(&v)
        .iter()
        .all(|d| d.code != "standard_v1.criteria.all-skip-expected"));
    set(
        &mut v,
        "/verification/acceptance_criteria",
        json!([skip("a"), criterion("b")]),
    );
    remove(&mut v, "/verification/acceptance_surface");
    assert!(diags(&v)
        .iter()
        .all(|d| d.code != "standard_v1.criteria.all-skip-expected"));
}

// ---- coercion ---------------------------------------------------------------

#[test]
fn coerce_drops_optional_fields_set_to_null() {
    let mut v = minimal();
    set(&mut v, "/risks_and_assumptions", json!(null));
    set(&mut v, "/decomposition", json!(null));
    let (ds, plan) = run(&v, &capped(50));
    assert!(plan.is_none());
    find(&ds, "standard_v1.schema.type", "/risks_and_assumptions");
    let options = Options {
        coerce: true,
        ..capped(50)
    };
    let (ds, plan) = run(&v, &options);
    assert!(plan.is_some(), "{ds:#?}");
    for at in ["/risks_and_assumptions", "/decomposition"] {
        assert_eq!(
            find(&ds, "standard_v1.coerced", at).severity,
            Severity::Warning
        );
    }
    // A required field set to null stays an error, as in fishhawk.
    set(&mut v, "/summary", json!(null));
    let (ds, _) = run(&v, &options);
    find(&ds, "standard_v1.schema.type", "/summary");
}

#[test]
fn coerce_turns_bare_strings_into_objects() {
    let mut v = minimal();
    set(
        &mut v,
        "/scope/files/1",
        json!("backend/internal/cart/add_test.go"),
    );
    set(
        &mut v,
        "/ticket_reference",
        json!("https://github.com/example/widgets/issues/42"),
    );
    set(&mut v, "/generated_by", json!("claude-code"));
    set(
        &mut v,
        "/decomposition",
        json!({"rationale": "r", "sub_plans": ["first", sub_plan("second", &["y"])]}),
    );
    // Without the flag: invalid, with schema errors at those places.
    let (ds, plan) = run(&v, &capped(50));
    assert!(plan.is_none());
    find(&ds, "standard_v1.schema.type", "/scope/files/1");
    find(&ds, "standard_v1.schema.type", "/generated_by");
    // With it: one warning per place; what remains is judged as usual (the
    // coerced sub-plan has no files).
    let options = Options {
        coerce: true,
        ..capped(50)
    };
    let (ds, _) = run(&v, &options);
    for at in [
        "/scope/files/1",
        "/ticket_reference",
        "/generated_by",
        "/decomposition/sub_plans/0",
    ] {
        assert_eq!(
            find(&ds, "standard_v1.coerced", at).severity,
            Severity::Warning
        );
    }
    assert_eq!(
        ds.iter()
            .filter(|d| d.code == "standard_v1.coerced")
            .count(),
        4
    );
    assert_eq!(
        of(&ds, Severity::Error),
        [(
            "standard_v1.sub-plan.no-files".to_string(),
            "/decomposition/sub_plans/0".to_string()
        )]
    );
    remove(&mut v, "/decomposition");
    let (ds, plan) = run(&v, &options);
    assert!(of(&ds, Severity::Error).is_empty(), "{ds:#?}");
    let plan = plan.unwrap();
    assert_eq!(plan.tickets[0].scope[1].op, ScopeOp::Modify);
    assert_eq!(
        plan.metadata["generated_by"]["timestamp"],
        standard_v1::COERCED_TIMESTAMP
    );
}

#[test]
fn duplicate_keys_warn() {
    let text = MINIMAL.replacen("\"summary\":", "\"summary\": \"first\",\n  \"summary\":", 1);
    let report = validate_text("plan.json", text, &capped(50));
    assert!(report.valid);
    assert!(report
        .diagnostics
        .iter()
        .any(|l| l.diagnostic.code == "standard_v1.json.duplicate-key"
            && l.diagnostic.pointer == "/summary"));
}

// ---- the IR and back ---------------------------------------------------------

#[test]
fn decomposition_maps_to_one_ticket_per_sub_plan() {
    let (_, plan) = run(&full(), &capped(50));
    let plan = plan.unwrap();
    let ids: Vec<&str> = plan.tickets.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["sub-1", "sub-2"]);
    let (a, b) = (&plan.tickets[0], &plan.tickets[1]);
    assert_eq!(b.depends_on, ["sub-1"]);
    assert_eq!(a.estimate_minutes, Some(20));
    assert_eq!(a.model.as_deref(), Some("claude-sonnet-4-6"));
    assert_eq!(
        a.scope
            .iter()
            .map(|s| s.pattern.as_str())
            .collect::<Vec<_>>(),
        [
            "backend/internal/pricing/price.go",
            "backend/internal/pricing/price_test.go"
        ]
    );
    assert_eq!(a.scope[0].op, ScopeOp::Create);
    assert_eq!(b.scope[1].op, ScopeOp::Delete);
    // Each counterfactual goes with the slice that scopes its control_path.
    assert_eq!(a.counterfactuals.len(), 1);
    assert!(matches!(
        a.counterfactuals[0].mutation,
        Mutation::Patch { .. }
    ));
    assert_eq!(
        b.counterfactuals[0].control_path,
        "backend/internal/cart/add.go"
    );
    assert_eq!(
        b.counterfactuals[0].tests.package.as_deref(),
        Some("./backend/internal/cart")
    );
    // Acceptance criteria judge the whole change: the last slice.
    assert!(a.checks.is_empty());
    assert_eq!(b.checks.len(), 2);
    for t in &plan.tickets {
        assert_eq!(planwright_plan::refname::ref_name_problem(&t.id), None);
    }
}

#[test]
fn converting_back_is_lossless() {
    for (name, v) in [("minimal", minimal()), ("full", full())] {
        let (_, plan) = run(&v, &capped(50));
        let mut warnings = Vec::new();
        let back = standard_v1::emit(&plan.unwrap(), &mut warnings);
        assert!(warnings.is_empty(), "{name}: {warnings:#?}");
        assert_eq!(back, v, "{name}");
    }
    // Through the native format, too.
    let (_, plan) = run(&full(), &capped(50));
    let native = planwright_plan::formats::native::emit(&plan.unwrap());
    let report = validate_text("n.json", native.to_string(), &Options::default());
    assert!(report.valid, "{:#?}", report.diagnostics);
    let back = standard_v1::emit(&report.plan.unwrap(), &mut Vec::new());
    assert_eq!(back, full());
}

#[test]
fn phases_convert_back_to_a_split_proposal() {
    let mut v = minimal();
    set(
        &mut v,
        "/split_proposal",
        json!({"rationale": "r", "phases": [phase("a", &["backend/internal/cart/add.go"]), phase("b", &["backend/internal/cart/add_test.go"])]}),
    );
    set(&mut v, "/split_proposal/phases/1/depends_on", json!([0]));
    let (_, plan) = run(&v, &capped(50));
    let back = standard_v1::emit(&plan.unwrap(), &mut Vec::new());
    assert_eq!(back, v);
}

#[test]
fn emitting_another_format_warns_and_stays_valid() {
    let agb = include_str!("../../../../examples/agb/plan.example.json");
    let report = validate_text("agb.json", agb.to_string(), &Options::default());
    let plan = report.plan.expect("the agb example is valid");
    let mut warnings = Vec::new();
    let doc = standard_v1::emit(&plan, &mut warnings);
    let codes: Vec<&str> = warnings.iter().map(|w| w.code.as_str()).collect();
    for code in [
        "convert.standard_v1.gates",
        "convert.standard_v1.default",
        "convert.standard_v1.scope-op",
    ] {
        assert!(codes.contains(&code), "{code} missing from {codes:?}");
    }
    assert!(warnings.iter().all(|w| w.severity == Severity::Warning));
    if plan.tickets.iter().any(|t| t.tier.is_some()) {
        let i = plan.tickets.iter().position(|t| t.tier.is_some()).unwrap();
        find(
            &warnings,
            "convert.standard_v1.tier",
            &format!("/tickets/{i}/tier"),
        );
    }
    if plan.tickets.len() >= 2 {
        assert!(doc["decomposition"]["sub_plans"].as_array().unwrap().len() == plan.tickets.len());
    }
    let (ds, back) = run(&doc, &capped(1000));
    assert!(of(&ds, Severity::Error).is_empty(), "{ds:#?}\n{doc:#}");
    assert_eq!(back.unwrap().tickets.len(), plan.tickets.len());
}

// ---- generated reference and schema delta ------------------------------------------

/// The seed's tables: section -> rows of (field, type, required, constraints).
fn seed_tables() -> Vec<(String, Vec<[String; 4]>)> {
    let lines: Vec<&str> = SEED.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with("Field\tType") {
            continue;
        }
        let mut above = lines[..i].iter().rev().filter(|l| !l.trim().is_empty());
        let first = above.next().unwrap();
        let name = if first.contains("top-level fields") {
            "top-level".to_string()
        } else if !first.trim().contains(' ') {
            first.trim().to_string()
        } else {
            above.next().unwrap().trim().to_string()
        };
        let rows = lines[i + 1..]
            .iter()
            .take_while(|l| !l.trim().is_empty())
            .map(|l| {
                let mut cells: Vec<String> = l.split('\t').map(|c| c.trim().to_string()).collect();
                cells.resize(5, String::new());
                [
                    cells[0].clone(),
                    cells[1].clone(),
                    cells[2].clone(),
                    cells[3].clone(),
                ]
            })
            .collect();
        out.push((name, rows));
    }
    out
}

/// The generated reference's tables, the same way.
fn reference_tables(md: &str) -> Vec<(String, Vec<[String; 4]>)> {
    let mut out: Vec<(String, Vec<[String; 4]>)> = Vec::new();
    for line in md.lines() {
        if let Some(h) = line
            .strip_prefix("### ")
            .or_else(|| line.strip_prefix("#### "))
        {
            let name = if h.ends_with("top-level fields") {
                "top-level"
            } else {
                h
            };
            out.push((name.to_string(), Vec::new()));
        } else if line.starts_with("| ") && !line.starts_with("| Field |") {
            let cells: Vec<String> = line
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect();
            out.last_mut().unwrap().1.push([
                cells[0].clone(),
                cells[1].clone(),
                cells[2].clone(),
                cells[3].clone(),
            ]);
        }
    }
    out
}

#[test]
fn generated_reference_matches_the_seed_tables() {
    let md = schema_doc::reference(&standard_v1::schema(), "standard_v1");
    assert!(md.starts_with("## Field reference — standard_v1\n"));
    let ours = reference_tables(&md);
    let seed = seed_tables();
    assert_eq!(seed.len(), 17, "the seed has 17 tables");
    for (name, rows) in &seed {
        let (_, mine) = ours
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no table {name} in\n{md}"));
        assert_eq!(mine, rows, "table {name}");
    }
    // Definitions come in the seed's order.
    let seed_names: Vec<&str> = seed.iter().map(|(n, _)| n.as_str()).collect();
    let our_names: Vec<&str> = ours
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| seed_names.contains(n))
        .collect();
    assert_eq!(our_names, seed_names);
}

#[test]
fn diff_against_the_snapshot_lists_exactly_the_added_fields() {
    let snapshot: Value = serde_json::from_str(SNAPSHOT).unwrap();
    let md = schema_doc::diff(&snapshot, &standard_v1::schema());
    assert!(!md.contains("### Removed"), "{md}");
    assert!(!md.contains("### Changed"), "{md}");
    let mut added: Vec<String> = Vec::new();
    let mut section = "";
    for line in md.lines() {
        if let Some(h) = line.strip_prefix("### ") {
            section = h;
        } else if section == "Added fields"
            && line.starts_with("| ")
            && !line.starts_with("| Section")
        {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
            added.push(format!("{}.{}", cells[0], cells[1]));
        }
    }
    added.sort();
    let mut expected = vec![
        "top-level.raw_predicted_runtime_minutes",
        "top-level.new_architectural_decision",
        "top-level.delivery",
        "top-level.remaining_scope",
        "top-level.counterfactuals",
        "verification.acceptance_surface",
        "new-architectural-decision.rationale",
        "new-architectural-decision.related_adrs",
        "new-architectural-decision.decision_summary",
        "counterfactual.control_path",
        "counterfactual.mutation",
        "counterfactual.tests",
        "counterfactual.expect",
        "counterfactual-mutation.find",
        "counterfactual-mutation.replace",
        "counterfactual-mutation.patch",
        "counterfactual-tests.run",
        "counterfactual-tests.package",
    ];
    expected.sort();
    assert_eq!(added, expected, "{md}");
    assert!(md.contains("| counterfactual |\n"), "{md}");
    // The descriptions differ (the seed's wording) and do not show.
    assert_eq!(schema_doc::diff(&snapshot, &snapshot).lines().count(), 3);
}

#[test]
fn schema_is_closed_everywhere() {
    fn walk(v: &Value, at: &str, open: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if m.contains_key("properties")
                    && m.get("additionalProperties") != Some(&json!(false))
                {
                    open.push(at.to_string());
                }
                for (k, x) in m {
                    walk(x, &format!("{at}/{k}"), open);
                }
            }
            Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, x)| walk(x, &format!("{at}/{i}"), open)),
            _ => {}
        }
    }
    let mut open = Vec::new();
    walk(&standard_v1::schema(), "", &mut open);
    // if-clauses only test a property; they are not object definitions.
    open.retain(|p| !p.ends_with("/if"));
    assert!(open.is_empty(), "{open:?}");
    let s = standard_v1::schema();
    for def in [
        "ticket-reference",
        "generated-by",
        "scope-file",
        "sub-plan-summary",
    ] {
        assert!(s["$defs"][def].get("x-coerce-principal").is_some(), "{def}");
    }
}

#[test]
fn empty_slice_files_are_reported_once() {
    let mut v = minimal();
    let mut b = sub_plan("b", &[]);
    b["depends_on"] = json!([0]);
    set(
        &mut v,
        "/decomposition",
        json!({"rationale": "r", "sub_plans": [sub_plan("a", &["x"]), b]}),
    );
    let ds = diags(&v);
    find(
        &ds,
        "standard_v1.schema.min-items",
        "/decomposition/sub_plans/1/scope/files",
    );
    assert_eq!(of(&ds, Severity::Error).len(), 1, "{ds:#?}");
}

#[test]
fn every_thing_standard_v1_cannot_say_draws_its_warning() {
    use planwright_plan::model::{Counterfactual, CounterfactualTests, Gate, ScopeEntry};
    let (_, plan) = run(&minimal(), &capped(50));
    let mut plan = plan.unwrap();
    plan.source_format = Format::Agb;
    plan.metadata.clear();
    plan.repo = Some("/repo".into());
    plan.base = "develop".into();
    plan.caps.insert("claude".into(), 2);
    plan.review.dry_passes = 2;
    plan.gates.push(Gate {
        name: "test".into(),
        argv: vec!["go".into(), "test".into(), "./...".into()],
    });
    let t = &mut plan.tickets[0];
    t.rails.push("go.mod".into());
    t.tier = Some("mid".into());
    t.pool_hint = Some("claude".into());
    t.gates.push(Gate {
        name: "vet".into(),
        argv: vec!["go".into(), "vet".into()],
    });
    t.scope.push(ScopeEntry::any("docs/**"));
    t.scope.push(ScopeEntry {
        pattern: "new.go".into(),
        op: ScopeOp::Rename {
            from: "old.go".into(),
        },
    });
    let c = Counterfactual {
        control_path: "a.go".into(),
        mutation: Mutation::FindReplace {
            find: "a".into(),
            replace: "b".into(),
        },
        tests: CounterfactualTests {
            run: "^T$".into(),
            package: None,
            argv: None,
        },
    };
    t.counterfactuals = vec![c; 9];
    let mut warnings = Vec::new();
    let doc = standard_v1::emit(&plan, &mut warnings);
    for (code, at) in [
        ("repo", "/repo"),
        ("base", "/base"),
        ("caps", "/caps"),
        ("review", "/review"),
        ("gates", "/gates"),
        ("gates", "/tickets/0/gates"),
        ("rails", "/tickets/0/rails"),
        ("tier", "/tickets/0/tier"),
        ("pool-hint", "/tickets/0/pool_hint"),
        ("scope-op", "/tickets/0/scope/2"),
        ("glob", "/tickets/0/scope/2"),
        ("scope-op", "/tickets/0/scope/3"),
        ("counterfactuals", "/tickets/0/counterfactuals/8"),
        ("default", "/tickets/0/counterfactuals/0/tests/package"),
        ("default", ""),
    ] {
        find(&warnings, &format!("convert.standard_v1.{code}"), at);
    }
    assert_eq!(
        doc["verification"]["test_strategy"],
        "Run `go test ./...`, `go vet`"
    );
    let paths: Vec<&str> = doc["scope"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths[3..], ["old.go", "new.go"]);
    assert_eq!(doc["counterfactuals"].as_array().unwrap().len(), 8);
    // The placeholders keep the output a valid plan.
    let (ds, _) = run(&doc, &capped(50));
    assert!(of(&ds, Severity::Error).is_empty(), "{ds:#?}");
}

#[test]
fn a_calibration_hint_needs_the_raw_estimate() {
    let code = "standard_v1.calibration.raw-missing";
    // Unknown whether a hint was rendered: nothing to say.
    let (ds, _) = run(&minimal(), &Options::default());
    assert!(ds.iter().all(|d| d.code != code));
    let hinted = Options {
        calibration_hint: true,
        ..Options::default()
    };
    let (ds, plan) = run(&minimal(), &hinted);
    let d = find(&ds, code, "/predicted_runtime_minutes");
    assert_eq!(d.severity, Severity::Advisory);
    assert!(plan.is_some(), "an advisory never rejects");
    let mut v = minimal();
    set(&mut v, "/raw_predicted_runtime_minutes", json!(30));
    let (ds, _) = run(&v, &hinted);
    assert!(ds.iter().all(|d| d.code != code));
    // From the configuration, too.
    let mut options = Options::default();
    options.standard_v1.calibration_hint = true;
    let (ds, _) = run(&minimal(), &options);
    find(&ds, code, "/predicted_runtime_minutes");
}

#[test]
fn schema_and_semantic_errors_are_reported_together() {
    // An unknown field in the first criterion (schema) and a second
    // criterion with the first one's id (semantics), in one run.
    let mut v = full();
    let criteria = v["verification"]["acceptance_criteria"]
        .as_array_mut()
        .unwrap();
    let first = criteria[0]["id"].clone();
    criteria[0]["statment"] = json!("typo");
    criteria[1]["id"] = first;
    let ds = diags(&v);
    let errors = of(&ds, Severity::Error);
    assert_eq!(
        errors,
        [
            (
                "standard_v1.schema.additional-properties".to_string(),
                "/verification/acceptance_criteria/0/statment".to_string()
            ),
            (
                "standard_v1.criterion.duplicate-id".to_string(),
                "/verification/acceptance_criteria/1/id".to_string()
            ),
        ],
        "{ds:#?}"
    );
}
