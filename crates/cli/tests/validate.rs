//! `planwright validate` end to end: outputs, exit codes, snapshots.

use planwright_testkit::Cli;
use std::path::Path;
use std::process::Output;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn example() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agb/plan.example.json"),
    )
    .unwrap()
}

fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

const BROKEN: &str = r#"{
  "repo": "/srv/app",
  "gate": {"test": "cargo test"},
  "tickets": [
    {"id": "T1", "body": "Add the parser.", "scope": ["src/parser.rs", "../secrets"],
     "edges": [{"to": "T9"}], "title": "parser"},
    {"id": "t1", "body": "Add the lexer.", "scope": ["src/lexer.rs"], "tier": "cheap", "pool_hint": "claude", "title": "lexer"}
  ]
}
"#;

#[test]
fn valid_plan_exits_0() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[("plan.json", &example())]);
    let out = cli.run(dir.path(), &["validate", "plan.json"]);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!(stdout(&out), @"plan.json: valid agb plan, 3 tickets (0 errors, 0 warnings)\n");
}

#[test]
fn human_output_underlines_every_problem() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[("plan.json", BROKEN)]);
    let out = cli.run(dir.path(), &["validate", "plan.json"]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("broken_human", stdout(&out));
}

#[test]
fn json_output_has_pointer_line_and_column() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[("plan.json", BROKEN), ("ok.json", &example())]);
    let out = cli.run(
        dir.path(),
        &["validate", "--output", "json", "plan.json", "ok.json"],
    );
    assert_eq!(out.status.code(), Some(1));
    let reports: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reports.as_array().unwrap().len(), 2);
    assert_eq!(reports[0]["file"], "plan.json");
    assert_eq!(reports[0]["format"], "agb");
    assert_eq!(reports[0]["valid"], false);
    assert_eq!(reports[0]["errors"], 5);
    // The counts' names, and their former ones for one release.
    assert_eq!(reports[0]["error_count"], 5);
    assert_eq!(reports[0]["warning_count"], reports[0]["warnings"]);
    let edge = reports[0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "agb.edge.unknown-target")
        .unwrap();
    assert_eq!(edge["severity"], "error");
    assert_eq!(edge["message"], "T1: edge to unknown ticket 'T9'");
    assert_eq!(edge["pointer"], "/tickets/0/edges/0/to");
    assert_eq!(
        (edge["line"].as_u64(), edge["column"].as_u64()),
        (Some(6), Some(23))
    );
    assert_eq!(reports[1]["valid"], true);
}

#[test]
fn strict_gates_off_by_flag_or_environment() {
    let cli = Cli::new(BIN);
    let plan = example().replace("\"npm test\"", "\"cargo test\"");
    let dir = dir_with(&[("plan.json", &plan)]);
    assert_eq!(
        cli.run(dir.path(), &["validate", "plan.json"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        cli.run(dir.path(), &["validate", "--no-strict-gates", "plan.json"])
            .status
            .code(),
        Some(0)
    );
    let out = cli
        .command(dir.path())
        .args(["validate", "plan.json"])
        .env("AGB_STRICT_GATES", "0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn syntax_errors_are_diagnostics_with_a_place() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[(
        "plan.json",
        "{\n  \"repo\": \"/x\",\n  \"gate\": {\"test\": \"npm test\"},\n}\n",
    )]);
    let out = cli.run(dir.path(), &["validate", "plan.json"]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("syntax_error", stdout(&out));
}

#[test]
fn unreadable_files_and_bad_flags_exit_2() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[]);
    let out = cli.run(dir.path(), &["validate", "missing.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: cannot read `missing.json`: no such file\n"
    );
    assert_eq!(
        cli.run(dir.path(), &["validate", "--format", "yamlish", "x.json"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(cli.run(dir.path(), &["validate"]).status.code(), Some(2));
}

#[test]
fn a_dash_is_standard_input_named_as_such() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[]);
    // Empty standard input: no plan in it, reported under its name.
    let out = cli.run(dir.path(), &["validate", "-"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("<stdin>: invalid plan"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_directory_is_named_as_one() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[]);
    std::fs::create_dir(dir.path().join("plans")).unwrap();
    let out = cli.run(dir.path(), &["validate", "plans"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: cannot read `plans`: it is a directory; name a file\n"
    );
}

#[test]
fn unknown_documents_say_which_formats_were_tried() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[("plan.json", "{\"name\": \"not a plan\"}")]);
    let out = cli.run(dir.path(), &["validate", "plan.json"]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("unknown_format", stdout(&out));
}

#[test]
fn format_override_reads_the_document_as_that_format() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[("plan.json", "{\"tickets\": []}")]);
    let out = cli.run(
        dir.path(),
        &[
            "validate",
            "--format",
            "agb",
            "--output",
            "json",
            "plan.json",
        ],
    );
    let reports: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = reports[0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        ["agb.plan.repo", "agb.gate.missing", "agb.plan.tickets"]
    );
}

#[test]
fn config_beside_the_plan_changes_the_routing_table() {
    let cli = Cli::new(BIN);
    let plan = example().replace("\"pool_hint\": \"gemini\"", "\"pool_hint\": \"gpt-oss\"");
    let config = "[[routing.models]]\nname = 'gpt-oss-120b'\nfamily = 'gpt-oss'\ntiers = ['cheap']\npool = 'gpt-oss'\n\
                  [[routing.models]]\nname = 'sonnet'\nfamily = 'claude'\ntiers = ['mid']\npool = 'claude'\n";
    let dir = dir_with(&[("plan.json", &plan)]);
    assert_eq!(
        cli.run(dir.path(), &["validate", "plan.json"])
            .status
            .code(),
        Some(1)
    );
    std::fs::write(dir.path().join("planwright.toml"), config).unwrap();
    let out = cli.run(dir.path(), &["validate", "plan.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    std::fs::write(dir.path().join("other.toml"), "[routing]\nmodelz = []\n").unwrap();
    let out = cli.run(
        dir.path(),
        &["validate", "--config", "other.toml", "plan.json"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid configuration `other.toml`") && err.contains("modelz"),
        "{err}"
    );
}

#[test]
fn a_worktree_copy_path_leaving_the_repository_is_refused_with_the_fix() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[("plan.json", &example())]);
    std::fs::write(
        dir.path().join("planwright.toml"),
        "[worktree]\ncopy = ['../secrets/.env']\n",
    )
    .unwrap();
    let out = cli.run(dir.path(), &["validate", "plan.json"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("planwright.toml`: `[worktree] copy`")
            && err.contains("`[worktree] copy` entry `../secrets/.env` climbs out with `..`")
            && err.contains("relative to the repository root"),
        "{err}"
    );
}

#[test]
fn workspace_and_its_former_name_at_once_are_refused_naming_both() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[("plan.json", &example())]);
    std::fs::write(
        dir.path().join("planwright.toml"),
        "[workspace]\npristine = true\n\n[worktree]\nsetup = []\n",
    )
    .unwrap();
    let out = cli.run(dir.path(), &["validate", "plan.json"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid configuration `./planwright.toml`")
            && err.contains("`[workspace]` (line 1) and `[worktree]` (line 4), its former name"),
        "{err}"
    );
    std::fs::write(
        dir.path().join("planwright.toml"),
        "[worktree]\nsetup = []\n",
    )
    .unwrap();
    let out = cli.run(dir.path(), &["validate", "plan.json"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("`[worktree]` in `./planwright.toml` (line 1) is deprecated"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let quiet = cli.run(dir.path(), &["--quiet", "validate", "plan.json"]);
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}

#[test]
fn native_conversion_round_trips() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[("plan.json", &example())]);
    let out = cli.run(
        dir.path(),
        &[
            "convert",
            "plan.json",
            "--to",
            "native",
            "-o",
            "plan.native.json",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cli.run(dir.path(), &["validate", "plan.native.json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "plan.native.json: valid native plan, 3 tickets (0 errors, 0 warnings)\n"
    );
    let out = cli.run(dir.path(), &["convert", "plan.native.json", "--to", "agb"]);
    let back: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let orig: serde_json::Value = serde_json::from_str(&example()).unwrap();
    assert_eq!(back, orig);
}

#[test]
fn an_unreadable_file_does_not_hide_the_others() {
    let cli = Cli::new(BIN);
    let dir = dir_with(&[("plan.json", &example())]);
    let out = cli.run(dir.path(), &["validate", "missing.json", "plan.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains("plan.json: valid agb plan"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: cannot read `missing.json`: no such file\n"
    );
    let out = cli.run(
        dir.path(),
        &["validate", "--output", "json", "plan.json", "missing.json"],
    );
    assert_eq!(out.status.code(), Some(2));
    let reports: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reports[0]["valid"], true);
    assert_eq!(reports.as_array().unwrap().len(), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.json"));
}

#[test]
fn schema_and_semantic_errors_come_in_one_run_and_keys_are_underlined() {
    let cli = Cli::new(BIN);
    // Ticket 0 has an unknown field (a schema error), ticket 1 depends on a
    // ticket that does not exist (a semantic error): both, in one run.
    let plan = r#"{"planwright": 1, "source_format": "native", "base": "main",
  "gates": [{"name": "t", "argv": ["make", "check"]}],
  "tickets": [
    {"id": "A", "body": "x", "scope": [{"pattern": "a", "op": "any"}], "estimat_minutes": 5},
    {"id": "B", "body": "y", "scope": [{"pattern": "b", "op": "any"}], "depends_on": ["Z"]}]}
"#;
    let dir = dir_with(&[("plan.json", plan)]);
    let out = cli.run(dir.path(), &["validate", "plan.json", "--output", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let found: Vec<(&str, u64, u64)> = json[0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let n = |k: &str| d[k].as_u64().unwrap();
            (d["code"].as_str().unwrap(), n("line"), n("column"))
        })
        .collect();
    let key_column = plan
        .lines()
        .nth(3)
        .unwrap()
        .find("\"estimat_minutes\"")
        .unwrap() as u64
        + 1;
    assert_eq!(
        found,
        [
            ("native.schema.additional-properties", 4, key_column),
            ("native.ticket.unknown-dependency", 5, 87),
        ]
    );
    let human = stdout(&cli.run(dir.path(), &["validate", "plan.json"]));
    let underline = human
        .lines()
        .skip_while(|l| !l.contains("unknown field `estimat_minutes`"))
        .find(|l| l.contains('^'))
        .unwrap();
    assert_eq!(
        underline.trim_start_matches(|c: char| c != '^').len(),
        "\"estimat_minutes\"".len(),
        "the key is underlined, not its value:\n{human}"
    );
}
