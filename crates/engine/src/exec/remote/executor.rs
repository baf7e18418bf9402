//! The executor that runs attempts on `planwright worker`s through a
//! [`Transport`]: it sends each attempt and the objects the worker lacks,
//! relays progress, usage and the attempt's files, and takes the candidate
//! into the coordinator's repository only after checking it is one commit
//! on the base whose objects are all there. Nothing a worker says decides
//! more than the local executor's agent report would.

use super::cache::pack;
use super::protocol::{
    self, receive, send, AttemptSpec, FromWorker, ToWorker, WireError, WorkerSettings, PROTOCOL,
};
use super::transport::{Link, Lost, Transport};
use super::worker::VERSION;
use crate::agent::activity::ActivityFeed;
use crate::agent::{AgentOutcome, AgentReport, Agents, UsageSoFar};
use crate::error::EngineError;
use crate::exec::{AttemptInput, Candidate, Executor};
use crate::git::repo::Repo;
use crate::git::Git;
use crate::model::Phase;
use crate::process::Cancel;
use std::io::{BufRead, BufReader, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a running attempt looks for a cancel to pass on.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// Attempts on workers.
pub struct RemoteExecutor {
    transport: Arc<dyn Transport>,
    repo: Repo,
    agents: Agents,
    settings: WorkerSettings,
    object_format: String,
}

/// How a conversation with a worker ended.
enum Talk {
    /// The attempt ended, as the worker's result says.
    Ended(Box<Candidate>),
    /// The worker failed the attempt: why, after "the worker at PLACE".
    Lost(String),
}

/// Why a conversation stopped before the attempt's result.
enum Stop {
    /// The worker failed the attempt: why.
    Lost(String),
    /// This machine failed (git, the disk).
    Engine(EngineError),
}

impl From<WireError> for Stop {
    fn from(e: WireError) -> Stop {
        Stop::Lost(e.to_string())
    }
}

impl From<EngineError> for Stop {
    fn from(e: EngineError) -> Stop {
        Stop::Engine(e)
    }
}

impl From<crate::error::GitError> for Stop {
    fn from(e: crate::error::GitError) -> Stop {
        Stop::Engine(e.into())
    }
}

/// One attempt's conversation with its worker.
struct Conversation<'a> {
    from: &'a mut dyn BufRead,
    to: &'a Mutex<Box<dyn Write + Send>>,
    input: &'a AttemptInput,
    progress: &'a dyn Fn(Phase) -> Result<(), EngineError>,
    /// The candidate, once its objects arrived and were checked.
    candidate: Option<String>,
    feed: ActivityFeed,
}

impl Conversation<'_> {
    fn tell(&self, msg: &ToWorker, payload: &[u8]) -> Result<(), WireError> {
        let mut w = self.to.lock().unwrap_or_else(|e| e.into_inner());
        send(&mut **w, msg, payload)
    }

    /// `hello` both ways, then the attempt.
    fn greet(&mut self, spec: &AttemptSpec) -> Result<(), Stop> {
        let hello = ToWorker::Hello {
            protocol: PROTOCOL,
            planwright: VERSION.into(),
        };
        self.tell(&hello, &[])?;
        match receive::<FromWorker>(self.from)? {
            FromWorker::Hello {
                protocol,
                planwright,
                ..
            } if protocol != PROTOCOL => Err(Stop::Lost(format!(
                "speaks worker protocol {protocol} (planwright {planwright}), this planwright {PROTOCOL} ({VERSION})"
            ))),
            FromWorker::Hello { .. } => Ok(self.tell(&ToWorker::Attempt(Box::new(spec.clone())), &[])?),
            _ => Err(Stop::Lost("did not answer `hello`".into())),
        }
    }

    /// Acts on one message; `Some` once the attempt ended.
    fn heard(&mut self, exec: &RemoteExecutor, msg: FromWorker) -> Result<Option<Talk>, Stop> {
        match msg {
            FromWorker::Wants { missing, have } => {
                let objects = exec.objects(&missing, &have)?;
                let bytes = objects.len() as u64;
                self.tell(&ToWorker::Objects { bytes }, &objects)?;
            }
            FromWorker::Progress { phase } => (self.progress)(phase)?,
            FromWorker::Usage { model, usage } => {
                if let Some(sink) = &self.input.usage_sink {
                    sink.report(&UsageSoFar { model, usage });
                }
            }
            FromWorker::Activity { activity } => {
                let status = activity.status.as_deref();
                self.feed.push(activity.kind, &activity.text, status);
            }
            FromWorker::Log { file, bytes } => {
                let mut piece = Vec::new();
                protocol::payload(self.from, bytes, &mut piece)?;
                append(self.input, &file, &piece)?.map_err(Stop::Lost)?;
            }
            FromWorker::Candidate { commit, bytes } => {
                let mut objects = Vec::new();
                protocol::payload(self.from, bytes, &mut objects)?;
                exec.take(&objects, &commit, &self.input.base_commit)?
                    .map_err(Stop::Lost)?;
                self.candidate = Some(commit);
            }
            FromWorker::Result(end) => {
                self.feed.finish();
                let Some(report) = end.report() else {
                    let why = format!("ended an attempt as `{}`, unknown here", end.outcome);
                    return Err(Stop::Lost(why));
                };
                let candidate = self.candidate.take();
                return exec.ended(report, candidate, *end, self.input).map(Some);
            }
            FromWorker::Refused { reason, hint } => {
                return Err(Stop::Lost(format!(
                    "refused the attempt: {reason} ({hint})"
                )));
            }
            FromWorker::Hello { .. } => return Err(Stop::Lost("said `hello` twice".into())),
        }
        Ok(None)
    }
}

impl RemoteExecutor {
    /// An executor sending `repo`'s attempts through `transport`, with the
    /// settings of `agents` (built from settings, so a worker can build
    /// them too) and of `settings`.
    pub fn new(
        transport: Arc<dyn Transport>,
        repo: Repo,
        agents: Agents,
        settings: WorkerSettings,
    ) -> Result<RemoteExecutor, EngineError> {
        let object_format = repo
            .git()
            .args(["rev-parse", "--show-object-format"])
            .text()?;
        Ok(RemoteExecutor {
            transport,
            repo,
            agents,
            settings,
            object_format,
        })
    }

    fn spec(&self, input: &AttemptInput) -> Result<AttemptSpec, EngineError> {
        let agent = self.agents.spec(input.agent.as_deref()).ok_or_else(|| {
            EngineError::Settings(format!(
                "the agent of ticket {} has no settings a worker could build it from",
                input.ticket
            ))
        })?;
        Ok(AttemptSpec {
            slot: 0,
            object_format: self.object_format.clone(),
            ticket: input.ticket.clone(),
            attempt: input.attempt,
            base_commit: input.base_commit.clone(),
            start_commit: input.start_commit.clone(),
            charter: input.charter.clone(),
            message: input.message.clone(),
            agent_timeout_secs: input.agent_timeout.map(|d| d.as_secs().max(1)),
            agent: agent.clone(),
            model: input.model.clone(),
            budget_usd: input.budget_usd,
            settings: self.settings.clone(),
        })
    }

    /// The conversation of one attempt, from `hello` to its result.
    fn converse(
        &self,
        from: &mut dyn BufRead,
        to: &Mutex<Box<dyn Write + Send>>,
        spec: &AttemptSpec,
        input: &AttemptInput,
        progress: &dyn Fn(Phase) -> Result<(), EngineError>,
    ) -> Result<Talk, EngineError> {
        let mut talk = Conversation {
            from,
            to,
            input,
            progress,
            candidate: None,
            // What a worker relays is made inert, cut and capped again here.
            feed: ActivityFeed::new(input.activity_sink.clone()),
        };
        let ended = talk.greet(spec).and_then(|()| loop {
            let msg = receive::<FromWorker>(talk.from)?;
            if let Some(end) = talk.heard(self, msg)? {
                break Ok(end);
            }
        });
        match ended {
            Ok(talk) => Ok(talk),
            Err(Stop::Lost(why)) => Ok(Talk::Lost(why)),
            Err(Stop::Engine(e)) => Err(e),
        }
    }

    /// The candidate of a finished attempt, on its ref.
    fn ended(
        &self,
        report: AgentReport,
        commit: Option<String>,
        end: protocol::AttemptEnd,
        input: &AttemptInput,
    ) -> Result<Talk, Stop> {
        let finished = report.outcome == AgentOutcome::Finished;
        let decided = end.setup_failed.is_some() || end.rejected.is_some();
        let commit = commit.filter(|_| finished && !decided);
        if finished && !decided && commit.is_none() {
            return Err(Stop::Lost(
                "finished an attempt without its candidate".into(),
            ));
        }
        if let Some(commit) = &commit {
            (self.repo.git())
                .args(["update-ref", &input.candidate_ref, commit])
                .output()?;
        }
        Ok(Talk::Ended(Box::new(Candidate {
            report,
            commit,
            setup_failed: end.setup_failed,
            rejected: end.rejected,
            lost: None,
        })))
    }

    /// A pack of the commits a worker lacks, without what the commits it
    /// has (those this repository knows) reach.
    fn objects(&self, missing: &[String], have: &[String]) -> Result<Vec<u8>, EngineError> {
        if missing.is_empty() {
            return Ok(Vec::new());
        }
        let known = self.known(have)?;
        let want: Vec<&str> = missing.iter().map(String::as_str).collect();
        let not: Vec<&str> = known.iter().map(String::as_str).collect();
        pack(self.repo.common_dir(), &want, &not)
    }

    /// Which of `commits` this repository has.
    fn known(&self, commits: &[String]) -> Result<Vec<String>, EngineError> {
        let hex = |c: &String| c.len() >= 40 && c.bytes().all(|b| b.is_ascii_hexdigit());
        let asked: Vec<&String> = commits.iter().filter(|c| hex(c)).take(64).collect();
        if asked.is_empty() {
            return Ok(Vec::new());
        }
        let lines: String = asked.iter().map(|c| format!("{c}\n")).collect();
        let out = (self.repo.git())
            .args(["cat-file", "--batch-check=%(objectname) %(objecttype)"])
            .input(lines)
            .text()?;
        Ok(out
            .lines()
            .filter_map(|l| l.strip_suffix(" commit"))
            .map(str::to_string)
            .collect())
    }

    /// Takes a worker's candidate into the repository: `Err(why)` unless
    /// the pack is sound and `commit` is one commit on `base` with every
    /// object it needs.
    fn take(
        &self,
        objects: &[u8],
        commit: &str,
        base: &str,
    ) -> Result<Result<(), String>, EngineError> {
        let git = || Git::bare(self.repo.common_dir());
        let indexed = git()
            .args(["index-pack", "--stdin", "--fix-thin", "--strict"])
            .input(objects)
            .raw()?;
        if !indexed.status.success() {
            let said = String::from_utf8_lossy(&indexed.stderr).trim().to_string();
            return Ok(Err(format!("sent a candidate git refuses: {said}")));
        }
        let parents = git().args(["rev-list", "--parents", "-n1", commit]).raw()?;
        let line = String::from_utf8_lossy(&parents.stdout).trim().to_string();
        if !parents.status.success() || line != format!("{commit} {base}") {
            return Ok(Err(format!(
                "sent a candidate {commit} that is not one commit on the base {base}"
            )));
        }
        let complete = git()
            .args(["rev-list", "--objects", "--quiet", commit, "--not", base])
            .succeeds()?;
        if !complete {
            return Ok(Err(format!(
                "sent a candidate {commit} with objects missing"
            )));
        }
        Ok(Ok(()))
    }
}

/// Appends a piece of an attempt's file to the coordinator's copy; `Err`
/// for a name that is not a file of an attempt's folder.
fn append(
    input: &AttemptInput,
    file: &str,
    piece: &[u8],
) -> Result<Result<(), String>, EngineError> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    let ok =
        !file.is_empty() && file.len() <= 128 && !file.starts_with('.') && file.bytes().all(plain);
    if !ok {
        return Ok(Err(format!(
            "sent a file named `{}`, which is not a file of an attempt",
            planwright_plan::words::inert(file)
        )));
    }
    std::fs::create_dir_all(&input.files).map_err(|e| EngineError::io(&input.files, e))?;
    let path = input.files.join(file);
    let mut f = crate::beneath::append(&path)?;
    f.write_all(piece).map_err(|e| EngineError::io(&path, e))?;
    Ok(Ok(()))
}

impl Executor for RemoteExecutor {
    fn elsewhere(&self) -> Option<String> {
        let place = self.transport.describe();
        Some(if self.settings.unsandboxed {
            format!("attempts on workers at {place}, whose agents planwright does not confine (`[sandbox] mode = \"off\"`, workers started `{}`)", planwright_plan::Flag::Unsandboxed)
        } else {
            format!(
                "attempts on workers at {place}, each confining its agents in planwright's sandbox"
            )
        })
    }

    fn attempt(
        &self,
        slot: usize,
        input: &AttemptInput,
        progress: &dyn Fn(Phase) -> Result<(), EngineError>,
        cancel: &Cancel,
    ) -> Result<Candidate, EngineError> {
        let mut spec = self.spec(input)?;
        let place = self.transport.place(slot);
        let Link {
            from_worker,
            to_worker,
            worker_slot,
            end,
        } = match self.transport.connect(slot) {
            Ok(link) => link,
            Err(lost) => return Ok(Candidate::lost(lost)),
        };
        spec.slot = worker_slot;
        let to = Mutex::new(to_worker);
        let mut from = BufReader::new(from_worker);
        let (done, ended) = std::sync::mpsc::channel::<()>();
        let talk = std::thread::scope(|s| {
            s.spawn(|| pass_cancel(cancel, &to, ended));
            let talk = self.converse(&mut from, &to, &spec, input, progress);
            drop(done);
            talk
        });
        // Closing its input ends the worker.
        drop(to);
        match talk {
            Ok(Talk::Ended(candidate)) => {
                end.end(false);
                Ok(*candidate)
            }
            Ok(Talk::Lost(reason)) => {
                let said = end.end(true);
                if cancel.is_cancelled() {
                    let report = AgentReport::from(AgentOutcome::Cancelled);
                    return Ok(Candidate::without_commit(report));
                }
                let reason = match said.trim() {
                    "" => reason,
                    said => format!("{reason}; it said: {}", planwright_plan::words::inert(said)),
                };
                Ok(Candidate::lost(Lost { place, reason }))
            }
            Err(e) => {
                end.end(true);
                Err(e)
            }
        }
    }
}

impl Drop for RemoteExecutor {
    /// The run is over, however it ended: what the transport keeps
    /// running between attempts goes.
    fn drop(&mut self) {
        self.transport.close();
    }
}

/// Tells the worker to cancel once `cancel` is set, until `ended` ends.
fn pass_cancel(cancel: &Cancel, to: &Mutex<Box<dyn Write + Send>>, ended: Receiver<()>) {
    while let Err(RecvTimeoutError::Timeout) = ended.recv_timeout(CANCEL_POLL) {
        if cancel.is_cancelled() {
            let mut w = to.lock().unwrap_or_else(|e| e.into_inner());
            let _ = send(&mut **w, &ToWorker::Cancel, &[]);
            return;
        }
    }
}
