//! The title and body of a delivered pull request, from the run's report:
//! the plan's summary as lead paragraph, the issue line, the table of
//! tickets, the tickets that did not merge, and for a stacked pull request
//! the branch it is based on. Every word from an agent or a plan passes
//! through [`forge_text`], so the body mentions no one, closes nothing it
//! should not, and holds no HTML; nothing in it links to local files.

use crate::report::{cost_text, RunReport, TicketReport};
use crate::view::CheckResult;
use planwright_engine::deliver::{Delivery, Pull, PullText};
use planwright_engine::TicketState;
use planwright_plan::delivery::forge_text;
use std::fmt::Write;

/// The title and body of `pull` of delivery `d` of the run `report` holds.
pub fn pull_request_text(report: &RunReport, d: &Delivery, pull: &Pull) -> PullText {
    let per_ticket = d.settings.per == planwright_config::Per::Ticket;
    let ticket = |id: &str| report.tickets.iter().find(|t| t.ticket.id == id);
    let title = match (&pull.tickets[..], d.settings.per) {
        ([one], planwright_config::Per::Ticket) => {
            let t = ticket(one).map_or(one.as_str(), |t| t.ticket.title.as_str());
            let t = if t.trim().is_empty() {
                one.as_str()
            } else {
                t.trim()
            };
            format!("{}: {t}", d.facts.title)
        }
        _ => d.facts.title.clone(),
    };
    let mut body = String::new();
    if let Some(summary) = &d.facts.summary {
        let _ = writeln!(body, "{}\n", forge_text(summary));
    }
    if let Some(line) = issue_line(d, per_ticket) {
        let _ = writeln!(body, "{line}\n");
    }
    let closes = ticket_issue_lines(d, pull);
    if !closes.is_empty() {
        let _ = writeln!(body, "{}\n", closes.join("\n"));
    }
    if per_ticket {
        let _ = writeln!(body, "{}\n", stack_sentence(pull));
    }
    let shown: Vec<&TicketReport> = match d.settings.per {
        // What the plan no longer has is not what the pull request is of.
        planwright_config::Per::Run => report
            .tickets
            .iter()
            .filter(|t| !t.ticket.removed)
            .collect(),
        planwright_config::Per::Ticket => pull.tickets.iter().filter_map(|id| ticket(id)).collect(),
    };
    table(&mut body, report, &shown);
    not_merged(&mut body, report);
    if d.draft {
        let _ = writeln!(body, "Opened as a draft: {}.\n", d.draft_reasons.join("; "));
    }
    let _ = writeln!(
        body,
        "Delivered by planwright from run {}: each ticket was checked against its scope and rails, its gates passed, and the merge was verified before it was pushed.",
        code(&d.run.id)
    );
    PullText {
        title: title_text(&title),
        body,
    }
}

/// A title is plain text on every forge; only mentions and references
/// would act, so those are neutralized without Markdown escapes.
fn title_text(title: &str) -> String {
    let one_line = title.lines().next().unwrap_or("").trim();
    let mut out = String::new();
    for c in one_line.chars().filter(|c| !c.is_control()) {
        out.push(c);
        if matches!(c, '@' | '#' | '!') {
            out.push('\u{200b}');
        }
    }
    out
}

/// `Closes #N`, `Refs #N` (a partial delivery, or one pull request of a
/// stack), or another repository's `owner/name#N`.
fn issue_line(d: &Delivery, per_ticket: bool) -> Option<String> {
    let issue = d.facts.issue.as_ref()?;
    let shown = issue.shown_from(&d.settings.repository);
    let refs_only = d.facts.partial || per_ticket;
    Some(if refs_only {
        format!("Refs {shown}")
    } else {
        format!("Closes {shown}")
    })
}

/// `Closes #N` for each issue a ticket of `pull` was imported from
/// (`import issues`): with `per = "ticket"` the ticket's own, with
/// `per = "run"` one line per merged ticket's issue.
fn ticket_issue_lines(d: &Delivery, pull: &Pull) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for issue in d.issues_of(pull) {
        let line = format!("Closes {}", issue.shown_from(&d.settings.repository));
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines
}

/// `text` as a code span: mentions and references do not act in one, so
/// only backticks and line breaks need to go.
fn code(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| if c == '`' || c.is_control() { ' ' } else { c })
        .collect();
    format!("`{clean}`")
}

fn stack_sentence(pull: &Pull) -> String {
    let branch = code(&pull.base);
    match (&pull.stacked_on, &pull.parents[..]) {
        (Some(parent), _) => format!(
            "Based on {branch}, the branch of ticket {} this one depends on: merge that pull request first.",
            code(parent)
        ),
        (None, []) => format!("Based on {branch}: this ticket depends on no other ticket of the run."),
        (None, parents) => format!(
            "Based on {branch}: this ticket depends on {} ({}), whose pull requests merge first.",
            planwright_plan::words::count(parents.len(), "ticket"),
            parents
                .iter()
                .map(|p| code(p))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn table(body: &mut String, report: &RunReport, shown: &[&TicketReport]) {
    body.push_str(
        "| Ticket | State | Attempts | Gates | Review | Counterfactuals | Tokens | Cost |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for t in shown {
        let view = report.view.tickets.iter().find(|v| v.id == t.ticket.id);
        let last = view.and_then(|v| v.attempts.last());
        let gates = last.map_or_else(String::new, |a| passed(&a.gates));
        let reviews = last.map_or_else(String::new, |a| {
            a.reviews
                .iter()
                .map(|r| {
                    forge_text(if r.detail.is_empty() {
                        &r.name
                    } else {
                        &r.detail
                    })
                })
                .collect::<Vec<_>>()
                .join(", ")
        });
        let counterfactuals = t
            .attempts
            .last()
            .map_or_else(String::new, |a| passed(&a.counterfactuals));
        let tokens = t
            .totals
            .usage
            .map_or("-".to_string(), |u| u.total().to_string());
        let cost = t.totals.cost_usd.map_or("-".to_string(), cost_text);
        let title = if t.ticket.title.trim().is_empty() {
            String::new()
        } else {
            format!(" {}", forge_text(t.ticket.title.trim()))
        };
        let _ = writeln!(
            body,
            "| {}{title} | {} | {} | {} | {} | {} | {tokens} | {cost} |",
            code(&t.ticket.id).replace('|', "\\|"),
            t.ticket.state,
            t.ticket.attempt_count,
            dash(gates),
            dash(reviews),
            dash(counterfactuals),
        );
    }
    body.push('\n');
}

fn dash(s: String) -> String {
    if s.is_empty() {
        "-".into()
    } else {
        s
    }
}

/// `2/3 passed`, or nothing when there were none.
fn passed(checks: &[CheckResult]) -> String {
    if checks.is_empty() {
        return String::new();
    }
    let ok = checks.iter().filter(|c| c.passed == Some(true)).count();
    format!("{ok}/{} passed", checks.len())
}

/// The tickets that did not merge, each with why.
fn not_merged(body: &mut String, report: &RunReport) {
    let left: Vec<&TicketReport> = report
        .tickets
        .iter()
        .filter(|t| !t.ticket.removed)
        .filter(|t| !matches!(t.ticket.state, TicketState::Merged | TicketState::Changed))
        .collect();
    if left.is_empty() {
        return;
    }
    body.push_str("**Not delivered**\n\n");
    for t in left {
        let why = match (&t.ticket.failure, &t.blocked_by, t.ticket.state) {
            (Some(f), _, _) => format!(
                "{} ({}): {}",
                t.ticket.state,
                f.kind,
                forge_text(f.message.lines().next().unwrap_or(""))
            ),
            (None, Some(by), _) => format!("blocked: its dependency {} failed", code(by)),
            (None, None, state) => format!("{state}: the run did not finish it"),
        };
        let _ = writeln!(body, "- {}: {why}", code(&t.ticket.id));
    }
    body.push('\n');
}
