//! Gates: argv commands (never a shell) that must exit 0, run with a
//! timeout that ends their whole process group and a scrubbed environment.
//! Their whole output is appended to the ticket's log; a failure carries the tail.

use crate::error::EngineError;
use crate::model::failure::{Failure, FailureKind};
use planwright_os::process::{self, Cancel, Exit, Spec};
use planwright_plan::model::{Gate, Ticket};
use planwright_plan::Plan;
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// How gates run: resolved by planwright-config.
pub(crate) use planwright_config::GateSettings;

/// Where and how gates run: their whole environment and confinement.
#[derive(Debug, Clone, Default)]
pub struct GateRoom {
    /// The complete environment of each gate.
    pub env: Vec<(String, String)>,
    /// The sandbox and namespaces each gate runs in.
    pub confine: Option<planwright_os::sandbox::Confine>,
}

impl GateRoom {
    /// `argv` run in `dir` in this room, its whole output appended to
    /// `log`: how gates and the tests of a counterfactual run.
    pub fn spec(&self, argv: &[String], dir: &Path, timeout: Option<Duration>, log: &Path) -> Spec {
        Spec {
            argv: argv.to_vec(),
            cwd: dir.to_path_buf(),
            env: self.env.clone(),
            stdin: None,
            timeout,
            grace: Duration::from_secs(5),
            log: Some(log.to_path_buf()),
            lines: None,
            confine: self.confine.clone(),
            log_limit: None,
        }
    }
}

pub(crate) use crate::model::Verdict;

const TAIL_LINES: usize = 40;

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

/// The gates of one ticket: the plan's, the ticket's, then the configured
/// ones (`[gates] run`, `--gate`), without repeats.
pub fn ticket_gates(plan: &Plan, ticket: &Ticket, extra: &[Gate]) -> Vec<Gate> {
    let mut seen = HashSet::new();
    plan.gates
        .iter()
        .chain(&ticket.gates)
        .chain(extra)
        .filter(|g| seen.insert(g.argv.clone()))
        .cloned()
        .collect()
}

/// Runs `gates` in order in `dir` (a checkout planwright prepared, see
/// [`crate::verify::checkout`]), appending their output to `log`.
pub(crate) fn run_gates(
    gates: &[Gate],
    dir: &Path,
    settings: &GateSettings,
    log: &Path,
    room: &GateRoom,
    cancel: &Cancel,
) -> Result<Verdict, EngineError> {
    for gate in gates {
        let command = gate.command_line();
        append(log, &format!("$ {command}   (in {})\n", dir.display()))?;
        let spec = room.spec(&gate.argv, dir, settings.timeout, log);
        let done = match process::run(&spec, cancel) {
            Ok(done) => done,
            Err(e) => {
                append(log, &format!("{e}\n"))?;
                // The machine's, not the candidate's: it stops the run.
                let e = crate::error::sandbox_stops(e)?;
                return Ok(Verdict::Fail(Failure::new(
                    FailureKind::GateFailure,
                    format!("gate `{command}`: {e}"),
                )));
            }
        };
        append(log, &format!("\n-> {}\n", done.exit))?;
        if let Some(hit) = done.limit.filter(|_| done.exit != Exit::Cancelled) {
            let f = crate::contain::limit_failure(&format!("the gate `{command}`"), hit);
            return Ok(Verdict::Fail(f.with_evidence(tail(&done.output_tail))));
        }
        match done.exit {
            Exit::Code(0) => {}
            Exit::Cancelled => return Ok(Verdict::Cancelled),
            Exit::TimedOut => {
                return Ok(Verdict::Fail(
                    Failure::new(
                        FailureKind::Timeout,
                        format!(
                            "gate `{command}` ran out of time after {}s",
                            settings.timeout.map_or(0, |t| t.as_secs())
                        ),
                    )
                    .with_evidence(tail(&done.output_tail)),
                ))
            }
            other => {
                return Ok(Verdict::Fail(
                    Failure::new(
                        FailureKind::GateFailure,
                        format!("gate `{command}` failed: {other}"),
                    )
                    .with_evidence(tail(&done.output_tail)),
                ));
            }
        }
    }
    Ok(Verdict::Pass)
}

/// The gate of `gates` whose failure `f` is (a `gate_failure` names its
/// gate's command line first, as [`run_gates`] writes it).
pub(crate) fn failed_gate<'g>(gates: &'g [Gate], f: &Failure) -> Option<&'g Gate> {
    if f.kind != FailureKind::GateFailure {
        return None;
    }
    (gates.iter()).find(|g| {
        f.message
            .starts_with(&format!("gate `{}`", g.command_line()))
    })
}

pub(crate) use crate::log::append;
