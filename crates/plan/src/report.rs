//! Validating one file, start to finish: parse, detect, validate, locate.

use crate::diag::{Diagnostic, Severity, Sink};
use crate::doc::{Document, LineIndex, Span, Syntax, SyntaxError};
use crate::formats::{self, Options, Outcome};
use crate::model::{Format, Plan};
use crate::overlap::Overlap;
use serde::Serialize;

/// A diagnostic with its place in the file.
#[derive(Debug, Clone, Serialize)]
pub struct Located {
    /// The finding.
    #[serde(flatten)]
    pub diagnostic: Diagnostic,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The byte span to underline.
    #[serde(skip)]
    pub span: Span,
}

/// Everything validation says about one file (the `validate --output json` object).
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// The file as the user named it.
    pub file: String,
    /// The format it was read as, if any.
    pub format: Option<Format>,
    /// No errors.
    pub valid: bool,
    /// Number of errors.
    pub error_count: usize,
    /// Number of warnings.
    pub warning_count: usize,
    /// `error_count` under its former name, written for one release more.
    pub errors: usize,
    /// `warning_count` under its former name, written for one release more.
    pub warnings: usize,
    /// Every finding, in the order the validator found them.
    pub diagnostics: Vec<Located>,
    /// The text, for rendering.
    #[serde(skip)]
    pub text: String,
    /// The plan, when valid.
    #[serde(skip)]
    pub plan: Option<Plan>,
    /// The plan's overlap forecast, when valid (what its warnings came
    /// from): every ticket of each group, where a warning names 20.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overlaps: Vec<Overlap>,
}

/// Where a plan would run: its repository as written (relative to the
/// plan's folder) and its base branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The plan's `repo`, if it names one.
    pub repo: Option<String>,
    /// The branch the run starts from and merges into, when the plan's
    /// format names one ([`Format::names_base`]).
    pub base: Option<String>,
}

impl FileReport {
    /// A warning about the file as a whole that its caller found (what a
    /// run of the plan would meet), counted with the validator's so that
    /// the summary line counts what is printed.
    pub fn add_warning(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(Located {
            diagnostic,
            line: 1,
            column: 1,
            span: Span { start: 0, end: 0 },
        });
        self.warning_count += 1;
        self.warnings += 1;
    }

    /// Where the plan would run, known even when it is invalid (so that the
    /// configuration a run would read can be found for it): the valid
    /// plan's own; else, for a native plan, its top-level `repo` and `base`;
    /// else the defaults every other format runs with. `None` when the file
    /// is not a plan of any format.
    pub fn target(&self) -> Option<Target> {
        if let Some(plan) = &self.plan {
            return Some(Target {
                repo: plan.repo.clone(),
                base: plan.source_format.names_base().then(|| plan.base.clone()),
            });
        }
        let format = self.format?;
        let defaults = Plan::new(format, Vec::new());
        let mut target = Target {
            repo: defaults.repo,
            base: format.names_base().then_some(defaults.base),
        };
        if format == Format::Native {
            if let Ok(doc) = Document::parse(&self.file, self.text.clone()) {
                let value = doc.value();
                let text = |key: &str| value.get(key).and_then(|v| v.as_str()).map(String::from);
                target.repo = text("repo");
                target.base = text("base").or(target.base);
            }
        }
        Some(target)
    }
}

/// Parses, detects and validates `text`, the content of the file `path`.
pub fn validate_text(path: &str, text: String, options: &Options) -> FileReport {
    // A Spec Kit tasks.md is Markdown whatever the file is called.
    let syntax = match options.format {
        Some(Format::Speckit) => Some(Syntax::Markdown),
        _ => options.syntax,
    };
    let mut doc = match Document::read(path, text, syntax) {
        Ok(doc) => doc,
        Err(failed) => return unreadable(path, *failed),
    };
    let mut diagnostics = Vec::new();
    let read = formats::read(&doc, options, &mut diagnostics);
    let lines = LineIndex::new(&doc.text);
    let mut located = locate(&doc, &lines, diagnostics);
    // The forecast reads only the plan, and its warnings come with their
    // spans: the parsed tree is freed first, so that the two are never held
    // at once (a large plan's peak memory, issue 53).
    doc.free_tree();
    let (outcome, warnings) = formats::forecast(read, options);
    located.extend(
        (warnings.into_iter()).map(|(diagnostic, span)| at(&doc.text, &lines, diagnostic, span)),
    );
    // Source order reads best, top to bottom; the sort is stable, so
    // findings at one place keep the validator's order.
    located.sort_by_key(|l| l.span.start);
    finish(path, doc.text, outcome, located)
}

/// Parses `text` and runs `check` on the document, then gives every finding
/// its line, column and span. A document that does not parse is one syntax
/// diagnostic, as in [`validate_text`], so that other inputs (sweep specs)
/// are reported as plans are.
pub fn check_text(
    path: &str,
    text: String,
    check: impl FnOnce(&Document, &mut dyn Sink) -> Outcome,
) -> FileReport {
    // The text moves into the document: a large plan is held once.
    let doc = match Document::read(path, text, None) {
        Ok(doc) => doc,
        Err(failed) => return unreadable(path, *failed),
    };
    let mut diagnostics = Vec::new();
    let outcome = check(&doc, &mut diagnostics);
    let lines = LineIndex::new(&doc.text);
    let mut located = locate(&doc, &lines, diagnostics);
    located.sort_by_key(|l| l.span.start);
    finish(path, doc.text, outcome, located)
}

/// The report of a text that does not parse: one syntax diagnostic.
fn unreadable(path: &str, (e, text): (SyntaxError, String)) -> FileReport {
    let located = at(&text, &LineIndex::new(&text), e.diagnostic, e.span);
    finish(path, text, Outcome::default(), vec![located])
}

/// Gives every finding its line, column and span in `doc`.
fn locate(doc: &Document, lines: &LineIndex, diagnostics: Vec<Diagnostic>) -> Vec<Located> {
    (diagnostics.into_iter())
        .map(|d| {
            let span = if d.at_key {
                doc.locate_key(&d.pointer)
            } else {
                doc.locate(&d.pointer)
            };
            at(&doc.text, lines, d, span)
        })
        .collect()
}

fn at(text: &str, lines: &LineIndex, diagnostic: Diagnostic, span: Span) -> Located {
    let (line, column) = lines.line_col(text, span.start);
    Located {
        diagnostic,
        line,
        column,
        span,
    }
}

fn finish(path: &str, text: String, outcome: Outcome, diagnostics: Vec<Located>) -> FileReport {
    let count = |s: Severity| {
        diagnostics
            .iter()
            .filter(|d| d.diagnostic.severity == s)
            .count()
    };
    let errors = count(Severity::Error);
    let warnings = count(Severity::Warning);
    let (plan, overlaps) = match errors {
        0 => (outcome.plan, outcome.overlaps),
        _ => (None, vec![]),
    };
    FileReport {
        file: path.to_string(),
        format: outcome.format,
        valid: errors == 0,
        error_count: errors,
        warning_count: warnings,
        errors,
        warnings,
        plan,
        overlaps,
        diagnostics,
        text,
    }
}
