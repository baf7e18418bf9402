//! `planwright show PLAN`: tickets, waves, critical path, ready set and
//! scope overlaps (see `docs/analysis.md`).

use super::{load_plan, Loaded, PlanArgs};
use crate::error::{exit, CliResult};
use crate::render::count;
use crate::{Global, Output};
use planwright_plan::analysis::{self, Analysis};
use planwright_plan::graph::TicketGraph;
use planwright_plan::Plan;
use std::fmt::Write;

/// Show the plan's tickets, waves, critical path, ready set and the
/// tickets that may run at the same time and change the same files.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub plan: PlanArgs,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let Loaded { plan, report, .. } = load_plan(&args.plan, None, None, global)?;
    let analysis = analysis::analyse(&plan, &TicketGraph::new(&plan));
    match global.output {
        Output::Json => crate::outln!(
            "{}",
            serde_json::to_string_pretty(&analysis).expect("the analysis serializes")
        ),
        Output::Human | Output::Sarif | Output::JsonLines => {
            crate::out!("{}", human(&report.file, &plan, &analysis))
        }
    }
    Ok(exit::OK)
}

fn human(file: &str, plan: &Plan, a: &Analysis) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{file}: {} plan, {}",
        plan.source_format,
        count(a.ticket_count, "ticket")
    );
    out.push_str("\nTickets\n");
    let width = plan
        .tickets
        .iter()
        .map(|t| t.id.chars().count())
        .max()
        .unwrap_or(0)
        // Longer ids go unaligned: a width past u16::MAX panics in `format!`.
        .min(MAX_ID_COLUMN);
    for t in &plan.tickets {
        let mut line = format!("  {:width$}", t.id);
        if !t.title.is_empty() {
            let _ = write!(line, "  {}", one_line(&t.title));
        }
        if !t.depends_on.is_empty() {
            let _ = write!(line, " (after {})", t.depends_on.join(", "));
        }
        if let Some(m) = t.estimate_minutes {
            let _ = write!(line, " [{}]", count(m as usize, "minute"));
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out.push_str("\nWaves\n");
    for (i, wave) in a.waves.iter().enumerate() {
        let _ = writeln!(out, "  {:>3}  {}", i + 1, wave.join(", "));
    }
    // Without estimates each ticket counts 1: the path's length is then a
    // count of tickets, not minutes anyone estimated.
    let length = match plan.tickets.iter().any(|t| t.estimate_minutes.is_some()) {
        true => count(a.critical_path_minutes as usize, "minute"),
        false => format!("{}, no estimates", count(a.critical_path.len(), "ticket")),
    };
    let _ = writeln!(
        out,
        "\nCritical path ({length})\n  {}",
        a.critical_path.join(" -> ")
    );
    let _ = writeln!(out, "\nReady now\n  {}", a.ready().join(", "));
    out.push_str("\nScope overlaps\n");
    if a.overlaps.is_empty() {
        out.push_str("  none\n");
    }
    for o in &a.overlaps {
        let _ = writeln!(
            out,
            "  {}",
            planwright_plan::words::overlap_message(&o.tickets, &o.patterns)
        );
    }
    out
}

/// The widest id column; an agb id has no length limit.
pub(crate) const MAX_ID_COLUMN: usize = 40;

/// A title on one line: line breaks and other control characters as spaces.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
