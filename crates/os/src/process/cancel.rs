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
    /// than the pipe (the coordinator, on its channel), each with the id
    /// a [`Listening`] removes it by.
    listeners: std::sync::Mutex<Vec<(u64, Listener)>>,
    /// The id of the next listener.
    next: std::sync::atomic::AtomicU64,
}

type Listener = Box<dyn Fn() + Send + Sync>;

/// A listener [`Cancel::listen`] added; dropping it removes the listener.
#[must_use = "the listener is removed when this is dropped"]
pub struct Listening {
    cancel: Cancel,
    id: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.cancel.listeners().retain(|(id, _)| *id != self.id);
    }
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
            next: Default::default(),
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
            for (_, wake) in self.listeners().iter() {
                wake();
            }
        }
    }

    /// Calls `wake` when [`Cancel::cancel`] is called (at once if it was),
    /// for as long as the flag lives.
    pub fn on_cancel(&self, wake: impl Fn() + Send + Sync + 'static) {
        self.add(Box::new(wake));
    }

    /// [`Cancel::on_cancel`] until the returned [`Listening`] is dropped:
    /// for a waiter that lives shorter than the flag.
    pub fn listen(&self, wake: impl Fn() + Send + Sync + 'static) -> Listening {
        Listening {
            cancel: self.clone(),
            id: self.add(Box::new(wake)),
        }
    }

    /// Adds a listener, or calls it at once when the flag is set; its id.
    fn add(&self, wake: Listener) -> u64 {
        let id = self.0.next.fetch_add(1, Ordering::SeqCst);
        let mut listeners = self.listeners();
        // Under the lock, so a cancel in between cannot miss it.
        if self.is_cancelled() {
            drop(listeners);
            wake();
        } else {
            listeners.push((id, wake));
        }
        id
    }

    /// A flag of its own that is also set when this one is, while the
    /// returned [`Listening`] lives: one piece of work stopped alone, or
    /// with everything.
    pub fn child(&self) -> (Cancel, Listening) {
        let child = Cancel::default();
        let set = child.clone();
        let listening = self.listen(move || set.cancel());
        (child, listening)
    }

    fn listeners(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Listener)>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_set_with_its_parent_alone_or_not_once_released() {
        let parent = Cancel::default();
        let (one, listening) = parent.child();
        let (two, _kept) = parent.child();
        one.cancel();
        assert!(one.is_cancelled() && !parent.is_cancelled() && !two.is_cancelled());
        let (three, released) = parent.child();
        drop(released);
        drop(listening);
        assert_eq!(parent.listeners().len(), 1, "only the kept child listens");
        parent.cancel();
        assert!(two.is_cancelled());
        assert!(!three.is_cancelled(), "a released child is its own");
    }
}
