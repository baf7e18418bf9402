//! A worker's side of an attempt whose connection broke (docs/scaling.md,
//! "A broken connection"). The worker running the attempt (the kept one)
//! listens on a unix socket in its cache, `STORE/resume/slot-N.sock`; a
//! `planwright worker` started for the coordinator's new connection is
//! told `resume` first, connects to that socket, and from then on relays
//! bytes both ways. The kept worker takes a connection only with the
//! attempt's `resume_key`, a secret the coordinator sent with the attempt
//! and the agent never sees: the agent runs as the same user and can
//! connect to the socket, so the socket's place alone proves nothing.

use super::protocol::{self, FromWorker, ToWorker, WireError};
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long a connection to the socket has to say `resume` before it is
/// dropped: one that says nothing (an agent's) holds no resumption up.
const HANDSHAKE: Duration = Duration::from_secs(5);

/// The attempt a connection must name to be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Kept {
    pub slot: usize,
    pub object_format: String,
    pub ticket: String,
    pub attempt: u32,
    pub key: String,
}

impl Kept {
    /// Whether `resume` names this attempt with its key; the key compared
    /// in time that does not depend on where it differs.
    fn named_by(&self, resume: &ToWorker) -> Option<u64> {
        let ToWorker::Resume {
            slot,
            object_format,
            key,
            ticket,
            attempt,
            ack,
        } = resume
        else {
            return None;
        };
        let same_key = key.len() == self.key.len()
            && (key.bytes().zip(self.key.bytes())).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0;
        let same = same_key
            && *slot == self.slot
            && *object_format == self.object_format
            && *ticket == self.ticket
            && *attempt == self.attempt;
        same.then_some(*ack)
    }
}

/// A connection that resumes the kept attempt: what it says, what to say
/// to it, and what the coordinator heard (`resume`'s `ack`).
pub(super) struct Resumption {
    pub from: Box<dyn Read + Send>,
    pub to: Box<dyn Write + Send>,
    pub ack: u64,
}

/// The folder of the sockets of a cache's store for `object_format`.
fn folder(cache: &Path, object_format: &str) -> PathBuf {
    cache.join(object_format).join("resume")
}

fn socket_name(slot: usize) -> String {
    format!("slot-{}.sock", slot + 1)
}

/// This process's user: the owner of its `/proc` entry (no system call
/// outside crate `os`, and `/proc` is what reaches the sockets anyway).
fn own_uid() -> std::io::Result<u32> {
    Ok(std::fs::metadata("/proc/self")?.uid())
}

/// The socket folder, opened: a real folder (never a link), this user's,
/// which no one else may enter; made so when `make`.
fn open_folder(dir: &Path, make: bool) -> std::io::Result<File> {
    if make {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.file_type().is_dir() || meta.uid() != own_uid()? {
        return Err(std::io::Error::other(format!(
            "`{}` is not a folder of this user",
            dir.display()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    let opened = File::open(dir)?;
    let same = opened.metadata()?;
    if (same.dev(), same.ino()) != (meta.dev(), meta.ino()) {
        return Err(std::io::Error::other(format!(
            "`{}` changed while it was opened",
            dir.display()
        )));
    }
    Ok(opened)
}

/// `name` in the opened folder, by a path short enough for a socket's
/// address (a cache's path may exceed its 108 bytes) and resolved through
/// the folder already checked.
fn within(folder: &File, name: &str) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}/{name}", folder.as_raw_fd()))
}

/// The kept worker's socket, listened on while it exists; removed when
/// dropped (unless another attempt's replaced it).
pub(super) struct Keeper {
    folder: File,
    name: String,
    ino: u64,
    stop: Arc<AtomicBool>,
}

impl Keeper {
    /// Listens for connections resuming `kept` in `cache`, each taken one
    /// handed to `resumed` (one at a time).
    pub(super) fn bind(
        cache: &Path,
        kept: Kept,
        resumed: impl Fn(Resumption) + Send + Sync + 'static,
    ) -> std::io::Result<Keeper> {
        let folder = open_folder(&folder(cache, &kept.object_format), true)?;
        let name = socket_name(kept.slot);
        let path = within(&folder, &name);
        // A socket left by a worker that died: the slot's lock, which this
        // attempt holds, says no one else listens there.
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let listener = UnixListener::bind(&path)?;
        let ino = std::fs::symlink_metadata(&path)?.ino();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let resumed = Arc::new(std::sync::Mutex::new(resumed));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let (kept, resumed) = (kept.clone(), resumed.clone());
                // Each on its own thread: a connection that says nothing
                // holds up no other.
                std::thread::spawn(move || {
                    if let Some(resumption) = handshake(conn, &kept) {
                        let handler = resumed.lock().unwrap_or_else(|e| e.into_inner());
                        (*handler)(resumption);
                    }
                });
            }
        });
        Ok(Keeper {
            folder,
            name,
            ino,
            stop,
        })
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let path = within(&self.folder, &self.name);
        // Wakes the listening thread, which sees it is to stop.
        let _ = UnixStream::connect(&path);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.ino() == self.ino) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// A connection's `resume`, if it names the kept attempt with its key;
/// else it is told no (the key stays unsaid) and dropped.
fn handshake(conn: UnixStream, kept: &Kept) -> Option<Resumption> {
    conn.set_read_timeout(Some(HANDSHAKE)).ok()?;
    let mut to = conn.try_clone().ok()?;
    let mut from = BufReader::new(conn);
    let said = protocol::receive::<ToWorker>(&mut from).ok()?;
    let Some(ack) = kept.named_by(&said) else {
        let reason = format!(
            "keeps no attempt that connection names (it keeps attempt {} of ticket {})",
            kept.attempt, kept.ticket
        );
        let _ = protocol::send(&mut to, &refusal(reason), &[]);
        return None;
    };
    from.get_ref().set_read_timeout(None).ok()?;
    Some(Resumption {
        from: Box::new(from),
        to: Box::new(to),
        ack,
    })
}

fn refusal(reason: String) -> FromWorker {
    FromWorker::Refused {
        reason,
        hint: "the attempt ran out of time to be resumed, or its worker ended; it runs again, no strike used".into(),
    }
}

/// `planwright worker` told `resume` first: connects to the socket of the
/// attempt it names in `cache` and relays between it and the coordinator
/// (`input`, the rest of what it sends, and `output`) until either ends.
/// A worker keeping no such attempt is answered `refused`.
pub(super) fn relay(
    resume: &ToWorker,
    input: BufReader<Box<dyn Read + Send>>,
    mut output: Box<dyn Write + Send>,
    cache: &Path,
) -> Result<(), WireError> {
    let ToWorker::Resume {
        slot,
        object_format,
        ticket,
        attempt,
        ..
    } = resume
    else {
        return Err(WireError::Malformed("not `resume`".into(), String::new()));
    };
    let socket = match connect(cache, object_format, *slot) {
        Ok(socket) => socket,
        Err(e) => {
            let reason = format!(
                "keeps no attempt {attempt} of ticket {ticket} on slot {} ({e})",
                slot + 1
            );
            return protocol::send(&mut output, &refusal(reason), &[]);
        }
    };
    let mut to_kept = socket.try_clone()?;
    protocol::send(&mut to_kept, resume, &[])?;
    let mut from_kept = socket.try_clone()?;
    let back = std::thread::spawn(move || {
        let mut buf = vec![0; 64 * 1024];
        loop {
            match from_kept.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) if output.write_all(&buf[..n]).and(output.flush()).is_err() => break,
                Ok(_) => {}
            }
        }
        // Either end gone: the kept worker hears its connection close.
        let _ = from_kept.shutdown(std::net::Shutdown::Both);
    });
    let mut input = input;
    let _ = std::io::copy(&mut input, &mut to_kept);
    let _ = socket.shutdown(std::net::Shutdown::Write);
    let _ = back.join();
    Ok(())
}

/// A connection to the socket of `slot` in `cache`: a socket of this
/// user's, reached through the checked folder, never through a link.
fn connect(cache: &Path, object_format: &str, slot: usize) -> std::io::Result<UnixStream> {
    let plain = |c: char| c.is_ascii_alphanumeric();
    if object_format.is_empty() || !object_format.chars().all(plain) {
        return Err(std::io::Error::other("no such object format"));
    }
    let folder = open_folder(&folder(cache, object_format), false)?;
    let path = within(&folder, &socket_name(slot));
    let meta = std::fs::symlink_metadata(&path)?;
    if !meta.file_type().is_socket() || meta.uid() != own_uid()? {
        return Err(std::io::Error::other(
            "its socket is not this user's socket",
        ));
    }
    UnixStream::connect(&path)
}

/// The first line of a stream and the stream after it, read on a thread
/// so that a coordinator that says nothing is given up after `limit`.
pub(super) fn first<R: Read + Send + 'static>(
    input: R,
    limit: Duration,
) -> Result<(ToWorker, BufReader<Box<dyn Read + Send>>), WireError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader: BufReader<Box<dyn Read + Send>> = BufReader::new(Box::new(input));
        let said = protocol::receive::<ToWorker>(&mut reader);
        let _ = tx.send(said.map(|m| (m, reader)));
    });
    match rx.recv_timeout(limit) {
        Ok(said) => said,
        Err(_) => Err(WireError::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!(
                "the coordinator said nothing for {}s; the worker ended",
                limit.as_secs()
            ),
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;

    fn kept() -> Kept {
        Kept {
            slot: 0,
            object_format: "sha1".into(),
            ticket: "T1".into(),
            attempt: 2,
            key: "k3y".into(),
        }
    }

    fn resume(key: &str, attempt: u32) -> ToWorker {
        ToWorker::Resume {
            slot: 0,
            object_format: "sha1".into(),
            key: key.into(),
            ticket: "T1".into(),
            attempt,
            ack: 7,
        }
    }

    #[test]
    fn only_the_attempt_with_its_key_is_taken() {
        assert_eq!(kept().named_by(&resume("k3y", 2)), Some(7));
        assert_eq!(kept().named_by(&resume("k3x", 2)), None);
        assert_eq!(kept().named_by(&resume("k3", 2)), None);
        assert_eq!(kept().named_by(&resume("k3y", 1)), None);
        assert_eq!(kept().named_by(&ToWorker::Cancel), None);
    }

    /// A connection with the key is handed on, with what follows its
    /// `resume`; one without it is told no and the kept attempt goes on
    /// listening; the socket goes with the keeper.
    #[test]
    fn a_relay_reaches_the_kept_attempt_and_a_wrong_key_does_not() {
        let cache = tempfile::tempdir().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let tx = std::sync::Mutex::new(tx);
        let keeper = Keeper::bind(cache.path(), kept(), move |r: Resumption| {
            let _ = tx.lock().unwrap().send(r);
        })
        .unwrap();
        let dir = folder(cache.path(), "sha1");
        let mode = std::fs::metadata(&dir).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // A wrong key: refused, nothing handed on.
        let wrong = connect(cache.path(), "sha1", 0).unwrap();
        protocol::send(&mut &wrong, &resume("nope", 2), &[]).unwrap();
        let answer: FromWorker = protocol::receive(&mut BufReader::new(&wrong)).unwrap();
        assert!(matches!(answer, FromWorker::Refused { .. }), "{answer:?}");
        // The right one, through a relay: the coordinator's bytes after
        // `resume` arrive, and what the kept side writes comes back.
        let (coordinator, relay_in) = UnixStream::pair().unwrap();
        let (relay_out, back) = UnixStream::pair().unwrap();
        let line = serde_json::to_string(&resume("k3y", 2)).unwrap() + "\n";
        let relay_input: Box<dyn Read + Send> = Box::new(relay_in);
        let relaying = std::thread::spawn({
            let cache = cache.path().to_path_buf();
            move || {
                let mut input = BufReader::new(relay_input);
                let first: ToWorker = protocol::receive(&mut input).unwrap();
                assert_eq!(input.buffer().len(), 0);
                relay(&first, input, Box::new(relay_out), &cache)
            }
        });
        (&coordinator).write_all(line.as_bytes()).unwrap();
        let mut taken = rx.recv().unwrap();
        assert_eq!(taken.ack, 7);
        (&coordinator).write_all(b"more\n").unwrap();
        let mut got = String::new();
        BufReader::new(&mut taken.from).read_line(&mut got).unwrap();
        assert_eq!(got, "more\n");
        taken.to.write_all(b"back\n").unwrap();
        let mut got = String::new();
        BufReader::new(&back).read_line(&mut got).unwrap();
        assert_eq!(got, "back\n");
        drop(taken);
        coordinator.shutdown(std::net::Shutdown::Both).unwrap();
        relaying.join().unwrap().unwrap();
        drop(keeper);
        assert!(connect(cache.path(), "sha1", 0).is_err());
    }

    #[test]
    fn a_relay_to_no_kept_attempt_is_refused() {
        let cache = tempfile::tempdir().unwrap();
        let (out, back) = UnixStream::pair().unwrap();
        let input: Box<dyn Read + Send> = Box::new(std::io::empty());
        relay(
            &resume("k3y", 2),
            BufReader::new(input),
            Box::new(out),
            cache.path(),
        )
        .unwrap();
        let answer: FromWorker = protocol::receive(&mut BufReader::new(&back)).unwrap();
        let FromWorker::Refused { reason, .. } = answer else {
            panic!("{answer:?}")
        };
        assert!(
            reason.starts_with("keeps no attempt 2 of ticket T1 on slot 1"),
            "{reason}"
        );
    }
}
