//! Human rendering of diagnostics: the source line with the span underlined.

use codespan_reporting::diagnostic::{Diagnostic as Cs, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor::Buffer, Config};
use planwright_plan::report::FileReport;
use planwright_plan::Severity;

/// Renders every diagnostic of `report`, then a one-line summary.
pub fn file_report(report: &FileReport, color: bool) -> String {
    let mut out = diagnostics(report, color);
    out.push_str(&summary(report));
    out.push('\n');
    out
}

/// Renders every diagnostic of `report`: the source line, the span
/// underlined, the pointer and the hint.
pub fn diagnostics(report: &FileReport, color: bool) -> String {
    let file = SimpleFile::new(report.file.as_str(), report.text.as_str());
    let config = Config::default();
    let mut out = String::new();
    for located in &report.diagnostics {
        let d = &located.diagnostic;
        let severity = match d.severity {
            Severity::Error => CsSeverity::Error,
            Severity::Warning => CsSeverity::Warning,
            Severity::Advisory => CsSeverity::Note,
        };
        let mut notes = Vec::new();
        if !d.pointer.is_empty() {
            notes.push(format!("at {}", d.pointer));
        }
        if let Some(h) = &d.hint {
            notes.push(format!("hint: {h}"));
        }
        let (start, end) = first_line(&report.text, located.span.start, located.span.end);
        let diagnostic = Cs::new(severity)
            .with_code(d.code.as_str())
            .with_message(d.message.as_str())
            .with_labels(vec![Label::primary((), start..end)])
            .with_notes(notes);
        let mut buffer = if color {
            Buffer::ansi()
        } else {
            Buffer::no_color()
        };
        // Rendering into memory cannot fail for a span inside the text.
        let _ = term::emit_to_write_style(&mut buffer, &config, &file, &diagnostic);
        let text = String::from_utf8_lossy(buffer.as_slice());
        if d.severity == Severity::Advisory {
            // codespan calls it a note; everywhere else it is an advisory.
            out.push_str(&text.replacen("note[", "advisory[", 1));
        } else {
            out.push_str(&text);
        }
    }
    out
}

/// The part of a span on its first line: a whole object or array would
/// otherwise be underlined line by line, burying the place it starts.
fn first_line(text: &str, start: usize, end: usize) -> (usize, usize) {
    let end = end.min(text.len());
    let start = start.min(end);
    let line_end = text[start..end].find('\n').map_or(end, |i| start + i);
    (start, text[start..line_end].trim_end().len() + start)
}

/// `plan.json: valid agb plan, 3 tickets, 1 warning`.
pub fn summary(report: &FileReport) -> String {
    let format = report
        .format
        .map_or("plan".to_string(), |f| format!("{f} plan"));
    let advisories = report
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.severity == Severity::Advisory)
        .count();
    let mut counts = format!(
        "{}, {}",
        count(report.errors, "error"),
        count(report.warnings, "warning")
    );
    if advisories > 0 {
        counts.push_str(&format!(", {}", count(advisories, "advisory")));
    }
    match &report.plan {
        Some(plan) => format!(
            "{}: valid {format}, {} ({counts})",
            report.file,
            count(plan.tickets.len(), "ticket")
        ),
        None => format!("{}: invalid {format} ({counts})", report.file),
    }
}

/// `1 error`, `2 errors`.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        match noun.strip_suffix('y') {
            Some(stem) => format!("{n} {stem}ies"),
            None => format!("{n} {noun}s"),
        }
    }
}
