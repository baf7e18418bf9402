//! The cancel flag: set from any thread, it wakes a waiting [`super::run`]
//! through a pipe, and other waiters through their listeners.

use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A flag that stops a running child (and its group) from another thread.
/// Clones share the flag. It comes with a pipe that becomes readable when
/// the flag is set, so a waiting [`run`](super::run) wakes at once instead of looking
/// at the flag on a timer.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<CancelInner>);

struct CancelInner {
    flag: AtomicBool,
    /// Read and write ends; `None` if the pipe could not be made.
    wake: Option<(OwnedFd, OwnedFd)>,
    /// Called once on cancel, for waiters that sleep on something other
    /// than the pipe (the coordinator, on its channel).
    listeners: std::sync::Mutex<Vec<Box<dyn Fn() + Send + Sync>>>,
}

impl std::fmt::Debug for CancelInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelInner")
            .field("flag", &self.flag)
            .finish_non_exhaustive()
    }
}

impl Default for CancelInner {
    fn default() -> Self {
        CancelInner {
            flag: AtomicBool::new(false),
            wake: wake_pipe().ok(),
            listeners: Default::default(),
        }
    }
}

/// A pipe whose ends are non-blocking and closed on exec.
#[cfg(not(target_vendor = "apple"))]
fn wake_pipe() -> rustix::io::Result<(OwnedFd, OwnedFd)> {
    use rustix::pipe::PipeFlags;
    rustix::pipe::pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)
}

/// macOS has no `pipe2`, so the flags are set after: a child another
/// thread spawns in between may inherit the ends, which only keeps the
/// pipe open.
#[cfg(target_vendor = "apple")]
fn wake_pipe() -> rustix::io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = rustix::pipe::pipe()?;
    for fd in [&r, &w] {
        rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC)?;
        rustix::io::ioctl_fionbio(fd, true)?;
    }
    Ok((r, w))
}

impl Cancel {
    /// Asks every [`run`](super::run) using this flag to stop its child.
    pub fn cancel(&self) {
        if !self.0.flag.swap(true, Ordering::SeqCst) {
            if let Some((_, w)) = &self.0.wake {
                // Never read: the pipe stays readable for every waiter.
                let _ = rustix::io::write(w, b"x");
            }
            for wake in self.listeners().iter() {
                wake();
            }
        }
    }

    /// Calls `wake` when [`Cancel::cancel`] is called (at once if it was).
    pub fn on_cancel(&self, wake: impl Fn() + Send + Sync + 'static) {
        let mut listeners = self.listeners();
        // Under the lock, so a cancel in between cannot miss it.
        if self.is_cancelled() {
            drop(listeners);
            wake();
        } else {
            listeners.push(Box::new(wake));
        }
    }

    fn listeners(&self) -> std::sync::MutexGuard<'_, Vec<Box<dyn Fn() + Send + Sync>>> {
        self.0.listeners.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.flag.load(Ordering::SeqCst)
    }

    /// The descriptor that becomes readable on cancel.
    pub(super) fn wake_fd(&self) -> Option<BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.0.wake.as_ref().map(|(r, _)| r.as_fd())
    }
}
