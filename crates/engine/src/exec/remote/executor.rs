//! The executor that runs attempts on `planwright worker`s through a
//! [`Transport`]: it sends each attempt and the objects the worker lacks,
//! relays progress, usage and the attempt's files, and takes the candidate
//! into the coordinator's repository only after checking it is one commit
//! on the base whose objects are all there. Nothing a worker says decides
//! more than the local executor's agent report would.

use super::cache::pack;
use super::intake::{self, Intake};
use super::protocol::{
    self, AttemptSpec, FromWorker, Message, ToWorker, WireError, WorkerSettings, PROTOCOL,
};
use super::reconnect::{Reconnect, Rejoined};
use super::transport::{EndLink, Link, Lost, Transport};
use super::wire::{self, Heard, Outbox};
use super::worker::version;
use crate::agent::activity::ActivityFeed;
use crate::agent::{AgentOutcome, AgentReport, Agents, UsageSoFar};
use crate::error::EngineError;
use crate::exec::{AttemptInput, Candidate, Executor};
use crate::git::repo::Repo;
use crate::git::transfer::ObjectDir;
use crate::git::{objects, refs};
use crate::model::{Failure, Phase};
use planwright_config::WorkerLink;
use planwright_os::process::Cancel;
use std::io::Write;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a running attempt looks for a cancel to pass on.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// How long a worker told to cancel (Ctrl-C) has to answer before its
/// connection is closed.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// What the coordinator allows an attempt beyond its own time limits
/// (the agent's, the set-up's) before the worker is lost: sending objects
/// both ways, committing.
const DEADLINE_SLACK: Duration = Duration::from_secs(5 * 60);

/// Attempts on workers.
pub struct RemoteExecutor {
    transport: Arc<dyn Transport>,
    repo: Repo,
    agents: Agents,
    settings: WorkerSettings,
    object_format: String,
    link: WorkerLink,
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
    heard: Receiver<Heard<FromWorker>>,
    /// The end of the connection heard.
    end: Option<Box<dyn EndLink>>,
    /// How a broken connection is replaced, when the transport can.
    reconnect: Option<Reconnect<'a>>,
    out: &'a Outbox,
    clock: Clock<'a>,
    input: &'a AttemptInput,
    progress: &'a dyn Fn(Phase) -> Result<(), EngineError>,
    /// The candidate, once its objects arrived and were checked.
    candidate: Option<String>,
    /// Why git refused the candidate's content, if it did: the attempt's
    /// failure.
    refused: Option<Failure>,
    feed: ActivityFeed,
    /// Log bytes this side still takes from the worker for the attempt.
    log_room: LogRoom,
}

/// What a worker may still append to an attempt's logs: its own cap
/// (`[agent] log_limit_mib`) is the worker's to keep, and a worker is no
/// more trusted than its agent, so the coordinator holds the same cap
/// over everything it is sent, with room for the worker's own lines.
struct LogRoom {
    left: Option<u64>,
    noted: bool,
}

/// Room beyond the agent's cap for what the worker itself writes (its
/// set-up's and its own lines).
const WORKER_LOG_SLACK: u64 = 1024 * 1024;

impl LogRoom {
    fn new(limit: Option<u64>) -> LogRoom {
        LogRoom {
            left: limit.map(|l| l.saturating_add(WORKER_LOG_SLACK)),
            noted: false,
        }
    }

    /// How much of `piece` fits, and the note to write once it stops fitting.
    fn take<'p>(&mut self, piece: &'p [u8]) -> (&'p [u8], Option<String>) {
        let Some(left) = self.left.as_mut() else {
            return (piece, None);
        };
        let fits = piece
            .len()
            .min(usize::try_from(*left).unwrap_or(usize::MAX));
        *left -= fits as u64;
        let note = (fits < piece.len() && !std::mem::replace(&mut self.noted, true)).then(|| {
            "\n[planwright: the worker sent more log than `[agent] log_limit_mib` allows; the rest of this attempt's log is dropped]\n".to_string()
        });
        (&piece[..fits], note)
    }
}

impl Conversation<'_> {
    fn tell(&self, msg: &ToWorker, payload: &[u8]) -> Result<(), WireError> {
        self.out.send(msg, payload)
    }

    /// The worker's next message and its payload, heartbeats aside, while
    /// passing on a cancel and heartbeats of this side; a worker silent
    /// for too long, or past the attempt's deadline, is lost.
    fn next(&mut self) -> Result<(FromWorker, Vec<u8>), Stop> {
        loop {
            self.clock.tick(self.out)?;
            match self.heard.recv_timeout(CANCEL_POLL) {
                Ok(Ok((FromWorker::Heartbeat { ack }, _))) => {
                    self.clock.heard = Instant::now();
                    self.out
                        .acknowledged(ack)
                        .map_err(|e| Stop::Lost(format!("sent a wrong heartbeat: {e}")))?;
                }
                Ok(Ok(heard)) => {
                    self.clock.heard = Instant::now();
                    if heard.0.journaled() {
                        self.out.heard_one();
                    }
                    return Ok(heard);
                }
                Ok(Err(e @ (WireError::Closed | WireError::Io(_)))) => self.rejoin(e)?,
                Ok(Err(e)) => return Err(e.into()),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => self.rejoin(WireError::Closed)?,
            }
        }
    }

    /// The connection `broke`: a new one to the worker keeping the
    /// attempt takes its place, when the transport can make one; else,
    /// or when none resumes the attempt in time, the worker is lost.
    fn rejoin(&mut self, broke: WireError) -> Result<(), Stop> {
        let Some(reconnect) = &self.reconnect else {
            return Err(broke.into());
        };
        if self.clock.cancel.is_cancelled() {
            return Err(broke.into());
        }
        let since = Instant::now();
        let Rejoined { heard, end } = reconnect.rejoin(self.out).map_err(Stop::Lost)?;
        self.heard = heard;
        if let Some(old) = self.end.replace(end) {
            old.leave();
        }
        self.clock.heard = Instant::now();
        if let Some(sink) = &self.input.resumed_sink {
            (sink.0)(&broke.to_string(), since.elapsed());
        }
        Ok(())
    }

    /// `hello` both ways, then the attempt.
    fn greet(&mut self, spec: &AttemptSpec, skew: bool) -> Result<(), Stop> {
        let hello = ToWorker::Hello {
            protocol: PROTOCOL,
            planwright: version().into(),
        };
        self.tell(&hello, &[])?;
        match self.next()?.0 {
            FromWorker::Hello {
                protocol,
                planwright,
                ..
            } if protocol != PROTOCOL => Err(Stop::Lost(format!(
                "speaks worker protocol {protocol} (planwright {planwright}), this planwright {PROTOCOL} ({})", version()
            ))),
            FromWorker::Hello { planwright, .. } if !skew && planwright != version() => {
                Err(Stop::Lost(super::hello::skewed(&planwright)))
            }
            FromWorker::Hello { .. } => Ok(self.tell(&ToWorker::Attempt(Box::new(spec.clone())), &[])?),
            _ => Err(Stop::Lost("did not answer `hello`".into())),
        }
    }

    /// Acts on one message; `Some` once the attempt ended.
    fn heard(
        &mut self,
        exec: &RemoteExecutor,
        msg: FromWorker,
        payload: Vec<u8>,
    ) -> Result<Option<Talk>, Stop> {
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
            FromWorker::Log { file, .. } => {
                let (piece, note) = self.log_room.take(&payload);
                let piece = [piece, note.as_deref().unwrap_or_default().as_bytes()].concat();
                append(self.input, &file, &piece)?.map_err(Stop::Lost)?;
            }
            FromWorker::Candidate { commit, .. } => {
                let objects = payload;
                let base = &self.input.base_commit;
                match intake::take(exec.repo.common_dir(), &objects, &commit, base)? {
                    Intake::Taken => self.candidate = Some(commit),
                    Intake::Refused(failure) => self.refused = Some(failure),
                    Intake::Bad(why) => return Err(Stop::Lost(why)),
                }
            }
            FromWorker::Result(end) => {
                self.feed.finish();
                let report = end.report();
                let candidate = self.candidate.take();
                let mut end = *end;
                if let Some(failure) = self.refused.take() {
                    end.rejected.get_or_insert(failure);
                }
                return exec.ended(report, candidate, end, self.input).map(Some);
            }
            FromWorker::Refused { reason, hint } => {
                return Err(Stop::Lost(format!(
                    "refused the attempt: {reason} ({hint})"
                )));
            }
            FromWorker::Hello { .. } => return Err(Stop::Lost("said `hello` twice".into())),
            FromWorker::Checked { .. } => {
                return Err(Stop::Lost("answered a `check` nobody asked for".into()))
            }
            FromWorker::Heartbeat { .. } | FromWorker::Resumed { .. } => {}
        }
        Ok(None)
    }
}

/// The times of one attempt's conversation.
struct Clock<'a> {
    link: WorkerLink,
    cancel: &'a Cancel,
    /// When the worker last said anything.
    heard: Instant,
    /// When this side last sent a heartbeat.
    beat: Instant,
    /// When a cancel was passed on.
    cancelled: Option<Instant>,
    /// When the attempt must have ended, and its time limits, if it has any.
    deadline: Option<(Instant, Duration)>,
}

impl Clock<'_> {
    /// Passes on a cancel and a heartbeat when due; a worker silent for
    /// `lost_after`, past the deadline, or still there a grace after a
    /// cancel, is lost.
    fn tick(&mut self, out: &Outbox) -> Result<(), Stop> {
        let now = Instant::now();
        if self.cancel.is_cancelled() {
            match self.cancelled {
                None => {
                    self.cancelled = Some(now);
                    let _ = out.nudge(&ToWorker::Cancel);
                }
                Some(at) if now.duration_since(at) >= CANCEL_GRACE => {
                    return Err(Stop::Lost(format!(
                        "did not end the attempt within {} of being told to",
                        wire::span(CANCEL_GRACE)
                    )))
                }
                Some(_) => {}
            }
        }
        let silent = now.duration_since(self.heard);
        if silent >= self.link.lost_after {
            return Err(Stop::Lost(format!(
                "stopped answering (nothing heard for {}, `[executor] lost_after`)",
                wire::span(self.link.lost_after)
            )));
        }
        if let Some((at, limits)) = self.deadline {
            if now >= at {
                return Err(Stop::Lost(format!(
                    "ran the attempt past its deadline ({}: its time limits, and {} more)",
                    wire::span(limits + DEADLINE_SLACK),
                    wire::span(DEADLINE_SLACK)
                )));
            }
        }
        if now.duration_since(self.beat) >= self.link.heartbeat {
            self.beat = now;
            let _ = out.nudge(&ToWorker::Heartbeat { ack: out.heard() });
        }
        Ok(())
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
        let object_format = objects::format(&repo)?;
        Ok(RemoteExecutor {
            transport,
            repo,
            agents,
            settings,
            object_format,
            link: WorkerLink::default(),
        })
    }

    /// The executor, keeping in touch with its workers as `link` says.
    pub fn with_link(mut self, link: WorkerLink) -> RemoteExecutor {
        self.link = link;
        self
    }

    /// The time an attempt's own limits allow it (the agent's, and each
    /// set-up command's), if it has one.
    fn limits(&self, input: &AttemptInput) -> Option<Duration> {
        let agent = input.agent_timeout?;
        let s = &self.settings;
        let setup = s
            .setup_timeout_secs
            .map_or(Duration::ZERO, Duration::from_secs);
        Some(agent + setup * s.setup.len() as u32)
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
            heartbeat_ms: self.link.heartbeat.as_millis() as u64,
            lost_after_ms: self.link.lost_after.as_millis() as u64,
            resume_key: None,
        })
    }

    /// The conversation of one attempt, from `hello` to its result.
    fn converse(&self, talk: &mut Conversation, spec: &AttemptSpec) -> Result<Talk, EngineError> {
        let skew = self.link.allow_version_skew;
        let ended = talk.greet(spec, skew).and_then(|()| loop {
            let (msg, payload) = talk.next()?;
            if let Some(end) = talk.heard(self, msg, payload)? {
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
            refs::set_own_ref(&self.repo, &input.candidate_ref, commit)?;
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
        ObjectDir::at(self.repo.common_dir()).commits_among(&asked)
    }
}

/// The wait of `input`'s connection: `cancel`, and its waiting sink.
fn wait<'a>(input: &'a AttemptInput, cancel: &'a Cancel) -> super::transport::Wait<'a> {
    match &input.waiting_sink {
        Some(sink) => super::transport::Wait {
            cancel,
            waiting: sink.0.as_ref(),
        },
        None => super::transport::Wait::quiet(cancel),
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
    let mut f = planwright_os::beneath::append(&path)?;
    f.write_all(piece).map_err(|e| EngineError::io(&path, e))?;
    Ok(Ok(()))
}

impl Executor for RemoteExecutor {
    fn place(&self, slot: usize) -> crate::events::AttemptPlace {
        let worker = self.transport.attempt_place(slot);
        crate::events::AttemptPlace {
            // A place's first word is its kind: `ssh build-1`, `process`.
            executor: worker.split(' ').next().unwrap_or_default().into(),
            worker: Some(worker),
            slot: slot + 1,
        }
    }

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
        let place = self.transport.attempt_place(slot);
        let Link {
            from_worker,
            to_worker,
            worker_slot,
            end,
        } = match self.transport.connect(slot, &wait(input, cancel)) {
            Ok(link) => link,
            Err(_) if cancel.is_cancelled() => {
                return Ok(Candidate::without_commit(AgentReport::from(
                    AgentOutcome::Cancelled,
                )))
            }
            Err(lost) => return Ok(Candidate::lost(lost)),
        };
        spec.slot = worker_slot;
        // Each direction on a thread of its own: a worker that stops
        // reading or writing never blocks this one.
        let out = Outbox::new(to_worker);
        out.patience(self.link.lost_after);
        let reconnect = self.reconnect(slot, &mut spec, input, cancel);
        if reconnect.is_some() {
            out.keep();
        }
        let now = Instant::now();
        let limits = self.limits(input);
        let mut talk = Conversation {
            heard: wire::listen::<FromWorker>(from_worker),
            end: Some(end),
            reconnect,
            out: &out,
            clock: Clock {
                link: self.link,
                cancel,
                heard: now,
                beat: now,
                cancelled: None,
                // Counted from the connection: a pod's wait to be scheduled
                // is not the attempt's.
                deadline: limits.map(|l| (now + l + DEADLINE_SLACK, l)),
            },
            input,
            progress,
            candidate: None,
            refused: None,
            // What a worker relays is made inert, cut and capped again here.
            feed: ActivityFeed::new(input.activity_sink.clone()),
            log_room: LogRoom::new(self.settings.log_limit),
        };
        let talk_ended = self.converse(&mut talk, &spec);
        let end = talk.end.take();
        let end = |kill: bool| end.map(|e| e.end(kill)).unwrap_or_default();
        match talk_ended {
            Ok(Talk::Ended(candidate)) => {
                // What the worker sent is acknowledged, so it keeps nothing
                // for a new connection; closing its input ends it.
                let _ = out.nudge(&ToWorker::Heartbeat { ack: out.heard() });
                out.close();
                end(false);
                Ok(*candidate)
            }
            Ok(Talk::Lost(reason)) => {
                out.abandon();
                let said = end(true);
                if cancel.is_cancelled() {
                    let report = AgentReport::from(AgentOutcome::Cancelled);
                    return Ok(Candidate::without_commit(report));
                }
                // ssh's own words end with a period; the message goes on.
                let reason = match said.trim().trim_end_matches('.') {
                    "" => reason,
                    said => format!("{reason}; it said: {}", planwright_plan::words::inert(said)),
                };
                Ok(Candidate::lost(Lost { place, reason }))
            }
            Err(e) => {
                out.abandon();
                end(true);
                Err(e)
            }
        }
    }
}

impl RemoteExecutor {
    /// How `slot`'s attempt of `spec` goes on over a new connection when
    /// its own breaks, if the transport can make one: the worker is given
    /// a key to keep it for.
    fn reconnect<'a>(
        &'a self,
        slot: usize,
        spec: &mut AttemptSpec,
        input: &'a AttemptInput,
        cancel: &'a Cancel,
    ) -> Option<Reconnect<'a>> {
        if !self.transport.resumes() {
            return None;
        }
        let key = resume_key()?;
        spec.resume_key = Some(key.clone());
        Some(Reconnect {
            transport: self.transport.as_ref(),
            slot,
            resume: ToWorker::Resume {
                slot: spec.slot,
                object_format: spec.object_format.clone(),
                key,
                ticket: spec.ticket.clone(),
                attempt: spec.attempt,
                ack: 0,
            },
            lost_after: self.link.lost_after,
            cancel,
            wait: wait(input, cancel),
        })
    }
}

/// A secret for one attempt's resumption: 128 bits from the kernel's
/// generator; `None` (no resumption) where there is none.
fn resume_key() -> Option<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let mut random = std::fs::File::open("/dev/urandom").ok()?;
    random.read_exact(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Drop for RemoteExecutor {
    /// The run is over, however it ended: what the transport keeps
    /// running between attempts goes.
    fn drop(&mut self) {
        self.transport.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker's logs stop at the cap plus the worker's slack, with one note.
    #[test]
    fn a_worker_sends_no_more_log_than_the_cap() {
        let mut room = LogRoom::new(Some(10));
        let chunk = vec![b'x'; (WORKER_LOG_SLACK as usize) + 4];
        let (first, note) = room.take(&chunk);
        assert_eq!((first.len(), note), (chunk.len(), None));
        let (second, note) = room.take(&chunk);
        assert_eq!(second.len(), 6);
        assert!(note.unwrap().contains("log_limit_mib"));
        let (third, note) = room.take(&chunk);
        assert_eq!((third.len(), note), (0, None));
        let mut open = LogRoom::new(None);
        assert_eq!(open.take(&chunk).0.len(), chunk.len());
    }
}
