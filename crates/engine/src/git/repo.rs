//! The target repository: opening it, its base branch, its working tree,
//! keeping `.planwright/` out of git's sight through `.git/info/exclude`,
//! the configuration that would run programs inside planwright's own git
//! calls, and planwright's private git directory.

use crate::error::EngineError;
use crate::git::worktree::WorkTree;
use crate::git::Git;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The folder, inside the target repository, that holds planwright's state.
pub(crate) const STATE_DIR: &str = ".planwright";

/// An opened target repository.
#[derive(Debug, Clone)]
pub struct Repo {
    root: PathBuf,
    /// The git directory of this checkout (`.git`, or `.git/worktrees/x`).
    git_dir: PathBuf,
    /// The common git directory (refs, objects, config, hooks).
    common_dir: PathBuf,
    /// Creating the private git directory once, whichever slot asks first.
    own_git_made: Arc<Mutex<bool>>,
    /// The identity variables planwright's commits need, asked once.
    identity: Arc<std::sync::OnceLock<Vec<(String, String)>>>,
    /// The candidates this process committed, each with its parent and
    /// message (see [`Repo::made_candidate`]).
    own_candidates: Arc<Mutex<HashMap<String, (String, String)>>>,
}

impl Repo {
    /// Opens the repository whose working tree contains `dir`.
    pub fn open(dir: &Path) -> Result<Repo, EngineError> {
        if !dir.is_dir() {
            return Err(EngineError::repo(
                format!("`{}` is not a directory", dir.display()),
                format!(
                    "pass the target repository with `{} DIR`",
                    planwright_plan::Flag::Repo
                ),
            ));
        }
        let top = Git::find(dir)
            .args(["rev-parse", "--show-toplevel"])
            .text()
            .map_err(|_| {
                EngineError::repo(
                    format!("`{}` is not a git repository", dir.display()),
                    format!(
                        "run `git init` there and commit the base branch, or pass another `{}`",
                        planwright_plan::Flag::Repo
                    ),
                )
            })?;
        let root = PathBuf::from(top);
        let dirs = Git::find(&root)
            .args([
                "rev-parse",
                "--path-format=absolute",
                "--git-dir",
                "--git-common-dir",
            ])
            .text()?;
        let mut lines = dirs.lines().map(PathBuf::from);
        let (Some(git_dir), Some(common_dir)) = (lines.next(), lines.next()) else {
            return Err(EngineError::Internal(format!(
                "`git rev-parse` gave no git directory for `{}`",
                root.display()
            )));
        };
        Ok(Repo {
            root,
            git_dir,
            common_dir,
            own_git_made: Arc::new(Mutex::new(false)),
            identity: Arc::default(),
            own_candidates: Arc::default(),
        })
    }

    /// Makes a new repository at `dir`, its first branch `branch`, and
    /// opens it.
    pub(crate) fn init(dir: &Path, branch: &str) -> Result<Repo, EngineError> {
        Git::outside()
            .args(["init", "-q", "-b", branch])
            .arg(dir)
            .output()?;
        Repo::open(dir)
    }

    /// Notes that planwright itself committed candidate `commit` on `parent`
    /// with `message`. Such a commit is the one a merge onto `parent` would
    /// make, so it can land as it is; a commit only an executor vouches
    /// for is always merged.
    pub(crate) fn made_candidate(&self, commit: &str, parent: &str, message: &str) {
        self.own_candidates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(commit.into(), (parent.into(), message.into()));
    }

    /// Whether this process committed candidate `commit` on `parent` with
    /// `message` ([`Repo::made_candidate`]). It is asked once, when the
    /// candidate lands, so the answer is forgotten.
    pub(crate) fn take_own_candidate(&self, commit: &str, parent: &str, message: &str) -> bool {
        let made = self
            .own_candidates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(commit);
        made.is_some_and(|(p, m)| p == parent && m == message)
    }

    /// The author and committer variables for a name or email that neither
    /// the environment nor the repository's own configuration gives (global
    /// config is never read). Asked once: a run makes a commit per ticket.
    pub fn default_identity(&self) -> &[(String, String)] {
        self.identity.get_or_init(|| {
            let mut env = Vec::new();
            for (key, var, default) in [
                ("user.name", "NAME", "planwright"),
                ("user.email", "EMAIL", "planwright@localhost"),
            ] {
                let configured = self
                    .git()
                    .args(["config", "--get", key])
                    .succeeds()
                    .unwrap_or(false);
                for who in ["AUTHOR", "COMMITTER"] {
                    let name = format!("GIT_{who}_{var}");
                    if !configured && std::env::var_os(&name).is_none() {
                        env.push((name, default.to_string()));
                    }
                }
            }
            env
        })
    }

    /// The git directory of the checkout `--repo` names.
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The common git directory: refs, objects, config, hooks.
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// planwright's own git directory, `.planwright/git`: its config is
    /// planwright's alone (plus the keys `[git] allow_config` accepts), and
    /// it borrows nothing of the user's but the object store, where it
    /// writes the objects of candidates so the repository has them.
    pub fn own_git_dir(&self) -> PathBuf {
        self.state_dir().join("git")
    }

    /// planwright's git on `work_tree` with its own git directory and the
    /// index file `index`: never the work tree's `.git`, never the user's
    /// config.
    pub fn own_tree(&self, index: &Path, work_tree: &Path) -> WorkTree {
        WorkTree::with_index(self.own_git(index, work_tree), index.to_path_buf())
    }

    /// [`Repo::own_tree`] for an index only planwright's git reads: its
    /// writes leave out the trailing checksum (`index.skipHash`), a SHA-1
    /// of the whole file that git checks only in `fsck` and that costs as
    /// much as the rest of writing it, more with every file a run adds.
    pub fn own_tree_unhashed(&self, index: &Path, work_tree: &Path) -> WorkTree {
        let git = (self.own_git(index, work_tree)).args(["-c", "index.skipHash=true"]);
        WorkTree::with_index(git, index.to_path_buf())
    }

    fn own_git(&self, index: &Path, work_tree: &Path) -> Git {
        Git::with_tree(self.own_git_dir(), work_tree)
            .env("GIT_INDEX_FILE", index.display().to_string())
            .env(
                "GIT_OBJECT_DIRECTORY",
                self.common_dir.join("objects").display().to_string(),
            )
    }

    /// Creates `.planwright/git` when missing, with the accepted keys of
    /// the user's configuration (an allowed LFS filter must apply to the
    /// candidate too).
    pub fn ensure_own_git(&self, allow: &[String]) -> Result<(), EngineError> {
        let mut made = self.own_git_made.lock().unwrap_or_else(|e| e.into_inner());
        if *made {
            return Ok(());
        }
        let dir = self.own_git_dir();
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| EngineError::io(&dir, e))?;
        }
        let format = self
            .git()
            .args(["rev-parse", "--show-object-format"])
            .text()?;
        Git::outside()
            .args(["init", "-q", "--bare", "--template="])
            .arg(format!("--object-format={format}"))
            .arg(&dir)
            .output()?;
        Git::bare(&dir)
            .args(["config", "core.bare", "false"])
            .output()?;
        for (key, value) in self.config_entries()? {
            if accepted(&key, allow) {
                Git::bare(&dir)
                    .args(["config", "--add", &key, &value])
                    .output()?;
            }
        }
        *made = true;
        Ok(())
    }

    /// The repository's own configuration (`config` and `config.worktree`,
    /// includes not followed), as (lower-cased section and key, value).
    pub fn config_entries(&self) -> Result<Vec<(String, String)>, EngineError> {
        let mut entries = Vec::new();
        for file in [
            self.common_dir.join("config"),
            self.git_dir.join("config.worktree"),
        ] {
            if !file.is_file() {
                continue;
            }
            let out = Git::outside()
                .args(["config", "--no-includes", "--list", "-z", "--file"])
                .arg(&file)
                .output()?;
            for item in out.stdout.split(|b| *b == 0).filter(|i| !i.is_empty()) {
                let item = String::from_utf8_lossy(item);
                let (key, value) = item.split_once('\n').unwrap_or((&item, ""));
                entries.push((key.to_string(), value.to_string()));
            }
        }
        Ok(entries)
    }

    /// The keys of the repository's configuration that would run a program,
    /// or change which files or repository planwright's git works on,
    /// except those `allow` accepts by name.
    pub fn risky_config(&self, allow: &[String]) -> Result<Vec<String>, EngineError> {
        let mut found: Vec<String> = self
            .config_entries()?
            .into_iter()
            .filter(|(k, v)| risky(k, v) && !accepted(k, allow))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        found.dedup();
        Ok(found)
    }

    /// The top of the working tree.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `.planwright/` in the repository.
    pub fn state_dir(&self) -> PathBuf {
        self.root.join(STATE_DIR)
    }

    /// A git command on the user's repository and its main working tree.
    pub(in crate::git) fn git(&self) -> Git {
        Git::with_tree(&self.git_dir, &self.root)
    }

    /// The commit `refs/heads/<base>` points at, if the branch exists.
    pub fn branch_tip(&self, base: &str) -> Result<Option<String>, EngineError> {
        self.ref_tip(&format!("refs/heads/{base}"))
    }

    /// The commit `name` (a full ref) points at, if it exists.
    pub fn ref_tip(&self, name: &str) -> Result<Option<String>, EngineError> {
        let spec = format!("{name}^{{commit}}");
        Ok((self.git())
            .args(["rev-parse", "--verify", "--quiet", &spec])
            .text_if_success()?)
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
        Ok(self.changed_files()?.is_empty())
    }

    /// The tracked files with uncommitted changes, staged or not, as git
    /// names them (untracked files are not).
    pub fn changed_files(&self) -> Result<Vec<String>, EngineError> {
        let status = self
            .git()
            .args([
                "status",
                "--porcelain=v1",
                "-z",
                "--no-renames",
                "--untracked-files=no",
            ])
            .text()?;
        // Each record is `XY PATH`, NUL-terminated.
        Ok(status
            .split('\0')
            .filter_map(|record| record.get(3..))
            .filter(|path| !path.is_empty())
            .map(str::to_string)
            .collect())
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

    /// Whether git tracks the file `rel` (a path from the root, taken
    /// literally, not as a pattern) in the index of the user's checkout.
    pub fn tracks(&self, rel: &str) -> Result<bool, EngineError> {
        let literal = format!(":(literal){rel}");
        let out = self
            .git()
            .args(["ls-files", "-z", "--", &literal])
            .output()?;
        Ok(!out.stdout.is_empty())
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

/// Whether the configuration entry `key = value` runs a program in, or
/// redirects, git calls planwright makes.
pub(crate) fn risky(key: &str, value: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let parts: Vec<&str> = key.split('.').collect();
    let (section, name) = (parts[0], *parts.last().unwrap_or(&""));
    let truthy = !matches!(
        value.to_ascii_lowercase().as_str(),
        "false" | "no" | "off" | "0" | ""
    );
    match section {
        "filter" => true,
        "include" | "includeif" => true,
        "merge" => parts.len() > 2 && name == "driver",
        "diff" => matches!(name, "command" | "textconv" | "external"),
        "core" => match name {
            // `hooksPath` and `attributesFile` are not here: every trusted
            // call overrides them, and husky-style hook folders are common.
            "worktree" | "sshcommand" | "askpass" | "gitproxy" | "alternaterefscommand" => true,
            "bare" | "fsmonitor" => truthy,
            _ => false,
        },
        "gpg" => name == "program",
        "uploadpack" => name == "packobjectshook",
        _ => false,
    }
}

/// Whether `key` is on the `[git] allow_config` list (section and key
/// names compare case-insensitively, like git's).
pub(crate) fn accepted(key: &str, allow: &[String]) -> bool {
    allow.iter().any(|a| a.eq_ignore_ascii_case(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn risky_keys_are_the_ones_that_run_programs_or_redirect_git() {
        for (k, v) in [
            ("filter.lfs.clean", "git-lfs clean -- %f"),
            ("merge.ours.driver", "true"),
            ("diff.x.textconv", "cat"),
            ("include.path", "x"),
            ("includeif.gitdir:/x/.path", "y"),
            ("core.worktree", "/elsewhere"),
            ("core.bare", "true"),
            ("core.fsmonitor", "/tmp/x"),
            ("core.sshcommand", "ssh -i k"),
        ] {
            assert!(risky(k, v), "{k}");
        }
        for (k, v) in [
            ("core.bare", "false"),
            ("core.fsmonitor", "false"),
            ("core.hookspath", ".husky"),
            ("merge.conflictstyle", "diff3"),
            ("user.name", "x"),
            ("remote.origin.url", "x"),
        ] {
            assert!(!risky(k, v), "{k}");
        }
        assert!(accepted("filter.lfs.clean", &["Filter.LFS.Clean".into()]));
    }

    #[test]
    fn only_a_candidate_made_here_on_that_parent_with_that_message_is_own() {
        let dir = tempfile::tempdir().unwrap();
        Git::outside()
            .args(["init", "-q"])
            .arg(dir.path())
            .output()
            .unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        assert!(!repo.take_own_candidate("c1", "p", "m"), "made elsewhere");
        repo.made_candidate("c1", "p", "m");
        repo.made_candidate("c2", "p", "m");
        repo.made_candidate("c3", "p", "m");
        assert!(!repo.take_own_candidate("c1", "q", "m"), "another parent");
        assert!(!repo.take_own_candidate("c2", "p", "n"), "another message");
        assert!(repo.take_own_candidate("c3", "p", "m"));
        assert!(!repo.take_own_candidate("c3", "p", "m"), "asked once");
    }
}
