//! One `run` per repository at a time: an exclusive `flock` on
//! `.planwright/run.lock`, which also holds the process id of the run that
//! owns the repository's state and worktrees (for the message).
//!
//! The kernel releases the lock when its holder exits, however it exits, so
//! there is no stale lock to detect; a lock file that is removed and
//! re-created by whoever finds it stale lets two runs in when they race.

use crate::error::EngineError;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Held while a run is going on; the lock is released when it is dropped
/// (the file stays, so that no one can lock a file being removed).
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

impl RunLock {
    /// Takes the lock in `state_dir`, or says which process holds it.
    pub fn acquire(state_dir: &Path) -> Result<RunLock, EngineError> {
        let path = state_dir.join("run.lock");
        let io = |e| EngineError::io(&path, e);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        // SAFETY: flock on a descriptor this function owns; no memory is involved.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(io(err));
            }
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            let who = match pid.trim() {
                "" => String::new(),
                pid => format!(" (process {pid})"),
            };
            return Err(EngineError::repo(
                format!("another `planwright run`{who} is using this repository"),
                "wait for it to finish, or stop it",
            ));
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(RunLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_refuses_and_a_released_or_stale_one_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let held = RunLock::acquire(dir.path()).unwrap();
        let err = RunLock::acquire(dir.path()).unwrap_err();
        let pid = std::process::id();
        assert!(
            err.to_string()
                .contains(&format!("another `planwright run` (process {pid})")),
            "{err}"
        );
        drop(held);
        let again = RunLock::acquire(dir.path()).unwrap();
        drop(again);
        // A file left by a process that is gone holds no lock.
        std::fs::write(dir.path().join("run.lock"), "2147483646\n").unwrap();
        let _taken = RunLock::acquire(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join("run.lock")).unwrap();
        assert_eq!(text, format!("{pid}\n"));
    }
}
