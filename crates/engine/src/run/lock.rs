//! One `run` per repository at a time, whichever worktree or subdirectory
//! `--repo` names: an exclusive `flock` on `planwright-run.lock` in the
//! repository's common git directory, which also holds the process id of
//! the run (for the message).
//!
//! The kernel releases the lock when its holder exits, however it exits, so
//! there is no stale lock to detect, and [`is_held`] tells a run that is
//! going on from one whose process is gone; a lock file that is removed and
//! re-created by whoever finds it stale lets two runs in when they race.

use crate::error::EngineError;
use crate::git::repo::Repo;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Held while a run is going on; the lock is released when it is dropped
/// (the file stays, so that no one can lock a file being removed).
#[derive(Debug)]
pub(crate) struct RunLock {
    _file: File,
}

/// The lock file of `repo`: in the common git directory, shared by every
/// worktree of the repository.
pub fn path(repo: &Repo) -> Result<PathBuf, EngineError> {
    Ok(repo.common_dir().join("planwright-run.lock"))
}

/// Whether a `run` holds the lock of `repo` now.
pub fn is_held(repo: &Repo) -> Result<bool, EngineError> {
    is_held_at(&path(repo)?)
}

/// Whether a `run` holds the lock file at `path` (see [`path`]) now: for a
/// reader that asks again and again, without asking git each time.
pub fn is_held_at(path: &Path) -> Result<bool, EngineError> {
    Ok(holder_at(path)?.is_some())
}

/// The refusal of a run while another holds the lock of `repo`, as `run`
/// gives it (preflight and `--dry-run` say the same), or `None` when the
/// lock is free.
pub fn holder(repo: &Repo) -> Result<Option<EngineError>, EngineError> {
    holder_at(&path(repo)?)
}

fn holder_at(path: &Path) -> Result<Option<EngineError>, EngineError> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(EngineError::io(path, e)),
    };
    // A shared lock is refused only while a run holds the exclusive one
    // (or, for an instant, a child forked while one was held, before its
    // exec closes the file); dropping the file releases it at once.
    for _ in 0..TRIES {
        if planwright_os::lock::try_shared(&file).map_err(|e| EngineError::io(path, e))? {
            return Ok(None);
        }
        std::thread::sleep(PAUSE);
    }
    Ok(Some(busy(&mut file)))
}

/// How often a lock is tried before it counts as held, and the pause
/// between tries: a probe of `status`, or a child forked while the lock
/// was held, holds it for an instant only.
const TRIES: u32 = 10;
const PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

/// The error of a lock held by the process whose id `file` holds.
fn busy(file: &mut File) -> EngineError {
    let mut pid = String::new();
    let _ = file.read_to_string(&mut pid);
    let who = match pid.trim() {
        "" => String::new(),
        pid => format!(" (process {pid})"),
    };
    EngineError::repo(
        format!("another `planwright run`{who} is using this repository"),
        "wait for it to finish, or stop it",
    )
}

impl RunLock {
    /// Takes the lock of `repo`, or says which process holds it.
    pub(crate) fn acquire(repo: &Repo) -> Result<RunLock, EngineError> {
        RunLock::acquire_at(&path(repo)?)
    }

    /// Takes the lock at `path`.
    pub(crate) fn acquire_at(path: &Path) -> Result<RunLock, EngineError> {
        let io = |e| EngineError::io(path, e);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        // `status` probes the lock for an instant with a shared lock; a few
        // tries keep such a probe from refusing a run.
        let mut tries = 0;
        while !planwright_os::lock::try_exclusive(&file).map_err(io)? {
            tries += 1;
            if tries < TRIES {
                std::thread::sleep(PAUSE);
                continue;
            }
            return Err(busy(&mut file));
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
        let path = dir.path().join("run.lock");
        let held = RunLock::acquire_at(&path).unwrap();
        let err = RunLock::acquire_at(&path).unwrap_err();
        let pid = std::process::id();
        assert!(
            err.to_string()
                .contains(&format!("another `planwright run` (process {pid})")),
            "{err}"
        );
        drop(held);
        let again = RunLock::acquire_at(&path).unwrap();
        drop(again);
        // A file left by a process that is gone holds no lock.
        std::fs::write(&path, "2147483646\n").unwrap();
        let _taken = RunLock::acquire_at(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("{pid}\n"));
    }
}
