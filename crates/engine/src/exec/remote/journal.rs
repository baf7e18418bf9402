//! What one side of a worker connection sent that the other has not
//! acknowledged yet, so that an attempt whose connection broke can go on
//! over a new one (docs/scaling.md, "A broken connection"). Each side
//! numbers the messages it journals from 1 in the order sent; its peer's
//! `heartbeat` carries the number of the last of them it heard (`ack`),
//! and what that acknowledges is forgotten. On a new connection, `resume`
//! and `resumed` say what each side heard, and each resends the rest.

use std::collections::VecDeque;

/// Why a connection cannot be resumed from what the peer heard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum ResumeError {
    /// The peer acknowledged more than was ever sent: not this attempt's
    /// conversation.
    #[error("the peer acknowledged message {ack}, but only {sent} were sent")]
    Ahead {
        /// What the peer acknowledged.
        ack: u64,
        /// The messages sent.
        sent: u64,
    },
    /// The peer heard less than an earlier acknowledgement said.
    #[error("the peer heard up to message {ack}, but had acknowledged up to {acked} before")]
    Behind {
        /// What the peer says it heard.
        ack: u64,
        /// What it had acknowledged.
        acked: u64,
    },
}

/// The messages one side sent, as framed on the wire, kept until the peer
/// acknowledges them.
#[derive(Debug, Default)]
pub(super) struct Journal {
    /// The number of the last message sent (0: none yet).
    sent: u64,
    /// The number of the last message the peer acknowledged.
    acked: u64,
    /// Messages `acked + 1 ..= sent`, in order.
    kept: VecDeque<Vec<u8>>,
    /// Their bytes, for the bound on what is kept.
    bytes: usize,
}

impl Journal {
    /// Keeps `frame`, the next message sent; its number.
    pub(super) fn record(&mut self, frame: &[u8]) -> u64 {
        self.sent += 1;
        self.bytes += frame.len();
        self.kept.push_back(frame.to_vec());
        self.sent
    }

    /// The peer heard every message up to `ack`: forgets them.
    pub(super) fn acknowledged(&mut self, ack: u64) -> Result<(), ResumeError> {
        self.check(ack)?;
        while self.acked < ack {
            if let Some(frame) = self.kept.pop_front() {
                self.bytes -= frame.len();
            }
            self.acked += 1;
        }
        Ok(())
    }

    /// How many messages sent the peer has not acknowledged.
    pub(super) fn unacknowledged(&self) -> u64 {
        self.sent - self.acked
    }

    /// What a peer that heard up to `ack` missed, in order, to be sent
    /// again on a new connection (what it acknowledges is forgotten).
    pub(super) fn missed(&mut self, ack: u64) -> Result<Vec<Vec<u8>>, ResumeError> {
        self.acknowledged(ack)?;
        Ok(self.kept.iter().cloned().collect())
    }

    fn check(&self, ack: u64) -> Result<(), ResumeError> {
        if ack > self.sent {
            return Err(ResumeError::Ahead {
                ack,
                sent: self.sent,
            });
        }
        if ack < self.acked {
            return Err(ResumeError::Behind {
                ack,
                acked: self.acked,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal(frames: &[&str]) -> Journal {
        let mut j = Journal::default();
        for (i, f) in frames.iter().enumerate() {
            assert_eq!(j.record(f.as_bytes()), i as u64 + 1);
        }
        j
    }

    #[test]
    fn what_is_acknowledged_is_forgotten_and_the_rest_resent_in_order() {
        let mut j = journal(&["a", "bb", "ccc"]);
        assert_eq!(j.bytes, 6);
        j.acknowledged(1).unwrap();
        assert_eq!(j.bytes, 5);
        assert_eq!(j.missed(1).unwrap(), [b"bb".to_vec(), b"ccc".to_vec()]);
        assert_eq!(j.missed(2).unwrap(), [b"ccc".to_vec()]);
        assert_eq!(j.bytes, 3);
        assert_eq!(j.missed(3).unwrap(), Vec::<Vec<u8>>::new());
        assert_eq!(j.bytes, 0);
        // Numbers go on after what was forgotten.
        assert_eq!(j.record(b"d"), 4);
        assert_eq!(j.missed(3).unwrap(), [b"d".to_vec()]);
    }

    #[test]
    fn an_acknowledgement_of_what_was_never_sent_or_already_forgotten_is_refused() {
        let mut j = journal(&["a", "b"]);
        assert_eq!(j.missed(3), Err(ResumeError::Ahead { ack: 3, sent: 2 }));
        j.acknowledged(2).unwrap();
        assert_eq!(
            j.acknowledged(1),
            Err(ResumeError::Behind { ack: 1, acked: 2 })
        );
        // Nothing was forgotten by the refusals.
        assert_eq!(j.record(b"c"), 3);
        assert_eq!(j.missed(2).unwrap(), [b"c".to_vec()]);
    }
}
