//! The `replay:DIR` agent: does a ticket by applying the change a commit
//! of real history made, no model. `planwright replay` writes `DIR`; its
//! `replay.json` names, per ticket, the commit, its patch file (beside
//! it), the time the agent takes and the tokens it reports.
//!
//! The patch is applied with a three-way merge (`git apply --3way`) onto
//! whatever the workspace holds: where the base has moved so that the
//! change no longer applies, the attempt fails with the conflict, as the
//! replay cannot resolve one; it never writes the commit's files whole.

use super::{Agent, AgentOutcome, AgentReport, AttemptContext};
use crate::error::EngineError;
use crate::git::apply::{apply_three_way, Applied};
use crate::model::report::{CostSource, Usage};
use planwright_config::Prices;
use planwright_os::process::Cancel;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The words of a replay attempt's failure when its commit's change no
/// longer applies: the replay's figures count the attempts they end.
pub const NO_LONGER_APPLIES: &str = "its change no longer applies on this base";

/// The file in the replay agent's folder that describes its work.
pub const WORK_FILE: &str = "replay.json";

/// What the replay agent does for each ticket (`DIR/replay.json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReplayWork {
    /// The model the tokens are priced as.
    pub model: String,
    /// Per ticket id.
    pub tickets: BTreeMap<String, ReplayTicket>,
}

/// One ticket's recorded change.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReplayTicket {
    /// The commit whose change it applies.
    pub commit: String,
    /// Its patch, a file name in the folder.
    pub patch: String,
    /// Lines added plus removed.
    pub lines: u64,
    /// How long the agent works before applying it, in milliseconds.
    pub agent_ms: u64,
    /// The tokens it reports (modelled: lines times `--tokens-per-line`).
    pub tokens: u64,
}

/// The replay agent.
pub(crate) struct Replay {
    dir: PathBuf,
    work: Result<ReplayWork, String>,
    model: Option<String>,
    prices: Prices,
}

impl Replay {
    /// The agent of the folder `dir`, its tokens priced with `prices`
    /// as `model` when given, else as the folder's model.
    pub(crate) fn new(dir: PathBuf, model: Option<String>, prices: Prices) -> Replay {
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        let file = dir.join(WORK_FILE);
        let work = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read `{}`: {e}", file.display()))
            .and_then(|t| {
                serde_json::from_str(&t)
                    .map_err(|e| format!("`{}` is not valid: {e}", file.display()))
            });
        Replay {
            dir,
            work,
            model,
            prices,
        }
    }

    fn report(&self, work: &ReplayWork, t: &ReplayTicket, outcome: AgentOutcome) -> AgentReport {
        let model = self.model.clone().unwrap_or_else(|| work.model.clone());
        // Modelled tokens are what the agent wrote: output tokens.
        let usage = Usage {
            output_tokens: t.tokens,
            ..Usage::default()
        };
        let cost =
            (self.prices.find(&model)).map(|p| (p.cost(0, t.tokens, 0, 0), CostSource::Computed));
        AgentReport {
            model: Some(model),
            usage: Some(usage),
            cost,
            ..AgentReport::outcome(outcome)
        }
    }
}

/// Waits `d` unless `cancel` is set first: whether it was.
fn wait(d: Duration, cancel: &Cancel) -> bool {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let _listening = cancel.listen(move || {
        let _ = tx.send(());
    });
    rx.recv_timeout(d).is_ok()
}

impl Agent for Replay {
    fn name(&self) -> &str {
        "replay"
    }

    fn unusable(&self) -> Option<String> {
        self.work.as_ref().err().cloned()
    }

    fn attempt(&self, ctx: &AttemptContext, cancel: &Cancel) -> Result<AgentReport, EngineError> {
        let work = self
            .work
            .as_ref()
            .map_err(|e| EngineError::Settings(e.clone()))?;
        let Some(t) = work.tickets.get(&ctx.ticket) else {
            return Ok(AgentOutcome::Failed(format!(
                "`{}` names no commit for ticket {}",
                self.dir.join(WORK_FILE).display(),
                ctx.ticket
            ))
            .into());
        };
        if wait(Duration::from_millis(t.agent_ms), cancel) {
            return Ok(AgentOutcome::Cancelled.into());
        }
        let patch = self.dir.join(&t.patch);
        let short = &t.commit[..t.commit.len().min(10)];
        let (outcome, log) = match apply_three_way(&ctx.workspace, &patch)? {
            Applied::Clean => (AgentOutcome::Finished, format!("applied {short}\n")),
            Applied::Already => (
                AgentOutcome::Finished,
                format!("the workspace holds {short}'s change already\n"),
            ),
            Applied::Conflict(why) => (
                AgentOutcome::Failed(format!(
                    "could not apply commit {short}: {NO_LONGER_APPLIES}\n{why}"
                )),
                format!("{short} no longer applies:\n{why}\n"),
            ),
        };
        let _ = std::fs::write(
            &ctx.log,
            format!("replay agent: {}\n{log}", patch_name(&patch)),
        );
        Ok(self.report(work, t, outcome))
    }
}

fn patch_name(p: &Path) -> String {
    p.display().to_string()
}
