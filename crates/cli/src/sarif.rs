//! `validate --output sarif`: SARIF 2.1.0, as GitHub code scanning reads it.
//!
//! One run; one rule per diagnostic code found, whose help is the fix
//! column of `docs/diagnostics.md`; one result per diagnostic with its
//! physical location (file, line, column, region).

use planwright_plan::doc::LineIndex;
use planwright_plan::report::{FileReport, Located};
use planwright_plan::Severity;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// `docs/diagnostics.md` as the build found it (empty when the crate is
/// built away from the repository, e.g. from a packaged crate).
const DIAGNOSTICS_DOC: &str = include_str!(concat!(env!("OUT_DIR"), "/diagnostics.md"));

/// The SARIF log of `reports`.
pub(crate) fn log(reports: &[FileReport]) -> Value {
    let help = help_table(DIAGNOSTICS_DOC);
    let mut rules: BTreeMap<&str, &Located> = BTreeMap::new();
    for d in reports.iter().flat_map(|r| &r.diagnostics) {
        rules.entry(d.diagnostic.code.as_str()).or_insert(d);
    }
    let index: BTreeMap<&str, usize> = rules.keys().enumerate().map(|(i, c)| (*c, i)).collect();
    let rules: Vec<Value> = rules
        .iter()
        .map(|(code, first)| rule(code, first, help.get(*code).copied()))
        .collect();
    let results: Vec<Value> = reports
        .iter()
        .flat_map(|r| {
            let lines = LineIndex::new(&r.text);
            r.diagnostics
                .iter()
                .map(|d| result(r, &lines, d, index[d.diagnostic.code.as_str()]))
                .collect::<Vec<_>>()
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "planwright",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Advisory => "note",
    }
}

fn rule(code: &str, first: &Located, help: Option<&str>) -> Value {
    let d = &first.diagnostic;
    let help = help
        .filter(|h| !h.is_empty())
        .map(str::to_string)
        .or_else(|| d.hint.clone())
        .unwrap_or_else(|| format!("see `{code}` in docs/diagnostics.md"));
    let mut rule = json!({
        "id": code,
        "shortDescription": {"text": code},
        "help": {"text": help},
        "defaultConfiguration": {"level": level(d.severity)},
    });
    // So that code scanning carries alerts of a renamed code over.
    let former: Vec<&str> = planwright_plan::diag::former_codes(code).collect();
    if !former.is_empty() {
        rule["deprecatedIds"] = json!(former);
    }
    rule
}

fn result(report: &FileReport, lines: &LineIndex, d: &Located, rule_index: usize) -> Value {
    let end = d.span.end.clamp(d.span.start, report.text.len());
    let (end_line, end_column) = lines.line_col(&report.text, end);
    let mut message = d.diagnostic.message.clone();
    if let Some(hint) = &d.diagnostic.hint {
        message.push_str(&format!("\nhint: {hint}"));
    }
    let mut region = json!({"startLine": d.line, "startColumn": d.column});
    // An empty span (the end of the file) has no end to give.
    if (end_line, end_column) > (d.line, d.column) {
        region["endLine"] = end_line.into();
        region["endColumn"] = end_column.into();
    }
    json!({
        "ruleId": d.diagnostic.code,
        "ruleIndex": rule_index,
        "level": level(d.diagnostic.severity),
        "message": {"text": planwright_plan::words::inert(&message)},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri(&report.file), "uriBaseId": "%SRCROOT%"},
            "region": region,
        }}],
        "properties": {"pointer": d.diagnostic.pointer},
    })
}

/// A relative URI reference for a file name: `/` between segments, and the
/// characters a URI cannot hold percent-encoded.
fn uri(file: &str) -> String {
    let mut out = String::new();
    for c in file.replace('\\', "/").chars() {
        match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '-' | '.' | '_' | '~' | '/' => out.push(c),
            c => {
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
        }
    }
    out
}

/// The fix column of every code row of the documentation's tables.
fn help_table(doc: &str) -> BTreeMap<&str, &str> {
    doc.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| {
            let (code, rest) = l.split_once('`')?;
            // Columns: code, severity, example, fix; `\|` is a literal bar.
            let cells: Vec<&str> = split_cells(rest);
            Some((code, cells.get(3).copied()?.trim()))
        })
        .collect()
}

fn split_cells(row: &str) -> Vec<&str> {
    let mut cells = Vec::new();
    let (mut start, mut prev) = (0, ' ');
    for (i, c) in row.char_indices() {
        if c == '|' && prev != '\\' {
            cells.push(&row[start..i]);
            start = i + 1;
        }
        prev = c;
    }
    cells.push(&row[start..]);
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_is_the_fix_column() {
        let doc = "| `agb.gate.strict` | error | `x \\| y` | use `npm test` |\n| other |";
        assert_eq!(
            help_table(doc).get("agb.gate.strict"),
            Some(&"use `npm test`")
        );
        assert!(help_table(DIAGNOSTICS_DOC).contains_key("json.syntax"));
    }

    #[test]
    fn a_renamed_code_lists_its_former_id() {
        let first = |code: &str| Located {
            diagnostic: planwright_plan::Diagnostic::error(code, "", "cycle"),
            line: 1,
            column: 1,
            span: planwright_plan::doc::Span { start: 0, end: 0 },
        };
        let cycle = rule("agb.dag.cycle", &first("agb.dag.cycle"), None);
        assert_eq!(cycle["deprecatedIds"], json!(["agb.graph.cycle"]));
        let native = rule("native.dag.cycle", &first("native.dag.cycle"), None);
        assert!(native.get("deprecatedIds").is_none());
    }

    #[test]
    fn uris_are_encoded() {
        assert_eq!(uri("plans/my plan.json"), "plans/my%20plan.json");
        assert_eq!(uri("<stdin>"), "%3Cstdin%3E");
    }
}
