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
//! `LocalExecutor` runs attempts in sandboxed workspaces on this machine, one per slot.

use crate::agent::{Agent, AgentOutcome, AgentReport, Agents, AttemptContext};
use crate::error::EngineError;
use crate::exec::workspace::Workspaces;
use crate::git::guard::Guard;
use crate::git::refs::{commit_tree, set_own_ref};
use crate::git::repo::Repo;
use crate::model::failure::Failure;
use crate::model::{Phase, Verdict};
use planwright_os::process::Cancel;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A worker that could not be reached or went away: the machine's
/// trouble, not the ticket's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the worker at {place} {reason}")]
pub struct Lost {
    /// [`crate::exec::remote::Transport::place`] of its slot.
    pub place: String,
    /// What happened, read after "the worker at PLACE".
    pub reason: String,
}

/// What one attempt starts from.
#[derive(Debug, Clone)]
pub struct AttemptInput {
    /// The ticket id.
    pub ticket: String,
    /// 1-based attempt number.
    pub attempt: u32,
    /// The base commit: the candidate's parent, which it is judged against.
    pub base_commit: String,
    /// The commit the workspace starts from: `base_commit`, or on a retry
    /// the previous attempt's candidate (carried onto `base_commit`, whose
    /// child it then is) as `[run] retry_from` says.
    pub start_commit: String,
    /// The prompt.
    pub charter: String,
    /// The candidate commit's message.
    pub message: String,
    /// Where the prompt file and the agent's log go.
    pub files: PathBuf,
    /// The agent's wall-clock limit.
    pub agent_timeout: Option<Duration>,
    /// The `[agents]` entry (a model family) whose agent does the attempt;
    /// `None`: the run's own agent.
    pub agent: Option<String>,
    /// The model chosen for this attempt.
    pub model: Option<String>,
    /// Dollars the attempt may still spend under `[budget]`, if a dollar
    /// ceiling applies; the agent gets it as [`crate::agent::BUDGET_ENV`].
    pub budget_usd: Option<f64>,
    /// The ref the candidate commit must end on, in the coordinator's repository.
    pub candidate_ref: String,
    /// Where the agent's running token totals go while it works (a remote
    /// executor relays them as they arrive, or leaves them to the report).
    pub usage_sink: Option<crate::agent::UsageSink>,
    /// Where the agent's activity goes while it works (messages, tool
    /// calls, plans: see [`crate::agent::activity`]).
    pub activity_sink: Option<std::sync::Arc<dyn crate::agent::ActivitySink>>,
    /// Told what the attempt's worker waits for before it can start (a
    /// pod to be scheduled), each time that changes.
    pub waiting_sink: Option<WaitingSink>,
    /// Told when the attempt's connection to its worker broke and a new
    /// one resumed it: why it broke, and how long the new one took.
    pub resumed_sink: Option<ResumedSink>,
}

/// Told why a connection broke and how long its replacement took.
pub(crate) type OnResumed = dyn Fn(&str, std::time::Duration) + Send + Sync;

/// Where an attempt's resumption over a new connection is said.
#[derive(Clone)]
pub struct ResumedSink(pub std::sync::Arc<OnResumed>);

impl std::fmt::Debug for ResumedSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResumedSink")
    }
}

/// Where an attempt's wait for its worker is said.
#[derive(Clone)]
pub struct WaitingSink(pub std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for WaitingSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WaitingSink")
    }
}

/// What an attempt produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// What the agent reported (its outcome decides; the rest is for reports).
    pub report: AgentReport,
    /// The candidate commit (when the agent finished).
    pub commit: Option<String>,
    /// The workspace's set-up failed, so the agent never ran: why. This
    /// decides the attempt, not `report`.
    pub setup_failed: Option<Failure>,
    /// The agent finished but its work cannot be a candidate (a path git
    /// refuses to index): why. This decides the attempt.
    pub rejected: Option<Failure>,
    /// The machine the attempt ran on failed it (unreachable, gone mid-way,
    /// refused): not the ticket's fault. This decides the attempt: it runs
    /// again on another slot without a strike, and the slot rests before it serves again.
    pub lost: Option<Lost>,
}

impl Candidate {
    /// An attempt whose agent ended without a commit: `report` decides it.
    pub fn without_commit(report: AgentReport) -> Candidate {
        Candidate {
            report,
            commit: None,
            setup_failed: None,
            rejected: None,
            lost: None,
        }
    }

    /// An attempt the machine it ran on failed.
    pub fn lost(lost: Lost) -> Candidate {
        Candidate {
            lost: Some(lost),
            ..Candidate::without_commit(AgentReport::from(AgentOutcome::Cancelled))
        }
    }
}

/// Runs attempts (see the module's documentation for the contract).
/// `progress` is called with each phase (`Phase::Workspace`, `Agent`,
/// `Commit`) before the phase starts.
pub trait Executor: Send + Sync {
    /// Runs one attempt in `slot`.
    fn attempt(
        &self,
        slot: usize,
        input: &AttemptInput,
        progress: &dyn Fn(Phase) -> Result<(), EngineError>,
        cancel: &Cancel,
    ) -> Result<Candidate, EngineError>;

    /// Where attempts run and who confines their agents, when not this
    /// process's own sandbox: the run records it beside that.
    fn elsewhere(&self) -> Option<String> {
        None
    }

    /// Where an attempt in `slot` runs, for its `attempt_started` event.
    fn place(&self, slot: usize) -> crate::events::AttemptPlace {
        crate::events::AttemptPlace {
            executor: "local".into(),
            worker: None,
            slot: slot + 1,
        }
    }

    /// Gives back the space slot `slot` holds on this machine, after the
    /// disk filled up during its attempt's verification: its next attempt
    /// starts it afresh. An executor whose slots live on other machines
    /// holds nothing here.
    fn give_back(&self, _slot: usize) -> Result<(), EngineError> {
        Ok(())
    }
}

/// Attempts in the slots' workspaces on this machine, the agent sandboxed.
pub struct LocalExecutor {
    repo: Repo,
    /// The session's integrity guard, checked after each agent.
    guard: Arc<Guard>,
    workspaces: Workspaces,
    agents: Agents,
    log_limit: Option<u64>,
    /// `[run] min_free`: below it after an attempt, the attempt filled
    /// the disk.
    min_free: planwright_config::MinFree,
}

impl LocalExecutor {
    /// An executor for `repo` using `workspaces` and `agents` (each
    /// attempt's [`AttemptInput::agent`]), whose log is capped at
    /// `log_limit` bytes per attempt; `guard`, the session's integrity
    /// guard, is checked after each agent.
    pub fn new(
        repo: Repo,
        guard: Arc<Guard>,
        workspaces: Workspaces,
        agents: Agents,
        log_limit: Option<u64>,
    ) -> LocalExecutor {
        LocalExecutor {
            repo,
            guard,
            workspaces,
            agents,
            log_limit,
            min_free: planwright_config::defaults::MIN_FREE,
        }
    }

    /// The same executor, an attempt after which the disk is below
    /// `min_free` failing as `disk_full`.
    pub fn with_min_free(mut self, min_free: planwright_config::MinFree) -> LocalExecutor {
        self.min_free = min_free;
        self
    }

    /// When the disk of `.planwright/` is below the floor: the attempt's
    /// `disk_full` failure, its slot scrubbed (the space it held given
    /// back) and the store's reserve released, so the failure can be
    /// recorded.
    fn disk_full(&self, slot: &str) -> Result<Option<crate::model::failure::Failure>, EngineError> {
        let state = self.repo.state_dir();
        let Some(low) = super::disk::low(&state, self.min_free) else {
            return Ok(None);
        };
        super::disk::noted_full();
        self.workspaces.scrub(slot)?;
        super::disk::release(&state);
        Ok(Some(super::disk::full(
            Some(&low),
            super::disk::During::Agent,
        )))
    }

    /// `error` of the candidate's commit, or its `disk_full` failure
    /// when the disk is why.
    fn or_disk_full(
        &self,
        slot: &str,
        report: AgentReport,
        error: EngineError,
    ) -> Result<Candidate, EngineError> {
        match self.disk_full(slot)? {
            Some(f) => Ok(rejected(report, f)),
            None => Err(error),
        }
    }

    /// The workspace of a slot.
    pub fn slot(slot: usize) -> String {
        format!("slot-{}", slot + 1)
    }

    /// The agent's context: its workspace, files, sandbox and environment.
    fn context(
        &self,
        agent: &dyn Agent,
        slot: &str,
        dir: PathBuf,
        input: &AttemptInput,
    ) -> Result<AttemptContext, EngineError> {
        std::fs::create_dir_all(&input.files).map_err(|e| EngineError::io(&input.files, e))?;
        let prompt_file = input
            .files
            .join(format!("attempt-{}.prompt.md", input.attempt));
        // Nothing in a run folder is followed, whoever could write there.
        planwright_os::beneath::write_file(&prompt_file, input.charter.as_bytes())?;
        let tmp = self.workspaces.fresh_tmp(slot)?;
        let ceiling = Workspaces::root(&self.repo);
        let mut confine = self.workspaces.confine(slot, &tmp, agent.hosts());
        let caches = self.workspaces.caches(slot);
        caches.prepare()?;
        let mut env = vec![
            ("TMPDIR".into(), tmp.display().to_string()),
            // The agent's git stops at its workspace: with a broken
            // `.git` it must not find the user's repository above.
            (
                "GIT_CEILING_DIRECTORIES".into(),
                ceiling.display().to_string(),
            ),
        ];
        // The agent CLI's own state directory for this slot, so parallel
        // attempts never share session files; the agent may write there.
        let homes = self.repo.state_dir().join("homes").join(slot);
        env.extend(crate::agent::prepare_home(
            &self.repo.state_dir(),
            slot,
            agent,
        )?);
        if homes.is_dir() {
            confine.allow_write(homes);
        }
        // After the home: an adapter's home does not move the caches.
        caches.add_to(&mut env);
        if let Some(usd) = input.budget_usd {
            env.push((crate::agent::BUDGET_ENV.into(), format!("{usd:.4}")));
        }
        Ok(AttemptContext {
            ticket: input.ticket.clone(),
            attempt: input.attempt,
            confine: Some(confine),
            workspace: dir,
            prompt_file,
            log: input
                .files
                .join(format!("attempt-{}.agent.log", input.attempt)),
            timeout: input.agent_timeout,
            model: input.model.clone(),
            env,
            log_limit: self.log_limit,
            usage_sink: input.usage_sink.clone(),
            activity_sink: input.activity_sink.clone(),
        })
    }
}

impl Executor for LocalExecutor {
    fn give_back(&self, slot: usize) -> Result<(), EngineError> {
        self.workspaces.scrub(&Self::slot(slot))
    }

    fn attempt(
        &self,
        slot: usize,
        input: &AttemptInput,
        progress: &dyn Fn(Phase) -> Result<(), EngineError>,
        cancel: &Cancel,
    ) -> Result<Candidate, EngineError> {
        let agent = self.agents.get(input.agent.as_deref()).ok_or_else(|| {
            let named = input
                .agent
                .as_deref()
                .map_or("the run's own".into(), |f| format!("the `[agents] {f}`"));
            EngineError::Internal(format!(
                "attempt {} of {} is for {named} agent, which the executor does not have",
                input.attempt, input.ticket
            ))
        })?;
        progress(Phase::Workspace)?;
        let slot = Self::slot(slot);
        std::fs::create_dir_all(&input.files).map_err(|e| EngineError::io(&input.files, e))?;
        let prepared = self.workspaces.prepare(
            &slot,
            (&input.start_commit, &input.base_commit),
            &format!("planwright/{}", input.ticket),
            &input.files.join("ticket.log"),
            cancel,
        )?;
        let dir = match prepared {
            Ok(dir) => dir,
            Err(verdict) => return Ok(without_agent(verdict)),
        };
        let ctx = self.context(agent.as_ref(), &slot, dir, input)?;
        progress(Phase::Agent)?;
        // Every process of the agent has ended when this returns (its PID
        // namespace is gone with it).
        let report = agent.attempt(&ctx, cancel);
        // Before planwright runs git on the user's repository again, make
        // sure the agent changed nothing there (the coordinator checks too).
        self.guard.check()?;
        let report = report?;
        // A limit the agent hit is the attempt's failure, whatever the
        // agent made of it (a build that died of it, or gave up).
        let hit = ctx.confine.as_ref().and_then(|c| c.hits.get());
        if let Some(hit) = hit.filter(|_| report.outcome != AgentOutcome::Cancelled) {
            let f = crate::contain::limit_failure("the agent", hit);
            return Ok(rejected(report, f));
        }
        if report.outcome != AgentOutcome::Cancelled {
            if let Some(f) = self.disk_full(&slot)? {
                return Ok(rejected(report, f));
            }
        }
        if report.outcome != AgentOutcome::Finished {
            return Ok(Candidate::without_commit(report));
        }
        progress(Phase::Commit)?;
        // planwright commits, not the agent: the workspace's files become
        // one commit whose only parent is the base commit, built with
        // planwright's own git directory and index.
        let log = input.files.join("ticket.log");
        let tree = match self.workspaces.tree(&slot, &input.base_commit, &log) {
            Err(e) => return self.or_disk_full(&slot, report, e),
            Ok(Ok(tree)) => tree,
            Ok(Err(f)) => return Ok(rejected(report, f)),
        };
        let commit = match commit_tree(&self.repo, &tree, &input.base_commit, &input.message) {
            Ok(commit) => commit,
            Err(e) => return self.or_disk_full(&slot, report, e),
        };
        self.repo
            .made_candidate(&commit, &input.base_commit, &input.message);
        set_own_ref(&self.repo, &input.candidate_ref, &commit)?;
        Ok(Candidate {
            report,
            commit: Some(commit),
            setup_failed: None,
            rejected: None,
            lost: None,
        })
    }
}

/// The attempt that ran and was rejected before its commit with `f`.
fn rejected(report: AgentReport, f: crate::model::failure::Failure) -> Candidate {
    Candidate {
        report,
        commit: None,
        setup_failed: None,
        rejected: Some(f),
        lost: None,
    }
}

/// The attempt whose workspace's set-up ended with `verdict`: the agent
/// never ran.
fn without_agent(verdict: Verdict) -> Candidate {
    let (outcome, setup_failed) = match verdict {
        Verdict::Fail(f) => (AgentOutcome::Failed(f.message.clone()), Some(f)),
        Verdict::Cancelled | Verdict::Pass => (AgentOutcome::Cancelled, None),
    };
    Candidate {
        report: AgentReport::from(outcome),
        commit: None,
        setup_failed,
        rejected: None,
        lost: None,
    }
}
