//! Which paths of a work tree changed while untrusted processes ran in it,
//! without reading the whole tree: the kernel's inotify, asked to report
//! on each directory and on each file planwright names. A directory's
//! descriptor reports what is created, deleted, moved, written or changed
//! in it by name; a file's reports any write to its inode, whichever name
//! or hard link (in the tree or out of it) the writer used. A process that
//! ends closes every file it opened for writing, mapped ones included, so
//! a change made through `mmap` shows too, when the file is closed.
//!
//! Whatever inotify cannot vouch for makes the answer
//! [`Changes::Unknown`], and the caller reads the whole tree instead: a
//! queue that overflowed, an observed directory moved (the descriptors
//! beneath it would name the old paths), the system's limit of inotify
//! descriptors reached. A directory created meanwhile is reported as a
//! whole (its contents were never observed).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// What changed in the work tree since the last [`ChangedPaths::take`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changes {
    /// These paths (relative to the work tree; a directory stands for
    /// everything beneath it) and nothing else.
    Paths(BTreeSet<PathBuf>),
    /// inotify cannot say; why, for the log.
    Unknown(String),
}

/// Why no inotify instance could be made at all.
#[derive(Debug, thiserror::Error)]
pub enum InotifyError {
    /// This system has no inotify, or refused one.
    #[error("no inotify instance for `{}`: {source}", root.display())]
    Unavailable {
        /// The work tree.
        root: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

/// One path an inotify descriptor stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Observed {
    rel: PathBuf,
    dir: bool,
}

/// The changed paths of the work tree at `root`, as inotify reports them;
/// see the module's documentation.
#[derive(Debug)]
pub struct ChangedPaths {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
    root: PathBuf,
    /// A file's hard links in the tree share one descriptor.
    by_wd: HashMap<i32, Vec<Observed>>,
    changed: BTreeSet<PathBuf>,
    unknown: Option<String>,
}

#[cfg(target_os = "linux")]
mod linux {
    use super::{ChangedPaths, Changes, InotifyError, Observed};
    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};

    /// What a file's descriptor reports: any change to its inode. Opening
    /// and reading are not changes.
    fn file_mask() -> WatchFlags {
        WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::DONT_FOLLOW
    }

    /// What a directory's descriptor reports: its names and their files,
    /// and the directory itself.
    fn dir_mask() -> WatchFlags {
        file_mask()
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::ONLYDIR
    }

    impl ChangedPaths {
        /// The changed paths of the work tree at `root`, observing nothing
        /// yet.
        pub fn new(root: &Path) -> Result<ChangedPaths, InotifyError> {
            let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).map_err(|e| {
                InotifyError::Unavailable {
                    root: root.to_path_buf(),
                    source: e.into(),
                }
            })?;
            Ok(ChangedPaths {
                fd,
                root: root.to_path_buf(),
                by_wd: Default::default(),
                changed: Default::default(),
                unknown: None,
            })
        }

        /// Observes `rel` (relative to the work tree; `""` is the tree
        /// itself), a directory when `dir`. The last name is not followed;
        /// the caller names paths it has just written or checked. A path
        /// that cannot be observed (gone, shut, not what `dir` says, the
        /// system's limit of inotify descriptors reached) makes the changes
        /// unknown until the next [`ChangedPaths::take`]; after an unknown
        /// answer, make a new one.
        pub fn observe(&mut self, rel: &Path, dir: bool) {
            let mask = if dir { dir_mask() } else { file_mask() };
            match inotify::add_watch(&self.fd, self.root.join(rel), mask) {
                Ok(wd) => {
                    let list = self.by_wd.entry(wd).or_default();
                    let o = Observed {
                        rel: rel.to_path_buf(),
                        dir,
                    };
                    if !list.contains(&o) {
                        list.push(o);
                    }
                }
                Err(Errno::NOSPC) => {
                    self.give_up("the system's limit of inotify descriptors is reached")
                }
                Err(e) => self.give_up(&format!("`{}` could not be observed: {e}", rel.display())),
            }
        }

        /// What changed since the start or since the last call, and a
        /// fresh start. Changes already made are queued by the kernel:
        /// this reads them all.
        pub fn take(&mut self) -> Changes {
            let mut buf = vec![std::mem::MaybeUninit::uninit(); 64 * 1024];
            let mut reader = inotify::Reader::new(&self.fd, &mut buf);
            let mut events = Vec::new();
            let mut failed = None;
            loop {
                match reader.next() {
                    Ok(e) => events.push((
                        e.wd(),
                        e.events(),
                        e.file_name()
                            .map(|n| PathBuf::from(OsStr::from_bytes(n.to_bytes()))),
                    )),
                    Err(Errno::AGAIN) => break,
                    Err(Errno::INTR) => continue,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            if let Some(e) = failed {
                self.give_up(&format!("reading the inotify queue failed: {e}"));
            }
            for (wd, flags, name) in events {
                self.note(wd, flags, name);
            }
            let changed = std::mem::take(&mut self.changed);
            match self.unknown.take() {
                Some(why) => Changes::Unknown(why),
                None => Changes::Paths(changed),
            }
        }

        /// One event's paths, marked changed.
        fn note(&mut self, wd: i32, flags: ReadFlags, name: Option<PathBuf>) {
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                return self.give_up("more changes than the kernel's inotify queue holds");
            }
            let gone = flags.contains(ReadFlags::IGNORED);
            let list = match gone {
                true => self.by_wd.remove(&wd),
                false => self.by_wd.get(&wd).cloned(),
            };
            let Some(list) = list else {
                return self.give_up("an event of a descriptor planwright did not make");
            };
            for o in list {
                let Some(name) = &name else {
                    // The observed path itself: its inode changed, or is
                    // gone (`IGNORED`). A directory moved would leave the
                    // descriptors beneath it naming the old paths.
                    if o.dir && flags.contains(ReadFlags::MOVE_SELF) {
                        return self.give_up("an observed folder was moved");
                    }
                    self.changed.insert(o.rel);
                    continue;
                };
                if flags.contains(ReadFlags::ISDIR) && flags.contains(ReadFlags::MOVED_FROM) {
                    return self.give_up("an observed folder was moved");
                }
                self.changed.insert(o.rel.join(name));
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
impl ChangedPaths {
    /// No inotify here: the caller reads the whole tree.
    pub fn new(root: &Path) -> Result<ChangedPaths, InotifyError> {
        Err(InotifyError::Unavailable {
            root: root.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::Unsupported),
        })
    }

    /// Never reached: [`ChangedPaths::new`] fails.
    pub fn observe(&mut self, rel: &Path, _dir: bool) {
        self.changed.insert(rel.to_path_buf());
    }

    /// Never reached: [`ChangedPaths::new`] fails.
    pub fn take(&mut self) -> Changes {
        Changes::Unknown("no inotify on this system".to_string())
    }
}

impl ChangedPaths {
    /// The work tree observed.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The changes cannot be known until the next [`ChangedPaths::take`].
    fn give_up(&mut self, why: &str) {
        self.unknown.get_or_insert_with(|| why.to_string());
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests;
