//! What an attempt changed in its workspace, from a watch of it
//! ([`planwright_os::watch`]) rather than a read of every file (issue 53):
//! the candidate is staged from those paths alone (`add -A -- PATHS`), and
//! the next preparation puts back modes and cleans there alone, so a
//! ticket does not cost more as the tree grows. The watch lives as long as
//! the run, one per slot: made once (a watch on every tracked file and
//! folder), then kept up with the paths the resets write.
//!
//! Used only where a workspace stays as its candidate left it (the agent's
//! processes end with its PID namespace, no other agent writes there);
//! anything the watch cannot vouch for (see [`Changes::Unknown`]), an ignore
//! file or a nested `.git` among the changes, or more than [`MOST`] paths,
//! and the whole tree is read as before.

use crate::error::EngineError;
use crate::git::worktree::WorkTree;
use planwright_os::watch::{Changes, TreeWatch};
use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The most paths read by name; more, and the whole tree is read (some
/// go on git's command line).
const MOST: usize = 1000;

/// The watches of a run's workspaces, by slot.
#[derive(Debug, Clone, Default)]
pub(crate) struct Watches {
    slots: Arc<Mutex<HashMap<String, Slot>>>,
}

#[derive(Debug)]
struct Slot {
    watch: TreeWatch,
    /// What the slot's last attempt changed, as its candidate was staged
    /// from it; `None` when the whole tree was read.
    last: Option<Vec<PathBuf>>,
}

impl Watches {
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
    /// fresh start; `None` when the slot has no watch or it cannot say.
    pub(crate) fn written(&self, slot: &str) -> Option<Vec<PathBuf>> {
        let mut slots = self.slots();
        let s = slots.get_mut(slot)?;
        match s.watch.take() {
            Changes::Paths(p) if p.len() <= MOST && !p.contains(Path::new("")) => {
                Some(p.into_iter().collect())
            }
            _ => None,
        }
    }

    /// Watches slot `slot` from now on, at `dir` with planwright's git
    /// `tree` on it, after its reset and clean: what `written` names (the
    /// tracked files at or beneath those paths, and their folders), or,
    /// with `written` `None` or no watch yet, every tracked file and
    /// folder. What the clean removed is no change of the attempt's.
    pub(crate) fn arm(
        &self,
        slot: &str,
        tree: &WorkTree,
        dir: &Path,
        written: Option<&[PathBuf]>,
    ) -> Result<(), EngineError> {
        // Out of the lock while the watches are made: other slots go on.
        let kept = self.slots().remove(slot);
        let kept = kept.and_then(|mut s| match s.watch.take() {
            Changes::Paths(_) => Some(s.watch),
            Changes::Unknown(_) => None,
        });
        let (mut watch, among) = match (kept, written) {
            (Some(watch), Some(written)) => (watch, Some(written)),
            _ => match TreeWatch::new(dir) {
                Ok(watch) => (watch, None),
                // No inotify here: every attempt reads the whole tree.
                Err(_) => return Ok(()),
            },
        };
        // The folders of tracked files, which the reset has just made
        // (a path it deleted may have taken its folder with it).
        let mut dirs = BTreeSet::from([PathBuf::new()]);
        let entries = tree.entries(among)?;
        for (rel, _) in &entries {
            dirs.extend(rel.ancestors().skip(1).map(Path::to_path_buf));
        }
        for d in &dirs {
            watch.watch(d, true);
        }
        for (rel, _) in &entries {
            watch.watch(rel, false);
        }
        let armed = Slot { watch, last: None };
        self.slots().insert(slot.to_string(), armed);
        Ok(())
    }

    /// The paths slot `slot`'s attempt changed, for its candidate; `None`
    /// when the whole tree must be read. planwright's own `.git` for the
    /// agent is no change: git never stages it.
    pub(crate) fn changed(&self, slot: &str) -> Option<Vec<PathBuf>> {
        let mut slots = self.slots();
        let s = slots.get_mut(slot)?;
        let Changes::Paths(paths) = s.watch.take() else {
            slots.remove(slot);
            return None;
        };
        let paths: Vec<PathBuf> = paths
            .into_iter()
            .filter(|p| p.components().next() != Some(Component::Normal(".git".as_ref())))
            .collect();
        // An ignore file changes what is staged beyond its own path, git
        // stages a folder holding a `.git` as another repository, and the
        // work tree itself (its mode changed) is every path.
        let unsure = paths.iter().any(|p| {
            p.as_os_str().is_empty()
                || p.file_name() == Some(".gitignore".as_ref())
                || p.components()
                    .any(|c| c == Component::Normal(".git".as_ref()))
        });
        (!unsure && paths.len() <= MOST).then_some(paths)
    }

    /// Records what slot `slot`'s candidate was staged from: `paths`, or,
    /// with `None`, the whole tree.
    pub(crate) fn staged(&self, slot: &str, paths: Option<Vec<PathBuf>>) {
        if let Some(s) = self.slots().get_mut(slot) {
            s.last = paths;
        }
    }
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
    /// when the candidate is staged from what the watch saw: a write deep
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
        // A first attempt that changes nothing: the watch is made.
        let dir = prepare();
        assert_eq!(
            spaces.tree("s", &commit).unwrap().unwrap(),
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
        let tree = spaces.tree("s", &commit).unwrap().unwrap();

        let staged = spaces.watches.slots().get("s").unwrap().last.clone();
        let expected = ["a/b/c/d/deep", "a/b/new", "gone", "linked", "run"];
        assert_eq!(
            staged,
            Some(expected.map(PathBuf::from).to_vec()),
            "the candidate was staged from the watch's paths"
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
