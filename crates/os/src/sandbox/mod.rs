//! Confinement of the children planwright does not trust: the agent, the
//! project's set-up step and the gates.
//!
//! The face is the same on every platform: a run chooses once how it
//! confines its children ([`Containment::new`], from [`Mode`]), and each
//! child gets a [`Confine`] (the containment plus the [`Policy`] of what
//! that child may write, whether it may use the network, and an optional
//! [`Overlay`]). What a backend offers is asked through
//! [`Containment::confines_writes`], [`Containment::ends_descendants`]
//! and [`Containment::overlays`]; nothing here names a kernel facility.
//!
//! The backends, one module each behind `#[cfg(target_os)]`:
//!
//! - **Linux** (`linux/`): Landlock limits writes to the policy's
//!   directories (and, from ABI 6, abstract sockets and signals to the
//!   child's own); each child sees the file system read-only but for
//!   those directories, with the home and the directories of services'
//!   sockets hidden but for what the child needs there; it is the first process of new user and PID namespaces (so
//!   when it ends, the kernel ends everything it started),
//!   with a network namespace of loopback alone when it has no network;
//!   overlays are overlayfs, mounted in a mount namespace of the child's
//!   own.
//! - **Everywhere else** (`unsupported.rs`): no sandbox. [`Mode::Enforce`]
//!   is refused with [`SandboxError::Unsupported`]; [`Mode::Off`] runs
//!   children in process groups of their own.
//!
//! A macOS Seatbelt backend is one more module that provides the same few
//! items as `unsupported.rs` (a `Backend`, `apply`, `receive`,
//! `probe_overlay`, `fold_layer`, `HINT`).

mod limits;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;

#[cfg(not(target_os = "linux"))]
mod unsupported;
#[cfg(not(target_os = "linux"))]
use unsupported as imp;

pub use limits::{bytes_text, mechanism, HitRecord, LimitHit, Limits, Mechanism};

use crate::beneath::{BeneathError, Dir};
use crate::proxy::{Proxy, Rules};
use std::net::{SocketAddr, TcpListener};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// `[sandbox] mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Confine or refuse to run.
    #[default]
    Enforce,
    /// No write sandbox; processes are still contained where the
    /// platform allows.
    Off,
}

impl Mode {
    /// Parses `enforce` or `off`.
    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "enforce" => Some(Mode::Enforce),
            "off" => Some(Mode::Off),
            _ => None,
        }
    }
}

/// Why the sandbox cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// Enforce mode where the platform could confine, but this machine
    /// cannot (an old kernel, a feature turned off).
    #[error("the sandbox cannot be enforced here: {why}")]
    Unavailable {
        /// What the machine lacks.
        why: String,
    },
    /// Enforce mode on an operating system planwright has no sandbox for.
    #[error("the sandbox cannot be enforced here: planwright has no sandbox for {os}")]
    Unsupported {
        /// The operating system (`std::env::consts::OS`).
        os: &'static str,
    },
    /// A rule could not be made (a writable directory that cannot be opened, ...).
    #[error("cannot set up the sandbox: {0}")]
    Setup(String),
    /// The kernel refused a step of a child's confinement that the checks
    /// at start passed (a seccomp filter or a container's profile that
    /// forbids `landlock_restrict_self`, say).
    #[error(
        "the sandbox could not be applied to `{program}`: {step} failed: {}",
        kernel_said(source)
    )]
    Refused {
        /// The program as given in the argv.
        program: String,
        /// The step, named by its system call where it is one.
        step: &'static str,
        /// What the kernel said.
        source: std::io::Error,
    },
}

/// The kernel's words for `e` without std's "(os error N)": the step
/// already says which call it was.
fn kernel_said(e: &std::io::Error) -> String {
    let text = e.to_string();
    match (e.raw_os_error(), text.rfind(" (os error ")) {
        (Some(_), Some(at)) => text[..at].to_string(),
        _ => text,
    }
}

impl SandboxError {
    /// How to get going anyway.
    pub const HINT: &'static str = imp::HINT;

    /// What to do about [`SandboxError::Refused`].
    pub const REFUSED_HINT: &'static str = "the kernel offers the sandbox, but something around planwright (a seccomp filter, a container's security profile) refuses that step to its children: allow it there, run planwright outside it, or set `[sandbox] mode = \"off\"` in planwright.toml to run agents unconfined (see docs/security.md)";

    /// How to get going again after this error, for its renderer.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            SandboxError::Unavailable { .. } | SandboxError::Unsupported { .. } => Some(Self::HINT),
            SandboxError::Refused { .. } => Some(Self::REFUSED_HINT),
            SandboxError::Setup(_) => None,
        }
    }
}

/// What one child may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Directories (or files) the child may write below.
    pub writable: Vec<PathBuf>,
    /// What it is given to read (the repository it works on): where the
    /// sandbox hides the directory they lie in (`/tmp`, say), these are
    /// shown again, read-only.
    pub readable: Vec<PathBuf>,
    /// Whether it may use the network; without, it gets loopback only.
    pub network: bool,
    /// With `network` false: the child reaches the network through
    /// planwright's proxy ([`crate::proxy`]) under these rules. Where the
    /// containment has no network namespace ([`Containment::isolates_network`]
    /// is false) the proxy listens on the host's loopback instead, and the
    /// child could go around it.
    pub proxy: Option<Arc<Rules>>,
    /// A directory the child starts in and may write, whose writes land in
    /// an overlay: only where [`Containment::overlays`].
    pub overlay: Option<Overlay>,
    /// How many processes and how much memory the child and all it
    /// starts may use ([`mechanism`] says what holds it to them).
    pub limits: Limits,
}

/// A directory a child sees and writes as usual, while for everyone else
/// it stays as it was: the child's writes land in `upper` (a layer over
/// `dir` that only the child sees), which its maker folds in
/// ([`fold_layer`]) or throws away. The child starts in `dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlay {
    /// The directory, as the child sees it.
    pub dir: PathBuf,
    /// Where the child's writes land.
    pub upper: PathBuf,
    /// The overlay's own work directory, empty, on `upper`'s file system.
    pub work: PathBuf,
}

/// How a run confines its children: chosen once by [`Containment::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Containment(imp::Backend);

impl Containment {
    /// The containment `mode` asks for, or why this machine cannot give
    /// it. Enforce needs the platform's write sandbox and process
    /// containment; off uses process containment where it can (and
    /// process groups otherwise).
    pub fn new(mode: Mode) -> Result<Containment, SandboxError> {
        imp::Backend::new(mode).map(Containment)
    }

    /// No confinement at all (children only get their own process group).
    pub fn none() -> Containment {
        Containment(imp::Backend::none())
    }

    /// The containment applied to one child with `policy`.
    pub fn confine(&self, policy: Policy) -> Confine {
        Confine {
            containment: *self,
            policy,
            hits: HitRecord::default(),
        }
    }

    /// Whether a child writes only where its [`Policy`] lets it.
    pub fn confines_writes(&self) -> bool {
        self.0.confines_writes()
    }

    /// Whether everything a child starts ends when the child does, however
    /// it tried to stay (`setsid`, double forks, daemons).
    pub fn ends_descendants(&self) -> bool {
        self.0.ends_descendants()
    }

    /// Whether a child can write a directory through an [`Overlay`].
    pub fn overlays(&self) -> bool {
        self.0.overlays()
    }

    /// Whether a child without network gets a network namespace of its
    /// own (loopback alone), which only the proxy leads out of.
    pub fn isolates_network(&self) -> bool {
        self.0.ends_descendants()
    }

    /// For the run record: `landlock (ABI 7, scoped signals and abstract
    /// sockets), user+pid+mount namespaces, read-only view, sockets hidden`.
    pub fn describe(&self) -> String {
        self.0.describe()
    }
}

/// A containment and what one child may write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confine {
    /// How.
    pub containment: Containment,
    /// What it may do.
    pub policy: Policy,
    /// The limits its children hit, shared by its clones.
    pub hits: HitRecord,
}

impl Confine {
    /// Lets the child also write below `dir` (an agent CLI's state
    /// directory, say).
    pub fn allow_write(&mut self, dir: impl Into<PathBuf>) {
        self.policy.writable.push(dir.into());
    }

    /// Prepares `cmd` (in the parent) so that the child it starts is
    /// confined. Called after the command's other set-up: what it adds
    /// runs last before the program. With a [`Policy::proxy`], what starts
    /// the proxy once the child has started, and its cgroup.
    pub(crate) fn apply(&self, cmd: &mut Command) -> Result<Applied, SandboxError> {
        let (from_child, cgroup, steps) = imp::apply(self, cmd)?;
        let watch = cgroup.map(|cgroup| Watch {
            cgroup,
            hits: self.hits.clone(),
        });
        let Some(rules) = &self.policy.proxy else {
            return Ok(Applied {
                proxy: None,
                watch,
                steps,
            });
        };
        let setup = |e: std::io::Error| SandboxError::Setup(format!("the proxy's listener: {e}"));
        // Made in the child's network namespace: its loopback is its own.
        let own_loopback = from_child.is_some();
        let (listener, at) = match from_child {
            Some(fd) => (Listener::FromChild(fd), SocketAddr::V4(crate::proxy::ADDR)),
            None => {
                let listener = TcpListener::bind("127.0.0.1:0").map_err(setup)?;
                let at = listener.local_addr().map_err(setup)?;
                (Listener::Ready(listener), at)
            }
        };
        crate::proxy::set_env(cmd, at, own_loopback);
        let proxy = Some(PendingProxy {
            listener,
            rules: Arc::clone(rules),
        });
        Ok(Applied {
            proxy,
            watch,
            steps,
        })
    }
}

/// What a backend's `apply` leaves: planwright's end of the proxy's
/// socket pair when the child makes the proxy's listener, the child's
/// cgroup, and where the child names the step of its set-up that failed.
type Prepared = (
    Option<OwnedFd>,
    Option<imp::Cgroup>,
    Option<imp::StepReport>,
);

/// What [`Confine::apply`] leaves for the child's runner.
#[derive(Debug)]
pub(crate) struct Applied {
    /// Its proxy, to start once it has.
    pub(crate) proxy: Option<PendingProxy>,
    /// Its cgroup, to close once it is reaped.
    pub(crate) watch: Option<Watch>,
    /// Where its set-up names the step that failed.
    steps: Option<imp::StepReport>,
}

impl Applied {
    /// Once the child's spawn has failed: the step of the sandbox's
    /// set-up the kernel refused, when the child named one (std passes on
    /// only the errno, which alone reads as if the program could not
    /// start).
    pub(crate) fn refused_step(&self) -> Option<&'static str> {
        self.steps.as_ref()?.failed()
    }
}

/// A child's cgroup and the record its hit goes to.
#[derive(Debug)]
pub(crate) struct Watch {
    cgroup: imp::Cgroup,
    hits: HitRecord,
}

impl Watch {
    /// Once the child is reaped: the limit it hit (noted in its
    /// confine's record too); its cgroup is removed.
    pub(crate) fn close(self) -> Option<LimitHit> {
        let hit = self.cgroup.close();
        if let Some(hit) = hit {
            self.hits.note(hit);
        }
        hit
    }
}

/// A child's proxy, ready to start once the child has.
#[derive(Debug)]
pub(crate) struct PendingProxy {
    listener: Listener,
    rules: Arc<Rules>,
}

#[derive(Debug)]
enum Listener {
    /// The child sends it over this socket before its program starts.
    FromChild(OwnedFd),
    /// Made by planwright on the host's loopback.
    Ready(TcpListener),
}

impl PendingProxy {
    /// Starts serving, noting refusals in `log`. Called once the child's
    /// spawn returned, so its hook has sent the listeners: the proxy's,
    /// then one per loopback address the rules allow, which planwright
    /// forwards to the same address on its own loopback.
    pub(crate) fn start(self, log: Option<PathBuf>) -> Result<Proxy, SandboxError> {
        let setup = |e: std::io::Error| SandboxError::Setup(format!("the proxy's listener: {e}"));
        let (listener, forwards) = match self.listener {
            Listener::FromChild(fd) => {
                let at = crate::proxy::listen_in_child(&self.rules);
                let mut listeners = imp::receive(&fd, at.len()).map_err(setup)?;
                let forwards = listeners
                    .split_off(1)
                    .into_iter()
                    .zip(at.into_iter().skip(1));
                (listeners.remove(0), forwards.collect())
            }
            Listener::Ready(listener) => (listener, Vec::new()),
        };
        Proxy::start(listener, forwards, self.rules, log).map_err(setup)
    }
}

/// Whether a confined child can write through an overlay whose layers are
/// in `scratch`, a directory on the file system where its upper layers
/// will be (some file systems cannot hold one, some kernels refuse it
/// unprivileged). `scratch` is made, and left for the caller to remove
/// (a layer's work directory can be one that only its owner's `chmod`
/// lets anyone remove).
pub fn probe_overlay(scratch: &Path) -> Result<(), String> {
    imp::probe_overlay(scratch)
}

/// Moves what a child wrote through an overlay, its layer `upper`, into
/// the directory `lower` below it, so that `lower` holds what the child
/// saw. The layer is the child's writing: nothing in it, or in `lower`,
/// is followed.
pub fn fold_layer(upper: &Dir, lower: &Dir) -> Result<(), BeneathError> {
    imp::fold_layer(upper, lower)
}

/// Whether `path` lies below one of `dirs` (both taken as given, after
/// resolving what exists, so a symlinked prefix does not hide it).
pub fn below_any(path: &Path, dirs: &[PathBuf]) -> bool {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let path = real(path);
    dirs.iter().any(|d| path.starts_with(real(d)))
}

/// Whether `dir` lies below one of `dirs` or holds one of them.
pub fn overlaps_any(dir: &Path, dirs: &[PathBuf]) -> bool {
    below_any(dir, dirs)
        || dirs
            .iter()
            .any(|d| below_any(d, std::slice::from_ref(&dir.to_path_buf())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_describe() {
        assert_eq!(Mode::parse("enforce"), Some(Mode::Enforce));
        assert_eq!(Mode::parse("off"), Some(Mode::Off));
        assert_eq!(Mode::parse("on"), None);
        let none = Containment::none();
        assert_eq!(none.describe(), "off, process groups");
        assert!(!none.confines_writes() && !none.ends_descendants() && !none.overlays());
    }

    #[test]
    fn below_any_sees_through_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir_all(real.join("x")).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        assert!(below_any(
            &dir.path().join("link/x"),
            std::slice::from_ref(&real)
        ));
        assert!(!below_any(dir.path(), &[real]));
    }
}
