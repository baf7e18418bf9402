//! The corpus tier: plans of other tools read by planwright as their own
//! tools read them, with the tools themselves as the oracle (issue 51,
//! docs/formats/). The pinned tools come from the registries into the test
//! cache `.ci/fetch-test-packages` fills once per machine
//! (`${PLANWRIGHT_CACHE:-$HOME/.cache/planwright-ci}/corpus`):
//!
//! - Taskmaster (`task-master-ai`, npm): its own CLI is run offline on each
//!   case, in a scratch copy (`list --with-subtasks --format json` for the
//!   tag and tasks it reads, `validate-dependencies` for its verdict), and
//!   planwright's reading of the same file is checked against it.
//! - Spec Kit (`specify-cli`, PyPI): it has no parser (agents read
//!   `tasks.md` through its `/tasks` command prompt), so the oracle is what
//!   the pinned package ships: its tasks template, and the prompt's own
//!   `✅ CORRECT` and `❌ WRONG` example task lines.
//!
//! These tests run when `PLANWRIGHT_CORPUS_TESTS=1` (set by `.ci/run`), and
//! then fail when the cache is missing. No tool's file is copied into the
//! repository: the cases are written here, the verdicts come from the tools.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// The test cache's `corpus` folder, when this tier is to run.
fn corpus(test: &str) -> Option<PathBuf> {
    if std::env::var("PLANWRIGHT_CORPUS_TESTS").map_or(true, |v| v != "1") {
        eprintln!("{test}: not run; set PLANWRIGHT_CORPUS_TESTS=1 (needs .ci/fetch-test-packages)");
        return None;
    }
    let root = match std::env::var_os("PLANWRIGHT_CACHE") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/planwright-ci"),
    };
    Some(root.join("corpus"))
}

fn cached(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "PLANWRIGHT_CORPUS_TESTS=1 but {} is missing: run .ci/fetch-test-packages",
        path.display()
    );
    path
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn planwright(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("planwright runs")
}

/// planwright's verdict on a file: its diagnostics' codes by severity, and
/// when valid, its tickets with their dependencies.
struct Reading {
    errors: BTreeSet<String>,
    warnings: BTreeSet<String>,
    tickets: Vec<(String, BTreeSet<String>)>,
}

fn read_with_planwright(dir: &Path, file: &str, extra: &[&str]) -> Reading {
    let mut args = vec!["validate", file, "--output", "json"];
    args.extend_from_slice(extra);
    let out = planwright(dir, &args);
    let reports: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    let codes = |severity: &str| -> BTreeSet<String> {
        reports[0]["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|d| d["severity"] == severity)
            .map(|d| d["code"].as_str().expect("a code").to_string())
            .collect()
    };
    let (errors, warnings) = (codes("error"), codes("warning"));
    let mut tickets = Vec::new();
    if errors.is_empty() {
        let mut args = vec!["convert", file, "--to", "native"];
        args.extend_from_slice(extra);
        let out = planwright(dir, &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let plan: Value = serde_json::from_slice(&out.stdout).expect("a native plan");
        for t in plan["tickets"].as_array().expect("tickets") {
            let deps = t["depends_on"]
                .as_array()
                .map(|d| d.iter().map(|d| d.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            tickets.push((t["id"].as_str().unwrap().to_string(), deps));
        }
    }
    Reading {
        errors,
        warnings,
        tickets,
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[path = "corpus/speckit.rs"]
mod speckit;
#[path = "corpus/taskmaster.rs"]
mod taskmaster;
