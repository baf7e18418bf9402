//! The two directions of a connection, each on a thread of its own, so
//! that neither side of the worker protocol ever blocks on its peer: a
//! peer that stops reading (stopped, cut off) fills a queue, not this
//! side's thread, and a peer that stops writing is noticed by the
//! silence of its heartbeats, not by a read that never returns. Every
//! transport's streams pass through here.

use super::journal::{Journal, ResumeError};
use super::protocol::{self, receive, Message, WireError};
use std::collections::VecDeque;
use std::io::{BufReader, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Bytes queued for a peer beyond which a sender waits: backpressure for
/// a peer that reads slowly, bounded memory for one that stopped.
const QUEUE_LIMIT: usize = 8 << 20;

/// Messages to a peer, written by a thread of their own. Clones share the
/// queue.
#[derive(Clone)]
pub(super) struct Outbox {
    shared: Arc<(Mutex<Queue>, Condvar)>,
    /// How long a sender waits for room, in ms, before the peer is given
    /// up on.
    patience: Arc<AtomicU64>,
    /// The number of the last journaled message heard from the peer: the
    /// `ack` of this side's heartbeats.
    heard: Arc<AtomicU64>,
}

#[derive(Default)]
struct Queue {
    items: VecDeque<Vec<u8>>,
    bytes: usize,
    /// No more messages: the writer ends once the queue is written.
    closed: bool,
    /// The peer is gone or given up on: nothing more is written.
    dead: bool,
    /// The writer thread ended (the stream is closed).
    ended: bool,
    /// The journaled messages the peer has not acknowledged.
    journal: Journal,
    /// The stream being written: a writer of an earlier one (the
    /// connection broke and was resumed) changes nothing when it ends.
    stream: u64,
    /// A stream that fails detaches the outbox rather than killing it: the
    /// attempt may go on over a new connection ([`Outbox::keep`]).
    keep: bool,
    /// The stream failed while kept: messages are journaled, not queued,
    /// until [`Outbox::resume`] gives a new one.
    detached: bool,
}

impl Outbox {
    /// An outbox writing to `to` on a thread of its own, which ends (and
    /// closes `to`) once the outbox is closed and written, or abandoned.
    pub(super) fn new(to: Box<dyn Write + Send>) -> Outbox {
        let lost_after = planwright_config::WorkerLink::default().lost_after;
        let outbox = Outbox {
            shared: Arc::new((Mutex::new(Queue::default()), Condvar::new())),
            patience: Arc::new(AtomicU64::new(lost_after.as_millis() as u64)),
            heard: Arc::default(),
        };
        let writer = outbox.clone();
        std::thread::spawn(move || writer.write_all(0, to));
        outbox
    }

    /// One more journaled message was heard from the peer.
    pub(super) fn heard_one(&self) {
        self.heard.fetch_add(1, Ordering::Relaxed);
    }

    /// The number of the last journaled message heard from the peer.
    pub(super) fn heard(&self) -> u64 {
        self.heard.load(Ordering::Relaxed)
    }

    /// The peer heard this side's journaled messages up to `ack`: they
    /// need not be kept.
    pub(super) fn acknowledged(&self, ack: u64) -> Result<(), ResumeError> {
        self.lock().journal.acknowledged(ack)
    }

    /// From now on a stream that fails detaches the outbox instead of
    /// giving the peer up: what is sent is journaled until
    /// [`Outbox::resume`] (an attempt that can go on over a new
    /// connection).
    pub(super) fn keep(&self) {
        self.lock().keep = true;
    }

    /// Whether the peer has not acknowledged everything journaled.
    pub(super) fn unacknowledged(&self) -> bool {
        self.lock().journal.unacknowledged() > 0
    }

    /// Goes on writing to `to`, a new connection to the same peer, which
    /// heard up to `ack`: `first` (a framed message, unless empty), what it
    /// missed, then what is sent from now.
    pub(super) fn resume(
        &self,
        to: Box<dyn Write + Send>,
        ack: u64,
        first: Vec<u8>,
    ) -> Result<(), ResumeError> {
        let mut q = self.lock();
        let mut items: VecDeque<Vec<u8>> = q.journal.missed(ack)?.into();
        if !first.is_empty() {
            items.push_front(first);
        }
        q.stream += 1;
        q.bytes = items.iter().map(Vec::len).sum();
        q.items = items;
        (q.dead, q.closed, q.ended, q.detached) = (false, false, false, false);
        let (writer, stream) = (self.clone(), q.stream);
        std::thread::spawn(move || writer.write_all(stream, to));
        self.shared.1.notify_all();
        Ok(())
    }

    /// Gives the peer `patience` to make room in a full queue before it is
    /// given up on (`[executor] lost_after`).
    pub(super) fn patience(&self, patience: Duration) {
        let ms = patience.as_millis().max(1) as u64;
        self.patience.store(ms, Ordering::Relaxed);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.shared.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `msg` and its payload; waits while the queue is full. An
    /// error once the peer is gone.
    pub(super) fn send<T: serde::Serialize + Message>(
        &self,
        msg: &T,
        payload: &[u8],
    ) -> Result<(), WireError> {
        self.push(msg, payload, true)
    }

    /// Queues a small message (a heartbeat, a cancel) without waiting for
    /// room: it must not wait behind a peer that stopped reading.
    pub(super) fn nudge<T: serde::Serialize + Message>(&self, msg: &T) -> Result<(), WireError> {
        self.push(msg, &[], false)
    }

    fn push<T: serde::Serialize + Message>(
        &self,
        msg: &T,
        payload: &[u8],
        wait: bool,
    ) -> Result<(), WireError> {
        let mut bytes = Vec::new();
        protocol::send(&mut bytes, msg, payload)?;
        let patience = Duration::from_millis(self.patience.load(Ordering::Relaxed));
        let until = Instant::now() + patience;
        let mut q = self.lock();
        while wait && q.bytes > QUEUE_LIMIT && !q.dead {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                // A peer that read nothing for so long is gone.
                drop(q);
                self.abandon();
                return Err(WireError::Closed);
            }
            q = (self.shared.1.wait_timeout(q, left))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        if q.dead || q.closed {
            return Err(WireError::Closed);
        }
        if msg.journaled() {
            q.journal.record(&bytes);
        }
        if q.detached {
            // Kept for a new connection; a heartbeat has no one to reach.
            return Ok(());
        }
        q.bytes += bytes.len();
        q.items.push_back(bytes);
        self.shared.1.notify_all();
        Ok(())
    }

    /// No more messages: what is queued is still written, then the stream
    /// is closed (the peer reads its end).
    pub(super) fn close(&self) {
        self.lock().closed = true;
        self.shared.1.notify_all();
    }

    /// The peer is given up on: nothing more is written, and senders
    /// waiting on a full queue return.
    pub(super) fn abandon(&self) {
        let mut q = self.lock();
        Self::give_up(&mut q);
        self.shared.1.notify_all();
    }

    fn give_up(q: &mut Queue) {
        q.dead = true;
        q.items.clear();
        q.bytes = 0;
    }

    /// Closes the outbox and waits at most `limit` for the writer to end
    /// (what is queued written, or the peer gone); `false` if it did not
    /// (the peer stopped reading).
    pub(super) fn drain(&self, limit: Duration) -> bool {
        self.close();
        let until = Instant::now() + limit;
        let mut q = self.lock();
        while !q.ended {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            q = (self.shared.1.wait_timeout(q, left))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// The writer thread of the `stream`th stream: each queued message in
    /// turn, until the stream fails or a resumption replaces it.
    fn write_all(&self, stream: u64, mut to: Box<dyn Write + Send>) {
        loop {
            let item = {
                let mut q = self.lock();
                loop {
                    if q.dead || q.stream != stream {
                        break None;
                    }
                    if let Some(item) = q.items.pop_front() {
                        q.bytes -= item.len();
                        self.shared.1.notify_all();
                        break Some(item);
                    }
                    if q.closed {
                        break None;
                    }
                    q = (self.shared.1.wait(q)).unwrap_or_else(|e| e.into_inner());
                }
            };
            let Some(item) = item else { break };
            if to.write_all(&item).and_then(|()| to.flush()).is_err() {
                let mut q = self.lock();
                if q.stream == stream && q.keep {
                    q.detached = true;
                    q.items.clear();
                    q.bytes = 0;
                } else if q.stream == stream {
                    Self::give_up(&mut q);
                }
                self.shared.1.notify_all();
                break;
            }
        }
        // Closing the stream is how a worker learns its coordinator ended.
        drop(to);
        let mut q = self.lock();
        if q.stream == stream {
            q.ended = true;
        }
        self.shared.1.notify_all();
    }
}

/// What a peer sent: a message and its payload, or why nothing more comes.
pub(super) type Heard<T> = Result<(T, Vec<u8>), WireError>;

/// Reads `from`'s messages (each with its payload) on a thread of its
/// own into `to`, until the stream ends, a message is not the protocol,
/// or `to`'s receiver is gone; the last thing sent is the error.
pub(super) fn inbox<T>(from: Box<dyn Read + Send>, to: Sender<Heard<T>>)
where
    T: Message + Send + 'static,
{
    std::thread::spawn(move || {
        let mut from = BufReader::new(from);
        loop {
            let heard = receive::<T>(&mut from).and_then(|msg| {
                let mut payload = Vec::new();
                if let Some(bytes) = msg.payload_len() {
                    protocol::payload(&mut from, bytes, &mut payload)?;
                }
                Ok((msg, payload))
            });
            let end = heard.is_err();
            if to.send(heard).is_err() || end {
                return;
            }
        }
    });
}

/// An inbox of `from`'s messages.
pub(super) fn listen<T>(from: Box<dyn Read + Send>) -> Receiver<Heard<T>>
where
    T: Message + Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::channel();
    inbox(from, tx);
    rx
}

/// A length of time in a message: `30s`, or `200ms` under a second.
pub(super) fn span(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}s", d.as_secs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::remote::protocol::{FromWorker, ToWorker};

    /// A stream that takes nothing: a peer that stopped reading.
    struct Stuck(std::sync::mpsc::Receiver<()>);

    impl Write for Stuck {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            let _ = self.0.recv();
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_peer_that_stops_reading_blocks_no_sender_once_abandoned() {
        let (_keep, stuck) = std::sync::mpsc::channel();
        let out = Outbox::new(Box::new(Stuck(stuck)));
        let big = vec![0u8; QUEUE_LIMIT / 2];
        let msg = FromWorker::Log {
            file: "a".into(),
            bytes: big.len() as u64,
        };
        // The writer holds the first; the queue takes two more before it
        // is full, then a sender waits, until the peer is given up on.
        for _ in 0..3 {
            out.send(&msg, &big).unwrap();
        }
        let waiting = {
            let out = out.clone();
            let msg = msg.clone();
            std::thread::spawn(move || out.send(&msg, &big))
        };
        out.abandon();
        assert!(matches!(waiting.join().unwrap(), Err(WireError::Closed)));
        assert!(out.send(&ToWorker::Cancel, &[]).is_err());
    }

    #[test]
    fn messages_and_payloads_arrive_in_order_and_the_end_is_heard() {
        let (r, mut w) = std::os::unix::net::UnixStream::pair().unwrap();
        let heard = listen::<FromWorker>(Box::new(r));
        let log = FromWorker::Log {
            file: "a".into(),
            bytes: 3,
        };
        protocol::send(&mut w, &log, b"abc").unwrap();
        protocol::send(&mut w, &FromWorker::Heartbeat { ack: 0 }, &[]).unwrap();
        drop(w);
        assert_eq!(heard.recv().unwrap().unwrap(), (log, b"abc".to_vec()));
        let beat = FromWorker::Heartbeat { ack: 0 };
        assert_eq!(heard.recv().unwrap().unwrap().0, beat);
        assert!(matches!(heard.recv().unwrap(), Err(WireError::Closed)));
    }

    fn log(file: &str) -> FromWorker {
        FromWorker::Log {
            file: file.into(),
            bytes: 1,
        }
    }

    #[test]
    fn a_resumed_outbox_sends_what_the_peer_missed_then_goes_on() {
        let (r, w) = std::os::unix::net::UnixStream::pair().unwrap();
        let out = Outbox::new(Box::new(w));
        let first = listen::<FromWorker>(Box::new(r));
        for f in ["a", "b", "c"] {
            out.send(&log(f), b"x").unwrap();
        }
        // Heartbeats are not journaled: never sent again.
        out.nudge(&FromWorker::Heartbeat { ack: 0 }).unwrap();
        for f in ["a", "b", "c"] {
            assert_eq!(first.recv().unwrap().unwrap().0, log(f));
        }
        out.acknowledged(1).unwrap();
        // The peer heard `a` and `b` before its stream broke: `c` again on
        // the new one, then what is sent from now.
        let (r, w) = std::os::unix::net::UnixStream::pair().unwrap();
        let second = listen::<FromWorker>(Box::new(r));
        out.resume(Box::new(w), 2, Vec::new()).unwrap();
        // The first stream ends, its heartbeat written or dropped.
        while let Ok((heard, _)) = first.recv().unwrap() {
            assert_eq!(heard, FromWorker::Heartbeat { ack: 0 });
        }
        out.send(&log("d"), b"x").unwrap();
        out.close();
        for f in ["c", "d"] {
            assert_eq!(second.recv().unwrap().unwrap(), (log(f), b"x".to_vec()));
        }
        assert!(matches!(second.recv().unwrap(), Err(WireError::Closed)));
        // A resumption from more than was sent is refused.
        let (_r, w) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(
            out.resume(Box::new(w), 5, Vec::new()),
            Err(ResumeError::Ahead { ack: 5, sent: 4 })
        );
    }
}
