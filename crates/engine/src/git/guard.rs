//! Repository integrity, the second line behind the sandbox: a [`Guard`]
//! holds a snapshot of what no agent may change in the user's repository
//! (`HEAD`, every ref and `packed-refs`, config, hooks, `info/`, object
//! alternates, the status of the user's checkout, and planwright's own git
//! config) and compares it
//! around every attempt. Any difference stops the run (exit 3), names what
//! changed, and puts back what can be put back. planwright's own writes
//! (a merge moving the base) go through [`Guard::own_write`], which checks
//! before and takes the new snapshot after.

use crate::error::EngineError;
use crate::git::repo::Repo;
use crate::git::Git;
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One file of the git directory as it was: its bytes and mode, or a
/// symlink's target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    File(Vec<u8>, u32),
    Link(PathBuf),
}

/// What no agent may change.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Snapshot {
    /// Absolute path -> entry, for the files of the git directories.
    files: BTreeMap<PathBuf, Entry>,
    /// The checkout's status, each path with its size and change time;
    /// only taken while the checkout is watched (`git status` of a large
    /// checkout is the most expensive part of a snapshot).
    status: Option<String>,
}

/// Guards one repository for a session (a run, a delivery, a round of
/// responses), which holds it; a [`Repo`] is a plain handle.
#[derive(Debug)]
pub struct Guard {
    root: PathBuf,
    /// planwright's own git config: an agent that wrote a filter there
    /// would run it inside planwright's `add`.
    own_config: PathBuf,
    git_dir: PathBuf,
    common_dir: PathBuf,
    expected: Mutex<Option<Snapshot>>,
    /// Whether a change to the checkout's files stops the run. Only an
    /// unconfined agent can write there; under the sandbox a change is the
    /// user's own edit, which holds the merges instead (see refs.rs).
    watch_checkout: std::sync::atomic::AtomicBool,
}

/// Files of the git directories that are snapshotted whole.
const FILES: [&str; 7] = [
    "HEAD",
    "config",
    "config.worktree",
    "packed-refs",
    "commondir",
    "objects/info/alternates",
    "objects/info/http-alternates",
];

/// Directories of the common git directory snapshotted with every file.
const DIRS: [&str; 3] = ["refs", "hooks", "info"];

/// Files of those directories that are not guarded: `info/refs` is
/// derived from the refs (which are) by `git update-server-info`, which
/// git's own `repack` and `gc` run, also detached in the background after
/// a user's commit; only a dumb-HTTP server reads it.
const DERIVED: [&str; 1] = ["info/refs"];

/// planwright's own refs: written by planwright while attempts run, and
/// never trusted (the candidate commit is held by the coordinator's state
/// store; the run's branch is only landed by planwright's own write).
const OWN_REFS: [&str; 2] = ["refs/heads/planwright", "refs/planwright"];

impl Guard {
    /// A guard for `repo`'s checkout, its git directories and
    /// planwright's own git config.
    pub(crate) fn of(repo: &Repo) -> Guard {
        let own_config = repo.own_git_dir().join("config");
        Guard::new(repo.root(), repo.git_dir(), repo.common_dir(), own_config)
    }

    /// A guard for the checkout at `root` with these git directories and
    /// planwright's own git config `own_config`; the first
    /// [`Guard::check`] takes the snapshot.
    pub fn new(root: &Path, git_dir: &Path, common_dir: &Path, own_config: PathBuf) -> Guard {
        Guard {
            root: root.to_path_buf(),
            own_config,
            git_dir: git_dir.to_path_buf(),
            common_dir: common_dir.to_path_buf(),
            expected: Mutex::new(None),
            watch_checkout: std::sync::atomic::AtomicBool::new(true),
        }
    }

    /// Fails (and restores) when anything guarded changed since the
    /// snapshot; the first call takes the snapshot.
    pub fn check(&self) -> Result<(), EngineError> {
        let mut expected = self.expected.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.snapshot()?;
        match expected.as_ref() {
            None => {
                *expected = Some(now);
                Ok(())
            }
            Some(before) => self.compare(before, &now),
        }
    }

    /// Runs planwright's own write `f` to the repository: checks first,
    /// then takes the snapshot anew, with no check in between.
    pub fn own_write<T>(
        &self,
        f: impl FnOnce() -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        let mut expected = self.expected.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(before) = expected.as_ref() {
            self.compare(before, &self.snapshot()?)?;
        }
        let result = f();
        *expected = Some(self.snapshot()?);
        result
    }

    /// Whether changes to the checkout's files stop the run (they do unless
    /// agents run confined, see the field).
    pub fn watch_checkout(&self, on: bool) {
        self.watch_checkout
            .store(on, std::sync::atomic::Ordering::SeqCst);
    }

    fn watching(&self) -> bool {
        self.watch_checkout
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    fn compare(&self, before: &Snapshot, now: &Snapshot) -> Result<(), EngineError> {
        let changed = changes(before, now);
        let status_changed = matches!((&before.status, &now.status), (Some(a), Some(b)) if a != b)
            && self.watching();
        if changed.is_empty() && !status_changed {
            return Ok(());
        }
        let mut names: Vec<String> = changed.iter().map(|p| self.name(p)).collect();
        if status_changed {
            names.push("the checkout's files (`git status` differs)".to_string());
        }
        let restored = self.restore(before, &changed);
        Err(EngineError::Integrity(format!(
            "something outside planwright changed the repository during the run: {}; {}",
            names.join(", "),
            match restored {
                Ok(()) if status_changed => "git files restored; the checkout's files were not touched, look at them with `git status`".to_string(),
                Ok(()) => "restored as it was".to_string(),
                Err(e) => format!("restoring failed: {e}"),
            }
        )))
    }

    /// A path of the git directories as the user knows it (`.git/config`).
    fn name(&self, path: &Path) -> String {
        let rel = path
            .strip_prefix(&self.common_dir)
            .or_else(|_| path.strip_prefix(&self.git_dir))
            .or_else(|_| path.strip_prefix(&self.root))
            .unwrap_or(path);
        format!("`{}`", rel.display())
    }

    fn snapshot(&self) -> Result<Snapshot, EngineError> {
        let mut files = BTreeMap::new();
        for dir in [&self.common_dir, &self.git_dir] {
            for name in FILES {
                read_entry(&dir.join(name), &mut files)?;
            }
        }
        // planwright's own refs are written by its other threads while this
        // reads: a ref's `.lock` listed here may be renamed before it is
        // read. They are never trusted, so never read.
        let own: Vec<PathBuf> = OWN_REFS.iter().map(|r| self.common_dir.join(r)).collect();
        for name in DIRS {
            walk(&self.common_dir.join(name), &own, &mut files)?;
        }
        read_entry(&self.own_config, &mut files)?;
        for name in DERIVED {
            files.remove(&self.common_dir.join(name));
        }
        let status = if self.watching() {
            Some(self.status()?)
        } else {
            None
        };
        Ok(Snapshot { files, status })
    }

    /// `git status` of the checkout, each listed path with its size and
    /// change time, so writing again to a file that was already modified
    /// or untracked shows too.
    fn status(&self) -> Result<String, EngineError> {
        let out = Git::with_tree(&self.git_dir, &self.root)
            .env("GIT_OPTIONAL_LOCKS", "0")
            .args([
                "status",
                "--porcelain=v2",
                "-z",
                "--untracked-files=all",
                "--no-renames",
            ])
            .output()?;
        let mut text = String::new();
        for record in out.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let record = String::from_utf8_lossy(record);
            let path = status_path(&record);
            let stat = std::fs::symlink_metadata(self.root.join(path))
                .map(|m| format!("{} {}.{}", m.len(), m.ctime(), m.ctime_nsec()))
                .unwrap_or_else(|_| "gone".into());
            text.push_str(&format!("{record} [{stat}]\n"));
        }
        Ok(text)
    }

    /// Puts back every changed file of the snapshot and removes new ones.
    fn restore(&self, before: &Snapshot, changed: &[PathBuf]) -> std::io::Result<()> {
        for path in changed {
            match before.files.get(path) {
                None => {
                    std::fs::remove_file(path).or_else(|_| std::fs::remove_dir_all(path))?;
                }
                Some(entry) => {
                    if std::fs::symlink_metadata(path).is_ok() {
                        std::fs::remove_file(path).or_else(|_| std::fs::remove_dir_all(path))?;
                    }
                    if let Some(dir) = path.parent() {
                        std::fs::create_dir_all(dir)?;
                    }
                    match entry {
                        Entry::File(bytes, mode) => {
                            std::fs::write(path, bytes)?;
                            std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode))?;
                        }
                        Entry::Link(target) => std::os::unix::fs::symlink(target, path)?,
                    }
                }
            }
        }
        Ok(())
    }
}

/// The path of a `git status --porcelain=v2 -z --no-renames` record: after
/// 8 fields for a changed entry, 10 for an unmerged one, 1 for an
/// untracked one (paths may hold spaces).
fn status_path(record: &str) -> &str {
    let fields = match record.as_bytes().first() {
        Some(b'1') => 8,
        Some(b'u') => 10,
        _ => 1,
    };
    record
        .splitn(fields + 1, ' ')
        .nth(fields)
        .unwrap_or_default()
}

/// Paths whose entry differs, appeared or disappeared.
fn changes(before: &Snapshot, now: &Snapshot) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = before
        .files
        .iter()
        .filter(|(p, e)| now.files.get(*p) != Some(e))
        .map(|(p, _)| p.clone())
        .collect();
    out.extend(
        now.files
            .keys()
            .filter(|p| !before.files.contains_key(*p))
            .cloned(),
    );
    out
}

/// Adds the file or symlink at `path` to `files`. One that is gone, even
/// between its `lstat` and its read (git renames a ref's `.lock` into
/// place), is not there: a snapshot is of what is there.
fn read_entry(path: &Path, files: &mut BTreeMap<PathBuf, Entry>) -> Result<(), EngineError> {
    let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    let entry = (|| {
        let meta = std::fs::symlink_metadata(path)?;
        Ok(if meta.file_type().is_symlink() {
            Some(Entry::Link(std::fs::read_link(path)?))
        } else if meta.is_file() {
            let bytes = std::fs::read(path)?;
            Some(Entry::File(bytes, meta.permissions().mode() & 0o7777))
        } else {
            None
        })
    })();
    match entry {
        Ok(Some(entry)) => {
            files.insert(path.to_path_buf(), entry);
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(e) if gone(&e) => Ok(()),
        Err(e) => Err(EngineError::io(path, e)),
    }
}

/// Adds every file under `dir` to `files`, but none at or under `skip`.
fn walk(
    dir: &Path,
    skip: &[PathBuf],
    files: &mut BTreeMap<PathBuf, Entry>,
) -> Result<(), EngineError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(EngineError::io(dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| EngineError::io(dir, e))?;
        let path = entry.path();
        if skip.contains(&path) {
            continue;
        }
        let kind = entry.file_type().map_err(|e| EngineError::io(&path, e))?;
        if kind.is_dir() {
            walk(&path, skip, files)?;
        } else {
            read_entry(&path, files)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::testing::{committed, git};

    /// The user's own repack (a detached `gc --auto` after a large commit
    /// runs one) writes `info/refs`, derived from the refs: no violation.
    /// A change to what git reads from `info/` still is, and is undone.
    #[test]
    fn info_refs_written_by_a_repack_is_no_violation_but_info_exclude_is() {
        let tmp = tempfile::tempdir().unwrap();
        let (repo, _) = committed(tmp.path(), &[("a", "a\n".into())]);
        let guard = Guard::of(&repo);
        guard.check().unwrap();
        git(repo.root(), &["repack", "-a", "-d"]);
        assert!(repo.common_dir().join("info/refs").is_file());
        guard.check().unwrap();
        let exclude = repo.common_dir().join("info/exclude");
        let before = std::fs::read(&exclude).unwrap_or_default();
        std::fs::write(&exclude, "*.rs\n").unwrap();
        let err = guard.check().unwrap_err().to_string();
        assert!(err.contains("info/exclude"), "{err}");
        assert_eq!(std::fs::read(&exclude).unwrap_or_default(), before);
    }

    /// git writes a ref as `NAME.lock`, then renames it into place: a
    /// snapshot that lists the lock and reads it after the rename must not
    /// fail (a run's other slots write planwright's own refs all along, and
    /// the user may fetch). planwright's own refs are not read at all; a
    /// file gone between its listing and its read is not there.
    #[test]
    fn refs_renamed_into_place_while_a_snapshot_reads_them_are_no_error() {
        let tmp = tempfile::tempdir().unwrap();
        let (repo, _) = committed(tmp.path(), &[("a", "a\n".into())]);
        let guard = Guard::of(&repo);
        // The git directory alone: no `git status` a snapshot.
        guard.watch_checkout(false);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // The snapshots start once each writer has renamed a ref into place.
        let started = std::sync::Arc::new(std::sync::Barrier::new(3));
        let writers: Vec<_> = ["refs/planwright/candidates", "refs/remotes/origin"]
            .into_iter()
            .map(|dir| {
                let dir = repo.common_dir().join(dir);
                std::fs::create_dir_all(&dir).unwrap();
                let (stop, started) = (stop.clone(), started.clone());
                std::thread::spawn(move || {
                    for n in 0u64.. {
                        let (lock, name) =
                            (dir.join(format!("t{n}.lock")), dir.join(format!("t{n}")));
                        std::fs::write(&lock, "0123456789abcdef0123456789abcdef01234567\n")
                            .unwrap();
                        std::fs::rename(&lock, &name).unwrap();
                        std::fs::remove_file(&name).unwrap();
                        if n == 0 {
                            started.wait();
                        }
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            break;
                        }
                    }
                })
            })
            .collect();
        started.wait();
        let results: Vec<_> = (0..2000).map(|_| guard.snapshot().map(|_| ())).collect();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writers.into_iter().for_each(|w| w.join().unwrap());
        let failed: Vec<String> = (results.into_iter())
            .filter_map(|r| r.err().map(|e| e.to_string()))
            .collect();
        assert!(
            failed.is_empty(),
            "{} of 2000: {:?}",
            failed.len(),
            failed.first()
        );
    }

    #[test]
    fn status_paths_keep_their_spaces() {
        assert_eq!(
            status_path("1 .M N... 100644 100644 100644 abc abc my file.txt"),
            "my file.txt"
        );
        assert_eq!(status_path("? new dir/a b"), "new dir/a b");
        assert_eq!(
            status_path("u UU N... 100644 100644 100644 100644 a b c x y.txt"),
            "x y.txt"
        );
    }
}
