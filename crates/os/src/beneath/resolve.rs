//! The one resolution every operation of [`super::Dir`] uses: beneath the
//! open directory (no absolute path, no way out by `..`) and through no
//! symlink, with `ELOOP` for a symlink on the way and `EXDEV` for a way
//! out, whatever the platform.

use rustix::fs::{Mode, OFlags};
use rustix::io::Result;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;

/// Linux resolves the whole path in one call.
#[cfg(target_os = "linux")]
pub(super) fn open_beneath(
    dir: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd> {
    use rustix::fs::ResolveFlags;
    const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
        .union(ResolveFlags::NO_SYMLINKS)
        .union(ResolveFlags::NO_MAGICLINKS);
    rustix::fs::openat2(dir, rel, flags, mode, RESOLVE)
}

#[cfg(not(target_os = "linux"))]
pub(super) fn open_beneath(
    dir: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd> {
    open_walk(dir, rel, flags, mode)
}

/// Without `openat2`: one component at a time, each opened with
/// `O_NOFOLLOW` from the directory before it, so nothing between two
/// steps can swap a symlink in. Stricter than `openat2` in one way: a
/// `..` is refused even where it would stay beneath (planwright's own
/// paths never have one).
#[cfg(any(not(target_os = "linux"), test))]
fn open_walk(dir: BorrowedFd<'_>, rel: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd> {
    use rustix::io::Errno;
    use std::path::Component;
    let mut names = Vec::new();
    for part in rel.components() {
        match part {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(Errno::XDEV)
            }
        }
    }
    let Some((last, up)) = names.split_last() else {
        return rustix::fs::openat(dir, ".", flags, mode);
    };
    let step = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut held: Option<OwnedFd> = None;
    for name in up {
        let at = held.as_ref().map_or(dir, std::os::fd::AsFd::as_fd);
        let next = rustix::fs::openat(at, *name, step, Mode::empty());
        held = Some(next.map_err(|e| symlink_is_loop(at, name.as_ref(), e))?);
    }
    let at = held.as_ref().map_or(dir, std::os::fd::AsFd::as_fd);
    rustix::fs::openat(at, *last, flags | OFlags::NOFOLLOW, mode)
}

/// Linux answers `O_DIRECTORY | O_NOFOLLOW` on a symlink with `ENOTDIR`,
/// where `openat2` says `ELOOP` for a symlink on the way (and `ENOTDIR`
/// for one at the end, as the walk does).
#[cfg(any(not(target_os = "linux"), test))]
fn symlink_is_loop(at: BorrowedFd<'_>, name: &Path, e: rustix::io::Errno) -> rustix::io::Errno {
    use rustix::fs::{AtFlags, FileType};
    use rustix::io::Errno;
    let symlink = || {
        rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink)
    };
    match e {
        Errno::NOTDIR if symlink() => Errno::LOOP,
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    /// The walk answers as `openat2` does: the same successes, the same
    /// refusals, for files and directories, inside and on the way out.
    #[test]
    fn the_walk_resolves_as_openat2_does() {
        let tmp = tempfile::tempdir().unwrap();
        let (inside, outside) = (tmp.path().join("inside"), tmp.path().join("outside"));
        std::fs::create_dir_all(inside.join("d/e")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(inside.join("f"), "x").unwrap();
        std::fs::write(inside.join("d/e/g"), "x").unwrap();
        std::fs::write(outside.join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, inside.join("sub")).unwrap();
        std::os::unix::fs::symlink(inside.join("f"), inside.join("lf")).unwrap();
        std::os::unix::fs::symlink("d", inside.join("ld")).unwrap();
        let dir =
            rustix::fs::open(&inside, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
        let file = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let directory = file | OFlags::DIRECTORY;
        let rels = [
            ".",
            "f",
            "d",
            "d/e",
            "d/e/g",
            "./d/e",
            "missing",
            "d/missing",
            "f/g",
            "sub",
            "sub/secret",
            "lf",
            "ld",
            "ld/e",
            "ld/e/g",
            "../outside/secret",
            "/etc",
        ];
        for rel in rels {
            for flags in [file, directory] {
                let rel = Path::new(rel);
                let walked = open_walk(dir.as_fd(), rel, flags, Mode::empty()).map(drop);
                let resolved = open_beneath(dir.as_fd(), rel, flags, Mode::empty()).map(drop);
                assert_eq!(walked, resolved, "{rel:?} {flags:?}");
            }
        }
    }
}
