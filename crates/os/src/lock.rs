//! Advisory file locks (`flock`), taken without waiting.

use std::fs::File;
use std::io;

/// Takes a shared lock on `file`; `false` when another holds an exclusive one.
pub fn try_shared(file: &File) -> io::Result<bool> {
    try_flock(file, rustix::fs::FlockOperation::NonBlockingLockShared)
}

/// Takes an exclusive lock on `file`; `false` when another holds a lock.
pub fn try_exclusive(file: &File) -> io::Result<bool> {
    try_flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive)
}

fn try_flock(file: &File, op: rustix::fs::FlockOperation) -> io::Result<bool> {
    match rustix::fs::flock(file, op) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exclusive_lock_refuses_others_until_dropped() {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let held = File::open(tmp.path()).unwrap();
        assert!(try_exclusive(&held).unwrap());
        let other = File::open(tmp.path()).unwrap();
        assert!(!try_shared(&other).unwrap());
        assert!(!try_exclusive(&other).unwrap());
        drop(held);
        assert!(try_shared(&other).unwrap());
    }
}
