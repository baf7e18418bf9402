//! Which descriptors a child gets: its stdin, stdout and stderr, and
//! nothing else. Landlock checks a path when it is opened, not a
//! descriptor already held, so a descriptor planwright inherited (a make
//! jobserver's pipe, a CI runner's log, `exec 9>>file` in a wrapper, a
//! socket from socket activation) would let an agent or a gate write
//! outside its sandbox, or block or kill it through a pipe nobody reads.
//!
//! Two layers, so that no spawn path can forget: [`seal_inherited`] marks
//! every descriptor the process holds at start close-on-exec (the binary
//! calls it first thing, which covers every child it starts, git and
//! workers included), and [`cloexec_from`] does the same in each child
//! between fork and exec (which covers descriptors opened later without
//! `O_CLOEXEC` by any library, and the engine used as a library, as its
//! tests do). Rust's standard library opens everything close-on-exec
//! already; descriptors a child is meant to have are set up as its
//! stdin, stdout and stderr, which `dup2` leaves inheritable.

use std::io;

/// The first descriptor that is not stdin, stdout or stderr.
pub(crate) const FIRST_EXTRA: u32 = 3;

/// Marks every descriptor from 3 on close-on-exec, so no child of this
/// process inherits what the process itself inherited. This process
/// keeps them (a jobserver client could still use its pipe); only its
/// children lose them. Call it before starting threads or children.
pub fn seal_inherited() {
    // It cannot fail: without `close_range` it falls back to `fcntl`.
    let _ = cloexec_from(FIRST_EXTRA);
}

/// Marks every descriptor from `first` on close-on-exec. Async-signal-safe
/// (one system call, or a loop of `fcntl` where the kernel lacks
/// `close_range`): it runs in forked children before exec.
pub(crate) fn cloexec_from(first: u32) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `close_range` with CLOSE_RANGE_CLOEXEC only changes
        // descriptor flags; it touches no memory. rustix has no
        // `close_range`.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                first as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        // Older than Linux 5.11: fall through to one call per descriptor.
    }
    for fd in first..open_max() {
        // SAFETY: F_SETFD changes a descriptor's flags and touches no
        // memory; a descriptor that is not open gives EBADF, ignored.
        unsafe { libc::fcntl(fd as libc::c_int, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}

/// Closes every descriptor from `first` on, for a forked process that
/// only waits and exits (it owns no `OwnedFd` any more).
pub(crate) fn close_from(first: u32) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: closing descriptors touches no memory; the caller uses
        // none of them after. rustix has no `close_range`.
        if unsafe { libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) } == 0 {
            return;
        }
    }
    for fd in first..open_max() {
        // SAFETY: as above; a descriptor that is not open gives EBADF.
        unsafe { libc::close(fd as libc::c_int) };
    }
}

/// The highest descriptor number worth trying, bounded so the fallback
/// loop stays short when the limit is huge.
fn open_max() -> u32 {
    // SAFETY: `sysconf` reads a limit and touches no memory of ours.
    let max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) };
    u32::try_from(max)
        .unwrap_or(1024)
        .clamp(FIRST_EXTRA, 65_536)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsFd, AsRawFd};

    fn is_cloexec(fd: impl AsFd) -> bool {
        rustix::io::fcntl_getfd(fd)
            .unwrap()
            .contains(rustix::io::FdFlags::CLOEXEC)
    }

    #[test]
    fn every_extra_descriptor_ends_close_on_exec() {
        let file = tempfile::tempfile().unwrap();
        rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty()).unwrap();
        assert!(!is_cloexec(&file));
        cloexec_from(file.as_raw_fd() as u32).unwrap();
        assert!(is_cloexec(&file));
    }
}
