//! A child's stdout cut into lines for a [`LineSink`], at a bounded cost
//! whatever the child prints: each byte is looked at once (a line of
//! 64 MiB with no newline is read in linear time), and a line keeps at
//! most the sink's limit in memory; the rest of it is counted and dropped,
//! and the log says so. What a sink writes to the log about a line (an
//! adapter's notes, which may quote the agent) goes through the same cap
//! as the child's output.

use std::sync::Arc;

/// The default longest line a sink is given, in bytes (`[agent]
/// line_limit_kib`); the rest of a longer line is dropped.
pub const LINE_LIMIT: usize = 1024 * 1024;

/// What a sink is told of one line besides its text, and where its notes go.
#[derive(Debug, Default)]
pub struct Line {
    cut: u64,
    notes: Vec<u8>,
}

impl Line {
    /// How many bytes of the line were dropped past the limit (0 when it
    /// was given whole).
    pub fn cut(&self) -> u64 {
        self.cut
    }

    /// Writes `text` and a newline to the child's log, after the output
    /// that held the line, within the log's limit.
    pub fn note(&mut self, text: &str) {
        self.notes.extend_from_slice(text.as_bytes());
        self.notes.push(b'\n');
    }
}

type SinkFn = dyn Fn(&str, &mut Line) + Send + Sync;

/// A callback for each line of a child's stdout, called on the thread that
/// runs the child, with at most [`LineSink::limit`] bytes of each line.
#[derive(Clone)]
pub struct LineSink {
    f: Arc<SinkFn>,
    limit: usize,
}

impl LineSink {
    /// A sink calling `f` with each line's text.
    pub fn new(f: impl Fn(&str) + Send + Sync + 'static) -> LineSink {
        LineSink::noting(move |line, _| f(line))
    }

    /// A sink calling `f` with each line's text and its [`Line`], through
    /// which it learns whether the line was cut and writes notes to the log.
    pub fn noting(f: impl Fn(&str, &mut Line) + Send + Sync + 'static) -> LineSink {
        LineSink {
            f: Arc::new(f),
            limit: LINE_LIMIT,
        }
    }

    /// The same sink, given at most `bytes` of each line (at least 1).
    pub fn limit(mut self, bytes: usize) -> LineSink {
        self.limit = bytes.max(1);
        self
    }

    pub(super) fn call(&self, text: &[u8], line: &mut Line) {
        (self.f)(String::from_utf8_lossy(text).trim_end_matches('\r'), line);
    }
}

impl std::fmt::Debug for LineSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LineSink(limit {})", self.limit)
    }
}

/// Cuts stdout into lines: what follows the last newline is kept (up to
/// the limit) until the next chunk ends it.
pub(super) struct Splitter {
    sink: LineSink,
    /// The line read so far, at most `sink.limit` bytes.
    partial: Vec<u8>,
    /// Bytes of the current line past the limit.
    cut: u64,
    /// Bytes looked at for a newline, for the tests of linear time.
    scanned: u64,
}

impl Splitter {
    pub(super) fn new(sink: LineSink) -> Splitter {
        Splitter {
            sink,
            partial: Vec::new(),
            cut: 0,
            scanned: 0,
        }
    }

    /// Feeds a chunk; `log` receives what the sink notes about each line
    /// ended in it, and planwright's own note of a line that was cut.
    pub(super) fn push(&mut self, bytes: &[u8], log: &mut dyn FnMut(&[u8])) {
        let mut rest = bytes;
        let mut looked = 0;
        while let Some(end) = rest.iter().position(|b| {
            looked += 1;
            *b == b'\n'
        }) {
            self.keep(&rest[..end]);
            self.emit(log);
            rest = &rest[end + 1..];
        }
        self.keep(rest);
        self.scanned += looked;
    }

    /// Gives the sink the last line, which had no newline, if any.
    pub(super) fn finish(&mut self, log: &mut dyn FnMut(&[u8])) {
        if !self.partial.is_empty() || self.cut > 0 {
            self.emit(log);
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = self.sink.limit.saturating_sub(self.partial.len());
        let fits = room.min(bytes.len());
        self.partial.extend_from_slice(&bytes[..fits]);
        self.cut += (bytes.len() - fits) as u64;
    }

    fn emit(&mut self, log: &mut dyn FnMut(&[u8])) {
        let mut line = Line {
            cut: self.cut,
            notes: Vec::new(),
        };
        if line.cut > 0 {
            log(format!(
                "\n[planwright: a line of output was longer than {} bytes; the {} bytes past that were not read]\n",
                self.sink.limit, line.cut
            )
            .as_bytes());
        }
        self.sink.call(&self.partial, &mut line);
        if !line.notes.is_empty() {
            log(&line.notes);
        }
        self.partial.clear();
        self.cut = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Each line the sink got, and how much of it was cut.
    type Got = Arc<Mutex<Vec<(String, u64)>>>;

    fn recording(limit: usize) -> (Splitter, Got) {
        let got = Arc::new(Mutex::new(Vec::new()));
        let seen = got.clone();
        let sink = LineSink::noting(move |text, line| {
            seen.lock().unwrap().push((text.to_string(), line.cut()));
            line.note(&format!("noted {}", text.len()));
        })
        .limit(limit);
        (Splitter::new(sink), got)
    }

    #[test]
    fn lines_across_chunks_are_whole_and_long_ones_cut_and_noted() {
        let (mut split, got) = recording(8);
        let mut log = Vec::new();
        let mut to_log = |b: &[u8]| log.extend_from_slice(b);
        split.push(b"ab", &mut to_log);
        split.push(b"c\r\n0123456789abcdef\nlast", &mut to_log);
        split.finish(&mut to_log);
        assert_eq!(
            *got.lock().unwrap(),
            [
                ("abc".to_string(), 0),
                ("01234567".to_string(), 8),
                ("last".to_string(), 0)
            ]
        );
        let log = String::from_utf8(log).unwrap();
        assert!(
            log.contains("longer than 8 bytes; the 8 bytes past that were not read"),
            "{log}"
        );
        assert!(
            log.contains("noted 3\n") && log.contains("noted 8\n"),
            "{log}"
        );
    }

    /// 64 MiB with no newline, in small chunks: each byte looked at once,
    /// and no more than the limit held.
    #[test]
    fn a_huge_line_is_scanned_once_and_held_only_to_the_limit() {
        let (mut split, got) = recording(1024);
        let chunk = vec![b'x'; 64 * 1024];
        let mut notes = 0usize;
        let mut to_log = |b: &[u8]| notes += b.len();
        for _ in 0..1024 {
            split.push(&chunk, &mut to_log);
            assert!(split.partial.len() <= 1024);
        }
        split.finish(&mut to_log);
        assert_eq!(split.scanned, 64 * 1024 * 1024);
        let got = got.lock().unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0.len(), 1024);
        assert_eq!(got[0].1, 64 * 1024 * 1024 - 1024);
        assert!(notes < 1024, "{notes}");
    }
}
