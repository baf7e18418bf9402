//! An executor that works as a remote one would: each slot has a clone of
//! its own, outside the coordinator's repository, where the agent works and
//! the candidate is committed; the coordinator's repository only fetches
//! the candidate onto its ref. It confines nothing (tests only).

use crate::git;
use planwright_engine::agent::{Agent, AgentOutcome, AttemptContext};
use planwright_engine::process::Cancel;
use planwright_engine::EngineError;
use planwright_engine::{AttemptInput, Candidate, Executor, Phase};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Attempts in per-slot clones, candidates fetched back.
pub struct FakeExecutor {
    repo: PathBuf,
    clones: PathBuf,
    agent: Arc<dyn Agent>,
    busy: Mutex<HashSet<usize>>,
}

impl FakeExecutor {
    /// Attempts for the repository at `repo` by `agent`, in clones made
    /// under `clones` (which must lie outside `repo`).
    pub fn new(repo: &Path, clones: &Path, agent: Arc<dyn Agent>) -> FakeExecutor {
        FakeExecutor {
            repo: repo.to_path_buf(),
            clones: clones.to_path_buf(),
            agent,
            busy: Mutex::new(HashSet::new()),
        }
    }

    /// The slot's clone, at `base` with nothing else in it.
    fn clone_at(&self, slot: usize, base: &str) -> PathBuf {
        let dir = self.clones.join(format!("slot-{slot}"));
        if !dir.join(".git").is_dir() {
            std::fs::create_dir_all(&self.clones).unwrap();
            let (from, to) = (self.repo.display().to_string(), dir.display().to_string());
            git(&self.clones, &["clone", "-q", "--no-checkout", &from, &to]);
        }
        // The base may be on no branch the clone has seen (the run's own).
        git(
            &dir,
            &["fetch", "-q", &self.repo.display().to_string(), base],
        );
        git(&dir, &["checkout", "-q", "--detach", "--force", base]);
        git(&dir, &["clean", "-q", "-fdx"]);
        dir
    }
}

impl Executor for FakeExecutor {
    fn attempt(
        &self,
        slot: usize,
        input: &AttemptInput,
        progress: &dyn Fn(Phase) -> Result<(), EngineError>,
        cancel: &Cancel,
    ) -> Result<Candidate, EngineError> {
        assert!(
            self.busy.lock().unwrap().insert(slot),
            "two attempts at once in slot {slot}"
        );
        let result = self.work(slot, input, progress, cancel);
        self.busy.lock().unwrap().remove(&slot);
        result
    }
}

impl FakeExecutor {
    fn work(
        &self,
        slot: usize,
        input: &AttemptInput,
        progress: &dyn Fn(Phase) -> Result<(), EngineError>,
        cancel: &Cancel,
    ) -> Result<Candidate, EngineError> {
        progress(Phase::Workspace)?;
        let dir = self.clone_at(slot, &input.start_commit);
        std::fs::create_dir_all(&input.files).map_err(|e| EngineError::io(&input.files, e))?;
        let prompt_file = input
            .files
            .join(format!("attempt-{}.prompt.md", input.attempt));
        std::fs::write(&prompt_file, &input.charter)
            .map_err(|e| EngineError::io(&prompt_file, e))?;
        let ctx = AttemptContext {
            ticket: input.ticket.clone(),
            attempt: input.attempt,
            confine: None,
            workspace: dir.clone(),
            prompt_file,
            log: input
                .files
                .join(format!("attempt-{}.agent.log", input.attempt)),
            timeout: input.agent_timeout,
            model: input.model.clone(),
            env: Vec::new(),
            log_limit: None,
            usage_sink: input.usage_sink.clone(),
            activity_sink: input.activity_sink.clone(),
        };
        progress(Phase::Agent)?;
        let report = self.agent.attempt(&ctx, cancel)?;
        if report.outcome != AgentOutcome::Finished {
            return Ok(Candidate::without_commit(report));
        }
        progress(Phase::Commit)?;
        // The candidate's parent is the base, whatever the workspace started from.
        git(
            &dir,
            &[
                "fetch",
                "-q",
                &self.repo.display().to_string(),
                &input.base_commit,
            ],
        );
        git(&dir, &["reset", "-q", "--soft", &input.base_commit]);
        git(&dir, &["add", "-A"]);
        git(
            &dir,
            &["commit", "-q", "--allow-empty", "-m", &input.message],
        );
        let commit = git(&dir, &["rev-parse", "HEAD"]);
        let from = dir.display().to_string();
        git(&self.repo, &["fetch", "-q", &from, &commit]);
        git(&self.repo, &["update-ref", &input.candidate_ref, &commit]);
        Ok(Candidate {
            report,
            commit: Some(commit),
            setup_failed: None,
            rejected: None,
            lost: None,
        })
    }
}
