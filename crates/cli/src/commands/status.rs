//! `planwright status --repo DIR`: where the newest run stands.

use super::observe::RunArgs;
use super::run::engine_error;
use crate::error::{exit, CliError, CliResult};
use crate::{Global, Output};
use planwright_engine::{RunStatus, TicketState};
use planwright_plan::words::inert;
use planwright_view::{self as view, RunReport, StatusDocument};

/// Show where a run stands: each ticket's state, attempts, last failure and
/// merged commit. A run whose process is gone shows as `interrupted`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub run: RunArgs,
}

/// Loads the report of the chosen run, or explains that there is none.
pub(crate) fn load(repo: &std::path::Path, run: Option<&str>) -> Result<RunReport, CliError> {
    let repo = super::observe::open_repo(repo)?;
    view::load_report(&repo, run)
        .map_err(engine_error)?
        .ok_or_else(|| super::observe::no_run(&repo, run))
}

/// The rows of the tickets the run's plan has, without those it keeps as
/// removed: what a delivery and its pull requests are of, as before the
/// run kept them.
pub(crate) fn plan_rows(report: &RunReport) -> Vec<planwright_engine::TicketRow> {
    (report.tickets.iter())
        .filter(|t| !t.ticket.removed)
        .map(|t| t.ticket.clone())
        .collect()
}

/// Runs the command.
///
/// The counts and paused pools come from the run's view (its event log),
/// like `watch`, `serve` and the HTML report; the rows and the failures
/// from the state store's rows with every attempt.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let r = load(&args.run.repo, args.run.id.as_deref())?;
    if global.output == Output::Json {
        let json = StatusDocument::new(&r);
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&json).expect("reports serialize")
        );
        return Ok(exit::OK);
    }
    crate::outln!(
        "run {} ({}), plan `{}`, base `{}`",
        r.run.id,
        r.run.status.as_str(),
        r.run.plan_path,
        r.run.base
    );
    crate::outln!("{}", r.view.counts().line(r.run.status));
    crate::outln!("{}", view::totals_text(&r.totals));
    for (pool, p) in &r.view.paused {
        let until = p
            .until
            .as_deref()
            .map_or("when its probe answers".into(), |u| format!("at {u}"));
        crate::outln!("pool `{pool}` paused ({}); resumes {until}", p.reason);
    }
    if let Some(line) = r.view.queue_line() {
        crate::outln!("{}", planwright_plan::words::inert(&line));
    }
    rows(&r, global.color());
    places(&r);
    why(&r, global);
    let changed: Vec<&str> = r
        .tickets
        .iter()
        .filter(|t| t.ticket.state == TicketState::Changed)
        .map(|t| t.ticket.id.as_str())
        .collect();
    if !changed.is_empty() {
        crate::outln!(
            "\nchanged: {} merged from an older definition; `planwright run --rerun ID` (or `--rerun-changed`) runs them again",
            changed.join(", ")
        );
    }
    Ok(exit::OK)
}

/// One row per ticket: state, attempts, tokens and cost over its attempts,
/// merged commit, failure; with `color`, each state in its colour. The
/// tickets the plan no longer has follow under a heading of their own,
/// with the state they had.
fn rows(r: &RunReport, color: bool) {
    let width = r
        .tickets
        .iter()
        .map(|t| t.ticket.id.len())
        .max()
        .unwrap_or(2)
        .clamp(6, super::show::MAX_ID_COLUMN);
    let state_width = if r.run.status == RunStatus::Interrupted {
        "interrupted".len()
    } else {
        8
    };
    crate::outln!(
        "{:width$}  {:state_width$}  {:8}  {:>9}  {:>9}  {:10}  failure",
        "ticket",
        "state",
        "attempts",
        "tokens",
        "cost",
        "commit"
    );
    let (plan, removed): (Vec<_>, Vec<_>) = r.tickets.iter().partition(|t| !t.ticket.removed);
    let heading = (!removed.is_empty()).then_some(plan.len());
    for (i, report) in plan.into_iter().chain(removed).enumerate() {
        if heading == Some(i) {
            crate::outln!("removed from the plan (kept with their attempts; `run` runs them again once the plan has them):");
        }
        let t = &report.ticket;
        let commit = t
            .merge_commit
            .as_deref()
            .map_or("", |c| &c[..c.len().min(10)]);
        let failure = view::failure_text(report);
        let failure = inert(&failure);
        let tokens = report
            .totals
            .usage
            .map_or("-".into(), |u| u.total().to_string());
        let cost = report.totals.cost_usd.map_or("-".into(), view::cost_text);
        let state = r.shown_state(t).as_str();
        // Padded first: the colour's escapes take no column.
        let state = crate::render::paint(&format!("{state:state_width$}"), state, color);
        crate::outln!(
            "{:width$}  {state}  {:8}  {tokens:>9}  {cost:>9}  {:10}  {failure}",
            t.id,
            t.attempt_count,
            commit
        );
    }
}

/// Where each ticket's last attempt ran, when it ran on a worker.
fn places(r: &RunReport) {
    let lines: Vec<String> = (r.tickets.iter())
        .filter_map(|t| {
            let a = t.attempts.last()?;
            let place = a.ran_at.as_ref().filter(|p| p.worker.is_some())?;
            let (id, n) = (&t.ticket.id, a.attempt.n);
            Some(format!("{id}: attempt {n} on {}", place.text()))
        })
        .collect();
    if !lines.is_empty() {
        crate::outln!("\nwhere the last attempts ran:");
        for line in lines {
            crate::outln!("  {}", inert(&line));
        }
    }
}

/// Why each ticket that did not merge failed, without opening its log.
fn why(r: &RunReport, global: &Global) {
    if global.quiet {
        return;
    }
    let lines = if global.verbose {
        usize::MAX
    } else {
        view::EVIDENCE_LINES
    };
    for t in &r.tickets {
        let why = view::why(t, lines);
        if why.is_empty() {
            continue;
        }
        crate::outln!("\n{}:", t.ticket.id);
        for line in why {
            crate::outln!("  {}", inert(&line));
        }
    }
}
