//! A reviewer's verdict on a candidate: the document a reviewer agent
//! answers with, checked against `schemas/review_verdict.schema.json` and
//! against the checks it was asked about.

use crate::diag::Diagnostic;
use crate::schema::{Checker, Formats};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::OnceLock;

/// The verdict schema as published.
pub const SCHEMA: &str = include_str!("../../../schemas/review_verdict.schema.json");

/// Ship or block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The candidate may merge.
    Ship,
    /// It must not.
    Block,
}

impl Decision {
    /// Its name in the verdict, events and messages (as serde spells it).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Ship => "ship",
            Decision::Block => "block",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingSeverity {
    /// Must be fixed before merging.
    Blocker,
    /// Should be fixed.
    Major,
    /// Could be better.
    Minor,
    /// Taste.
    Nit,
}

/// One thing the reviewer found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// How much it matters.
    pub severity: FindingSeverity,
    /// The file, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The 1-based line, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// What is wrong.
    pub message: String,
}

/// Whether a check holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// The code meets it.
    Met,
    /// It does not.
    Unmet,
    /// The reviewer could not tell (or the check is `skip_expected`).
    NotValidated,
}

/// The reviewer's answer about one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckVerdict {
    /// `C1`, `C2`, ... as numbered in the prompt.
    pub id: String,
    /// Met, unmet or not validated.
    pub status: CheckStatus,
    /// Why, when the reviewer said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// A verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Ship or block.
    pub verdict: Decision,
    /// One or two sentences.
    pub summary: String,
    /// What the reviewer found.
    pub findings: Vec<Finding>,
    /// One entry per check, in the prompt's order.
    pub checks: Vec<CheckVerdict>,
}

/// A check the reviewer is asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewCheck {
    /// `C1`, `C2`, ...
    pub id: String,
    /// The statement.
    pub statement: String,
    /// standard_v1's `skip_expected`: never counted as validated.
    pub skip_expected: bool,
}

impl ReviewCheck {
    /// Numbers `statements` `C1`, `C2`, ... in order.
    pub fn numbered(statements: impl IntoIterator<Item = (String, bool)>) -> Vec<ReviewCheck> {
        statements
            .into_iter()
            .enumerate()
            .map(|(i, (statement, skip_expected))| ReviewCheck {
                id: format!("C{}", i + 1),
                statement,
                skip_expected,
            })
            .collect()
    }
}

fn checker() -> &'static Checker {
    static CHECKER: OnceLock<Checker> = OnceLock::new();
    CHECKER.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA).expect("the verdict schema is JSON");
        Checker::new(&schema, "review", Formats::Assert)
    })
}

/// Parses a reviewer's answer: JSON, valid against the schema, with one
/// entry for each of `checks` and none for a check it was not asked about.
/// A `skip_expected` check is recorded as not validated whatever it says.
/// The error lists every problem, one per line, for the reviewer's retry.
pub fn parse(text: &str, checks: &[ReviewCheck]) -> Result<Verdict, String> {
    let value: Value =
        serde_json::from_str(text.trim()).map_err(|e| format!("the verdict is not JSON: {e}"))?;
    let mut problems: Vec<Diagnostic> = Vec::new();
    checker().check(&value, &mut problems);
    if !problems.is_empty() {
        let lines: Vec<String> = problems
            .iter()
            .map(|d| format!("at `{}`: {}", d.pointer, d.message))
            .collect();
        return Err(lines.join("\n"));
    }
    let mut verdict: Verdict =
        serde_json::from_value(value).map_err(|e| format!("the verdict does not fit: {e}"))?;
    let mut missing = Vec::new();
    for c in checks {
        match verdict.checks.iter().filter(|v| v.id == c.id).count() {
            0 => missing.push(format!("no entry for check {}", c.id)),
            1 => {}
            n => missing.push(format!(
                "{} for check {}",
                crate::words::count(n, "entry"),
                c.id
            )),
        }
    }
    for v in &verdict.checks {
        if !checks.iter().any(|c| c.id == v.id) {
            missing.push(format!("check {} was not asked about", v.id));
        }
    }
    if !missing.is_empty() {
        return Err(missing.join("\n"));
    }
    verdict
        .checks
        .sort_by_key(|v| checks.iter().position(|c| c.id == v.id));
    for (v, c) in verdict.checks.iter_mut().zip(checks) {
        if c.skip_expected {
            v.status = CheckStatus::NotValidated;
        }
    }
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks() -> Vec<ReviewCheck> {
        ReviewCheck::numbered([
            ("a holds".to_string(), false),
            ("b holds".to_string(), true),
        ])
    }

    #[test]
    fn a_valid_verdict_parses_and_skip_expected_is_never_met() {
        let text = r#"{"verdict": "ship", "summary": "fine", "findings": [],
            "checks": [{"id": "C2", "status": "met"}, {"id": "C1", "status": "met", "evidence": "test x"}]}"#;
        let v = parse(text, &checks()).unwrap();
        assert_eq!(v.verdict, Decision::Ship);
        assert_eq!(v.checks[0].id, "C1");
        assert_eq!(v.checks[0].status, CheckStatus::Met);
        assert_eq!(v.checks[1].status, CheckStatus::NotValidated);
    }

    #[test]
    fn schema_violations_are_listed_with_pointers() {
        let text = r#"{"verdict": "maybe", "summary": "", "findings": [{"severity": "huge"}], "checks": []}"#;
        let err = parse(text, &[]).unwrap_err();
        assert!(err.contains("at `/verdict`"), "{err}");
        assert!(err.contains("at `/findings/0/severity`"), "{err}");
        assert!(err.contains("`message`"), "{err}");
    }

    #[test]
    fn every_check_needs_exactly_one_entry() {
        let text = r#"{"verdict": "block", "summary": "no", "findings": [],
            "checks": [{"id": "C1", "status": "unmet"}, {"id": "C1", "status": "met"}, {"id": "C7", "status": "met"}]}"#;
        let err = parse(text, &checks()).unwrap_err();
        assert!(err.contains("2 entries for check C1"), "{err}");
        assert!(err.contains("no entry for check C2"), "{err}");
        assert!(err.contains("check C7 was not asked about"), "{err}");
    }

    #[test]
    fn text_that_is_not_json_says_so() {
        assert!(parse("LGTM!", &[])
            .unwrap_err()
            .starts_with("the verdict is not JSON"));
    }
}
