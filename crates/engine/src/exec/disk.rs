//! The disk `.planwright/` is on: the floor below which no attempt starts
//! (`[run] min_free`), the attempt that filled it (`disk_full`), and the
//! reserve that lets the state store record that on a full disk.
//!
//! The reserve is a file of [`RESERVE`] bytes, its blocks allocated,
//! at `.planwright/reserve`. It is made when a run opens with room to
//! spare, and removed when an attempt filled the disk (before its failure
//! is recorded) or when a run opens below the floor (before the store is
//! written), so that SQLite finds room for its journal and pages.

use crate::model::failure::{Failure, FailureKind};
use planwright_config::MinFree;
use planwright_os::disk;
use planwright_os::sandbox::bytes_text;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The bytes set aside for the state store.
pub(crate) const RESERVE: u64 = 16 << 20;

/// Free space below the floor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Low {
    /// The folder whose disk is low, as the message names it.
    pub place: String,
    /// Bytes free.
    pub available: u64,
    /// The floor on this disk.
    pub floor: u64,
    /// As `[run] min_free` says it.
    pub min_free: MinFree,
    /// The largest folders under `.planwright/` (of 1 MiB or more), with
    /// their sizes.
    pub largest: Vec<(PathBuf, u64)>,
}

impl fmt::Display for Low {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} free on the disk of `{}`, below `[run] min_free` ({}",
            mib(self.available),
            self.place,
            self.min_free.describe()
        )?;
        if !matches!(self.min_free, MinFree::Bytes(_)) {
            write!(f, ": {} here", mib(self.floor))?;
        }
        f.write_str(")")?;
        if !self.largest.is_empty() {
            let list: Vec<String> = (self.largest.iter())
                .map(|(p, size)| format!("{} ({})", p.display(), mib(*size)))
                .collect();
            write!(f, "; the largest folders under it: {}", list.join(", "))?;
        }
        Ok(())
    }
}

/// `40 MiB`, rounded down; `0 MiB` below one.
fn mib(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        bytes_text(bytes >> 20 << 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// Whether the disk of `state_dir` (`.planwright/`, or the repository when
/// it does not exist yet) is below the floor `min_free`, and if so what
/// takes the space there.
pub(crate) fn low(state_dir: &Path, min_free: MinFree) -> Option<Low> {
    let at = if state_dir.exists() {
        state_dir
    } else {
        state_dir.parent()?
    };
    low_at(at, state_dir, ".planwright/".into(), min_free)
}

/// Whether the disk of the gate checkouts' folder `root` (in the user's
/// cache, often another disk than the repository's) is below the floor.
pub(crate) fn low_checkouts(root: &Path, min_free: MinFree) -> Option<Low> {
    let at = root.ancestors().find(|p| p.exists())?;
    low_at(at, root, root.display().to_string(), min_free)
}

fn low_at(at: &Path, dir: &Path, place: String, min_free: MinFree) -> Option<Low> {
    let space = disk::space(at).ok()?;
    let floor = min_free.floor(space.total);
    (space.available < floor).then(|| Low {
        place,
        available: space.available,
        floor,
        min_free,
        largest: disk::largest(dir, 5)
            .into_iter()
            .filter(|(_, size)| *size >= 1 << 20)
            .map(|(p, size)| {
                (
                    p.strip_prefix(dir).map(Path::to_path_buf).unwrap_or(p),
                    size,
                )
            })
            .collect(),
    })
}

fn reserve_path(state_dir: &Path) -> PathBuf {
    state_dir.join("reserve")
}

/// As a run opens: below the floor, the reserve is given to the state
/// store; with room above the floor for it, it is made (once).
pub(crate) fn at_open(state_dir: &Path, min_free: MinFree) {
    let path = reserve_path(state_dir);
    let space = disk::space(state_dir);
    let low = space
        .as_ref()
        .is_ok_and(|s| s.available < min_free.floor(s.total));
    if low {
        release(state_dir);
    } else if !path.exists() {
        let room =
            space.is_ok_and(|s| s.available >= min_free.floor(s.total).saturating_add(2 * RESERVE));
        if room {
            // Without it a full disk can still stop the run with a store
            // error, as before: nothing else depends on it.
            let _ = disk::reserve(&path, RESERVE);
        }
    }
}

/// Gives the reserve's space back (to the state store, about to record
/// a `disk_full` failure).
pub(crate) fn release(state_dir: &Path) {
    let _ = std::fs::remove_file(reserve_path(state_dir));
}

/// Times this process found the disk below the floor after an attempt or
/// a merge, counted before it gave the space back: a gate of another slot
/// that failed meanwhile failed on the full disk, though the disk has
/// room again when it looks.
static FILLS: AtomicU64 = AtomicU64::new(0);

/// How many times the disk was found full so far (see [`noted_full`]).
pub(crate) fn fills() -> u64 {
    FILLS.load(Ordering::SeqCst)
}

/// Counts a full disk, before its space is given back.
pub(crate) fn noted_full() {
    FILLS.fetch_add(1, Ordering::SeqCst);
}

/// Where an attempt was when the disk filled up, and what of its space
/// was given back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum During {
    /// The agent's work or its commit: the slot's workspace was reset.
    Agent,
    /// Its verification (the gate checkout, the gates, counterfactuals,
    /// review): the checkout and the slot's workspace were reset.
    Verification,
}

/// The failure of an attempt after which the disk is below the floor
/// (`low`), or was while it ran (`None`: another attempt's space was
/// given back since).
pub(crate) fn full(low: Option<&Low>, during: During) -> Failure {
    let (when, reset) = match during {
        During::Agent => ("the attempt", "its workspace was reset"),
        During::Verification => (
            "the attempt's verification",
            "its gate checkout and workspace were reset",
        ),
    };
    let low = match low {
        Some(low) => format!(": {low}"),
        None => " (the space of another attempt on it was given back since)".into(),
    };
    Failure::new(
        FailureKind::DiskFull,
        format!("the disk filled up during {when}{low}; {reset}"),
    )
}

/// The stop of the merge queue after a merge during which the disk fell
/// below the floor: what is verified stays so, for the next run.
pub(crate) fn merge_stopped(low: &Low) -> String {
    format!(
        "the disk filled up during a merge: {low}; the merge queue stopped, and what it had not merged stays verified: free some space and run again to merge it (`[run] min_free` sets the floor)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_low_checkouts_disk_is_named_by_its_folder_even_before_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("cache/planwright/checkouts/repo-1");
        let found = low_checkouts(&root, MinFree::Bytes(u64::MAX)).expect("below any floor");
        let said = found.to_string();
        assert!(
            said.contains(&format!("free on the disk of `{}`", root.display())),
            "{said}"
        );
        assert!(low_checkouts(&root, MinFree::Off).is_none());
        let state = low(dir.path(), MinFree::Bytes(u64::MAX)).unwrap();
        assert!(state.to_string().contains("disk of `.planwright/`"));
    }
}
