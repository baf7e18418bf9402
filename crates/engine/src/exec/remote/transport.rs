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
    /// Whether [`Transport::reconnect`] can reach the worker of an attempt
    /// whose connection broke: then the worker keeps the attempt a while
    /// for a new connection (docs/scaling.md, "A broken connection").
    fn resumes(&self) -> bool {
        false
    }
    /// A new connection to the machine of `slot`'s attempt, whose
    /// connection broke while its worker may still run it: a new worker
    /// started there, which the coordinator tells `resume`. Only called
    /// when [`Transport::resumes`]; an error is tried again until the
    /// worker's bound (`lost_after`) has passed.
    fn reconnect(&self, slot: usize, _wait: &Wait<'_>) -> Result<Link, NoLink> {
        Err(NoLink::Gone(Lost {
            place: self.place(slot),
            reason: "cannot be reached again over this transport".into(),
        }))
    }
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
    /// Lets go of a connection that broke and was replaced by a new one,
    /// leaving alone what runs at its far end (the worker keeping the
    /// attempt, its pod): what is left of the connection ends by itself.
    fn leave(self: Box<Self>)
    where
        Self: 'static,
    {
        std::thread::spawn(move || self.end(false));
    }
}

// `Lost`, a worker that could not be reached or went away, is the
// executor contract's (a candidate carries it), so it lives beside
// `Candidate` and this folder imports it, never the other way.
pub use crate::exec::executor::Lost;

/// Why [`Transport::reconnect`] gave no connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoLink {
    /// Trying again may reach the worker (its machine or the API server
    /// out of reach for a moment).
    Again(Lost),
    /// The worker is gone for good (its pod deleted or ended).
    Gone(Lost),
}
