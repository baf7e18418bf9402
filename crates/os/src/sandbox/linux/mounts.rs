//! The file system a confined child sees, in its own mount namespace: the
//! whole tree read-only (so a change of mode, owner, times or extended
//! attributes outside its writable areas fails with `EROFS`, which
//! Landlock, having no rights for metadata, cannot give), with fresh empty
//! tmpfs over the directories where services keep their sockets and over
//! the whole home ([`hidden`]), and bound back at their own paths: the
//! policy's writable areas read-write, and read-only what the child is
//! given to read and what its command needs ([`needed_by`]: the directory
//! it starts in, its program's install, its `PATH`) where that lies below
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

/// Where services keep their sockets, hidden under empty tmpfs: the
/// system's runtime folders, `XDG_RUNTIME_DIR` and the whole home, as
/// planwright's environment names them.
fn hidden() -> Vec<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    hidden_in(
        var("HOME").map(PathBuf::from),
        var("XDG_RUNTIME_DIR").map(PathBuf::from),
    )
}

/// Folders a home may not hold to be hidden: a home of `/` (a daemon's)
/// or `/usr` would hide the system the child runs on.
const SYSTEM_DIRS: [&str; 11] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/opt", "/var", "/nix", "/proc", "/dev",
];

/// [`hidden`] for the home `home` and the runtime directory `run`.
fn hidden_in(home: Option<PathBuf>, run: Option<PathBuf>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["/run", "/var/run", "/tmp", "/dev/shm"]
        .iter()
        .map(PathBuf::from)
        .collect();
    dirs.extend(run);
    // A symlink (`/var/run -> /run`) resolves into what is hidden anyway.
    let mut real: Vec<PathBuf> = dirs
        .iter()
        .filter(|d| d.symlink_metadata().is_ok_and(|m| m.is_dir()))
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect();
    let home = home.and_then(|h| std::fs::canonicalize(h).ok());
    real.extend(
        home.filter(|h| h.is_dir() && !SYSTEM_DIRS.iter().any(|s| Path::new(s).starts_with(h))),
    );
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

/// Where a child finds `path`, which exists: its real path, and, where
/// its last component is a symlink (a linked credential such as
/// `~/.claude/.credentials.json`), that symlink's path in its real
/// folder too, so the name the child looks up leads to the same content;
/// and where a folder above it is a symlink (`~/.cargo` linked to another
/// disk, `PATH` naming `~/.cargo/bin`), the path as written, which the
/// child looks up through a link its view of a hidden folder lacks.
fn as_looked_up(path: &Path) -> Vec<PathBuf> {
    use std::path::Component;
    let Ok(real) = std::fs::canonicalize(path) else {
        return Vec::new();
    };
    let mut paths = vec![real.clone()];
    let link = path.file_name().zip(path.parent()).and_then(|(name, up)| {
        let up = std::fs::canonicalize(up).ok()?;
        Some(up.join(name))
    });
    paths.extend(link.filter(|l| *l != real));
    let plain = (path.components()).all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if plain && path.is_absolute() && !paths.iter().any(|p| p == path) {
        paths.push(path.to_path_buf());
    }
    paths
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
                .flat_map(|p| as_looked_up(p))
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

/// In the namespace's init, before Landlock (which refuses mounts): a
/// procfs of the new PID namespace over `/proc`, so the child sees the
/// processes of its own attempt and no others (no other command line, no
/// other environment). Not `subset=pid`: that also hides `/proc/cpuinfo`,
/// `/proc/meminfo` and `/proc/stat`, which runtimes read (Node's
/// `os.cpus()` would be empty) and which say nothing of other processes.
pub(super) fn own_proc() -> io::Result<()> {
    let flags = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    rustix::mount::mount(c"proc", c"/proc", c"proc", flags, None)?;
    Ok(())
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

/// What a child needs to read to run its command: the directory it
/// starts in; its program, every argument naming a regular file by
/// absolute path (a script given to an interpreter) and the interpreter a
/// script names on its `#!` line, each with its directory, its real one's
/// through a symlink and its install prefix ([`install_prefix`]); and
/// every absolute directory of the command's `PATH` with its prefix and
/// the tool homes its programs read ([`TOOL_HOMES`]). Only what lies in a
/// hidden directory is bound back, so this is what the home gives a child.
///
/// Nothing below `untrusted` (what the child or an agent may have
/// written: its writable areas, a checkout of the candidate) is looked
/// into: a symlink or `#!` line planted there would bind back any folder
/// of the home. Those areas are in the view as they are.
pub(super) fn needed_by(cmd: &std::process::Command, untrusted: &[PathBuf]) -> Vec<PathBuf> {
    let trusted = |p: &Path| !lexically_below(p, untrusted);
    let var = |name: &str| {
        cmd.get_envs()
            .find(|(k, _)| *k == name)
            .and_then(|(_, v)| v)
            .map(PathBuf::from)
    };
    let path_env = var("PATH").unwrap_or_default();
    let path_dirs: Vec<PathBuf> = std::env::split_paths(&path_env)
        .filter(|d| d.is_absolute() && trusted(d))
        .collect();
    let mut files: Vec<PathBuf> = vec![PathBuf::from(cmd.get_program())];
    files.extend(
        cmd.get_args()
            .map(Path::new)
            .filter(|a| a.is_absolute() && a.is_file())
            .map(Path::to_path_buf),
    );
    let mut dirs: Vec<PathBuf> = Vec::new();
    for file in files.iter().filter(|f| f.is_absolute() && trusted(f)) {
        program_needs(file, &path_dirs, 0, &mut dirs);
    }
    for dir in &path_dirs {
        dirs.push(dir.clone());
        if let Ok(real) = std::fs::canonicalize(dir) {
            dirs.extend(bin_prefix(&real));
            dirs.push(real);
        }
        for (program, variable, default) in TOOL_HOMES {
            if dir.join(program).is_file() {
                let home = var("HOME").or_else(|| std::env::var_os("HOME").map(PathBuf::from));
                dirs.extend(var(variable).or_else(|| home.map(|h| h.join(default))));
            }
        }
    }
    dirs.extend(cmd.get_current_dir().map(Path::to_path_buf));
    dirs.retain(|d| d.is_dir());
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Whether `path`, as written (`..` taken as a folder's name), lies below
/// one of `dirs`, as given or resolved.
fn lexically_below(path: &Path, dirs: &[PathBuf]) -> bool {
    let escapes = path
        .components()
        .any(|c| c == std::path::Component::ParentDir);
    escapes
        || dirs.iter().any(|d| {
            path.starts_with(d) || std::fs::canonicalize(d).is_ok_and(|r| path.starts_with(r))
        })
}

/// Programs whose folder on `PATH` is not all they read: the variable
/// naming their home and its default below the home. rustup's proxies
/// (`~/.cargo/bin/cargo`) run the toolchains of `~/.rustup`.
const TOOL_HOMES: [(&str, &str, &str); 1] = [("rustup", "RUSTUP_HOME", ".rustup")];

/// How deep [`program_needs`] follows `#!` lines (a script whose
/// interpreter is a script).
const INTERPRETER_DEPTH: usize = 2;

/// Adds what the program `file` needs to `dirs`: its directory, its real
/// one's and that one's install prefix, and what its interpreter needs.
fn program_needs(file: &Path, path_dirs: &[PathBuf], depth: usize, dirs: &mut Vec<PathBuf>) {
    dirs.extend(file.parent().map(Path::to_path_buf));
    if let Ok(real) = std::fs::canonicalize(file) {
        dirs.extend(real.parent().map(Path::to_path_buf));
        dirs.extend(install_prefix(&real));
    }
    if depth < INTERPRETER_DEPTH {
        if let Some(interpreter) = interpreter(file, path_dirs) {
            program_needs(&interpreter, path_dirs, depth + 1, dirs);
        }
    }
}

/// The folder a program was installed into, which it reads as it runs:
/// above the outermost `node_modules` of its path (an npm package and its
/// dependencies, in a project or a global prefix), else above the nearest
/// `bin`, `sbin` or `libexec` (a virtualenv, `~/.local`, a version of
/// nvm's or pyenv's, `~/.cargo`).
fn install_prefix(real: &Path) -> Option<PathBuf> {
    let packages = real
        .ancestors()
        .filter(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .last();
    match packages {
        Some(top) => top.parent().map(Path::to_path_buf),
        None => real.ancestors().skip(1).find_map(bin_prefix),
    }
}

/// The prefix of a folder of programs: the folder above a `bin`, `sbin`,
/// `libexec`, `shims` (pyenv's, asdf's) or `.bin` (npm's).
fn bin_prefix(dir: &Path) -> Option<PathBuf> {
    let name = dir.file_name()?;
    ["bin", "sbin", "libexec", "shims", ".bin"]
        .iter()
        .any(|b| name == *b)
        .then(|| dir.parent().map(Path::to_path_buf))
        .flatten()
}

/// The program named on the `#!` line of the script `file`, as the kernel
/// runs it; for `/usr/bin/env NAME`, `NAME` as found on `path_dirs`.
fn interpreter(file: &Path, path_dirs: &[PathBuf]) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let read = std::fs::File::open(file).ok()?.read(&mut head).ok()?;
    let line = head[..read].strip_prefix(b"#!")?;
    let line = line.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let program = PathBuf::from(words.next()?);
    if program.file_name().is_some_and(|n| n == "env") {
        let name = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
        return path_dirs.iter().map(|d| d.join(name)).find(|p| p.is_file());
    }
    program.is_absolute().then_some(program)
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

    /// The whole home is hidden, with the system's runtime folders; a home
    /// of `/` or one holding a system folder is not.
    #[test]
    fn the_home_is_hidden_whole_unless_it_holds_the_system() {
        let home = tempfile::tempdir_in("/var/tmp").unwrap();
        let real = std::fs::canonicalize(home.path()).unwrap();
        let hidden = hidden_in(Some(home.path().to_path_buf()), None);
        assert!(hidden.contains(&real), "{hidden:?}");
        assert!(hidden.contains(&PathBuf::from("/tmp")));
        for system in ["/", "/usr"] {
            let hidden = hidden_in(Some(PathBuf::from(system)), None);
            assert!(!hidden.contains(&PathBuf::from(system)), "{hidden:?}");
        }
        let missing = real.join("missing");
        assert!(!hidden_in(Some(missing.clone()), None).contains(&missing));
    }

    #[test]
    fn an_install_prefix_holds_the_package_or_the_bin_folder() {
        let prefix = |p: &str| install_prefix(Path::new(p)).map(|p| p.display().to_string());
        let npm = "/h/.npm-global/lib/node_modules/@a/cli/node_modules/dep/bin/x.js";
        assert_eq!(prefix(npm).as_deref(), Some("/h/.npm-global/lib"));
        let venv = "/h/.local/share/pipx/venvs/aider/bin/aider";
        assert_eq!(
            prefix(venv).as_deref(),
            Some("/h/.local/share/pipx/venvs/aider")
        );
        assert_eq!(
            prefix("/h/.nvm/versions/node/v20/bin/node").as_deref(),
            Some("/h/.nvm/versions/node/v20")
        );
        assert_eq!(prefix("/h/.local/share/claude/versions/2.1"), None);
        let shims = Path::new("/h/.pyenv/shims");
        assert_eq!(bin_prefix(shims), Some(PathBuf::from("/h/.pyenv")));
    }

    /// A program in a home, run through a symlink, whose `#!` line names
    /// `env node` found on `PATH` in another prefix of the home; and a
    /// `PATH` folder holding rustup: each prefix is needed, and nothing
    /// else of the home.
    #[test]
    fn a_program_needs_its_prefix_its_interpreters_and_its_paths_tool_homes() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let home = tempfile::tempdir_in("/var/tmp").unwrap();
        let h = std::fs::canonicalize(home.path()).unwrap();
        let exe = |path: &Path, body: &str| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        let package = h.join("tools/node_modules/cli");
        exe(
            &package.join("bin/cli.js"),
            "#!/usr/bin/env -S node --flag\n",
        );
        std::fs::create_dir_all(h.join("tools/node_modules/.bin")).unwrap();
        let program = h.join("tools/node_modules/.bin/cli");
        symlink("../cli/bin/cli.js", &program).unwrap();
        exe(&h.join("node/v20/bin/node"), "\x7fELF");
        exe(&h.join(".cargo/bin/rustup"), "\x7fELF");
        std::fs::create_dir_all(h.join(".rustup")).unwrap();
        std::fs::create_dir_all(h.join(".ssh")).unwrap();
        let path = format!(
            "{}:{}:/usr/bin",
            h.join("node/v20/bin").display(),
            h.join(".cargo/bin").display()
        );
        let mut cmd = std::process::Command::new(&program);
        cmd.env("PATH", path).env("HOME", &h);
        let needed = needed_by(&cmd, &[]);
        for want in [
            "tools",
            "tools/node_modules/.bin",
            "tools/node_modules/cli/bin",
            "node/v20",
            "node/v20/bin",
            ".cargo",
            ".cargo/bin",
            ".rustup",
        ] {
            assert!(needed.contains(&h.join(want)), "{want}: {needed:?}");
        }
        assert!(!needed
            .iter()
            .any(|d| d == &h || d.starts_with(h.join(".ssh"))));
    }

    /// A folder of `PATH` below a symlink of the home (`~/.cargo` linked
    /// elsewhere): bound back where the child looks it up, as written, as
    /// well as at its real path.
    #[test]
    fn a_folder_below_a_linked_folder_is_looked_up_as_written() {
        let home = tempfile::tempdir_in("/var/tmp").unwrap();
        let h = std::fs::canonicalize(home.path()).unwrap();
        std::fs::create_dir_all(h.join("disk/cargo/bin")).unwrap();
        std::os::unix::fs::symlink(h.join("disk/cargo"), h.join(".cargo")).unwrap();
        let bin = h.join(".cargo/bin");
        assert_eq!(as_looked_up(&bin), [h.join("disk/cargo/bin"), bin.clone()]);
        assert_eq!(
            as_looked_up(&h.join(".cargo")),
            [h.join("disk/cargo"), h.join(".cargo")]
        );
        let plain = h.join("disk/cargo/bin");
        assert_eq!(as_looked_up(&plain), std::slice::from_ref(&plain));
        assert_eq!(as_looked_up(&h.join("disk/../.cargo/bin")), [plain]);
    }

    /// A program in a writable area (a gate's script in the candidate's
    /// checkout), a symlink there into `~/.ssh`, with a `#!` line naming a
    /// program in `~/.ssh`: nothing of it is looked into, so nothing of the
    /// home is bound back for it.
    #[test]
    fn nothing_an_agent_wrote_makes_a_folder_of_the_home_needed() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let home = tempfile::tempdir_in("/var/tmp").unwrap();
        let h = std::fs::canonicalize(home.path()).unwrap();
        let ssh = h.join(".ssh");
        std::fs::create_dir_all(&ssh).unwrap();
        std::fs::write(ssh.join("x"), "#!/bin/sh\n").unwrap();
        let checkout = h.join("checkout");
        std::fs::create_dir_all(&checkout).unwrap();
        let script = checkout.join("test.sh");
        std::fs::write(&script, format!("#!{}/x\n", ssh.display())).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        symlink(&ssh, checkout.join("link")).unwrap();
        for program in [script, checkout.join("link/x"), checkout.join("../.ssh/x")] {
            let mut cmd = std::process::Command::new(&program);
            cmd.env(
                "PATH",
                format!("{}:/usr/bin", checkout.join("link").display()),
            );
            let needed = needed_by(&cmd, std::slice::from_ref(&checkout));
            assert!(!needed.iter().any(|d| d.starts_with(&ssh)), "{needed:?}");
        }
    }
}
