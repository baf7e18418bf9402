//! Where a run stands and what it did: data for `status --output json` and
//! `report`, and the Markdown rendering of a run (the HTML page is
//! [`crate::html`], drawn from [`crate::view`]).

use crate::error::EngineError;
use crate::repo::Repo;
use crate::state::{AttemptRow, RunRow, RunStatus, Store, TicketRow, TicketState};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;

/// One ticket with its attempts.
#[derive(Debug, Clone, Serialize)]
pub struct TicketReport {
    /// The ticket's row.
    #[serde(flatten)]
    pub ticket: TicketRow,
    /// Its attempts, oldest first.
    pub attempts: Vec<AttemptRow>,
    /// The full log of its attempts (`.planwright/runs/<run>/<ticket>/ticket.log`),
    /// relative to the repository, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// For a blocked ticket: the failed ancestor that blocked it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<String>,
}

/// A run with its tickets.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The run.
    pub run: RunRow,
    /// Its tickets, in plan order.
    pub tickets: Vec<TicketReport>,
}

impl RunReport {
    /// How many tickets are in `state`.
    pub fn count(&self, state: TicketState) -> usize {
        self.tickets
            .iter()
            .filter(|t| t.ticket.state == state)
            .count()
    }
}

/// The report of run `id` (the newest run when None); None when the
/// repository has no runs. Never creates the state store. A run recorded
/// as `running` whose process is gone (nobody holds the run lock) is
/// reported as `interrupted`.
pub fn load(repo: &Repo, id: Option<&str>) -> Result<Option<RunReport>, EngineError> {
    let db = repo.state_dir().join("state.db");
    if !db.is_file() {
        return Ok(None);
    }
    let store = Store::open(&db)?;
    let run = match id {
        Some(id) => store.run(id)?,
        None => store.latest_run()?,
    };
    let Some(mut run) = run else { return Ok(None) };
    if run.status == RunStatus::Running && !crate::lock::is_held(repo)? {
        run.status = RunStatus::Interrupted;
    }
    let run_dir = Path::new(".planwright").join("runs").join(&run.id);
    let blockers = blockers(&repo.root().join(&run_dir).join("events.jsonl"));
    let mut tickets = Vec::new();
    for t in store.tickets(&run.id)? {
        let attempts = store.attempts(&run.id, &t.id)?;
        let log = run_dir.join(&t.id).join("ticket.log");
        tickets.push(TicketReport {
            log: repo
                .root()
                .join(&log)
                .is_file()
                .then(|| log.display().to_string()),
            blocked_by: blockers.get(&t.id).cloned(),
            ticket: t,
            attempts,
        });
    }
    Ok(Some(RunReport { run, tickets }))
}

/// Which ticket blocked which, from the run's `blocked` events (the last
/// one wins: a continued run may block a ticket again, for another reason).
fn blockers(events: &Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(events).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["event"] == "blocked")
        .filter_map(|e| {
            Some((
                e["ticket"].as_str()?.to_string(),
                e["by"].as_str()?.to_string(),
            ))
        })
        .collect()
}

/// Lines of evidence shown per failed ticket; the log has all of it.
pub const EVIDENCE_LINES: usize = 5;

/// The first `n` non-blank lines of a failure's evidence, and how many more there are.
pub fn evidence_head(evidence: &str, n: usize) -> (Vec<&str>, usize) {
    let lines: Vec<&str> = evidence.lines().filter(|l| !l.trim().is_empty()).collect();
    let more = lines.len().saturating_sub(n);
    (lines.into_iter().take(n).collect(), more)
}

/// Why a ticket did not merge, in a few lines: the failure kind and
/// message, the first lines of the evidence, and where the full log is; or
/// which ancestor blocked it. Empty for a ticket that did not fail.
pub fn why(t: &TicketReport, lines: usize) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(by) = &t.blocked_by {
        out.push(format!("blocked: its ancestor {by} failed"));
    }
    let Some(f) = &t.ticket.failure else {
        return out;
    };
    out.push(format!("{}: {}", f.kind, f.message));
    // The ticket row keeps the kind and message; the evidence is the last
    // failed attempt's.
    let evidence = t
        .attempts
        .iter()
        .rev()
        .find_map(|a| a.failure.as_ref().map(|f| f.evidence.as_str()))
        .filter(|e| f.evidence.is_empty() && !e.is_empty())
        .unwrap_or(&f.evidence);
    let (head, more) = evidence_head(evidence, lines);
    out.extend(head.iter().map(|l| format!("  {l}")));
    if more > 0 {
        out.push(format!(
            "  ... {more} more {}",
            planwright_plan::words::plural(more, "line")
        ));
    }
    if let Some(log) = &t.log {
        out.push(format!("full log: {log}"));
    }
    out
}

/// The failure column: the failure, or the ancestor that blocked the ticket.
pub fn failure_text(t: &TicketReport) -> String {
    match (&t.ticket.failure, &t.blocked_by) {
        (Some(f), _) => format!("{}: {}", f.kind, f.message),
        (None, Some(by)) => format!("blocked by {by}"),
        (None, None) => String::new(),
    }
}

fn short(c: &Option<String>) -> String {
    c.as_deref()
        .map_or(String::new(), |c| c[..c.len().min(10)].to_string())
}

/// The run as Markdown.
pub fn markdown(r: &RunReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# planwright run {}\n", r.run.id);
    let _ = writeln!(
        s,
        "- plan: `{}`\n- base: `{}`\n- started: {}",
        r.run.plan_path, r.run.base, r.run.started_at
    );
    let _ = writeln!(
        s,
        "- finished: {}\n- status: {}",
        r.run.finished_at.as_deref().unwrap_or("-"),
        r.run.status.as_str()
    );
    let _ = writeln!(
        s,
        "- tickets: {} merged, {} changed since merged, {} failed, {} blocked, {} other\n",
        r.count(TicketState::Merged),
        r.count(TicketState::Changed),
        r.count(TicketState::Failed),
        r.count(TicketState::Blocked),
        r.tickets.len()
            - r.count(TicketState::Merged)
            - r.count(TicketState::Changed)
            - r.count(TicketState::Failed)
            - r.count(TicketState::Blocked)
    );
    let _ = writeln!(
        s,
        "| ticket | title | state | attempts | commit | failure |\n|---|---|---|---|---|---|"
    );
    for report in &r.tickets {
        let t = &report.ticket;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            t.id,
            t.title.replace('|', "\\|"),
            t.state.as_str(),
            t.attempt_count,
            short(&t.merge_commit),
            failure_text(report).replace('|', "\\|").replace('\n', " ")
        );
    }
    let failed: Vec<&TicketReport> = r.tickets.iter().filter(|t| !why(t, 0).is_empty()).collect();
    if !failed.is_empty() {
        let _ = writeln!(s, "\n## Why tickets did not merge");
    }
    for t in failed {
        let _ = writeln!(s, "\n### {}\n", t.ticket.id);
        let mut lines = why(t, EVIDENCE_LINES).into_iter();
        if let Some(first) = lines.next() {
            let _ = writeln!(s, "{first}");
        }
        let rest: Vec<String> = lines.collect();
        let (evidence, log): (Vec<&String>, Vec<&String>) =
            rest.iter().partition(|l| l.starts_with("  "));
        if !evidence.is_empty() {
            let _ = writeln!(s, "\n```");
            for l in evidence {
                let _ = writeln!(s, "{}", &l[2..]);
            }
            let _ = writeln!(s, "```");
        }
        for l in log {
            let _ = writeln!(s, "\n{}", l.replacen("full log: ", "full log: `", 1) + "`");
        }
    }
    for t in r.tickets.iter().filter(|t| !t.attempts.is_empty()) {
        let _ = writeln!(s, "\n## {}\n", t.ticket.id);
        for a in &t.attempts {
            let what = a
                .failure
                .as_ref()
                .map_or(a.phase.clone(), |f| format!("{}: {}", f.kind, f.message));
            let _ = writeln!(
                s,
                "- attempt {} from {}: {what}",
                a.n,
                short(&Some(a.base_commit.clone()))
            );
        }
    }
    s
}
