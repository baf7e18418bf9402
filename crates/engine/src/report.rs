//! Where a run stands and what it did: data for `status --output json` and
//! `report`, and the Markdown rendering of a run (the HTML page is
//! [`crate::html`], drawn from [`crate::view`]).

use crate::error::EngineError;
use crate::repo::Repo;
use crate::state::{AttemptRow, RunRow, Store, TicketRow, TicketState};
use serde::Serialize;
use std::fmt::Write;

/// One ticket with its attempts.
#[derive(Debug, Clone, Serialize)]
pub struct TicketReport {
    /// The ticket's row.
    #[serde(flatten)]
    pub ticket: TicketRow,
    /// Its attempts, oldest first.
    pub attempt_log: Vec<AttemptRow>,
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
/// repository has no runs. Never creates the state store.
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
    let Some(run) = run else { return Ok(None) };
    let mut tickets = Vec::new();
    for t in store.tickets(&run.id)? {
        let attempt_log = store.attempts(&run.id, &t.id)?;
        tickets.push(TicketReport {
            ticket: t,
            attempt_log,
        });
    }
    Ok(Some(RunReport { run, tickets }))
}

fn failure_text(t: &TicketRow) -> String {
    t.failure
        .as_ref()
        .map_or(String::new(), |f| format!("{}: {}", f.kind, f.message))
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
        r.run.status
    );
    let _ = writeln!(
        s,
        "- tickets: {} merged, {} failed, {} blocked, {} other\n",
        r.count(TicketState::Merged),
        r.count(TicketState::Failed),
        r.count(TicketState::Blocked),
        r.tickets.len()
            - r.count(TicketState::Merged)
            - r.count(TicketState::Failed)
            - r.count(TicketState::Blocked)
    );
    let _ = writeln!(
        s,
        "| ticket | title | state | attempts | commit | failure |\n|---|---|---|---|---|---|"
    );
    for t in &r.tickets {
        let t = &t.ticket;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            t.id,
            t.title.replace('|', "\\|"),
            t.state.as_str(),
            t.attempts,
            short(&t.merge_commit),
            failure_text(t).replace('|', "\\|").replace('\n', " ")
        );
    }
    for t in r.tickets.iter().filter(|t| !t.attempt_log.is_empty()) {
        let _ = writeln!(s, "\n## {}\n", t.ticket.id);
        for a in &t.attempt_log {
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
