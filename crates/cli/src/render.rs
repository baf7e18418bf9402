//! Human rendering of diagnostics: the source line with the span underlined.

use crate::Global;
use codespan_reporting::diagnostic::{Diagnostic as Cs, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor::Buffer, Config};
use planwright_plan::report::{FileReport, Located};
use planwright_plan::words::{inert, inert_in_place};
use planwright_plan::Severity;

/// Renders every diagnostic of `report`, then a one-line summary; with
/// `--quiet`, only the errors.
pub(crate) fn file_report(report: &FileReport, global: &Global, color: bool) -> String {
    let mut out = diagnostics(report, global, color);
    if !global.quiet {
        out.push_str(&summary(report));
        out.push('\n');
    }
    out
}

/// Lines longer than this are shown as a window around the fault: a
/// minified plan is one line, and printing it whole for each of its
/// diagnostics would print megabytes per warning.
pub(crate) const LONG_LINE: usize = 200;

/// Characters shown on each side of the fault in a long line.
const WINDOW: usize = 60;

/// Renders every diagnostic of `report` (with `--quiet`, the errors only):
/// the source line, the span underlined, the pointer and the hint.
pub(crate) fn diagnostics(report: &FileReport, global: &Global, color: bool) -> String {
    // What the plan holds is shown, never obeyed: its name, its lines and
    // what messages quote of it reach the terminal inert.
    let name = inert(&report.file);
    let text = inert_in_place(&report.text);
    let file = SimpleFile::new(name.as_ref(), text.as_ref());
    let config = Config::default();
    let mut out = String::new();
    let shown = report
        .diagnostics
        .iter()
        .filter(|l| !global.quiet || l.diagnostic.severity == Severity::Error);
    for located in shown {
        let d = &located.diagnostic;
        let severity = match d.severity {
            Severity::Error => CsSeverity::Error,
            Severity::Warning => CsSeverity::Warning,
            Severity::Advisory => CsSeverity::Note,
        };
        let mut notes = Vec::new();
        if !d.pointer.is_empty() {
            notes.push(inert(&format!("at {}", d.pointer)).into_owned());
        }
        if let Some(h) = &d.hint {
            notes.push(inert(&format!("hint: {h}")).into_owned());
        }
        let (start, end) = first_line(&text, located.span.start, located.span.end);
        if let Some(window) = long_line_window(&text, start, end) {
            out.push_str(&windowed(report, &text, located, &window, &notes));
            continue;
        }
        let diagnostic = Cs::new(severity)
            .with_code(d.code.as_str())
            .with_message(inert(&d.message))
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
/// Never looks further than a window past the start, so that a span over a
/// whole huge document costs no more than a small one.
fn first_line(text: &str, start: usize, end: usize) -> (usize, usize) {
    let end = end.min(text.len());
    let start = start.min(end);
    let end = ceil_char_boundary(text, end.min(start + LONG_LINE * 4));
    let line_end = text[start..end].find('\n').map_or(end, |i| start + i);
    (start, text[start..line_end].trim_end().len() + start)
}

fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// What a long line shows of itself: `text[from..to]`, with the fault at
/// `mark_from..mark_to` in it.
struct Window {
    from: usize,
    to: usize,
    mark_from: usize,
    mark_to: usize,
    line_start: usize,
}

/// The window around `start..end` when its line is longer than [`LONG_LINE`].
fn long_line_window(text: &str, start: usize, end: usize) -> Option<Window> {
    // Only as far as the window needs, either way: the line may be megabytes long.
    let back = floor_char_boundary(text, start.saturating_sub(LONG_LINE));
    let line_start = text[back..start].rfind('\n').map(|i| back + i + 1);
    let probe_end = ceil_char_boundary(text, (start + LONG_LINE).min(text.len()));
    let line_end = text[start..probe_end]
        .find('\n')
        .map_or(probe_end, |i| start + i);
    if line_start.is_some_and(|s| line_end - s <= LONG_LINE) {
        return None;
    }
    // Without a line start nearby, the window stays well after it.
    let line_start = line_start.unwrap_or(back);
    let mark_to = floor_char_boundary(text, end.min(start + WINDOW));
    let from = floor_char_boundary(text, start.saturating_sub(WINDOW).max(line_start));
    let after = text[mark_to..probe_end.max(mark_to)]
        .find('\n')
        .map_or(text.len(), |i| mark_to + i);
    let to = floor_char_boundary(text, (mark_to + WINDOW).min(after));
    Some(Window {
        from,
        to,
        mark_from: start,
        mark_to: mark_to.max(start),
        line_start,
    })
}

/// A diagnostic on a long line of `text` (the report's, made inert), in
/// codespan's layout, showing only the window.
fn windowed(
    report: &FileReport,
    text: &str,
    located: &Located,
    w: &Window,
    notes: &[String],
) -> String {
    let d = &located.diagnostic;
    let gutter = located.line.to_string();
    let pad = " ".repeat(gutter.len());
    let clean = |s: &str| s.replace(['\t', '\r'], " ");
    let (lead, trail) = (
        w.from > w.line_start,
        w.to < text.len() && !text[w.to..].starts_with('\n'),
    );
    let mut line = String::new();
    line.push_str(if lead { "…" } else { "" });
    let before = clean(&text[w.from..w.mark_from]);
    line.push_str(&before);
    line.push_str(&clean(&text[w.mark_from..w.mark_to]));
    line.push_str(&clean(&text[w.mark_to..w.to]));
    line.push_str(if trail { "…" } else { "" });
    let indent = before.chars().count() + usize::from(lead);
    let marks = text[w.mark_from..w.mark_to].chars().count().max(1);
    let word = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Advisory => "advisory",
    };
    let mut out = format!(
        "{word}[{}]: {}\n{pad} ┌─ {}:{}:{}\n{pad} │\n{gutter} │ {line}\n{pad} │ {}{}\n",
        d.code,
        inert(&d.message),
        inert(&report.file),
        located.line,
        located.column,
        " ".repeat(indent),
        "^".repeat(marks),
    );
    if !notes.is_empty() {
        out.push_str(&format!("{pad} │\n"));
    }
    for note in notes {
        out.push_str(&format!("{pad} = {note}\n"));
    }
    out.push('\n');
    out
}

/// `plan.json: valid agb plan, 3 tickets, 1 warning`.
pub(crate) fn summary(report: &FileReport) -> String {
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
        count(report.error_count, "error"),
        count(report.warning_count, "warning")
    );
    if advisories > 0 {
        counts.push_str(&format!(", {}", count(advisories, "advisory")));
    }
    match &report.plan {
        Some(plan) => format!(
            "{}: valid {format}, {} ({counts})",
            inert(&report.file),
            count(plan.tickets.len(), "ticket")
        ),
        None => format!("{}: invalid {format} ({counts})", inert(&report.file)),
    }
}

/// `1 error`, `2 errors`: the one plural helper, shared with the library.
pub(crate) use planwright_plan::words::count;

/// `text` in the colour of the ticket state `state` (merged green, failed
/// red, blocked, interrupted and a rejected attempt yellow, running and
/// merging cyan; others plain) when `color`, as `--color` and `NO_COLOR`
/// decide.
pub(crate) fn paint(text: &str, state: &str, color: bool) -> String {
    let code = match state {
        "merged" | "changed" => "32",
        "failed" => "31",
        "blocked" | "interrupted" | "rejected" => "33",
        "running" | "verified" | "merging" => "36",
        _ => return text.to_string(),
    };
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}
