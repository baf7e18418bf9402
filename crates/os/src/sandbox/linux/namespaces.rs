//! Namespaces: a confined child runs as the first process of new user and
//! PID namespaces, so when it ends the kernel kills everything it started
//! (`setsid`, double forks and daemons included); one without network
//! access gets a network namespace of its own with only loopback, and one
//! that writes through an overlay a mount namespace.
//!
//! Everything here but [`NsSetup::new`] and [`probe`]'s parent side runs
//! in a forked child of a multi-threaded parent: plain system calls on
//! data prepared before the fork, nothing that allocates or takes a lock.

use rustix::process::{Pid, Signal, WaitOptions, WaitStatus};
use rustix::thread::UnshareFlags;
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::AsRawFd;

/// Data for entering new namespaces, made before the fork.
#[derive(Debug)]
pub(super) struct NsSetup {
    flags: UnshareFlags,
    setgroups: CString,
    uid_map: CString,
    gid_map: CString,
    uid_line: Vec<u8>,
    gid_line: Vec<u8>,
    loopback_only: bool,
}

impl NsSetup {
    /// With `mounts`, a mount namespace too.
    pub(super) fn new(loopback_only: bool, mounts: bool) -> io::Result<NsSetup> {
        let c = |s: &str| CString::new(s).map_err(io::Error::other);
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        let mut flags = UnshareFlags::NEWUSER | UnshareFlags::NEWPID;
        if loopback_only {
            flags |= UnshareFlags::NEWNET;
        }
        if mounts {
            flags |= UnshareFlags::NEWNS;
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
    pub(super) fn enter(&self) -> io::Result<()> {
        // SAFETY: rustix marks `unshare` unsafe for `CLONE_FILES`, which
        // would leave other threads with descriptors of a table they no
        // longer share; these flags unshare namespaces only, and the
        // forked child has one thread.
        unsafe { rustix::thread::unshare_unsafe(self.flags)? };
        write_file(&self.setgroups, b"deny")?;
        write_file(&self.uid_map, &self.uid_line)?;
        write_file(&self.gid_map, &self.gid_line)?;
        if self.loopback_only {
            loopback_up()?;
        }
        Ok(())
    }
}

fn write_file(path: &CStr, bytes: &[u8]) -> io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    rustix::io::write(&fd, bytes)?;
    Ok(())
}

/// A new network namespace has its loopback interface down.
fn loopback_up() -> io::Result<()> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType};
    let socket = rustix::net::socket_with(
        AddressFamily::INET,
        SocketType::DGRAM,
        SocketFlags::CLOEXEC,
        None,
    )?;
    let fd = socket.as_raw_fd();
    // SAFETY: an `ifreq` is plain data, zeroed and named `lo`; the first
    // ioctl fills its flags, the second reads them, both on an open
    // socket. rustix has no call for an interface's flags.
    let rc = unsafe {
        let mut ifr: libc::ifreq = std::mem::zeroed();
        ifr.ifr_name[0] = b'l' as libc::c_char;
        ifr.ifr_name[1] = b'o' as libc::c_char;
        let mut rc = libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut ifr);
        if rc == 0 {
            ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            rc = libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &ifr);
        }
        rc
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Where this process's environment strings lie: `env_start` and
/// `env_end` of `/proc/self/stat` (fields 50 and 51). Read once, before
/// any fork: a forked child has the same addresses.
pub(super) fn environment_block() -> Option<(usize, usize)> {
    static BLOCK: std::sync::OnceLock<Option<(usize, usize)>> = std::sync::OnceLock::new();
    *BLOCK.get_or_init(|| {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // The name in parentheses may hold spaces; fields count from it.
        let after = &stat[stat.rfind(')')? + 2..];
        let mut fields = after.split(' ').skip(50 - 3);
        let start = fields.next()?.parse().ok()?;
        let end: usize = fields.next()?.parse().ok()?;
        (end > start).then_some((start, end))
    })
}

/// In a forked child of planwright that stays behind inside the child's
/// namespaces (the shim and the namespace's init): nothing of
/// planwright's is left for the confined program to read there. Its
/// `/proc/<pid>/environ` would show planwright's whole environment
/// (tokens included) and `/proc/<pid>/mem` its memory: the process is
/// made non-dumpable, which puts both out of reach of a process without
/// `CAP_SYS_PTRACE` in planwright's own user namespace, and its copy of
/// the environment strings is zeroed. The program's own environment is
/// the one std prepared before the fork, elsewhere in memory.
pub(super) fn forget_environment(block: Option<(usize, usize)>) -> io::Result<()> {
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)?;
    if let Some((start, end)) = block {
        let first = std::ptr::with_exposed_provenance_mut::<u8>(start);
        // SAFETY: `start..end` is this process's environment block, read
        // from the kernel before the fork: mapped and writable (the top of
        // the initial stack). This forked child reads none of it again.
        unsafe { std::ptr::write_bytes(first, 0, end - start) };
    }
    Ok(())
}

/// Asks for SIGKILL when the parent dies, and checks it has not already.
pub(super) fn die_with_parent(parent: Pid) -> io::Result<()> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
    if rustix::process::getppid() != Some(parent) {
        exit_now(127);
    }
    Ok(())
}

/// Forks; the new process returns, the old one waits for it and exits
/// with its status. `shim` is the process outside the namespace.
pub(super) fn fork_and_wait(shim: bool) -> io::Result<()> {
    // SAFETY: the caller is a forked child with one thread, so the new
    // process may do all the old one may (see the module's doc).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    let Some(pid) = Pid::from_raw(pid) else {
        // The namespace's init and the program die with the process above.
        let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
        return Ok(());
    };
    if shim {
        ignore_sigterm();
    }
    // Only the program may hold std's exec-error pipe: the parent's spawn
    // waits for it to close.
    crate::process::descriptors::close_from(crate::process::descriptors::FIRST_EXTRA);
    let status = if shim { wait_for(pid) } else { reap_until(pid) };
    exit_now(match status {
        Ok(status) => match (status.exit_status(), status.terminating_signal()) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            (None, None) => 127,
        },
        Err(_) => 127,
    })
}

/// The shim ignores SIGTERM, so a graceful stop reaches the program.
fn ignore_sigterm() {
    // SAFETY: sets a signal's disposition to "ignore", which runs no code
    // of ours; rustix's `sigaction` is for runtimes without a libc.
    unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
}

/// Ends this (forked) process at once with `code`: no destructor, no
/// `atexit` handler and no flush of the parent's state runs.
pub(super) fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` ends the process and touches no memory of ours.
    unsafe { libc::_exit(code) }
}

pub(super) fn wait_for(pid: Pid) -> io::Result<WaitStatus> {
    loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
            Ok(Some((_, status))) => return Ok(status),
            Ok(None) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// As the namespace's init: reaps orphans until `pid` exits.
fn reap_until(pid: Pid) -> io::Result<WaitStatus> {
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((got, status))) if got == pid => return Ok(status),
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Forks a child that runs `enter` (plain system calls on prepared data)
/// and exits: whether it succeeded.
pub(super) fn probe(enter: impl Fn() -> io::Result<()>) -> Result<(), String> {
    // SAFETY: until it exits, the child only runs `enter`, plain system
    // calls on data prepared before the fork, so it cannot wait on a lock
    // another thread of the parent held at the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error().to_string());
    }
    let Some(pid) = Pid::from_raw(pid) else {
        let code = match enter() {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().unwrap_or(1),
        };
        exit_now(code);
    };
    let status = wait_for(pid).map_err(|e| e.to_string())?;
    match status.exit_status() {
        Some(0) => Ok(()),
        Some(errno) => Err(io::Error::from_raw_os_error(errno).to_string()),
        None => Err("the probe was killed".into()),
    }
}
