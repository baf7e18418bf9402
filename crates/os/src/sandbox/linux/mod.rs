//! The Linux backend: Landlock ([`landlock`]), user, PID, network and
//! mount namespaces ([`namespaces`]), the read-only view of the file
//! system with sockets hidden ([`mounts`]) and overlayfs ([`overlay`]).
//!
//! Everything a confined child runs between fork and exec is in
//! [`Hook::enter`]: plain system calls on data prepared in the parent, no
//! allocation, because the parent is multi-threaded.

mod cgroup;
mod handoff;
mod landlock;
mod limits;
mod mounts;
mod namespaces;
mod overlay;
mod steps;

pub(crate) use cgroup::Cgroup;
pub(super) use handoff::receive;
pub(super) use limits::limits_mechanism;
pub(super) use overlay::fold_layer;
pub(crate) use steps::StepReport;

use super::{Confine, Mode, Overlay, SandboxError};
use mounts::{MountSetup, View};
use namespaces::NsSetup;
use overlay::OverlaySetup;
use rustix::process::Pid;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use steps::{Step, StepWriter};

pub(super) const HINT: &str = "use a Linux kernel with Landlock (5.13 or later, `lsm=landlock` enabled), unprivileged user namespaces and `mount_setattr` (5.12 or later), or set `[sandbox] mode = \"off\"` in planwright.toml to run agents unconfined (see docs/security.md)";

/// How a run confines its children on Linux.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Backend {
    sandbox: Sandbox,
    /// Whether children run in their own user and PID namespaces.
    namespaces: bool,
}

/// The file-system sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sandbox {
    /// Landlock with the kernel's ABI version (1 or more).
    Landlock { abi: i32 },
    /// Nothing confines writes.
    Off,
}

impl Backend {
    /// Enforce needs Landlock and user namespaces; off uses namespaces
    /// when it can (and process groups otherwise).
    pub(super) fn new(mode: Mode) -> Result<Backend, SandboxError> {
        let caps = capabilities();
        match mode {
            Mode::Off => Ok(Backend {
                sandbox: Sandbox::Off,
                namespaces: caps.namespaces.is_ok(),
            }),
            Mode::Enforce => {
                if caps.landlock_abi < 1 {
                    return Err(SandboxError::Unavailable {
                        why: "the kernel has no Landlock (needs Linux 5.13 or later with Landlock enabled)".into(),
                    });
                }
                if let Err(why) = &caps.namespaces {
                    return Err(SandboxError::Unavailable {
                        why: format!("user and PID namespaces cannot be created ({why})"),
                    });
                }
                if let Err(why) = &caps.view {
                    return Err(SandboxError::Unavailable {
                        why: format!(
                            "a child cannot get a read-only view of the file system (a mount namespace with `mount_setattr`, Linux 5.12 or later: {why})"
                        ),
                    });
                }
                Ok(Backend {
                    sandbox: Sandbox::Landlock {
                        abi: caps.landlock_abi,
                    },
                    namespaces: true,
                })
            }
        }
    }

    pub(super) fn none() -> Backend {
        Backend {
            sandbox: Sandbox::Off,
            namespaces: false,
        }
    }

    pub(super) fn confines_writes(&self) -> bool {
        self.sandbox != Sandbox::Off
    }

    pub(super) fn ends_descendants(&self) -> bool {
        self.namespaces
    }

    /// overlayfs needs a mount namespace, and Landlock to keep the child
    /// from writing below the mount.
    pub(super) fn overlays(&self) -> bool {
        self.confines_writes() && self.namespaces
    }

    /// The Landlock ABI in use; 0 with none.
    fn abi(&self) -> i32 {
        match self.sandbox {
            Sandbox::Landlock { abi } => abi,
            Sandbox::Off => 0,
        }
    }

    pub(super) fn describe(&self) -> String {
        let fs = match self.sandbox {
            Sandbox::Landlock { abi } if landlock::scopes(abi).is_empty() => {
                format!("landlock (ABI {abi})")
            }
            Sandbox::Landlock { abi } => {
                format!("landlock (ABI {abi}, scoped signals and abstract sockets)")
            }
            Sandbox::Off => "off".to_string(),
        };
        let procs = if self.namespaces && self.confines_writes() {
            "user+pid+mount namespaces, read-only view, sockets hidden"
        } else if self.namespaces {
            "user+pid namespaces"
        } else {
            "process groups"
        };
        format!("{fs}, {procs}")
    }
}

/// What the kernel offers, asked once per process.
#[derive(Debug)]
struct Capabilities {
    /// The Landlock ABI version; 0 or less when there is none.
    landlock_abi: i32,
    /// Whether a child can enter new user, PID and network namespaces.
    namespaces: Result<(), String>,
    /// Whether a child can get its read-only view of the file system.
    view: Result<(), String>,
}

fn capabilities() -> &'static Capabilities {
    static CAPS: OnceLock<Capabilities> = OnceLock::new();
    CAPS.get_or_init(|| Capabilities {
        landlock_abi: landlock::abi(),
        namespaces: probe_namespaces(),
        view: probe_view(),
    })
}

/// Forks a child that tries to enter the namespaces a confined child needs.
fn probe_namespaces() -> Result<(), String> {
    let ns = NsSetup::new(false, false).map_err(|e| e.to_string())?;
    namespaces::probe(|| ns.enter())
}

fn probe_view() -> Result<(), String> {
    let ns = NsSetup::new(false, true).map_err(|e| e.to_string())?;
    mounts::probe(|| ns.enter())
}

pub(super) fn probe_overlay(scratch: &Path) -> Result<(), String> {
    let overlay = Overlay {
        dir: scratch.join("dir"),
        upper: scratch.join("upper"),
        work: scratch.join("work"),
    };
    [&overlay.dir, &overlay.upper, &overlay.work]
        .iter()
        .try_for_each(std::fs::create_dir_all)
        .map_err(|e| e.to_string())?;
    let setup = OverlaySetup::new(&overlay, 0).map_err(|e| e.to_string())?;
    let ns = NsSetup::new(false, true).map_err(|e| e.to_string())?;
    namespaces::probe(|| ns.enter().and_then(|()| setup.enter(None)))
}

/// Returns planwright's end of the proxy's socket pair when the child
/// makes the proxy's listener in its own network namespace, the child's
/// cgroup when it has one, and where the child names the step of its
/// set-up that failed.
pub(super) fn apply(confine: &Confine, cmd: &mut Command) -> Result<super::Prepared, SandboxError> {
    let (cgroup, limits) =
        limits::ChildLimits::new(confine.policy.limits, confine.containment.0.namespaces)
            .map_err(|e| SandboxError::Setup(format!("the child's limits: {e}")))?;
    let (report, steps) = steps::pipe()
        .map_err(|e| SandboxError::Setup(format!("the pipe of the child's set-up: {e}")))?;
    let (mut hook, handoff) = Hook::new(confine, cmd, steps)?;
    hook.limits = limits;
    // SAFETY: `pre_exec` is unsafe because its closure runs in the forked
    // child of a multi-threaded parent; `Hook::enter` makes only system
    // calls on data prepared here, allocates nothing and takes no lock.
    unsafe { cmd.pre_exec(move || hook.enter()) };
    Ok((handoff, cgroup, Some(report)))
}

/// What a confined child does between fork and exec.
#[derive(Debug)]
struct Hook {
    ruleset: Option<OwnedFd>,
    ns: Option<NsSetup>,
    mounts: Option<MountSetup>,
    overlay: Option<OverlaySetup>,
    listener: Option<handoff::ListenerSetup>,
    /// Its cgroup and rlimits.
    limits: Option<limits::ChildLimits>,
    parent: Pid,
    /// planwright's environment strings, zeroed in the processes that
    /// stay behind in the namespaces.
    environment: Option<(usize, usize)>,
    /// Where the child names the step that failed.
    steps: StepWriter,
}

impl Hook {
    /// Prepares, in the parent, what the child applies, and planwright's
    /// end of the proxy's hand-off.
    fn new(
        confine: &Confine,
        cmd: &Command,
        steps: StepWriter,
    ) -> Result<(Hook, Option<OwnedFd>), SandboxError> {
        let backend = confine.containment.0;
        let policy = &confine.policy;
        let access = match backend.sandbox {
            Sandbox::Landlock { abi } => Some(landlock::write_access(abi)),
            Sandbox::Off => None,
        };
        let ruleset = match access {
            Some(access) => Some(landlock::ruleset(
                &policy.writable,
                access,
                landlock::scopes(backend.abi()),
            )?),
            None => None,
        };
        let overlay = overlay_setup(confine, access)?;
        let proxy = policy.proxy.as_ref().filter(|_| backend.namespaces);
        let proxied = proxy.is_some();
        let (handoff, listener) = if let Some(rules) = proxy {
            let (parent, child) = handoff::prepare(crate::proxy::listen_in_child(rules))
                .map_err(|e| SandboxError::Setup(format!("the proxy's socket pair: {e}")))?;
            (Some(parent), Some(child))
        } else {
            (None, None)
        };
        let mounts = match backend.sandbox {
            Sandbox::Landlock { .. } if backend.namespaces => Some(
                MountSetup::new(&view(confine, cmd))
                    .map_err(|e| SandboxError::Setup(e.to_string()))?,
            ),
            _ => None,
        };
        let ns = if backend.namespaces {
            Some(
                NsSetup::new(
                    !policy.network || proxied,
                    overlay.is_some() || mounts.is_some(),
                )
                .map_err(|e| SandboxError::Setup(e.to_string()))?,
            )
        } else {
            None
        };
        let hook = Hook {
            ruleset,
            ns,
            mounts,
            overlay,
            listener,
            limits: None,
            parent: rustix::process::getpid(),
            environment: namespaces::environment_block(),
            steps,
        };
        Ok((hook, handoff))
    }

    /// Runs in the forked child, before exec. With namespaces, the process
    /// that returns from here (and execs) is the grandchild; the child
    /// and the namespace's init stay behind to wait and pass its exit
    /// status on, so that the child's exit means everything has ended.
    fn enter(&mut self) -> io::Result<()> {
        let steps = &self.steps;
        steps.run(Step::ParentDeath, || {
            namespaces::die_with_parent(self.parent)
        })?;
        // Into its cgroup while still in planwright's user namespace,
        // where the cgroup's files were opened.
        if let Some(limits) = &self.limits {
            steps.run(Step::Cgroup, || limits.enter())?;
        }
        if let Some(ns) = &self.ns {
            steps.run(Step::Namespaces, || ns.enter())?;
            if let Some(limits) = &self.limits {
                steps.run(Step::NamespaceLimits, || limits.enter_namespace())?;
            }
        }
        if let Some(listener) = &mut self.listener {
            steps.run(Step::Listener, || listener.enter())?;
        }
        if let Some(mounts) = &mut self.mounts {
            steps.run(Step::View, || mounts.enter())?;
        }
        if let Some(overlay) = &self.overlay {
            steps.run(Step::Overlay, || overlay.enter(self.ruleset.as_ref()))?;
        }
        if self.ns.is_some() {
            steps.run(Step::Environment, || {
                namespaces::forget_environment(self.environment)
            })?;
            // This process stays outside the namespace: it becomes its
            // init's parent and passes the status on. SIGTERM is ignored
            // there so a graceful stop reaches the program, not the shim.
            steps.run(Step::Fork, || namespaces::fork_and_wait(true))?;
            // Now pid 1 of the new namespace, and the first process in it
            // to mount its procfs.
            if self.mounts.is_some() {
                steps.run(Step::Proc, mounts::own_proc)?;
            }
        }
        if let Some(fd) = &self.ruleset {
            steps.run(Step::NoNewPrivs, landlock::no_new_privs)?;
            steps.run(Step::Landlock, || landlock::restrict(fd))?;
        }
        if self.ns.is_some() {
            // When this init exits, the kernel kills every process left in
            // the namespace.
            steps.run(Step::Fork, || namespaces::fork_and_wait(false))?;
        }
        Ok(())
    }
}

/// The overlay a child writes through, if its policy has one: it needs
/// Landlock (`access`, the write rights it handles) and namespaces.
fn overlay_setup(
    confine: &Confine,
    access: Option<::landlock::BitFlags<::landlock::AccessFs>>,
) -> Result<Option<OverlaySetup>, SandboxError> {
    match (&confine.policy.overlay, access) {
        (None, _) => Ok(None),
        (Some(overlay), Some(access)) if confine.containment.0.namespaces => {
            Ok(Some(OverlaySetup::new(overlay, access.bits())?))
        }
        (Some(_), _) => Err(SandboxError::Setup(
            "an overlay needs Landlock and namespaces".into(),
        )),
    }
}

/// What a confined child's view binds back: its writable areas (and an
/// overlay's layers, which overlayfs needs on a writable mount), and what
/// it is given to read (what its command names, an overlay's directory).
fn view(confine: &Confine, cmd: &Command) -> View {
    let policy = &confine.policy;
    let mut readable = policy.readable.clone();
    // What the child or an agent wrote: never looked into for more to bind.
    let mut untrusted = policy.writable.clone();
    untrusted.extend(policy.overlay.as_ref().map(|o| o.dir.clone()));
    readable.extend(mounts::needed_by(cmd, &untrusted));
    let mut view = View {
        writable: policy.writable.clone(),
        readable,
        cwd: cmd.get_current_dir().map(Path::to_path_buf),
    };
    if let Some(overlay) = &policy.overlay {
        // Upper and work must be on one mount.
        let layers = overlay
            .upper
            .ancestors()
            .find(|a| overlay.work.starts_with(a))
            .unwrap_or(Path::new("/"));
        view.writable.push(layers.to_path_buf());
        view.readable.push(overlay.dir.clone());
    }
    view
}
