//! A cgroup per confined child: made (in the parent) before the child
//! starts, joined by the child before it enters its namespaces, read for
//! the limit it hit and removed once every process in it is gone.
//!
//! Which hierarchy is used is probed once per process:
//!
//! - **cgroup v2** where planwright's own cgroup lets it make children with
//!   the `pids` and `memory` controllers: either they are already enabled
//!   for its children (`cgroup.subtree_control`), or planwright is the
//!   only process of its cgroup (started with `systemd-run --user --scope
//!   -p Delegate=yes`, say), in which case it moves itself into a leaf
//!   `planwright` below and enables them.
//! - **cgroup v1** where the `pids` or `memory` hierarchy is mounted and
//!   planwright can make a directory in its own cgroup there (root, as on
//!   most CI machines).
//! - Otherwise the rlimits of `limits.rs` alone.

use super::super::limits::{LimitHit, Limits, Mechanism};
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// One child's cgroup(s): a directory per hierarchy, made by
/// [`Cgroup::make`], removed by [`Cgroup::close`] (or on drop).
#[derive(Debug)]
pub(crate) struct Cgroup {
    /// The directories made, with the limit written into each.
    dirs: Vec<Made>,
    closed: bool,
}

#[derive(Debug)]
struct Made {
    dir: PathBuf,
    version: Version,
    limits: Limits,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1Pids,
    V1Memory,
    V2,
}

/// Each child's cgroup has a name of its own in this process.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

impl Cgroup {
    /// Makes the child's cgroup(s) under `mechanism` with `limits`, and
    /// returns them with a descriptor of each `cgroup.procs` for the
    /// child to join through. `None` when the mechanism has no cgroup for
    /// any bounded resource.
    pub(crate) fn make(
        mechanism: &Mechanism,
        limits: Limits,
    ) -> io::Result<Option<(Cgroup, Vec<OwnedFd>)>> {
        let name = format!(
            "planwright-{}-{}-{}",
            pid_namespace(),
            std::process::id(),
            SEQUENCE.fetch_add(1, Ordering::Relaxed)
        );
        let mut wanted = Vec::new();
        match mechanism {
            Mechanism::CgroupV2 { parent } => wanted.push((parent.join(&name), Version::V2)),
            Mechanism::CgroupV1 { pids, memory, .. } => {
                if let (Some(p), Some(_)) = (pids, limits.pids) {
                    wanted.push((p.join(&name), Version::V1Pids));
                }
                if let (Some(m), Some(_)) = (memory, limits.memory) {
                    wanted.push((m.join(&name), Version::V1Memory));
                }
            }
            Mechanism::Rlimit { .. } | Mechanism::None { .. } => {}
        }
        if wanted.is_empty() || limits.is_none() {
            return Ok(None);
        }
        let mut cgroup = Cgroup {
            dirs: Vec::new(),
            closed: false,
        };
        let mut procs = Vec::new();
        for (dir, version) in wanted {
            fs::create_dir(&dir)?;
            cgroup.dirs.push(Made {
                dir: dir.clone(),
                version,
                limits,
            });
            write_limits(&dir, version, limits)?;
            procs.push(open_write(&dir.join("cgroup.procs"))?);
        }
        Ok(Some((cgroup, procs)))
    }

    /// After the child was reaped: the limit it hit, if any; then every
    /// process left in the cgroup is killed and the cgroup removed.
    pub(crate) fn close(mut self) -> Option<LimitHit> {
        let hit = self.dirs.iter().find_map(Made::hit);
        self.remove();
        hit
    }

    fn remove(&mut self) {
        if std::mem::replace(&mut self.closed, true) {
            return;
        }
        for made in &self.dirs {
            remove_dir(&made.dir);
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.remove();
    }
}

impl Made {
    fn hit(&self) -> Option<LimitHit> {
        let counter = |file: &str, key: &str| {
            let text = fs::read_to_string(self.dir.join(file)).ok()?;
            counter(&text, key)
        };
        let pids = || {
            let max = self.limits.pids?;
            (counter("pids.events", "max")? > 0).then_some(LimitHit::Pids(max))
        };
        let memory = |file| {
            let max = self.limits.memory?;
            (counter(file, "oom_kill")? > 0).then_some(LimitHit::Memory(max))
        };
        match self.version {
            Version::V1Pids => pids(),
            Version::V1Memory => memory("memory.oom_control"),
            Version::V2 => pids().or_else(|| memory("memory.events")),
        }
    }
}

/// `key N` in a flat-keyed cgroup file.
fn counter(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

fn write_limits(dir: &Path, version: Version, limits: Limits) -> io::Result<()> {
    let write = |file: &str, value: u64| fs::write(dir.join(file), value.to_string());
    match version {
        Version::V1Pids => limits.pids.map_or(Ok(()), |n| write("pids.max", n)),
        Version::V1Memory => {
            let Some(bytes) = limits.memory else {
                return Ok(());
            };
            write("memory.limit_in_bytes", bytes)?;
            // Swap counts too, where the kernel accounts it.
            if dir.join("memory.memsw.limit_in_bytes").exists() {
                write("memory.memsw.limit_in_bytes", bytes)?;
            }
            Ok(())
        }
        Version::V2 => {
            if let Some(n) = limits.pids {
                write("pids.max", n)?;
            }
            if let Some(bytes) = limits.memory {
                write("memory.max", bytes)?;
                if dir.join("memory.swap.max").exists() {
                    write("memory.swap.max", 0)?;
                }
            }
            Ok(())
        }
    }
}

fn open_write(path: &Path) -> io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    Ok(rustix::fs::open(
        path,
        OFlags::WRONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Kills what is left in `dir` (a child without namespaces may have left
/// processes outside its group) and removes it. A cgroup whose last
/// process was just reaped can be busy for a moment: tried a few times.
fn remove_dir(dir: &Path) {
    for _ in 0..200 {
        let procs = fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        match fs::remove_dir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            _ => return,
        }
    }
}

/// The inode of this process's PID namespace: a pid in a cgroup's name
/// means something only to processes of the same namespace.
fn pid_namespace() -> u64 {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self/ns/pid").map_or(0, |m| m.ino())
}

/// Removes the cgroups a planwright that is gone left in `parent` (killed
/// before it could remove them): `planwright-<pidns>-<pid>-<n>` of this
/// PID namespace whose pid is no longer running. What is still in one
/// is killed first.
pub(super) fn sweep(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    let ours = format!("planwright-{}-", pid_namespace());
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let pid = (name.to_str())
            .and_then(|n| n.strip_prefix(ours.as_str()))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        let gone = pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists());
        if gone {
            remove_dir(&entry.path());
        }
    }
}

/// Probes which cgroups planwright can make for its children.
pub(super) fn probe() -> Result<Mechanism, String> {
    let own = fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
    let mounts = Mount::parse(&mountinfo);
    let v2 = probe_v2(&own, &mounts);
    if let Ok(parent) = v2 {
        return Ok(Mechanism::CgroupV2 { parent });
    }
    let v2_why = v2.err().unwrap_or_default();
    let pids = probe_v1(&own, &mounts, "pids");
    let memory = probe_v1(&own, &mounts, "memory");
    match (pids, memory) {
        (Ok(pids), Ok(memory)) => Ok(Mechanism::CgroupV1 {
            pids: Some(pids),
            memory: Some(memory),
            why: String::new(),
        }),
        (Ok(pids), Err(why)) => Ok(Mechanism::CgroupV1 {
            pids: Some(pids),
            memory: None,
            why,
        }),
        (Err(why), Ok(memory)) => Ok(Mechanism::CgroupV1 {
            pids: None,
            memory: Some(memory),
            why,
        }),
        (Err(_), Err(v1_why)) => Err(format!("{v2_why}; {v1_why}")),
    }
}

/// A cgroup file system mounted in this mount namespace.
#[derive(Debug)]
struct Mount {
    /// Where it is mounted.
    point: PathBuf,
    /// Which of its cgroups is at the mount point.
    root: String,
    /// `cgroup2`, or the v1 controllers of the hierarchy.
    v1: Option<Vec<String>>,
}

impl Mount {
    fn parse(mountinfo: &str) -> Vec<Mount> {
        mountinfo
            .lines()
            .filter_map(|line| {
                let (left, right) = line.split_once(" - ")?;
                let left: Vec<&str> = left.split(' ').collect();
                let mut right = right.split(' ');
                let fstype = right.next()?;
                let _source = right.next()?;
                let options = right.next().unwrap_or("");
                let (root, point) = (left.get(3)?, left.get(4)?);
                let v1 = match fstype {
                    "cgroup2" => None,
                    "cgroup" => Some(options.split(',').map(str::to_string).collect()),
                    _ => return None,
                };
                Some(Mount {
                    point: PathBuf::from(unescape(point)),
                    root: unescape(root),
                    v1,
                })
            })
            .collect()
    }

    /// The directory of cgroup `path` of this hierarchy, if it is
    /// below the mount's root.
    fn dir_of(&self, path: &str) -> Option<PathBuf> {
        let rel = if self.root == "/" {
            path
        } else {
            path.strip_prefix(self.root.as_str())?
        };
        Some(self.point.join(rel.trim_start_matches('/')))
    }
}

/// mountinfo writes a space as `\040`.
fn unescape(field: &str) -> String {
    field
        .replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// This process's cgroup in the hierarchy whose `/proc/self/cgroup`
/// line's controller field is `controllers` (`""` for v2).
fn own_path(own: &str, wanted: impl Fn(&str) -> bool) -> Option<&str> {
    own.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_id, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        wanted(controllers).then_some(path)
    })
}

fn probe_v1(own: &str, mounts: &[Mount], controller: &str) -> Result<PathBuf, String> {
    let mount = mounts
        .iter()
        .find(|m| {
            m.v1.as_ref()
                .is_some_and(|c| c.iter().any(|c| c == controller))
        })
        .ok_or_else(|| format!("no cgroup v1 `{controller}` hierarchy is mounted"))?;
    let path = own_path(own, |c| c.split(',').any(|c| c == controller))
        .ok_or_else(|| format!("this process is in no `{controller}` cgroup"))?;
    let dir = mount
        .dir_of(path)
        .ok_or_else(|| format!("this process's `{controller}` cgroup is not visible"))?;
    try_child(&dir).map_err(|e| {
        format!(
            "cannot make a `{controller}` cgroup in {}: {e}",
            dir.display()
        )
    })?;
    Ok(dir)
}

fn probe_v2(own: &str, mounts: &[Mount]) -> Result<PathBuf, String> {
    let mount =
        (mounts.iter().find(|m| m.v1.is_none())).ok_or("no cgroup v2 file system is mounted")?;
    let path = own_path(own, str::is_empty).ok_or("this process is in no cgroup v2")?;
    let dir = mount
        .dir_of(path)
        .ok_or("this process's cgroup v2 is not visible")?;
    let words = |file: &str| fs::read_to_string(dir.join(file)).unwrap_or_default();
    let has = |text: &str| {
        ["pids", "memory"]
            .iter()
            .all(|c| text.split_whitespace().any(|w| w == *c))
    };
    if has(&words("cgroup.subtree_control")) {
        try_child(&dir)
            .map_err(|e| format!("cgroup v2: cannot make a cgroup in {}: {e}", dir.display()))?;
        return Ok(dir);
    }
    if !has(&words("cgroup.controllers")) {
        return Err(format!(
            "cgroup v2: {} has no `pids` and `memory` controllers to give its children",
            dir.display()
        ));
    }
    let others = words("cgroup.procs")
        .split_whitespace()
        .any(|p| p != std::process::id().to_string());
    if others {
        return Err(format!(
            "cgroup v2: {} holds other processes than planwright (start it in a delegated cgroup of its own: `systemd-run --user --scope -p Delegate=yes planwright ...`)",
            dir.display()
        ));
    }
    delegate_to_self(&dir).map_err(|e| {
        format!(
            "cgroup v2: cannot enable `pids` and `memory` below {}: {e}",
            dir.display()
        )
    })?;
    Ok(dir)
}

/// planwright alone in `dir`: it moves into the leaf `dir/planwright`
/// (a cgroup with processes cannot give its children controllers) and
/// enables `pids` and `memory` for the children of `dir`.
fn delegate_to_self(dir: &Path) -> io::Result<()> {
    let leaf = dir.join("planwright");
    match fs::create_dir(&leaf) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    fs::write(leaf.join("cgroup.procs"), std::process::id().to_string())?;
    if let Err(e) = fs::write(dir.join("cgroup.subtree_control"), "+pids +memory") {
        let _ = fs::write(dir.join("cgroup.procs"), std::process::id().to_string());
        return Err(e);
    }
    Ok(())
}

/// Whether a directory can be made (and removed) in `dir`.
fn try_child(dir: &Path) -> io::Result<()> {
    let probe = dir.join(format!("planwright-probe-{}", std::process::id()));
    fs::create_dir(&probe)?;
    fs::remove_dir(&probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
35 25 0:30 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory
36 25 0:31 / /sys/fs/cgroup/pids rw,relatime shared:13 - cgroup cgroup rw,pids
37 25 0:32 /docker/abc /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
38 25 0:33 / /proc rw - proc proc rw";

    #[test]
    fn mounts_and_own_cgroups_are_read() {
        let mounts = Mount::parse(MOUNTINFO);
        assert_eq!(mounts.len(), 3);
        let own = "4:memory:/process_api/x\n8:pids:/\n0::/docker/abc/inner\n";
        assert_eq!(own_path(own, |c| c == "memory"), Some("/process_api/x"));
        assert_eq!(own_path(own, str::is_empty), Some("/docker/abc/inner"));
        assert_eq!(
            mounts[0].dir_of("/process_api/x"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/process_api/x"))
        );
        assert_eq!(
            mounts[2].dir_of("/docker/abc/inner"),
            Some(PathBuf::from("/sys/fs/cgroup/unified/inner"))
        );
        assert_eq!(mounts[2].dir_of("/elsewhere"), None);
    }

    #[test]
    fn counters_are_read_by_key() {
        let oom = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
        assert_eq!(counter(oom, "oom_kill"), Some(2));
        assert_eq!(counter("max 0\n", "max"), Some(0));
        assert_eq!(counter("low 1\n", "max"), None);
    }
}
