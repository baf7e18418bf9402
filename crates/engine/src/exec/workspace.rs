//! The agents' workspaces: one directory per job slot under
//! `.planwright/workspaces/<slot>`, reset to a new commit between tickets
//! instead of made anew.
//!
//! A workspace is not the user's repository. planwright keeps its files
//! with its own git directory (`.planwright/git`, see
//! [`Repo::own_tree`]) and an index per slot kept outside the workspace, and
//! builds the candidate's tree from the files the same way. The workspace's
//! own `.git` is for the agent alone: a fresh repository made for each
//! ticket that borrows the user's objects read-only (alternates), so
//! `git status`, `git diff` and commits work for the agent, and whatever it
//! does to that `.git` (config, hooks, refs, a `.git` file pointing
//! elsewhere) is thrown away with it and is never read by planwright.
//!
//! After each reset the project's set-up runs when its key changed since it
//! last ran in the slot (see [`crate::exec::setup`]; with `pristine`, every time),
//! and the `[workspace] copy` files (`.env`) are copied in from the user's
//! checkout, so every agent starts from the user's version. They never
//! reach a candidate: its tree keeps them as the base commit has them.

use crate::caches::Caches;
use crate::error::EngineError;
use crate::exec::changes::{stage, SlotChanges, Staging};
use crate::exec::files::{
    clean, copy_source, create_parent, first_use, fresh_dir, remove_any, restore_modes,
};
use crate::exec::names;
use crate::exec::network::{Network, SETUP_HOSTS};
use crate::exec::setup::{self, Setup};
use crate::git::objects;
use crate::git::repo::Repo;
use crate::git::worktree::Clean;
use crate::model::{Failure, Verdict};
use planwright_os::beneath::Dir;
use planwright_os::process::Cancel;
use planwright_os::sandbox::{Confine, Containment, Policy};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// `[workspace]` settings: how workspaces and gate checkouts are prepared
/// (resolved by planwright-config).
pub(crate) use planwright_config::WorkspaceSettings;

/// The workspaces of a run.
#[derive(Debug, Clone)]
pub struct Workspaces {
    repo: Repo,
    settings: WorkspaceSettings,
    setup: Setup,
    containment: Containment,
    /// How agents and set-ups reach the network.
    network: Network,
    /// `[sandbox] writable`: more directories every agent may write.
    declared: Vec<PathBuf>,
    /// `[sandbox] readable`: more that agents and set-ups read.
    readable: Vec<PathBuf>,
    object_format: Arc<OnceLock<String>>,
    /// The slots whose index matched every tracked file when [`Workspaces::tree`]
    /// last read them, with nothing run in them since. Their next reset
    /// need only touch the files that differ between the two commits.
    synced: Arc<Mutex<HashSet<String>>>,
    /// The slots this run has prepared: the first preparation of each
    /// says in the ticket's log whether it made the workspace or reused
    /// one (kept from an earlier run, or made by [`Workspaces::warm`]).
    used: Arc<Mutex<HashSet<String>>>,
    /// Whether a workspace stays as its candidate left it: the agent's
    /// processes end with its PID namespace, and no other agent may write
    /// there (no `[sandbox] writable` directory holds the workspaces).
    quiet_after_candidate: bool,
    /// What each slot's attempt changed, where `quiet_after_candidate`.
    pub(super) changes: SlotChanges,
    /// `[sandbox] pids` and `memory` of agents and set-ups.
    limits: planwright_os::sandbox::Limits,
}

impl Workspaces {
    /// Workspaces of `repo`, prepared as `settings` say; agents run under
    /// `containment` and may also write the `declared` directories.
    pub fn new(
        repo: Repo,
        settings: WorkspaceSettings,
        containment: Containment,
        declared: Vec<PathBuf>,
    ) -> Workspaces {
        let root = Self::root(&repo);
        let shared = planwright_os::sandbox::overlaps_any(&root, &declared);
        Workspaces {
            setup: Setup::new(repo.clone(), settings.clone()),
            repo,
            settings,
            containment,
            network: Network::default(),
            declared,
            readable: Vec::new(),
            object_format: Arc::new(OnceLock::new()),
            synced: Arc::default(),
            used: Arc::default(),
            quiet_after_candidate: containment.ends_descendants() && !shared,
            changes: SlotChanges::default(),
            limits: planwright_os::sandbox::Limits::default(),
        }
    }

    /// The directory every workspace lives in.
    pub fn root(repo: &Repo) -> PathBuf {
        repo.state_dir().join("workspaces")
    }

    /// Where slot `slot` lives.
    pub fn path(&self, slot: &str) -> PathBuf {
        Self::root(&self.repo).join(slot)
    }

    /// planwright's index of slot `slot`, out of the agent's reach.
    fn index(&self, slot: &str) -> PathBuf {
        index_of(&self.repo, slot)
    }

    /// Makes slot `slot`'s workspace hold `commit`'s files when it was
    /// never made (it has no index), so that the first attempt there finds
    /// it made and checks it rather than writing every file: preflight
    /// does this while it tries the set-up and the gates on the base. A
    /// workspace already made is left as it is, for that attempt's checks.
    pub(crate) fn warm(repo: &Repo, slot: &str, commit: &str) -> Result<(), EngineError> {
        let index = index_of(repo, slot);
        if index.is_file() {
            return Ok(());
        }
        let dir = Self::root(repo).join(slot);
        fresh_dir(&dir)?;
        create_parent(&index)?;
        setup::clear_stamp(&index.with_extension("setup"))?;
        // Should this stop half-way, the attempt's reset checks every file
        // against the index and writes what is missing.
        repo.own_tree(&index, &dir).reset_files(commit)
    }

    /// The stamp of slot `slot`'s set-up, out of the agent's reach.
    fn stamp(&self, slot: &str) -> PathBuf {
        self.index(slot).with_extension("setup")
    }

    /// The same workspaces, their agents and set-ups reaching the network
    /// as `network` says (by default through the proxy, with no more
    /// than the adapter's hosts and the registries).
    pub fn with_network(mut self, network: Network) -> Workspaces {
        self.network = network;
        self
    }

    /// The same workspaces, whose agents and set-ups are held to `limits`
    /// (`[sandbox] pids` and `memory`).
    pub fn with_limits(mut self, limits: planwright_os::sandbox::Limits) -> Workspaces {
        self.limits = limits;
        self
    }

    /// The same workspaces, whose agents and set-ups also read `readable`
    /// (`[sandbox] readable`) where their view hides it.
    pub fn with_readable(mut self, readable: Vec<PathBuf>) -> Workspaces {
        self.readable = readable;
        self
    }

    /// What an agent or set-up reads where its view hides it: the
    /// repository and `[sandbox] readable`.
    fn readable(&self) -> Vec<PathBuf> {
        let mut readable = vec![self.repo.root().to_path_buf()];
        readable.extend(self.readable.iter().cloned());
        readable
    }

    /// The agent's private temporary directory in slot `slot`, emptied.
    pub fn fresh_tmp(&self, slot: &str) -> Result<PathBuf, EngineError> {
        fresh_dir(
            &self
                .repo
                .state_dir()
                .join("tmp")
                .join(format!("agent-{slot}")),
        )
    }

    /// Gives back the space slot `slot` holds: its workspace, temporary
    /// directory, index and set-up stamp go, and its next
    /// [`Workspaces::prepare`] starts it from nothing.
    pub fn scrub(&self, slot: &str) -> Result<(), EngineError> {
        self.synced_slots().remove(slot);
        self.used_slots().remove(slot);
        remove_any(&self.index(slot))?;
        setup::clear_stamp(&self.stamp(slot))?;
        remove_any(&self.path(slot))?;
        let tmp = self
            .repo
            .state_dir()
            .join("tmp")
            .join(format!("agent-{slot}"));
        remove_any(&tmp)
    }

    /// The package-manager caches of slot `slot`'s agent and set-up.
    pub fn caches(&self, slot: &str) -> Caches {
        Caches::agent(&self.repo, slot)
    }

    /// What the agent of slot `slot` may write: its workspace, its
    /// temporary directory, its caches and the declared directories; it
    /// reaches the network as `[sandbox] agent_network` says, through the
    /// proxy to its adapter's `hosts` and `[sandbox] allow` by default.
    pub fn confine(&self, slot: &str, tmp: &Path, hosts: &[&str]) -> Confine {
        let mut writable = vec![
            self.path(slot),
            tmp.to_path_buf(),
            self.caches(slot).root().to_path_buf(),
        ];
        writable.extend(self.declared.iter().cloned());
        let mut policy = Policy {
            writable,
            readable: self.readable(),
            limits: self.limits,
            ..Policy::default()
        };
        self.network.apply(&mut policy, hosts);
        self.containment.confine(policy)
    }

    /// Makes slot `slot` a clean copy of `commit`'s files, set up, with the
    /// `[workspace] copy` files and a fresh `.git` for the agent on
    /// `branch` at `base`. Returns its path, or the verdict of a set-up that
    /// failed (logged to `log`).
    ///
    /// `commit` is `base`, or a child of it (a retry's previous change):
    /// the agent's `HEAD` and index are then `base`'s, so the change is
    /// uncommitted in its eyes, which `git status`, `git diff` and
    /// `git checkout -- FILE` see and undo.
    pub fn prepare(
        &self,
        slot: &str,
        (commit, base): (&str, &str),
        branch: &str,
        log: &Path,
        cancel: &Cancel,
    ) -> Result<Result<PathBuf, Verdict>, EngineError> {
        let dir = self.path(slot);
        let index = self.index(slot);
        let synced = self.synced_slots().remove(slot);
        let first = self.used_slots().insert(slot.to_string());
        // What the last attempt here changed, when inotify saw it all.
        let known = self.changes.last(slot, synced);
        if index.is_file() {
            // Whether synced or not: the candidate's `git add` reads a
            // file's content and executable bit, never the rest of its mode.
            restore_modes(&self.repo.own_tree(&index, &dir), &dir, known.as_deref())?;
        }
        remove_any(&dir.join(".git"))?;
        let made = !index.is_file();
        if made {
            // Nothing is known about what is there: start from nothing.
            fresh_dir(&dir)?;
            create_parent(&index)?;
            setup::clear_stamp(&self.stamp(slot))?;
        }
        if first {
            // A workspace this run did not leave: the reset below checks
            // every file against planwright's index (the agents of an
            // earlier run, or anyone since, may have changed them) and
            // writes again the ones that differ; the log says how many.
            let differed = match made {
                true => None,
                false => Some(self.repo.own_tree(&index, &dir).differing()?.len()),
            };
            crate::log::append(log, &first_use(&format!("workspace {slot}"), differed))?;
        }
        // Checksummed: the agent's `.git` gets a copy of this index.
        self.repo.own_tree(&index, &dir).reset(commit, synced)?;
        let written = self.changes.written(slot);
        // Untracked files come only from an attempt: where it wrote,
        // unless an ignore file the reset wrote hides or shows others.
        let ignores =
            |w: &[PathBuf]| (w.iter()).any(|p| p.file_name() == Some(".gitignore".as_ref()));
        match (&known, &written) {
            (Some(known), Some(w)) if !self.settings.pristine && !ignores(w) => {
                clean(
                    &self.repo.own_tree(&index, &dir),
                    Clean::UnignoredAndIgnoreFiles,
                    &dir,
                    Some(known),
                )?;
            }
            _ => self.clean(&index, &dir)?,
        }
        if self.quiet_after_candidate {
            // Only where the attempt changed or the reset wrote can a file
            // have been replaced or a folder have appeared; an ignore file
            // the reset wrote changes which folders can hold what `add -A`
            // stages: then the whole tree is read.
            let among = match (known, written) {
                (Some(mut known), Some(w)) if !ignores(&w) => {
                    known.extend(w);
                    Some(known)
                }
                _ => None,
            };
            let tree = self.repo.own_tree(&index, &dir);
            self.changes.observe(slot, &tree, &dir, among.as_deref())?;
        }
        if let Some(verdict) = self.set_up(slot, &index, commit, log, cancel)? {
            return Ok(Err(verdict));
        }
        // After every reset and set-up, so the agent starts from the
        // user's version whatever the last agent or the set-up did to it.
        self.copy_in(&dir)?;
        let agent_index = match commit == base {
            true => index,
            false => self.base_index(slot, &dir, base)?,
        };
        self.agent_git(&agent_index, &dir, base, branch)?;
        Ok(Ok(dir))
    }

    /// Runs the set-up in slot `slot` unless it last ran there with the
    /// same key; with `pristine` always, as the reset removed its result.
    fn set_up(
        &self,
        slot: &str,
        index: &Path,
        commit: &str,
        log: &Path,
        cancel: &Cancel,
    ) -> Result<Option<Verdict>, EngineError> {
        if self.setup.is_empty() {
            return Ok(None);
        }
        let dir = self.path(slot);
        let stamp = self.stamp(slot);
        let key = self.setup.key(commit)?;
        if !self.settings.pristine && setup::read_stamp(&stamp).as_deref() == Some(key.as_str()) {
            return Ok(None);
        }
        setup::clear_stamp(&stamp)?;
        // From the commit's files alone, as in a gate checkout; the copied
        // files are there because a set-up may read them (`.npmrc`).
        clean(&self.repo.own_tree(index, &dir), Clean::All, &dir, None)?;
        self.copy_in(&dir)?;
        let tmp = self.fresh_tmp(slot)?;
        let caches = self.caches(slot);
        caches.prepare()?;
        // Installing dependencies needs the registries.
        let mut policy = Policy {
            writable: vec![dir.clone(), tmp.clone(), caches.root().to_path_buf()],
            readable: self.readable(),
            limits: self.limits,
            ..Policy::default()
        };
        self.network.apply(&mut policy, SETUP_HOSTS);
        let confine = self.containment.confine(policy);
        let place = "in the agent's workspace";
        let room = setup::Room {
            dir: &dir,
            tmp: &tmp,
            caches: &caches,
            confine: &confine,
        };
        if let Some(verdict) = self.setup.run(&room, log, place, cancel)? {
            return Ok(Some(verdict));
        }
        // The set-up may have rewritten tracked files (a lock file, say).
        self.repo.own_tree(index, &dir).reset_files(commit)?;
        setup::write_stamp(&stamp, &key)?;
        Ok(None)
    }

    /// Copies each `[workspace] copy` file's content from the user's
    /// checkout to the same path in `dir`, replacing whatever is there.
    /// Nothing in the workspace is followed: a symlink or file where a
    /// directory of the path should be is removed first.
    fn copy_in(&self, dir: &Path) -> Result<(), EngineError> {
        let workspace = Dir::open(dir)?;
        for rel in &self.settings.copy {
            let source = copy_source(self.repo.root(), rel)?;
            let rel = Path::new(rel);
            if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
                workspace.create_dirs(parent)?;
            }
            workspace.remove(rel)?;
            workspace.copy_in(&source, rel)?;
        }
        Ok(())
    }

    /// Removes what is not tracked. Ignore files the agent left behind are
    /// deleted too, so only the commit's own ignore rules keep anything
    /// (otherwise a leftover could ride into the next ticket's candidate).
    /// With `pristine` no ignore rule keeps anything.
    fn clean(&self, index: &Path, dir: &Path) -> Result<(), EngineError> {
        let tree = self.repo.own_tree(index, dir);
        if self.settings.pristine {
            clean(&tree, Clean::All, dir, None)?;
            return Ok(());
        }
        // A command-line rule outranks every ignore file, so a walk deletes
        // the agent's ignore files with the rest; it does not enter what
        // the commit ignores (a set-up's `node_modules`, say). The rules of
        // one it deleted still hid files (and ignore files) from that
        // walk: walk again until a walk deletes none.
        for _ in 0..CLEAN_WALKS {
            let removed = clean(&tree, Clean::UnignoredAndIgnoreFiles, dir, None)?;
            if !removed.windows(10).any(|w| w == b".gitignore") {
                return Ok(());
            }
        }
        // Ignore files nested deeper than that: delete every untracked one
        // at once (a walk into every directory), then clean.
        for rel in tree.untracked_ignore_files()? {
            remove_any(&dir.join(rel))?;
        }
        clean(&tree, Clean::Unignored, dir, None)?;
        Ok(())
    }

    /// A new repository in `dir/.git` on `branch` at `commit`, borrowing
    /// the user's objects, with planwright's index so it starts clean. It
    /// is written as files, as `git init --template=` would write it: the
    /// repository is brand new and planwright's, and a ticket should not
    /// cost a git process that only writes a few known files.
    fn agent_git(
        &self,
        index: &Path,
        dir: &Path,
        commit: &str,
        branch: &str,
    ) -> Result<(), EngineError> {
        let format = self.object_format()?;
        let config = match format.as_str() {
            "sha1" => format!("[core]\n\trepositoryformatversion = 0\n{CORE}"),
            other => format!(
                "[core]\n\trepositoryformatversion = 1\n{CORE}[extensions]\n\tobjectformat = {other}\n"
            ),
        };
        // A set-up ran in the workspace since the last agent's `.git` was
        // removed: nothing there is followed.
        let workspace = Dir::open(dir)?;
        workspace.remove(Path::new(".git"))?;
        let dot_git = workspace.create_dirs(Path::new(".git"))?;
        dot_git.write(Path::new("config"), config.as_bytes())?;
        for empty in ["objects/pack", "refs/tags"] {
            dot_git.create_dirs(Path::new(empty))?;
        }
        let objects = self.repo.common_dir().join("objects");
        let alternates = format!("{}\n", objects.display());
        dot_git.write(Path::new("objects/info/alternates"), alternates.as_bytes())?;
        let branch_ref = format!("refs/heads/{branch}");
        dot_git.write(Path::new(&branch_ref), format!("{commit}\n").as_bytes())?;
        dot_git.write(Path::new("HEAD"), format!("ref: {branch_ref}\n").as_bytes())?;
        dot_git.copy_in(index, Path::new("index"))?;
        Ok(())
    }

    /// An index of `base`'s tree for the agent of slot `slot` whose files
    /// hold a change on it (out of the agent's reach, beside planwright's
    /// own index), refreshed against the files so that `git status` finds
    /// the unchanged ones at once.
    fn base_index(&self, slot: &str, dir: &Path, base: &str) -> Result<PathBuf, EngineError> {
        let index = self.index(slot).with_extension("base");
        let _ = std::fs::remove_file(&index);
        self.repo.own_tree(&index, dir).read_refreshed(base)?;
        Ok(index)
    }

    /// The synced slots, locked.
    fn synced_slots(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.synced.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The slots this run has prepared, locked.
    fn used_slots(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.used.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The repository's object format (`sha1`, `sha256`), asked once.
    fn object_format(&self) -> Result<String, EngineError> {
        if let Some(f) = self.object_format.get() {
            return Ok(f.clone());
        }
        let f = objects::format(&self.repo)?;
        Ok(self.object_format.get_or_init(|| f).clone())
    }

    /// The tree of slot `slot`'s files as they are now (what the agent
    /// left), written to the user's object store. Ignore rules are the
    /// workspace's; the agent's `.git` plays no part. The copied files keep
    /// their state at `base` (absent, as git ignores them) whatever the
    /// agent did to them or to the ignore rules.
    ///
    /// A path git refuses to index here is the attempt's fault: the tree is
    /// then a `scope_violation` naming it, and the slot's index no longer matches
    /// its files, so the next reset checks every file.
    ///
    /// `log` (the ticket's) gets a line saying what was staged: the paths
    /// inotify saw the attempt change, or the whole workspace and why.
    pub fn tree(
        &self,
        slot: &str,
        base: &str,
        log: &Path,
    ) -> Result<Result<String, Failure>, EngineError> {
        let dir = self.path(slot);
        let index = self.index(slot);
        // The next reset writes the index whole, checksummed, before the
        // next agent gets a copy.
        let tree = self.repo.own_tree_unhashed(&index, &dir);
        // From the paths the attempt changed when inotify saw them all;
        // should git refuse one, from the whole tree, whose refusal says why.
        let staging = match self.quiet_after_candidate {
            true => self.changes.changed(slot),
            false => Staging::Whole(NOT_QUIET.into()),
        };
        let staging = match staging {
            Staging::Paths(paths) => stage(&tree, &dir, paths)?,
            whole => whole,
        };
        crate::log::append(log, &staged_line(&staging))?;
        let added = match staging {
            Staging::Paths(paths) => {
                self.changes.staged(slot, Some(paths));
                Ok(())
            }
            Staging::Whole(_) => {
                self.changes.staged(slot, None);
                tree.add_all()?
            }
        };
        if let Err(refused) = added {
            return match refused_among(tree.untracked_unignored()?) {
                Some(f) => Ok(Err(f)),
                None => match git_refusal(&refused.stderr) {
                    Some(f) => Ok(Err(f)),
                    None => Err(refused.error.into()),
                },
            };
        }
        if !self.settings.copy.is_empty() {
            tree.unstage(base, &self.settings.copy)?;
        }
        // A name git indexes here but refuses where `core.protectHFS` or
        // `core.protectNTFS` is on (git's defaults on macOS and Windows) is
        // refused by the scope check, which reads the paths the candidate
        // creates from its diff against the base (`verify::check_scope`).
        let tree = tree.write_tree()?;
        if self.quiet_after_candidate {
            self.synced_slots().insert(slot.to_string());
        }
        Ok(Ok(tree))
    }
}

/// Why a candidate is staged from the whole workspace where inotify is
/// not used.
const NOT_QUIET: &str = "the agent's processes may outlive it here (no PID namespace of \
     its own, or a `[sandbox] writable` folder holds the workspaces)";

/// The ticket log's line saying what a candidate was staged from.
fn staged_line(staging: &Staging) -> String {
    match staging {
        Staging::Paths(paths) => format!(
            "-- candidate: `git add -A` of the {} inotify saw the attempt change\n",
            planwright_plan::words::count(paths.len(), "path")
        ),
        Staging::Whole(why) => {
            format!("-- candidate: `git add -A` of the whole workspace: {why}\n")
        }
    }
}

/// planwright's index of `repo`'s workspace of slot `slot`.
fn index_of(repo: &Repo, slot: &str) -> PathBuf {
    repo.state_dir()
        .join("index")
        .join(format!("workspace-{slot}"))
}

/// The first of `paths` git refuses to index.
fn refused_among(paths: Vec<Vec<u8>>) -> Option<Failure> {
    paths
        .iter()
        .find_map(|path| Some((path, names::refused(path)?)))
        .map(|(path, why)| names::bad_name(&String::from_utf8_lossy(path), why))
}

/// The path of git's own `error: invalid path '...'`, for a refusal the
/// rules of [`names`] do not know.
fn git_refusal(stderr: &[u8]) -> Option<Failure> {
    let text = String::from_utf8_lossy(stderr);
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("error: invalid path '")?.strip_suffix('\''))?;
    Some(names::bad_name(path, "git refuses to index this path"))
}

/// Walks a workspace's clean makes before it deletes every untracked
/// ignore file at once: one when the agent left none, two when it left
/// one (a tool's cache directory with its own `.gitignore`, say).
const CLEAN_WALKS: usize = 3;

/// The rest of the `[core]` section `git init` writes on Linux.
const CORE: &str = "\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::files::again_as_an_ordinary_user;
    use crate::git::testing::{committed, git};
    use std::os::unix::fs::PermissionsExt;

    /// Workspaces of `repo` with the default settings and no sandbox, with
    /// a log in `dir` and a cancel flag for their `prepare`.
    fn unconfined(repo: Repo, dir: &Path) -> (Workspaces, PathBuf, Cancel) {
        let spaces = Workspaces::new(
            repo,
            WorkspaceSettings::default(),
            Containment::none(),
            vec![],
        );
        (spaces, dir.join("log"), Cancel::default())
    }

    /// An agent that shuts a tracked folder, a tracked file and its
    /// workspace itself (`chmod 000`, a sticky bit), and folders of its own,
    /// leaves the next ticket of its slot the modes git writes, the
    /// commit's content and nothing else. Run as root, the test runs again
    /// as an ordinary user, for whom a folder of mode `0000` stops git's
    /// reset and clean.
    #[test]
    fn the_next_prepare_undoes_an_agents_chmod_of_tracked_folders_and_files() {
        again_as_an_ordinary_user(
            "exec::workspace::tests::\
             the_next_prepare_undoes_an_agents_chmod_of_tracked_folders_and_files",
        );
        let tmp = tempfile::tempdir().unwrap();
        let files = [("sub/deep/a", "a\n".to_string()), ("b", "b\n".to_string())];
        let (repo, commit) = committed(tmp.path(), &files);
        let (spaces, log, cancel) = unconfined(repo, tmp.path());
        let prepare = || {
            spaces
                .prepare("s", (&commit, &commit), "b", &log, &cancel)
                .unwrap()
                .unwrap()
        };
        let dir = prepare();
        std::fs::write(dir.join("sub/deep/stray"), "x").unwrap();
        std::fs::create_dir_all(dir.join("junk/inner")).unwrap();
        let shut = |rel: &str, mode: u32| {
            let perms = std::fs::Permissions::from_mode(mode);
            std::fs::set_permissions(dir.join(rel), perms).unwrap();
        };
        for rel in ["sub/deep/a", "sub/deep", "sub", "junk/inner", "junk"] {
            shut(rel, 0o000);
        }
        shut("", 0o1700);
        assert_eq!(prepare(), dir);
        let umask = planwright_os::process::umask();
        let mode = |rel: &str| {
            let meta = std::fs::symlink_metadata(dir.join(rel)).unwrap();
            meta.permissions().mode() & 0o7777
        };
        let (d, f) = (0o777 & !umask, 0o666 & !umask);
        let modes = ["", "sub", "sub/deep", "sub/deep/a"].map(mode);
        assert_eq!(modes, [d, d, d, f]);
        assert_eq!(
            std::fs::read_to_string(dir.join("sub/deep/a")).unwrap(),
            "a\n"
        );
        assert!(!dir.join("sub/deep/stray").exists());
        assert!(!dir.join("junk").exists());
    }

    /// Ignore files an agent left, nested too, are deleted with what they
    /// hid; what the commit's own rules ignore stays, ignore files in it
    /// included, when the agent left none.
    #[test]
    fn a_reset_deletes_the_agents_ignore_files_and_keeps_what_the_commit_ignores() {
        let tmp = tempfile::tempdir().unwrap();
        let files = [
            (".gitignore", "cache/\n".to_string()),
            ("sub/a", "a\n".to_string()),
        ];
        let (repo, commit) = committed(tmp.path(), &files);
        let (spaces, log, cancel) = unconfined(repo, tmp.path());
        let prepare = || {
            spaces
                .prepare("s", (&commit, &commit), "b", &log, &cancel)
                .unwrap()
                .unwrap()
        };
        let dir = prepare();
        let leave = |files: &[(&str, &str)]| {
            for (rel, text) in files {
                let path = dir.join(rel);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
        };
        let kept = [("cache/x/.gitignore", "y\n"), ("cache/x/build", "b\n")];
        leave(&kept);
        leave(&[("loose", "l\n")]);
        prepare();
        for (rel, _) in kept {
            assert!(dir.join(rel).is_file(), "{rel} is the commit's to ignore");
        }
        assert!(!dir.join("loose").exists());

        // Each set alone: an ignore file that hides itself, one in a new
        // directory, one that hides another, and ignore files nested
        // deeper than the clean walks.
        let deep = [
            ("d/.gitignore", "e/\n"),
            ("d/e/.gitignore", "f/\n"),
            ("d/e/f/.gitignore", "g/\n"),
            ("d/e/f/g/.gitignore", "*\n"),
            ("d/e/f/g/evil", "e\n"),
        ];
        let hidden: [&[(&str, &str)]; 4] = [
            &[("sub/.gitignore", "*\n"), ("sub/evil", "e\n")],
            &[("new/.gitignore", "*\n"), ("new/evil", "e\n")],
            &[
                ("a/.gitignore", "b/\n"),
                ("a/b/.gitignore", "*\n"),
                ("a/b/evil", "e\n"),
            ],
            &deep,
        ];
        for set in hidden {
            leave(set);
            prepare();
            for (rel, _) in set {
                assert!(!dir.join(rel).exists(), "{rel} is gone");
            }
        }
        assert!(dir.join("sub/a").is_file());
        assert!(dir.join("cache/x/build").is_file());
    }

    /// After a candidate, the next reset moves the files from what the
    /// agent left to the next commit, whichever way they differ; it checks
    /// every file when an untracked file that no rule ignores is in the
    /// way, or when a `[sandbox] writable` directory holds the workspaces.
    #[test]
    fn a_reset_after_a_candidate_leaves_exactly_the_next_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let files: Vec<(&str, String)> = [".gitignore", "a", "b", "d", "sub/c"]
            .into_iter()
            .map(|f| (f, format!("{f} 1\n")))
            .collect();
        let (repo, first) = committed(tmp.path(), &files);
        let root = tmp.path().join("repo");
        let git = |args: &[&str]| git(&root, args);
        for (rel, text) in [("a", "a 2\n"), ("e", "e 2\n"), (".env", "env 2\n")] {
            std::fs::write(root.join(rel), text).unwrap();
        }
        git(&["rm", "-q", "b"]);
        git(&["add", "-A"]);
        git(&["commit", "-qm", "second"]);
        let second = git(&["rev-parse", "HEAD"]);
        // Processes contained (in namespaces), writes not: as `mode = "off"`.
        let confined = Containment::new(planwright_os::sandbox::Mode::Off).unwrap();
        assert!(
            confined.ends_descendants(),
            "the kernel has no user namespaces"
        );
        let plain = Workspaces::new(repo.clone(), WorkspaceSettings::default(), confined, vec![]);
        let copying = WorkspaceSettings {
            copy: vec![".env".into()],
            ..WorkspaceSettings::default()
        };
        let copying = Workspaces::new(repo.clone(), copying, confined, vec![]);
        let others = vec![repo.state_dir()];
        let shared = Workspaces::new(repo, WorkspaceSettings::default(), confined, others);
        let (log, cancel) = (tmp.path().join("log"), Cancel::default());
        let prepare = |spaces: &Workspaces, commit: &str| {
            spaces
                .prepare("s", (commit, commit), "b", &log, &cancel)
                .unwrap()
                .unwrap()
        };
        let expect_second = |dir: &Path| {
            let files = [
                (".env", "env 2\n"),
                (".gitignore", ".gitignore 1\n"),
                ("a", "a 2\n"),
                ("d", "d 1\n"),
                ("e", "e 2\n"),
                ("sub/c", "sub/c 1\n"),
            ];
            for (rel, text) in files {
                assert_eq!(
                    std::fs::read_to_string(dir.join(rel)).unwrap(),
                    text,
                    "{rel}"
                );
            }
            assert!(!dir.join("b").exists() && !dir.join("new").exists());
            // The agent's own git, which finds the workspace's repository.
            let status = crate::git::testing::git(dir, &["status", "--porcelain"]);
            assert_eq!(status, "", "the agent's git sees the commit");
        };

        let dir = prepare(&plain, &first);
        std::fs::write(dir.join("d"), "agent\n").unwrap();
        std::fs::write(dir.join("new"), "agent\n").unwrap();
        std::fs::remove_file(dir.join("sub/c")).unwrap();
        plain.tree("s", &first, &log).unwrap().unwrap();
        expect_second(&prepare(&plain, &second));

        // The agent hid `e` from its candidate with an ignore file of its own.
        let dir = prepare(&plain, &first);
        std::fs::write(dir.join(".gitignore"), "e\n").unwrap();
        std::fs::write(dir.join("e"), "agent\n").unwrap();
        plain.tree("s", &first, &log).unwrap().unwrap();
        expect_second(&prepare(&plain, &second));

        // The copied `.env` is kept out of the candidate but stays in the
        // workspace, where the second commit tracks it.
        let dir = prepare(&copying, &first);
        assert!(dir.join(".env").is_file());
        copying.tree("s", &first, &log).unwrap().unwrap();
        expect_second(&prepare(&copying, &second));

        // Another agent may write here after the candidate: `d` is the same
        // in both commits, and only a whole reset sees the change.
        let dir = prepare(&shared, &first);
        shared.tree("s", &first, &log).unwrap().unwrap();
        std::fs::write(dir.join("d"), "another agent\n").unwrap();
        expect_second(&prepare(&shared, &second));
    }

    /// The last 20 bytes of an index: its SHA-1, or zeros when skipped.
    fn checksum(index: &Path) -> Vec<u8> {
        let bytes = std::fs::read(index).unwrap();
        bytes[bytes.len() - 20..].to_vec()
    }

    /// planwright skips the checksum of the index it builds a candidate
    /// with, but the agent's `.git` always gets an index with one (as any
    /// git tool, such as libgit2, may check it), whatever the last
    /// ticket's candidate left.
    #[test]
    fn the_agent_gets_a_checksummed_index_after_an_unhashed_candidate() {
        let tmp = tempfile::tempdir().unwrap();
        let (repo, commit) = committed(tmp.path(), &[("a", "a\n".to_string())]);
        let (spaces, log, cancel) = unconfined(repo, tmp.path());
        let prepare = || {
            let dir = spaces
                .prepare("s", (&commit, &commit), "b", &log, &cancel)
                .unwrap()
                .unwrap();
            checksum(&dir.join(".git/index"))
        };
        assert_ne!(prepare(), [0; 20]);
        std::fs::write(spaces.path("s").join("new"), "new\n").unwrap();
        spaces.tree("s", &commit, &log).unwrap().unwrap();
        assert_eq!(
            checksum(&spaces.index("s")),
            [0; 20],
            "the candidate's index skips it"
        );
        assert_ne!(prepare(), [0; 20]);
    }
}
