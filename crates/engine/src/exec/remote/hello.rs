//! Preflight of remote executors: every place's worker answers `hello`
//! with this protocol version and build, says whether it can confine
//! agents (or was started `--unsandboxed`, for a run with `[sandbox] mode
//! = "off"`), and finds the agents' programs, before any agent starts.

use super::protocol::{FromWorker, SandboxState, ToWorker, WireError, PROTOCOL};
use super::transport::{Lost, Transport};
use super::wire::{self, Heard, Outbox};
use super::worker::version;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// What a worker said of itself at `hello`, and of the programs asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Greeting {
    /// Its planwright version (the build, with its commit).
    pub planwright: String,
    /// How it confines agents.
    pub sandbox: SandboxState,
    /// Whether it was started `--unsandboxed`.
    pub unsandboxed: bool,
    /// The programs asked for that it cannot find on its `PATH`.
    pub missing: Vec<String>,
}

/// Says `hello` to the worker of `slot` and ends the connection: its
/// greeting, or why it could not be had (unreachable, another protocol).
pub fn hello(transport: &dyn Transport, slot: usize) -> Result<Greeting, Lost> {
    let limit = planwright_config::WorkerLink::default().lost_after;
    greet(transport, slot, &[], limit)
}

/// Says `hello` to the worker of `slot`, asks which of `programs` it
/// lacks, and ends the connection; a worker silent for `limit` is lost.
pub fn greet(
    transport: &dyn Transport,
    slot: usize,
    programs: &[String],
    limit: Duration,
) -> Result<Greeting, Lost> {
    let place = transport.place(slot);
    let lost = |reason: String| Lost {
        place: place.clone(),
        reason,
    };
    // Preflight's own wait: bounded by the pod's start, not cancelled.
    let never = planwright_os::process::Cancel::default();
    let link = transport.connect(slot, &super::transport::Wait::quiet(&never))?;
    let ours = ToWorker::Hello {
        protocol: PROTOCOL,
        planwright: version().into(),
    };
    // A worker that cannot be had closes its input before reading: what
    // it printed (and its standard error) says more than the broken pipe.
    let out = Outbox::new(link.to_worker);
    let _ = out.send(&ours, &[]);
    let heard = wire::listen::<FromWorker>(link.from_worker);
    let mut answer = within(&heard, limit);
    let speaks = matches!(&answer, Ok(FromWorker::Hello { protocol, .. }) if *protocol == PROTOCOL);
    let mut missing = Vec::new();
    if speaks && !programs.is_empty() {
        let check = ToWorker::Check {
            programs: programs.to_vec(),
        };
        let _ = out.send(&check, &[]);
        match within(&heard, limit) {
            Ok(FromWorker::Checked { missing: m }) => missing = m,
            Ok(_) => answer = Err(WireError::Malformed("not `checked`".into(), String::new())),
            Err(e) => answer = Err(e),
        }
    }
    let timed_out =
        matches!(&answer, Err(WireError::Io(e)) if e.kind() == std::io::ErrorKind::TimedOut);
    // Closing its input ends the worker.
    out.close();
    let said = link.end.end(timed_out);
    let said = match said.trim() {
        "" => String::new(),
        s => format!("; it said: {}", planwright_plan::words::inert(s)),
    };
    match answer {
        Ok(FromWorker::Hello {
            protocol,
            planwright,
            sandbox,
            unsandboxed,
        }) if protocol == PROTOCOL => Ok(Greeting {
            planwright,
            sandbox,
            unsandboxed,
            missing,
        }),
        Ok(FromWorker::Hello {
            protocol,
            planwright,
            ..
        }) => Err(lost(format!(
            "speaks worker protocol {protocol} (planwright {planwright}), this planwright {PROTOCOL} ({})",
            version()
        ))),
        Ok(_) => Err(lost(format!("did not answer `hello`{said}"))),
        Err(e) => Err(lost(format!("{e}{said}"))),
    }
}

/// The next message but heartbeats, if one comes within `limit`.
fn within(heard: &Receiver<Heard<FromWorker>>, limit: Duration) -> Result<FromWorker, WireError> {
    loop {
        return match heard.recv_timeout(limit) {
            Ok(Ok((FromWorker::Heartbeat { .. }, _))) => continue,
            Ok(heard) => heard.map(|(msg, _)| msg),
            Err(RecvTimeoutError::Timeout) => Err(WireError::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("said nothing for {}s", limit.as_secs()),
            ))),
            Err(RecvTimeoutError::Disconnected) => Err(WireError::Closed),
        };
    }
}

/// The first slot of each place, in slot order: preflight checks each
/// machine once.
pub fn places(transport: &dyn Transport) -> Vec<(usize, String)> {
    let mut seen: Vec<(usize, String)> = Vec::new();
    for slot in 0..transport.slots() {
        let place = transport.place(slot);
        if !seen.iter().any(|(_, p)| *p == place) {
            seen.push((slot, place));
        }
    }
    seen
}

/// Why a worker of another build is refused, after "the worker at PLACE".
pub(super) fn skewed(theirs: &str) -> String {
    format!(
        "is planwright {theirs}, this is planwright {}: another build may judge and sandbox differently; install this build there, or set `[executor] allow_version_skew = true`",
        version()
    )
}
