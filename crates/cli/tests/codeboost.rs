//! `planwright validate` with the codeboost flags: `--issue`, `--repo`, `--rev`.
#![forbid(unsafe_code)]

use planwright_testkit::{git, Cli};
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/codeboost")
        .join(name)
        .display()
        .to_string()
}

/// A repository whose first commit has the files the example plan edits,
/// and whose second commit deletes one of them.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    for f in ["internal/client/client.go", "docs/config.md", "go.mod"] {
        let path = root.join(f);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x\n").unwrap();
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "one"]);
    git(root, &["rm", "-q", "docs/config.md"]);
    git(root, &["commit", "-q", "-m", "two"]);
    dir
}

#[test]
fn repo_and_rev_select_the_tree() {
    let cli = Cli::new(BIN);
    let dir = repo();
    let repo = dir.path().to_str().unwrap();
    let plan = example("plan.json");
    let ok = cli.run(
        Path::new("."),
        &["validate", &plan, "--repo", repo, "--rev", "HEAD~1"],
    );
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    let out = cli.run(
        Path::new("."),
        &["--output", "json", "validate", &plan, "--repo", repo],
    );
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &report[0]["diagnostics"][0];
    assert_eq!(d["code"], "codeboost.state.missing");
    assert_eq!(d["pointer"], "/items/1/files/2/renamed_from");
    assert_eq!(d["line"], 51);
}

#[test]
fn a_bad_repo_or_rev_is_a_usage_error() {
    let cli = Cli::new(BIN);
    let dir = repo();
    let repo = dir.path().to_str().unwrap();
    let plan = example("plan.json");
    let out = cli.run(
        Path::new("."),
        &["validate", &plan, "--repo", repo, "--rev", "nope"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(repo) && err.contains("`nope`"), "{err}");
    let missing = dir.path().join("missing");
    let out = cli.run(
        Path::new("."),
        &["validate", &plan, "--repo", missing.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn issue_flag_rejects_a_plan_for_another_issue() {
    let cli = Cli::new(BIN);
    let plan = example("plan.json");
    let out = cli.run(Path::new("."), &["validate", &plan, "--issue", "41"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Plan issue does not match the selected issue"),
        "{text}"
    );
    assert_eq!(
        cli.run(Path::new("."), &["validate", &plan, "--issue", "42"])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn convert_and_schema_know_codeboost() {
    let cli = Cli::new(BIN);
    let out = cli.run(
        Path::new("."),
        &["convert", &example("plan.yaml"), "--to", "codeboost"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(example("plan.json")).unwrap()).unwrap();
    assert_eq!(back, original);
    let schema = cli.run(Path::new("."), &["schema", "codeboost"]);
    let schema: serde_json::Value = serde_json::from_slice(&schema.stdout).unwrap();
    assert_eq!(schema["title"], "codeboost plan");
}

#[test]
fn convert_to_codeboost_warns_of_gates_its_allowlist_would_not_run() {
    let cli = Cli::new(BIN);
    let agb = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/agb/plan.example.json")
        .display()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("plan.json").display().to_string();
    let out = cli.run(
        Path::new("."),
        &["convert", &agb, "--to", "codeboost", "-o", &out_file],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("codeboost.command.not-allowed") && stderr.contains("npm"),
        "{stderr}"
    );
}

/// The example's `check` items have no reviewer to judge them (its
/// planwright.toml names none): `validate` says so, and still passes.
#[test]
fn validate_warns_of_checks_no_reviewer_will_judge() {
    let cli = Cli::new(BIN);
    let plan = example("plan.json");
    let out = cli.run(Path::new("."), &["validate", &plan]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
    assert!(
        err.contains("warning[plan.checks.unjudged]: ")
            && err.contains(
                "2 codeboost `check` items will not be judged: no reviewer is configured"
            )
            && err.contains("set `[review] agent`"),
        "{err}"
    );
    // Counted with the others: the summary counts what is printed.
    let printed = err.matches("warning[").count();
    assert!(
        err.contains(&format!("(0 errors, {printed} warnings)")),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let reviewed = dir.path().join("planwright.toml");
    std::fs::write(&reviewed, "[review]\nagent = \"claude\"\n").unwrap();
    let config = reviewed.to_str().unwrap();
    let out = cli.run(Path::new("."), &["--config", config, "validate", &plan]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("will not be judged"), "{err}");
}

/// A codeboost plan whose gates only the allowlist in the repository's root
/// `planwright.toml` approves: `validate` reads that file as the base branch
/// holds it, as a run would, from the root or with `--repo` from anywhere.
#[test]
fn validate_reads_the_repository_roots_configuration_from_the_base_commit() {
    let cli = Cli::new(BIN);
    let dir = repo();
    let root = dir.path();
    git(root, &["checkout", "-q", "HEAD~1", "--", "docs/config.md"]);
    std::fs::create_dir(root.join("plans")).unwrap();
    std::fs::copy(example("plan.json"), root.join("plans/plan.json")).unwrap();
    let plan = root.join("plans/plan.json").display().to_string();
    let repo_flag = root.display().to_string();
    let elsewhere = tempfile::tempdir().unwrap();
    let validate = |cwd: &Path, args: &[&str]| {
        let out = cli.run(cwd, &[&["validate"], args].concat());
        let said = [out.stdout, out.stderr].concat();
        (
            out.status.code(),
            String::from_utf8_lossy(&said).into_owned(),
        )
    };
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "plan, no configuration"]);
    let (code, err) = validate(elsewhere.path(), &[&plan, "--repo", &repo_flag]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("codeboost.command.not-allowed") && err.contains("will not be judged"),
        "{err}"
    );

    let mut config = std::fs::read_to_string(example("planwright.toml")).unwrap();
    config.push_str("\n[review]\nagent = \"claude\"\n");
    std::fs::write(root.join("planwright.toml"), &config).unwrap();
    git(root, &["add", "planwright.toml"]);
    git(root, &["commit", "-q", "-m", "configuration"]);
    // The working tree's copy says otherwise, and is not what is read.
    std::fs::write(root.join("planwright.toml"), "[commands]\nallow = []\n").unwrap();
    for (cwd, args) in [
        (elsewhere.path(), vec![plan.as_str(), "--repo", &repo_flag]),
        (root, vec!["plans/plan.json"]),
    ] {
        let (code, err) = validate(cwd, &args);
        assert_eq!(code, Some(0), "{err}");
        // Its allowlist approves the gates and its reviewer judges the
        // checks, so nothing warns of either.
        assert!(!err.contains("not-allowed"), "{err}");
        assert!(!err.contains("will not be judged"), "{err}");
    }
    let (_, err) = validate(root, &["-v", "plans/plan.json"]);
    assert!(
        err.contains("configuration `planwright.toml` of the base commit"),
        "{err}"
    );
}
