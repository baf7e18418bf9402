//! `planwright sweep` end to end, with `targetGlob` over a real repository.

use planwright_testkit::{git, Cli};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

fn repo_with(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    for f in files {
        let p = dir.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x\n").unwrap();
    }
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "init"]);
    dir
}

#[test]
fn target_glob_expands_over_tracked_files_only() {
    let cli = Cli::new(BIN);
    let repo = repo_with(&["src/a.js", "src/b.js", "src/deep/c.js", "README.md"]);
    std::fs::write(repo.path().join("src/untracked.js"), "y\n").unwrap();
    let spec = r#"{"repo": ".", "operation": "Convert {target} to ESM (item {i}).", "targetGlob": "src/*.js",
                   "gate": {"test": "npm test"}, "scopePerTarget": ["{target}", "test/{i}.test.js"]}"#;
    std::fs::write(repo.path().join("sweep.json"), spec).unwrap();
    let out = cli.run(repo.path(), &["sweep", "sweep.json", "-o", "plan.json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.path().join("plan.json")).unwrap())
            .unwrap();
    let tickets = plan["tickets"].as_array().unwrap();
    assert_eq!(tickets.len(), 2);
    assert_eq!(tickets[0]["id"], "S1");
    assert_eq!(tickets[0]["title"], "sweep: src/a.js");
    assert_eq!(tickets[1]["body"], "Convert src/b.js to ESM (item 2).");
    assert_eq!(
        tickets[1]["scope"],
        serde_json::json!(["src/b.js", "test/2.test.js"])
    );
    assert!(tickets[0].get("edges").is_none() && tickets[0].get("rails").is_none());
    assert_eq!(
        cli.run(repo.path(), &["validate", "plan.json"])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn a_spec_that_compiles_to_an_invalid_plan_is_rejected() {
    let cli = Cli::new(BIN);
    let repo = repo_with(&["a.js"]);
    let spec = r#"{"repo": ".", "operation": "fix {target}", "targets": ["a.js"], "gate": {"test": "make check"}}"#;
    std::fs::write(repo.path().join("sweep.json"), spec).unwrap();
    let out = cli.run(repo.path(), &["sweep", "sweep.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("agb.gate.strict"));
    assert_eq!(
        cli.run(repo.path(), &["sweep", "--no-strict-gates", "sweep.json"])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn a_glob_outside_a_repository_is_a_usage_error() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sweep.json"),
        r#"{"repo": "nowhere", "operation": "{target}", "targetGlob": "*.js"}"#,
    )
    .unwrap();
    let out = cli.run(dir.path(), &["sweep", "sweep.json"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot list the files of"), "{stderr}");
    // The folder is missing, not git.
    assert!(stderr.contains("is not a directory"), "{stderr}");
    assert!(!stderr.contains("is git installed"), "{stderr}");
}

#[test]
fn json_output_of_a_bad_spec_is_one_document_with_its_findings() {
    let cli = Cli::new(BIN);
    let repo = repo_with(&["a.js"]);
    let spec = r#"{"repo": ".", "operation": "no placeholder", "targets": ["a.js"]}"#;
    std::fs::write(repo.path().join("sweep.json"), spec).unwrap();
    std::fs::write(repo.path().join("empty.json"), "").unwrap();
    std::fs::write(
        repo.path().join("strict.json"),
        r#"{"repo": ".", "operation": "fix {target}", "targets": ["a.js"], "gate": {"test": "make check"}}"#,
    )
    .unwrap();
    for (file, code) in [
        ("sweep.json", "sweep.operation"),
        ("empty.json", "json.syntax"),
        ("strict.json", "agb.gate.strict"),
    ] {
        let out = cli.run(repo.path(), &["sweep", "--output", "json", file]);
        assert_eq!(out.status.code(), Some(1), "{file}");
        let reports: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{file}: stdout is not one JSON document: {e}"));
        let codes: Vec<&str> = reports[0]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap())
            .collect();
        assert!(codes.contains(&code), "{file}: {codes:?}");
        assert!(
            reports[0]["diagnostics"][0]["line"].as_u64().is_some(),
            "{file}"
        );
    }
}
