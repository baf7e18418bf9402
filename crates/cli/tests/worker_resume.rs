//! A broken connection to a `process` worker is resumed (docs/scaling.md,
//! "A broken connection"): the coordinator's pipes to a real `planwright
//! worker` are cut while its agent works, the worker keeps the attempt, a
//! second `planwright worker` started for the new connection relays to it,
//! and the attempt lands. Waits for events (the resumption, the agent's
//! file), never for a length of time.

use planwright_engine::agent::{AgentOutcome, AgentSpec, Agents, AgentsSpec};
use planwright_engine::process::Cancel;
use planwright_engine::remote::protocol::WorkerSettings;
use planwright_engine::remote::Wait;
use planwright_engine::remote::{CommandTransport, Link, Lost, NoLink, RemoteExecutor, Transport};
use planwright_engine::{Executor, Phase, Repo, ResumedSink};
use planwright_testkit::contract::input;
use planwright_testkit::{build_of, Env};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// `process` workers whose first connection passes through pipes of this
/// test's, which [`Cutting::cut`] closes both ways while the worker runs
/// on: what a broken stream does to a worker that stays.
struct Cutting {
    inner: CommandTransport,
    /// The first connection's two legs on this side, once made.
    legs: Mutex<Vec<UnixStream>>,
}

impl Cutting {
    fn cut(&self) {
        for leg in self.legs.lock().unwrap().drain(..) {
            leg.shutdown(std::net::Shutdown::Both).unwrap();
        }
    }
}

/// Copies `from` to `to` until either ends.
fn pump(mut from: impl Read + Send + 'static, mut to: impl Write + Send + 'static) {
    std::thread::spawn(move || {
        let mut buf = vec![0; 1 << 16];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) if to.write_all(&buf[..n]).and(to.flush()).is_err() => return,
                Ok(_) => {}
            }
        }
    });
}

impl Transport for Cutting {
    fn slots(&self) -> usize {
        1
    }

    fn place(&self, slot: usize) -> String {
        self.inner.place(slot)
    }

    fn connect(&self, slot: usize, wait: &Wait<'_>) -> Result<Link, Lost> {
        let link = self.inner.connect(slot, wait)?;
        // Coordinator <-> this side's socket pair <-> the worker's pipes.
        let (to_worker, their_in) = UnixStream::pair().unwrap();
        let (from_worker, their_out) = UnixStream::pair().unwrap();
        pump(their_in.try_clone().unwrap(), link.to_worker);
        pump(link.from_worker, their_out.try_clone().unwrap());
        self.legs.lock().unwrap().extend([their_in, their_out]);
        Ok(Link {
            from_worker: Box::new(from_worker),
            to_worker: Box::new(to_worker),
            worker_slot: link.worker_slot,
            end: link.end,
        })
    }

    fn resumes(&self) -> bool {
        self.inner.resumes()
    }

    fn reconnect(&self, slot: usize, wait: &Wait<'_>) -> Result<Link, NoLink> {
        self.inner.reconnect(slot, wait)
    }
}

/// Writes `go` beside each `started.txt` under `dir`, so the agent goes
/// on; whether there was one.
fn go(dir: &std::path::Path) -> bool {
    let mut found = false;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == "started.txt") {
            std::fs::write(path.with_file_name("go"), "").unwrap();
            found = true;
        } else if entry.file_type().unwrap().is_dir() {
            found |= go(&path);
        }
    }
    found
}

#[test]
fn a_process_workers_cut_pipes_are_resumed_by_a_new_worker_and_the_attempt_lands() {
    planwright_engine::remote::set_version(&build_of(BIN));
    let env = Env::new(&[("README.md", "base\n")]);
    let cache = env.root().join("worker-cache");
    let command = [BIN, "worker", "--cache", &cache.display().to_string()].map(String::from);
    let t = Arc::new(Cutting {
        inner: CommandTransport::process(command.to_vec(), 1),
        legs: Mutex::default(),
    });
    // The agent finishes only once the attempt was resumed: it waits for
    // `go` in its workspace (the sandbox shows it nothing of this test's).
    let script =
        "touch started.txt; while [ ! -e go ]; do sleep 0.05; done; rm -f started.txt go; echo resumed > resumed.txt";
    let agents = Agents::build(&AgentsSpec {
        run: Some(AgentSpec::cmd(format!("sh -c '{script}'"))),
        by_family: Vec::new(),
    })
    .unwrap();
    let repo = Repo::open(&env.repo()).unwrap();
    let exec = RemoteExecutor::new(
        t.clone(),
        repo,
        agents,
        WorkerSettings::from(&planwright_testkit::settings()),
    )
    .unwrap();
    let (tx, resumed) = std::sync::mpsc::channel();
    let tx = Mutex::new(tx);
    let mut input = input(&env, "T1", 1);
    let kept = cache.clone();
    input.resumed_sink = Some(ResumedSink(Arc::new(move |why: &str, _| {
        // The cut comes as the agent phase begins, and the resumption can
        // be quicker than the agent's start: wait for it to have started.
        let kept = kept.clone();
        std::thread::spawn(move || {
            planwright_testkit::wait_until("the agent started", || go(&kept))
        });
        tx.lock().unwrap().send(why.to_string()).unwrap();
    })));
    let progress = |phase: Phase| {
        if phase == Phase::Agent {
            t.cut();
        }
        Ok(())
    };
    let c = exec
        .attempt(0, &input, &progress, &Cancel::default())
        .unwrap();
    assert!(c.lost.is_none(), "{c:?}");
    assert_eq!(c.report.outcome, AgentOutcome::Finished, "{c:?}");
    assert!(c.commit.is_some(), "{c:?}");
    assert_eq!(
        resumed.try_iter().collect::<Vec<_>>(),
        ["closed the connection"]
    );
}
