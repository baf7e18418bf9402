//! The worktree pool: one worktree per job slot under
//! `.planwright/worktrees/<slot>`, reset to a new commit between tickets
//! (checkout, then clean) instead of created fresh, with the project's
//! set-up commands run once per slot.

use crate::error::EngineError;
use crate::git::Git;
use crate::process::{self, Cancel, Spec};
use crate::repo::Repo;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How worktrees are prepared.
#[derive(Debug, Clone, Default)]
pub struct PoolSettings {
    /// Commands run once in each new slot (`[worktree] setup`).
    pub setup: Vec<Vec<String>>,
    /// Also remove ignored files between tickets.
    pub pristine: bool,
    /// Time limit of each set-up command.
    pub setup_timeout: Option<Duration>,
}

/// The pool. Clones share one creation lock.
#[derive(Debug, Clone)]
pub struct Pool {
    repo: Repo,
    settings: PoolSettings,
    // `git worktree prune` and `git worktree add` of two slots must not
    // interleave: prune deletes the other's half-made administrative folder.
    creating: Arc<Mutex<()>>,
    /// The repository's common git dir, asked of git once.
    common_dir: Arc<OnceLock<PathBuf>>,
}

impl Pool {
    /// A pool for `repo`.
    pub fn new(repo: Repo, settings: PoolSettings) -> Pool {
        Pool {
            repo,
            settings,
            creating: Arc::new(Mutex::new(())),
            common_dir: Arc::new(OnceLock::new()),
        }
    }

    /// Where slot `name` lives.
    pub fn path(&self, name: &str) -> PathBuf {
        self.repo.state_dir().join("worktrees").join(name)
    }

    /// git in slot `name`, its administrative folder named explicitly. The
    /// slot's `.git` file is in the agent's reach: one rewritten to point
    /// elsewhere (at the user's own `.git`, say) must not redirect
    /// planwright's `checkout`, `add` or `write-tree` to another index.
    pub fn git(&self, name: &str) -> Result<Git, EngineError> {
        let path = self.path(name);
        Ok(Git::new(&path)
            .arg(format!("--git-dir={}", self.admin_dir(name)?.display()))
            .arg(format!("--work-tree={}", path.display())))
    }

    /// `<common git dir>/worktrees/<name>`, where `git worktree add` keeps
    /// the slot's HEAD and index (slot names are unique and stale entries
    /// are pruned first, so git uses the name as it is).
    fn admin_dir(&self, name: &str) -> Result<PathBuf, EngineError> {
        let common = match self.common_dir.get() {
            Some(dir) => dir,
            None => {
                let text = self
                    .repo
                    .git()
                    .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
                    .text()?;
                self.common_dir.get_or_init(|| PathBuf::from(text.trim()))
            }
        };
        Ok(common.join("worktrees").join(name))
    }

    /// Makes slot `name` a clean checkout of `commit`, on `branch` when
    /// given (reset to `commit`), detached otherwise. Returns its path.
    pub fn prepare(
        &self,
        name: &str,
        commit: &str,
        branch: Option<&str>,
        cancel: &Cancel,
    ) -> Result<PathBuf, EngineError> {
        let path = self.path(name);
        // A slot whose registration git no longer knows (pruned) is made anew.
        let fresh = !path.join(".git").exists() || !self.admin_dir(name)?.join("gitdir").is_file();
        if fresh {
            let _guard = self.creating.lock().unwrap_or_else(|e| e.into_inner());
            if path.exists() {
                std::fs::remove_dir_all(&path).map_err(|e| EngineError::io(&path, e))?;
            }
            self.repo.git().args(["worktree", "prune"]).output()?;
            self.repo
                .git()
                .args(["worktree", "add", "--force", "--detach"])
                .arg(&path)
                .arg(commit)
                .output()?;
            if !self.admin_dir(name)?.join("gitdir").is_file() {
                return Err(EngineError::Integrity(format!(
                    "git registered the worktree `{}` under another name; run `git worktree prune` and try again",
                    path.display()
                )));
            }
        }
        let wt = self.git(name)?;
        match branch {
            Some(b) => wt
                .args([
                    "checkout",
                    "--force",
                    "--ignore-other-worktrees",
                    "-B",
                    b,
                    commit,
                ])
                .output()?,
            None => wt
                .args(["checkout", "--force", "--detach", commit])
                .output()?,
        };
        let clean = if self.settings.pristine {
            "-ffdx"
        } else {
            "-ffd"
        };
        self.git(name)?.args(["clean", clean]).output()?;
        if fresh {
            self.setup(&path, cancel)?;
        }
        Ok(path)
    }

    fn setup(&self, path: &std::path::Path, cancel: &Cancel) -> Result<(), EngineError> {
        for argv in &self.settings.setup {
            let spec = Spec {
                argv: argv.clone(),
                cwd: path.to_path_buf(),
                env: process::inherited_env(),
                stdin: None,
                timeout: self.settings.setup_timeout,
                grace: Duration::from_secs(5),
                log: None,
                lines: None,
            };
            let done = process::run(&spec, cancel)?;
            if !done.success() {
                // A half-set-up slot must not be reused as if it were ready.
                let _ = std::fs::remove_file(path.join(".git"));
                return Err(EngineError::Settings(format!(
                    "worktree set-up `{}` failed ({}):\n{}",
                    argv.join(" "),
                    done.exit,
                    done.output_tail
                )));
            }
        }
        Ok(())
    }
}
