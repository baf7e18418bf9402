//! Where a run stands and what it did: the state store's rows of a run
//! with what its view adds, for `status` and `report` (their JSON is
//! [`crate::json`]), and the Markdown rendering of a run (the HTML page is
//! [`crate::html`], drawn from the view alone).

use crate::view::{CheckResult, RunView, ShownState, TicketView};
use planwright_engine::agent::Usage;
use planwright_engine::EngineError;
use planwright_engine::Repo;
use planwright_engine::{AttemptAgent, AttemptPlace};
use planwright_engine::{AttemptRow, RunRow, RunStatus, TicketRow, TicketState};
use planwright_plan::words::{fence, inert, markdown_text};
use std::fmt::Write;
use std::path::Path;

/// Tokens and dollars summed over attempts. Each sum counts the attempts
/// that reported it, and is `None` (null in JSON) when none did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    /// Tokens, normalized (see [`Usage`]).
    pub usage: Option<Usage>,
    /// Cost in US dollars, reported and computed figures together.
    pub cost_usd: Option<f64>,
    /// Attempts that reported tokens but have no cost (a model without a
    /// price): the cost is then a floor, never the whole.
    pub unpriced: usize,
}

impl Totals {
    /// Adds one attempt's figures.
    pub fn add(&mut self, usage: Option<Usage>, cost_usd: Option<f64>) {
        if usage.is_some() && cost_usd.is_none() {
            self.unpriced += 1;
        }
        self.sum(usage, cost_usd);
    }

    /// Adds a ticket's totals.
    pub fn add_totals(&mut self, other: &Totals) {
        self.sum(other.usage, other.cost_usd);
        self.unpriced += other.unpriced;
    }

    fn sum(&mut self, usage: Option<Usage>, cost_usd: Option<f64>) {
        if let Some(u) = usage {
            *self.usage.get_or_insert_with(Usage::default) += u;
        }
        if let Some(c) = cost_usd {
            *self.cost_usd.get_or_insert(0.0) += c;
        }
    }
}

/// One attempt: its row in the state store (with what the agent reported),
/// and what the run's event log adds.
#[derive(Debug, Clone)]
pub struct AttemptReport {
    /// The attempt's row.
    pub attempt: AttemptRow,
    /// Milliseconds from its start to its end, from the event log; `None`
    /// while it runs, or when the log does not time it.
    pub duration_ms: Option<u64>,
    /// The counterfactuals of its candidate, with an excerpt of each test run.
    pub counterfactuals: Vec<CheckResult>,
    /// Who ran it (adapter, program, routed model), when the log says.
    pub ran_by: Option<AttemptAgent>,
    /// Where it ran (executor, worker, slot), when the log says.
    pub ran_at: Option<AttemptPlace>,
}

impl AttemptReport {
    /// The attempt's tokens, when its agent reported them.
    pub fn usage(&self) -> Option<Usage> {
        self.attempt.agent.as_ref().and_then(|a| a.usage)
    }

    /// The attempt's cost in US dollars, when known.
    pub fn cost_usd(&self) -> Option<f64> {
        self.attempt.agent.as_ref().and_then(|a| a.cost_usd)
    }
}

/// One ticket with its attempts.
#[derive(Debug, Clone)]
pub struct TicketReport {
    /// The ticket's row.
    pub ticket: TicketRow,
    /// The sums over its attempts.
    pub totals: Totals,
    /// Its attempts, oldest first.
    pub attempts: Vec<AttemptReport>,
    /// The full log of its attempts (`.planwright/runs/<run>/<ticket>/ticket.log`),
    /// relative to the repository, when there is one.
    pub log: Option<String>,
    /// For a blocked ticket: the failed ancestor that blocked it.
    pub blocked_by: Option<String>,
}

/// A run with its tickets, and the view they were read with.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The run.
    pub run: RunRow,
    /// The sums over every ticket.
    pub totals: Totals,
    /// Its tickets, in plan order.
    pub tickets: Vec<TicketReport>,
    /// The run's view, whose event log gives each attempt its duration
    /// and counterfactuals, each blocked ticket its blocker, and the run
    /// its counts and paused pools.
    pub view: RunView,
    /// The figures of a `planwright replay` run (its `replay.json`).
    pub replay: Option<planwright_engine::replay::figures::Figures>,
}

impl RunReport {
    /// How `t` shows: see [`ShownState`]; the run's status is the one its
    /// view found (interrupted when its process is gone).
    pub fn shown_state(&self, t: &TicketRow) -> ShownState {
        ShownState::of(self.run.status, t.state)
    }

    /// How many tickets of the plan are in `state`.
    pub fn count(&self, state: TicketState) -> usize {
        self.tickets
            .iter()
            .filter(|t| !t.ticket.removed && t.ticket.state == state)
            .count()
    }
}

/// The report of run `id` (the newest run when None); None when the
/// repository has no runs. Never creates the state store. A run recorded
/// as `running` whose process is gone (nobody holds the run lock) is
/// reported as `interrupted`, as its view found it (see
/// [`RunView::process_gone`]).
pub fn load_report(repo: &Repo, id: Option<&str>) -> Result<Option<RunReport>, EngineError> {
    let Some((store, mut run)) = crate::view::find_run(repo, id)? else {
        return Ok(None);
    };
    let (view, _) = crate::view::fold_all(repo, &store, &run)?;
    if run.status == RunStatus::Running && view.run.status == RunStatus::Interrupted {
        run.status = RunStatus::Interrupted;
    }
    let run_dir = Path::new(".planwright").join("runs").join(&run.id);
    let mut tickets = Vec::new();
    let mut totals = Totals::default();
    for t in store.tickets(&run.id)? {
        let seen = view.ticket(&t.id);
        let attempts: Vec<AttemptReport> = store
            .attempts(&run.id, &t.id)?
            .into_iter()
            .map(|a| from_events(a, seen))
            .collect();
        let mut ticket_totals = Totals::default();
        for a in &attempts {
            ticket_totals.add(a.usage(), a.cost_usd());
        }
        totals.add_totals(&ticket_totals);
        let log = run_dir.join(&t.id).join("ticket.log");
        tickets.push(TicketReport {
            log: repo
                .root()
                .join(&log)
                .is_file()
                .then(|| log.display().to_string()),
            blocked_by: seen.and_then(|v| v.blocked_by.clone()),
            ticket: t,
            totals: ticket_totals,
            attempts,
        });
    }
    let replay = planwright_engine::replay::figures::read(&repo.root().join(&run_dir));
    Ok(Some(RunReport {
        run,
        totals,
        tickets,
        view,
        replay,
    }))
}

/// An attempt's row with its duration and counterfactuals from the
/// ticket's view.
fn from_events(attempt: AttemptRow, ticket: Option<&TicketView>) -> AttemptReport {
    let seen = ticket.and_then(|t| t.attempts.iter().find(|a| a.n == attempt.n));
    let duration_ms = seen.and_then(|a| {
        let ms = a.ended_ms? - a.started_ms?;
        u64::try_from(ms).ok()
    });
    AttemptReport {
        attempt,
        duration_ms,
        counterfactuals: seen.map(|a| a.counterfactuals.clone()).unwrap_or_default(),
        ran_by: seen.and_then(|a| a.ran_by.clone()),
        ran_at: seen.and_then(|a| a.ran_at.clone()),
    }
}

/// Lines of evidence shown per failed ticket; the log has all of it.
pub const EVIDENCE_LINES: usize = 5;

/// The first `n` non-blank lines of a failure's evidence, and how many more there are.
pub(crate) fn evidence_head(evidence: &str, n: usize) -> (Vec<&str>, usize) {
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
        .find_map(|a| a.attempt.failure.as_ref().map(|f| f.evidence.as_str()))
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

/// Every stack the merge queue checked, in order: its tickets and how its
/// check ended.
fn queue_table(s: &mut String, batches: &[crate::BatchView]) {
    if batches.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n## Merge queue\n\n| stack | tickets | check |\n|---|---|---|"
    );
    for (i, b) in batches.iter().enumerate() {
        let mut check = b.state.clone();
        if b.flaky {
            check.push_str(" (flaky: failed, then passed)");
        }
        if let Some(c) = &b.culprit {
            check.push_str(&format!(" ({c} breaks it; rebuilt)"));
        }
        let _ = writeln!(s, "| {} | {} | {check} |", i + 1, b.tickets.join(", "));
    }
}

/// The run as Markdown.
pub fn markdown(r: &RunReport) -> String {
    let mut s = String::new();
    let removed = r.tickets.iter().filter(|t| t.ticket.removed).count();
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
    if let Some(note) = r.view.graph_note() {
        let _ = writeln!(s, "- note: {note}");
    }
    if let Some(line) = r.view.queue_line() {
        let _ = writeln!(s, "- {}", markdown_text(&line));
    }
    let _ = writeln!(
        s,
        "- tickets: {} merged, {} changed since merged, {} failed, {} blocked, {} other{}",
        r.count(TicketState::Merged),
        r.count(TicketState::Changed),
        r.count(TicketState::Failed),
        r.count(TicketState::Blocked),
        r.tickets.len()
            - removed
            - r.count(TicketState::Merged)
            - r.count(TicketState::Changed)
            - r.count(TicketState::Failed)
            - r.count(TicketState::Blocked),
        match removed {
            0 => String::new(),
            n => format!("; {n} removed from the plan (kept with their attempts)"),
        }
    );
    let _ = writeln!(s, "- {}\n", totals_text(&r.totals));
    tickets_table(&mut s, r);
    queue_table(&mut s, &r.view.batches);
    if let Some(f) = &r.replay {
        let _ = writeln!(s, "\n## Replay\n");
        for line in planwright_engine::replay::figures::lines(f) {
            let _ = writeln!(s, "- {}", markdown_text(&line));
        }
    }
    let failed: Vec<&TicketReport> = r.tickets.iter().filter(|t| !why(t, 0).is_empty()).collect();
    if !failed.is_empty() {
        let _ = writeln!(s, "\n## Why tickets did not merge");
    }
    for t in failed {
        let _ = writeln!(s, "\n### {}\n", t.ticket.id);
        let mut lines = why(t, EVIDENCE_LINES).into_iter();
        if let Some(first) = lines.next() {
            let _ = writeln!(s, "{}", markdown_text(&first));
        }
        let rest: Vec<String> = lines.collect();
        let (evidence, log): (Vec<&String>, Vec<&String>) =
            rest.iter().partition(|l| l.starts_with("  "));
        if !evidence.is_empty() {
            let text: Vec<String> = evidence
                .iter()
                .map(|l| inert(&l[2..]).into_owned())
                .collect();
            let fence = fence(&text.join("\n"));
            let _ = writeln!(s, "\n{fence}\n{}\n{fence}", text.join("\n"));
        }
        for l in log {
            let _ = writeln!(s, "\n{}", l.replacen("full log: ", "full log: `", 1) + "`");
        }
    }
    for t in r.tickets.iter().filter(|t| !t.attempts.is_empty()) {
        let _ = writeln!(s, "\n## {}\n\n{}\n", t.ticket.id, totals_text(&t.totals));
        for a in &t.attempts {
            attempt_markdown(&mut s, a);
        }
    }
    s
}

/// The report's table of tickets, one row each, those the plan no longer
/// has marked.
fn tickets_table(s: &mut String, r: &RunReport) {
    let _ = writeln!(
        s,
        "| ticket | title | state | attempts | tokens | cost | commit | failure |\n|---|---|---|---|---|---|---|---|"
    );
    for report in &r.tickets {
        let t = &report.ticket;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            markdown_text(&t.id).replace('|', "\\|"),
            markdown_text(&t.title).replace('|', "\\|"),
            match t.removed {
                false => r.shown_state(t).as_str().to_string(),
                true => format!("{} (removed from the plan)", r.shown_state(t).as_str()),
            },
            t.attempt_count,
            report
                .totals
                .usage
                .map_or("-".into(), |u| u.total().to_string()),
            report.totals.cost_usd.map_or("-".into(), cost_text),
            short(&t.merge_commit),
            markdown_text(&failure_text(report))
                .replace('|', "\\|")
                .replace('\n', " ")
        );
    }
}

/// One attempt's line, then its counterfactuals with their test output.
fn attempt_markdown(s: &mut String, a: &AttemptReport) {
    let row = &a.attempt;
    let what = row
        .failure
        .as_ref()
        .map_or(row.phase.clone(), |f| format!("{}: {}", f.kind, f.message));
    let what = markdown_text(&what);
    let _ = writeln!(
        s,
        "- attempt {} from {}: {what}",
        row.n,
        short(&Some(row.base_commit.clone()))
    );
    let _ = writeln!(s, "  - {}", markdown_text(&spend_text(a)));
    for c in &a.counterfactuals {
        let verdict = match c.passed {
            Some(true) => "caught",
            Some(false) => "not caught",
            None => "no verdict",
        };
        let _ = writeln!(
            s,
            "  - counterfactual `{}`: {verdict}: {}",
            c.name,
            markdown_text(&c.detail)
        );
        if let Some(out) = c.output_excerpt.as_deref().filter(|o| !o.is_empty()) {
            let out = inert(out);
            let fence = fence(&out);
            let _ = writeln!(s, "\n    {fence}\n{}    {fence}\n", indent(&out, "    "));
        }
    }
}

/// `model m · agent finished · 1234 tokens (...) · $0.0123 (reported) · 4.2s`:
/// what an attempt used, `-` for what is not known.
pub(crate) fn spend_text(a: &AttemptReport) -> String {
    let agent = a.attempt.agent.as_ref();
    let model = agent.and_then(|g| g.model.as_deref()).unwrap_or("-");
    let outcome = agent.map_or("-", |g| g.agent_outcome.as_str());
    let tokens = a
        .usage()
        .map_or("tokens not reported".into(), |u| usage_text(&u));
    let cost = match agent.and_then(|g| g.cost_usd.map(|c| (c, g.cost_source))) {
        Some((c, Some(src))) => format!("{} ({})", cost_text(c), src.as_str()),
        Some((c, None)) => cost_text(c),
        None => "cost not reported".into(),
    };
    let took = a
        .duration_ms
        .map_or("-".into(), |ms| crate::html::duration_text(ms as i64));
    let ran_by = a.ran_by.as_ref().map_or(String::new(), ran_by_text);
    let ran_at = (a.ran_at.as_ref()).map_or(String::new(), |p| format!("on {} · ", p.text()));
    format!("{ran_at}{ran_by}model {model} · agent {outcome} · {tokens} · {cost} · took {took}")
}

/// `adapter claude (program claude) routed to claude-sonnet-4-6 · `.
fn ran_by_text(by: &AttemptAgent) -> String {
    let program = by
        .program
        .as_ref()
        .map_or(String::new(), |p| format!(" (program {p})"));
    let routed = by.model.as_deref().unwrap_or("the CLI's default model");
    format!("adapter {}{program} routed to {routed} · ", by.adapter)
}

/// `1234 tokens (1000 in, 200 out, 34 cache read, 0 cache write)`.
pub(crate) fn usage_text(u: &Usage) -> String {
    format!(
        "{} ({} in, {} out, {} cache read, {} cache write)",
        planwright_plan::words::count(u.total() as usize, "token"),
        u.input_tokens,
        u.output_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens
    )
}

/// Dollars, to a hundredth of a cent (an attempt may cost less than one cent).
pub fn cost_text(usd: f64) -> String {
    format!("${usd:.4}")
}

/// `total: 1234 tokens (...), $0.0123`, saying when nothing was reported.
pub fn totals_text(t: &Totals) -> String {
    let tokens = t
        .usage
        .map_or("tokens not reported".into(), |u| usage_text(&u));
    let unpriced = planwright_plan::words::count(t.unpriced, "attempt");
    let cost = match (t.cost_usd, t.unpriced) {
        (None, 0) => "cost not reported".into(),
        (Some(c), 0) => cost_text(c),
        // Never a total that looks complete: what is known is a floor.
        (Some(c), _) => format!("at least {} ({unpriced} unpriced)", cost_text(c)),
        (None, _) => format!("cost unknown ({unpriced} unpriced)"),
    };
    format!("total: {tokens}, {cost}")
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}\n")).collect()
}
