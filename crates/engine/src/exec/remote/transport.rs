//! How the coordinator reaches a `planwright worker`: a byte stream per
//! attempt, whatever carries it (a local process, `ssh`, a pod's exec).

use std::io::{Read, Write};

/// Starts workers and connects to them, one connection per attempt: a
/// local process, `ssh`, or a pod's exec stream.
pub trait Transport: Send + Sync {
    /// The slots it serves: attempts that can run at once.
    fn slots(&self) -> usize;
    /// Where `slot`'s worker runs, for messages (`ssh build-1`,
    /// `process 2`). Slots that share a place share a machine: preflight
    /// checks each place once.
    fn place(&self, slot: usize) -> String;
    /// Where `slot`'s next attempt runs, for its `attempt_started` event
    /// and a lost worker's message: its place, and what the transport
    /// makes for the attempt there once it can name it before connecting
    /// (the pod: `kubernetes agents/planwright-...`). The slot's next
    /// [`Transport::connect`] keeps to it.
    fn attempt_place(&self, slot: usize) -> String {
        self.place(slot)
    }
    /// How to make `slot`'s worker answer when it did not, naming what
    /// starts it there: the transport's own words, for preflight.
    fn unreachable_hint(&self, _slot: usize) -> String {
        "check that the worker's place is reachable and runs `planwright worker` of this version"
            .into()
    }
    /// Starts a worker for `slot` (never two at once for one slot) and
    /// returns its stream. An error is the machine's trouble, never the
    /// ticket's: the attempt is retried elsewhere. A wait (a pod to be
    /// scheduled) says what it waits for through `wait` and ends when
    /// `wait`'s cancel is set.
    fn connect(&self, slot: usize, wait: &Wait<'_>) -> Result<Link, Lost>;
    /// Ends whatever the transport keeps running between attempts (pods,
    /// master connections). Called once, on every exit path of a run.
    fn close(&self) {}
    /// Where attempts run, for the run's record of how agents are
    /// confined: its places (`ssh build-1, ssh build-2`), or what isolates
    /// them there (a pod's runtime class).
    fn describe(&self) -> String {
        let mut places: Vec<String> = Vec::new();
        for slot in 0..self.slots() {
            let place = self.place(slot);
            if !places.contains(&place) {
                places.push(place);
            }
        }
        places.join(", ")
    }
}

/// What a connection's wait answers to.
pub struct Wait<'a> {
    /// Ctrl-C: the wait ends, the connection fails.
    pub cancel: &'a planwright_os::process::Cancel,
    /// Told what the connection waits for (`Unschedulable: 0/3 nodes are
    /// available ...`) each time that changes.
    pub waiting: &'a (dyn Fn(&str) + Sync),
}

impl<'a> Wait<'a> {
    /// A wait that says nothing and ends on `cancel`.
    pub fn quiet(cancel: &'a planwright_os::process::Cancel) -> Wait<'a> {
        Wait {
            cancel,
            waiting: &|_| {},
        }
    }
}

/// One connection to a worker.
pub struct Link {
    /// What the worker writes (its standard output).
    pub from_worker: Box<dyn Read + Send>,
    /// What the worker reads (its standard input).
    pub to_worker: Box<dyn Write + Send>,
    /// The slot's index on the worker's machine: its workspace there.
    pub worker_slot: usize,
    /// Ends the connection and what the transport started for it.
    pub end: Box<dyn EndLink>,
}

/// The end of a [`Link`].
pub trait EndLink: Send {
    /// Waits for the worker's side to end (after the coordinator closed its
    /// input), or ends it at once when `kill`; returns the last lines it
    /// wrote on its standard error (the transport's own words when a
    /// connection fails: `ssh: connect to host ...`).
    fn end(self: Box<Self>, kill: bool) -> String;
}

// `Lost`, a worker that could not be reached or went away, is the
// executor contract's (a candidate carries it), so it lives beside
// `Candidate` and this folder imports it, never the other way.
pub use crate::exec::executor::Lost;
