//! The coordinator's side of an attempt whose connection broke
//! (docs/scaling.md, "A broken connection"): a new connection to the same
//! machine through the transport, tried again with back-off while the
//! worker keeps the attempt (`[executor] lost_after`); `resume` on it,
//! and the conversation goes on where each side's acknowledgements say.

use super::protocol::{self, FromWorker, ToWorker};
use super::transport::{EndLink, Link, NoLink, Transport, Wait};
use super::wire::{self, Heard, Outbox};
use planwright_os::process::Cancel;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The waits between tries of a new connection: short first (an API
/// server restarts in seconds), then every 8 s, within `lost_after`.
const BACKOFF: [Duration; 5] = [
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
];
const BACKOFF_LAST: Duration = Duration::from_secs(8);

/// How often a wait looks for Ctrl-C.
const POLL: Duration = Duration::from_millis(100);

/// What a new connection of one attempt needs.
pub(super) struct Reconnect<'a> {
    pub transport: &'a dyn Transport,
    pub slot: usize,
    /// The attempt's `resume`, its `ack` filled in when sent.
    pub resume: ToWorker,
    /// How long the worker keeps the attempt after its connection broke.
    pub lost_after: Duration,
    pub cancel: &'a Cancel,
    pub wait: Wait<'a>,
}

/// A connection that took a broken one's place.
pub(super) struct Rejoined {
    /// What the worker says on it.
    pub heard: Receiver<Heard<FromWorker>>,
    /// Its end.
    pub end: Box<dyn EndLink>,
}

/// How one try of a new connection failed.
enum Try {
    /// Another may succeed: why this one did not.
    Again(String),
    /// None will: the worker keeps no such attempt, its pod is gone.
    Never(String),
}

impl Reconnect<'_> {
    /// A new connection on which the worker resumed the attempt, `out`
    /// writing to it from what the worker heard; `Err(why)` (after "the
    /// worker at PLACE") once none came within `lost_after` of now, or
    /// none can, or Ctrl-C.
    pub(super) fn rejoin(&self, out: &Outbox) -> Result<Rejoined, String> {
        let until = Instant::now() + self.lost_after;
        let mut waits = BACKOFF.iter().copied();
        loop {
            let last = match self.once(out, until) {
                Ok(rejoined) => return Ok(rejoined),
                Err(Try::Never(why)) => return Err(why),
                Err(Try::Again(why)) => why,
            };
            let wait = waits.next().unwrap_or(BACKOFF_LAST);
            if !self.pause(wait, until) {
                return Err(format!(
                    "closed the connection, and no new one resumed the attempt within {} (`[executor] lost_after`; the last try: {last})",
                    wire::span(self.lost_after)
                ));
            }
        }
    }

    /// Sleeps `wait`; `false` when `until` comes first, or Ctrl-C.
    fn pause(&self, wait: Duration, until: Instant) -> bool {
        let end = Instant::now() + wait;
        while Instant::now() < end {
            if self.cancel.is_cancelled() || Instant::now() >= until {
                return false;
            }
            std::thread::sleep(POLL.min(end.saturating_duration_since(Instant::now())));
        }
        !self.cancel.is_cancelled() && Instant::now() < until
    }

    /// One try: a connection, `resume`, and the worker's `resumed`.
    fn once(&self, out: &Outbox, until: Instant) -> Result<Rejoined, Try> {
        let Link {
            from_worker,
            mut to_worker,
            end,
            ..
        } = match self.transport.reconnect(self.slot, &self.wait) {
            Ok(link) => link,
            Err(NoLink::Again(lost)) => return Err(Try::Again(lost.reason)),
            Err(NoLink::Gone(lost)) => return Err(Try::Never(lost.reason)),
        };
        let mut resume = self.resume.clone();
        if let ToWorker::Resume { ack, .. } = &mut resume {
            *ack = out.heard();
        }
        let heard = wire::listen::<FromWorker>(from_worker);
        if let Err(e) = protocol::send(&mut to_worker, &resume, &[]) {
            end.leave();
            return Err(Try::Again(e.to_string()));
        }
        match self.answer(&heard, until) {
            Ok(ack) => match out.resume(to_worker, ack, Vec::new()) {
                Ok(()) => Ok(Rejoined { heard, end }),
                Err(e) => {
                    end.leave();
                    Err(Try::Never(format!("resumed the attempt wrongly: {e}")))
                }
            },
            Err(e) => {
                end.leave();
                Err(e)
            }
        }
    }

    /// The worker's answer to `resume`: what it heard, or why not.
    fn answer(&self, heard: &Receiver<Heard<FromWorker>>, until: Instant) -> Result<u64, Try> {
        loop {
            if self.cancel.is_cancelled() {
                return Err(Try::Never("closed the connection".into()));
            }
            if Instant::now() >= until {
                return Err(Try::Again("no answer to `resume`".into()));
            }
            match heard.recv_timeout(POLL) {
                Ok(Ok((FromWorker::Resumed { ack }, _))) => return Ok(ack),
                Ok(Ok((FromWorker::Refused { reason, .. }, _))) => {
                    return Err(Try::Never(format!(
                        "closed the connection, and could not resume the attempt: {reason}"
                    )))
                }
                Ok(Ok((other, _))) => {
                    let what = serde_json::to_value(&other)
                        .ok()
                        .and_then(|v| v["type"].as_str().map(String::from))
                        .unwrap_or_default();
                    return Err(Try::Never(format!("answered `resume` with `{what}`")));
                }
                Ok(Err(e)) => return Err(Try::Again(e.to_string())),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Try::Again("the connection closed".into()))
                }
            }
        }
    }
}
