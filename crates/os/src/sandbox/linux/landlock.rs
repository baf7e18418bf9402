//! Landlock: a confined child may write only below the directories of its
//! policy (and to `/dev/null` and friends); reading and executing stay
//! allowed everywhere. From ABI 6 on it may also neither connect to an
//! abstract unix socket nor signal a process outside its own domain (what
//! it started itself is inside). The ruleset is made in the parent with the
//! `landlock` crate; the calls the child makes after the fork (where
//! nothing may allocate) and the ABI question are the plain system calls,
//! which neither that crate nor rustix offers on a bare descriptor.

use crate::sandbox::SandboxError;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

/// The kernel's Landlock ABI version; 0 or less when there is none.
pub(super) fn abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the documented way to ask for the ABI version: no ruleset
    // attribute (null, size 0) and the version flag; the kernel reads and
    // writes no memory of ours.
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

/// The write rights handled on a kernel of Landlock ABI `abi`: those of
/// ABI 5 at most, so a newer kernel confines exactly as tested.
pub(super) fn write_access(abi: i32) -> landlock::BitFlags<landlock::AccessFs> {
    landlock::AccessFs::from_write(landlock::ABI::from(abi.min(6)))
}

/// The scopes handled on a kernel of Landlock ABI `abi`: those of ABI 6
/// at most (abstract unix sockets and signals), none before it.
pub(super) fn scopes(abi: i32) -> landlock::BitFlags<landlock::Scope> {
    use landlock::Access;
    landlock::Scope::from_all(landlock::ABI::from(abi.min(6)))
}

/// Devices every program expects to write to. Not `/dev/tty`: a confined
/// child has no controlling terminal (it starts in a session of its own),
/// and must not reach the user's.
const DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// A Landlock ruleset that handles every write access and allows it below
/// `writable` (and on [`DEVICES`]), and is limited to its own domain in
/// `scopes`. Read and execute are not handled, so they stay allowed.
pub(super) fn ruleset(
    writable: &[PathBuf],
    write: landlock::BitFlags<landlock::AccessFs>,
    scopes: landlock::BitFlags<landlock::Scope>,
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
    let mut attr = Ruleset::default().handle_access(write).map_err(err)?;
    if !scopes.is_empty() {
        attr = attr.scope(scopes).map_err(err)?;
    }
    let created = attr
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

/// `struct landlock_path_beneath_attr`.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: libc::c_int,
}

/// In the child: adds to `ruleset` the rule that `access` is allowed
/// below the directory `dir` (opened with `O_PATH`).
pub(super) fn allow_beneath(ruleset: &OwnedFd, dir: BorrowedFd<'_>, access: u64) -> io::Result<()> {
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_long = 1;
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: dir.as_raw_fd(),
    };
    // SAFETY: `attr` is the packed attribute this rule type takes and
    // outlives the call, which only reads it; both descriptors are open.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// In the child: no program it runs may gain privileges (set-user-ID,
/// file capabilities), which `landlock_restrict_self` requires of an
/// unprivileged process.
pub(super) fn no_new_privs() -> io::Result<()> {
    Ok(rustix::thread::set_no_new_privs(true)?)
}

/// In the child, after [`no_new_privs`]: from here on it (and all it
/// starts) is held to `ruleset`.
pub(super) fn restrict(ruleset: &OwnedFd) -> io::Result<()> {
    // SAFETY: the call takes a descriptor, open here, and flags; it reads
    // and writes no memory of ours.
    if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
