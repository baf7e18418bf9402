//! codeboost plan v1, end to end through `validate_text`: every meaning
//! rule rejects with its code and pointer, the examples validate clean in
//! JSON and YAML, and conversion to and from the IR.

use planwright_plan::formats::codeboost;
use planwright_plan::model::{Gate, Plan, ScopeEntry, ScopeOp, Ticket};
use planwright_plan::{validate_text, Diagnostic, FileReport, Format, Options, Severity};
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn example(name: &str) -> String {
    let path = format!(
        "{}/../../examples/codeboost/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

/// The examples' `planwright.toml` allows their commands (`[commands]
/// allow`); planwright-config reads the whole file, this reads that key.
fn allow_examples() -> Options {
    let file: toml::Table = toml::from_str(&example("planwright.toml")).unwrap();
    let allow = file["commands"]["allow"].clone().try_into().unwrap();
    Options {
        allowed_commands: allow,
        ..Options::default()
    }
}

/// A valid plan to break one rule at a time.
fn base() -> Value {
    serde_json::from_str(&example("plan.json")).unwrap()
}

fn check_with(plan: &Value, options: &Options) -> FileReport {
    validate_text(
        "plan.json",
        serde_json::to_string_pretty(plan).unwrap(),
        options,
    )
}

fn check(plan: &Value) -> FileReport {
    check_with(plan, &allow_examples())
}

fn found(report: &FileReport) -> Vec<(Severity, String, String)> {
    report
        .diagnostics
        .iter()
        .map(|l| {
            let d = &l.diagnostic;
            (d.severity, d.code.clone(), d.pointer.clone())
        })
        .collect()
}

/// Asserts that `report` has an error `code` at `pointer`.
#[track_caller]
fn has_error(report: &FileReport, code: &str, pointer: &str) {
    let want = (Severity::Error, code.to_string(), pointer.to_string());
    assert!(
        found(report).contains(&want),
        "no {want:?} in {:#?}",
        found(report)
    );
    assert!(!report.valid);
}

#[track_caller]
fn has_warning(report: &FileReport, code: &str, pointer: &str) {
    let want = (Severity::Warning, code.to_string(), pointer.to_string());
    assert!(
        found(report).contains(&want),
        "no {want:?} in {:#?}",
        found(report)
    );
}

fn file(path: &str, kind: &str, from: Option<&str>) -> Value {
    json!({"path": path, "kind": kind, "renamed_from": from, "change": "c"})
}

#[test]
fn the_examples_validate_clean_in_json_and_yaml() {
    let options = allow_examples();
    let from_json = validate_text("plan.json", example("plan.json"), &options);
    let from_yaml = validate_text("plan.yaml", example("plan.yaml"), &options);
    for report in [&from_json, &from_yaml] {
        assert!(report.valid, "{:#?}", report.diagnostics);
        assert_eq!(report.diagnostics.len(), 0, "{:#?}", report.diagnostics);
        assert_eq!(report.format, Some(Format::Codeboost));
    }
    assert_eq!(from_json.plan, from_yaml.plan);
}

#[test]
fn the_plan_maps_to_the_ir() {
    let plan = check(&base()).plan.unwrap();
    assert_eq!(plan.base, "main");
    assert_eq!(plan.metadata["issue"], 42);
    assert_eq!(plan.metadata["revision"], 1);
    let p2 = &plan.tickets[1];
    assert_eq!(p2.id, "P2");
    assert_eq!(p2.depends_on, ["P1"]);
    assert!(p2.body.starts_with("The sync client"));
    assert_eq!(
        p2.scope[2],
        ScopeEntry {
            pattern: "docs/configuration.md".into(),
            op: ScopeOp::Rename {
                from: "docs/config.md".into()
            }
        }
    );
    assert_eq!(p2.scope[0].op, ScopeOp::Modify);
    assert_eq!(plan.tickets[0].scope[0].op, ScopeOp::Create);
    assert_eq!(
        plan.tickets[0].gates,
        [Gate {
            name: "go test ./internal/retry/... -run 'TestDo.*'".into(),
            argv: ["go", "test", "./internal/retry/...", "-run", "TestDo.*"]
                .map(String::from)
                .to_vec(),
        }]
    );
    assert_eq!(
        plan.tickets[0].checks,
        ["Do never sleeps after the last attempt."]
    );
}

#[test]
fn converting_back_is_lossless() {
    let mut original = base();
    // An interleaved acceptance list and open questions survive too.
    original["items"][0]["acceptance"] = json!([
        {"type": "check", "text": "first"},
        {"type": "cmd", "text": "go test ./..."},
        {"type": "check", "text": "last"}
    ]);
    original["questions"] = json!(["Should 429 be retried?"]);
    original["revision"] = json!(3);
    let plan = check(&original).plan.unwrap();
    let mut warnings: Vec<Diagnostic> = Vec::new();
    let back = codeboost::emit(&plan, &mut warnings);
    assert!(warnings.is_empty(), "{warnings:#?}");
    assert_eq!(back, original);
}

#[test]
fn yaml_diagnostics_carry_line_and_column() {
    let text = example("plan.yaml").replace(
        "kind: edit\n        renamed_from: null\n        change: Client",
        "kind: edit\n        renamed_from: old.go\n        change: Client",
    );
    let report = validate_text("plan.yaml", text, &allow_examples());
    let d = report
        .diagnostics
        .iter()
        .find(|d| d.diagnostic.code == "codeboost.file.renamed-from")
        .expect("reported");
    assert_eq!(d.diagnostic.pointer, "/items/1/files/0/renamed_from");
    assert_eq!((d.line, d.column), (35, 23));
    let bad = validate_text(
        "plan.yaml",
        "schema_version: 1\nitems: &a []\n".into(),
        &Options::default(),
    );
    assert_eq!(bad.diagnostics[0].diagnostic.code, "yaml.anchor");
    assert_eq!((bad.diagnostics[0].line, bad.diagnostics[0].column), (2, 8));
}

#[test]
fn strict_yaml_rejections_reach_the_report() {
    for (text, code) in [
        ("a: &x 1\n", "yaml.anchor"),
        ("a: !!int 1\n", "yaml.tag"),
        ("<<: {a: 1}\n", "yaml.merge-key"),
        ("a: 1\n---\na: 2\n", "yaml.multiple-documents"),
        ("a:\n", "yaml.empty-value"),
        ("a: .inf\n", "yaml.non-finite"),
        ("a: 0o17\n", "yaml.number-form"),
        ("a: +1\n", "yaml.number-form"),
        ("a: 01\n", "yaml.number-form"),
        ("a: 1_000\n", "yaml.number-form"),
        ("1: a\n", "yaml.non-string-key"),
        ("a: [\n", "yaml.syntax"),
    ] {
        let report = validate_text("p.yml", text.into(), &Options::default());
        assert_eq!(report.diagnostics.len(), 1, "{text:?}");
        assert_eq!(report.diagnostics[0].diagnostic.code, code, "{text:?}");
        assert!(!report.valid);
    }
}

#[test]
fn input_limits() {
    let mut big = base();
    big["summary"] = json!("x".repeat(1024 * 1024));
    has_error(&check(&big), "codeboost.input.size", "");

    let mut deep = json!("x");
    for _ in 0..60 {
        deep = json!([deep]);
    }
    let mut plan = base();
    plan["questions"] = deep;
    let report = check(&plan);
    assert!(found(&report)
        .iter()
        .any(|(_, c, p)| c == "codeboost.input.depth" && p.starts_with("/questions/0/0")));

    let text =
        example("plan.json").replacen("\"revision\": 1,", "\"revision\": 1, \"revision\": 2,", 1);
    let report = validate_text("plan.json", text, &allow_examples());
    has_error(&report, "codeboost.input.duplicate-key", "/revision");

    let text = example("plan.yaml").replacen("revision: 1\n", "revision: 1\nrevision: 2\n", 1);
    let report = validate_text("plan.yaml", text, &allow_examples());
    has_error(&report, "codeboost.input.duplicate-key", "/revision");
    assert_eq!(report.diagnostics[0].line, 5);

    let mut plan = base();
    plan["issue"] = json!(9_007_199_254_740_992u64);
    has_error(&check(&plan), "codeboost.input.unsafe-integer", "/issue");
    plan["issue"] = json!(9_007_199_254_740_991u64);
    assert!(check(&plan).valid);
    plan["issue"] = json!(1.5);
    has_error(&check(&plan), "codeboost.schema.type", "/issue");
}

#[test]
fn schema_violations_are_readable() {
    let mut plan = base();
    plan["items"][0].as_object_mut().unwrap().remove("intent");
    plan["items"][0]["extra"] = json!(1);
    plan["items"][1]["files"][0]["kind"] = json!("modify");
    let report = check(&plan);
    has_error(&report, "codeboost.schema.required", "/items/0/intent");
    has_error(
        &report,
        "codeboost.schema.additional-properties",
        "/items/0/extra",
    );
    has_error(&report, "codeboost.schema.enum", "/items/1/files/0/kind");
    let messages: Vec<&str> = report
        .diagnostics
        .iter()
        .map(|d| d.diagnostic.message.as_str())
        .collect();
    assert!(
        messages.contains(&"missing required field `intent`"),
        "{messages:?}"
    );
}

#[test]
fn meaning_checks_run_despite_schema_errors() {
    let mut plan = base();
    plan["summary"] = json!("");
    plan["items"][1]["depends_on"] = json!(["P9"]);
    let report = check(&plan);
    has_error(&report, "codeboost.schema.min-length", "/summary");
    has_error(
        &report,
        "codeboost.depends-on.unknown",
        "/items/1/depends_on/0",
    );
}

#[test]
fn issue_must_match_the_selected_issue() {
    let options = Options {
        issue: Some(7),
        ..allow_examples()
    };
    let report = check_with(&base(), &options);
    has_error(&report, "codeboost.issue.mismatch", "/issue");
    assert!(report.diagnostics[0]
        .diagnostic
        .message
        .starts_with("Plan issue does not match the selected issue"));
    let options = Options {
        issue: Some(42),
        ..allow_examples()
    };
    assert!(check_with(&base(), &options).valid);
}

#[test]
fn ids_are_unique() {
    let mut plan = base();
    plan["items"][1]["id"] = json!("P1");
    plan["items"][1]["depends_on"] = json!([]);
    has_error(&check(&plan), "codeboost.item.duplicate-id", "/items/1/id");
}

#[test]
fn depends_on_names_earlier_items_once() {
    let mut plan = base();
    plan["items"][0]["depends_on"] = json!(["P2"]);
    has_error(
        &check(&plan),
        "codeboost.depends-on.later",
        "/items/0/depends_on/0",
    );
    let mut plan = base();
    plan["items"][1]["depends_on"] = json!(["P1", "P1"]);
    has_error(
        &check(&plan),
        "codeboost.depends-on.duplicate",
        "/items/1/depends_on/1",
    );
    let mut plan = base();
    plan["items"][1]["depends_on"] = json!(["P1", "P2"]);
    has_error(
        &check(&plan),
        "codeboost.depends-on.self",
        "/items/1/depends_on/1",
    );
    let mut plan = base();
    plan["items"][1]["depends_on"] = json!(["P1", "P7"]);
    has_error(
        &check(&plan),
        "codeboost.depends-on.unknown",
        "/items/1/depends_on/1",
    );
}

#[test]
fn producer_rule_needs_a_dependency_transitively() {
    let mut plan = base();
    plan["items"][1]["depends_on"] = json!([]);
    let report = check(&plan);
    // P2 edits internal/retry/retry.go, which P1 adds.
    has_error(
        &report,
        "codeboost.depends-on.producer",
        "/items/1/files/1/path",
    );
    assert!(report.diagnostics.iter().any(|d| d.diagnostic.message
        == "P2 touches `internal/retry/retry.go`, but P1 adds it; it must depend on that item"));

    // P3 renames the file away; P3 depends on P2, which depends on P1: fine.
    let mut plan = base();
    let mut p3 = plan["items"][1].clone();
    p3["id"] = json!("P3");
    p3["files"] = json!([file(
        "internal/retry/policy.go",
        "rename",
        Some("internal/retry/retry.go")
    )]);
    p3["depends_on"] = json!(["P2"]);
    plan["items"].as_array_mut().unwrap().push(p3.clone());
    assert!(check(&plan).valid, "{:#?}", found(&check(&plan)));

    // A later item touching the old path of that rename must depend on P3.
    let mut p4 = p3;
    p4["id"] = json!("P4");
    p4["files"] = json!([file("internal/retry/retry.go", "add", None)]);
    p4["depends_on"] = json!(["P1"]);
    plan["items"].as_array_mut().unwrap().push(p4);
    has_error(
        &check(&plan),
        "codeboost.depends-on.producer",
        "/items/3/files/0/path",
    );
}

#[test]
fn path_rules_each_have_a_code() {
    for (path, code) in [
        ("a\\b", "codeboost.path.backslash"),
        ("c:/x", "codeboost.path.colon"),
        ("a\u{1}b", "codeboost.path.control"),
        ("a//b", "codeboost.path.empty-component"),
        ("./a", "codeboost.path.dot"),
        ("a/../b", "codeboost.path.dot-dot"),
        (".Git/hooks/pre-commit", "codeboost.path.git"),
        ("/etc/passwd", "codeboost.path.absolute"),
    ] {
        let mut plan = base();
        plan["items"][0]["files"][1]["path"] = json!(path);
        let report = check(&plan);
        has_error(&report, code, "/items/0/files/1/path");
        // The precise rule replaces the schema's pattern message.
        assert!(
            !found(&report)
                .iter()
                .any(|(_, c, _)| c == "codeboost.schema.pattern"),
            "{path:?}"
        );
    }
    let mut plan = base();
    plan["items"][1]["files"][2]["renamed_from"] = json!("docs/../x.md");
    has_error(
        &check(&plan),
        "codeboost.path.dot-dot",
        "/items/1/files/2/renamed_from",
    );
    let mut plan = base();
    plan["items"][1]["files"][2]["renamed_from"] = json!("");
    has_error(
        &check(&plan),
        "codeboost.path.empty",
        "/items/1/files/2/renamed_from",
    );
}

#[test]
fn no_duplicate_or_nested_paths_within_an_item() {
    let mut plan = base();
    plan["items"][0]["files"][1]["path"] = json!("internal/retry/retry.go");
    has_error(
        &check(&plan),
        "codeboost.files.duplicate",
        "/items/0/files/1/path",
    );

    // A rename counts both sides.
    let mut plan = base();
    plan["items"][1]["files"][0] = file("docs/config.md", "edit", None);
    has_error(
        &check(&plan),
        "codeboost.files.duplicate",
        "/items/1/files/2/renamed_from",
    );

    let mut plan = base();
    plan["items"][0]["files"][1]["path"] = json!("internal/retry");
    plan["items"][0]["files"][1]["kind"] = json!("edit");
    has_error(
        &check(&plan),
        "codeboost.files.overlap",
        "/items/0/files/1/path",
    );
}

#[test]
fn renamed_from_is_set_exactly_for_renames() {
    let mut plan = base();
    plan["items"][1]["files"][2]["renamed_from"] = Value::Null;
    has_error(
        &check(&plan),
        "codeboost.file.renamed-from",
        "/items/1/files/2/renamed_from",
    );
    let mut plan = base();
    plan["items"][1]["files"][0]["renamed_from"] = json!("internal/old.go");
    has_error(
        &check(&plan),
        "codeboost.file.renamed-from",
        "/items/1/files/0/renamed_from",
    );
}

fn tree(files: &[&str]) -> Options {
    Options {
        repo_files: Some(std::sync::Arc::new(
            files.iter().map(|f| f.to_string()).collect::<BTreeSet<_>>(),
        )),
        ..allow_examples()
    }
}

#[test]
fn projected_state_against_the_repository_tree() {
    let good = tree(&["internal/client/client.go", "docs/config.md", "go.mod"]);
    assert!(
        check_with(&base(), &good).valid,
        "{:#?}",
        found(&check_with(&base(), &good))
    );

    // edit needs an existing path
    let report = check_with(&base(), &tree(&["docs/config.md"]));
    has_error(&report, "codeboost.state.missing", "/items/1/files/0/path");
    // add needs a free path
    let report = check_with(
        &base(),
        &tree(&[
            "internal/client/client.go",
            "docs/config.md",
            "internal/retry/retry.go",
        ]),
    );
    has_error(&report, "codeboost.state.exists", "/items/0/files/0/path");
    // rename needs an existing source and a free destination
    let report = check_with(
        &base(),
        &tree(&["internal/client/client.go", "docs/configuration.md"]),
    );
    has_error(
        &report,
        "codeboost.state.missing",
        "/items/1/files/2/renamed_from",
    );
    has_error(&report, "codeboost.state.exists", "/items/1/files/2/path");
    // codeboost's projected state holds files only: a directory with files
    // under it cannot be edited, deleted or renamed ("Missing source")
    let mut plan = base();
    for kind in ["delete", "edit"] {
        plan["items"][1]["files"][0] = file("internal/client", kind, None);
        let report = check_with(&plan, &good);
        has_error(
            &report,
            "codeboost.state.directory",
            "/items/1/files/0/path",
        );
        let message = &report.diagnostics[0].diagnostic.message;
        assert!(
            message.contains("`internal/client`, a directory with 1 file under it"),
            "{message}"
        );
    }
    plan["items"][1]["files"][0] = file("docs/new.md", "rename", Some("internal"));
    has_error(
        &check_with(&plan, &good),
        "codeboost.state.directory",
        "/items/1/files/0/renamed_from",
    );
    plan["items"][1]["files"][0] = file("internal/server", "delete", None);
    has_error(
        &check_with(&plan, &good),
        "codeboost.state.missing",
        "/items/1/files/0/path",
    );
}

#[test]
fn projected_state_applies_item_by_item() {
    let mut plan = base();
    // P2 deletes what P1 added; a P3 that edits it finds it gone.
    plan["items"][1]["files"] = json!([file("internal/retry/retry_test.go", "delete", None)]);
    let mut p3 = plan["items"][1].clone();
    p3["id"] = json!("P3");
    p3["files"] = json!([file("internal/retry/retry_test.go", "edit", None)]);
    p3["depends_on"] = json!(["P2"]);
    plan["items"].as_array_mut().unwrap().push(p3);
    let report = check_with(&plan, &tree(&[]));
    has_error(&report, "codeboost.state.missing", "/items/2/files/0/path");
    assert_eq!(report.errors, 1, "{:#?}", found(&report));
}

#[test]
fn commands_are_parsed_and_allowlisted() {
    let mut plan = base();
    plan["items"][1]["acceptance"][0]["text"] = json!("go test ./... | tee log");
    let report = check(&plan);
    has_error(
        &report,
        "codeboost.command.syntax",
        "/items/1/acceptance/0/text",
    );
    assert!(report.diagnostics[0]
        .diagnostic
        .message
        .contains("(at character 14)"));

    let mut plan = base();
    plan["items"][1]["acceptance"][0]["text"] = json!("go test ./... -v");
    let report = check(&plan);
    assert!(report.valid);
    has_warning(
        &report,
        "codeboost.command.not-allowed",
        "/items/1/acceptance/0/text",
    );
    let hint = report.diagnostics[0].diagnostic.hint.clone().unwrap();
    assert!(
        hint.contains(r#"allow = [["go", "test", "./...", "-v"]]"#),
        "{hint}"
    );

    // Without an allowlist every command warns; a plan without commands warns once.
    let report = check_with(&base(), &Options::default());
    assert_eq!(report.warnings, 2);
    let mut plan = base();
    for item in plan["items"].as_array_mut().unwrap() {
        item["acceptance"] = json!([{"type": "check", "text": "reviewed"}]);
    }
    has_warning(&check(&plan), "codeboost.command.none", "/items");
}

#[test]
fn format_characters_in_commands_are_rejected() {
    let mut plan = base();
    plan["items"][1]["acceptance"][0]["text"] = json!("go test './...\u{202E}'");
    has_error(
        &check(&plan),
        "codeboost.command.syntax",
        "/items/1/acceptance/0/text",
    );
}

#[test]
fn open_questions_warn() {
    let mut plan = base();
    plan["questions"] = json!(["Retry POST requests too?"]);
    let report = check(&plan);
    assert!(report.valid);
    has_warning(&report, "codeboost.questions.open", "/questions");
}

fn ticket(id: &str, deps: &[&str]) -> Ticket {
    Ticket {
        title: format!("ticket {id}"),
        scope: vec![ScopeEntry::any(format!("src/{id}.rs"))],
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        gates: vec![Gate {
            name: "test".into(),
            argv: vec!["npm".into(), "run".into(), "test:unit".into(), "a b".into()],
        }],
        ..Ticket::new(id, "do it")
    }
}

#[test]
fn emit_from_another_format_warns_for_what_it_changes() {
    let mut t2 = ticket("T2", &[]);
    t2.body = "x".repeat(601);
    t2.rails = vec!["package.json".into()];
    t2.tier = Some("cheap".into());
    t2.scope.push(ScopeEntry::any("src/**"));
    let plan = Plan {
        repo: Some(".".into()),
        ..Plan::new(Format::Agb, vec![ticket("T1", &["T2"]), t2])
    };
    let mut warnings: Vec<Diagnostic> = Vec::new();
    let out = codeboost::emit(&plan, &mut warnings);
    let codes: Vec<(&str, &str)> = warnings
        .iter()
        .map(|w| (w.code.as_str(), w.pointer.as_str()))
        .collect();
    for want in [
        ("convert.codeboost.order", "/tickets"),
        ("convert.codeboost.ids", "/tickets"),
        ("convert.codeboost.scope-op", "/tickets/1/scope"),
        ("convert.codeboost.glob", "/tickets/1/scope/1"),
        ("convert.codeboost.rails", "/tickets/1/rails"),
        ("convert.codeboost.tier", "/tickets/1/tier"),
        ("convert.codeboost.issue", "/metadata"),
        ("convert.codeboost.repo", "/repo"),
        ("convert.codeboost.intent", "/tickets/1/body"),
    ] {
        assert!(codes.contains(&want), "{want:?} not in {codes:?}");
    }
    let ids = warnings
        .iter()
        .find(|w| w.code == "convert.codeboost.ids")
        .unwrap();
    assert!(
        ids.message.ends_with("T2 -> P1, T1 -> P2"),
        "{}",
        ids.message
    );
    assert_eq!(out["items"][0]["title"], "ticket T2");
    assert_eq!(out["items"][1]["depends_on"], json!(["P1"]));
    assert_eq!(
        out["items"][0]["acceptance"][0]["text"],
        "npm run test:unit 'a b'"
    );
    assert_eq!(out["issue"], 1);
    // What it wrote is a codeboost plan (with the command warnings only).
    let mut out = out;
    out["items"][0]["intent"] = json!("shortened");
    let report = check(&out);
    assert!(report.valid, "{:#?}", found(&report));
}

#[test]
fn id_pattern_errors_say_what_an_id_is() {
    let mut plan = base();
    plan["items"][1]["depends_on"] = json!(["p1"]);
    let report = check(&plan);
    has_error(&report, "codeboost.schema.pattern", "/items/1/depends_on/0");
    let d = report
        .diagnostics
        .iter()
        .find(|d| d.diagnostic.code == "codeboost.schema.pattern")
        .unwrap();
    let hint = d.diagnostic.hint.as_deref().unwrap_or("");
    assert!(hint.contains("P1, P2"), "{hint}");
}

#[test]
fn the_no_command_hint_fits_the_repository() {
    let mut plan = base();
    for item in plan["items"].as_array_mut().unwrap() {
        item["acceptance"] = json!([{"type": "check", "text": "It works."}]);
    }
    let hint = |options: &Options| {
        let report = check_with(&plan, options);
        let d = report
            .diagnostics
            .iter()
            .find(|d| d.diagnostic.code == "codeboost.command.none")
            .unwrap_or_else(|| panic!("{:?}", report.diagnostics));
        d.diagnostic.hint.clone().unwrap()
    };
    let generic = hint(&Options::default());
    assert!(generic.contains("<test command>"), "{generic}");
    let go = hint(&tree(&["go.mod", "internal/client/client.go"]));
    assert!(go.contains("\"go test ./...\""), "{go}");
    assert!(!go.contains("cargo"), "{go}");
}
