//! The standard_v1 flags and the `schema` command, end to end through the binary.

use planwright_testkit::{text, Cli};
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn schema_prints_the_embedded_schema_and_its_reference() {
    let cli = Cli::new(BIN);
    let o = cli.run(&root(), &["schema", "standard_v1"]);
    assert_eq!(o.status.code(), Some(0));
    let schema: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let published: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("schemas/standard_v1.schema.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(schema, published);
    let o = cli.run(&root(), &["schema", "standard_v1", "--reference"]);
    assert_eq!(o.status.code(), Some(0));
    let md = text(&o.stdout);
    assert!(
        md.contains("| delivery | string | optional | enum: full, partial |"),
        "{md}"
    );
    let o = cli.run(&root(), &["schema", "native", "--reference"]);
    assert!(text(&o.stdout).starts_with("## Field reference — native"));
}

#[test]
fn schema_diff_takes_two_files_and_no_format() {
    let cli = Cli::new(BIN);
    let o = cli.run(
        &root(),
        &[
            "schema",
            "--diff",
            "crates/plan/tests/data/standard_v1.snapshot.schema.json",
            "schemas/standard_v1.schema.json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let md = text(&o.stdout);
    assert!(
        md.contains("| top-level | delivery | string | optional |"),
        "{md}"
    );
    assert!(!md.contains("Removed"), "{md}");
    let o = cli.run(
        &root(),
        &[
            "schema",
            "--diff",
            "missing.json",
            "schemas/standard_v1.schema.json",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let o = cli.run(&root(), &["schema"]);
    assert_eq!(o.status.code(), Some(2));
    // A format beside `--diff` would be ignored: refused instead.
    let o = cli.run(
        &root(),
        &[
            "schema",
            "codeboost",
            "--diff",
            "schemas/standard_v1.schema.json",
            "schemas/standard_v1.schema.json",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be used with"));
}

#[test]
fn cap_and_coerce_flags_reach_the_validator() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    let mut plan: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/standard_v1/plan.json")).unwrap(),
    )
    .unwrap();
    plan["generated_by"] = "claude-code".into();
    let path = dir.path().join("plan.json");
    std::fs::write(&path, plan.to_string()).unwrap();
    let file = path.to_str().unwrap();
    let o = cli.run(dir.path(), &["validate", file, "--output", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    let o = cli.run(
        dir.path(),
        &["validate", file, "--coerce", "--output", "json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert!(out.contains("standard_v1.coerced"), "{out}");
    assert!(out.contains("standard_v1.cap.unchecked"), "{out}");
    let o = cli.run(
        dir.path(),
        &[
            "validate",
            file,
            "--coerce",
            "--max-files-changed",
            "1",
            "--output",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(
        out.contains("standard_v1.cap.no-split") && !out.contains("cap.unchecked"),
        "{out}"
    );
    // From planwright.toml beside the plan.
    std::fs::write(
        dir.path().join("planwright.toml"),
        "[standard_v1]\nmax_files_changed = 1\n",
    )
    .unwrap();
    let o = cli.run(
        dir.path(),
        &["validate", file, "--coerce", "--output", "json"],
    );
    assert!(text(&o.stdout).contains("standard_v1.cap.no-split"));
}

#[test]
fn convert_writes_standard_v1() {
    let cli = Cli::new(BIN);
    let o = cli.run(
        &root(),
        &[
            "convert",
            "examples/standard_v1/plan.full.json",
            "--to",
            "standard_v1",
            "--max-files-changed",
            "50",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let back: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let original: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/standard_v1/plan.full.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(back, original);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
