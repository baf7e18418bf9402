//! A replay's figures, read back from its run's record (`events.jsonl`
//! and the tickets' logs) and the scratch repository: what
//! `planwright replay` prints and writes to the run's `replay.json`.

use super::{PreparedReplay, ReplayCommit};
use crate::agent::replay::NO_LONGER_APPLIES;
use crate::error::EngineError;
use crate::events::Event;
use crate::git::history;
use crate::git::repo::Repo;
use crate::model::failure::FailureKind;
use planwright_plan::words::count;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The file in the run's folder the figures are written to.
pub const FIGURES_FILE: &str = "replay.json";

/// What a replay measured. Times are seconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Figures {
    /// `--deps`.
    pub deps: String,
    /// `--jobs`.
    pub jobs: usize,
    /// Tickets (commits replayed).
    pub tickets: usize,
    /// Tickets merged.
    pub merged: usize,
    /// Tickets failed (out of strikes) or blocked by one.
    pub not_merged: usize,
    /// From the run's start to its last merge.
    pub makespan_s: f64,
    /// Each ticket's last attempt, start to verified, added up: what the
    /// tickets took one after another.
    pub serial_sum_s: f64,
    /// The longest chain of those times through the dependencies, or the
    /// serial sum over the slots, whichever is longer.
    pub dag_bound_s: f64,
    /// `makespan_s / serial_sum_s`.
    pub ratio_to_serial: f64,
    /// `makespan_s / dag_bound_s`.
    pub ratio_to_bound: f64,
    /// Merged tickets per hour of makespan.
    pub merged_per_hour: f64,
    /// Tickets merged from their first attempt, without a rebuild, over
    /// all tickets.
    pub first_attempt_merge_rate: f64,
    /// Attempts whose commit no longer applied on their base, and
    /// candidates that no longer merged onto the target.
    pub textual_conflicts: u32,
    /// Candidates whose change applied and whose gates failed: in their
    /// own slot (the change needs a commit not yet on its base), on the
    /// merged tree, or stacked with what landed ahead of them. On a
    /// history whose every commit passed its gates, each is a semantic
    /// conflict.
    pub semantic_conflicts: u32,
    /// Tickets sent back for a new attempt by the merge queue.
    pub rebuilds: u32,
    /// Every run of a gate command: in slots, on merged trees and stacks.
    pub gate_runs: u32,
    /// `gate_runs / merged`.
    pub gate_runs_per_merged: f64,
    /// Tokens every attempt reported.
    pub tokens: u64,
    /// `tokens / merged`.
    pub tokens_per_merged: f64,
    /// What those tokens cost, in US dollars.
    pub cost_usd: f64,
    /// `cost_usd / merged`.
    pub cost_usd_per_merged: f64,
    /// How the replay's final tree compares with the range's last commit.
    pub final_tree: FinalTree,
}

/// The replay's final tree against the range's last commit.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FinalTree {
    /// The range's last commit.
    pub last_commit: String,
    /// Whether the trees are the same.
    pub equal: bool,
    /// The paths that differ (`M path`: changed; `A path`: only the
    /// replay has it; `D path`: only the last commit has it), at most 50.
    pub differs: Vec<String>,
    /// How many paths differ.
    pub differing_paths: usize,
}

/// One event of the log with its time.
struct Timed {
    at_ms: u64,
    event: Event,
}

fn read_events(run_dir: &Path) -> Result<Vec<Timed>, EngineError> {
    let path = run_dir.join("events.jsonl");
    let text = std::fs::read_to_string(&path).map_err(|e| EngineError::io(&path, e))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            let at_ms = v.get("at_ms")?.as_u64()?;
            let event = serde_json::from_value(v).ok()?;
            Some(Timed { at_ms, event })
        })
        .collect())
}

/// Gate command runs in the run's logs: each `$ COMMAND   (in DIR)` line
/// of each ticket's log (stacks' checks are added to their tickets' logs).
fn gate_runs(run_dir: &Path) -> u32 {
    let Ok(entries) = std::fs::read_dir(run_dir) else {
        return 0;
    };
    let mut n = 0;
    for e in entries.flatten() {
        let log = e.path().join("ticket.log");
        if let Ok(text) = std::fs::read_to_string(&log) {
            n += text
                .lines()
                .filter(|l| l.starts_with("$ ") && l.contains("   (in "))
                .count() as u32;
        }
    }
    n
}

/// Per ticket, its last attempt's time from start to verified (or
/// rejected), in milliseconds.
fn attempt_times(events: &[Timed]) -> HashMap<String, u64> {
    let mut started: HashMap<String, u64> = HashMap::new();
    let mut took = HashMap::new();
    for t in events {
        match &t.event {
            Event::AttemptStarted { ticket, .. } => {
                started.insert(ticket.clone(), t.at_ms);
            }
            Event::Merging { ticket } | Event::AttemptRejected { ticket, .. } => {
                if let Some(s) = started.get(ticket) {
                    took.insert(ticket.clone(), t.at_ms.saturating_sub(*s));
                }
            }
            _ => {}
        }
    }
    took
}

/// The longest chain of `took` through the commits' dependencies.
fn critical_path(commits: &[ReplayCommit], took: &HashMap<String, u64>) -> u64 {
    let mut finish: HashMap<&str, u64> = HashMap::new();
    for c in commits {
        let ready = (c.depends_on.iter())
            .filter_map(|d| finish.get(d.as_str()))
            .max()
            .copied()
            .unwrap_or(0);
        finish.insert(&c.ticket, ready + took.get(&c.ticket).copied().unwrap_or(0));
    }
    finish.values().copied().max().unwrap_or(0)
}

/// The figures of the replay `made`, whose run (in `run_dir`) ended with
/// the target branch at `tip`, run with `jobs` slots and `deps`.
pub fn figures(
    made: &PreparedReplay,
    run_dir: &Path,
    tip: &str,
    jobs: usize,
    deps: super::Deps,
) -> Result<Figures, EngineError> {
    let events = read_events(run_dir)?;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let start = events.first().map_or(0, |t| t.at_ms);
    let mut last_merge = start;
    let (mut merged, mut retried) = (HashSet::new(), HashSet::new());
    let (mut textual, mut semantic, mut rebuilds) = (0, 0, 0);
    let (mut tokens, mut cost) = (0u64, 0.0f64);
    for t in &events {
        match &t.event {
            Event::Merged { ticket, .. } => {
                merged.insert(ticket.clone());
                last_merge = t.at_ms;
            }
            // Every rejection is one event, whichever step found it: the
            // agent's apply, the gates in its slot, on a merged tree or
            // in a stack, or the merge itself.
            Event::AttemptRejected {
                ticket, failure, ..
            } => {
                retried.insert(ticket.clone());
                let no_longer_applies = failure.message.contains(NO_LONGER_APPLIES);
                match failure.kind {
                    FailureKind::MergeConflict => textual += 1,
                    FailureKind::AgentFailed if no_longer_applies => textual += 1,
                    FailureKind::GateFailure => semantic += 1,
                    _ => {}
                }
            }
            Event::Rebuild { ticket, .. } => {
                retried.insert(ticket.clone());
                rebuilds += 1;
            }
            Event::AgentReported {
                usage, cost_usd, ..
            } => {
                tokens += usage.as_ref().map_or(0, |u| u.total());
                cost += cost_usd.unwrap_or(0.0);
            }
            _ => {}
        }
    }
    let took = attempt_times(&events);
    let serial_ms: u64 = took.values().sum();
    let bound_ms = critical_path(&made.commits, &took).max(serial_ms / jobs.max(1) as u64);
    let makespan = (last_merge - start) as f64 / 1000.0;
    let (serial, bound) = (serial_ms as f64 / 1000.0, bound_ms as f64 / 1000.0);
    let n_merged = merged.len();
    let first = merged.iter().filter(|t| !retried.contains(*t)).count();
    let gate_runs = gate_runs(run_dir);
    let per = |x: f64| ratio(x, n_merged as f64);
    Ok(Figures {
        deps: deps.as_str().to_string(),
        jobs,
        tickets: made.commits.len(),
        merged: n_merged,
        not_merged: made.commits.len() - n_merged,
        makespan_s: makespan,
        serial_sum_s: serial,
        dag_bound_s: bound,
        ratio_to_serial: ratio(makespan, serial),
        ratio_to_bound: ratio(makespan, bound),
        merged_per_hour: ratio(n_merged as f64 * 3600.0, makespan),
        first_attempt_merge_rate: ratio(first as f64, made.commits.len() as f64),
        textual_conflicts: textual,
        semantic_conflicts: semantic,
        rebuilds,
        gate_runs,
        gate_runs_per_merged: per(f64::from(gate_runs)),
        tokens,
        tokens_per_merged: per(tokens as f64),
        cost_usd: cost,
        cost_usd_per_merged: per(cost),
        final_tree: final_tree(&made.repo, tip, &made.last)?,
    })
}

fn final_tree(repo: &Path, tip: &str, last: &str) -> Result<FinalTree, EngineError> {
    let repo = Repo::open(repo)?;
    let differs = history::tree_difference(&repo, last, tip)?;
    Ok(FinalTree {
        last_commit: last.to_string(),
        equal: differs.is_empty(),
        differing_paths: differs.len(),
        differs: differs.into_iter().take(50).collect(),
    })
}

/// The figures written in the run's folder `run_dir`, if it is a
/// replay's (and they can be read).
pub fn read(run_dir: &Path) -> Option<Figures> {
    let text = std::fs::read(run_dir.join(FIGURES_FILE)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// The figures as people read them, one line each.
pub fn lines(f: &Figures) -> Vec<String> {
    let tree = &f.final_tree;
    let short = |id: &str| id[..id.len().min(10)].to_string();
    let final_tree = if tree.equal {
        format!(
            "equals the range's last commit {}",
            short(&tree.last_commit)
        )
    } else {
        let some: Vec<&str> = tree.differs.iter().take(5).map(String::as_str).collect();
        format!(
            "differs from the range's last commit {} in {}: {}",
            short(&tree.last_commit),
            count(tree.differing_paths, "path"),
            some.join(", ")
        )
    };
    vec![
        format!(
            "replayed {}, --deps {}, --jobs {}: {} merged, {} not merged",
            count(f.tickets, "commit"),
            f.deps,
            f.jobs,
            f.merged,
            f.not_merged
        ),
        format!("makespan: {:.1} s", f.makespan_s),
        format!(
            "serial sum: {:.1} s (makespan {:.2}x)",
            f.serial_sum_s, f.ratio_to_serial
        ),
        format!(
            "DAG bound: {:.1} s (makespan {:.2}x)",
            f.dag_bound_s, f.ratio_to_bound
        ),
        format!("merged per hour: {:.0}", f.merged_per_hour),
        format!(
            "merged at the first attempt: {:.0}%",
            f.first_attempt_merge_rate * 100.0
        ),
        format!(
            "conflicts: {} textual, {} semantic; {} rebuilds",
            f.textual_conflicts, f.semantic_conflicts, f.rebuilds
        ),
        format!(
            "gate runs: {} ({:.2} per merged ticket)",
            f.gate_runs, f.gate_runs_per_merged
        ),
        format!(
            "tokens: {} ({:.0} per merged ticket), ${:.4} (${:.4} per merged ticket)",
            f.tokens, f.tokens_per_merged, f.cost_usd, f.cost_usd_per_merged
        ),
        format!("final tree: {final_tree}"),
    ]
}

/// Writes `figures` to the run's folder as [`FIGURES_FILE`].
pub fn write(run_dir: &Path, figures: &Figures) -> Result<(), EngineError> {
    let path = run_dir.join(FIGURES_FILE);
    let text = serde_json::to_vec_pretty(figures).expect("figures serialize");
    std::fs::write(&path, text).map_err(|e| EngineError::io(&path, e))
}
