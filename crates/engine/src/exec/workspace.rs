//! The agents' workspaces: one directory per job slot under
//! `.planwright/workspaces/<slot>`, reset to a new commit between tickets
//! instead of made anew.
//!
//! A workspace is not the user's repository. planwright keeps its files
//! with its own git directory (`.planwright/git`, see
//! [`Repo::own_git`]) and an index per slot kept outside the workspace, and
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
use crate::exec::names;
use crate::exec::network::{Network, SETUP_HOSTS};
use crate::exec::setup::{self, Setup};
use crate::git::repo::Repo;
use crate::git::Git;
use crate::model::{Failure, FailureKind, Verdict};
use planwright_os::beneath::{Dir, Kind};
use planwright_os::process::Cancel;
use planwright_os::sandbox::{Confine, Containment, Policy};
use std::collections::{BTreeSet, HashSet};
use std::os::unix::ffi::OsStrExt;
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
    /// Whether a workspace stays as its candidate left it: the agent's
    /// processes end with its PID namespace, and no other agent may write
    /// there (no `[sandbox] writable` directory holds the workspaces).
    quiet_after_candidate: bool,
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
            quiet_after_candidate: containment.ends_descendants() && !shared,
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
        self.repo
            .state_dir()
            .join("index")
            .join(format!("workspace-{slot}"))
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
        if index.is_file() {
            // Whether synced or not: the candidate's `git add` reads a
            // file's content and executable bit, never the rest of its mode.
            restore_modes(self.repo.own_git(&index, &dir), &dir)?;
        }
        remove_any(&dir.join(".git"))?;
        if !index.is_file() {
            // Nothing is known about what is there: start from nothing.
            fresh_dir(&dir)?;
            create_parent(&index)?;
            setup::clear_stamp(&self.stamp(slot))?;
        }
        // Checksummed: the agent's `.git` gets a copy of this index.
        reset(|| self.repo.own_git(&index, &dir), &index, commit, synced)?;
        self.clean(&index, &dir)?;
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
        let clean = || {
            self.repo
                .own_git(index, &dir)
                .args(["clean", "-q", "-ffdx"])
        };
        git_clean(clean, &dir)?;
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
        reset_files(|| self.repo.own_git(index, &dir), index, commit)?;
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
        let git = || self.repo.own_git(index, dir);
        if self.settings.pristine {
            git_clean(|| git().args(["clean", "-q", "-ffdx"]), dir)?;
            return Ok(());
        }
        // A command-line rule outranks every ignore file, so a walk deletes
        // the agent's ignore files with the rest; it does not enter what
        // the commit ignores (a set-up's `node_modules`, say). The rules of
        // one it deleted still hid files (and ignore files) from that
        // walk: walk again until a walk deletes none.
        for _ in 0..CLEAN_WALKS {
            let removed = git_clean(|| git().args(["clean", "-ffd", "-e", "!.gitignore"]), dir)?;
            if !removed.stdout.windows(10).any(|w| w == b".gitignore") {
                return Ok(());
            }
        }
        // Ignore files nested deeper than that: delete every untracked one
        // at once (a walk into every directory), then clean.
        let strays = git()
            .args(["ls-files", "--others", "-z", "--", ":(glob)**/.gitignore"])
            .output()?;
        for rel in strays.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let path = dir.join(String::from_utf8_lossy(rel).as_ref());
            remove_any(&path)?;
        }
        git_clean(|| git().args(["clean", "-q", "-ffd"]), dir)?;
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
        let git = || self.repo.own_git(&index, dir);
        git().args(["read-tree", base]).output()?;
        // Changed files make `--refresh` exit 1: that is the point.
        git().args(["update-index", "-q", "--refresh"]).raw()?;
        Ok(index)
    }

    /// The synced slots, locked.
    fn synced_slots(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.synced.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The repository's object format (`sha1`, `sha256`), asked once.
    fn object_format(&self) -> Result<String, EngineError> {
        if let Some(f) = self.object_format.get() {
            return Ok(f.clone());
        }
        let f = self
            .repo
            .git()
            .args(["rev-parse", "--show-object-format"])
            .text()?;
        Ok(self.object_format.get_or_init(|| f).clone())
    }

    /// The tree of slot `slot`'s files as they are now (what the agent
    /// left), written to the user's object store. Ignore rules are the
    /// workspace's; the agent's `.git` plays no part. The copied files keep
    /// their state at `base` (absent, as git ignores them) whatever the
    /// agent did to them or to the ignore rules.
    ///
    /// A path git refuses to index is the attempt's fault: the tree is then
    /// a `scope_violation` naming it, and the slot's index no longer matches
    /// its files, so the next reset checks every file.
    pub fn tree(&self, slot: &str, base: &str) -> Result<Result<String, Failure>, EngineError> {
        let dir = self.path(slot);
        let index = self.index(slot);
        // The next reset writes the index whole, checksummed, before the
        // next agent gets a copy.
        let git = || self.repo.own_git_unhashed(&index, &dir);
        let add = git().args(["add", "-A"]);
        let out = add.raw()?;
        if !out.status.success() {
            return match refused_among(git().args(["ls-files", "-z", "-o", "--exclude-standard"]))?
            {
                Some(f) => Ok(Err(f)),
                None => match git_refusal(&out.stderr) {
                    Some(f) => Ok(Err(f)),
                    None => Err(add.failure(&out).into()),
                },
            };
        }
        if !self.settings.copy.is_empty() {
            let copied = self
                .settings
                .copy
                .iter()
                .map(|rel| format!(":(literal){rel}"));
            git()
                .args(["reset", "-q", base, "--"])
                .args(copied)
                .output()?;
        }
        // Every entry came from the commit's tree or was just written by
        // `add`: checking that each object exists would only cost a lookup
        // for every file of each directory the agent changed, a `stat` each
        // while the objects are loose.
        // Names git indexes here but refuses where `core.protectHFS` or
        // `core.protectNTFS` is on (git's defaults on macOS and Windows).
        let added = git().args([
            "diff-index",
            "--cached",
            "-z",
            "--name-only",
            "--no-renames",
        ]);
        if let Some(f) = refused_among(added.args(["--diff-filter=A", base, "--"]))? {
            return Ok(Err(f));
        }
        let tree = git().args(["write-tree", "--missing-ok"]).text()?;
        if self.quiet_after_candidate {
            self.synced_slots().insert(slot.to_string());
        }
        Ok(Ok(tree))
    }
}

/// The first path `list` prints (NUL-separated) that git refuses to index.
fn refused_among(list: Git) -> Result<Option<Failure>, EngineError> {
    let out = list.output()?;
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .find_map(|path| Some((path, names::refused(path)?)))
        .map(|(path, why)| bad_name(&String::from_utf8_lossy(path), why)))
}

/// The path of git's own `error: invalid path '...'`, for a refusal the
/// rules of [`names`] do not know.
fn git_refusal(stderr: &[u8]) -> Option<Failure> {
    let text = String::from_utf8_lossy(stderr);
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("error: invalid path '")?.strip_suffix('\''))?;
    Some(bad_name(path, "git refuses to index this path"))
}

fn bad_name(path: &str, why: &str) -> Failure {
    Failure::new(FailureKind::ScopeViolation, format!("`{path}`: {why}")).with_evidence(path)
}

/// Walks a workspace's clean makes before it deletes every untracked
/// ignore file at once: one when the agent left none, two when it left
/// one (a tool's cache directory with its own `.gitignore`, say).
const CLEAN_WALKS: usize = 3;

/// The rest of the `[core]` section `git init` writes on Linux.
const CORE: &str = "\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";

/// Makes the tracked files of a work tree those of `commit`. When its
/// index is `synced` with them, a one-way merge checks and writes only the
/// files that differ between the index and `commit`; it refuses, and
/// leaves all as it was, when a file it would write is in the way (one
/// the index does not track, say), and then every file is checked. Line
/// endings and the like follow `commit`'s attributes, never a
/// `.gitattributes` an agent or a gate left in the work tree.
pub(crate) fn reset(
    git: impl Fn() -> Git,
    index: &Path,
    commit: &str,
    synced: bool,
) -> Result<(), EngineError> {
    let merge =
        git()
            .arg(format!("--attr-source={commit}"))
            .args(["read-tree", "-m", "-u", commit]);
    if synced && merge.succeeds()? {
        return Ok(());
    }
    reset_files(git, index, commit)
}

/// Makes the tracked files of the work tree of `git` (planwright's git on
/// it, with `index` as its index) those of `commit`. `read-tree --reset
/// -u` moves the index and, for an entry it keeps, checks the file against
/// the index's stat data (and its content when the stat data cannot tell)
/// and writes it back when an agent or a gate changed it: modified,
/// deleted, made executable, turned into a symlink or a directory, or
/// moved under a symlinked directory. Attributes are `commit`'s (see
/// [`reset`]).
pub(crate) fn reset_files(
    git: impl Fn() -> Git,
    index: &Path,
    commit: &str,
) -> Result<(), EngineError> {
    let git = || git().arg(format!("--attr-source={commit}"));
    if index.is_file() {
        git()
            .args(["read-tree", "--reset", "-u", commit])
            .output()?;
    } else {
        git().args(["read-tree", commit]).output()?;
        // `-u` records each file's stat in the index: without it every file
        // would look changed to the next reset and be written again.
        git().args(["checkout-index", "-a", "-f", "-u"]).output()?;
    }
    Ok(())
}

/// Gives the work tree `dir` and each tracked directory in it the mode
/// git makes a directory with (`0777` less the umask), from the top down,
/// and removes each tracked regular file whose permission bits are not
/// those git writes (`0666`, or `0777` for an executable, less the umask),
/// for the next reset to write it anew; `git` is planwright's git on
/// `dir`. git's own check sees only a file's executable bit and no
/// directory's mode, so a test file or folder an agent or a gate made
/// unreadable (`chmod 000`) would stay so for every later one, and a
/// folder no one may enter stops the reset when planwright is not root.
/// A file may be a hard link to one outside, so it is written anew, never
/// changed in place; a directory cannot be. Nothing in `dir` is followed.
pub(crate) fn restore_modes(git: Git, dir: &Path) -> Result<(), EngineError> {
    let out = git.args(["ls-files", "-s", "-z"]).output()?;
    let umask = planwright_os::process::umask();
    let mut files = Vec::new();
    // Sorted by component: a directory comes before what it holds.
    let mut dirs = BTreeSet::from([PathBuf::new()]);
    for record in out.stdout.split(|b| *b == 0) {
        let Some(tab) = record.iter().position(|b| *b == b'\t') else {
            continue;
        };
        let rel = Path::new(std::ffi::OsStr::from_bytes(&record[tab + 1..]));
        dirs.extend(rel.ancestors().skip(1).map(Path::to_path_buf));
        let want = match record.get(..6) {
            Some(b"100644") => 0o666 & !umask,
            Some(b"100755") => 0o777 & !umask,
            _ => continue,
        };
        files.push((rel, want));
    }
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Ok(());
    };
    let above = Dir::open(parent)?;
    let want = 0o777 & !umask;
    for rel in dirs {
        let rel = Path::new(name).join(rel);
        // Not a directory any more: the reset's to put right.
        let found = above.entry(&rel).ok().flatten();
        if found.is_some_and(|e| e.kind == Kind::Dir && e.mode != want) {
            above.set_dir_mode(&rel, want)?;
        }
    }
    let root = Dir::open(dir)?;
    for (rel, want) in files {
        // A path through a symlink is the reset's to put right.
        let found = root.entry(rel).ok().flatten();
        if found.is_some_and(|e| e.kind == Kind::File && e.mode != want) {
            root.remove(rel)?;
        }
    }
    Ok(())
}

/// The real file `[workspace] copy` entry `rel` names in the user's
/// checkout at `root`: it must exist and be a regular file, and a symlink
/// is followed only when it stays inside the repository.
pub(crate) fn copy_source(root: &Path, rel: &str) -> Result<PathBuf, EngineError> {
    let refuse = |why: String| {
        EngineError::Settings(format!(
            "`[workspace] copy` in `planwright.toml` names `{rel}`, {why}; \
             put the file itself in your checkout, or remove it from `[workspace] copy`"
        ))
    };
    let path = root.join(rel);
    let real = match path.canonicalize() {
        Ok(real) => real,
        Err(_) if path.symlink_metadata().is_ok() => {
            return Err(refuse("a symlink whose target does not exist".to_string()))
        }
        Err(_) => {
            return Err(refuse(format!(
                "which is not in your checkout `{}`",
                root.display()
            )))
        }
    };
    let real_root = root.canonicalize().map_err(|e| EngineError::io(root, e))?;
    if !real.starts_with(&real_root) {
        return Err(refuse(format!(
            "a symlink to `{}`, outside the repository (planwright copies nothing from outside it)",
            real.display()
        )));
    }
    if !real.is_file() {
        return Err(refuse("which is not a file".to_string()));
    }
    Ok(real)
}

/// `path` emptied (created when missing).
pub(crate) fn fresh_dir(path: &Path) -> Result<PathBuf, EngineError> {
    remove_any(path)?;
    std::fs::create_dir_all(path).map_err(|e| EngineError::io(path, e))?;
    Ok(path.to_path_buf())
}

/// Removes whatever is at `path` (file, symlink or directory), never
/// following a symlink.
pub(crate) fn remove_any(path: &Path) -> Result<(), EngineError> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.is_dir() {
        return std::fs::remove_file(path).map_err(|e| EngineError::io(path, e));
    }
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            open_up(path)?;
            std::fs::remove_dir_all(path).map_err(|e| EngineError::io(path, e))
        }
        done => done.map_err(|e| EngineError::io(path, e)),
    }
}

/// Runs `clean`, a `git clean` of the work tree `dir`. git cannot enter a
/// folder no one may open or search (an agent's or a gate's `chmod 000`;
/// root can), and then fails: the folders it names are opened up (see
/// [`open_up_beneath`]) and it runs once more. Its output.
pub(crate) fn git_clean(
    clean: impl Fn() -> Git,
    dir: &Path,
) -> Result<std::process::Output, EngineError> {
    let out = clean().raw()?;
    if out.status.success() {
        return Ok(out);
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let shut: Vec<&str> = said
        .lines()
        .filter_map(|l| l.strip_prefix("warning: could not open directory '"))
        .filter_map(|l| l.rsplit_once("': ").map(|(rel, _)| rel))
        .collect();
    if shut.is_empty() {
        return Err(clean().failure(&out).into());
    }
    let root = Dir::open(dir)?;
    for rel in shut {
        open_up_beneath(&root, Path::new(rel.trim_end_matches('/')))?;
    }
    Ok(clean().output()?)
}

/// Lets the owner into every directory below `dir`, so that it can be
/// removed: a gate or an agent may leave one it made unreadable, and
/// overlayfs leaves its work directory so.
fn open_up(dir: &Path) -> Result<(), EngineError> {
    let (Some(up), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Ok(());
    };
    Ok(open_up_beneath(&Dir::open(up)?, Path::new(name))?)
}

/// Gives the owner every right on the directory `rel` below `root` and on
/// each directory in it, from the top down, following nothing.
fn open_up_beneath(root: &Dir, rel: &Path) -> Result<(), planwright_os::beneath::BeneathError> {
    let mut todo = vec![rel.to_path_buf()];
    while let Some(rel) = todo.pop() {
        let Some(entry) = root.entry(&rel)?.filter(|e| e.kind == Kind::Dir) else {
            continue;
        };
        root.set_dir_mode(&rel, entry.mode | 0o700)?;
        todo.extend(root.dir(&rel)?.names()?.into_iter().map(|n| rel.join(n)));
    }
    Ok(())
}

/// Creates the directory `path` goes in.
pub(crate) fn create_parent(path: &Path) -> Result<(), EngineError> {
    match path.parent() {
        Some(dir) => std::fs::create_dir_all(dir).map_err(|e| EngineError::io(dir, e)),
        None => Ok(()),
    }
}

/// For tests of what an ordinary user meets (root enters any folder):
/// when this process is root, runs the test `name` of this test binary
/// again as uid and gid 65534 (through `setpriv`), with `/tmp` for its
/// temporary directories, and fails when that fails.
#[cfg(test)]
pub(crate) fn again_as_an_ordinary_user(name: &str) {
    let me = std::fs::metadata("/proc/self").expect("/proc is mounted");
    if std::os::unix::fs::MetadataExt::uid(&me) != 0 {
        return;
    }
    let test = std::env::current_exe().unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&test)
        .args(["--exact", name, "--test-threads=1"])
        .env("TMPDIR", "/tmp")
        .env("HOME", "/tmp")
        .output()
        .expect("root runs the test again as an ordinary user with `setpriv`");
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "as uid 65534: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    /// A directory its owner made unreadable (as gates may, and overlayfs
    /// does with its work directory) is opened up for removal; `remove_any`
    /// does so when removing fails (only for a user other than root).
    #[test]
    fn directories_their_owner_cannot_enter_are_opened_up_for_removal() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("upper");
        let (shut, inner) = (top.join("shut"), top.join("shut/inner"));
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(inner.join("f"), "x").unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o755)).unwrap();
        symlink(&outside, top.join("link")).unwrap();
        for dir in [&inner, &shut] {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o000)).unwrap();
        }
        open_up(&top).unwrap();
        for dir in [&top, &shut, &inner] {
            let mode = std::fs::metadata(dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o700, 0o700, "{}", dir.display());
        }
        let mode = std::fs::metadata(&outside).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755, "a symlink is not followed");
        remove_any(&top).unwrap();
        assert!(!top.exists());
    }

    /// A repository in `dir/repo` with `files` committed, planwright's own
    /// git directory made, and the commit.
    fn committed(dir: &Path, files: &[(&str, String)]) -> (Repo, String) {
        let root = dir.join("repo");
        for (rel, text) in files {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        crate::git::Git::outside()
            .args(["init", "-q"])
            .arg(&root)
            .output()
            .unwrap();
        let git = |args: &[&str]| {
            crate::git::Git::with_tree(root.join(".git"), &root)
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .text()
                .unwrap()
        };
        git(&["add", "-A"]);
        git(&["commit", "-qm", "base"]);
        let commit = git(&["rev-parse", "HEAD"]);
        let repo = Repo::open(&root).unwrap();
        repo.ensure_own_git(&[]).unwrap();
        (repo, commit)
    }

    /// What an agent or a gate may do to tracked files; one reset undoes all.
    #[test]
    fn a_reset_writes_back_every_tracked_file_that_was_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let files: Vec<(&str, String)> = ["a", "b", "c", "d", "e", "src/x"]
            .into_iter()
            .map(|f| (f, format!("hello {f}\n")))
            .collect();
        let (repo, commit) = committed(tmp.path(), &files);
        let (index, dir) = (tmp.path().join("index"), tmp.path().join("slot"));
        std::fs::create_dir_all(&dir).unwrap();
        reset_files(|| repo.own_git(&index, &dir), &index, &commit).unwrap();

        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        // Same size, same second: only the content tells.
        std::fs::write(dir.join("a"), "HELLO a\n").unwrap();
        std::fs::set_permissions(dir.join("b"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::remove_file(dir.join("c")).unwrap();
        std::fs::remove_file(dir.join("d")).unwrap();
        std::fs::create_dir_all(dir.join("d")).unwrap();
        std::fs::write(dir.join("d/inner"), "x").unwrap();
        std::fs::remove_file(dir.join("e")).unwrap();
        symlink("/etc/passwd", dir.join("e")).unwrap();
        std::fs::remove_dir_all(dir.join("src")).unwrap();
        symlink(&outside, dir.join("src")).unwrap();

        reset_files(|| repo.own_git(&index, &dir), &index, &commit).unwrap();
        for f in ["a", "b", "c", "d", "e", "src/x"] {
            let meta = std::fs::symlink_metadata(dir.join(f)).unwrap();
            assert!(meta.is_file(), "{f} is a file again");
            assert_eq!(
                meta.permissions().mode() & 0o111,
                0,
                "{f} is not executable"
            );
            let text = std::fs::read_to_string(dir.join(f)).unwrap();
            assert_eq!(text, format!("hello {f}\n"));
        }
        assert!(std::fs::symlink_metadata(dir.join("src")).unwrap().is_dir());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

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

    /// A `.gitattributes` left in the work tree does not decide how the
    /// next reset writes files: the commit's attributes do.
    #[test]
    fn a_reset_writes_files_by_the_commits_attributes_not_the_work_trees() {
        let tmp = tempfile::tempdir().unwrap();
        let (repo, commit) = committed(tmp.path(), &[("a", "one\ntwo\n".to_string())]);
        let (index, dir) = (tmp.path().join("index"), tmp.path().join("slot"));
        std::fs::create_dir_all(&dir).unwrap();
        reset_files(|| repo.own_git(&index, &dir), &index, &commit).unwrap();
        std::fs::write(dir.join(".gitattributes"), "* text eol=crlf\n").unwrap();
        std::fs::remove_file(dir.join("a")).unwrap();
        reset_files(|| repo.own_git(&index, &dir), &index, &commit).unwrap();
        assert_eq!(std::fs::read(dir.join("a")).unwrap(), b"one\ntwo\n");
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
        let git = |args: &[&str]| {
            Git::with_tree(root.join(".git"), &root)
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .text()
                .unwrap()
        };
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
            let status = Git::find(dir)
                .args(["status", "--porcelain"])
                .text()
                .unwrap();
            assert_eq!(status, "", "the agent's git sees the commit");
        };

        let dir = prepare(&plain, &first);
        std::fs::write(dir.join("d"), "agent\n").unwrap();
        std::fs::write(dir.join("new"), "agent\n").unwrap();
        std::fs::remove_file(dir.join("sub/c")).unwrap();
        plain.tree("s", &first).unwrap().unwrap();
        expect_second(&prepare(&plain, &second));

        // The agent hid `e` from its candidate with an ignore file of its own.
        let dir = prepare(&plain, &first);
        std::fs::write(dir.join(".gitignore"), "e\n").unwrap();
        std::fs::write(dir.join("e"), "agent\n").unwrap();
        plain.tree("s", &first).unwrap().unwrap();
        expect_second(&prepare(&plain, &second));

        // The copied `.env` is kept out of the candidate but stays in the
        // workspace, where the second commit tracks it.
        let dir = prepare(&copying, &first);
        assert!(dir.join(".env").is_file());
        copying.tree("s", &first).unwrap().unwrap();
        expect_second(&prepare(&copying, &second));

        // Another agent may write here after the candidate: `d` is the same
        // in both commits, and only a whole reset sees the change.
        let dir = prepare(&shared, &first);
        shared.tree("s", &first).unwrap().unwrap();
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
        spaces.tree("s", &commit).unwrap().unwrap();
        assert_eq!(
            checksum(&spaces.index("s")),
            [0; 20],
            "the candidate's index skips it"
        );
        assert_ne!(prepare(), [0; 20]);
    }
}
