//! Gate checkouts: gates and counterfactual tests run where no agent ever
//! was. Each is a planwright-owned directory, `.planwright/checkouts/<name>`
//! (one per job slot, and `merge` for the merged tree), holding the tracked
//! content of the commit under test, written with planwright's own git
//! directory and index (see [`Repo::own_git`]).
//!
//! The project's set-up step (`[worktree] setup`, such as `npm ci`, see
//! [`crate::setup`]) runs here, by planwright, sandboxed, and its result is
//! kept for the next commit while its key (the set-up commands and the
//! content of `[worktree] setup_inputs`) is the same and nothing untracked in the
//! checkout changed since (size, change time and inode of every file: a
//! gate that wrote into `node_modules` makes the next use start afresh).
//!
//! Used by the attempt's verification and by the merge's re-gating alike,
//! and independent of any executor's slots.

use crate::error::EngineError;
use crate::gates::{run_gates, GateRoom, GateSettings, Verdict};
use crate::process::{self, Cancel};
use crate::repo::Repo;
use crate::sandbox::{self, Confine, Containment, Policy};
use crate::setup::{self, Setup};
use crate::workspace::{
    create_parent, fresh_dir, remove_any, reset_files, PoolSettings, Workspaces,
};
use planwright_plan::model::Gate;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The gate checkouts of a run.
#[derive(Debug, Clone)]
pub struct Checkouts {
    repo: Repo,
    setup: Setup,
    containment: Containment,
    gate_network: bool,
    /// Directories an agent may write: kept off every gate's `PATH`.
    agent_writable: Vec<PathBuf>,
}

impl Checkouts {
    /// Checkouts of `repo`, with gates confined by `containment`;
    /// `declared` are the directories agents may write besides their
    /// workspace and temporary directory.
    pub fn new(
        repo: Repo,
        settings: PoolSettings,
        containment: Containment,
        gate_network: bool,
        declared: &[PathBuf],
    ) -> Checkouts {
        let mut agent_writable = vec![Workspaces::root(&repo), repo.state_dir().join("tmp")];
        agent_writable.extend(declared.iter().cloned());
        Checkouts {
            setup: Setup::new(repo.clone(), settings),
            repo,
            containment,
            gate_network,
            agent_writable,
        }
    }

    /// Where checkout `name` lives.
    pub fn path(&self, name: &str) -> PathBuf {
        self.repo.state_dir().join("checkouts").join(name)
    }

    fn meta(&self, name: &str, what: &str) -> PathBuf {
        self.repo
            .state_dir()
            .join("index")
            .join(format!("checkout-{name}{what}"))
    }

    /// Runs `gates` on `commit` in checkout `name`, appending to `log`.
    pub fn gate(
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
        let room = self.gate_room(&dir, &tmp, settings);
        run_gates(gates, &dir, settings, log, &room, cancel)
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

    /// How a gate runs in `dir`: its environment and its sandbox.
    fn gate_room(&self, dir: &Path, tmp: &Path, settings: &GateSettings) -> GateRoom {
        GateRoom {
            env: self.gate_env(&settings.env, tmp),
            confine: Some(self.confine(dir, tmp, self.gate_network)),
        }
    }

    /// The room of checkout `name` as the last [`Checkouts::gate`] left
    /// it: its directory and a gate's environment and sandbox, with a fresh
    /// `TMPDIR`. For the counterfactuals of a candidate that passed its gates.
    pub fn room(
        &self,
        name: &str,
        settings: &GateSettings,
    ) -> Result<(PathBuf, GateRoom), EngineError> {
        let tmp = self.fresh_tmp(name)?;
        let dir = self.path(name);
        let room = self.gate_room(&dir, &tmp, settings);
        Ok((dir, room))
    }

    /// A reviewer's sandbox: it reads everything and writes only `writable`
    /// (its verdict's folder); it needs the network for its model.
    pub fn reviewer_confine(&self, writable: Vec<PathBuf>) -> Confine {
        self.containment.confine(Policy {
            writable,
            network: true,
        })
    }

    fn confine(&self, dir: &Path, tmp: &Path, network: bool) -> Confine {
        self.containment.confine(Policy {
            writable: vec![dir.to_path_buf(), tmp.to_path_buf()],
            network,
        })
    }

    /// The scrubbed environment with the private `TMPDIR`, and a `PATH`
    /// without relative entries or directories an agent may write.
    fn gate_env(&self, extra: &[String], tmp: &Path) -> Vec<(String, String)> {
        let mut env = process::scrubbed_env(extra);
        env.retain(|(k, _)| !matches!(k.as_str(), "TMPDIR" | "TMP" | "TEMP"));
        env.push(("TMPDIR".into(), tmp.display().to_string()));
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
        if !index.is_file() {
            fresh_dir(&dir)?;
            create_parent(&index)?;
        }
        // git never cleans a `.git` at the top of a work tree, and one a gate
        // left would be the repository of every git command the next runs.
        remove_any(&dir.join(".git"))?;
        reset_files(|| self.repo.own_git_unhashed(&index, &dir), &index, commit)?;
        if self.setup.is_empty() {
            // Nothing to keep between gate runs: what the last one left goes.
            self.repo
                .own_git(&index, &dir)
                .args(["clean", "-q", "-ffdx"])
                .output()?;
            return Ok(Ok(dir));
        }
        let key = self.setup.key(commit)?;
        let state = self.untracked(&index, &dir)?;
        let stamp = self.meta(name, ".setup");
        if setup::read_stamp(&stamp).as_deref() == Some(format!("{key}\n{state}").as_str()) {
            return Ok(Ok(dir));
        }
        setup::clear_stamp(&stamp)?;
        self.repo
            .own_git(&index, &dir)
            .args(["clean", "-q", "-ffdx"])
            .output()?;
        // Installing dependencies needs the network.
        let confine = self.confine(&dir, tmp, true);
        let place = "in the gate checkout";
        if let Some(verdict) = self.setup.run(&dir, tmp, &confine, log, place, cancel)? {
            return Ok(Err(verdict));
        }
        // The set-up may have rewritten tracked files (a lock file, say).
        reset_files(|| self.repo.own_git_unhashed(&index, &dir), &index, commit)?;
        let state = self.untracked(&index, &dir)?;
        setup::write_stamp(&stamp, &format!("{key}\n{state}"))?;
        Ok(Ok(dir))
    }

    /// Every untracked entry of `dir` with what identifies its content.
    fn untracked(&self, index: &Path, dir: &Path) -> Result<String, EngineError> {
        let out = self
            .repo
            .own_git(index, dir)
            .args(["ls-files", "-z"])
            .output()?;
        let tracked: HashSet<PathBuf> = out
            .stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| dir.join(String::from_utf8_lossy(p).as_ref()))
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

/// The tracked files of a checkout and their directories.
struct Known<'a> {
    files: &'a HashSet<PathBuf>,
    dirs: &'a HashSet<&'a Path>,
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
    use crate::workspace::PoolSettings;
    use std::os::unix::fs::PermissionsExt;

    fn commit_files(root: &Path, files: &[(&str, &str)]) -> String {
        let git = |args: &[&str]| {
            crate::git::Git::new(root)
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .text()
                .unwrap()
        };
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

    /// Whatever a gate leaves, the next gate in the checkout finds the
    /// commit's tracked files and nothing else: no untracked or ignored
    /// file, no `.git`, no tracked file changed in place or in kind.
    #[test]
    fn the_next_gate_finds_only_the_commits_files_whatever_the_last_one_left() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        crate::git::Git::new(&root)
            .args(["init", "-q"])
            .output()
            .unwrap();
        let first = commit_files(&root, &[("a", "hello\n"), ("src/x", "hello\n")]);
        let second = commit_files(&root, &[("b", "hello\n")]);
        let repo = Repo::open(&root).unwrap();
        repo.ensure_own_git(&[]).unwrap();
        let checkouts = Checkouts::new(
            repo,
            PoolSettings::default(),
            Containment::none(),
            false,
            &[],
        );
        let log = tmp.path().join("log");
        let run = |commit: &str, script: &str| {
            let gate = Gate {
                name: "g".into(),
                argv: vec!["sh".into(), "-c".into(), script.into()],
            };
            let settings = GateSettings::default();
            let cancel = Cancel::default();
            let verdict = checkouts.gate("slot", commit, &[gate], &settings, &log, &cancel);
            assert_eq!(verdict.unwrap(), Verdict::Pass);
            tree(&checkouts.path("slot"))
        };
        let first_files = ["a hello false", "src/", "src/x hello false"];
        let second_files = [
            "a hello false",
            "b hello false",
            "src/",
            "src/x hello false",
        ];
        run(
            &first,
            "echo gate > a; mkdir -p junk/deep; echo j > junk/deep/f; echo s > src/stray; \
             ln -s /etc/passwd link; mkdir sub; printf '*\\n' > sub/.gitignore; echo e > sub/evil; \
             mkdir .git; echo x > .git/config",
        );
        assert_eq!(run(&first, "true"), first_files);
        // Tracked files changed in place, nothing added.
        run(&first, "echo gate > a; chmod +x src/x; echo gate > src/x");
        assert_eq!(run(&second, "true"), second_files);
        run(
            &second,
            "rm a; mkdir a; echo x > a/inner; echo s > src/stray",
        );
        assert_eq!(run(&second, "true"), second_files);
        assert_eq!(run(&first, "true"), first_files);
    }
}
