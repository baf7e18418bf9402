//! The file system a confined child sees, in its own mount namespace: the
//! whole tree read-only (so a change of mode, owner, times or extended
//! attributes outside its writable areas fails with `EROFS`, which
//! Landlock, having no rights for metadata, cannot give), with fresh empty
//! tmpfs over the directories where services keep their sockets ([`hidden`]),
//! and bound back at their own paths: the policy's writable areas
//! read-write, and read-only what the child is given to read (the directory
//! it starts in, its program's, a script it is given) where that lies below
//! a hidden directory.
//!
//! The ordering is what makes it work. Each writable area is cloned
//! (`open_tree`) before the tree turns read-only, so its copy stays
//! writable; what is bound back read-only is cloned after. Then, outermost
//! path first, each hidden directory gets its tmpfs and each copy is moved
//! to its path (its mount point made in the tmpfs where it lies in one),
//! so a writable area inside a directory bound back read-only lands on top
//! of it. Landlock's rules are by inode, and a bind shows the same inodes,
//! so the ruleset made from the real paths holds in this view.
//!
//! Everything but [`MountSetup::new`] and [`probe`]'s parent side runs in
//! the forked child: system calls on data prepared before the fork.

use rustix::fs::{Mode, OFlags, CWD};
use rustix::mount::{MountFlags, MountPropagationFlags, MoveMountFlags, OpenTreeFlags};
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Where services keep their sockets: hidden under empty tmpfs. `HOME`
/// and `XDG_RUNTIME_DIR` are taken from planwright's environment.
fn hidden() -> Vec<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    hidden_in(
        var("HOME").map(PathBuf::from),
        var("XDG_RUNTIME_DIR").map(PathBuf::from),
    )
}

/// The folders below the home that hold services' sockets and nothing a
/// CLI reads: gpg-agent's, ssh-agent's since OpenSSH 10.1, the 1Password
/// SSH agent's, Docker Desktop's, Colima's and Lima's.
const HOME_SOCKET_DIRS: [&str; 7] = [
    ".gnupg",
    ".ssh/agent",
    ".1password",
    ".docker/desktop",
    ".docker/run",
    ".colima",
    ".lima",
];

/// [`hidden`] for the home `home` and the runtime directory `run`.
fn hidden_in(home: Option<PathBuf>, run: Option<PathBuf>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["/run", "/var/run", "/tmp", "/dev/shm"]
        .iter()
        .map(PathBuf::from)
        .collect();
    dirs.extend(run);
    if let Some(home) = home {
        dirs.extend(HOME_SOCKET_DIRS.iter().map(|d| home.join(d)));
    }
    // A symlink (`/var/run -> /run`) resolves into what is hidden anyway.
    let mut real: Vec<PathBuf> = dirs
        .iter()
        .filter(|d| d.symlink_metadata().is_ok_and(|m| m.is_dir()))
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect();
    real.sort();
    real.dedup();
    outermost(real)
}

/// `paths` without those below another of them.
fn outermost(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths
        .iter()
        .filter(|p| !paths.iter().any(|q| q != *p && p.starts_with(q)))
        .cloned()
        .collect()
}

/// What the child is given, as the parent sees it.
#[derive(Debug, Default)]
pub(super) struct View {
    /// Bound back read-write (the policy's writable areas).
    pub(super) writable: Vec<PathBuf>,
    /// Bound back read-only where hidden.
    pub(super) readable: Vec<PathBuf>,
    /// Where the child starts.
    pub(super) cwd: Option<PathBuf>,
}

/// One step of making the view, in the child.
#[derive(Debug)]
enum Step {
    /// An empty tmpfs over the directory.
    Hide(CString),
    /// A copy of the tree at `path` moved back there.
    Bind {
        path: CString,
        writable: bool,
        /// Mount points to make first in a tmpfs, outermost first: a
        /// directory, or a file for the last when `path` is one.
        make: Vec<(CString, bool)>,
    },
}

/// Data for making the view, made before the fork.
#[derive(Debug)]
pub(super) struct MountSetup {
    /// Outermost path first; at one path, hiding comes first.
    steps: Vec<Step>,
    /// The copy of each `Bind` step's tree, made in the child.
    copies: Vec<Option<OwnedFd>>,
    /// The directory to start in again, in the new view.
    cwd: Option<CString>,
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)
}

impl MountSetup {
    pub(super) fn new(view: &View) -> io::Result<MountSetup> {
        let hidden = hidden();
        let real = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        let writable = outermost(view.writable.iter().map(real).collect());
        let under_hidden = |p: &Path| hidden.iter().find(|h| p.starts_with(h) && p != *h);
        // Read-only binds only where something would be hidden, and not
        // where a writable area (or another of them) shows it already.
        let readable: Vec<PathBuf> = outermost(
            view.readable
                .iter()
                .map(real)
                .filter(|p| under_hidden(p).is_some())
                .filter(|p| !writable.iter().any(|w| p.starts_with(w)))
                .collect(),
        );
        let mut order: Vec<(usize, u8, Step)> = Vec::new();
        for dir in &hidden {
            order.push((dir.components().count(), 0, Step::Hide(c_path(dir)?)));
        }
        for (paths, rw) in [(&writable, true), (&readable, false)] {
            for path in paths {
                let mut make = Vec::new();
                if let Some(top) = under_hidden(path) {
                    let mut below: Vec<&Path> = path.ancestors().take_while(|a| a != top).collect();
                    below.reverse();
                    for p in below {
                        make.push((c_path(p)?, p != path.as_path() || path.is_dir()));
                    }
                }
                let step = Step::Bind {
                    path: c_path(path)?,
                    writable: rw,
                    make,
                };
                order.push((path.components().count(), 1, step));
            }
        }
        order.sort_by_key(|(depth, kind, _)| (*depth, *kind));
        let steps: Vec<Step> = order.into_iter().map(|(_, _, s)| s).collect();
        Ok(MountSetup {
            copies: steps.iter().map(|_| None).collect(),
            steps,
            cwd: view.cwd.as_deref().map(c_path).transpose()?,
        })
    }

    /// In the child, in its new user and mount namespaces: makes the view
    /// and starts in its directory again (the one it had is in the tree
    /// below).
    pub(super) fn enter(&mut self) -> io::Result<()> {
        rustix::mount::mount_change(
            c"/",
            MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
        )?;
        self.copy(true)?;
        set_readonly(None)?;
        self.copy(false)?;
        for (step, copy) in self.steps.iter().zip(self.copies.iter_mut()) {
            match step {
                Step::Hide(dir) => hide(dir)?,
                Step::Bind { path, make, .. } => {
                    for (point, dir) in make {
                        mount_point(point, *dir)?;
                    }
                    if let Some(copy) = copy.take() {
                        rustix::mount::move_mount(
                            copy.as_fd(),
                            c"",
                            CWD,
                            path.as_c_str(),
                            MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
                        )?;
                    }
                }
            }
        }
        if let Some(cwd) = &self.cwd {
            rustix::process::chdir(cwd.as_c_str())?;
        }
        Ok(())
    }

    /// Copies the trees of the binds that are `writable` (or not); a
    /// read-only copy is made read-only throughout.
    fn copy(&mut self, writable: bool) -> io::Result<()> {
        for (step, copy) in self.steps.iter().zip(self.copies.iter_mut()) {
            let Step::Bind {
                path, writable: rw, ..
            } = step
            else {
                continue;
            };
            if *rw != writable {
                continue;
            }
            let flags = OpenTreeFlags::OPEN_TREE_CLONE
                | OpenTreeFlags::OPEN_TREE_CLOEXEC
                | OpenTreeFlags::AT_RECURSIVE;
            let fd = rustix::mount::open_tree(CWD, path.as_c_str(), flags)?;
            if !writable {
                set_readonly(Some(&fd))?;
            }
            *copy = Some(fd);
        }
        Ok(())
    }
}

/// `struct mount_attr`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Makes every mount of the tree `tree` (or of `/`) read-only.
fn set_readonly(tree: Option<&OwnedFd>) -> io::Result<()> {
    const MOUNT_ATTR_RDONLY: u64 = 1;
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let (fd, path, flags) = match tree {
        Some(fd) => (
            fd.as_raw_fd(),
            c"",
            libc::AT_RECURSIVE | libc::AT_EMPTY_PATH,
        ),
        None => (libc::AT_FDCWD, c"/", libc::AT_RECURSIVE),
    };
    // SAFETY: `mount_setattr` reads `attr`, a `struct mount_attr` of the
    // size passed that outlives the call, and the NUL-terminated `path`;
    // it writes no memory of ours. rustix has no `mount_setattr`.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            fd,
            path.as_ptr(),
            flags as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn hide(dir: &CStr) -> io::Result<()> {
    rustix::mount::mount(
        c"tmpfs",
        dir,
        c"tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        c"mode=0755",
    )?;
    Ok(())
}

/// Makes a directory (or an empty file) to mount on; one that exists will do.
fn mount_point(path: &CStr, dir: bool) -> io::Result<()> {
    let made = if dir {
        rustix::fs::mkdir(path, Mode::from_raw_mode(0o755))
    } else {
        rustix::fs::open(
            path,
            OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .map(drop)
    };
    match made {
        Ok(()) | Err(rustix::io::Errno::EXIST) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// What a child is given to read by the command itself: the directory it
/// starts in, its program's directory (and the real one's, through a
/// symlink), and that of every argument naming a regular file by absolute
/// path (a script given to an interpreter).
pub(super) fn named_by(cmd: &std::process::Command) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = vec![PathBuf::from(cmd.get_program())];
    files.extend(
        cmd.get_args()
            .map(Path::new)
            .filter(|a| a.is_absolute() && a.is_file())
            .map(Path::to_path_buf),
    );
    let mut dirs: Vec<PathBuf> = Vec::new();
    for file in files.iter().filter(|f| f.is_absolute()) {
        dirs.extend(file.parent().map(Path::to_path_buf));
        if let Ok(real) = std::fs::canonicalize(file) {
            dirs.extend(real.parent().map(Path::to_path_buf));
        }
    }
    dirs.extend(cmd.get_current_dir().map(Path::to_path_buf));
    dirs.retain(|d| d.is_dir());
    dirs
}

/// Whether this machine can make the view: a child that hides `/tmp`,
/// binds a directory of it back and turns the tree read-only.
pub(super) fn probe(enter_ns: impl Fn() -> io::Result<()>) -> Result<(), String> {
    let dir = tempfile_dir().map_err(|e| e.to_string())?;
    let view = View {
        writable: vec![dir.clone()],
        readable: vec![],
        cwd: Some(dir.clone()),
    };
    let setup = MountSetup::new(&view).map_err(|e| e.to_string());
    let result = setup.and_then(|mut setup| {
        let setup = std::cell::RefCell::new(&mut setup);
        super::namespaces::probe(|| {
            enter_ns()?;
            setup.borrow_mut().enter()
        })
    });
    let _ = std::fs::remove_dir(&dir);
    result
}

/// A fresh empty directory in the temporary directory, for the probe.
fn tempfile_dir() -> io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!(".planwright-view-probe-{}", std::process::id()));
    match std::fs::create_dir(&dir) {
        Ok(()) => Ok(dir),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(dir),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_homes_socket_folders_are_hidden_where_they_exist() {
        let home = tempfile::tempdir_in("/var/tmp").unwrap();
        for d in [".ssh/agent", ".1password", ".docker/desktop", ".gnupg"] {
            std::fs::create_dir_all(home.path().join(d)).unwrap();
        }
        std::fs::create_dir_all(home.path().join(".config")).unwrap();
        let real = std::fs::canonicalize(home.path()).unwrap();
        let hidden = hidden_in(Some(home.path().to_path_buf()), None);
        let below: Vec<String> = (hidden.iter())
            .filter_map(|d| d.strip_prefix(&real).ok())
            .map(|d| d.display().to_string())
            .collect();
        assert_eq!(
            below,
            [".1password", ".docker/desktop", ".gnupg", ".ssh/agent"]
        );
        assert!(hidden.contains(&PathBuf::from("/tmp")));
    }
}
