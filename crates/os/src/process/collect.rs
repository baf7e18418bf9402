//! Where a child's output goes: its log (up to a limit), the tails of
//! [`Finished`](super::Finished) and the line sink (through a
//! [`Splitter`], whose notes go to the log under the same limit).

use super::lines::Splitter;
use super::{LineSink, TAIL_BYTES};
use std::fs::File;
use std::io::{self, Write};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stream {
    Stdout,
    Stderr,
}

/// Where output goes: the log (everything, up to its limit), two tails
/// and the line sink.
pub(super) struct Collected {
    log: Option<File>,
    pub(super) log_error: Option<io::Error>,
    /// Bytes the log may still take; `None` is unlimited.
    log_room: Option<u64>,
    log_limit: Option<u64>,
    /// Bytes left out of the log once it was full.
    dropped: u64,
    pub(super) stdout: Tail,
    pub(super) stderr: Tail,
    pub(super) all: Tail,
    /// Stdout cut into lines for the sink.
    lines: Option<Splitter>,
}

impl Collected {
    pub(super) fn new(log: Option<File>, lines: Option<LineSink>, limit: Option<u64>) -> Collected {
        Collected {
            log,
            log_error: None,
            log_room: limit,
            log_limit: limit,
            dropped: 0,
            stdout: Tail::default(),
            stderr: Tail::default(),
            all: Tail::default(),
            lines: lines.map(Splitter::new),
        }
    }

    fn feed_lines(&mut self, bytes: &[u8]) {
        let Some(mut lines) = self.lines.take() else {
            return;
        };
        lines.push(bytes, &mut |note| self.log_capped(note));
        self.lines = Some(lines);
    }

    /// The last line without its newline, and how much the log dropped.
    pub(super) fn finish(&mut self) {
        if let Some(mut lines) = self.lines.take() {
            lines.finish(&mut |note| self.log_capped(note));
        }
        if self.dropped > 0 {
            let note = format!(
                "\n[planwright: {} more bytes of output were dropped]\n",
                self.dropped
            );
            self.write_log(note.as_bytes());
        }
    }

    pub(super) fn take(&mut self, stream: Stream, bytes: &[u8]) {
        self.log_capped(bytes);
        match stream {
            Stream::Stdout => {
                self.stdout.push(bytes);
                self.feed_lines(bytes);
            }
            Stream::Stderr => self.stderr.push(bytes),
        }
        self.all.push(bytes);
    }

    /// Writes what fits under the limit; at the limit, a marker line.
    fn log_capped(&mut self, bytes: &[u8]) {
        let Some(room) = self.log_room else {
            self.write_log(bytes);
            return;
        };
        let fits = usize::try_from(room).unwrap_or(usize::MAX).min(bytes.len());
        self.write_log(&bytes[..fits]);
        self.log_room = Some(room - fits as u64);
        if fits < bytes.len() {
            if self.dropped == 0 {
                let marker = format!(
                    "\n[planwright: the log reached its limit of {} bytes; output from here on is dropped]\n",
                    self.log_limit.unwrap_or_default()
                );
                self.write_log(marker.as_bytes());
            }
            self.dropped += (bytes.len() - fits) as u64;
        }
    }

    fn write_log(&mut self, bytes: &[u8]) {
        if let Some(log) = &mut self.log {
            if let Err(e) = log.write_all(bytes) {
                // Keep running the child to its end; the error is reported then.
                self.log_error = Some(e);
                self.log = None;
            }
        }
    }
}

/// The last [`TAIL_BYTES`] of a stream.
#[derive(Default)]
pub(super) struct Tail(Vec<u8>);

impl Tail {
    fn push(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
        // Trim in batches so a stream of small chunks does not shift the
        // buffer every time.
        if self.0.len() > 2 * TAIL_BYTES {
            let cut = self.0.len() - TAIL_BYTES;
            self.0.drain(..cut);
        }
    }

    pub(super) fn text(&self) -> String {
        let mut bytes = &self.0[self.0.len().saturating_sub(TAIL_BYTES)..];
        // Drop a character cut in half at the start.
        let partial = bytes
            .iter()
            .take(3)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count();
        if self.0.len() > TAIL_BYTES {
            bytes = &bytes[partial..];
        }
        String::from_utf8_lossy(bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_end_and_drops_a_cut_character() {
        let mut tail = Tail::default();
        tail.push(b"x");
        for _ in 0..3000 {
            tail.push("€".as_bytes());
        }
        // 4096 = 3 * 1365 + 1: the window starts on the last byte of a `€`.
        let text = tail.text();
        assert!(text.chars().all(|c| c == '€'), "{text:?}");
        assert_eq!(text.len(), TAIL_BYTES - 1);
    }

    #[test]
    fn tail_of_short_output_is_all_of_it() {
        let mut tail = Tail::default();
        tail.push(b"hello\n");
        assert_eq!(tail.text(), "hello\n");
    }
}
