//! `planwright worker`: runs the attempts a coordinator sends over a byte
//! stream exactly as the local executor runs them (a sandboxed workspace,
//! the agent, the candidate committed by planwright), in a slot of its
//! cache, and sends back what the coordinator needs to judge them.

use super::cache::{pack, SlotRepo, WorkerCache};
use super::protocol::{
    AttemptEnd, AttemptSpec, FromWorker, Message, SandboxState, ToWorker, WireError,
    WorkerSettings, PROTOCOL,
};
use super::resume::{self, Keeper, Kept, Resumption};
use super::wire::{self, Outbox};
use crate::agent::{Agents, UsageSink};
use crate::error::EngineError;
use crate::exec::network::Network;
use crate::exec::workspace::Workspaces;
use crate::exec::{AttemptInput, Candidate, Executor, LocalExecutor};
use planwright_config::{AgentsSpec, ContainSettings, SandboxMode, WorkspaceSettings};
use planwright_os::process::Cancel;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The package version, the build's unless [`set_version`] said more.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

static BUILD: OnceLock<String> = OnceLock::new();

/// Names this program's build (`0.1.0 (1a2b3c4d5e6f)`, as `--version`
/// prints it) for `hello`; call once at start.
pub fn set_version(build: &str) {
    let _ = BUILD.set(build.to_string());
}

/// The version a worker and a coordinator tell each other at `hello`:
/// the build's (with its commit) when the program named it.
pub fn version() -> &'static str {
    BUILD.get().map_or(VERSION, String::as_str)
}

/// The ref a worker's candidate is on in its slot's repository.
const CANDIDATE_REF: &str = "refs/planwright/worker/candidate";

/// How often a running attempt's files are read for what to stream.
const LOG_POLL: Duration = Duration::from_millis(200);

/// The largest piece of a file one `log` message carries.
const LOG_PIECE: usize = 1 << 20;

/// How `planwright worker` was started.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// Its cache: object stores and the slots' repositories.
    pub cache: PathBuf,
    /// Whether it may run agents unconfined when the coordinator asks.
    pub unsandboxed: bool,
}

/// What the worker writes, shared by the threads of an attempt.
type Out = Outbox;

fn say(out: &Out, msg: &FromWorker, payload: &[u8]) -> Result<(), WireError> {
    out.send(msg, payload)
}

/// What the reader thread hands on.
enum Heard {
    Message(ToWorker),
    Objects(Vec<u8>),
    Gone(Option<WireError>),
    /// The coordinator said nothing, not even a heartbeat, for this long:
    /// it is given up on.
    Silent(Duration),
    /// The attempt ended (sent by its own thread, to stop listening for a
    /// cancel).
    Done,
    /// The coordinator's connection broke, and a new one took its place.
    Resumed,
}

/// The coordinator's messages, and a way to add [`Heard::Done`] to them.
struct Ears {
    heard: Receiver<Heard>,
    wake: Sender<Heard>,
    /// The silence after which the coordinator is given up on, in ms (the
    /// attempt's `lost_after_ms`).
    lost_after: Arc<AtomicU64>,
    /// How a new connection takes the place of a broken one.
    rejoin: Rejoin,
    /// An attempt is kept for a new connection (a [`Keeper`] listens).
    keeping: Arc<AtomicBool>,
    /// An attempt runs.
    live: Arc<AtomicBool>,
}

impl Ears {
    /// The next thing heard that is not a heartbeat, or the coordinator's
    /// silence. A connection that closes while an attempt is kept is not
    /// the end: a new one may resume it within the silence allowed.
    fn next(&self) -> Heard {
        loop {
            let limit = Duration::from_millis(self.lost_after.load(Ordering::Relaxed));
            match self.heard.recv_timeout(limit) {
                Ok(Heard::Message(ToWorker::Heartbeat { .. }) | Heard::Resumed) => {}
                Ok(Heard::Gone(None | Some(WireError::Closed | WireError::Io(_))))
                    if self.kept() => {}
                Ok(heard) => return heard,
                Err(RecvTimeoutError::Timeout) => return Heard::Silent(limit),
                Err(RecvTimeoutError::Disconnected) => return Heard::Gone(None),
            }
        }
    }

    /// Whether a closed connection leaves something to resume: an attempt
    /// that runs, or one whose end the coordinator has not acknowledged.
    fn kept(&self) -> bool {
        self.keeping.load(Ordering::SeqCst)
            && (self.live.load(Ordering::SeqCst) || self.rejoin.out.unacknowledged())
    }
}

/// What a new connection needs to take a broken one's place: the
/// outbox to go on writing, and the ears to go on hearing.
#[derive(Clone)]
struct Rejoin {
    out: Outbox,
    wake: Sender<Heard>,
    /// The connection heard: what an earlier one says no longer counts.
    stream: Arc<AtomicU64>,
}

impl Rejoin {
    /// Goes on over `r`: `resumed` with what this side heard, what the
    /// coordinator missed, then the conversation as before. A resumption
    /// from more than was sent closes `r` and changes nothing.
    fn resume(&self, r: Resumption) {
        let mut first = Vec::new();
        let resumed = FromWorker::Resumed {
            ack: self.out.heard(),
        };
        if super::protocol::send(&mut first, &resumed, &[]).is_err() {
            return;
        }
        if self.out.resume(r.to, r.ack, first).is_err() {
            return;
        }
        let stream = self.stream.fetch_add(1, Ordering::SeqCst) + 1;
        hear(r.from, self, stream);
        let _ = self.wake.send(Heard::Resumed);
    }
}

/// A coordinator given up on for its silence: the worker's error.
fn silent(limit: Duration) -> EngineError {
    let why = format!(
        "the coordinator said nothing for {}s, not even a heartbeat; the worker ended its attempt",
        limit.as_secs()
    );
    EngineError::Wire(WireError::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        why,
    )))
}

/// Serves one coordinator on `input` and `output` until it closes the
/// stream or goes silent; either way every attempt has ended when it
/// returns, and what is left to write is given at most `lost_after`.
pub fn serve(
    input: impl Read + Send + 'static,
    output: Box<dyn Write + Send>,
    options: &WorkerOptions,
) -> Result<(), EngineError> {
    let hello_within = planwright_config::WorkerLink::default().lost_after;
    let (first, input) = match resume::first(input, hello_within) {
        Ok(first) => first,
        // Closed before a word (a probe of the connection): nothing to do.
        Err(WireError::Closed) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if let ToWorker::Resume { .. } = first {
        // A new connection of an attempt another worker keeps.
        return Ok(resume::relay(&first, input, output, &options.cache)?);
    }
    let out = Outbox::new(output);
    let ears = listen(first, input, out.clone());
    let served = converse(&ears, &out, options);
    if matches!(served, Err(EngineError::Wire(_))) {
        out.abandon();
    }
    let limit = Duration::from_millis(ears.lost_after.load(Ordering::Relaxed));
    out.drain(limit);
    served
}

/// `hello`, then the coordinator's attempts.
fn converse(ears: &Ears, out: &Out, options: &WorkerOptions) -> Result<(), EngineError> {
    let theirs = match ears.next() {
        Heard::Message(ToWorker::Hello { protocol, .. }) => protocol,
        Heard::Gone(None) => return Ok(()),
        Heard::Gone(Some(e)) => return Err(e.into()),
        Heard::Silent(limit) => return Err(silent(limit)),
        _ => return Err(unexpected("anything before `hello`")),
    };
    let hello = FromWorker::Hello {
        protocol: PROTOCOL,
        planwright: version().into(),
        sandbox: sandbox_state(),
        unsandboxed: options.unsandboxed,
    };
    say(out, &hello, &[])?;
    if theirs != PROTOCOL {
        // The coordinator reads the version and says what to do.
        return Ok(());
    }
    let beat = Beat::start(out.clone());
    // Listens for a new connection of the attempt kept last, until the
    // conversation ends.
    let mut keeper = None;
    loop {
        match ears.next() {
            Heard::Message(ToWorker::Attempt(spec)) => {
                let lost_after = spec.lost_after_ms.max(1);
                ears.lost_after.store(lost_after, Ordering::Relaxed);
                out.patience(Duration::from_millis(lost_after));
                beat.every(spec.heartbeat_ms.max(1));
                ears.live.store(true, Ordering::SeqCst);
                let ran = attempt(ears, out, *spec, options, &mut keeper);
                ears.live.store(false, Ordering::SeqCst);
                ran?;
            }
            Heard::Message(ToWorker::Check { programs }) => {
                let path = std::env::var("PATH").ok();
                let missing = programs
                    .into_iter()
                    .filter(|p| planwright_os::process::find_program(p, path.as_deref()).is_none())
                    .collect();
                say(out, &FromWorker::Checked { missing }, &[])?;
            }
            Heard::Message(ToWorker::Cancel) | Heard::Done | Heard::Resumed => {}
            Heard::Message(ToWorker::Resume { .. }) => {
                return Err(unexpected("`resume` in the middle of a conversation"))
            }
            Heard::Gone(None) => return Ok(()),
            Heard::Gone(Some(e)) => return Err(e.into()),
            Heard::Silent(limit) => return Err(silent(limit)),
            _ => return Err(unexpected("objects nobody asked for")),
        }
    }
}

/// The worker's heartbeat, on a thread of its own while the connection
/// lasts: a coordinator that hears nothing for its `lost_after` gives the
/// worker up.
struct Beat {
    every_ms: Arc<AtomicU64>,
    _stop: Sender<()>,
}

impl Beat {
    fn start(out: Out) -> Beat {
        let default = planwright_config::WorkerLink::default().heartbeat;
        let every_ms = Arc::new(AtomicU64::new(default.as_millis() as u64));
        let (stop, stopped) = channel::<()>();
        let every = every_ms.clone();
        std::thread::spawn(move || loop {
            let wait = Duration::from_millis(every.load(Ordering::Relaxed));
            match stopped.recv_timeout(wait) {
                Err(RecvTimeoutError::Timeout)
                    if out
                        .nudge(&FromWorker::Heartbeat { ack: out.heard() })
                        .is_ok() => {}
                _ => return,
            }
        });
        Beat {
            every_ms,
            _stop: stop,
        }
    }

    fn every(&self, ms: u64) {
        self.every_ms.store(ms, Ordering::Relaxed);
    }
}

fn unexpected(what: &str) -> EngineError {
    EngineError::Wire(WireError::Malformed(
        format!("the coordinator sent {what}"),
        String::new(),
    ))
}

/// Reads the coordinator's messages (`first` already read) on a thread of
/// their own, so that a cancel arrives while an attempt runs.
fn listen(first: ToWorker, input: impl Read + Send + 'static, out: Out) -> Ears {
    let (tx, rx) = channel();
    if first.journaled() {
        out.heard_one();
    }
    let _ = tx.send(Heard::Message(first));
    let rejoin = Rejoin {
        out,
        wake: tx.clone(),
        stream: Arc::default(),
    };
    hear(Box::new(input), &rejoin, 0);
    let lost_after = planwright_config::WorkerLink::default().lost_after;
    Ears {
        heard: rx,
        wake: tx,
        lost_after: Arc::new(AtomicU64::new(lost_after.as_millis() as u64)),
        rejoin,
        keeping: Arc::default(),
        live: Arc::default(),
    }
}

/// Hears connection `stream`'s messages on threads of their own while it
/// is the one heard: counts what it sends, takes its acknowledgements.
fn hear(input: Box<dyn Read + Send>, rejoin: &Rejoin, stream: u64) {
    let (raw_tx, raw) = channel();
    wire::inbox::<ToWorker>(input, raw_tx);
    let Rejoin {
        out,
        wake: tx,
        stream: current,
    } = rejoin.clone();
    std::thread::spawn(move || {
        for heard in raw {
            if current.load(Ordering::SeqCst) != stream {
                return;
            }
            if let Ok((msg, _)) = &heard {
                if msg.journaled() {
                    out.heard_one();
                }
            }
            let heard = match heard {
                Ok((ToWorker::Heartbeat { ack }, _)) => match out.acknowledged(ack) {
                    Ok(()) => Heard::Message(ToWorker::Heartbeat { ack }),
                    Err(e) => Heard::Gone(Some(WireError::Malformed(
                        format!("the coordinator's heartbeat is wrong: {e}"),
                        String::new(),
                    ))),
                },
                Ok((ToWorker::Objects { .. }, pack)) => Heard::Objects(pack),
                Ok((msg, _)) => Heard::Message(msg),
                Err(WireError::Closed) => Heard::Gone(None),
                Err(e) => Heard::Gone(Some(e)),
            };
            let gone = matches!(heard, Heard::Gone(_));
            if tx.send(heard).is_err() || gone {
                return;
            }
        }
    });
}

/// How this machine confines agents.
fn sandbox_state() -> SandboxState {
    match crate::contain::containment(SandboxMode::Enforce) {
        Ok(c) => SandboxState {
            enforced: true,
            detail: c.describe(),
        },
        Err(e) => SandboxState {
            enforced: false,
            detail: e.to_string(),
        },
    }
}

/// Refuses an attempt: the coordinator retires the slot.
fn refuse(out: &Out, reason: String, hint: &str) -> Result<(), EngineError> {
    let hint = hint.to_string();
    Ok(say(out, &FromWorker::Refused { reason, hint }, &[])?)
}

/// Runs one attempt, from the objects it needs to its result.
fn attempt(
    ears: &Ears,
    out: &Out,
    spec: AttemptSpec,
    options: &WorkerOptions,
    keeper: &mut Option<Keeper>,
) -> Result<(), EngineError> {
    let mode = if spec.settings.unsandboxed {
        if !options.unsandboxed {
            let flag = planwright_plan::Flag::Unsandboxed;
            return refuse(
                out,
                format!("the coordinator runs agents unconfined (`[sandbox] mode = \"off\"`), and this worker was not started with `{flag}`"),
                &format!("start the workers with `planwright worker {flag}`, or confine the agents"),
            );
        }
        SandboxMode::Off
    } else {
        SandboxMode::Enforce
    };
    let containment = match crate::contain::containment(mode) {
        Ok(c) => c,
        Err(e) => {
            return refuse(
                out,
                format!("cannot confine agents here: {e}"),
                "run workers on Linux with Landlock and unprivileged user namespaces",
            )
        }
    };
    let spec_of = AgentsSpec {
        run: Some(spec.agent.clone()),
        by_family: Vec::new(),
    };
    let agents = match Agents::build(&spec_of) {
        Ok(a) => a,
        Err(e) => {
            let hint = "install the coordinator's planwright version on the worker";
            return refuse(out, e.to_string(), hint);
        }
    };
    let cache = WorkerCache::open(&options.cache, &spec.object_format)?;
    let Some(slot) = cache.slot(spec.slot)? else {
        return refuse(
            out,
            format!(
                "slot {} of the cache `{}` is in use by another attempt",
                spec.slot + 1,
                options.cache.display()
            ),
            &format!(
                "give each coordinator its own `{}`",
                planwright_plan::Flag::Cache
            ),
        );
    };
    keep(ears, options, &spec, keeper);
    if !fetch(ears, out, &cache, &spec)? {
        return Ok(());
    }
    let exec = slot_executor(&slot, &spec, containment, agents);
    let result = run(ears, out, &slot, &spec, exec);
    match result {
        Ok(Some(candidate)) => finish(out, &cache, &slot, &spec, candidate),
        // The coordinator is gone: nobody to tell.
        Ok(None) => Ok(()),
        Err(e) => refuse(
            out,
            format!("failed on its machine: {e}"),
            "fix the worker's machine (its disk, its git); the ticket runs again on another slot",
        ),
    }
}

/// Keeps the attempt for a new connection of the coordinator's, when it
/// gave a key: listens on the slot's socket. A worker that cannot listen
/// runs the attempt all the same, which a broken connection then ends.
fn keep(ears: &Ears, options: &WorkerOptions, spec: &AttemptSpec, keeper: &mut Option<Keeper>) {
    // The last attempt's socket goes first: the slot's may be the same.
    *keeper = None;
    ears.keeping.store(false, Ordering::SeqCst);
    let Some(key) = spec.resume_key.clone() else {
        return;
    };
    let kept = Kept {
        slot: spec.slot,
        object_format: spec.object_format.clone(),
        ticket: spec.ticket.clone(),
        attempt: spec.attempt,
        key,
    };
    let rejoin = ears.rejoin.clone();
    match Keeper::bind(&options.cache, kept, move |r| rejoin.resume(r)) {
        Ok(k) => {
            *keeper = Some(k);
            ears.rejoin.out.keep();
            ears.keeping.store(true, Ordering::SeqCst);
        }
        Err(e) => eprintln!(
            "planwright worker: cannot keep the attempt for a new connection ({e}); a broken one ends it"
        ),
    }
}

/// Asks for the commits the cache lacks and stores what comes; `false`
/// when the attempt ended there (a cancel, a pack without them).
fn fetch(
    ears: &Ears,
    out: &Out,
    cache: &WorkerCache,
    spec: &AttemptSpec,
) -> Result<bool, EngineError> {
    let commits = [spec.base_commit.as_str(), spec.start_commit.as_str()];
    let missing = cache.lacks(&commits)?;
    let have = if missing.is_empty() {
        Vec::new()
    } else {
        cache.kept()?
    };
    say(out, &FromWorker::Wants { missing, have }, &[])?;
    match ears.next() {
        Heard::Objects(pack) if pack.is_empty() => {}
        Heard::Objects(pack) => cache.ingest(&pack)?,
        Heard::Silent(limit) => {
            let _ = ears.wake.send(Heard::Silent(limit));
            return Ok(false);
        }
        Heard::Gone(None) => {
            let _ = ears.wake.send(Heard::Gone(None));
            return Ok(false);
        }
        Heard::Message(ToWorker::Cancel) => {
            let end = AttemptEnd::new(&crate::agent::AgentReport::from(
                crate::agent::AgentOutcome::Cancelled,
            ));
            say(out, &FromWorker::Result(Box::new(end)), &[])?;
            return Ok(false);
        }
        Heard::Gone(Some(e)) => return Err(e.into()),
        Heard::Message(_) | Heard::Done | Heard::Resumed => {
            return Err(unexpected("another message than `objects`"))
        }
    }
    if let Some(c) = cache.lacks(&commits)?.first() {
        refuse(
            out,
            format!("the objects sent lack commit {c}"),
            "run the coordinator with the same planwright version",
        )?;
        return Ok(false);
    }
    Ok(true)
}

/// The local executor on a slot's repository, as the attempt's settings say.
fn slot_executor(
    slot: &SlotRepo,
    spec: &AttemptSpec,
    containment: planwright_os::sandbox::Containment,
    agents: Agents,
) -> LocalExecutor {
    let s = &spec.settings;
    let workspaces = Workspaces::new(
        slot.repo.clone(),
        workspace_settings(s),
        containment,
        Vec::new(),
    )
    .with_network(Network::new(&contain_settings(s)))
    .with_limits(crate::contain::limits(&contain_settings(s)));
    // The slot's repository is the worker's own: its guard is too.
    let guard = std::sync::Arc::new(crate::git::guard::Guard::of(&slot.repo));
    LocalExecutor::new(slot.repo.clone(), guard, workspaces, agents, s.log_limit)
}

fn workspace_settings(s: &WorkerSettings) -> WorkspaceSettings {
    WorkspaceSettings {
        setup: s.setup.clone(),
        setup_inputs: s.setup_inputs.clone(),
        pristine: s.pristine,
        setup_timeout: s.setup_timeout_secs.map(Duration::from_secs),
        copy: Vec::new(),
        env: s.setup_env.clone(),
    }
}

fn contain_settings(s: &WorkerSettings) -> ContainSettings {
    ContainSettings {
        agent_network: s.agent_network,
        allow: s.allow.clone(),
        hosts: s.hosts.clone(),
        ..ContainSettings::default()
    }
}

/// The attempt on the slot, its files streamed and a cancel heeded while
/// it runs.
fn run(
    ears: &Ears,
    out: &Out,
    slot: &SlotRepo,
    spec: &AttemptSpec,
    exec: LocalExecutor,
) -> Result<Option<Candidate>, EngineError> {
    let repo = &slot.repo;
    let state = repo.state_dir();
    std::fs::create_dir_all(&state).map_err(|e| EngineError::io(&state, e))?;
    repo.ensure_excluded()?;
    repo.ensure_own_git(&[])?;
    let files = state.join("attempt");
    if files.exists() {
        std::fs::remove_dir_all(&files).map_err(|e| EngineError::io(&files, e))?;
    }
    std::fs::create_dir_all(&files).map_err(|e| EngineError::io(&files, e))?;
    let usage_out = out.clone();
    let input = AttemptInput {
        ticket: spec.ticket.clone(),
        attempt: spec.attempt,
        base_commit: spec.base_commit.clone(),
        start_commit: spec.start_commit.clone(),
        charter: spec.charter.clone(),
        message: spec.message.clone(),
        files: files.clone(),
        agent_timeout: spec.agent_timeout_secs.map(Duration::from_secs),
        agent: None,
        model: spec.model.clone(),
        budget_usd: spec.budget_usd,
        candidate_ref: CANDIDATE_REF.into(),
        activity_sink: Some(Arc::new(Relay(out.clone()))),
        // A worker's own attempt runs here: it waits for nothing.
        waiting_sink: None,
        resumed_sink: None,
        usage_sink: Some(UsageSink::new(move |u| {
            let msg = FromWorker::Usage {
                model: u.model.clone(),
                usage: u.usage,
            };
            let _ = say(&usage_out, &msg, &[]);
        })),
    };
    let cancel = Cancel::default();
    let (wake, stop) = (ears.wake.clone(), channel::<()>());
    let progress = |phase: crate::model::Phase| -> Result<(), EngineError> {
        Ok(say(out, &FromWorker::Progress { phase }, &[])?)
    };
    std::thread::scope(|s| {
        let (stop_logs, logs_stop) = stop;
        let logs = s.spawn(move || stream(&files, out, &logs_stop));
        let work = s.spawn(|| {
            let candidate = exec.attempt(0, &input, &progress, &cancel);
            drop(stop_logs);
            let _ = wake.send(Heard::Done);
            candidate
        });
        let gone = heed(ears, out, &cancel);
        let panicked = || EngineError::Internal("an attempt's thread panicked".into());
        let candidate = work.join().unwrap_or_else(|_| Err(panicked()));
        let streamed = logs.join().unwrap_or_else(|_| Err(panicked()));
        if gone {
            return Ok(None);
        }
        let candidate = candidate?;
        streamed?;
        Ok(Some(candidate))
    })
}

/// Sends the agent's activities to the coordinator.
struct Relay(Out);

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Relay")
    }
}

impl crate::agent::ActivitySink for Relay {
    fn activity(&self, activity: &crate::agent::Activity) {
        let activity = activity.clone();
        let _ = say(&self.0, &FromWorker::Activity { activity }, &[]);
    }
}

/// Cancels the attempt when the coordinator says so, goes away or goes
/// silent, until the attempt is done; `true` when the coordinator is
/// gone, which is heard again after it. Nothing more is written to a
/// coordinator that is gone, so no thread of the attempt waits on it.
fn heed(ears: &Ears, out: &Out, cancel: &Cancel) -> bool {
    let mut gone = None;
    loop {
        match ears.next() {
            Heard::Done => break,
            Heard::Message(ToWorker::Cancel) => cancel.cancel(),
            heard @ (Heard::Gone(_) | Heard::Silent(_)) => {
                cancel.cancel();
                out.abandon();
                gone.get_or_insert(heard);
            }
            _ => {}
        }
    }
    match gone {
        Some(heard) => {
            let _ = ears.wake.send(heard);
            true
        }
        None => false,
    }
}

/// Sends what the attempt's files grew by until `stop` ends, then the rest.
fn stream(files: &Path, out: &Out, stop: &Receiver<()>) -> Result<(), EngineError> {
    let mut sent: HashMap<String, u64> = HashMap::new();
    loop {
        sweep(files, out, &mut sent)?;
        if !matches!(stop.recv_timeout(LOG_POLL), Err(RecvTimeoutError::Timeout)) {
            return sweep(files, out, &mut sent);
        }
    }
}

/// One pass over the attempt's files: each regular file's new bytes.
fn sweep(files: &Path, out: &Out, sent: &mut HashMap<String, u64>) -> Result<(), EngineError> {
    let entries = std::fs::read_dir(files).map_err(|e| EngineError::io(files, e))?;
    for entry in entries.flatten() {
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if !regular {
            continue;
        }
        let path = entry.path();
        let mut file = std::fs::File::open(&path).map_err(|e| EngineError::io(&path, e))?;
        let from = sent.entry(name.clone()).or_default();
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(*from))
            .map_err(|e| EngineError::io(&path, e))?;
        let mut piece = vec![0; LOG_PIECE];
        loop {
            let n = file
                .read(&mut piece)
                .map_err(|e| EngineError::io(&path, e))?;
            if n == 0 {
                break;
            }
            let msg = FromWorker::Log {
                file: name.clone(),
                bytes: n as u64,
            };
            say(out, &msg, &piece[..n])?;
            *from += n as u64;
        }
    }
    Ok(())
}

/// Sends the candidate's objects and the attempt's end, and keeps its
/// base for the next pack to build on.
fn finish(
    out: &Out,
    cache: &WorkerCache,
    slot: &SlotRepo,
    spec: &AttemptSpec,
    candidate: Candidate,
) -> Result<(), EngineError> {
    if let Some(commit) = &candidate.commit {
        let git_dir = slot.repo.common_dir();
        let objects = pack(git_dir, &[commit], &[&spec.base_commit])?;
        let msg = FromWorker::Candidate {
            commit: commit.clone(),
            bytes: objects.len() as u64,
        };
        say(out, &msg, &objects)?;
    }
    let mut end = AttemptEnd::new(&candidate.report);
    end.setup_failed = candidate.setup_failed;
    end.rejected = candidate.rejected;
    say(out, &FromWorker::Result(Box::new(end)), &[])?;
    cache.keep(&spec.base_commit)
}
