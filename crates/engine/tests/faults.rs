//! The worker protocol through a transport that injects faults between a
//! coordinator and an in-process `planwright worker`: the stream stalls
//! (a stopped worker, a cut link: nothing flows, nothing closes), drops
//! (the connection closes) or is delayed, both ways; a transport that can
//! reconnect resumes a dropped connection's attempt. Each test waits for
//! the event it is about (an attempt's end, the worker's end), never for a
//! length of time.

use planwright_config::WorkerLink;
use planwright_engine::agent::{AgentOutcome, AgentSpec, Agents, AgentsSpec};
use planwright_engine::process::Cancel;
use planwright_engine::remote::protocol::WorkerSettings;
use planwright_engine::remote::{
    serve, EndLink, Link, Lost, NoLink, RemoteExecutor, Transport, Wait, WorkerOptions,
};
use planwright_engine::{Candidate, EngineError, Executor, Phase, Repo};
use planwright_testkit::contract::input;
use planwright_testkit::Env;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// What the link does to the bytes that cross it, both ways.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    /// They cross.
    Clear,
    /// They are held, and nothing closes: a stopped worker, a cut link.
    Stall,
    /// The connection closes.
    Drop,
    /// Each piece waits this long before it crosses.
    Delay(Duration),
}

struct Shared {
    fault: Mutex<Fault>,
    changed: Condvar,
}

impl Shared {
    fn set(&self, fault: Fault) {
        *self.fault.lock().unwrap() = fault;
        self.changed.notify_all();
    }
}

/// How the transport answers a reconnection.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Again {
    /// It cannot reconnect (the worker does not keep its attempt).
    Never,
    /// A new link to a new worker in the same cache, clear.
    Link,
    /// Each try fails, as to a machine out of reach.
    Unreachable,
}

/// One slot whose worker is `serve` on a thread of this process, behind
/// the faulty link.
struct Faulty {
    cache: PathBuf,
    /// The fault of the link made last.
    shared: Mutex<Arc<Shared>>,
    workers: Mutex<Vec<JoinHandle<Result<(), EngineError>>>>,
    again: Again,
}

impl Faulty {
    fn new(env: &Env) -> Arc<Faulty> {
        Faulty::reconnecting(env, Again::Never)
    }

    fn reconnecting(env: &Env, again: Again) -> Arc<Faulty> {
        Arc::new(Faulty {
            cache: env.root().join("worker-cache"),
            shared: Mutex::new(Faulty::clear()),
            workers: Mutex::new(Vec::new()),
            again,
        })
    }

    fn clear() -> Arc<Shared> {
        Arc::new(Shared {
            fault: Mutex::new(Fault::Clear),
            changed: Condvar::new(),
        })
    }

    /// The link made last.
    fn link(&self) -> Arc<Shared> {
        self.shared.lock().unwrap().clone()
    }

    /// Waits for the worker to end, and returns how it ended.
    fn worker_end(&self) -> Result<(), EngineError> {
        let worker = self.workers.lock().unwrap().remove(0);
        worker.join().unwrap()
    }
}

/// Moves bytes from `from` to `to` as the fault says, until either ends.
fn relay(mut from: UnixStream, mut to: UnixStream, shared: Arc<Shared>) {
    std::thread::spawn(move || {
        let mut buf = vec![0; 1 << 16];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let mut fault = shared.fault.lock().unwrap();
            while *fault == Fault::Stall {
                fault = shared.changed.wait(fault).unwrap();
            }
            let now = *fault;
            drop(fault);
            match now {
                Fault::Drop => return,
                Fault::Delay(d) => std::thread::sleep(d),
                Fault::Clear | Fault::Stall => {}
            }
            if to.write_all(&buf[..n]).is_err() {
                return;
            }
        }
    });
}

/// The end of a faulty connection does nothing: what a cut link does to
/// the worker's side.
struct NoEnd;

impl EndLink for NoEnd {
    fn end(self: Box<Self>, _kill: bool) -> String {
        String::new()
    }
}

impl Transport for Faulty {
    fn slots(&self) -> usize {
        1
    }

    fn place(&self, _slot: usize) -> String {
        "faulty".into()
    }

    fn resumes(&self) -> bool {
        self.again != Again::Never
    }

    fn reconnect(&self, slot: usize, wait: &Wait<'_>) -> Result<Link, NoLink> {
        match self.again {
            Again::Link => self.connect(slot, wait).map_err(NoLink::Again),
            Again::Never | Again::Unreachable => Err(NoLink::Again(Lost {
                place: "faulty".into(),
                reason: "is out of reach".into(),
            })),
        }
    }

    fn connect(&self, _slot: usize, _wait: &Wait<'_>) -> Result<Link, Lost> {
        // A socket pair as a pipe: what one end writes the other reads.
        let pipe = || UnixStream::pair().unwrap();
        let shared = Faulty::clear();
        *self.shared.lock().unwrap() = shared.clone();
        // Coordinator -> link -> worker, and back, each leg a pipe.
        let ((link_in, coordinator_writes), (worker_reads, link_out)) = (pipe(), pipe());
        relay(link_in, link_out, shared.clone());
        let ((link_back_in, worker_writes), (coordinator_reads, link_back_out)) = (pipe(), pipe());
        relay(link_back_in, link_back_out, shared);
        let options = WorkerOptions {
            cache: self.cache.clone(),
            unsandboxed: false,
        };
        let worker =
            std::thread::spawn(move || serve(worker_reads, Box::new(worker_writes), &options));
        self.workers.lock().unwrap().push(worker);
        Ok(Link {
            from_worker: Box::new(coordinator_reads),
            to_worker: Box::new(coordinator_writes),
            worker_slot: 0,
            end: Box::new(NoEnd),
        })
    }
}

/// An executor on `t` whose agent runs `script`, keeping in touch as
/// `link` says.
fn executor(env: &Env, t: Arc<Faulty>, script: &str, link: WorkerLink) -> RemoteExecutor {
    let spec = AgentsSpec {
        run: Some(AgentSpec::cmd(format!("sh -c '{script}'"))),
        by_family: Vec::new(),
    };
    let agents = Agents::build(&spec).unwrap();
    let repo = Repo::open(&env.repo()).unwrap();
    RemoteExecutor::new(
        t,
        repo,
        agents,
        WorkerSettings::from(&planwright_testkit::settings()),
    )
    .unwrap()
    .with_link(link)
}

/// Attempt 1 of T1, with `fault` put on the link once its agent started,
/// and `cancel` then cancelled too if `interrupt`.
fn attempt_with(
    exec: &RemoteExecutor,
    env: &Env,
    t: &Faulty,
    fault: Fault,
    interrupt: bool,
) -> Candidate {
    let cancel = Cancel::default();
    let progress = |phase: Phase| {
        if phase == Phase::Agent {
            t.link().set(fault);
            if interrupt {
                cancel.cancel();
            }
        }
        Ok(())
    };
    exec.attempt(0, &input(env, "T1", 1), &progress, &cancel)
        .unwrap()
}

const WAITS: &str = "sleep 600";

#[test]
fn a_stalled_worker_is_lost_and_ends_its_agent_by_itself() {
    let env = Env::new(&[("README.md", "base\n")]);
    let t = Faulty::new(&env);
    let link = link(Duration::from_millis(50), Duration::from_millis(600));
    let exec = executor(&env, t.clone(), WAITS, link);
    let candidate = attempt_with(&exec, &env, &t, Fault::Stall, false);
    let lost = candidate.lost.expect("the stalled worker is lost");
    assert!(lost.reason.contains("stopped answering"), "{lost}");
    // The worker, hearing nothing from its coordinator, ended the agent
    // (every process of an attempt has ended when the attempt returns) and
    // its own conversation.
    let ended = t
        .worker_end()
        .expect_err("the worker gave its coordinator up");
    assert!(ended.to_string().contains("said nothing"), "{ended}");
    t.link().set(Fault::Drop);
}

#[test]
fn ctrl_c_during_a_stall_ends_the_attempt() {
    let env = Env::new(&[("README.md", "base\n")]);
    let t = Faulty::new(&env);
    // Silence alone would take an hour to count.
    let link = link(Duration::from_secs(1800), Duration::from_secs(3600));
    let exec = executor(&env, t.clone(), WAITS, link);
    let candidate = attempt_with(&exec, &env, &t, Fault::Stall, true);
    assert_eq!(candidate.report.outcome, AgentOutcome::Cancelled);
    assert!(candidate.lost.is_none(), "{candidate:?}");
    // The link comes back closed: the worker hears its end and stops.
    t.link().set(Fault::Drop);
    t.worker_end().unwrap();
}

#[test]
fn a_dropped_connection_is_a_lost_worker() {
    let env = Env::new(&[("README.md", "base\n")]);
    let t = Faulty::new(&env);
    let exec = executor(&env, t.clone(), WAITS, WorkerLink::default());
    let candidate = attempt_with(&exec, &env, &t, Fault::Drop, false);
    let lost = candidate.lost.expect("the worker is lost");
    assert!(lost.reason.contains("closed the connection"), "{lost}");
    t.worker_end().unwrap();
}

#[test]
fn a_slow_link_both_ways_loses_nothing() {
    let env = Env::new(&[("README.md", "base\n")]);
    let t = Faulty::new(&env);
    let link = link(Duration::from_millis(100), Duration::from_secs(20));
    let exec = executor(&env, t.clone(), "echo slow > slow.txt", link);
    let delay = Fault::Delay(Duration::from_millis(30));
    let candidate = attempt_with(&exec, &env, &t, delay, false);
    assert!(candidate.lost.is_none(), "{candidate:?}");
    assert_eq!(candidate.report.outcome, AgentOutcome::Finished);
    assert!(candidate.commit.is_some(), "{candidate:?}");
    t.link().set(Fault::Clear);
    t.worker_end().unwrap();
}

/// The agent says it started, waits for `go` beside it (the sandbox
/// shows it its workspace, not this test's folders), then writes its file.
const WAITS_FOR_GO: &str =
    "touch started.txt; while [ ! -e go ]; do sleep 0.05; done; rm -f started.txt go; echo resumed > resumed.txt";

/// Lets the agent of [`WAITS_FOR_GO`] under `dir` go on.
fn go(dir: &std::path::Path) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == "started.txt") {
            std::fs::write(path.with_file_name("go"), "").unwrap();
        } else if entry.file_type().unwrap().is_dir() {
            go(&path);
        }
    }
}

/// The connection drops while the agent works; the transport can reach
/// the worker again, so a new connection resumes the attempt (the worker
/// kept it), and only then does the agent finish: the candidate arrives
/// over the new connection, no worker is lost, and both workers (the one
/// that kept the attempt and the one that relayed to it) end cleanly.
#[test]
fn a_dropped_connection_is_resumed_over_a_new_one_and_the_attempt_lands() {
    let env = Env::new(&[("README.md", "base\n")]);
    let t = Faulty::reconnecting(&env, Again::Link);
    let link = link(Duration::from_millis(50), Duration::from_secs(600));
    let cache = t.cache.clone();
    let exec = executor(&env, t.clone(), WAITS_FOR_GO, link);
    let (tx, resumed) = std::sync::mpsc::channel();
    let tx = Mutex::new(tx);
    let mut input = input(&env, "T1", 1);
    input.resumed_sink = Some(planwright_engine::ResumedSink(Arc::new(
        move |why: &str, _after| {
            go(&cache);
            tx.lock().unwrap().send(why.to_string()).unwrap();
        },
    )));
    let cancel = Cancel::default();
    let progress = |phase: Phase| {
        if phase == Phase::Agent {
            t.link().set(Fault::Drop);
        }
        Ok(())
    };
    let candidate = exec.attempt(0, &input, &progress, &cancel).unwrap();
    assert!(candidate.lost.is_none(), "{candidate:?}");
    assert_eq!(candidate.report.outcome, AgentOutcome::Finished);
    assert!(candidate.commit.is_some(), "{candidate:?}");
    assert_eq!(resumed.try_recv().unwrap(), "closed the connection");
    assert!(resumed.try_recv().is_err(), "resumed once");
    drop(exec);
    t.worker_end().unwrap();
    t.worker_end().unwrap();
}

/// The connection drops and no new one reaches the worker: past
/// `lost_after` the worker is lost, no strike, saying so, and the worker
/// that kept the attempt for that long ends its agent and itself.
#[test]
fn a_dropped_connection_no_new_one_reaches_is_lost_after_the_bound() {
    let env = Env::new(&[("README.md", "base\n")]);
    let t = Faulty::reconnecting(&env, Again::Unreachable);
    let link = link(Duration::from_millis(50), Duration::from_millis(600));
    let exec = executor(&env, t.clone(), WAITS, link);
    let candidate = attempt_with(&exec, &env, &t, Fault::Drop, false);
    let lost = candidate.lost.expect("the worker is lost");
    assert!(
        lost.reason.contains(
            "closed the connection, and no new one resumed the attempt within 600ms (`[executor] lost_after`; the last try: is out of reach)"
        ),
        "{lost}"
    );
    let ended = t
        .worker_end()
        .expect_err("the worker gave its coordinator up");
    assert!(ended.to_string().contains("said nothing"), "{ended}");
}

/// A worker link with these times, the versions required to match.
fn link(heartbeat: Duration, lost_after: Duration) -> WorkerLink {
    WorkerLink {
        heartbeat,
        lost_after,
        allow_version_skew: false,
        ..WorkerLink::default()
    }
}
