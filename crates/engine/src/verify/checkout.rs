//! Gate checkouts: gates and counterfactual tests run where no agent ever
//! was. Each is a planwright-owned directory, `<name>` (one per job slot,
//! and `merge` for the merged tree) in the repository's folder of the
//! user's cache (see [`checkouts_root`]), holding the tracked content of
//! the commit under test, written with planwright's own git directory and
//! index (see [`Repo::own_tree`]).
//!
//! They live outside the repository because tools find things by walking
//! up from where they run: Node resolves `node_modules` in every parent
//! folder, Cargo looks for a workspace and `.cargo/config.toml` above, pytest
//! for its `rootdir`. Below the user's checkout, a gate would find the
//! user's own `node_modules` and pass by accident where a fresh clone
//! fails.
//!
//! The project's set-up step (`[workspace] setup`, such as `npm ci`, see
//! [`crate::exec::setup`]) runs here, by planwright, sandboxed, and its result is
//! kept for the next commit while its key (the set-up commands and the
//! content of `[workspace] setup_inputs`) is the same and nothing untracked in the
//! checkout changed since (size, change time and inode of every file: a
//! gate that wrote into `node_modules` makes the next use start afresh).
//!
//! With Landlock and namespaces, gates write through an overlay (see
//! [`Overlay`]): what they write lands in a layer of its own, thrown away
//! before the next commit, and the checkout itself is written by
//! planwright alone. Its next reset then checks and writes only the files
//! that differ between the two commits, and nothing needs cleaning.
//!
//! Used by the attempt's verification and by the merge's re-gating alike,
//! and independent of any executor's slots.

use crate::caches::Caches;
use crate::error::EngineError;
use crate::exec::files::{clean, create_parent, first_use, fresh_dir, remove_any, restore_modes};
use crate::exec::network::{Network, SETUP_HOSTS};
use crate::exec::setup::{self, Setup};
use crate::exec::workspace::{WorkspaceSettings, Workspaces};
use crate::git::repo::Repo;
use crate::git::worktree::{Clean, WorkTree};
use crate::verify::gates::{run_gates, GateRoom, GateSettings, Verdict};
use planwright_config::ContainSettings;
use planwright_os::beneath::Dir;
use planwright_os::process::{self, Cancel};
use planwright_os::sandbox::{self, Confine, Containment, Overlay, Policy};
use planwright_plan::model::Gate;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// The gate checkouts of a run.
#[derive(Debug, Clone)]
pub(crate) struct Checkouts {
    repo: Repo,
    /// The folder holding this repository's checkouts.
    root: PathBuf,
    setup: Setup,
    containment: Containment,
    gate_network: bool,
    /// How set-ups and reviewers reach the network.
    network: Network,
    /// Directories an agent may write: kept off every gate's `PATH`.
    agent_writable: Vec<PathBuf>,
    /// What set-ups, gates and reviewers read where their view hides it:
    /// the repository and `[sandbox] readable`.
    readable: Vec<PathBuf>,
    /// Whether gates write through an overlay, so only planwright writes
    /// the checkouts.
    overlay: bool,
    /// `[sandbox] pids` and `memory` of set-ups, gates and reviewers.
    limits: sandbox::Limits,
    /// The checkouts that hold what planwright last wrote there, their
    /// index matching every file: the next reset need only touch the
    /// files that differ between the two commits.
    synced: Arc<Mutex<HashSet<String>>>,
    /// The checkouts this run has prepared: the first preparation of each
    /// says in its log whether it made the checkout or reused one (kept
    /// from an earlier run, or made by preflight).
    used: Arc<Mutex<HashSet<String>>>,
}

impl Checkouts {
    /// Checkouts of `repo`, with gates confined by `containment` as
    /// `contain` says (`[sandbox]`); its `writable` directories are those
    /// agents may write besides their workspace and temporary directory.
    pub(crate) fn new(
        repo: Repo,
        settings: WorkspaceSettings,
        containment: Containment,
        contain: &ContainSettings,
    ) -> Checkouts {
        let declared = &contain.writable;
        let mut agent_writable = vec![
            Workspaces::root(&repo),
            repo.state_dir().join("tmp"),
            Caches::agents_root(&repo),
        ];
        agent_writable.extend(declared.iter().cloned());
        let layers = repo.state_dir().join("overlay");
        let root = checkouts_root(&repo, contain);
        // An agent that may write the checkouts or their layers could change
        // what a gate sees behind the quick reset's back; without Landlock,
        // so could a gate.
        let shared = [root.clone(), layers.clone()]
            .iter()
            .any(|dir| sandbox::overlaps_any(dir, declared));
        let overlay = contain.gate_overlay
            && containment.overlays()
            && !shared
            && overlay_works(&layers.join("probe"));
        let repo_root = repo.root().to_path_buf();
        Checkouts {
            setup: Setup::new(repo.clone(), settings),
            repo,
            root,
            containment,
            gate_network: contain.gate_network,
            network: Network::new(contain),
            agent_writable,
            readable: std::iter::once(repo_root)
                .chain(contain.readable.iter().cloned())
                .collect(),
            overlay,
            limits: crate::contain::limits(contain),
            synced: Arc::default(),
            used: Arc::default(),
        }
    }

    /// Makes checkout `name` hold `commit` set up, as before its gates
    /// run (preflight's trial of the set-up on the base commit); the
    /// verdict of a set-up that failed, logged to `log`.
    pub(crate) fn try_setup(
        &self,
        name: &str,
        commit: &str,
        log: &Path,
        cancel: &Cancel,
    ) -> Result<Option<Verdict>, EngineError> {
        let tmp = self.fresh_tmp(name)?;
        Ok(self.prepare(name, commit, &tmp, log, cancel)?.err())
    }

    /// Whether gates write through an overlay.
    pub(crate) fn overlay(&self) -> bool {
        self.overlay
    }

    /// The folder that holds every checkout.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Where checkout `name` lives.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Whether checkout `name` was made (it has its index), so the next
    /// reset writes only the files that differ.
    pub(crate) fn is_made(&self, name: &str) -> bool {
        self.meta(name, "").is_file()
    }

    /// Gives back the space checkout `name` holds (after the disk filled
    /// up there): its files, index, set-up stamp, overlay layer and
    /// temporary folder go, and its next use starts it from nothing.
    pub(crate) fn scrub(&self, name: &str) -> Result<(), EngineError> {
        self.synced().remove(name);
        self.used
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        remove_any(&self.meta(name, ""))?;
        setup::clear_stamp(&self.meta(name, ".setup"))?;
        remove_any(&self.path(name))?;
        remove_any(&self.layers(name))?;
        remove_any(&(self.repo.state_dir().join("tmp")).join(format!("gate-{name}")))
    }

    fn meta(&self, name: &str, what: &str) -> PathBuf {
        self.repo
            .state_dir()
            .join("index")
            .join(format!("checkout-{name}{what}"))
    }

    /// Runs `gates` on `commit` in checkout `name`, appending to `log`.
    pub(crate) fn gate(
        &self,
        name: &str,
        commit: &str,
        gates: &[Gate],
        settings: &GateSettings,
        log: &Path,
        cancel: &Cancel,
    ) -> Result<Verdict, EngineError> {
        let tmp = self.fresh_tmp(name)?;
        let dir = match self.prepare(name, commit, &tmp, log, cancel)? {
            Ok(dir) => dir,
            Err(verdict) => return Ok(verdict),
        };
        let overlay = self.overlay.then(|| self.fresh_overlay(name)).transpose()?;
        let work = overlay.as_ref().map(|o| o.work.clone());
        let room = self.gate_room(name, &dir, &tmp, settings, overlay);
        let verdict = run_gates(gates, &dir, settings, log, &room, cancel);
        if let Some(work) = work {
            // overlayfs leaves a directory there that no one but its owner
            // (after a `chmod`) may remove, which `rm -rf` manages but
            // many other tools do not.
            remove_any(&work)?;
        }
        verdict
    }

    /// The overlay the gates of checkout `name` write through, its layer
    /// emptied of what the last gates wrote.
    fn fresh_overlay(&self, name: &str) -> Result<Overlay, EngineError> {
        let layers = self.layers(name);
        Ok(Overlay {
            dir: self.path(name),
            upper: fresh_dir(&layers.join("upper"))?,
            work: fresh_dir(&layers.join("work"))?,
        })
    }

    /// Where the overlay of checkout `name` keeps its layer.
    fn layers(&self, name: &str) -> PathBuf {
        self.repo.state_dir().join("overlay").join(name)
    }

    /// The checkouts known to hold what planwright last wrote, locked.
    fn synced(&self) -> MutexGuard<'_, HashSet<String>> {
        self.synced.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A fresh `TMPDIR` for the gates of checkout `name`.
    fn fresh_tmp(&self, name: &str) -> Result<PathBuf, EngineError> {
        fresh_dir(
            &self
                .repo
                .state_dir()
                .join("tmp")
                .join(format!("gate-{name}")),
        )
    }

    /// How a gate runs in checkout `name` at `dir`: its environment and
    /// its sandbox, writing through `overlay` when there is one.
    fn gate_room(
        &self,
        name: &str,
        dir: &Path,
        tmp: &Path,
        settings: &GateSettings,
        overlay: Option<Overlay>,
    ) -> GateRoom {
        GateRoom {
            env: self.gate_env(name, &settings.env, tmp),
            confine: Some(self.confine(dir, tmp, self.gate_network, overlay)),
        }
    }

    /// The room of checkout `name` as the last [`Checkouts::gate`] left
    /// it: its directory and a gate's environment and sandbox, with a fresh
    /// `TMPDIR`. For the counterfactuals of a candidate that passed its
    /// gates, which change a file there and run the tests again: what the
    /// gates wrote through their overlay is moved into the checkout first,
    /// and the counterfactuals write it directly.
    pub(crate) fn room(
        &self,
        name: &str,
        settings: &GateSettings,
    ) -> Result<(PathBuf, GateRoom), EngineError> {
        let tmp = self.fresh_tmp(name)?;
        let dir = self.path(name);
        if self.overlay {
            self.synced().remove(name);
            let upper = self.layers(name).join("upper");
            if upper.is_dir() {
                sandbox::fold_layer(&Dir::open(&upper)?, &Dir::open(&dir)?)?;
            }
        }
        let room = self.gate_room(name, &dir, &tmp, settings, None);
        Ok((dir, room))
    }

    /// planwright's own git on checkout `name`, which holds `commit`:
    /// attributes come from the commit, never from a `.gitattributes` a
    /// gate left in the checkout.
    pub(crate) fn git(&self, name: &str, commit: &str) -> WorkTree {
        (self.repo)
            .own_tree(&self.meta(name, ""), &self.path(name))
            .attributes_of(commit)
    }

    /// A reviewer's room for a candidate gated in checkout `name`: a fresh
    /// checkout of `commit`'s tracked files alone (nothing a gate or the
    /// set-up wrote there), and an empty folder for its verdict.
    pub(crate) fn review_room(&self, name: &str, commit: &str) -> Result<ReviewRoom, EngineError> {
        let root = self.repo.state_dir().join("review").join(name);
        let checkout = fresh_dir(&root.join("checkout"))?;
        let verdicts = fresh_dir(&root.join("verdicts"))?;
        let index = self
            .repo
            .state_dir()
            .join("index")
            .join(format!("review-{name}"));
        remove_any(&index)?;
        create_parent(&index)?;
        (self.repo)
            .own_tree_unhashed(&index, &checkout)
            .reset_files(commit)?;
        Ok(ReviewRoom { checkout, verdicts })
    }

    /// A reviewer's sandbox: it reads everything and writes only `writable`
    /// (its verdict's folder and its CLI home); it reaches its model as an
    /// agent does, its adapter's `hosts` through the proxy by default.
    pub(crate) fn reviewer_confine(&self, writable: Vec<PathBuf>, hosts: &[&str]) -> Confine {
        let mut policy = Policy {
            writable,
            readable: self.readable.clone(),
            limits: self.limits,
            ..Policy::default()
        };
        self.network.apply(&mut policy, hosts);
        self.containment.confine(policy)
    }

    /// A sandbox that may write `dir` (through `overlay` when there is
    /// one: below its mount the checkout is planwright's alone) and `tmp`.
    fn confine(&self, dir: &Path, tmp: &Path, network: bool, overlay: Option<Overlay>) -> Confine {
        let mut writable = vec![tmp.to_path_buf()];
        if overlay.is_none() {
            writable.push(dir.to_path_buf());
        }
        self.containment.confine(Policy {
            writable,
            readable: self.readable.clone(),
            network,
            proxy: None,
            overlay,
            limits: self.limits,
        })
    }

    /// The scrubbed environment with the private `TMPDIR`, the set-up's
    /// package-manager caches of checkout `name` (which the gate reads
    /// only), and a `PATH` without relative entries or directories an
    /// agent may write.
    fn gate_env(&self, name: &str, extra: &[String], tmp: &Path) -> Vec<(String, String)> {
        let mut env = process::scrubbed_env(extra);
        env.retain(|(k, _)| !matches!(k.as_str(), "TMPDIR" | "TMP" | "TEMP"));
        env.push(("TMPDIR".into(), tmp.display().to_string()));
        Caches::checkout(&self.repo, name).add_for_gate(&mut env, tmp);
        for (k, v) in env.iter_mut() {
            if k == "PATH" {
                *v = v
                    .split(':')
                    .filter(|d| {
                        d.starts_with('/')
                            && !sandbox::below_any(Path::new(d), &self.agent_writable)
                    })
                    .collect::<Vec<_>>()
                    .join(":");
            }
        }
        env
    }

    /// Makes checkout `name` hold exactly `commit`'s tracked files plus the
    /// set-up's result. A failing set-up is the candidate's failure.
    fn prepare(
        &self,
        name: &str,
        commit: &str,
        tmp: &Path,
        log: &Path,
        cancel: &Cancel,
    ) -> Result<Result<PathBuf, Verdict>, EngineError> {
        let dir = self.path(name);
        let index = self.meta(name, "");
        let synced = self.synced().remove(name);
        let first = (self.used.lock().unwrap_or_else(|e| e.into_inner())).insert(name.to_string());
        // The index is in `.planwright/`, the checkout in the cache folder,
        // which the user may clear (or `HOME` name another): an index whose
        // checkout is gone describes nothing.
        let made = !index.is_file() || !dir.is_dir();
        if made {
            remove_any(&index)?;
            fresh_dir(&dir)?;
            create_parent(&index)?;
        }
        if !synced && index.is_file() {
            // First: git can neither enter nor clean a directory a gate
            // shut (`chmod 000`) when planwright is not root.
            restore_modes(&self.repo.own_tree(&index, &dir), &dir, None)?;
        }
        // git never cleans a `.git` at the top of a work tree, and one a gate
        // left would be the repository of every git command the next runs.
        remove_any(&dir.join(".git"))?;
        if first {
            // Never trusted as it is: the reset below checks every file
            // against planwright's index and writes again what differs, and
            // the clean or the set-up's fingerprint sees what is untracked.
            let differed = match made {
                true => None,
                false => Some(self.repo.own_tree(&index, &dir).differing()?.len()),
            };
            crate::log::append(log, &first_use(&format!("gate checkout {name}"), differed))?;
        }
        (self.repo)
            .own_tree_unhashed(&index, &dir)
            .reset(commit, synced)?;
        let clean = || clean(&self.repo.own_tree(&index, &dir), Clean::All, &dir, None);
        if self.setup.is_empty() {
            if !synced {
                // Nothing to keep between gate runs: what the last one left goes.
                clean()?;
            }
            self.written(name);
            return Ok(Ok(dir));
        }
        let key = self.setup.key(commit)?;
        // A folder a gate shut cannot be read: then the set-up runs again.
        let state = self.untracked(&index, &dir).ok();
        let stamp = self.meta(name, ".setup");
        let kept = state.is_some_and(|state| {
            setup::read_stamp(&stamp).as_deref() == Some(format!("{key}\n{state}").as_str())
        });
        if kept {
            self.written(name);
            return Ok(Ok(dir));
        }
        setup::clear_stamp(&stamp)?;
        clean()?;
        let caches = Caches::checkout(&self.repo, name);
        caches.prepare()?;
        // Installing dependencies needs the registries.
        let mut confine = self.confine(&dir, tmp, false, None);
        self.network.apply(&mut confine.policy, SETUP_HOSTS);
        confine.allow_write(caches.root().to_path_buf());
        let place = "in the gate checkout";
        let run = setup::Room {
            dir: &dir,
            tmp,
            caches: &caches,
            confine: &confine,
        };
        if let Some(verdict) = self.setup.run(&run, log, place, cancel)? {
            return Ok(Err(verdict));
        }
        // The set-up may have rewritten tracked files (a lock file, say).
        (self.repo)
            .own_tree_unhashed(&index, &dir)
            .reset_files(commit)?;
        let state = self.untracked(&index, &dir)?;
        setup::write_stamp(&stamp, &format!("{key}\n{state}"))?;
        self.written(name);
        Ok(Ok(dir))
    }

    /// Checkout `name` holds what planwright just wrote there: with an
    /// overlay, no gate can change that.
    fn written(&self, name: &str) {
        if self.overlay {
            self.synced().insert(name.to_string());
        }
    }

    /// Every untracked entry of `dir` with what identifies its content.
    fn untracked(&self, index: &Path, dir: &Path) -> Result<String, EngineError> {
        let tracked: HashSet<PathBuf> = (self.repo.own_tree(index, dir).tracked()?)
            .into_iter()
            .map(|p| dir.join(p))
            .collect();
        // Directories of tracked files come and go with the commit: they
        // are not the set-up's.
        let tracked_dirs: HashSet<&Path> =
            tracked.iter().flat_map(|p| p.ancestors().skip(1)).collect();
        let mut text = String::new();
        let known = Known {
            files: &tracked,
            dirs: &tracked_dirs,
        };
        fingerprint(dir, &known, &mut text).map_err(|e| EngineError::io(dir, e))?;
        Ok(text)
    }
}

/// Where a reviewer works: it reads `checkout` and writes `verdicts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReviewRoom {
    /// The candidate's tracked files, for the reviewer to read.
    pub checkout: PathBuf,
    /// The one folder the reviewer may write (besides its CLI home).
    pub verdicts: PathBuf,
}

/// The tracked files of a checkout and their directories.
struct Known<'a> {
    files: &'a HashSet<PathBuf>,
    dirs: &'a HashSet<&'a Path>,
}

/// Whether gates can write through an overlay whose layers are in
/// `scratch`'s file system (see [`sandbox::probe_overlay`]).
/// The folder of `repo`'s gate checkouts: its own in `[sandbox]`'s
/// checkouts folder of the user's cache, named by the repository's folder
/// and a hash of its path; `.planwright/checkouts` where there is no
/// cache folder, or where agents may write it (`[sandbox] writable`
/// holding it): checkouts an agent can write would be no checkouts.
pub(crate) fn checkouts_root(repo: &Repo, contain: &ContainSettings) -> PathBuf {
    let own = repo.state_dir().join("checkouts");
    let Some(cache) = &contain.checkouts else {
        return own;
    };
    if sandbox::overlaps_any(cache, &contain.writable) {
        return own;
    }
    let root = repo.root();
    let name = root
        .file_name()
        .map_or_else(|| "repository".into(), |n| n.to_string_lossy());
    // FNV-1a: a name that keeps two repositories of one folder name apart,
    // not a secret.
    let hash = root
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    cache.join(format!("{name}-{hash:016x}"))
}

fn overlay_works(scratch: &Path) -> bool {
    let works = sandbox::probe_overlay(scratch).is_ok();
    let removed = remove_any(scratch).is_ok();
    works && removed
}

/// Appends a line per untracked entry below `dir`: its path, kind, size,
/// inode and change time (which no unprivileged process can set back).
fn fingerprint(dir: &Path, known: &Known, out: &mut String) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path)?;
        if meta.is_dir() {
            if !known.dirs.contains(path.as_path()) {
                let _ = writeln!(out, "{} dir", path.display());
            }
            fingerprint(&path, known, out)?;
        } else if !known.files.contains(&path) {
            let _ = writeln!(
                out,
                "{} {:o} {} {} {}.{}",
                path.display(),
                meta.mode(),
                meta.len(),
                meta.ino(),
                meta.ctime(),
                meta.ctime_nsec()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::workspace::WorkspaceSettings;
    use std::os::unix::fs::PermissionsExt;

    fn commit_files(root: &Path, files: &[(&str, &str)]) -> String {
        let git = |args: &[&str]| crate::git::testing::git(root, args);
        for (path, text) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        git(&["add", "-A"]);
        git(&["commit", "-qm", "c"]);
        git(&["rev-parse", "HEAD"])
    }

    /// Every path below `dir`: a directory, a symlink, or a file with its
    /// content and whether it is executable.
    fn tree(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut list = vec![dir.to_path_buf()];
        while let Some(at) = list.pop() {
            for entry in std::fs::read_dir(&at).unwrap() {
                let path = entry.unwrap().path();
                let meta = std::fs::symlink_metadata(&path).unwrap();
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                if meta.is_dir() {
                    list.push(path);
                    out.push(format!("{rel}/"));
                } else if meta.is_symlink() {
                    out.push(format!("{rel} ->"));
                } else {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    let exec = meta.permissions().mode() & 0o111 != 0;
                    out.push(format!("{rel} {} {exec}", text.trim()));
                }
            }
        }
        out.sort();
        out
    }

    /// A repository with two commits, planwright's git made, and checkouts
    /// of it under `containment`: the commits' ids and the checkouts.
    fn two_commits(dir: &Path, containment: Containment) -> (String, String, Checkouts) {
        let root = dir.join("repo");
        std::fs::create_dir_all(&root).unwrap();
        crate::git::testing::init(&root);
        let first = commit_files(&root, &[("a", "hello\n"), ("src/x", "hello\n")]);
        let second = commit_files(&root, &[("b", "hello\n")]);
        let repo = Repo::open(&root).unwrap();
        repo.ensure_own_git(&[]).unwrap();
        let settings = WorkspaceSettings::default();
        let contain = ContainSettings::default();
        let checkouts = Checkouts::new(repo, settings, containment, &contain);
        (first, second, checkouts)
    }

    const FIRST_FILES: [&str; 3] = ["a hello false", "src/", "src/x hello false"];
    const SECOND_FILES: [&str; 4] = [
        "a hello false",
        "b hello false",
        "src/",
        "src/x hello false",
    ];

    /// Runs one gate per script on `commit` in checkout `slot`.
    fn gate(checkouts: &Checkouts, log: &Path, commit: &str, scripts: &[&str]) -> Verdict {
        let gates: Vec<Gate> = scripts
            .iter()
            .map(|script| Gate {
                name: "g".into(),
                argv: vec!["sh".into(), "-c".into(), script.to_string()],
            })
            .collect();
        let settings = GateSettings::default();
        let cancel = Cancel::default();
        checkouts
            .gate("slot", commit, &gates, &settings, log, &cancel)
            .unwrap()
    }

    /// Whatever a gate leaves, the next gate in the checkout finds the
    /// commit's tracked files and nothing else: no untracked or ignored
    /// file, no `.git`, no tracked file changed in place or in kind, no
    /// folder of its own it shut. Run as root, the test runs again as an
    /// ordinary user, for whom a shut folder stops `git clean`.
    #[test]
    fn the_next_gate_finds_only_the_commits_files_whatever_the_last_one_left() {
        crate::exec::files::again_as_an_ordinary_user(
            "verify::checkout::tests::\
             the_next_gate_finds_only_the_commits_files_whatever_the_last_one_left",
        );
        let tmp = tempfile::tempdir().unwrap();
        let (first, second, checkouts) = two_commits(tmp.path(), Containment::none());
        let log = tmp.path().join("log");
        let run = |commit: &str, script: &str| {
            assert_eq!(gate(&checkouts, &log, commit, &[script]), Verdict::Pass);
            tree(&checkouts.path("slot"))
        };
        run(
            &first,
            "echo gate > a; mkdir -p junk/deep; echo j > junk/deep/f; echo s > src/stray; \
             ln -s /etc/passwd link; mkdir sub; printf '*\\n' > sub/.gitignore; echo e > sub/evil; \
             mkdir .git; echo x > .git/config",
        );
        assert_eq!(run(&first, "true"), FIRST_FILES);
        let shut = "mkdir -p shut/in; chmod 000 shut/in shut";
        assert_eq!(gate(&checkouts, &log, &first, &[shut]), Verdict::Pass);
        assert_eq!(run(&first, "true"), FIRST_FILES);
        // Tracked files changed in place, nothing added.
        run(&first, "echo gate > a; chmod +x src/x; echo gate > src/x");
        assert_eq!(run(&second, "true"), SECOND_FILES);
        run(
            &second,
            "rm a; mkdir a; echo x > a/inner; echo s > src/stray",
        );
        assert_eq!(run(&second, "true"), SECOND_FILES);
        assert_eq!(run(&first, "true"), FIRST_FILES);
    }

    /// A gate that changes the mode of tracked files (`chmod 000`, a
    /// setuid bit), of a tracked directory and of the checkout itself
    /// leaves the next gate, of the same commit or the next, the modes git
    /// writes: with the overlay (the change lands in the layer) and without
    /// (the reset writes the files anew and sets the directories' modes).
    /// Root reads a file of mode `0000`, so the modes themselves are
    /// compared, and run as root the test runs again as an ordinary user,
    /// for whom a directory of mode `0000` stops git's reset.
    #[test]
    fn a_tracked_files_and_directorys_mode_a_gate_changed_is_restored_for_the_next_gate() {
        crate::exec::files::again_as_an_ordinary_user(
            "verify::checkout::tests::\
             a_tracked_files_and_directorys_mode_a_gate_changed_is_restored_for_the_next_gate",
        );
        let enforce = Containment::new(sandbox::Mode::Enforce).expect("the kernel confines");
        let umask = planwright_os::process::umask();
        for containment in [Containment::none(), enforce] {
            let tmp = tempfile::tempdir().unwrap();
            let (first, second, checkouts) = two_commits(tmp.path(), containment);
            let log = tmp.path().join("log");
            let lower = checkouts.path("slot");
            let mode = |rel: &str| {
                let meta = std::fs::symlink_metadata(lower.join(rel)).unwrap();
                meta.permissions().mode() & 0o7777
            };
            let changes = "chmod 000 a && chmod 4700 src/x && chmod 000 src && chmod 1700 .";
            assert_eq!(gate(&checkouts, &log, &first, &[changes]), Verdict::Pass);
            let (file, dir) = (0o666 & !umask, 0o777 & !umask);
            for commit in [&first, &second] {
                let check = format!(
                    "test \"$(stat -c %a a) $(stat -c %a src/x) $(stat -c %a src) $(stat -c %a .)\" \
                     = '{file:o} {file:o} {dir:o} {dir:o}'"
                );
                assert_eq!(gate(&checkouts, &log, commit, &[&check]), Verdict::Pass);
                let modes = [mode("a"), mode("src/x"), mode("src"), mode("")];
                assert_eq!(modes, [file, file, dir, dir]);
                assert_eq!(gate(&checkouts, &log, commit, &[changes]), Verdict::Pass);
            }
        }
    }

    /// With Landlock and namespaces, the gates of a candidate write through
    /// an overlay: each sees what the ones before it wrote, the checkout
    /// keeps exactly the commit's files (so its next reset is quick and
    /// nothing is cleaned), and the next candidate's gates see none of it.
    /// The counterfactuals' room holds what the gates left, deletions and
    /// directories made anew included, and the gate after it finds the
    /// commit's files alone again.
    #[test]
    fn gates_write_through_an_overlay_the_next_candidate_never_sees() {
        let tmp = tempfile::tempdir().unwrap();
        let containment = Containment::new(sandbox::Mode::Enforce).expect("the kernel confines");
        let (first, second, checkouts) = two_commits(tmp.path(), containment);
        assert!(checkouts.overlay, "overlayfs is refused here");
        let log = tmp.path().join("log");
        let lower = checkouts.path("slot");
        let writes = "echo gate > a; mkdir -p junk; echo j > junk/f; rm src/x; mkdir .git";
        let sees_writes = "test \"$(cat a)\" = gate && test -f junk/f && test ! -e src/x";
        assert_eq!(
            gate(&checkouts, &log, &first, &[writes, sees_writes]),
            Verdict::Pass
        );
        assert_eq!(tree(&lower), FIRST_FILES);
        let clean = "test \"$(cat a)\" = hello && test -f b && test -f src/x \
                     && test ! -e junk && test ! -e .git";
        assert_eq!(gate(&checkouts, &log, &second, &[clean]), Verdict::Pass);
        assert_eq!(tree(&lower), SECOND_FILES);
        let remakes = "echo gate > a; rm b; rm -r src; mkdir src; echo y > src/y; mkdir junk; echo j > junk/f";
        assert_eq!(gate(&checkouts, &log, &second, &[remakes]), Verdict::Pass);
        let (dir, _) = checkouts.room("slot", &GateSettings::default()).unwrap();
        assert_eq!(
            tree(&dir),
            [
                "a gate false",
                "junk/",
                "junk/f j false",
                "src/",
                "src/y y false"
            ]
        );
        assert_eq!(gate(&checkouts, &log, &first, &["true"]), Verdict::Pass);
        assert_eq!(tree(&lower), FIRST_FILES);
    }

    /// A `[sandbox] writable` directory that holds the checkouts or their
    /// layers (or lies below them) lets agents write there: then gates
    /// write the checkout itself, which is checked and cleaned in full;
    /// as with `[sandbox] gate_overlay = false`.
    #[test]
    fn no_overlay_where_agents_may_write_the_checkouts_or_when_turned_off() {
        let tmp = tempfile::tempdir().unwrap();
        let containment = Containment::new(sandbox::Mode::Enforce).expect("the kernel confines");
        let (_, _, checkouts) = two_commits(tmp.path(), containment);
        let state = checkouts.repo.state_dir();
        let with = |writable: &[PathBuf], gate_overlay: bool| {
            let settings = WorkspaceSettings::default();
            let contain = ContainSettings {
                writable: writable.to_vec(),
                gate_overlay,
                ..ContainSettings::default()
            };
            Checkouts::new(checkouts.repo.clone(), settings, containment, &contain).overlay
        };
        std::fs::create_dir_all(state.join("overlay/slot-1")).unwrap();
        assert!(with(&[tmp.path().join("cache")], true));
        assert!(!with(&[tmp.path().join("cache")], false));
        assert!(!with(std::slice::from_ref(&state), true));
        assert!(!with(&[state.join("overlay/slot-1")], true));
        assert!(!with(&[tmp.path().to_path_buf()], true));
    }

    /// Checkouts live in the cache folder's own folder of the repository,
    /// unless agents may write it: then below `.planwright/` as without a
    /// cache folder.
    #[test]
    fn checkouts_live_outside_the_repository_unless_agents_may_write_there() {
        let tmp = tempfile::tempdir().unwrap();
        let (_, _, checkouts) = two_commits(tmp.path(), Containment::none());
        let repo = &checkouts.repo;
        let cache = tmp.path().join("cache/planwright/checkouts");
        let at = |checkouts: Option<&Path>, writable: &[&str]| {
            let contain = ContainSettings {
                checkouts: checkouts.map(Path::to_path_buf),
                writable: writable.iter().map(|w| tmp.path().join(w)).collect(),
                ..ContainSettings::default()
            };
            checkouts_root(repo, &contain)
        };
        let own = at(Some(&cache), &["elsewhere"]);
        assert_eq!(own.parent(), Some(cache.as_path()));
        let name = own.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("repo-") && name.len() == "repo-".len() + 16,
            "{name}"
        );
        assert!(!own.starts_with(repo.root()));
        let inside = repo.state_dir().join("checkouts");
        assert_eq!(at(None, &[]), inside);
        assert_eq!(at(Some(&cache), &["cache"]), inside);
    }

    /// A checkout removed behind planwright's back (the cache folder
    /// cleared) is written afresh; its index no longer counts.
    #[test]
    fn a_checkout_removed_from_the_cache_is_written_afresh() {
        let tmp = tempfile::tempdir().unwrap();
        let (first, second, checkouts) = two_commits(tmp.path(), Containment::none());
        let log = tmp.path().join("log");
        let script = "test -f a && test -f src/x";
        assert!(matches!(
            gate(&checkouts, &log, &first, &[script]),
            Verdict::Pass
        ));
        std::fs::remove_dir_all(checkouts.path("slot")).unwrap();
        checkouts.synced().clear();
        let verdict = gate(
            &checkouts,
            &log,
            &second,
            &[&format!("{script} && test -f b")],
        );
        assert!(matches!(verdict, Verdict::Pass), "{verdict:?}");
    }
}
