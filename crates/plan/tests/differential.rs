//! planwright against the recorded verdicts of each format's own tool
//! (`data/differential/verdicts.toml`): a plan its tool accepts is valid
//! here, a plan it rejects is invalid here with the code that names why,
//! and where planwright is deliberately stricter the case says so.

use planwright_plan::{validate_text, FileReport, Options, Severity};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    file: String,
    tool: String,
    how: String,
    verdict: Verdict,
    rule: String,
    date: String,
    /// The code planwright must give when it rejects the plan.
    code: Option<String>,
    /// Where planwright rejects what the tool accepts: the docs row saying why.
    stricter: Option<String>,
    #[serde(default)]
    coerce: bool,
    strict_gates: Option<bool>,
    /// The tracked files of the repository the plan is checked against.
    tree: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, PartialEq, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Verdict {
    Accept,
    Reject,
}

#[derive(Debug, Deserialize)]
struct Manifest {
    case: Vec<Case>,
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/differential")
}

fn manifest() -> Manifest {
    let text = std::fs::read_to_string(dir().join("verdicts.toml")).unwrap();
    toml::from_str(&text).unwrap()
}

fn check(case: &Case) -> FileReport {
    let text = std::fs::read_to_string(dir().join(&case.file)).unwrap();
    let options = Options {
        coerce: case.coerce,
        strict_gates: case.strict_gates.unwrap_or(true),
        repo_files: case
            .tree
            .as_ref()
            .map(|t| Arc::new(t.iter().cloned().collect::<BTreeSet<_>>())),
        ..Options::default()
    };
    validate_text(&case.file, text, &options)
}

fn errors(report: &FileReport) -> Vec<&str> {
    report
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.severity == Severity::Error)
        .map(|d| d.diagnostic.code.as_str())
        .collect()
}

/// Why planwright's verdict on `case` is wrong, if it is.
fn disagreement(case: &Case) -> Option<String> {
    let report = check(case);
    let rejects = case.verdict == Verdict::Reject || case.stricter.is_some();
    let found = errors(&report);
    if !rejects {
        return (!report.valid).then(|| {
            format!(
                "{}: the tool accepts it; planwright says {found:?}",
                case.file
            )
        });
    }
    let code = case.code.as_deref()?;
    (!found.contains(&code)).then(|| {
        format!(
            "{}: the tool rejects it ({}); planwright should say {code}, says {found:?}",
            case.file, case.rule
        )
    })
}

#[test]
fn planwright_agrees_with_every_recorded_verdict() {
    let wrong: Vec<String> = manifest().case.iter().filter_map(disagreement).collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_case_is_complete_and_every_input_has_a_case() {
    let manifest = manifest();
    let mut named = BTreeSet::new();
    for case in &manifest.case {
        let what = &case.file;
        assert!(
            !case.tool.is_empty() && !case.how.is_empty() && !case.rule.is_empty(),
            "{what}"
        );
        assert_eq!(case.date.len(), 10, "{what}: the date is YYYY-MM-DD");
        let rejects = case.verdict == Verdict::Reject || case.stricter.is_some();
        assert_eq!(
            rejects,
            case.code.is_some(),
            "{what}: a rejection names its code"
        );
        if case.stricter.is_some() {
            assert_eq!(
                case.verdict,
                Verdict::Accept,
                "{what}: stricter than an acceptance"
            );
        }
        named.insert(case.file.clone());
    }
    for format in ["agb", "codeboost", "standard_v1"] {
        for entry in std::fs::read_dir(dir().join(format)).unwrap() {
            let file = format!("{format}/{}", entry.unwrap().file_name().to_string_lossy());
            assert!(named.contains(&file), "{file} has no recorded verdict");
        }
    }
}

#[test]
fn the_documented_differences_are_in_the_docs() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/formats");
    for case in manifest().case {
        let Some(row) = case.stricter else { continue };
        let (doc, _) = row.split_once(',').expect("`<doc>, <where>`");
        let doc = doc.trim_start_matches("docs/formats/");
        let text = std::fs::read_to_string(docs.join(doc)).unwrap();
        assert!(
            text.contains("## Where we differ"),
            "{doc} has no differences table"
        );
        let code = case.code.unwrap();
        assert!(
            text.contains(&format!("`{code}`")),
            "{doc} does not name {code}"
        );
    }
}
