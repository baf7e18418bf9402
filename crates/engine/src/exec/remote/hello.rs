//! Preflight of remote executors: every place's worker answers `hello`
//! with this protocol version and, when agents are to be confined, a
//! sandbox, before any agent starts.

use super::protocol::{receive, send, FromWorker, SandboxState, ToWorker, PROTOCOL};
use super::transport::{Lost, Transport};
use super::worker::VERSION;
use std::io::BufReader;

/// What a worker said of itself at `hello`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Greeting {
    /// Its planwright version.
    pub planwright: String,
    /// How it confines agents.
    pub sandbox: SandboxState,
}

/// Says `hello` to the worker of `slot` and ends the connection: its
/// greeting, or why it could not be had (unreachable, another protocol).
pub fn hello(transport: &dyn Transport, slot: usize) -> Result<Greeting, Lost> {
    let place = transport.place(slot);
    let lost = |reason: String| Lost {
        place: place.clone(),
        reason,
    };
    let mut link = transport.connect(slot)?;
    let ours = ToWorker::Hello {
        protocol: PROTOCOL,
        planwright: VERSION.into(),
    };
    // A worker that cannot be had closes its input before reading: what
    // it printed (and its standard error) says more than the broken pipe.
    let _ = send(&mut link.to_worker, &ours, &[]);
    let answer = receive::<FromWorker>(&mut BufReader::new(&mut link.from_worker));
    // Closing its input ends the worker.
    drop(link.to_worker);
    let said = link.end.end(false);
    let said = match said.trim() {
        "" => String::new(),
        s => format!("; it said: {}", planwright_plan::words::inert(s)),
    };
    match answer {
        Ok(FromWorker::Hello {
            protocol,
            planwright,
            sandbox,
        }) if protocol == PROTOCOL => Ok(Greeting {
            planwright,
            sandbox,
        }),
        Ok(FromWorker::Hello {
            protocol,
            planwright,
            ..
        }) => Err(lost(format!(
            "speaks worker protocol {protocol} (planwright {planwright}), this planwright {PROTOCOL} ({VERSION})"
        ))),
        Ok(_) => Err(lost(format!("did not answer `hello`{said}"))),
        Err(e) => Err(lost(format!("{e}{said}"))),
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
