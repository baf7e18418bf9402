//! How many processes and how much memory a confined child (and
//! everything it starts) may use, which mechanism holds it to that, and
//! which limit it hit.
//!
//! The face is platform-free: a [`Limits`] in the child's
//! [`super::Policy`], the [`Mechanism`] chosen once per process
//! ([`mechanism`]), and a [`LimitHit`] in [`crate::process::Finished`]
//! and in the [`super::Confine`]'s [`HitRecord`] when the child's end
//! was the limit's doing. On Linux the mechanism is a cgroup of the
//! child's own where planwright can make one, else rlimits
//! (`linux/limits.rs`, `linux/cgroup.rs`); elsewhere there is none.

use std::fmt;
use std::sync::{Arc, Mutex};

/// The bounds of one confined child and all it starts. `None` leaves a
/// resource unbounded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Processes and threads at once.
    pub pids: Option<u64>,
    /// Memory in bytes (with a cgroup: its memory, page cache and swap
    /// together; with rlimits: each process's data segment).
    pub memory: Option<u64>,
}

impl Limits {
    /// Whether nothing is bounded.
    pub fn is_none(&self) -> bool {
        self.pids.is_none() && self.memory.is_none()
    }
}

/// A limit a child reached: its fork failed at the process limit, or the
/// kernel killed a process of it for memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitHit {
    /// It reached this many processes and threads, and a fork failed.
    Pids(u64),
    /// It ran out of this many bytes of memory, and the kernel's
    /// out-of-memory killer ended a process of it.
    Memory(u64),
}

impl fmt::Display for LimitHit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitHit::Pids(n) => write!(f, "it reached its limit of {n} processes and threads"),
            LimitHit::Memory(bytes) => {
                write!(f, "it ran out of its {} of memory", bytes_text(*bytes))
            }
        }
    }
}

/// `4 GiB`, `64 MiB`, `1000 bytes`: exact, in the largest binary unit
/// that divides it.
pub fn bytes_text(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    UNITS
        .iter()
        .find(|(size, _)| bytes >= *size && bytes % size == 0)
        .map_or_else(
            || format!("{bytes} bytes"),
            |(size, unit)| format!("{} {unit}", bytes / size),
        )
}

/// Where the children of one [`super::Confine`] note the limits they
/// hit, shared by its clones (an adapter runs a clone of the attempt's
/// confine; its maker reads the record after the attempt).
#[derive(Debug, Clone, Default)]
pub struct HitRecord(Arc<Mutex<Option<LimitHit>>>);

impl HitRecord {
    /// The first limit a child hit, if any.
    pub fn get(&self) -> Option<LimitHit> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn note(&self, hit: LimitHit) {
        let mut first = self.0.lock().unwrap_or_else(|e| e.into_inner());
        first.get_or_insert(hit);
    }
}

/// Two records are equal when they are the same record.
impl PartialEq for HitRecord {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for HitRecord {}

/// What holds a child to its [`Limits`], chosen once per process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    /// A cgroup v2 per child, made below this directory.
    CgroupV2 {
        /// The cgroup below which each child gets its own.
        parent: std::path::PathBuf,
    },
    /// A cgroup per child in each v1 hierarchy that planwright can write;
    /// a resource without one is bounded by its rlimit.
    CgroupV1 {
        /// The pids hierarchy's directory to make children's cgroups in.
        pids: Option<std::path::PathBuf>,
        /// The memory hierarchy's.
        memory: Option<std::path::PathBuf>,
        /// Why a hierarchy is missing, when one is.
        why: String,
    },
    /// Resource limits set in the child: `RLIMIT_NPROC` inside its user
    /// namespace, `RLIMIT_DATA` per process.
    Rlimit {
        /// Why no cgroup could be had.
        why: String,
    },
    /// Nothing bounds a child.
    None {
        /// Why.
        why: String,
    },
}

impl Mechanism {
    /// For preflight and the run record: `cgroup v1 (pids, memory)`,
    /// `rlimit (no cgroup: ...)`.
    pub fn describe(&self) -> String {
        match self {
            Mechanism::CgroupV2 { parent } => format!("cgroup v2 (below {})", parent.display()),
            Mechanism::CgroupV1 {
                pids: Some(_),
                memory: Some(_),
                ..
            } => "cgroup v1 (pids, memory)".into(),
            Mechanism::CgroupV1 { pids, why, .. } => {
                let (cgroup, rlimit) = if pids.is_some() {
                    ("pids", "memory by RLIMIT_DATA")
                } else {
                    ("memory", "processes by RLIMIT_NPROC")
                };
                format!("cgroup v1 ({cgroup}), {rlimit} ({why})")
            }
            Mechanism::Rlimit { why } => format!(
                "rlimit (RLIMIT_NPROC in the child's user namespace, RLIMIT_DATA per process; no cgroup: {why})"
            ),
            Mechanism::None { why } => format!("none ({why})"),
        }
    }

    /// Whether a child's hitting a limit is seen (from the cgroup's
    /// counters), so its attempt fails with the limit named.
    pub fn reports_hits(&self) -> bool {
        matches!(
            self,
            Mechanism::CgroupV2 { .. } | Mechanism::CgroupV1 { .. }
        )
    }
}

/// The mechanism that bounds confined children on this machine: probed
/// once (on Linux, a cgroup made and removed again).
pub fn mechanism() -> &'static Mechanism {
    super::imp::limits_mechanism()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_exactly() {
        assert_eq!(bytes_text(4 << 30), "4 GiB");
        assert_eq!(bytes_text(64 << 20), "64 MiB");
        assert_eq!(bytes_text(1536 << 20), "1536 MiB");
        assert_eq!(bytes_text(1000), "1000 bytes");
    }

    #[test]
    fn a_record_keeps_the_first_hit_and_is_shared_by_clones() {
        let record = HitRecord::default();
        let clone = record.clone();
        clone.note(LimitHit::Pids(64));
        clone.note(LimitHit::Memory(1 << 20));
        assert_eq!(record.get(), Some(LimitHit::Pids(64)));
        assert_eq!(record, clone);
        assert_ne!(record, HitRecord::default());
    }
}
