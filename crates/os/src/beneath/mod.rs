//! File operations in directories an untrusted process can write: an
//! agent's workspace, a gate checkout, an overlay layer, a CLI home. Every
//! path is resolved beneath an open directory and through no symlink
//! (see `resolve.rs`: `openat2` on Linux, a walk one component at a time
//! elsewhere), a file is opened so that a FIFO or a device
//! cannot block the opener (`O_NONBLOCK`, `O_NOCTTY`) and checked for its
//! type before use, and a file is replaced by renaming a new one over it,
//! never written through whatever stands at its name.
//!
//! planwright's own folders above such a directory are made by planwright
//! and out of every sandbox's reach, so a [`Dir`] is opened by its path.

mod resolve;

use resolve::open_beneath;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// What stands at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (never followed).
    Symlink,
    /// A FIFO, a socket or a device.
    Special,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Kind::File => "a regular file",
            Kind::Dir => "a directory",
            Kind::Symlink => "a symlink",
            Kind::Special => "a FIFO, socket or device",
        })
    }
}

/// Why a file operation beneath a directory was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum BeneathError {
    /// Something other than what the operation works on stands there.
    #[error("`{}` is {found}, where planwright expected {expected}", path.display())]
    Kind {
        /// The path, for the message.
        path: PathBuf,
        /// What stands there.
        found: Kind,
        /// What was expected there.
        expected: Kind,
    },
    /// The path goes through a symlink, or out of its directory.
    #[error("`{}` goes through a symlink or out of `{}`", path.display(), dir.display())]
    Escapes {
        /// The path, for the message.
        path: PathBuf,
        /// The directory it must stay beneath.
        dir: PathBuf,
    },
    /// The system refused.
    #[error("`{}`: {source}", path.display())]
    Io {
        /// The path, for the message.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
}

impl BeneathError {
    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            BeneathError::Kind { path, .. }
            | BeneathError::Escapes { path, .. }
            | BeneathError::Io { path, .. } => path,
        }
    }
}

/// What [`Dir::entry`] found at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// What it is.
    pub kind: Kind,
    /// Its permission bits.
    pub mode: u32,
    /// When its content last changed.
    pub modified: SystemTime,
    /// The device number of a device (0 for an overlay's whiteout).
    pub device: u64,
}

/// Flags of every open: nothing blocks, nothing becomes a terminal.
const OPEN: OFlags = OFlags::NOFOLLOW
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// An open directory; every path given to it is relative to it.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

impl Dir {
    /// Opens the directory `path` (itself not a symlink).
    pub fn open(path: &Path) -> Result<Dir, BeneathError> {
        let flags = OFlags::DIRECTORY | OFlags::RDONLY | OPEN;
        let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| BeneathError::Io {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// The directory's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, rel: &Path, e: rustix::io::Errno) -> BeneathError {
        let path = self.path.join(rel);
        match e {
            rustix::io::Errno::LOOP | rustix::io::Errno::XDEV => BeneathError::Escapes {
                path,
                dir: self.path.clone(),
            },
            e => BeneathError::Io {
                path,
                source: e.into(),
            },
        }
    }

    /// The error for `rel`, which is not a directory: a symlink leads
    /// elsewhere; anything else is the wrong kind. (The look is for the
    /// message only: nothing is opened.)
    fn not_a_dir(&self, rel: &Path) -> BeneathError {
        let found = rustix::fs::statat(&self.fd, rel, AtFlags::SYMLINK_NOFOLLOW)
            .map(|stat| kind(FileType::from_raw_mode(stat.st_mode)));
        match found {
            Ok(found) if found != Kind::Symlink => BeneathError::Kind {
                path: self.path.join(rel),
                found,
                expected: Kind::Dir,
            },
            _ => self.error(rel, rustix::io::Errno::LOOP),
        }
    }

    /// `rel` split into the directory that holds it (opened) and its name.
    fn parent<'r>(&self, rel: &'r Path) -> Result<(Dir, &'r Path), BeneathError> {
        let escapes = || BeneathError::Escapes {
            path: self.path.join(rel),
            dir: self.path.clone(),
        };
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(escapes());
        }
        let name = rel.file_name().map(Path::new).ok_or_else(escapes)?;
        let dir = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(up) => self.dir(up)?,
            None => self.dir(Path::new("."))?,
        };
        Ok((dir, name))
    }

    /// The directory `rel` below this one.
    pub fn dir(&self, rel: &Path) -> Result<Dir, BeneathError> {
        let flags = OFlags::DIRECTORY | OFlags::RDONLY | OPEN;
        let fd = open_beneath(self.fd.as_fd(), rel, flags, Mode::empty()).map_err(|e| match e {
            rustix::io::Errno::NOTDIR => self.not_a_dir(rel),
            e => self.error(rel, e),
        })?;
        Ok(Dir {
            fd,
            path: self.path.join(rel),
        })
    }

    /// The directory `rel`, made with its parents where missing; a
    /// symlink or file where one of them should be is removed first, so
    /// what is made below can never land elsewhere.
    pub fn create_dirs(&self, rel: &Path) -> Result<Dir, BeneathError> {
        let mut dir = self.dir(Path::new("."))?;
        for part in rel.components() {
            let Component::Normal(name) = part else {
                return Err(self.error(rel, rustix::io::Errno::XDEV));
            };
            let name = Path::new(name);
            match dir.entry(name)? {
                Some(Entry {
                    kind: Kind::Dir, ..
                }) => {}
                other => {
                    if other.is_some() {
                        dir.remove(name)?;
                    }
                    rustix::fs::mkdirat(&dir.fd, name, Mode::from_raw_mode(0o755))
                        .map_err(|e| dir.error(name, e))?;
                }
            }
            dir = dir.dir(name)?;
        }
        Ok(dir)
    }

    /// Writes `bytes` to `rel` as a new regular file, making its
    /// directories (see [`Dir::create_dirs`]) and replacing whatever
    /// stood there.
    pub fn write(&self, rel: &Path, bytes: &[u8]) -> Result<(), BeneathError> {
        if let Some(up) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.create_dirs(up)?;
        }
        if self.entry(rel)?.is_some_and(|e| e.kind == Kind::Dir) {
            self.remove(rel)?;
        }
        self.replace(rel, bytes, 0o644)
    }

    /// What stands at `rel`, if anything (a symlink is not followed).
    pub fn entry(&self, rel: &Path) -> Result<Option<Entry>, BeneathError> {
        let (dir, name) = self.parent(rel)?;
        match rustix::fs::statat(&dir.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(Entry {
                kind: kind(FileType::from_raw_mode(stat.st_mode)),
                mode: u32_mode(stat.st_mode) & 0o7777,
                modified: time(
                    stat.st_mtime,
                    u32::try_from(stat.st_mtime_nsec).unwrap_or(0),
                ),
                device: u64_device(stat.st_rdev),
            })),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(self.error(rel, e)),
        }
    }

    /// Opens the regular file `rel` with `flags` (plus [`OPEN`]).
    fn file(&self, rel: &Path, flags: OFlags, mode: u32) -> Result<File, BeneathError> {
        let fd = open_beneath(self.fd.as_fd(), rel, flags | OPEN, raw_mode(mode))
            .map_err(|e| self.error(rel, e))?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| self.error(rel, e))?;
        let found = kind(FileType::from_raw_mode(stat.st_mode));
        if found != Kind::File {
            return Err(BeneathError::Kind {
                path: self.path.join(rel),
                found,
                expected: Kind::File,
            });
        }
        Ok(File::from(fd))
    }

    /// The content of the regular file `rel`.
    pub fn read(&self, rel: &Path) -> Result<Vec<u8>, BeneathError> {
        let mut file = self.file(rel, OFlags::RDONLY, 0)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|source| BeneathError::Io {
                path: self.path.join(rel),
                source,
            })?;
        Ok(bytes)
    }

    /// The regular file `rel`, open for reading: for a read the caller
    /// bounds (a file another process may have grown without limit).
    pub fn reader(&self, rel: &Path) -> Result<File, BeneathError> {
        self.file(rel, OFlags::RDONLY, 0)
    }

    /// The regular file `rel`, made if missing, open for appending.
    pub fn append(&self, rel: &Path) -> Result<File, BeneathError> {
        self.file(rel, OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE, 0o644)
    }

    /// Makes `rel` a regular file holding `bytes` with permissions `mode`,
    /// whatever stood there (a directory excepted): a new file is renamed
    /// over the name, so nothing at the name is written through.
    pub fn replace(&self, rel: &Path, bytes: &[u8], mode: u32) -> Result<(), BeneathError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let (dir, name) = self.parent(rel)?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = PathBuf::from(format!(".planwright-new-{}-{n}", std::process::id()));
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
        let written = dir.file(&tmp, flags, mode).and_then(|mut f| {
            f.write_all(bytes).map_err(|source| BeneathError::Io {
                path: dir.path.join(&tmp),
                source,
            })
        });
        let renamed = written.and_then(|()| {
            rustix::fs::renameat(&dir.fd, &tmp, &dir.fd, name).map_err(|e| dir.error(name, e))
        });
        if renamed.is_err() {
            let _ = rustix::fs::unlinkat(&dir.fd, &tmp, AtFlags::empty());
        }
        renamed
    }

    /// Copies the user's file `from` (a path planwright trusts) to `rel`.
    pub fn copy_in(&self, from: &Path, rel: &Path) -> Result<(), BeneathError> {
        let io = |source| BeneathError::Io {
            path: from.to_path_buf(),
            source,
        };
        let bytes = std::fs::read(from).map_err(io)?;
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(from).map_err(io)?.permissions(),
        );
        self.replace(rel, &bytes, mode & 0o777)
    }

    /// The target of the symlink `rel`.
    pub fn read_link(&self, rel: &Path) -> Result<PathBuf, BeneathError> {
        let (dir, name) = self.parent(rel)?;
        let target =
            rustix::fs::readlinkat(&dir.fd, name, Vec::new()).map_err(|e| dir.error(name, e))?;
        Ok(PathBuf::from(<std::ffi::OsStr as OsStrExt>::from_bytes(
            target.as_bytes(),
        )))
    }

    /// Makes `rel` a symlink to `target`.
    pub fn symlink(&self, target: &Path, rel: &Path) -> Result<(), BeneathError> {
        let (dir, name) = self.parent(rel)?;
        rustix::fs::symlinkat(target, &dir.fd, name).map_err(|e| dir.error(name, e))
    }

    /// Removes whatever stands at `rel`, a directory with all it holds
    /// (nothing below it is followed); nothing there is not an error.
    pub fn remove(&self, rel: &Path) -> Result<(), BeneathError> {
        let (dir, name) = self.parent(rel)?;
        match dir.entry(name)? {
            None => Ok(()),
            Some(Entry {
                kind: Kind::Dir, ..
            }) => {
                dir.dir(name)?.empty()?;
                rustix::fs::unlinkat(&dir.fd, name, AtFlags::REMOVEDIR)
                    .map_err(|e| dir.error(name, e))
            }
            Some(_) => rustix::fs::unlinkat(&dir.fd, name, AtFlags::empty())
                .map_err(|e| dir.error(name, e)),
        }
    }

    /// Removes everything this directory holds.
    pub fn empty(&self) -> Result<(), BeneathError> {
        for name in self.names()? {
            self.remove(&name)?;
        }
        Ok(())
    }

    /// The names of what this directory holds, sorted.
    pub fn names(&self) -> Result<Vec<PathBuf>, BeneathError> {
        let here = Path::new(".");
        let list = rustix::fs::Dir::read_from(&self.fd).map_err(|e| self.error(here, e))?;
        let mut names = Vec::new();
        for entry in list {
            let entry = entry.map_err(|e| self.error(here, e))?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(PathBuf::from(<std::ffi::OsStr as OsStrExt>::from_bytes(
                    name,
                )));
            }
        }
        names.sort();
        Ok(names)
    }

    /// Moves `rel` to `to_rel` in `to` (on the same file system),
    /// replacing what stands there unless it is a non-empty directory.
    pub fn rename(&self, rel: &Path, to: &Dir, to_rel: &Path) -> Result<(), BeneathError> {
        let (from_dir, from_name) = self.parent(rel)?;
        let (to_dir, to_name) = to.parent(to_rel)?;
        rustix::fs::renameat(&from_dir.fd, from_name, &to_dir.fd, to_name)
            .map_err(|e| self.error(rel, e))
    }

    /// Sets this directory's permission bits.
    pub fn set_mode(&self, mode: u32) -> Result<(), BeneathError> {
        rustix::fs::fchmod(&self.fd, raw_mode(mode)).map_err(|e| self.error(Path::new("."), e))
    }

    /// Sets the permission bits of the directory `rel`, even where they
    /// let no one open or enter it (`chmod 000`): it is reached beneath
    /// this directory through no symlink, and a symlink or anything but a
    /// directory at `rel` is refused, never followed. The directories on
    /// the way must let the owner in (so set them top-down).
    pub fn set_dir_mode(&self, rel: &Path, mode: u32) -> Result<(), BeneathError> {
        set_dir_mode_at(self, rel, raw_mode(mode))
    }

    /// The value of this directory's extended attribute `name`, if set.
    pub fn xattr(&self, name: &str) -> Option<Vec<u8>> {
        let mut value = vec![0u8; 256];
        let n = rustix::fs::fgetxattr(&self.fd, name, &mut value[..]).ok()?;
        value.truncate(n);
        Some(value)
    }
}

impl AsFd for Dir {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Linux has no `fchmod` of a descriptor opened with `O_PATH` (the only
/// way to hold a directory its owner may not read) and, before 6.6, no
/// `fchmodat` that refuses a symlink: the mode is set through the
/// descriptor's entry in `/proc/self/fd`, which names that very directory
/// (as glibc's `fchmodat(AT_SYMLINK_NOFOLLOW)` does).
#[cfg(target_os = "linux")]
fn set_dir_mode_at(dir: &Dir, rel: &Path, mode: Mode) -> Result<(), BeneathError> {
    use std::os::fd::AsRawFd;
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = open_beneath(dir.fd.as_fd(), rel, flags, Mode::empty()).map_err(|e| match e {
        rustix::io::Errno::NOTDIR => dir.not_a_dir(rel),
        e => dir.error(rel, e),
    })?;
    let held = format!("/proc/self/fd/{}", fd.as_raw_fd());
    rustix::fs::chmod(held.as_str(), mode).map_err(|e| dir.error(rel, e))
}

/// Elsewhere `fchmodat(AT_SYMLINK_NOFOLLOW)` refuses to follow a symlink
/// the name may have become after the look.
#[cfg(not(target_os = "linux"))]
fn set_dir_mode_at(dir: &Dir, rel: &Path, mode: Mode) -> Result<(), BeneathError> {
    let (up, name) = dir.parent(rel)?;
    match up.entry(name)? {
        Some(Entry {
            kind: Kind::Dir, ..
        }) => rustix::fs::chmodat(&up.fd, name, mode, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| up.error(name, e)),
        Some(Entry { kind, .. }) if kind != Kind::Symlink => Err(BeneathError::Kind {
            path: dir.path.join(rel),
            found: kind,
            expected: Kind::Dir,
        }),
        _ => Err(dir.error(rel, rustix::io::Errno::LOOP)),
    }
}

fn time(secs: i64, nanos: u32) -> SystemTime {
    let whole = Duration::from_secs(secs.unsigned_abs());
    let base = match secs >= 0 {
        true => SystemTime::UNIX_EPOCH + whole,
        false => SystemTime::UNIX_EPOCH - whole,
    };
    base + Duration::from_nanos(u64::from(nanos))
}

// `mode_t` and `dev_t` are `u32` and `u64` on Linux, `u16` and `i32` on
// macOS: the conversions below are no-ops on one and needed on the other.

#[allow(clippy::useless_conversion)]
fn u32_mode(mode: rustix::fs::RawMode) -> u32 {
    u32::from(mode)
}

#[allow(clippy::unnecessary_cast)]
fn u64_device(dev: rustix::fs::Dev) -> u64 {
    dev as u64
}

#[allow(clippy::unnecessary_cast)]
fn raw_mode(mode: u32) -> Mode {
    Mode::from_raw_mode((mode & 0o7777) as rustix::fs::RawMode)
}

fn kind(t: FileType) -> Kind {
    match t {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Dir,
        FileType::Symlink => Kind::Symlink,
        _ => Kind::Special,
    }
}

/// The folder of `path` (one planwright made), opened, and the name in it.
fn split(path: &Path) -> Result<(Dir, &Path), BeneathError> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(BeneathError::Kind {
            path: path.to_path_buf(),
            found: Kind::Dir,
            expected: Kind::File,
        });
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    Ok((Dir::open(dir)?, Path::new(name)))
}

/// Opens the file `path` for appending (made if missing), refusing a
/// symlink or a special file at its name: a log in a folder planwright
/// made, which a confined reviewer may write too.
pub fn append(path: &Path) -> Result<File, BeneathError> {
    let (dir, name) = split(path)?;
    dir.append(name)
}

/// The content of the regular file `path` (see [`append`]).
pub fn read_file(path: &Path) -> Result<Vec<u8>, BeneathError> {
    let (dir, name) = split(path)?;
    dir.read(name)
}

/// Makes `path` a new regular file holding `bytes` (see [`append`]).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), BeneathError> {
    let (dir, name) = split(path)?;
    dir.replace(name, bytes, 0o644)
}

/// Removes whatever stands at `path` (see [`append`]).
pub fn remove(path: &Path) -> Result<(), BeneathError> {
    let (dir, name) = split(path)?;
    dir.remove(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory `inside` and, beside it, `outside` with a file the
    /// tests must never touch.
    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let inside = tmp.path().join("inside");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret"), "user's\n").unwrap();
        (tmp, inside, outside)
    }

    fn untouched(outside: &Path) {
        let names: Vec<_> = std::fs::read_dir(outside).unwrap().collect();
        assert_eq!(names.len(), 1, "nothing was made outside");
        assert_eq!(
            std::fs::read_to_string(outside.join("secret")).unwrap(),
            "user's\n"
        );
    }

    #[test]
    fn a_symlink_is_replaced_never_written_through() {
        let (_tmp, inside, outside) = setup();
        std::os::unix::fs::symlink(outside.join("secret"), inside.join("f")).unwrap();
        let dir = Dir::open(&inside).unwrap();
        let read = dir.read(Path::new("f"));
        assert!(
            matches!(read, Err(BeneathError::Escapes { .. })),
            "{read:?}"
        );
        let entry = dir.entry(Path::new("f")).unwrap().unwrap();
        assert_eq!(entry.kind, Kind::Symlink);
        dir.replace(Path::new("f"), b"mine\n", 0o644).unwrap();
        assert_eq!(std::fs::read_to_string(inside.join("f")).unwrap(), "mine\n");
        assert!(!inside.join("f").is_symlink());
        let appended = dir.append(Path::new("f"));
        assert!(appended.is_ok(), "a regular file now: {appended:?}");
        untouched(&outside);
    }

    #[test]
    fn a_symlinked_directory_on_the_way_is_never_entered() {
        let (_tmp, inside, outside) = setup();
        std::os::unix::fs::symlink(&outside, inside.join("sub")).unwrap();
        let dir = Dir::open(&inside).unwrap();
        for rel in ["sub/secret", "sub/new", "../outside/secret"] {
            let rel = Path::new(rel);
            assert!(
                matches!(dir.read(rel), Err(BeneathError::Escapes { .. })),
                "{rel:?}"
            );
            assert!(dir.append(rel).is_err(), "{rel:?}");
            assert!(dir.replace(rel, b"x", 0o644).is_err(), "{rel:?}");
            assert!(dir.remove(rel).is_err(), "{rel:?}");
        }
        // Made as a real directory instead, and written below.
        dir.write(Path::new("sub/new"), b"x").unwrap();
        assert!(!inside.join("sub").is_symlink());
        assert_eq!(std::fs::read(inside.join("sub/new")).unwrap(), b"x");
        untouched(&outside);
    }

    #[test]
    fn a_fifo_where_a_file_was_expected_fails_at_once() {
        let (_tmp, inside, outside) = setup();
        let fifo = inside.join("f");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let dir = Dir::open(&inside).unwrap();
        for result in [
            dir.read(Path::new("f")).map(|_| ()),
            dir.append(Path::new("f")).map(|_| ()),
        ] {
            match result {
                Err(BeneathError::Kind { found, .. }) => assert_eq!(found, Kind::Special),
                // Opening a FIFO to write with no reader: refused, not blocked.
                Err(BeneathError::Io { source, .. }) => {
                    assert_eq!(source.raw_os_error(), Some(libc::ENXIO))
                }
                other => panic!("{other:?}"),
            }
        }
        dir.remove(Path::new("f")).unwrap();
        assert!(dir.entry(Path::new("f")).unwrap().is_none());
        untouched(&outside);
    }

    /// Directories no one may open or enter get their mode back, from the
    /// top down; a symlink where a directory should be is refused and its
    /// target keeps its mode.
    #[test]
    fn a_directory_no_one_may_enter_gets_its_mode_back_and_a_symlink_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let (_tmp, inside, outside) = setup();
        std::fs::create_dir_all(inside.join("d/e")).unwrap();
        std::fs::write(inside.join("f"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, inside.join("l")).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let (outside_mode, file_mode) = (mode(&outside), mode(&inside.join("f")));
        for d in ["d/e", "d"] {
            let shut = std::fs::Permissions::from_mode(0o000);
            std::fs::set_permissions(inside.join(d), shut).unwrap();
        }
        let dir = Dir::open(&inside).unwrap();
        dir.set_dir_mode(Path::new("d"), 0o755).unwrap();
        dir.set_dir_mode(Path::new("d/e"), 0o2750).unwrap();
        assert_eq!(
            (mode(&inside.join("d")), mode(&inside.join("d/e"))),
            (0o755, 0o2750)
        );
        for rel in ["l", "l/x", "../outside", "f"] {
            let refused = dir.set_dir_mode(Path::new(rel), 0o700);
            assert!(
                matches!(
                    refused,
                    Err(BeneathError::Escapes { .. } | BeneathError::Kind { .. })
                ),
                "{rel}: {refused:?}"
            );
        }
        assert_eq!(
            (mode(&outside), mode(&inside.join("f"))),
            (outside_mode, file_mode)
        );
        untouched(&outside);
    }

    #[test]
    fn removing_a_tree_removes_links_not_their_targets() {
        let (_tmp, inside, outside) = setup();
        std::fs::create_dir_all(inside.join("d/e")).unwrap();
        std::fs::write(inside.join("d/e/f"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, inside.join("d/link")).unwrap();
        let dir = Dir::open(&inside).unwrap();
        dir.remove(Path::new("d")).unwrap();
        assert!(!inside.join("d").exists());
        untouched(&outside);
    }
}
