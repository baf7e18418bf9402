//! The conventions users of cargo, ripgrep, uv, gh and just expect (issue
//! 13): completions, a man page, `--quiet`/`--verbose`, `--color`, a closed
//! pipe, standard input, `--version`, one meaning per flag, SARIF.

use planwright_testkit::{assert_says, text, Cli};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// The binary with colour left to it: these tests set `NO_COLOR` and
/// `CLICOLOR_FORCE` themselves.
fn cli() -> Cli {
    Cli::new(BIN).color_auto()
}

fn with_stdin(cli: &Cli, dir: &Path, args: &[&str], input: &str) -> Output {
    let mut child = cli
        .command(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn example() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agb/plan.example.json"),
    )
    .unwrap()
}

/// An agb plan with one error (strict gate) and one warning (overlap).
const FLAWED: &str = r#"{
  "repo": "/srv/app",
  "gate": {"test": "cargo test"},
  "tickets": [
    {"id": "T1", "body": "a", "scope": ["src/**"], "title": "a"},
    {"id": "T2", "body": "b", "scope": ["src/x.rs"], "title": "b"}
  ]
}
"#;

/// The same plan with a gate agb accepts: valid, one overlap warning.
fn warned() -> String {
    FLAWED.replace("cargo test", "npm test")
}

const COMMANDS: &[&str] = &[
    "validate",
    "convert",
    "schema",
    "sweep",
    "show",
    "graph",
    "preflight",
    "run",
    "status",
    "report",
    "deliver",
    "demo",
    "replay",
    "completions",
    "man",
];

#[test]
fn every_command_takes_the_global_flags() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    for command in COMMANDS {
        for flags in [
            &["-q"][..],
            &["--verbose"],
            &["--color", "never"],
            &["--output", "json"],
        ] {
            let mut args = vec![*command];
            args.extend_from_slice(flags);
            args.push("--help");
            let out = cli.run(dir.path(), &args);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{args:?}: {}",
                text(&out.stderr)
            );
        }
    }
}

#[test]
fn completions_for_every_shell_and_a_man_page() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = cli.run(dir.path(), &["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = text(&out.stdout);
        assert!(
            script.contains("planwright") && script.contains("validate"),
            "{shell}: {script}"
        );
    }
    let man = text(&cli.run(dir.path(), &["man"]).stdout);
    assert!(man.contains(".TH planwright 1"), "{man}");
    assert!(
        man.contains("validate") && man.contains("\\-\\-quiet"),
        "{man}"
    );
    let page = text(
        &cli.run(dir.path(), &["man", "--command", "validate"])
            .stdout,
    );
    assert!(page.contains(".TH planwright-validate 1"), "{page}");
    let bad = cli.run(dir.path(), &["man", "--command", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn quiet_prints_only_errors_and_verbose_says_what_was_used() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ok.json"), warned()).unwrap();
    std::fs::write(dir.path().join("bad.json"), FLAWED).unwrap();
    let normal = text(&cli.run(dir.path(), &["validate", "ok.json"]).stdout);
    assert!(normal.contains("warning[plan.scope.overlap]"), "{normal}");
    let quiet = cli.run(dir.path(), &["validate", "-q", "ok.json"]);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(text(&quiet.stdout), "");
    let quiet = cli.run(dir.path(), &["validate", "--quiet", "bad.json"]);
    assert_eq!(quiet.status.code(), Some(1));
    let out = text(&quiet.stdout);
    assert!(out.contains("error[agb.gate.strict]"), "{out}");
    assert!(
        !out.contains("warning") && !out.contains("invalid agb plan"),
        "{out}"
    );

    let verbose = cli.run(dir.path(), &["validate", "-v", "ok.json"]);
    let err = text(&verbose.stderr);
    assert!(
        err.contains("note: no planwright.toml found; using the defaults"),
        "{err}"
    );
    assert!(
        err.contains("note: `ok.json` read in the agb format (detected)"),
        "{err}"
    );
    let both = cli.run(dir.path(), &["validate", "-q", "-v", "ok.json"]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn color_follows_the_flag_then_no_color_then_clicolor_force() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.json"), FLAWED).unwrap();
    let colored = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = cli.command(dir.path());
        c.args(["validate", "bad.json"]).args(args);
        for (k, v) in env {
            c.env(k, v);
        }
        text(&c.output().unwrap().stdout).contains("\x1b[")
    };
    // stdout is a pipe here, so `auto` alone means no colour.
    assert!(!colored(&[], &[]));
    assert!(colored(&["--color", "always"], &[("NO_COLOR", "1")]));
    assert!(!colored(&["--color", "never"], &[("CLICOLOR_FORCE", "1")]));
    assert!(colored(&[], &[("CLICOLOR_FORCE", "1")]));
    assert!(!colored(&[], &[("CLICOLOR_FORCE", "0")]));
    assert!(!colored(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]));
}

/// Runs `args` with standard output a pipe whose reading end is already
/// closed, so the first write fails with EPIPE.
fn into_closed_pipe(cli: &Cli, dir: &Path, args: &[&str]) -> Output {
    // `std::io::pipe` is newer than the minimum supported Rust. Close on
    // exec: a child another test spawns meanwhile must not hold the reader.
    let (reader, writer) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
    drop(reader);
    let writer = std::fs::File::from(writer);
    cli.command(dir)
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_closed_pipe_ends_quietly_with_the_sigpipe_status() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.json"), example()).unwrap();
    for args in [
        &["schema", "standard_v1"][..],
        &["validate", "plan.json"],
        &["show", "plan.json"],
        &["completions", "bash"],
    ] {
        let out = into_closed_pipe(&cli, dir.path(), args);
        assert_eq!(out.status.code(), Some(141), "{args:?}");
        assert_eq!(text(&out.stderr), "", "{args:?}");
    }
}

#[test]
fn a_dash_reads_the_plan_from_standard_input() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    let out = with_stdin(&cli, dir.path(), &["validate", "-"], &example());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "<stdin>: valid agb plan, 3 tickets (0 errors, 0 warnings)\n"
    );
    let yaml = "planwright: 1\nsource_format: native\nbase: main\ntickets:\n  - id: T1\n    body: do it\n    scope: [{pattern: a.txt, op: create}]\n    gates: [{name: t, argv: [\"true\"]}]\n";
    let out = with_stdin(&cli, dir.path(), &["show", "-"], yaml);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("<stdin>: native plan, 1 ticket"));
    // Forcing JSON on YAML text is a JSON syntax error, at the right place.
    let out = with_stdin(
        &cli,
        dir.path(),
        &["validate", "-", "--input-format", "json"],
        yaml,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_says(&out.stdout, "json.syntax");
    let out = with_stdin(
        &cli,
        dir.path(),
        &["convert", "-", "--format", "agb", "--to", "native"],
        &example(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let native: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(native["planwright"], 1);
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    let out = text(&cli.run(dir.path(), &["--version"]).stdout);
    let version = env!("CARGO_PKG_VERSION");
    assert!(out.starts_with(&format!("planwright {version}")), "{out}");
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    match head {
        Ok(h) if h.status.success() => {
            let commit = text(&h.stdout).trim().to_string();
            assert_eq!(out, format!("planwright {version} ({commit})\n"));
        }
        // Built outside a git checkout: the version alone.
        _ => assert_eq!(out, format!("planwright {version}\n")),
    }
}

#[test]
fn old_spellings_still_work_with_a_deprecation_warning() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.json"), example()).unwrap();
    let out = cli.run(dir.path(), &["graph", "plan.json", "--as", "mermaid"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("flowchart LR"));
    assert_eq!(
        text(&out.stderr),
        "warning: `graph --as` is deprecated and will be removed in the next release; use `graph --to`\n"
    );
    let out = cli.run(dir.path(), &["-q", "graph", "plan.json", "--as=mermaid"]);
    assert_eq!(text(&out.stderr), "");
    // `--help` names each old spelling beside its new flag.
    for (command, old) in [("graph", "`--as` until"), ("report", "`--format` until")] {
        let help = text(&cli.run(dir.path(), &[command, "--help"]).stdout);
        assert!(help.contains(old), "{command} --help: {help}");
    }
}

#[test]
fn graph_json_is_json_and_o_writes_a_file() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.json"), example()).unwrap();
    let out = cli.run(dir.path(), &["graph", "plan.json", "--output", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["to"], "dot");
    assert!(doc["picture"]
        .as_str()
        .unwrap()
        .starts_with("digraph plan {"));
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 3);
    let out = cli.run(dir.path(), &["graph", "plan.json", "-o", "g.dot"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "");
    let written = std::fs::read_to_string(dir.path().join("g.dot")).unwrap();
    assert!(written.starts_with("digraph plan {"));
}

#[test]
fn a_missing_config_file_is_an_error_for_every_command() {
    config_error_everywhere(None, "`--config nope.toml`: no such file");
}

/// Every command given `--config nope.toml` (written with `text` when
/// there is one) fails with exit 2 and says `expected`.
fn config_error_everywhere(text_of_file: Option<&str>, expected: &str) {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.json"), example()).unwrap();
    if let Some(t) = text_of_file {
        std::fs::write(dir.path().join("nope.toml"), t).unwrap();
    }
    for args in [
        &["schema", "native"][..],
        &["validate", "plan.json"],
        &["graph", "plan.json"],
        &["status"],
        &["report"],
        &["deliver"],
        &["completions", "bash"],
    ] {
        let mut all = vec!["--config", "nope.toml"];
        all.extend_from_slice(args);
        let out = cli.run(dir.path(), &all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains(expected),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn sarif_is_only_for_validate() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.json"), example()).unwrap();
    let out = cli.run(dir.path(), &["show", "plan.json", "--output", "sarif"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`--output sarif` applies to `validate` only"));
}

fn sarif_schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn sarif_output_follows_the_sarif_2_1_0_schema() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.json"), FLAWED).unwrap();
    std::fs::write(dir.path().join("ok.json"), warned()).unwrap();
    let out = cli.run(
        dir.path(),
        &["validate", "bad.json", "ok.json", "--output", "sarif"],
    );
    assert_eq!(out.status.code(), Some(1));
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    let validator = jsonschema::validator_for(&sarif_schema()).unwrap();
    let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The schema is strict enough to catch a wrong document.
    let mut broken = log.clone();
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!validator.is_valid(&broken));

    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let rules = runs[0]["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["agb.gate.strict", "plan.scope.overlap"]);
    let help = rules[0]["help"]["text"].as_str().unwrap();
    assert!(help.contains("npm test"), "{help}");
    let results = runs[0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    let strict = &results[0];
    assert_eq!(strict["ruleId"], "agb.gate.strict");
    assert_eq!(strict["level"], "error");
    let loc = &strict["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "bad.json");
    assert_eq!(loc["region"]["startLine"], 3);
    assert_eq!(loc["region"]["startColumn"], 20);
    assert_eq!(loc["region"]["endColumn"], 32);
    assert_eq!(results[1]["level"], "warning");
    assert_eq!(
        results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "ok.json"
    );
}

#[test]
fn demo_removes_its_repository_unless_kept() {
    let cli = cli();
    let tmp = tempfile::tempdir().unwrap();
    let demos = || {
        std::fs::read_dir(tmp.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("planwright-demo-")
            })
            .count()
    };
    let out = cli
        .command(tmp.path())
        .args(["demo", "--output", "json"])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["kept"], false);
    assert_eq!(demos(), 0);
    let out = cli
        .command(tmp.path())
        .args(["demo", "--keep", "--output", "json"])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(demos(), 1);
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let repo = summary["repo"].as_str().unwrap();
    assert!(Path::new(repo).join(".planwright").is_dir());
}

#[test]
fn the_native_example_in_the_docs_is_valid_and_clean() {
    let cli = cli();
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/formats/native.md"),
    )
    .unwrap();
    let start = doc.find("```json\n").unwrap() + 8;
    let end = start + doc[start..].find("```").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.json"), &doc[start..end]).unwrap();
    // Its checks are for a reviewer: without one, `plan.checks.unjudged`.
    let out = cli.run(dir.path(), &["validate", "plan.json"]);
    assert!(
        text(&out.stdout).starts_with("warning[plan.checks.unjudged]: 1 check will not be judged")
    );
    assert!(text(&out.stdout).ends_with("(0 errors, 1 warning)\n"));
    std::fs::write(
        dir.path().join("planwright.toml"),
        "[review]\nagent = \"claude\"\n",
    )
    .unwrap();
    let out = cli.run(dir.path(), &["validate", "plan.json"]);
    assert_eq!(
        text(&out.stdout),
        "plan.json: valid native plan, 2 tickets (0 errors, 0 warnings)\n"
    );
}

/// "did you mean" looks only at the fields valid where the unknown one is:
/// a scope entry's `path` gets the entry's own fields, never another
/// object's `patch`, and the plan's `format` is not taken for a `form`.
#[test]
fn an_unknown_field_is_matched_against_the_fields_of_its_place() {
    let cli = cli();
    let plan = r#"{"planwright": 1, "source_format": "native", "base": "main", "format": "x",
 "gates": [{"name": "t", "argv": ["true"]}],
 "tickets": [{"id": "T1", "title": "t", "body": "x", "scope": [{"path": "a.txt", "op": "create"}]}]}"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.json"), plan).unwrap();
    let out = cli.run(dir.path(), &["validate", "plan.json", "--output", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hints: Vec<&str> = (report[0]["diagnostics"].as_array().unwrap().iter())
        .filter_map(|d| d["hint"].as_str())
        .collect();
    assert!(
        hints.contains(&"the fields here are `from`, `op`, `pattern`"),
        "{hints:?}"
    );
    assert!(
        hints
            .iter()
            .any(|h| h.starts_with("the fields here are `base`, `caps`")),
        "{hints:?}"
    );
    assert!(
        hints.iter().all(|h| !h.contains("did you mean")),
        "{hints:?}"
    );
}

#[test]
fn native_mistakes_get_a_did_you_mean_and_warnings() {
    let cli = cli();
    let plan = r#"{"planwright": 1, "source_format": "native", "base": "main",
 "tickets": [
  {"id": "T1", "body": " ", "scope": [{"pattern": "**", "op": "creat"}], "estimat_minutes": 3},
  {"id": "T2", "body": "x", "scope": [{"pattern": "a", "op": "edit"}]}
 ]}"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.json"), plan).unwrap();
    let out = text(
        &cli.run(dir.path(), &["validate", "plan.json", "--output", "json"])
            .stdout,
    );
    let report: Value = serde_json::from_str(&out).unwrap();
    let found: Vec<(String, String)> = report[0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["hint"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    // The warnings that do not depend on the faulty spots come in the same
    // run; the `**` scope whose op is misspelt gets no warning of its own.
    assert_eq!(
        found,
        [
            (
                "native.plan.no-gates".to_string(),
                "add `gates` that run the project's tests (`{\"name\": \"test\", \"argv\": [PROGRAM, ARGUMENTS...]}`), or give them at run time with `[gates] run` or `--gate`".to_string()
            ),
            (
                "native.ticket.body-blank".to_string(),
                "say what to change and how to know it is done".to_string()
            ),
            (
                "native.scope.op".to_string(),
                "did you mean `create`?".to_string()
            ),
            (
                "native.schema.additional-properties".to_string(),
                "did you mean `estimate_minutes`?".to_string()
            ),
            (
                "native.scope.op".to_string(),
                "native calls it `modify`".to_string()
            ),
        ]
    );
    let fixed = plan
        .replace("creat\"", "create\"")
        .replace("\"edit\"", "\"modify\"")
        .replace(", \"estimat_minutes\": 3", "");
    std::fs::write(dir.path().join("plan.json"), fixed).unwrap();
    let out = text(
        &cli.run(dir.path(), &["validate", "plan.json", "--output", "json"])
            .stdout,
    );
    let report: Value = serde_json::from_str(&out).unwrap();
    let codes: Vec<&str> = report[0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        // `**` also overlaps T2's `a`: one group, at its first ticket's scope.
        [
            "native.plan.no-gates",
            "native.ticket.body-blank",
            "plan.scope.overlap",
            "native.scope.everything"
        ]
    );
    let reference = text(
        &cli.run(dir.path(), &["schema", "native", "--reference"])
            .stdout,
    );
    assert!(
        reference.contains(
            "| op | string | required | one of: `any`, `create`, `modify`, `delete`, `rename`"
        ),
        "{reference}"
    );
    assert!(
        reference.contains("| from | string | required when `op` is `rename`"),
        "{reference}"
    );
    // No table without rows: every header row is followed by a field row.
    let lines: Vec<&str> = reference.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("|---") {
            assert!(
                lines.get(i + 1).is_some_and(|n| n.starts_with("| ")),
                "empty table before line {i}:\n{reference}"
            );
        }
    }
}

#[test]
fn cycles_are_shown_closed() {
    let cli = cli();
    let plan = r#"{"planwright": 1, "source_format": "native", "base": "main",
 "gates": [{"name": "t", "argv": ["true"]}],
 "tickets": [
  {"id": "T1", "body": "x", "scope": [{"pattern": "a", "op": "any"}]},
  {"id": "T2", "body": "x", "scope": [{"pattern": "b", "op": "any"}], "depends_on": ["T3"]},
  {"id": "T3", "body": "x", "scope": [{"pattern": "c", "op": "any"}], "depends_on": ["T2"]}
 ]}"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.json"), plan).unwrap();
    let out = text(&cli.run(dir.path(), &["validate", "plan.json"]).stdout);
    assert!(
        out.contains("error[native.dag.cycle]: dependency cycle: T2 -> T3 -> T2"),
        "{out}"
    );
}

#[test]
fn a_minified_plan_shows_a_window_of_its_one_line() {
    let cli = cli();
    // 300 tickets on one line whose scopes overlap in groups of ten.
    let tickets: Vec<String> = (0..300)
        .map(|i| {
            format!(
                r#"{{"id":"T{i}","title":"t","body":"b","scope":["src/m{}/**"]}}"#,
                i / 10
            )
        })
        .collect();
    let plan = format!(
        r#"{{"repo":"/srv/app","gate":{{"test":"npm test"}},"tickets":[{}]}}"#,
        tickets.join(",")
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.json"), &plan).unwrap();
    let out = text(&cli.run(dir.path(), &["validate", "plan.json"]).stdout);
    let warnings = out.matches("warning[plan.scope.overlap]").count();
    // One warning per group of ten, not one per pair (45 in each group).
    assert_eq!(
        warnings,
        30,
        "{}",
        out.chars().take(2000).collect::<String>()
    );
    let longest = out.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(longest < 200, "a line of {longest} characters");
    assert!(out.contains("1 │ …"), "{}", &out[..2000]);
    assert!(out.len() < warnings * 800, "{} bytes", out.len());
}

const FORMATS: [&str; 4] = ["agb", "codeboost", "standard_v1", "native"];

/// The documented native example uses every field of the model.
fn full_native_plan() -> String {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/formats/native.md"),
    )
    .unwrap();
    let start = doc.find("```json\n").unwrap() + 8;
    let end = start + doc[start..].find("```").unwrap();
    doc[start..end].to_string()
}

#[test]
fn every_conversion_names_what_it_loses_and_refuses_invalid_output() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("native.json"), full_native_plan()).unwrap();
    // The plan's gate `cargo test` is not one agb accepts: refused, then forced.
    let refused = cli.run(
        dir.path(),
        &["convert", "native.json", "--to", "agb", "-o", "agb.json"],
    );
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("would not pass agb's own validation"));
    assert!(!dir.path().join("agb.json").exists());
    let lost_items = [
        (
            "agb",
            vec![
                "parser: agb has no per-file operations; 'src/parser.rs'",
                "parser: agb tickets have no `estimate_minutes`",
                "eval: agb tickets have no `counterfactuals`",
                "parser: agb tickets have no `checks`",
            ],
        ),
        (
            "codeboost",
            vec![
                "parser: codeboost items have no `rails`",
                "codeboost plans have no pool caps",
                "parser: codeboost items have no `estimate_minutes`",
                "parser: codeboost items have no `tier`",
            ],
        ),
        (
            "standard_v1",
            vec![
                "parser: standard_v1 has no per-ticket `rails`",
                "standard_v1 has no pool caps",
                "eval: standard_v1 has no rename",
            ],
        ),
    ];
    for (to, needles) in &lost_items {
        let out = cli.run(
            dir.path(),
            &[
                "convert",
                "native.json",
                "--to",
                to,
                "--force",
                "-o",
                &format!("{to}.json"),
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{to}: {}", text(&out.stderr));
        let err = text(&out.stderr);
        for needle in needles {
            assert!(err.contains(needle), "{to}: {needle} missing:\n{err}");
        }
        // Matching renumbered tickets must not report them lost whole.
        assert!(!err.contains("cannot express ticket"), "{to}: {err}");
    }
    let back = cli.run(dir.path(), &["convert", "native.json", "--to", "native"]);
    assert_eq!(back.status.code(), Some(0));
    assert_eq!(text(&back.stderr), "", "native keeps everything");
    // Every pair: from each format's version of the plan to every format.
    for from in FORMATS {
        for to in FORMATS {
            let src = format!("{from}.json");
            let mut args = vec!["convert", src.as_str(), "--to", to, "--no-strict-gates"];
            let out = cli.run(dir.path(), &args);
            let err = text(&out.stderr);
            assert!(!err.contains("panicked"), "{from} -> {to}: {err}");
            match out.status.code() {
                Some(0) => {}
                Some(1) => {
                    assert!(err.contains("own validation"), "{from} -> {to}: {err}");
                    args.push("--force");
                    assert_eq!(
                        cli.run(dir.path(), &args).status.code(),
                        Some(0),
                        "{from} -> {to} --force"
                    );
                }
                other => panic!("{from} -> {to}: exit {other:?}: {err}"),
            }
        }
    }
}

/// The places in `src` (tests left out) where a line that is not a comment
/// holds a backticked flag, as in "pass `--gate`".
fn flags_named(src: &str) -> Vec<String> {
    // Test modules close a file; what follows their `#[cfg(test)]` is tests.
    let code = match src.find("#[cfg(test)]\nmod ") {
        Some(at) => &src[..at],
        None => src,
    };
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .filter(|l| {
            l.match_indices("`--")
                .any(|(at, _)| l[at + 3..].starts_with(|c: char| c.is_ascii_lowercase()))
        })
        .map(|l| l.trim().to_string())
        .collect()
}

fn library_sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() && name != "tests" {
            library_sources(&path, out);
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
}

/// Libraries name a setting with `planwright_plan::Flag`; only the CLI
/// spells it (`error::flag`), so a renamed flag changes one table.
#[test]
fn no_library_message_names_a_cli_flag() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for krate in ["plan", "config", "engine", "view"] {
        library_sources(&root.join("crates").join(krate).join("src"), &mut files);
    }
    assert!(files.len() > 50, "{files:?}");
    let found: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let src = std::fs::read_to_string(f).unwrap();
            let name = f.strip_prefix(&root).unwrap().display().to_string();
            flags_named(&src)
                .into_iter()
                .map(move |l| format!("{name}: {l}"))
        })
        .collect();
    assert!(found.is_empty(), "flag names in library crates: {found:#?}");
}

#[test]
fn the_flag_finder_finds() {
    let src = "let a = \"pass `--gate` now\";\n/// `--doc`\nlet b = \"`--` and `-x`\";\n#[cfg(test)]\nmod tests {\n\"`--test`\"\n}\n";
    assert_eq!(flags_named(src), ["let a = \"pass `--gate` now\";"]);
}

#[test]
fn an_invalid_config_file_is_an_error_for_every_command() {
    config_error_everywhere(Some("[run\n"), "invalid configuration `nope.toml`");
}

#[test]
fn man_all_writes_one_page_per_subcommand_into_a_new_folder() {
    let cli = cli();
    let dir = tempfile::tempdir().unwrap();
    let out = cli.run(dir.path(), &["man", "--all", "pages/man1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let pages = dir.path().join("pages/man1");
    for name in ["planwright.1", "planwright-run.1", "planwright-status.1"] {
        let page = std::fs::read_to_string(pages.join(name)).unwrap();
        assert!(page.contains(".TH"), "{name}: {page}");
    }
}

#[test]
fn a_subcommands_help_lists_its_own_options_before_the_global_ones() {
    let help = text(&cli().run(Path::new("."), &["status", "--help"]).stdout);
    let own = help.find("--run").expect("status has --run");
    let global = help.find("Global options").expect("a global heading");
    assert!(own < global, "{help}");
}
