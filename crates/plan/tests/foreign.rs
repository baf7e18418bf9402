//! The readers of Taskmaster, Auto-Claude and Spec Kit plans: what each
//! fixture means in the IR, what each rejects and where, and that writing a
//! plan back in its own format gives the document it was read from.

use planwright_plan::formats::{self, Options};
use planwright_plan::model::{Format, Plan, ScopeEntry, ScopeOp};
use planwright_plan::report::FileReport;
use planwright_plan::validate_text;
use serde_json::Value;

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/foreign")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

fn read(name: &str, text: &str, options: &Options) -> FileReport {
    validate_text(name, text.to_string(), options)
}

fn plan_of(report: &FileReport) -> &Plan {
    report.plan.as_ref().unwrap_or_else(|| {
        panic!(
            "{:#?}",
            report
                .diagnostics
                .iter()
                .map(|d| &d.diagnostic)
                .collect::<Vec<_>>()
        )
    })
}

fn codes(report: &FileReport) -> Vec<(String, usize, usize)> {
    report
        .diagnostics
        .iter()
        .map(|d| (d.diagnostic.code.clone(), d.line, d.column))
        .collect()
}

fn deps(plan: &Plan) -> Vec<(&str, Vec<&str>)> {
    plan.tickets
        .iter()
        .map(|t| {
            (
                t.id.as_str(),
                t.depends_on.iter().map(String::as_str).collect(),
            )
        })
        .collect()
}

fn entry(pattern: &str, op: ScopeOp) -> ScopeEntry {
    ScopeEntry {
        pattern: pattern.into(),
        op,
    }
}

#[test]
fn taskmaster_fixture_maps_to_tickets() {
    let report = read(
        "tasks.json",
        &fixture("taskmaster.tasks.json"),
        &Options::default(),
    );
    assert_eq!(report.format, Some(Format::Taskmaster));
    let plan = plan_of(&report);
    // Task 1 is done: not run, and task 2's dependency on it is met; task
    // 3 waits for task 2 through its subtask 2.1.
    assert_eq!(deps(plan), [("2", vec![]), ("3", vec!["2"])]);
    let t2 = &plan.tickets[0];
    assert_eq!(t2.title, "Greet the user by name");
    assert_eq!(t2.scope, [entry("src/greet.py", ScopeOp::Create)]);
    assert!(t2.body.contains("Subtasks:\n- [ ] 1. Write the greeting function: Implement greet(name) in src/greet.py.\n  Return the text, do not print it."), "{}", t2.body);
    assert_eq!(
        t2.checks,
        [
            "Unit tests cover an ordinary name and an empty one.",
            "subtask 2.2: Both cases pass."
        ]
    );
    assert!(t2.gates.is_empty());
    assert_eq!(plan.tickets[1].scope, [ScopeEntry::any("**")]);
    assert_eq!(
        codes(&report),
        [
            ("taskmaster.task.finished".to_string(), 3, 14),
            ("taskmaster.task.no-files".to_string(), 49, 7),
        ]
    );
}

#[test]
fn taskmaster_test_strategy_is_a_gate_when_allowed() {
    let text =
        r#"{"tasks": [{"id": 1, "title": "t", "description": "d", "testStrategy": "`npm test`"}]}"#;
    let mut options = Options::default();
    let report = read("tasks.json", text, &options);
    assert_eq!(plan_of(&report).tickets[0].checks, ["`npm test`"]);
    options.allowed_commands = vec![vec!["npm".into(), "test".into()]];
    let report = read("tasks.json", text, &options);
    let t = &plan_of(&report).tickets[0];
    assert!(t.checks.is_empty());
    assert_eq!(t.gates[0].argv, ["npm", "test"]);
}

#[test]
fn taskmaster_rejects_what_its_types_and_validate_dependencies_reject() {
    let text = r#"{"master": {"tasks": [
  {"id": 1, "title": "a", "description": "d", "status": "pendng", "dependencies": [1]},
  {"id": 2, "title": "", "description": "d", "dependencies": [9, "1.4", "x"]},
  {"id": 2, "description": "d", "priority": "urgent"},
  {"id": 0, "title": "z", "description": "d"},
  {"id": 5, "title": "s", "description": "d", "subtasks": [{"id": 1, "title": "s", "dependencies": [1]}]}
]}, "other": {"tasks": []}}"#;
    let report = read("tasks.json", text, &Options::default());
    assert!(!report.valid);
    let found: Vec<String> = report
        .diagnostics
        .iter()
        .map(|d| d.diagnostic.code.clone())
        .collect();
    for code in [
        "taskmaster.tag.others",
        "taskmaster.task.status",
        "taskmaster.dependency.self",
        "taskmaster.task.title",
        "taskmaster.dependency.unknown",
        "taskmaster.dependency.form",
        "taskmaster.task.duplicate-id",
        "taskmaster.task.priority",
        "taskmaster.task.id",
        "taskmaster.subtask.description",
    ] {
        assert!(
            found.iter().any(|c| c == code),
            "{code} missing from {found:?}"
        );
    }
    let status = report
        .diagnostics
        .iter()
        .find(|d| d.diagnostic.code == "taskmaster.task.status")
        .unwrap();
    assert_eq!((status.line, status.column), (2, 57));
    assert_eq!(
        status.diagnostic.hint.as_deref(),
        Some("did you mean `pending`?")
    );
}

#[test]
fn taskmaster_tags_and_cycles() {
    let text = r#"{"a": {"tasks": [{"id": 1, "title": "t", "description": "d"}]},
        "b": {"tasks": [{"id": 1, "title": "t", "description": "d", "dependencies": [2]},
                        {"id": 2, "title": "u", "description": "d", "dependencies": [1]}]}}"#;
    let report = read("tasks.json", text, &Options::default());
    assert_eq!(
        codes(&report),
        [("taskmaster.tag.none".to_string(), 1, 1)],
        "no master and no current tag: nothing, as Taskmaster reads"
    );
    let options = Options {
        tag: Some("b".into()),
        ..Options::default()
    };
    let report = read("tasks.json", text, &options);
    assert!(
        codes(&report).iter().any(|c| c.0 == "taskmaster.dag.cycle"),
        "{:?}",
        codes(&report)
    );
    let options = Options {
        tag: Some("c".into()),
        ..Options::default()
    };
    let report = read("tasks.json", text, &options);
    assert_eq!(codes(&report)[0].0, "taskmaster.tag.unknown");
}

#[test]
fn autoclaude_fixture_maps_phases_to_dependencies() {
    let report = read(
        "implementation_plan.json",
        &fixture("autoclaude.implementation_plan.json"),
        &Options::default(),
    );
    assert_eq!(report.format, Some(Format::Autoclaude));
    let plan = plan_of(&report);
    // Phase 1 is not parallel_safe: its subtasks run one after the other;
    // phase 2 waits for phase 1's last and runs its own side by side.
    assert_eq!(
        deps(plan),
        [
            ("subtask-1-1", vec![]),
            ("subtask-1-2", vec!["subtask-1-1"]),
            ("subtask-2-1", vec!["subtask-1-2"]),
            ("subtask-2-2", vec!["subtask-1-2"]),
        ]
    );
    let first = &plan.tickets[0];
    assert_eq!(first.scope, [entry("src/greet.py", ScopeOp::Create)]);
    assert_eq!(
        plan.tickets[1].scope,
        [entry("src/__init__.py", ScopeOp::Modify)]
    );
    assert!(
        first
            .body
            .contains("Follow the patterns in: src/existing.py"),
        "{}",
        first.body
    );
    assert_eq!(
        first.checks[1],
        "`python -c \"from src.greet import greet; print(greet('Ada'))\"` outputs hello, Ada"
    );
    assert_eq!(plan.tickets[2].checks, ["The README shows an example call"]);
    assert_eq!(
        plan.tickets[3].checks,
        ["e2e check: Call greet; Read the README example"]
    );
    assert_eq!(plan.tickets[3].scope, [ScopeEntry::any("**")]);
    let options = Options {
        allowed_commands: vec![vec!["test".into(), "-f".into(), "src/__init__.py".into()]],
        ..Options::default()
    };
    let report = read(
        "implementation_plan.json",
        &fixture("autoclaude.implementation_plan.json"),
        &options,
    );
    assert_eq!(
        plan_of(&report).tickets[1].gates[0].argv,
        ["test", "-f", "src/__init__.py"]
    );
}

#[test]
fn autoclaude_rejects_what_its_validator_rejects() {
    let text = r#"{"feature": "f", "workflow_type": "featur", "phases": [
  {"id": "p1", "name": "a", "type": "build", "depends_on": ["p2", "p9"], "subtasks": [
    {"id": "s1", "description": "d", "status": "todo", "verification": {"type": "unit"}},
    {"id": "s1", "description": "d"}
  ]},
  {"phase": 2, "subtasks": []}
]}"#;
    let report = read("implementation_plan.json", text, &Options::default());
    assert!(!report.valid);
    let found: Vec<&str> = report
        .diagnostics
        .iter()
        .map(|d| d.diagnostic.code.as_str())
        .collect();
    assert_eq!(
        found,
        [
            "autoclaude.plan.workflow-type",
            "autoclaude.phase.type",
            "autoclaude.phase.unknown-dependency",
            "autoclaude.phase.unknown-dependency",
            "autoclaude.subtask.no-files",
            "autoclaude.subtask.status",
            "autoclaude.verification.type",
            "autoclaude.subtask.required",
            "autoclaude.subtask.no-files",
            "autoclaude.subtask.duplicate-id",
            "autoclaude.phase.required",
        ]
    );
    let forward = r#"{"feature": "f", "workflow_type": "simple", "phases": [
  {"id": "a", "name": "a", "depends_on": ["b"], "subtasks": [{"id": "s1", "description": "d", "status": "pending"}]},
  {"id": "b", "name": "b", "subtasks": []}]}"#;
    let report = read("implementation_plan.json", forward, &Options::default());
    assert_eq!(
        codes(&report),
        [
            ("autoclaude.phase.forward-dependency".to_string(), 2, 43),
            ("autoclaude.subtask.no-files".to_string(), 2, 62)
        ]
    );
    let empty = r#"{"feature": "f", "workflow_type": "simple", "phases": []}"#;
    assert_eq!(
        codes(&read("p.json", empty, &Options::default()))[0].0,
        "autoclaude.plan.phases"
    );
}

#[test]
fn speckit_fixture_maps_phases_sections_and_p() {
    let report = read(
        "tasks.md",
        &fixture("speckit.tasks.md"),
        &Options::default(),
    );
    assert_eq!(report.format, Some(Format::Speckit));
    let plan = plan_of(&report);
    assert_eq!(
        deps(plan),
        [
            ("T002", vec![]),
            ("T003", vec!["T002"]),
            ("T004", vec!["T003"]),
            ("T005", vec!["T003"]),
            ("T006", vec!["T003", "T004", "T005"]),
            ("T007", vec!["T006"]),
            ("T008", vec!["T006", "T007"]),
        ]
    );
    assert_eq!(plan.tickets[5].scope, [ScopeEntry::any("docs/**")]);
    assert_eq!(plan.tickets[6].scope, [ScopeEntry::any("**")]);
    assert!(plan.tickets[2].body.contains("User story: US1\n\nPhase: Phase 2: User Story 1 - Say hello (Priority: P1) 🎯 MVP\n**Goal**: The program greets its user by name"), "{}", plan.tickets[2].body);
    let found = codes(&report);
    assert!(
        found.contains(&("speckit.task.done".to_string(), 17, 4)),
        "{found:?}"
    );
    assert!(
        found.contains(&("speckit.task.no-files".to_string(), 45, 12)),
        "{found:?}"
    );
}

#[test]
fn speckit_template_is_rejected_where_it_is_a_template() {
    let report = read(
        "tasks.md",
        &fixture("speckit.tasks-template.md"),
        &Options::default(),
    );
    assert!(!report.valid);
    let errors: Vec<(String, usize, usize)> = report
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.severity == planwright_plan::Severity::Error)
        .map(|d| (d.diagnostic.code.clone(), d.line, d.column))
        .collect();
    let lines: Vec<usize> = errors.iter().map(|e| e.1).collect();
    assert!(
        errors.iter().all(|e| e.0 == "speckit.task.id" && e.2 == 7),
        "{errors:?}"
    );
    assert_eq!(lines, [154, 155, 156, 157, 158, 159]);
    assert!(codes(&report)
        .iter()
        .any(|c| c == &("speckit.task.placeholder".to_string(), 87, 22)));
}

#[test]
fn speckit_line_rules() {
    let text = "## Phase 3: User Story 1\n\nT001 [US1] Create model in src/a.py\n- [ ] [US1] Create User model in src/b.py\n- [ ] T002 Edit src/c.py (depends on T009)\n- [ ] T002 Again src/d.py\n- [ ] T003 Mine src/e.py after T003\n";
    let report = read("tasks.md", text, &Options::default());
    assert_eq!(
        codes(&report),
        [
            ("speckit.task.checkbox".to_string(), 3, 1),
            ("speckit.task.id".to_string(), 4, 1),
            ("speckit.task.story".to_string(), 5, 1),
            ("speckit.dependency.unknown".to_string(), 5, 12),
            ("speckit.task.story".to_string(), 6, 1),
            ("speckit.task.duplicate-id".to_string(), 6, 7),
            ("speckit.task.story".to_string(), 7, 1),
            ("speckit.dependency.self".to_string(), 7, 12),
        ]
    );
    let empty = read("tasks.md", "# Tasks\n\nnothing yet\n", &Options::default());
    assert_eq!(codes(&empty), [("speckit.plan.empty".to_string(), 1, 1)]);
}

#[test]
fn markdown_is_only_speckit() {
    let options = Options {
        format: Some(Format::Taskmaster),
        ..Options::default()
    };
    let report = read("tasks.md", "- [ ] T001 a in src/a.rs\n", &options);
    assert_eq!(codes(&report)[0].0, "plan.format.syntax");
    let options = Options {
        format: Some(Format::Speckit),
        ..Options::default()
    };
    let report = read("<stdin>", "- [ ] T001 a in src/a.rs\n", &options);
    assert!(report.valid);
}

/// The document written back in its own format, read again.
fn again(plan: &Plan, to: Format, name: &str) -> (String, Vec<String>) {
    let mut warnings = Vec::new();
    let text = formats::write(plan, to, &mut warnings);
    let back = read(
        name,
        &text,
        &Options {
            format: Some(to),
            ..Options::default()
        },
    );
    assert!(back.valid, "{text}");
    let lost =
        planwright_plan::formats::loss::losses(plan, back.plan.as_ref().unwrap(), to, &warnings);
    let mut said: Vec<String> = warnings
        .iter()
        .chain(&lost)
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect();
    said.sort();
    (text, said)
}

#[test]
fn each_format_writes_back_what_it_read() {
    for (name, format) in [
        ("taskmaster.tasks.json", Format::Taskmaster),
        ("autoclaude.implementation_plan.json", Format::Autoclaude),
    ] {
        let original = fixture(name);
        let report = read(name, &original, &Options::default());
        let (text, said) = again(plan_of(&report), format, name);
        assert!(said.is_empty(), "{name}: {said:?}");
        let a: Value = serde_json::from_str(&original).unwrap();
        let b: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(a, b, "{name}");
    }
    let report = read(
        "tasks.md",
        &fixture("speckit.tasks.md"),
        &Options::default(),
    );
    let (text, said) = again(plan_of(&report), Format::Speckit, "tasks.md");
    assert!(said.is_empty(), "{said:?}");
    assert!(text.contains("- [ ] T006 [US1] Implement GreetingService in src/services/greeting.py (depends on T004, T005)\n"), "{text}");
}

#[test]
fn through_native_and_back_nothing_is_lost() {
    for (name, format) in [
        ("taskmaster.tasks.json", Format::Taskmaster),
        ("autoclaude.implementation_plan.json", Format::Autoclaude),
        ("speckit.tasks.md", Format::Speckit),
    ] {
        let report = read(name, &fixture(name), &Options::default());
        let (native, said) = again(plan_of(&report), Format::Native, "native.json");
        assert!(said.is_empty(), "{name}: {said:?}");
        let back = read("native.json", &native, &Options::default());
        let (_, said) = again(plan_of(&back), format, name);
        assert!(said.is_empty(), "{name}: {said:?}");
    }
}

#[test]
fn what_a_format_cannot_say_is_warned() {
    let native = r#"{"planwright": 1, "source_format": "native", "base": "main",
      "gates": [{"name": "test", "argv": ["cargo", "test"]}],
      "tickets": [
        {"id": "api", "title": "API", "body": "Build the API.", "scope": [{"pattern": "src/api.rs", "op": "create"}, {"pattern": "old.rs", "op": "delete"}], "rails": ["Cargo.lock"]},
        {"id": "ui", "title": "UI", "body": "Build the UI.", "scope": [{"pattern": "src/ui/**", "op": "any"}], "depends_on": ["api"], "checks": ["the page loads"]}
      ]}"#;
    let report = read("plan.json", native, &Options::default());
    for format in [Format::Taskmaster, Format::Autoclaude, Format::Speckit] {
        let (_, said) = again(plan_of(&report), format, "out");
        let has = |s: &str| said.iter().any(|w| w.contains(s));
        assert!(has("plan-gates"), "{format}: {said:?}");
        assert!(has("old.rs"), "{format}: {said:?}");
        assert!(has("the rail `Cargo.lock`"), "{format}: {said:?}");
    }
}
