//! Where a run stands and what it did: data for `status` and `report`, and
//! the Markdown and HTML renderings of a run.

use crate::error::EngineError;
use crate::repo::Repo;
use crate::state::{AttemptRow, RunRow, RunStatus, Store, TicketRow, TicketState};
use serde::Serialize;
use std::fmt::Write;

/// One ticket with its attempts.
#[derive(Debug, Clone, Serialize)]
pub struct TicketReport {
    /// The ticket's row.
    #[serde(flatten)]
    pub ticket: TicketRow,
    /// Its attempts, oldest first.
    pub attempts: Vec<AttemptRow>,
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
    let mut tickets = Vec::new();
    for t in store.tickets(&run.id)? {
        let attempts = store.attempts(&run.id, &t.id)?;
        tickets.push(TicketReport {
            ticket: t,
            attempts,
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
    for t in &r.tickets {
        let t = &t.ticket;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            t.id,
            t.title.replace('|', "\\|"),
            t.state.as_str(),
            t.attempt_count,
            short(&t.merge_commit),
            failure_text(t).replace('|', "\\|").replace('\n', " ")
        );
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

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The run as a self-contained HTML page.
pub fn html(r: &RunReport) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>planwright run {id}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left}}.merged{{color:#060}}.failed,.blocked{{color:#a00}}</style>\
         </head><body><h1>planwright run {id}</h1><p>plan <code>{plan}</code>, base <code>{base}</code>, started {start}, status {status}</p>",
        id = esc(&r.run.id),
        plan = esc(&r.run.plan_path),
        base = esc(&r.run.base),
        start = esc(&r.run.started_at),
        status = esc(r.run.status.as_str()),
    );
    s.push_str("<table><tr><th>ticket</th><th>title</th><th>state</th><th>attempts</th><th>commit</th><th>failure</th></tr>");
    for t in &r.tickets {
        let t = &t.ticket;
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td class=\"{st}\">{st}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
            esc(&t.id),
            esc(&t.title),
            t.attempt_count,
            short(&t.merge_commit),
            esc(&failure_text(t)),
            st = t.state.as_str(),
        );
    }
    s.push_str("</table></body></html>\n");
    s
}
