//! Executors run one attempt. The contract:
//!
//! - **Input** ([`AttemptInput`]): the base commit, the charter, the commit
//!   message, the agent settings, and the ref the candidate must end on.
//! - **Output** ([`Candidate`]): what the agent reported, and the candidate
//!   commit, whose only parent is the base commit, pointed at by
//!   `input.candidate_ref` **in the coordinator's repository**. How it gets
//!   there is the executor's business: [`LocalExecutor`] shares the
//!   repository's object store, so writing the ref is enough; a remote
//!   executor (a Kubernetes Job, say) fetches the base commit from a shared
//!   remote and pushes the candidate back, then the coordinator fetches it
//!   onto `candidate_ref` before returning.
//! - **Trust**: none. Everything that decides (scope, rails, gate-script
//!   integrity, gates, merging) stays with the coordinator, which reads the
//!   candidate from its own repository and never believes what an executor
//!   or an agent says about it. An executor's workspaces are its own: the
//!   coordinator never runs anything in them.
//! - **Stopping**: when `cancel` is set the attempt ends promptly, with
//!   every process it started, and reports `AgentOutcome::Cancelled`.
//! - `slot` (0..jobs) is the concurrency index: at most one attempt per
//!   slot at a time, so an executor may keep one workspace per slot.
//!
//! `LocalExecutor` runs attempts in the worktree pool on this machine.

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
    /// The ref the candidate commit must end on, in the coordinator's repository.
    pub candidate_ref: String,
}

/// What an attempt produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// What the agent reported (its outcome decides; the rest is for reports).
    pub report: AgentReport,
    /// The candidate commit (when the agent finished).
    pub commit: Option<String>,
}

/// Runs attempts (see the module's documentation for the contract).
/// `progress` is called with each phase name before the phase starts.
pub trait Executor: Send + Sync {
    /// Runs one attempt in `slot`.
    fn attempt(
        &self,
        slot: usize,
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

    /// The pool workspace of a slot.
    pub fn slot(slot: usize) -> String {
        format!("slot-{}", slot + 1)
    }
}

impl Executor for LocalExecutor {
    fn attempt(
        &self,
        slot: usize,
        input: &AttemptInput,
        progress: &dyn Fn(&str) -> Result<(), EngineError>,
        cancel: &Cancel,
    ) -> Result<Candidate, EngineError> {
        progress("worktree")?;
        let dir = self
            .pool
            .prepare(&Self::slot(slot), &input.base_commit, None, cancel)?;
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
            env: vec![],
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
        let slot = Self::slot(slot);
        self.pool.git(&slot)?.args(["add", "-A"]).output()?;
        let tree = self.pool.git(&slot)?.args(["write-tree"]).text()?;
        let commit = commit_tree(&self.repo, &tree, &input.base_commit, &input.message)?;
        self.repo
            .git()
            .args(["update-ref", &input.candidate_ref, &commit])
            .output()?;
        Ok(Candidate {
            report,
            commit: Some(commit),
        })
    }
}
