//! Agents: the coding-agent CLIs that do a ticket's work, behind one trait.
//! Built in: `cmd` (any program, from a template) and `scripted:DIR`
//! (prepared files and patches per ticket; for tests and the demo).

pub mod cmd;
pub mod scripted;

use crate::error::EngineError;
use crate::process::Cancel;
use std::path::PathBuf;
use std::time::Duration;

/// What an agent gets for one attempt.
#[derive(Debug, Clone)]
pub struct AttemptContext {
    /// The ticket id.
    pub ticket: String,
    /// 1-based attempt number.
    pub attempt: u32,
    /// The worktree to edit (also the working directory).
    pub worktree: PathBuf,
    /// The charter, written to a file.
    pub prompt_file: PathBuf,
    /// Where the agent's whole output goes.
    pub log: PathBuf,
    /// Wall-clock limit.
    pub timeout: Option<Duration>,
}

/// How an attempt of the agent ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentOutcome {
    /// It finished; the worktree holds its work.
    Finished,
    /// It gave up (`TICKET-BLOCKED: reason`).
    Blocked(String),
    /// It failed (non-zero exit), with the tail of its output.
    Failed(String),
    /// It ran out of time.
    TimedOut,
    /// The run was interrupted.
    Cancelled,
}

/// A coding agent.
pub trait Agent: Send + Sync {
    /// Its name for reports.
    fn name(&self) -> &str;
    /// Does one attempt of a ticket in `ctx.worktree`.
    fn attempt(&self, ctx: &AttemptContext, cancel: &Cancel) -> Result<AgentOutcome, EngineError>;
    /// The program it needs, for preflight (None when it needs none).
    fn program(&self) -> Option<String> {
        None
    }
    /// A problem that would stop it from running at all, for preflight.
    fn unusable(&self) -> Option<String> {
        None
    }
}

/// The agent named `name` (`cmd`, `scripted:DIR`), with the `cmd` template.
pub fn from_name(name: &str, cmd_template: Option<&str>) -> Result<Box<dyn Agent>, EngineError> {
    if let Some(dir) = name.strip_prefix("scripted:") {
        return Ok(Box::new(scripted::Scripted::new(PathBuf::from(dir))));
    }
    match name {
        "cmd" => {
            let template = cmd_template.ok_or_else(|| {
                EngineError::Settings(
                    "the `cmd` agent needs a command: `--agent-cmd \"PROGRAM ARGS...\"` or `[agent] cmd` in planwright.toml"
                        .into(),
                )
            })?;
            Ok(Box::new(cmd::CmdAgent::new(template)?))
        }
        "scripted" => Err(EngineError::Settings(
            "the scripted agent needs its fixture folder: `--agent scripted:DIR`".into(),
        )),
        other => Err(EngineError::Settings(format!(
            "unknown agent `{other}` (built in: `cmd`, `scripted:DIR`; drive any other CLI with `--agent cmd --agent-cmd \"...\"`)"
        ))),
    }
}

/// `TICKET-BLOCKED: reason` on the last non-empty line of `output`.
pub fn blocked_reason(output: &str) -> Option<String> {
    let last = output.lines().rev().find(|l| !l.trim().is_empty())?;
    last.trim()
        .strip_prefix("TICKET-BLOCKED:")
        .map(|r| r.trim().to_string())
}
