//! The target repository: opening it, its base branch, its working tree, and
//! keeping `.planwright/` out of git's sight through `.git/info/exclude`.

use crate::error::EngineError;
use crate::git::Git;
use std::path::{Path, PathBuf};

/// The folder, inside the target repository, that holds planwright's state.
pub const STATE_DIR: &str = ".planwright";

/// An opened target repository.
#[derive(Debug, Clone)]
pub struct Repo {
    root: PathBuf,
}

impl Repo {
    /// Opens the repository whose working tree contains `dir`.
    pub fn open(dir: &Path) -> Result<Repo, EngineError> {
        if !dir.is_dir() {
            return Err(EngineError::repo(
                format!("`{}` is not a directory", dir.display()),
                "pass the target repository with `--repo DIR`",
            ));
        }
        let top = Git::new(dir)
            .args(["rev-parse", "--show-toplevel"])
            .text()
            .map_err(|_| {
                EngineError::repo(
                    format!("`{}` is not a git repository", dir.display()),
                    "run `git init` there and commit the base branch, or pass another `--repo`",
                )
            })?;
        Ok(Repo {
            root: PathBuf::from(top),
        })
    }

    /// The top of the working tree.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `.planwright/` in the repository.
    pub fn state_dir(&self) -> PathBuf {
        self.root.join(STATE_DIR)
    }

    /// A git command in the main working tree.
    pub fn git(&self) -> Git {
        Git::new(&self.root)
    }

    /// The commit `refs/heads/<base>` points at, if the branch exists.
    pub fn branch_tip(&self, base: &str) -> Result<Option<String>, EngineError> {
        let spec = format!("refs/heads/{base}^{{commit}}");
        let out = self
            .git()
            .args(["rev-parse", "--verify", "--quiet", &spec])
            .raw()?;
        Ok(out
            .status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()))
    }

    /// The tip of the base branch of a run in progress; its absence is an
    /// integrity error, since preflight checked that it exists.
    pub fn base_tip(&self, base: &str) -> Result<String, EngineError> {
        self.branch_tip(base)?.ok_or_else(|| {
            EngineError::Integrity(format!(
                "the base branch `{base}` disappeared during the run"
            ))
        })
    }

    /// Whether tracked files have no uncommitted changes (untracked files are allowed).
    pub fn is_clean(&self) -> Result<bool, EngineError> {
        let status = self
            .git()
            .args(["status", "--porcelain", "--untracked-files=no"])
            .text()?;
        Ok(status.is_empty())
    }

    /// The branch the main working tree has checked out, if any.
    pub fn checked_out_branch(&self) -> Result<Option<String>, EngineError> {
        let out = self.git().args(["symbolic-ref", "-q", "HEAD"]).raw()?;
        Ok(out.status.success().then(|| {
            let full = String::from_utf8_lossy(&out.stdout).trim().to_string();
            full.strip_prefix("refs/heads/")
                .unwrap_or(&full)
                .to_string()
        }))
    }

    /// Adds `/.planwright/` to `.git/info/exclude` (never to `.gitignore`).
    pub fn ensure_excluded(&self) -> Result<(), EngineError> {
        let rel = self
            .git()
            .args(["rev-parse", "--git-path", "info/exclude"])
            .text()?;
        let path = self.root.join(rel);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        let line = format!("/{STATE_DIR}/");
        if current.lines().any(|l| l.trim() == line) {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| EngineError::io(dir, e))?;
        }
        let sep = if current.is_empty() || current.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        std::fs::write(&path, format!("{current}{sep}{line}\n"))
            .map_err(|e| EngineError::io(&path, e))
    }

    /// The text of `path` at `rev`, or None when it does not exist there.
    pub fn file_at(&self, rev: &str, path: &str) -> Result<Option<String>, EngineError> {
        let out = self
            .git()
            .args(["cat-file", "blob", &format!("{rev}:{path}")])
            .raw()?;
        Ok(out
            .status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned()))
    }
}
