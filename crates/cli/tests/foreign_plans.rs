//! `run` on plans of other tools (codeboost, standard_v1, Taskmaster,
//! Auto-Claude, Spec Kit), end to end with the scripted agent.

use planwright_testkit::{assert_says, git, text, write, Env, STANDARD_V1_README};
use serde_json::Value;
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// This file's environments: `files` committed in `repo/`, the binary
/// run in the root.
fn env_with(files: &[(&str, &str)]) -> Env {
    Env::new(files).with_cli(BIN)
}

#[test]
fn codeboost_and_standard_v1_plans_run_too() {
    let env = env_with(&[("README.md", "hi\n"), ("docs/old.md", "old\n")]);
    let codeboost = r#"{
      "schema_version": 1, "issue": 7, "revision": 1, "summary": "two steps", "questions": [],
      "items": [
        {"id": "P1", "title": "add a", "intent": "Create a.txt.",
         "files": [{"path": "a.txt", "kind": "add", "renamed_from": null, "change": "new"}],
         "acceptance": [{"type": "cmd", "text": "test -f a.txt"}], "depends_on": []},
        {"id": "P2", "title": "edit a, move docs", "intent": "Extend a.txt and rename the docs.",
         "files": [{"path": "a.txt", "kind": "edit", "renamed_from": null, "change": "more"},
                   {"path": "docs/new.md", "kind": "rename", "renamed_from": "docs/old.md", "change": "rename"}],
         "acceptance": [{"type": "cmd", "text": "test -f docs/new.md"}], "depends_on": ["P1"]}
      ]
    }"#;
    write(env.root(), "plan.json", codeboost);
    let refused = env.scripted("run", &[]);
    assert_eq!(refused.status.code(), Some(1));
    assert_says(
        &refused.stdout,
        "`test -f a.txt` is not on the `[commands] allow` list",
    );
    write(env.root(), "planwright.toml", "[commands]\nallow = [[\"test\", \"-f\", \"a.txt\"], [\"test\", \"-f\", \"docs/new.md\"]]\n");
    env.fixture("P1", 0, "a.txt", "a\n");
    env.fixture("P2", 0, "a.txt", "a\nmore\n");
    env.fixture("P2", 0, "docs/new.md", "old\n");
    std::fs::write(env.fixture_dir("P2", 0).join("delete"), "docs/old.md\n").unwrap();
    let out = env.scripted("run", &["--output", "json"]);
    let summary: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(
        summary["merged"],
        serde_json::json!(["P1", "P2"]),
        "{summary}"
    );
    assert_eq!(git(&env.repo(), &["show", "main:docs/new.md"]), "old");

    write(env.root(), "plan.json", STANDARD_V1_README);
    env.fixture("W-1", 0, "README.md", "hello\n");
    let out = env.scripted(
        "run",
        &[
            "--output",
            "json",
            "--gate",
            "grep -q hello README.md",
            "--allow-red-base",
        ],
    );
    let summary: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(summary["merged"], serde_json::json!(["W-1"]), "{summary}");
}

/// A plan of another tool, from the plan crate's fixtures.
fn foreign_fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../plan/tests/data/foreign")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// Runs `plan` (a file of `env`'s root) with the scripted agent and the
/// gate `test -f README.md`; the run's summary.
fn run_foreign(env: &Env, plan: &str) -> Value {
    let agent = format!("scripted:{}", env.fixtures().display());
    let args = [
        "run",
        plan,
        "--repo",
        "repo",
        "--agent",
        &agent,
        "--output",
        "json",
        "--gate",
        "test -f README.md",
    ];
    let out = env.planwright(&args);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)))
}

fn merged(summary: &Value) -> Vec<String> {
    let mut ids: Vec<String> = summary["merged"]
        .as_array()
        .unwrap_or_else(|| panic!("{summary}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn taskmaster_autoclaude_and_speckit_plans_run_too() {
    let base = [
        ("README.md", "hi\n"),
        ("src/__init__.py", "\n"),
        ("src/existing.py", "\n"),
    ];

    let env = env_with(&base);
    write(
        env.root(),
        "tasks.json",
        &foreign_fixture("taskmaster.tasks.json"),
    );
    env.fixture(
        "2",
        0,
        "src/greet.py",
        "def greet(name):\n    return f'hello, {name}'\n",
    );
    env.fixture("3", 0, "README.md", "hi\n\ngreet('Ada')\n");
    let summary = run_foreign(&env, "tasks.json");
    assert_eq!(merged(&summary), ["2", "3"], "{summary}");
    assert_eq!(
        git(&env.repo(), &["show", "main:README.md"]),
        "hi\n\ngreet('Ada')"
    );

    let env = env_with(&base);
    write(
        env.root(),
        "implementation_plan.json",
        &foreign_fixture("autoclaude.implementation_plan.json"),
    );
    env.fixture(
        "subtask-1-1",
        0,
        "src/greet.py",
        "def greet(name):\n    return name\n",
    );
    env.fixture(
        "subtask-1-2",
        0,
        "src/__init__.py",
        "from .greet import greet\n",
    );
    env.fixture("subtask-2-1", 0, "README.md", "hi\n\ngreet('Ada')\n");
    env.fixture("subtask-2-2", 0, "notes.txt", "checked\n");
    let summary = run_foreign(&env, "implementation_plan.json");
    assert_eq!(
        merged(&summary),
        ["subtask-1-1", "subtask-1-2", "subtask-2-1", "subtask-2-2"],
        "{summary}"
    );

    let env = env_with(&base);
    write(env.root(), "tasks.md", &foreign_fixture("speckit.tasks.md"));
    for (id, file) in [
        ("T002", "config/greeting.toml"),
        ("T003", "tests/test_greeting.py"),
        ("T004", "src/models/greeter.py"),
        ("T005", "src/models/name.py"),
        ("T006", "src/services/greeting.py"),
        ("T007", "docs/greeting.md"),
        ("T008", "NOTES.md"),
    ] {
        env.fixture(id, 0, file, &format!("{id}\n"));
    }
    let summary = run_foreign(&env, "tasks.md");
    assert_eq!(
        merged(&summary),
        ["T002", "T003", "T004", "T005", "T006", "T007", "T008"],
        "{summary}"
    );
    assert_eq!(
        git(&env.repo(), &["show", "main:src/services/greeting.py"]),
        "T006"
    );
}
