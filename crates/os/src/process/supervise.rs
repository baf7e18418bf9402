//! Supervising a started child: one thread sleeps in `poll` on its output
//! pipes, its pidfd (Linux) and the cancel pipe, takes its output, and
//! stops its process group on timeout or cancel (TERM, the grace period,
//! KILL).

use super::collect::{Collected, Stream};
use super::{Cancel, Exit, Spec};
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, Signal};
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::process::{Child, ChildStderr, ChildStdout, ExitStatus};
use std::time::{Duration, Instant};

/// How long the output pipes may stay open after the child exited before the
/// rest of its process group (a grandchild still holding them) is killed.
pub const LEAK_WAIT: Duration = Duration::from_millis(500);

/// After the group was killed, how long to wait for the pipes to close. A
/// process that left the group (`setsid`) can hold them forever; its output
/// after this point is not collected.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// The child's stdout and stderr, non-blocking, until each reaches its end.
pub(super) struct Pipes {
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
}

impl Pipes {
    fn open(&self) -> bool {
        self.stdout.is_some() || self.stderr.is_some()
    }
}

/// What the supervising loop waits for next.
struct Watch {
    exited: bool,
    stopping: Option<(Exit, Instant)>,
    killed: bool,
    /// Once the child exited: when to stop waiting for its pipes to close,
    /// and whether the group was already killed for holding them.
    leak: Option<(Instant, bool)>,
}

/// Waits for the child to exit and its pipes to close, taking its output,
/// and stops its group on timeout or cancel. Sleeps in `poll` on the
/// pipes, the child's pidfd and the cancel flag's pipe, so it wakes for
/// exactly those (and the deadlines). Returns the reason it was stopped,
/// if it was.
pub(super) fn supervise(
    group: &Group,
    spec: &Spec,
    cancel: &Cancel,
    start: Instant,
    pipes: &mut Pipes,
    out: &mut Collected,
) -> io::Result<Option<Exit>> {
    let deadline = spec.timeout.map(|t| start + t);
    let mut w = Watch {
        exited: false,
        stopping: None,
        killed: false,
        leak: None,
    };
    loop {
        if w.exited && !pipes.open() {
            return Ok(w.stopping.map(|(reason, _)| reason));
        }
        let wake = next_wake(&w, deadline, spec.grace);
        wait_ready(group, cancel, pipes, &w, wake)?;
        read_ready(pipes, out);
        if !w.exited && group.has_exited() {
            w.exited = true;
            w.leak = Some((Instant::now() + LEAK_WAIT, false));
        }
        let now = Instant::now();
        match (w.exited, w.stopping) {
            (false, None) => {
                let reason = if cancel.is_cancelled() {
                    Some(Exit::Cancelled)
                } else if deadline.is_some_and(|d| now >= d) {
                    Some(Exit::TimedOut)
                } else {
                    None
                };
                if let Some(reason) = reason {
                    group.signal(Signal::TERM);
                    w.stopping = Some((reason, now));
                }
            }
            (false, Some((_, since))) if !w.killed && now >= since + spec.grace => {
                group.signal(Signal::KILL);
                w.killed = true;
            }
            _ => {}
        }
        match w.leak {
            // A grandchild still holds the pipes: kill the group, then give
            // the pipes a last moment to close.
            Some((at, false)) if now >= at => {
                group.signal(Signal::KILL);
                w.leak = Some((now + CLOSE_WAIT, true));
            }
            // A process that left the group (`setsid`) can hold them
            // for ever; its output after this point is not collected.
            Some((at, true)) if now >= at => return Ok(w.stopping.map(|(r, _)| r)),
            _ => {}
        }
    }
}

/// The next instant something must happen without any file descriptor
/// becoming ready.
fn next_wake(w: &Watch, deadline: Option<Instant>, grace: Duration) -> Option<Instant> {
    let mut wake: Option<Instant> = None;
    let mut at = |t: Instant| wake = Some(wake.map_or(t, |w: Instant| w.min(t)));
    if !w.exited {
        match w.stopping {
            None => {
                if let Some(d) = deadline {
                    at(d);
                }
            }
            Some((_, since)) if !w.killed => at(since + grace),
            Some(_) => {}
        }
    }
    if let Some((t, _)) = w.leak {
        at(t);
    }
    wake
}

/// Sleeps until a pipe, the pidfd or the cancel pipe is ready, or `wake`.
fn wait_ready(
    group: &Group,
    cancel: &Cancel,
    pipes: &Pipes,
    w: &Watch,
    wake: Option<Instant>,
) -> io::Result<()> {
    let mut watched: Vec<BorrowedFd<'_>> = Vec::with_capacity(4);
    if let Some(p) = &pipes.stdout {
        watched.push(p.as_fd());
    }
    if let Some(p) = &pipes.stderr {
        watched.push(p.as_fd());
    }
    let mut fallback = false;
    if !w.exited {
        match &group.pidfd {
            Some(fd) => watched.push(fd.as_fd()),
            None => fallback = true,
        }
        match (w.stopping, cancel.wake_fd()) {
            (None, Some(fd)) => watched.push(fd),
            (None, None) => fallback = true,
            _ => {}
        }
    }
    let mut timeout = wake.map(|t| t.saturating_duration_since(Instant::now()));
    if fallback {
        // No pidfd (an old kernel, or not Linux) or no cancel pipe: look
        // again now and then.
        timeout = Some(timeout.map_or(FALLBACK_POLL, |t| t.min(FALLBACK_POLL)));
    }
    let timeout = timeout.map(|t| {
        // Whole milliseconds, rounded up so a deadline is not polled for
        // in a busy loop, and at most what `poll` takes where there is
        // no `ppoll`.
        let ms = t.as_micros().div_ceil(1000).min(i32::MAX as u128) as i64;
        Timespec {
            tv_sec: ms / 1000,
            tv_nsec: (ms % 1000) * 1_000_000,
        }
    });
    let mut fds: Vec<PollFd<'_>> = watched
        .into_iter()
        .map(|fd| PollFd::from_borrowed_fd(fd, PollFlags::IN))
        .collect();
    match rustix::event::poll(&mut fds, timeout.as_ref()) {
        Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// How often a child is looked at when the kernel has no pidfd for it.
const FALLBACK_POLL: Duration = Duration::from_millis(50);

/// Takes what the pipes have (bounded per call, so a chatty child cannot
/// starve the checks), and closes a pipe at its end.
pub(super) fn read_ready(pipes: &mut Pipes, out: &mut Collected) {
    let mut buf = vec![0u8; 64 * 1024];
    if let Some(p) = &mut pipes.stdout {
        if !drain_pipe(p, Stream::Stdout, &mut buf, out) {
            pipes.stdout = None;
        }
    }
    if let Some(p) = &mut pipes.stderr {
        if !drain_pipe(p, Stream::Stderr, &mut buf, out) {
            pipes.stderr = None;
        }
    }
}

/// Reads what is there now; false when the pipe reached its end.
fn drain_pipe(pipe: &mut impl Read, stream: Stream, buf: &mut [u8], out: &mut Collected) -> bool {
    for _ in 0..READS_PER_WAKE {
        match pipe.read(buf) {
            Ok(0) => return false,
            Ok(n) => out.take(stream, &buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(_) => return false,
        }
    }
    true
}

/// Reads per pipe per wake-up, 64 KiB each.
const READS_PER_WAKE: usize = 16;

/// A started child that is the leader of its own process group. Dropping
/// it before [`Group::reap`] kills the group, so an early return or a panic
/// leaves nothing running.
pub(super) struct Group {
    child: Child,
    pgid: Pid,
    /// Readable when the child exits (Linux 5.3 and later).
    pidfd: Option<OwnedFd>,
    reaped: bool,
}

impl Group {
    pub(super) fn new(child: Child) -> Group {
        let pgid = Pid::from_child(&child);
        Group {
            child,
            pgid,
            pidfd: pidfd_open(pgid),
            reaped: false,
        }
    }

    pub(super) fn pipes(&mut self) -> io::Result<Pipes> {
        let pipes = Pipes {
            stdout: self.child.stdout.take(),
            stderr: self.child.stderr.take(),
        };
        if let Some(p) = &pipes.stdout {
            rustix::io::ioctl_fionbio(p, true)?;
        }
        if let Some(p) = &pipes.stderr {
            rustix::io::ioctl_fionbio(p, true)?;
        }
        Ok(pipes)
    }

    /// Whether the leader exited, without reaping it: while it is a zombie
    /// its pid (the group id) cannot be reused, so signalling the group
    /// cannot reach an unrelated process.
    fn has_exited(&self) -> bool {
        use rustix::process::{WaitId, WaitIdOptions};
        let flags = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        loop {
            match rustix::process::waitid(WaitId::Pid(self.pgid), flags) {
                Ok(status) => return status.is_some(),
                Err(rustix::io::Errno::INTR) => {}
                // Nothing left to wait for; `reap` reports the details.
                Err(_) => return true,
            }
        }
    }

    /// Sends `signal` to every process in the group. Failure means the group
    /// is already gone.
    pub(super) fn signal(&self, signal: Signal) {
        let _ = rustix::process::kill_process_group(self.pgid, signal);
    }

    pub(super) fn reap(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait()?;
        self.reaped = true;
        Ok(status)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.reaped {
            self.signal(Signal::KILL);
            let _ = self.child.wait();
        }
    }
}

#[cfg(target_os = "linux")]
fn pidfd_open(pid: Pid) -> Option<OwnedFd> {
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

/// Elsewhere the child is looked at every [`FALLBACK_POLL`].
#[cfg(not(target_os = "linux"))]
fn pidfd_open(_pid: Pid) -> Option<OwnedFd> {
    None
}
