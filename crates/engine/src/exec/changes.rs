//! What an attempt changed in its workspace, as inotify reported it
//! ([`planwright_os::inotify`]) rather than from a read of every file
//! (issue 53): the candidate is staged from those paths alone (`add -A --
//! PATHS`), and the next preparation puts back modes and cleans there
//! alone, so a ticket does not cost more as the tree grows. One
//! [`ChangedPaths`] per slot lives as long as the run: made once, observing
//! every folder that can hold a path `add -A` would stage (every folder of
//! the work tree but `.git` and those the ignore rules keep out) and every
//! tracked file, then kept up with the paths the last attempt changed and
//! the next reset wrote, where files are replaced and folders appear.
//!
//! Used only where a workspace stays as its candidate left it (the agent's
//! processes end with its PID namespace, no other agent writes there);
//! anything inotify cannot vouch for (see [`Changes::Unknown`]), an ignore
//! file or a nested `.git` among the changes, or more than [`MOST`] paths,
//! and the whole tree is read as before.

use crate::error::EngineError;
use crate::git::worktree::WorkTree;
use planwright_os::beneath::Dir;
use planwright_os::inotify::{ChangedPaths, Changes};
use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The most paths read by name; more, and the whole tree is read (some
/// go on git's command line).
const MOST: usize = 1000;

/// The changed paths of a run's workspaces, by slot.
#[derive(Debug, Clone, Default)]
pub(crate) struct SlotChanges {
    slots: Arc<Mutex<HashMap<String, Slot>>>,
}

#[derive(Debug)]
struct Slot {
    /// What reports the slot's changes, or why nothing can.
    paths: Result<ChangedPaths, String>,
    /// What the slot's last attempt changed, as its candidate was staged
    /// from it; `None` when the whole tree was read.
    last: Option<Vec<PathBuf>>,
}

/// What an attempt's candidate is staged from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Staging {
    /// These paths, all the attempt changed.
    Paths(Vec<PathBuf>),
    /// The whole workspace; why.
    Whole(String),
}

impl SlotChanges {
    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The paths slot `slot`'s last attempt changed, when its candidate
    /// was staged from them and `synced` (nothing has run there since);
    /// forgotten either way.
    pub(crate) fn last(&self, slot: &str, synced: bool) -> Option<Vec<PathBuf>> {
        let last = self.slots().get_mut(slot).and_then(|s| s.last.take());
        last.filter(|_| synced)
    }

    /// The paths planwright's own reset just wrote in slot `slot`, and a
    /// fresh start; `None` when nothing observes the slot or it cannot say.
    pub(crate) fn written(&self, slot: &str) -> Option<Vec<PathBuf>> {
        let mut slots = self.slots();
        let paths = slots.get_mut(slot)?.paths.as_mut().ok()?;
        match paths.take() {
            Changes::Paths(p) if p.len() <= MOST && !p.contains(Path::new("")) => {
                Some(p.into_iter().collect())
            }
            _ => None,
        }
    }

    /// Observes slot `slot` from now on, at `dir` with planwright's git
    /// `tree` on it, after its reset and clean. With `among` (what the
    /// last attempt changed and the reset wrote, both known to be all),
    /// what is new there is added to what already observes the slot: the
    /// tracked files at or beneath those paths, and the folders among them
    /// and beneath. Else, or when nothing observes the slot yet, it starts
    /// anew from the whole tree. What the clean removed is no change of
    /// the attempt's.
    pub(crate) fn observe(
        &self,
        slot: &str,
        tree: &WorkTree,
        dir: &Path,
        among: Option<&[PathBuf]>,
    ) -> Result<(), EngineError> {
        // Out of the lock while the tree is read: other slots go on.
        let kept = self.slots().remove(slot);
        let kept = kept.and_then(|s| match s.paths {
            Ok(mut paths) => matches!(paths.take(), Changes::Paths(_)).then_some(paths),
            Err(_) => None,
        });
        let (mut paths, among) = match (kept, among) {
            (Some(paths), Some(among)) => (paths, Some(among)),
            _ => match ChangedPaths::new(dir) {
                Ok(paths) => (paths, None),
                Err(e) => {
                    self.unobserved(slot, e.to_string());
                    return Ok(());
                }
            },
        };
        let entries = tree.entries(among)?;
        // The folders of tracked files, which the reset has just made.
        let mut tracked = BTreeSet::from([PathBuf::new()]);
        for (rel, _) in &entries {
            tracked.extend(rel.ancestors().skip(1).map(Path::to_path_buf));
        }
        let starts: Vec<PathBuf> = match among {
            None => vec![PathBuf::new()],
            Some(among) => (among.iter())
                .filter(|p| !is_git(p) && is_folder(&dir.join(p)))
                .cloned()
                .collect(),
        };
        let folders = match stageable_folders(tree, dir, starts, &tracked)? {
            Ok(folders) => folders,
            Err(why) => {
                self.unobserved(slot, why);
                return Ok(());
            }
        };
        for d in tracked.iter().chain(&folders) {
            paths.observe(d, true);
        }
        for (rel, _) in &entries {
            paths.observe(rel, false);
        }
        let observed = Slot {
            paths: Ok(paths),
            last: None,
        };
        self.slots().insert(slot.to_string(), observed);
        Ok(())
    }

    /// Nothing observes slot `slot`, for reason `why`: every candidate
    /// there is staged from the whole tree until the next
    /// [`SlotChanges::observe`].
    fn unobserved(&self, slot: &str, why: String) {
        let slot_changes = Slot {
            paths: Err(why),
            last: None,
        };
        self.slots().insert(slot.to_string(), slot_changes);
    }

    /// What slot `slot`'s candidate is to be staged from. planwright's own
    /// `.git` for the agent is no change: git never stages it.
    pub(crate) fn changed(&self, slot: &str) -> Staging {
        let mut slots = self.slots();
        let Some(s) = slots.get_mut(slot) else {
            return Staging::Whole("nothing observes this workspace".into());
        };
        let changes = match &mut s.paths {
            Ok(paths) => paths.take(),
            Err(why) => return Staging::Whole(why.clone()),
        };
        let paths = match changes {
            Changes::Paths(paths) => paths,
            Changes::Unknown(why) => {
                slots.remove(slot);
                return Staging::Whole(why);
            }
        };
        let paths: Vec<PathBuf> = (paths.into_iter())
            .filter(|p| p.components().next() != Some(Component::Normal(".git".as_ref())))
            .collect();
        match unsure(&paths) {
            Some(why) => Staging::Whole(why.to_string()),
            None => Staging::Paths(paths),
        }
    }

    /// Records what slot `slot`'s candidate was staged from: `paths`, or,
    /// with `None`, the whole tree.
    pub(crate) fn staged(&self, slot: &str, paths: Option<Vec<PathBuf>>) {
        if let Some(s) = self.slots().get_mut(slot) {
            s.last = paths;
        }
    }
}

/// Stages `paths` (what an attempt changed in the work tree at `dir`)
/// with planwright's git `tree`, by name: what they were staged from, or
/// why the whole tree must be read after all.
pub(crate) fn stage(
    tree: &WorkTree,
    dir: &Path,
    paths: Vec<PathBuf>,
) -> Result<Staging, EngineError> {
    let refused = || Staging::Whole("git refused one of the changed paths".into());
    let paths = stageable(tree, dir, paths)?;
    if tree.add_paths(&paths)?.is_ok() {
        return Ok(Staging::Paths(paths));
    }
    // git refuses a path named to it that the ignore rules keep out (a
    // build's output, say), which `add -A` of the whole tree leaves out:
    // once more without them. Any other refusal (a path beneath a
    // symlink, one git will not index) is the whole tree's to explain.
    let ignored: BTreeSet<PathBuf> = match tree.ignored(&paths) {
        Ok(ignored) if !ignored.is_empty() => ignored.into_iter().collect(),
        _ => return Ok(refused()),
    };
    let rest: Vec<PathBuf> = (paths.into_iter())
        .filter(|p| !ignored.contains(p))
        .collect();
    Ok(match tree.add_paths(&rest)? {
        Ok(()) => Staging::Paths(rest),
        Err(_) => refused(),
    })
}

/// The paths of `paths` (changed in the work tree at `dir`, where
/// planwright's git `tree` is) that `add -A` can stage: those in the work
/// tree, and those gone from it that the index holds (at or beneath them).
/// A file made and removed within the attempt would make `add` refuse the
/// whole list. Nothing is followed: a path beneath a symlink is not there.
fn stageable(
    tree: &WorkTree,
    dir: &Path,
    paths: Vec<PathBuf>,
) -> Result<Vec<PathBuf>, EngineError> {
    let root = Dir::open(dir)?;
    let (present, missing): (Vec<_>, Vec<_>) =
        (paths.into_iter()).partition(|p| root.entry(p).is_ok_and(|e| e.is_some()));
    if missing.is_empty() {
        return Ok(present);
    }
    let indexed = tree.entries(Some(&missing))?;
    let mut paths = present;
    paths.extend(
        (missing.into_iter()).filter(|p| indexed.iter().any(|(rel, _)| rel.starts_with(p))),
    );
    paths.sort();
    Ok(paths)
}

/// Why `paths` (an attempt's changes) cannot be staged by name, if so: an
/// ignore file changes what is staged beyond its own path, git stages a
/// folder holding a `.git` as another repository, and the work tree
/// itself (its mode changed) is every path.
fn unsure(paths: &[PathBuf]) -> Option<&'static str> {
    if paths.len() > MOST {
        return Some("more than 1,000 paths changed");
    }
    for p in paths {
        if p.as_os_str().is_empty() {
            return Some("the workspace's own folder changed");
        }
        if p.file_name() == Some(".gitignore".as_ref()) {
            return Some("an ignore file changed");
        }
        if p.components().any(|c| is_git(Path::new(&c))) {
            return Some("a `.git` changed");
        }
    }
    None
}

/// Whether `p` is named `.git`.
fn is_git(p: &Path) -> bool {
    p.file_name() == Some(".git".as_ref())
}

/// Whether `path` is a folder, itself (a symlink to one is not).
fn is_folder(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// The folders at and beneath `starts` (relative to the work tree at
/// `dir`) that can hold a path `add -A` would stage: a folder of tracked
/// files (in `tracked`), or one the ignore rules do not keep out; never a
/// `.git`, never through a symlink. Read a level at a time, one
/// `check-ignore` a level for its untracked folders. A folder that cannot
/// be read is why nothing can vouch for the tree.
fn stageable_folders(
    tree: &WorkTree,
    dir: &Path,
    starts: Vec<PathBuf>,
    tracked: &BTreeSet<PathBuf>,
) -> Result<Result<Vec<PathBuf>, String>, EngineError> {
    let unignored = |untracked: Vec<PathBuf>| -> Result<Vec<PathBuf>, EngineError> {
        let ignored: BTreeSet<PathBuf> = tree.ignored(&untracked)?.into_iter().collect();
        Ok(untracked
            .into_iter()
            .filter(|p| !ignored.contains(p))
            .collect())
    };
    let (mut level, untracked): (Vec<_>, Vec<_>) =
        starts.into_iter().partition(|p| tracked.contains(p));
    level.extend(unignored(untracked)?);
    let mut all = Vec::new();
    while !level.is_empty() {
        let mut next = Vec::new();
        let mut untracked = Vec::new();
        for d in &level {
            let children = match folders_in(&dir.join(d)) {
                Ok(children) => children,
                Err(e) => return Ok(Err(format!("`{}` could not be read: {e}", d.display()))),
            };
            for child in children {
                let rel = d.join(child);
                match tracked.contains(&rel) {
                    true => next.push(rel),
                    false => untracked.push(rel),
                }
            }
        }
        all.append(&mut level);
        next.extend(unignored(untracked)?);
        level = next;
    }
    Ok(Ok(all))
}

/// The names of the folders in the folder `path`, but `.git`; a symlink
/// is no folder (the entry's own type is read, never followed).
fn folders_in(path: &Path) -> std::io::Result<Vec<std::ffi::OsString>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() && entry.file_name() != ".git" {
            names.push(entry.file_name());
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use crate::exec::workspace::{WorkspaceSettings, Workspaces};
    use crate::git::testing::{committed, git};
    use planwright_os::process::Cancel;
    use planwright_os::sandbox::{Containment, Mode};
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    /// An attempt's writes anywhere in its workspace reach its candidate
    /// when the candidate is staged from what inotify saw: a write deep
    /// in a folder no attempt touched before, a new untracked file, a
    /// deletion, a file made executable, a write through a hard link made
    /// outside the workspace; and the next preparation undoes them all.
    #[test]
    fn every_change_of_an_attempt_reaches_its_candidate_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let files: Vec<(&str, String)> = ["a/b/c/d/deep", "top", "gone", "run", "linked"]
            .into_iter()
            .map(|f| (f, format!("{f}\n")))
            .collect();
        let (repo, commit) = committed(tmp.path(), &files);
        // Processes contained (in namespaces), writes not: as `mode = "off"`.
        let confined = Containment::new(Mode::Off).unwrap();
        assert!(
            confined.ends_descendants(),
            "the kernel has no user namespaces"
        );
        let spaces = Workspaces::new(repo, WorkspaceSettings::default(), confined, vec![]);
        let (log, cancel) = (tmp.path().join("log"), Cancel::default());
        let prepare = || {
            (spaces.prepare("s", (&commit, &commit), "b", &log, &cancel))
                .unwrap()
                .unwrap()
        };
        // A first attempt that changes nothing: inotify starts observing.
        let dir = prepare();
        assert_eq!(
            spaces.tree("s", &commit, &log).unwrap().unwrap(),
            tree_of(&dir, &commit)
        );
        let dir = prepare();
        let outside = tmp.path().join("outside-link");
        std::fs::hard_link(dir.join("linked"), &outside).unwrap();

        std::fs::write(dir.join("a/b/c/d/deep"), "changed deep\n").unwrap();
        std::fs::write(dir.join("a/b/new"), "new\n").unwrap();
        std::fs::remove_file(dir.join("gone")).unwrap();
        std::fs::set_permissions(dir.join("run"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(&outside, "through a link\n").unwrap();
        let tree = spaces.tree("s", &commit, &log).unwrap().unwrap();

        let staged = spaces.changes.slots().get("s").unwrap().last.clone();
        let expected = ["a/b/c/d/deep", "a/b/new", "gone", "linked", "run"];
        assert_eq!(
            staged,
            Some(expected.map(PathBuf::from).to_vec()),
            "the candidate was staged from the paths inotify saw"
        );
        let listing = git(&dir, &["ls-tree", "-r", &tree]);
        for (path, mode, text) in [
            ("a/b/c/d/deep", "100644", "changed deep\n"),
            ("a/b/new", "100644", "new\n"),
            ("linked", "100644", "through a link\n"),
            ("run", "100755", "run\n"),
            ("top", "100644", "top\n"),
        ] {
            let line = listing.lines().find(|l| l.ends_with(&format!("\t{path}")));
            let line = line.unwrap_or_else(|| panic!("{path} is in the candidate: {listing}"));
            assert!(line.starts_with(mode), "{line}");
            let oid = line.split_whitespace().nth(2).unwrap();
            assert_eq!(git(&dir, &["cat-file", "blob", oid]) + "\n", text, "{path}");
        }
        assert!(
            !listing.contains("\tgone"),
            "the deletion is in the candidate"
        );

        // The next preparation, from the same commit, undoes it all.
        let dir = prepare();
        assert_eq!(
            std::fs::read_to_string(dir.join("a/b/c/d/deep")).unwrap(),
            "a/b/c/d/deep\n"
        );
        assert!(!dir.join("a/b/new").exists());
        assert_eq!(std::fs::read_to_string(dir.join("gone")).unwrap(), "gone\n");
        assert_eq!(
            std::fs::read_to_string(dir.join("linked")).unwrap(),
            "linked\n"
        );
        let mode = std::fs::metadata(dir.join("run"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0, "run is not executable again");
    }

    /// The tree of `commit` (the candidate of an attempt that changed
    /// nothing).
    fn tree_of(dir: &std::path::Path, commit: &str) -> String {
        git(dir, &["rev-parse", &format!("{commit}^{{tree}}")])
    }
}
