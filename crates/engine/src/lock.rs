//! One `run` per repository at a time: `.planwright/run.lock` holds the
//! process id of the run that owns the repository's state and worktrees.

use crate::error::EngineError;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Held while a run is going on; removes the lock file when dropped.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
}

fn alive(pid: i32) -> bool {
    // Signal 0 checks for existence without sending anything.
    // SAFETY: kill with signal 0 has no effect on the target.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

impl RunLock {
    /// Takes the lock in `state_dir`, replacing one left by a process that is gone.
    pub fn acquire(state_dir: &Path) -> Result<RunLock, EngineError> {
        let path = state_dir.join("run.lock");
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    writeln!(f, "{}", std::process::id()).map_err(|e| EngineError::io(&path, e))?;
                    return Ok(RunLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    let pid: i32 = text.trim().parse().unwrap_or(0);
                    if alive(pid) {
                        return Err(EngineError::repo(
                            format!(
                                "another `planwright run` (process {pid}) is using this repository"
                            ),
                            format!(
                                "wait for it to finish; if no such process exists, delete `{}`",
                                path.display()
                            ),
                        ));
                    }
                    std::fs::remove_file(&path).map_err(|e| EngineError::io(&path, e))?;
                }
                Err(e) => return Err(EngineError::io(&path, e)),
            }
        }
        Err(EngineError::repo(
            format!("cannot take the run lock `{}`", path.display()),
            "delete it if no `planwright run` is going on",
        ))
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_lock_refuses_and_a_stale_one_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let held = RunLock::acquire(dir.path()).unwrap();
        let err = RunLock::acquire(dir.path()).unwrap_err();
        assert!(
            err.to_string().contains("another `planwright run`"),
            "{err}"
        );
        drop(held);
        assert!(!dir.path().join("run.lock").exists());
        // A lock left by a process that is gone (pid beyond the kernel's limit).
        std::fs::write(dir.path().join("run.lock"), "2147483646\n").unwrap();
        let _again = RunLock::acquire(dir.path()).unwrap();
    }
}
