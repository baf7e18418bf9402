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

use crate::error::EngineError;
use crate::repo::Repo;
use crate::sandbox::{Confine, Containment, Policy};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// `[worktree]` settings: how workspaces and gate checkouts are prepared.
#[derive(Debug, Clone, Default)]
pub struct PoolSettings {
    /// The project's set-up step, run by planwright in each gate checkout
    /// (`[worktree] setup`, e.g. `npm ci`).
    pub setup: Vec<Vec<String>>,
    /// Files whose content keys the set-up cache (`[worktree] setup_inputs`,
    /// e.g. `package-lock.json`): set-up runs again when one changes.
    pub setup_inputs: Vec<String>,
    /// Also remove ignored files (such as an agent's `node_modules`) from a
    /// workspace between tickets.
    pub pristine: bool,
    /// Time limit of each set-up command.
    pub setup_timeout: Option<Duration>,
}

/// The workspaces of a run.
#[derive(Debug, Clone)]
pub struct Workspaces {
    repo: Repo,
    pristine: bool,
    containment: Containment,
    /// `[sandbox] writable`: more directories every agent may write.
    declared: Vec<PathBuf>,
    object_format: Arc<OnceLock<String>>,
}

impl Workspaces {
    /// Workspaces of `repo`; agents run under `containment` and may also
    /// write the `declared` directories.
    pub fn new(
        repo: Repo,
        pristine: bool,
        containment: Containment,
        declared: Vec<PathBuf>,
    ) -> Workspaces {
        Workspaces {
            repo,
            pristine,
            containment,
            declared,
            object_format: Arc::new(OnceLock::new()),
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

    /// What the agent of slot `slot` may write: its workspace, its
    /// temporary directory and the declared directories; it keeps the
    /// network.
    pub fn confine(&self, slot: &str, tmp: &Path) -> Confine {
        let mut writable = vec![self.path(slot), tmp.to_path_buf()];
        writable.extend(self.declared.iter().cloned());
        self.containment.confine(Policy {
            writable,
            network: true,
        })
    }

    /// Makes slot `slot` a clean copy of `commit`'s files with a fresh
    /// `.git` for the agent on `branch`. Returns its path.
    pub fn prepare(&self, slot: &str, commit: &str, branch: &str) -> Result<PathBuf, EngineError> {
        let dir = self.path(slot);
        let index = self.index(slot);
        remove_any(&dir.join(".git"))?;
        if !index.is_file() {
            // Nothing is known about what is there: start from nothing.
            fresh_dir(&dir)?;
            create_parent(&index)?;
        }
        reset_files(&self.repo, &index, &dir, commit)?;
        self.clean(&index, &dir)?;
        self.agent_git(&index, &dir, commit, branch)?;
        Ok(dir)
    }

    /// Removes what is not tracked. Ignore files the agent left behind are
    /// deleted first, so only the commit's own ignore rules keep anything
    /// (otherwise a leftover could ride into the next ticket's candidate).
    fn clean(&self, index: &Path, dir: &Path) -> Result<(), EngineError> {
        let strays = self
            .repo
            .own_git(index, dir)
            .args(["ls-files", "--others", "-z", "--", ":(glob)**/.gitignore"])
            .output()?;
        for rel in strays.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let path = dir.join(String::from_utf8_lossy(rel).as_ref());
            remove_any(&path)?;
        }
        let mode = if self.pristine { "-ffdx" } else { "-ffd" };
        self.repo
            .own_git(index, dir)
            .args(["clean", "-q", mode])
            .output()?;
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
        let dot_git = dir.join(".git");
        let format = self.object_format()?;
        let config = match format.as_str() {
            "sha1" => format!("[core]\n\trepositoryformatversion = 0\n{CORE}"),
            other => format!(
                "[core]\n\trepositoryformatversion = 1\n{CORE}[extensions]\n\tobjectformat = {other}\n"
            ),
        };
        write(&dot_git.join("config"), config.as_bytes())?;
        for empty in ["objects/pack", "refs/tags"] {
            let path = dot_git.join(empty);
            std::fs::create_dir_all(&path).map_err(|e| EngineError::io(&path, e))?;
        }
        let objects = self.repo.common_dir().join("objects");
        write(
            &dot_git.join("objects/info/alternates"),
            format!("{}\n", objects.display()).as_bytes(),
        )?;
        let branch_ref = format!("refs/heads/{branch}");
        write(&dot_git.join(&branch_ref), format!("{commit}\n").as_bytes())?;
        write(
            &dot_git.join("HEAD"),
            format!("ref: {branch_ref}\n").as_bytes(),
        )?;
        std::fs::copy(index, dot_git.join("index")).map_err(|e| EngineError::io(index, e))?;
        Ok(())
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
    /// workspace's; the agent's `.git` plays no part.
    pub fn tree(&self, slot: &str) -> Result<String, EngineError> {
        let dir = self.path(slot);
        let index = self.index(slot);
        self.repo
            .own_git(&index, &dir)
            .args(["add", "-A"])
            .output()?;
        Ok(self
            .repo
            .own_git(&index, &dir)
            .args(["write-tree"])
            .text()?)
    }
}

/// The rest of the `[core]` section `git init` writes on Linux.
const CORE: &str = "\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";

/// Makes the tracked files of `dir` those of `commit`, with `index` as
/// planwright's index: moves the index to `commit`, then writes back
/// every tracked file that differs from it (an agent or a gate changed it).
pub fn reset_files(repo: &Repo, index: &Path, dir: &Path, commit: &str) -> Result<(), EngineError> {
    let git = || repo.own_git(index, dir);
    if index.is_file() {
        git()
            .args(["read-tree", "--reset", "-u", commit])
            .output()?;
    } else {
        git().args(["read-tree", commit]).output()?;
        git().args(["checkout-index", "-a", "-f"]).output()?;
    }
    let dirty = git().args(["diff-files", "--name-only", "-z"]).output()?;
    let paths: Vec<String> = dirty
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    for chunk in paths.chunks(256) {
        git()
            .args(["checkout-index", "-f", "--"])
            .args(chunk)
            .output()?;
    }
    Ok(())
}

/// `path` emptied (created when missing).
pub fn fresh_dir(path: &Path) -> Result<PathBuf, EngineError> {
    remove_any(path)?;
    std::fs::create_dir_all(path).map_err(|e| EngineError::io(path, e))?;
    Ok(path.to_path_buf())
}

/// Removes whatever is at `path` (file, symlink or directory), never
/// following a symlink.
pub fn remove_any(path: &Path) -> Result<(), EngineError> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let done = if meta.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    done.map_err(|e| EngineError::io(path, e))
}

/// Creates the directory `path` goes in.
pub fn create_parent(path: &Path) -> Result<(), EngineError> {
    match path.parent() {
        Some(dir) => std::fs::create_dir_all(dir).map_err(|e| EngineError::io(dir, e)),
        None => Ok(()),
    }
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), EngineError> {
    create_parent(path)?;
    std::fs::write(path, bytes).map_err(|e| EngineError::io(path, e))
}
