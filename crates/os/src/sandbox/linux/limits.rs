//! A confined child's [`Limits`] on Linux: the cgroup it joins before it
//! enters its namespaces ([`super::cgroup`]), and the rlimits that stand
//! in for a controller no cgroup offers: `RLIMIT_NPROC`, set inside the
//! child's new user namespace (where, since Linux 5.14, it counts that
//! namespace's processes alone; it is not enforced for root), and
//! `RLIMIT_DATA` (each process's private writable memory: unlike
//! `RLIMIT_AS`, address space a runtime only reserves does not count).

use super::super::limits::{Limits, Mechanism};
use super::cgroup::Cgroup;
use rustix::process::{Resource, Rlimit};
use std::io;
use std::os::fd::OwnedFd;
use std::sync::OnceLock;

/// The mechanism, probed once.
pub(in super::super) fn limits_mechanism() -> &'static Mechanism {
    static MECHANISM: OnceLock<Mechanism> = OnceLock::new();
    MECHANISM.get_or_init(|| match super::cgroup::probe() {
        Ok(cgroup) => {
            let parents = match &cgroup {
                Mechanism::CgroupV2 { parent } => vec![parent.clone()],
                Mechanism::CgroupV1 { pids, memory, .. } => {
                    pids.iter().chain(memory).cloned().collect()
                }
                Mechanism::Rlimit { .. } | Mechanism::None { .. } => vec![],
            };
            parents.iter().for_each(|p| super::cgroup::sweep(p));
            cgroup
        }
        Err(why) => Mechanism::Rlimit { why },
    })
}

/// What the child applies between fork and exec, prepared in the parent.
#[derive(Debug)]
pub(super) struct ChildLimits {
    /// `cgroup.procs` of each of its cgroups, written `0` (itself).
    procs: Vec<OwnedFd>,
    /// Set after it entered its user namespace.
    nproc: Option<u64>,
    /// Set before.
    data: Option<u64>,
}

impl ChildLimits {
    /// The child's cgroup (which its maker closes once it is reaped) and
    /// what the child applies. `namespaces`: whether it gets a user
    /// namespace of its own, without which `RLIMIT_NPROC` would count
    /// every process of the user.
    pub(super) fn new(
        limits: Limits,
        namespaces: bool,
    ) -> io::Result<(Option<Cgroup>, Option<ChildLimits>)> {
        if limits.is_none() {
            return Ok((None, None));
        }
        let mechanism = limits_mechanism();
        let (cgroup, procs) = match Cgroup::make(mechanism, limits)? {
            Some((cgroup, procs)) => (Some(cgroup), procs),
            None => (None, Vec::new()),
        };
        let (pids_by_cgroup, memory_by_cgroup) = match mechanism {
            Mechanism::CgroupV2 { .. } => (true, true),
            Mechanism::CgroupV1 { pids, memory, .. } => (pids.is_some(), memory.is_some()),
            Mechanism::Rlimit { .. } | Mechanism::None { .. } => (false, false),
        };
        let child = ChildLimits {
            procs,
            nproc: limits.pids.filter(|_| !pids_by_cgroup && namespaces),
            data: limits.memory.filter(|_| !memory_by_cgroup),
        };
        Ok((cgroup, Some(child)))
    }

    /// In the child, first: into its cgroups, and its data limit.
    pub(super) fn enter(&self) -> io::Result<()> {
        for fd in &self.procs {
            rustix::io::write(fd, b"0")?;
        }
        if let Some(bytes) = self.data {
            set(Resource::Data, bytes)?;
        }
        Ok(())
    }

    /// In the child, once in its own user namespace.
    pub(super) fn enter_namespace(&self) -> io::Result<()> {
        match self.nproc {
            Some(n) => set(Resource::Nproc, n),
            None => Ok(()),
        }
    }
}

fn set(resource: Resource, value: u64) -> io::Result<()> {
    let limit = Rlimit {
        current: Some(value),
        maximum: Some(value),
    };
    Ok(rustix::process::setrlimit(resource, limit)?)
}
