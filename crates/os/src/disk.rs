//! Disk space: how much is free on the file system a path is on, space
//! set aside for later (a file whose blocks are allocated), and which
//! folders hold the most.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The space of one file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// Bytes an unprivileged process may still write.
    pub available: u64,
    /// Bytes the file system holds in all.
    pub total: u64,
}

/// The space of the file system `path` is on.
pub fn space(path: &Path) -> io::Result<Space> {
    let s = rustix::fs::statvfs(path)?;
    Ok(Space {
        available: s.f_bavail.saturating_mul(s.f_frsize),
        total: s.f_blocks.saturating_mul(s.f_frsize),
    })
}

/// Makes `path` a file of `bytes` whose blocks are allocated (not a
/// sparse file), so that removing it gives that much back. Nothing is
/// left at `path` when it fails.
pub fn reserve(path: &Path, bytes: u64) -> io::Result<()> {
    let made = File::create(path).and_then(|file| {
        rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, bytes)?;
        file.sync_all()
    });
    if made.is_err() {
        let _ = std::fs::remove_file(path);
    }
    made
}

/// The folders two levels below `dir` (`workspaces/slot-1`), or one
/// level below for a folder without subfolders, with the bytes each
/// holds on disk, largest first, at most `n`. Symlinks are not
/// followed; what cannot be read counts as empty.
pub fn largest(dir: &Path, n: usize) -> Vec<(PathBuf, u64)> {
    let mut sizes: Vec<(PathBuf, u64)> = Vec::new();
    for child in subdirs(dir) {
        let below = subdirs(&child);
        if below.is_empty() {
            sizes.push((child.clone(), usage(&child)));
        }
        sizes.extend(below.into_iter().map(|d| {
            let size = usage(&d);
            (d, size)
        }));
    }
    sizes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    sizes.truncate(n);
    sizes
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect()
}

/// The bytes on disk below `path`, not following symlinks, each file
/// counted once per directory entry.
fn usage(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    let own = meta.blocks().saturating_mul(512);
    if !meta.is_dir() {
        return own;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return own;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| usage(&e.path()))
        .fold(own, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reserve_holds_its_blocks_and_the_largest_folders_come_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("workspaces/slot-1")).unwrap();
        std::fs::create_dir_all(root.join("runs/r1")).unwrap();
        reserve(&root.join("workspaces/slot-1/big"), 4 << 20).unwrap();
        std::fs::write(root.join("runs/r1/log"), vec![1u8; 64 << 10]).unwrap();
        let found = largest(root, 3);
        assert_eq!(found[0].0, root.join("workspaces/slot-1"), "{found:?}");
        assert!(found[0].1 >= 4 << 20, "{found:?}");
        assert!(
            found.iter().all(|(p, _)| p != &root.join("workspaces")),
            "{found:?}"
        );
        assert!(space(root).unwrap().total > 0);
    }
}
