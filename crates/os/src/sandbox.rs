//! Confinement of the children planwright does not trust: the agent, the
//! project's set-up step and the gates.
//!
//! Two mechanisms, chosen once per run ([`Containment`]) and applied to each
//! child through a [`Confine`] (the containment plus what that child may
//! write):
//!
//! - **Landlock** (Linux): the child may write only below the directories
//!   of its [`Policy`] (and to `/dev/null` and friends). Reading and
//!   executing stay allowed everywhere. [`Mode::Off`] leaves it out.
//! - **Namespaces**: each child runs as the first process of a new user and
//!   PID namespace, so when it ends the kernel kills everything it started
//!   (`setsid`, double forks and daemons included), and a child without
//!   network access gets a network namespace of its own with only loopback.
//! - **Overlays**, with both: a child may write a directory through an
//!   overlayfs mounted in a mount namespace of its own ([`Overlay`]), so
//!   its writes land in a layer its maker throws away (a gate in its
//!   checkout).
//!
//! Everything that runs in the child between fork and exec is in
//! [`Hook::enter`]: plain system calls on data prepared in the parent, no
//! allocation, because the parent is multi-threaded. A macOS Seatbelt
//! sandbox would be another [`Sandbox`] variant that wraps the argv instead.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `[sandbox] mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Confine or refuse to run.
    #[default]
    Enforce,
    /// No Landlock; processes are still contained where the kernel allows.
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

/// What `[sandbox]`, `[git] allow_config` and `[agent] log_limit_mib` set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainSettings {
    /// Enforce or off.
    pub mode: Mode,
    /// More directories every agent may write (`[sandbox] writable`).
    pub writable: Vec<PathBuf>,
    /// Whether gates may use the network (`[sandbox] gate_network`).
    pub gate_network: bool,
    /// Whether gates write their checkout through an overlay where the
    /// kernel allows (`[sandbox] gate_overlay`).
    pub gate_overlay: bool,
    /// Repository configuration keys accepted although they run programs.
    pub allow_config: Vec<String>,
    /// The cap of an agent's log per attempt, in bytes.
    pub agent_log_limit: Option<u64>,
}

impl Default for ContainSettings {
    fn default() -> Self {
        ContainSettings {
            mode: Mode::Enforce,
            writable: Vec::new(),
            gate_network: false,
            gate_overlay: true,
            allow_config: Vec::new(),
            agent_log_limit: Some(crate::process::AGENT_LOG_LIMIT),
        }
    }
}

/// The file-system sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sandbox {
    /// Landlock with the kernel's ABI version.
    Landlock {
        /// The ABI version the kernel reported (1 or more).
        abi: i32,
    },
    /// Nothing confines writes.
    Off,
}

/// Why the sandbox cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// Enforce mode on a kernel that cannot enforce.
    #[error("the sandbox cannot be enforced here: {why}")]
    Unavailable {
        /// What the kernel lacks.
        why: String,
    },
    /// A rule could not be made (a writable directory that cannot be opened, ...).
    #[error("cannot set up the sandbox: {0}")]
    Setup(String),
}

impl SandboxError {
    /// How to get going anyway.
    pub const HINT: &'static str = "use a Linux kernel with Landlock (5.13 or later, `lsm=landlock` enabled) and unprivileged user namespaces, or set `[sandbox] mode = \"off\"` in planwright.toml to run agents unconfined (see docs/security.md)";
}

/// What one child may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Directories (or files) the child may write below.
    pub writable: Vec<PathBuf>,
    /// Whether it may use the network; without, it gets loopback only.
    pub network: bool,
    /// A directory the child starts in and may write, whose writes land in
    /// an overlay: only with Landlock and namespaces.
    pub overlay: Option<Overlay>,
}

/// A directory a child sees and writes as usual, while for everyone else
/// it stays as it was: the child's writes land in `upper` (an overlayfs
/// mounted over `dir` in the child's own mount namespace), which its maker
/// throws away. The child starts in `dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlay {
    /// The directory, as the child sees it.
    pub dir: PathBuf,
    /// Where the child's writes land.
    pub upper: PathBuf,
    /// overlayfs's own work directory, empty, on `upper`'s file system.
    pub work: PathBuf,
}

/// How a run confines its children: chosen once by [`Containment::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Containment {
    /// The file-system sandbox.
    pub sandbox: Sandbox,
    /// Whether children run in their own user and PID namespaces.
    pub namespaces: bool,
}

impl Containment {
    /// The containment `mode` asks for, or why the kernel cannot give it.
    /// Enforce needs Landlock and user namespaces; off uses namespaces
    /// when it can (and process groups otherwise).
    pub fn new(mode: Mode) -> Result<Containment, SandboxError> {
        let caps = capabilities();
        match mode {
            Mode::Off => Ok(Containment {
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
                Ok(Containment {
                    sandbox: Sandbox::Landlock {
                        abi: caps.landlock_abi,
                    },
                    namespaces: true,
                })
            }
        }
    }

    /// No confinement at all (children only get their own process group).
    pub fn none() -> Containment {
        Containment {
            sandbox: Sandbox::Off,
            namespaces: false,
        }
    }

    /// The containment applied to one child with `policy`.
    pub fn confine(&self, policy: Policy) -> Confine {
        Confine {
            containment: *self,
            policy,
        }
    }

    /// For the run record: `landlock (ABI 7), namespaces`.
    pub fn describe(&self) -> String {
        let fs = match self.sandbox {
            Sandbox::Landlock { abi } => format!("landlock (ABI {abi})"),
            Sandbox::Off => "off".to_string(),
        };
        let procs = if self.namespaces {
            "user+pid namespaces"
        } else {
            "process groups"
        };
        format!("{fs}, {procs}")
    }
}

/// What the kernel offers, asked once per process.
#[derive(Debug)]
pub struct Capabilities {
    /// The Landlock ABI version; 0 or less when there is none.
    pub landlock_abi: i32,
    /// Whether a child can enter new user, PID and network namespaces.
    pub namespaces: Result<(), String>,
}

/// The kernel's Landlock ABI and namespace support.
pub fn capabilities() -> &'static Capabilities {
    static CAPS: OnceLock<Capabilities> = OnceLock::new();
    CAPS.get_or_init(|| Capabilities {
        landlock_abi: landlock_abi(),
        namespaces: probe_namespaces(),
    })
}

fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the documented way to ask for the ABI version: no ruleset, size 0.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(v).unwrap_or(0)
}

/// Forks a child that tries to enter the namespaces a confined child needs.
fn probe_namespaces() -> Result<(), String> {
    let ns = NsSetup::new(false, false).map_err(|e| e.to_string())?;
    probe(|| ns.enter())
}

/// Whether a confined child can mount an overlay in `scratch`, a
/// directory on the file system where its upper layers will be (some file
/// systems cannot hold one, and older kernels refuse it unprivileged).
/// `scratch` is made, and left for the caller to remove (overlayfs leaves
/// a directory in it that only its owner's `chmod` lets anyone remove).
pub fn probe_overlay(scratch: &Path) -> Result<(), String> {
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
    probe(|| ns.enter().and_then(|()| setup.enter(None)))
}

/// Forks a child that runs `enter` (plain system calls on prepared data)
/// and exits: whether it succeeded.
fn probe(enter: impl Fn() -> io::Result<()>) -> Result<(), String> {
    // SAFETY: the child only makes system calls on prepared data, then exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error().to_string());
    }
    if pid == 0 {
        let code = match enter() {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().unwrap_or(1),
        };
        // SAFETY: leave the forked child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    let status = wait_for(pid).map_err(|e| e.to_string())?;
    match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 0) => Ok(()),
        (true, errno) => Err(io::Error::from_raw_os_error(errno).to_string()),
        _ => Err("the probe was killed".into()),
    }
}

/// A containment and what one child may write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confine {
    /// How.
    pub containment: Containment,
    /// What it may do.
    pub policy: Policy,
}

impl Confine {
    /// Lets the child also write below `dir` (an agent CLI's state
    /// directory, say).
    pub fn allow_write(&mut self, dir: impl Into<PathBuf>) {
        self.policy.writable.push(dir.into());
    }

    /// Prepares, in the parent, what the child applies between fork and
    /// exec.
    pub fn hook(&self) -> Result<Hook, SandboxError> {
        let access = match self.containment.sandbox {
            Sandbox::Landlock { abi } => Some(write_access(abi)),
            Sandbox::Off => None,
        };
        let ruleset = match access {
            Some(access) => Some(landlock_ruleset(&self.policy.writable, access)?),
            None => None,
        };
        let overlay = match (&self.policy.overlay, access) {
            (None, _) => None,
            (Some(overlay), Some(access)) if self.containment.namespaces => {
                Some(OverlaySetup::new(overlay, access.bits())?)
            }
            (Some(_), _) => {
                return Err(SandboxError::Setup(
                    "an overlay needs Landlock and namespaces".into(),
                ))
            }
        };
        let ns = if self.containment.namespaces {
            Some(
                NsSetup::new(!self.policy.network, overlay.is_some())
                    .map_err(|e| SandboxError::Setup(e.to_string()))?,
            )
        } else {
            None
        };
        Ok(Hook {
            ruleset,
            ns,
            overlay,
            // SAFETY: plain system call.
            parent: unsafe { libc::getpid() },
        })
    }
}

/// The write rights handled on a kernel of Landlock ABI `abi`: those of
/// ABI 5 at most, so a newer kernel confines exactly as tested.
fn write_access(abi: i32) -> landlock::BitFlags<landlock::AccessFs> {
    landlock::AccessFs::from_write(landlock::ABI::from(abi.min(5)))
}

/// Devices every program expects to write to. Not `/dev/tty`: a confined
/// child has no controlling terminal (it starts in a session of its own),
/// and must not reach the user's.
const DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// A Landlock ruleset that handles every write access and allows it below
/// `writable` (and on [`DEVICES`]). Read and execute are not handled, so
/// they stay allowed.
fn landlock_ruleset(
    writable: &[PathBuf],
    write: landlock::BitFlags<landlock::AccessFs>,
) -> Result<OwnedFd, SandboxError> {
    use landlock::{path_beneath_rules, Ruleset, RulesetAttr, RulesetCreatedAttr};
    let err = |e: landlock::RulesetError| SandboxError::Setup(e.to_string());
    for dir in writable {
        if !dir.exists() {
            return Err(SandboxError::Setup(format!(
                "the writable path `{}` does not exist",
                dir.display()
            )));
        }
    }
    let created = Ruleset::default()
        .handle_access(write)
        .map_err(err)?
        .create()
        .map_err(err)?
        .add_rules(path_beneath_rules(writable, write))
        .map_err(err)?
        .add_rules(path_beneath_rules(DEVICES, write))
        .map_err(err)?;
    Option::<OwnedFd>::from(created).ok_or_else(|| SandboxError::Unavailable {
        why: "the kernel refused to create a Landlock ruleset".into(),
    })
}

/// Data for entering new namespaces, made before the fork.
#[derive(Debug)]
struct NsSetup {
    flags: libc::c_int,
    setgroups: CString,
    uid_map: CString,
    gid_map: CString,
    uid_line: Vec<u8>,
    gid_line: Vec<u8>,
    loopback_only: bool,
}

impl NsSetup {
    /// With `mounts`, a mount namespace too.
    fn new(loopback_only: bool, mounts: bool) -> io::Result<NsSetup> {
        let c = |s: &str| CString::new(s).map_err(io::Error::other);
        // SAFETY: plain system calls.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWPID;
        if loopback_only {
            flags |= libc::CLONE_NEWNET;
        }
        if mounts {
            flags |= libc::CLONE_NEWNS;
        }
        Ok(NsSetup {
            flags,
            setgroups: c("/proc/self/setgroups")?,
            uid_map: c("/proc/self/uid_map")?,
            gid_map: c("/proc/self/gid_map")?,
            // The same ids inside as outside, so files and tools see no difference.
            uid_line: format!("{uid} {uid} 1\n").into_bytes(),
            gid_line: format!("{gid} {gid} 1\n").into_bytes(),
            loopback_only,
        })
    }

    /// In the child: new namespaces, identity maps, loopback up.
    fn enter(&self) -> io::Result<()> {
        // SAFETY: plain system call; the child is single-threaded.
        if unsafe { libc::unshare(self.flags) } != 0 {
            return Err(io::Error::last_os_error());
        }
        write_file(&self.setgroups, b"deny")?;
        write_file(&self.uid_map, &self.uid_line)?;
        write_file(&self.gid_map, &self.gid_line)?;
        if self.loopback_only {
            loopback_up()?;
        }
        Ok(())
    }
}

/// Data for mounting an [`Overlay`], made before the fork.
#[derive(Debug)]
struct OverlaySetup {
    /// The directory the paths of `options` and `target` are relative to.
    base: CString,
    target: CString,
    options: CString,
    /// The overlay's directory, absolute: the child starts there.
    dir: CString,
    /// The Landlock rights the child gets below `dir`.
    access: u64,
}

impl OverlaySetup {
    fn new(overlay: &Overlay, access: u64) -> Result<OverlaySetup, SandboxError> {
        let setup = |why: String| SandboxError::Setup(why);
        let base = overlay
            .dir
            .ancestors()
            .find(|a| overlay.upper.starts_with(a) && overlay.work.starts_with(a))
            .unwrap_or(Path::new("/"));
        // Mount options separate with `,` and `:` and escape with `\`:
        // relative paths keep the user's directory names out of them.
        let rel = |p: &Path| match p.strip_prefix(base).ok().and_then(Path::to_str) {
            Some(r) if !r.is_empty() && !r.contains([',', ':', '\\', '=']) => Ok(r.to_string()),
            _ => Err(setup(format!(
                "cannot name `{}` in an overlay's options",
                p.display()
            ))),
        };
        let (dir, upper, work) = (
            rel(&overlay.dir)?,
            rel(&overlay.upper)?,
            rel(&overlay.work)?,
        );
        let c = |s: &[u8]| CString::new(s).map_err(|e| setup(e.to_string()));
        Ok(OverlaySetup {
            base: c(base.as_os_str().as_encoded_bytes())?,
            options: c(
                format!("lowerdir={dir},upperdir={upper},workdir={work},userxattr").as_bytes(),
            )?,
            target: c(dir.as_bytes())?,
            dir: c(overlay.dir.as_os_str().as_encoded_bytes())?,
            access,
        })
    }

    /// In the child, in its new user and mount namespaces: mounts the
    /// overlay, enters it, and lets the child write there.
    fn enter(&self, ruleset: Option<&OwnedFd>) -> io::Result<()> {
        let check = |rc: libc::c_long| {
            if rc < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        };
        // SAFETY: plain system calls on prepared C strings and a packed
        // struct that outlives the call.
        unsafe {
            check(libc::chdir(self.base.as_ptr()).into())?;
            let fs = c"overlay".as_ptr();
            check(
                libc::mount(
                    fs,
                    self.target.as_ptr(),
                    fs,
                    0,
                    self.options.as_ptr().cast(),
                )
                .into(),
            )?;
            check(libc::chdir(self.dir.as_ptr()).into())?;
            let Some(ruleset) = ruleset else {
                return Ok(());
            };
            // The rule for `dir` the parent made holds the directory under
            // the mount, which Landlock no longer sees on the way up.
            let fd = libc::open(self.dir.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
            check(fd.into())?;
            let attr = PathBeneathAttr {
                allowed_access: self.access,
                parent_fd: fd,
            };
            const LANDLOCK_RULE_PATH_BENEATH: libc::c_long = 1;
            let rc = libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                LANDLOCK_RULE_PATH_BENEATH,
                &attr as *const PathBeneathAttr,
                0,
            );
            let err = io::Error::last_os_error();
            libc::close(fd);
            if rc != 0 {
                return Err(err);
            }
        }
        Ok(())
    }
}

/// `struct landlock_path_beneath_attr`.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: libc::c_int,
}

fn write_file(path: &CString, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: plain system calls on a valid C string and buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n < 0 {
            return Err(err);
        }
    }
    Ok(())
}

/// A new network namespace has its loopback interface down.
fn loopback_up() -> io::Result<()> {
    // SAFETY: a socket and two ioctls on a zeroed, named ifreq.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut ifr: libc::ifreq = std::mem::zeroed();
        ifr.ifr_name[0] = b'l' as libc::c_char;
        ifr.ifr_name[1] = b'o' as libc::c_char;
        let mut rc = libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut ifr);
        if rc == 0 {
            ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            rc = libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &ifr);
        }
        let err = io::Error::last_os_error();
        libc::close(fd);
        if rc != 0 {
            return Err(err);
        }
    }
    Ok(())
}

/// What a confined child does between fork and exec.
#[derive(Debug)]
pub struct Hook {
    ruleset: Option<OwnedFd>,
    ns: Option<NsSetup>,
    overlay: Option<OverlaySetup>,
    parent: libc::pid_t,
}

impl Hook {
    /// Runs in the forked child, before exec. With namespaces, the process
    /// that returns from here (and execs) is the grandchild; the child
    /// and the namespace's init stay behind to wait and pass its exit
    /// status on, so that the child's exit means everything has ended.
    pub fn enter(&mut self) -> io::Result<()> {
        die_with_parent(self.parent)?;
        if let Some(ns) = &self.ns {
            ns.enter()?;
        }
        if let Some(overlay) = &self.overlay {
            overlay.enter(self.ruleset.as_ref())?;
        }
        if let Some(fd) = &self.ruleset {
            restrict(fd)?;
        }
        if self.ns.is_some() {
            // This process stays outside the namespace: it becomes its
            // init's parent and passes the status on. SIGTERM is ignored
            // here so a graceful stop reaches the program, not the shim.
            fork_and_wait(true)?;
            // Now pid 1 of the new namespace: when it exits, the kernel
            // kills every process left in the namespace.
            fork_and_wait(false)?;
        }
        Ok(())
    }
}

/// Asks for SIGKILL when the parent dies, and checks it has not already.
fn die_with_parent(parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: plain system calls.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            libc::_exit(127);
        }
    }
    Ok(())
}

fn restrict(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: plain system calls; `fd` is a Landlock ruleset.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Forks; the new process returns, the old one waits for it and exits
/// with its status. `shim` is the process outside the namespace.
fn fork_and_wait(shim: bool) -> io::Result<()> {
    // SAFETY: the caller is a single-threaded forked child.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // The namespace's init and the program die with the process above.
        // SAFETY: plain system call.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
        return Ok(());
    }
    // SAFETY: plain system calls; nothing of the parent's state is used.
    unsafe {
        if shim {
            libc::signal(libc::SIGTERM, libc::SIG_IGN);
        }
        // Only the program may hold std's exec-error pipe: the parent's
        // spawn waits for it to close.
        close_from(3);
        let code = if shim { wait_for(pid) } else { reap_until(pid) };
        libc::_exit(match code {
            Ok(status) if libc::WIFEXITED(status) => libc::WEXITSTATUS(status),
            Ok(status) if libc::WIFSIGNALED(status) => 128 + libc::WTERMSIG(status),
            _ => 127,
        });
    }
}

fn close_from(first: libc::c_uint) {
    // SAFETY: plain system calls.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) != 0 {
            for fd in first..1024 {
                libc::close(fd as libc::c_int);
            }
        }
    }
}

fn wait_for(pid: libc::pid_t) -> io::Result<libc::c_int> {
    loop {
        let mut status = 0;
        // SAFETY: plain system call.
        if unsafe { libc::waitpid(pid, &mut status, 0) } == pid {
            return Ok(status);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// As the namespace's init: reaps orphans until `pid` exits.
fn reap_until(pid: libc::pid_t) -> io::Result<libc::c_int> {
    loop {
        let mut status = 0;
        // SAFETY: plain system call.
        let got = unsafe { libc::waitpid(-1, &mut status, 0) };
        if got == pid {
            return Ok(status);
        }
        if got < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
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
        assert_eq!(Containment::none().describe(), "off, process groups");
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
