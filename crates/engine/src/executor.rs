//! Executors run one attempt: input the base commit, the charter and the
//! agent settings; output a candidate commit on `refs/heads/planwright/<id>`.
//! Everything that decides trust (scope, rails, gates, merging) stays with
//! the coordinator, which never believes what an executor reports.
//! `LocalExecutor` uses the worktree pool on this machine.

use crate::agent::{Agent, AgentOutcome, AgentReport, AttemptContext};
use crate::error::EngineError;
use crate::merge::commit_tree;
use crate::process::Cancel;
use crate::repo::Repo;
use crate::worktree::Pool;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What one attempt starts from.
#[derive(Debug, Clone)]
pub struct AttemptInput {
    /// The ticket id.
    pub ticket: String,
    /// 1-based attempt number.
    pub attempt: u32,
    /// The base commit to start from.
    pub base_commit: String,
    /// The prompt.
    pub charter: String,
    /// The candidate commit's message.
    pub message: String,
    /// Where the prompt file and the agent's log go.
    pub files: PathBuf,
    /// The agent's wall-clock limit.
    pub agent_timeout: Option<Duration>,
    /// The model chosen for this attempt.
    pub model: Option<String>,
}

/// What an attempt produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// What the agent reported (its outcome decides; the rest is for reports).
    pub report: AgentReport,
    /// The candidate commit (when the agent finished).
    pub commit: Option<String>,
}

/// The branch a ticket's candidate lives on.
pub fn branch(ticket: &str) -> String {
    format!("planwright/{ticket}")
}

/// Runs attempts. `lane` is the job slot (0..jobs); `progress` is called with
/// each phase name before the phase starts.
pub trait Executor: Send + Sync {
    /// Runs one attempt.
    fn attempt(
        &self,
        lane: usize,
        input: &AttemptInput,
        progress: &dyn Fn(&str) -> Result<(), EngineError>,
        cancel: &Cancel,
    ) -> Result<Candidate, EngineError>;
}

/// Attempts in pooled worktrees on this machine.
pub struct LocalExecutor {
    repo: Repo,
    pool: Pool,
    agent: Arc<dyn Agent>,
}

impl LocalExecutor {
    /// An executor for `repo` using `pool` and `agent`.
    pub fn new(repo: Repo, pool: Pool, agent: Arc<dyn Agent>) -> LocalExecutor {
        LocalExecutor { repo, pool, agent }
    }

    /// The pool slot of a lane.
    pub fn slot(lane: usize) -> String {
        format!("slot-{}", lane + 1)
    }
}

impl Executor for LocalExecutor {
    fn attempt(
        &self,
        lane: usize,
        input: &AttemptInput,
        progress: &dyn Fn(&str) -> Result<(), EngineError>,
        cancel: &Cancel,
    ) -> Result<Candidate, EngineError> {
        progress("worktree")?;
        let branch = branch(&input.ticket);
        let dir =
            self.pool
                .prepare(&Self::slot(lane), &input.base_commit, Some(&branch), cancel)?;
        std::fs::create_dir_all(&input.files).map_err(|e| EngineError::io(&input.files, e))?;
        let prompt_file = input
            .files
            .join(format!("attempt-{}.prompt.md", input.attempt));
        std::fs::write(&prompt_file, &input.charter)
            .map_err(|e| EngineError::io(&prompt_file, e))?;
        let ctx = AttemptContext {
            ticket: input.ticket.clone(),
            attempt: input.attempt,
            worktree: dir.clone(),
            prompt_file,
            log: input
                .files
                .join(format!("attempt-{}.agent.log", input.attempt)),
            timeout: input.agent_timeout,
            model: input.model.clone(),
            // The agent CLI's own state directory for this slot, so parallel
            // attempts never share session files.
            env: crate::agent::prepare_home(
                &self.repo.state_dir(),
                &Self::slot(lane),
                self.agent.as_ref(),
            )?,
        };
        progress("agent")?;
        let report = self.agent.attempt(&ctx, cancel)?;
        if report.outcome != AgentOutcome::Finished {
            return Ok(Candidate {
                report,
                commit: None,
            });
        }
        progress("commit")?;
        // planwright commits, not the agent: whatever the agent committed is
        // folded into one commit whose only parent is the base commit.
        let slot = Self::slot(lane);
        self.pool.git(&slot)?.args(["add", "-A"]).output()?;
        let tree = self.pool.git(&slot)?.args(["write-tree"]).text()?;
        let commit = commit_tree(&self.repo, &tree, &input.base_commit, &input.message)?;
        self.repo
            .git()
            .args(["update-ref", &format!("refs/heads/{branch}"), &commit])
            .output()?;
        Ok(Candidate {
            report,
            commit: Some(commit),
        })
    }
}
