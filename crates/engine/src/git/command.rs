//! The one way planwright runs git: explicit repository, no hooks, no global
//! or system configuration, no attributes or programs from outside the
//! repository, no replace refs, no automatic gc, no prompts, stable output.
//! Repository-defined programs (filters, merge and diff drivers, includes)
//! are refused before a run starts (see [`crate::git::repo::Repo::risky_config`]);
//! what this builder sets makes sure nothing else runs.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub(crate) use crate::error::GitError;

/// `-c` overrides of every trusted git call: no hooks, no fsmonitor, no
/// attributes file, no signing, no line-ending conversion, no automatic gc
/// or maintenance (which would rewrite `packed-refs` under the integrity
/// snapshots).
const HARDENING: &[&str] = &[
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.attributesFile=/dev/null",
    "-c",
    "core.autocrlf=false",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "tag.gpgsign=false",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    "-c",
    "advice.detachedHead=false",
];

/// A git command under construction, hardened for trusted use. It never
/// looks for a repository: it names the git directory (and the work tree)
/// it works on, so a `.git` an agent or a gate planted in a directory is
/// never consulted (see [`Git::bare`], [`Git::with_tree`], [`Git::outside`],
/// and [`Git::find`] for the one directory the user names).
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
    args: Vec<std::ffi::OsString>,
    envs: Vec<(String, String)>,
    input: Option<Vec<u8>>,
    /// Only [`Git::find`] searches (upwards from the user's directory).
    search: bool,
}

impl Git {
    fn in_dir(dir: &Path, args: Vec<std::ffi::OsString>) -> Git {
        Git {
            dir: dir.to_path_buf(),
            args,
            envs: Vec::new(),
            input: None,
            search: false,
        }
    }

    /// git on the repository whose git directory is `git_dir`, without a
    /// work tree (refs, objects, `merge-tree`, `update-ref`).
    pub fn bare(git_dir: impl AsRef<Path>) -> Git {
        let git_dir = git_dir.as_ref();
        Git::in_dir(git_dir, vec![git_dir_arg(git_dir)])
    }

    /// git on `work_tree` with the git directory `git_dir` (a directory, or
    /// the `.git` file of a linked worktree), run from the top of `work_tree`.
    pub fn with_tree(git_dir: impl AsRef<Path>, work_tree: impl AsRef<Path>) -> Git {
        let work_tree = work_tree.as_ref();
        let mut tree = std::ffi::OsString::from("--work-tree=");
        tree.push(work_tree);
        Git::in_dir(work_tree, vec![git_dir_arg(git_dir.as_ref()), tree])
    }

    /// git outside any repository (`init` of a new one, `--version`): it
    /// runs in `/`, where no one but root could plant a `.git`.
    pub fn outside() -> Git {
        Git::in_dir(Path::new("/"), Vec::new())
    }

    /// The repository whose working tree contains `dir`, a directory the
    /// user named (`--repo`): the only search planwright's git makes. Use
    /// it to learn the repository's git directory, then [`Git::with_tree`].
    pub fn find(dir: impl AsRef<Path>) -> Git {
        Git {
            search: true,
            ..Git::in_dir(dir.as_ref(), Vec::new())
        }
    }

    /// Gives the command `bytes` on its standard input (else it reads nothing).
    pub fn input(mut self, bytes: impl Into<Vec<u8>>) -> Git {
        self.input = Some(bytes.into());
        self
    }

    /// Sets an environment variable for this command only.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Git {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Git {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Git
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.current_dir(&self.dir);
        // Whatever planwright's own environment says about git (a config
        // injected through GIT_CONFIG_PARAMETERS, another object directory,
        // an external diff) must not reach the commands it trusts.
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("GIT_") {
                cmd.env_remove(name);
            }
        }
        if !self.search {
            // Should a command look for a repository after all, it finds
            // none above where it runs.
            cmd.env("GIT_CEILING_DIRECTORIES", &self.dir);
        }
        cmd.args(HARDENING)
            .args(&self.args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null());
        cmd
    }

    /// Runs the command to its end, feeding it its input.
    fn run(&self, mut cmd: Command) -> Result<Output, GitError> {
        let Some(input) = &self.input else {
            return cmd.output().map_err(|e| self.spawn_error(e));
        };
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.spawn_error(e))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A command that exits early closes the pipe; its exit says why.
            let _ = std::io::Write::write_all(&mut stdin, input);
        }
        child.wait_with_output().map_err(GitError::Spawn)
    }

    fn describe(&self) -> String {
        self.args
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Runs the command; a non-zero exit is an error carrying git's stderr.
    pub fn output(&self) -> Result<Output, GitError> {
        let out = self.run(self.command())?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(GitError::Failed {
                args: self.describe(),
                dir: self.dir.display().to_string(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    }

    /// Runs the command and returns its output whatever the exit status
    /// (for commands whose exit code is an answer, like `merge-tree`).
    pub fn raw(&self) -> Result<Output, GitError> {
        self.run(self.command())
    }

    fn spawn_error(&self, e: std::io::Error) -> GitError {
        if self.dir.is_dir() {
            GitError::Spawn(e)
        } else {
            GitError::NoDir(self.dir.display().to_string())
        }
    }

    /// The error for a raw output that did not exit 0.
    pub fn failure(&self, out: &Output) -> GitError {
        GitError::Failed {
            args: self.describe(),
            dir: self.dir.display().to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }
    }

    /// Runs the command and returns its stdout as text, trailing newline removed.
    pub fn text(&self) -> Result<String, GitError> {
        let out = self.output()?;
        let mut s =
            String::from_utf8(out.stdout).map_err(|_| GitError::NotUtf8(self.describe()))?;
        while s.ends_with('\n') {
            s.pop();
        }
        Ok(s)
    }

    /// Runs the command and reports only whether it exited 0 (for `rev-parse --verify` and the like).
    pub fn succeeds(&self) -> Result<bool, GitError> {
        let mut cmd = self.command();
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        Ok(self.run(cmd)?.status.success())
    }
}

/// `--git-dir=<dir>`.
fn git_dir_arg(dir: &Path) -> std::ffi::OsString {
    let mut arg = std::ffi::OsString::from("--git-dir=");
    arg.push(dir);
    arg
}

/// The files git tracks at `rev` in the repository the user named with
/// `repo` (a directory in its working tree), sorted.
pub fn tracked_files(repo: &Path, rev: &str) -> Result<Vec<String>, GitError> {
    let out = Git::find(repo)
        .args(["ls-tree", "-r", "-z", "--name-only", "--full-tree", rev])
        .output()?;
    let mut files: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    files.sort();
    Ok(files)
}
