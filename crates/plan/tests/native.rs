//! The native format: schema drift, round trips, and readable errors.

use planwright_plan::formats::{agb, native};
use planwright_plan::{validate_text, Format, Options};

fn manifest_path(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[test]
fn checked_in_schema_matches_the_types() {
    let generated = serde_json::to_string_pretty(&native::schema()).unwrap() + "\n";
    let path = manifest_path("../../schemas/native.schema.json");
    if std::env::var_os("PLANWRIGHT_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "schemas/native.schema.json is out of date with the IR types; run `PLANWRIGHT_BLESS=1 cargo test -p planwright-plan --test native` and commit it"
    );
}

#[test]
fn agb_example_round_trips_through_native() {
    let text =
        std::fs::read_to_string(manifest_path("../../examples/agb/plan.example.json")).unwrap();
    let report = validate_text("plan.example.json", text, &Options::default());
    let plan = report.plan.expect("the seed example is valid");
    let native_text = serde_json::to_string_pretty(&native::emit(&plan)).unwrap();
    let back = validate_text("plan.native.json", native_text, &Options::default());
    assert_eq!(back.format, Some(Format::Native));
    assert!(back.valid, "{:?}", back.diagnostics);
    assert_eq!(back.plan.as_ref(), Some(&plan));
    // and back to agb: the same plan.
    let mut warnings = Vec::new();
    let agb_text = serde_json::to_string_pretty(&agb::emit(&plan, &mut warnings)).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let again = validate_text("again.json", agb_text, &Options::default());
    assert_eq!(again.plan.as_ref(), Some(&plan));
}

#[test]
fn invalid_native_plans_point_at_the_problem() {
    let text = r#"{"planwright": 1, "source_format": "agb", "base": "main",
        "tickets": [{"id": "A", "body": "x", "scope": [{"pattern": "a", "op": "sideways"}]},
                    {"id": "B", "body": "y", "scope": [], "depends_on": ["Z"]}]}"#;
    let report = validate_text("n.json", text.to_string(), &Options::default());
    assert!(!report.valid);
    // Errors only: the warnings of a plan by hand are tested on their own.
    let found: Vec<(&str, &str)> = report
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.severity == planwright_plan::Severity::Error)
        .map(|d| (d.diagnostic.code.as_str(), d.diagnostic.pointer.as_str()))
        .collect();
    assert!(
        found
            .iter()
            .any(|(_, p)| p.starts_with("/tickets/0/scope/0")),
        "{found:?}"
    );

    let text = r#"{"planwright": 1, "source_format": "agb", "base": "main",
        "tickets": [{"id": "B", "body": "y", "scope": [], "depends_on": ["Z"]}]}"#;
    let report = validate_text("n.json", text.to_string(), &Options::default());
    // Errors only: the warnings of a plan by hand are tested on their own.
    let found: Vec<(&str, &str)> = report
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.severity == planwright_plan::Severity::Error)
        .map(|d| (d.diagnostic.code.as_str(), d.diagnostic.pointer.as_str()))
        .collect();
    assert_eq!(
        found,
        [(
            "native.ticket.unknown-dependency",
            "/tickets/0/depends_on/0"
        )]
    );

    let report = validate_text(
        "n.json",
        r#"{"planwright": 2}"#.to_string(),
        &Options::default(),
    );
    assert!(
        report
            .diagnostics
            .iter()
            .any(|d| d.diagnostic.pointer == "/planwright"),
        "{:?}",
        report.diagnostics
    );
}

#[test]
fn converting_a_plan_without_a_plan_wide_gate_to_agb_warns() {
    let text = r#"{"planwright": 1, "source_format": "native", "base": "main",
        "tickets": [{"id": "A", "body": "x", "scope": [{"pattern": "a.rs", "op": "any"}],
                     "gates": [{"name": "test", "argv": ["cargo", "test"]}]}]}"#;
    let plan = validate_text("n.json", text.to_string(), &Options::default())
        .plan
        .expect("valid native plan");
    let mut warnings = Vec::new();
    let out = agb::emit(&plan, &mut warnings);
    assert_eq!(out["gate"], serde_json::json!({}));
    assert!(
        warnings
            .iter()
            .any(|w| w.code == "convert.agb.gate" && w.pointer == "/gates"),
        "{warnings:?}"
    );
}

#[test]
fn converting_a_plan_without_tickets_to_agb_warns() {
    let text = r#"{"planwright": 1, "source_format": "native", "base": "main", "tickets": []}"#;
    let plan = validate_text("n.json", text.to_string(), &Options::default())
        .plan
        .expect("valid native plan");
    let mut warnings = Vec::new();
    agb::emit(&plan, &mut warnings);
    assert!(
        warnings
            .iter()
            .any(|w| w.code == "convert.agb.tickets" && w.pointer == "/tickets"),
        "{warnings:?}"
    );
}

#[test]
fn native_names_and_patterns_must_work_in_git() {
    let text = r#"{"planwright": 1, "source_format": "native", "base": "a..b",
        "tickets": [{"id": "x.lock", "body": "y",
                     "scope": [{"pattern": "", "op": "any"}, {"pattern": "../up", "op": "any"}, {"pattern": "src/**", "op": "any"}],
                     "rails": ["/etc/passwd", "ok.txt"]}]}"#;
    let report = validate_text("n.json", text.to_string(), &Options::default());
    // Errors only: the warnings of a plan by hand are tested on their own.
    let found: Vec<(&str, &str)> = report
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.severity == planwright_plan::Severity::Error)
        .map(|d| (d.diagnostic.code.as_str(), d.diagnostic.pointer.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("native.plan.base", "/base"),
            ("native.ticket.id-ref", "/tickets/0/id"),
            ("native.scope.pattern", "/tickets/0/scope/0/pattern"),
            ("native.scope.pattern", "/tickets/0/scope/1/pattern"),
            ("native.scope.pattern", "/tickets/0/rails/0"),
        ]
    );
}

/// (code, pointer) of every finding, warnings too.
fn findings(text: &str) -> Vec<(String, String)> {
    validate_text("n.json", text.to_string(), &Options::default())
        .diagnostics
        .into_iter()
        .map(|d| (d.diagnostic.code, d.diagnostic.pointer))
        .collect()
}

#[test]
fn schema_and_semantic_errors_are_reported_together() {
    let text = r#"{"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "t", "argv": ["make", "check"]}],
        "tickets": [{"id": "A", "body": "x", "scope": [{"pattern": "a", "op": "any"}], "estimat_minutes": 5},
                    {"id": "B", "body": "y", "scope": [{"pattern": "b", "op": "any"}], "depends_on": ["Z"]}]}"#;
    assert_eq!(
        findings(text),
        [
            (
                "native.schema.additional-properties".to_string(),
                "/tickets/0/estimat_minutes".to_string()
            ),
            (
                "native.ticket.unknown-dependency".to_string(),
                "/tickets/1/depends_on/0".to_string()
            ),
        ]
    );
}

#[test]
fn semantic_checks_stay_quiet_where_the_schema_spoke() {
    // Ticket A: no body (the schema says so; no "blank body" warning too);
    // ticket B: a misspelt op on a `**` scope (one error, no "everything"
    // warning); ticket C: a dependency that is not a string, and no id (no
    // "unknown dependency", no invented cycle); ticket D: a real cycle.
    let text = r#"{"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "t", "argv": ["make", "check"]}],
        "tickets": [{"id": "A", "scope": [{"pattern": "a", "op": "any"}]},
                    {"id": "B", "body": "y", "scope": [{"pattern": "**", "op": "creat"}]},
                    {"body": "z", "scope": [{"pattern": "c", "op": "any"}], "depends_on": [7]},
                    {"id": "D", "body": "w", "scope": [{"pattern": "d", "op": "any"}], "depends_on": ["D"]}]}"#;
    let found = findings(text);
    let codes: Vec<&str> = found.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(
        codes,
        [
            "native.schema.required",
            "native.scope.op",
            "native.schema.required",
            "native.schema.type",
            "native.dag.cycle",
        ],
        "{found:?}"
    );
}

#[test]
fn a_scope_that_covers_a_file_a_gate_runs_is_warned_of() {
    let text = r#"{"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "check", "argv": ["sh", "ci/check.sh"]}, {"name": "test", "argv": ["cargo", "test"]}],
        "tickets": [
            {"id": "A", "body": "x", "scope": [{"pattern": "src/**", "op": "any"}, {"pattern": "ci/*.sh", "op": "modify"}]},
            {"id": "B", "body": "y", "scope": [{"pattern": "src/**", "op": "any"}], "depends_on": ["A"]},
            {"id": "C", "body": "z", "scope": [{"pattern": "tools/lint.py", "op": "create"}], "depends_on": ["B"],
             "gates": [{"name": "lint", "argv": ["python3", "./tools/lint.py"]}]},
            {"id": "D", "body": "w", "scope": [{"pattern": "tools/**", "op": "any"}], "depends_on": ["C"],
             "gates": [{"name": "lint", "argv": ["python3", "./tools/lint.py"]}]},
            {"id": "E", "body": "v", "scope": [{"pattern": "ci/**", "op": "any"}, {"pattern": "ci/check.sh", "op": "modify"}], "depends_on": ["D"]}
        ]}"#;
    let report = validate_text("n.json", text.to_string(), &Options::default());
    assert!(report.valid, "{:?}", report.diagnostics);
    let found: Vec<(&str, &str)> = (report.diagnostics.iter())
        .filter(|d| d.diagnostic.code == "plan.gate.in-scope")
        .map(|d| (d.diagnostic.pointer.as_str(), d.diagnostic.message.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (
                "/tickets/0/scope",
                "A: scope `ci/*.sh` covers `ci/check.sh`, which the gate `sh ci/check.sh` runs; a candidate that changes it fails with gate_script_tampering, as the scope does not name it"
            ),
            (
                "/tickets/3/scope",
                "D: scope `tools/**` covers `tools/lint.py`, which the gate `python3 ./tools/lint.py` runs; a candidate that changes it fails with gate_script_tampering, as the scope does not name it"
            ),
        ],
        "C and E name the file in their scope: they may change it"

    );
}

/// A plan is checked a ticket at a time (issue 53): errors deep inside a
/// later ticket keep the pointer, message, hint, place and order that the
/// check of the whole document gave (these are `main`'s at `a8f12dc`).
#[test]
fn errors_inside_a_ticket_are_placed_as_in_the_whole_document() {
    let ticket = |i: usize| {
        serde_json::json!({"id": format!("T{i}"), "body": "b",
            "scope": [{"pattern": format!("src/{i}/**"), "op": "any"}]})
    };
    let mut tickets: Vec<_> = (0..5).map(ticket).collect();
    tickets[3]["scope"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"patern": "x", "op": "any"}));
    tickets[3]["tier"] = 3.into();
    tickets[1]["scope"][0]["op"] = "modfy".into();
    let doc = serde_json::json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "t", "argv": ["x"]}], "tickets": tickets});
    let text = serde_json::to_string_pretty(&doc).unwrap();
    let report = validate_text("plan.json", text, &Options::default());
    let got: Vec<_> = report
        .diagnostics
        .iter()
        .map(|l| {
            let d = &l.diagnostic;
            let hint = d.hint.as_deref().unwrap_or("");
            (
                d.pointer.as_str(),
                d.message.as_str(),
                hint,
                l.line,
                l.column,
            )
        })
        .collect();
    let op = "scope op 'modfy' is not one of any, create, modify, delete, rename";
    assert_eq!(
        got,
        [
            (
                "/tickets/1/scope/0/op",
                op,
                "did you mean `modify`?",
                30,
                17
            ),
            (
                "/tickets/3/scope/1/pattern",
                "missing required field `pattern`",
                "",
                52,
                9
            ),
            (
                "/tickets/3/scope/1/patern",
                "unknown field `patern`",
                "did you mean `pattern`?",
                53,
                11
            ),
            (
                "/tickets/3/tier",
                "expected null or string, found an integer",
                "",
                57,
                15
            ),
        ]
    );
}
