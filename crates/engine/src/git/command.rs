//! The one way planwright runs git: explicit repository, no hooks, no global
//! or system configuration (but for the keys [`RemoteAccess`] reads, given
//! only to the commands that talk to the forge's remote), no attributes or
//! programs from outside the repository, no replace refs, no automatic gc,
//! no prompts, stable output.
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
pub(crate) struct Git {
    dir: PathBuf,
    args: Vec<std::ffi::OsString>,
    envs: Vec<(String, String)>,
    input: Option<Vec<u8>>,
    /// Only [`Git::find`] searches (upwards from the user's directory).
    search: bool,
    /// Only [`RemoteAccess::read`] reads the user's global config.
    user_global: bool,
}

impl Git {
    fn in_dir(dir: &Path, args: Vec<std::ffi::OsString>) -> Git {
        Git {
            dir: dir.to_path_buf(),
            args,
            envs: Vec::new(),
            input: None,
            search: false,
            user_global: false,
        }
    }

    /// git on the repository whose git directory is `git_dir`, without a
    /// work tree (refs, objects, `merge-tree`, `update-ref`).
    pub(in crate::git) fn bare(git_dir: impl AsRef<Path>) -> Git {
        let git_dir = git_dir.as_ref();
        Git::in_dir(git_dir, vec![git_dir_arg(git_dir)])
    }

    /// git on `work_tree` with the git directory `git_dir` (a directory, or
    /// the `.git` file of a linked worktree), run from the top of `work_tree`.
    pub(in crate::git) fn with_tree(git_dir: impl AsRef<Path>, work_tree: impl AsRef<Path>) -> Git {
        let work_tree = work_tree.as_ref();
        let mut tree = std::ffi::OsString::from("--work-tree=");
        tree.push(work_tree);
        Git::in_dir(work_tree, vec![git_dir_arg(git_dir.as_ref()), tree])
    }

    /// git outside any repository (`init` of a new one, `--version`): it
    /// runs in `/`, where no one but root could plant a `.git`.
    pub(in crate::git) fn outside() -> Git {
        Git::in_dir(Path::new("/"), Vec::new())
    }

    /// The repository whose working tree contains `dir`, a directory the
    /// user named (`--repo`): the only search planwright's git makes. Use
    /// it to learn the repository's git directory, then [`Git::with_tree`].
    pub(in crate::git) fn find(dir: impl AsRef<Path>) -> Git {
        Git {
            search: true,
            ..Git::in_dir(dir.as_ref(), Vec::new())
        }
    }

    /// Gives the command `bytes` on its standard input (else it reads nothing).
    pub(in crate::git) fn input(mut self, bytes: impl Into<Vec<u8>>) -> Git {
        self.input = Some(bytes.into());
        self
    }

    /// Sets an environment variable for this command only.
    pub(in crate::git) fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Git {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Appends one argument.
    pub(in crate::git) fn arg(mut self, arg: impl AsRef<OsStr>) -> Git {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Appends arguments.
    pub(in crate::git) fn args<I, S>(mut self, args: I) -> Git
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
        cmd.args(HARDENING).args(&self.args);
        match (self.user_global, std::env::var_os("GIT_CONFIG_GLOBAL")) {
            // The user's own choice of global file, for that one read.
            (true, Some(file)) => cmd.env("GIT_CONFIG_GLOBAL", file),
            (true, None) => &mut cmd,
            (false, _) => cmd.env("GIT_CONFIG_GLOBAL", "/dev/null"),
        };
        cmd.env("GIT_CONFIG_NOSYSTEM", "1")
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
    pub(in crate::git) fn output(&self) -> Result<Output, GitError> {
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
    pub(in crate::git) fn raw(&self) -> Result<Output, GitError> {
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
    pub(in crate::git) fn failure(&self, out: &Output) -> GitError {
        GitError::Failed {
            args: self.describe(),
            dir: self.dir.display().to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }
    }

    /// Runs the command and returns its stdout as text, trailing newline removed.
    pub(in crate::git) fn text(&self) -> Result<String, GitError> {
        let out = self.output()?;
        let mut s =
            String::from_utf8(out.stdout).map_err(|_| GitError::NotUtf8(self.describe()))?;
        while s.ends_with('\n') {
            s.pop();
        }
        Ok(s)
    }

    /// Runs the command: its stdout, trimmed, when it exited 0, else None
    /// (for commands whose failure is an answer: no such ref, no such remote).
    pub(in crate::git) fn text_if_success(&self) -> Result<Option<String>, GitError> {
        let out = self.raw()?;
        Ok(out
            .status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()))
    }

    /// Runs the command and reports only whether it exited 0 (for `rev-parse --verify` and the like).
    pub(in crate::git) fn succeeds(&self) -> Result<bool, GitError> {
        let mut cmd = self.command();
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        Ok(self.run(cmd)?.status.success())
    }
}

/// The keys of the user's global git config that say how a remote is
/// reached, and nothing else: `url.<base>.insteadOf` and `pushInsteadOf`
/// (a URL the user abbreviates or reroutes), `core.sshCommand` and
/// `ssh.variant` (the ssh program and how git speaks to it). Matched
/// against git's canonical names (section and key in lower case).
const REMOTE_KEYS: &str = r"^(url\..*\.(insteadof|pushinsteadof)|core\.sshcommand|ssh\.variant)$";

/// How the user reaches remotes, from their global git config: the few
/// keys of [`REMOTE_KEYS`], read once with `git config --get-regexp`
/// (which runs nothing) and given back to the commands that talk to the
/// forge's remote (`remote get-url --push`, `push`) as configuration of
/// that command only. Every other key of the global config (hooks,
/// `core.fsmonitor`, credential helpers, aliases...) stays unread, as for
/// every trusted git call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RemoteAccess {
    /// `url.<base>.insteadof` and `pushinsteadof`, in the file's order.
    urls: Vec<(String, String)>,
    /// `core.sshcommand` and `ssh.variant`.
    ssh: Vec<(String, String)>,
}

impl RemoteAccess {
    /// Reads the keys from the user's global git config (`~/.gitconfig`
    /// and `$XDG_CONFIG_HOME/git/config`, or the file `GIT_CONFIG_GLOBAL`
    /// names, with their `include`s); none when there is none.
    pub(crate) fn read() -> Result<RemoteAccess, GitError> {
        let git = Git {
            user_global: true,
            ..Git::outside()
        }
        .args(["config", "--global", "--includes", "-z", "--get-regexp"])
        .arg(REMOTE_KEYS);
        let out = git.raw()?;
        match out.status.code() {
            Some(0) => Ok(RemoteAccess::parse(&out.stdout)),
            // No key matched, or there is no global file.
            Some(1) => Ok(RemoteAccess::default()),
            _ => Err(git.failure(&out)),
        }
    }

    /// `-z` output: `key\nvalue\0` per entry (a key without a value has
    /// no newline, and is skipped: none of these keys is a flag).
    fn parse(out: &[u8]) -> RemoteAccess {
        let mut access = RemoteAccess::default();
        for entry in out.split(|b| *b == 0).filter(|e| !e.is_empty()) {
            let entry = String::from_utf8_lossy(entry);
            let Some((key, value)) = entry.split_once('\n') else {
                continue;
            };
            let pair = (key.to_string(), value.to_string());
            if key.starts_with("url.") {
                access.urls.push(pair);
            } else {
                access.ssh.push(pair);
            }
        }
        access
    }

    /// The URL keys (for `remote get-url --push`, which applies them).
    pub(crate) fn urls(&self) -> &[(String, String)] {
        &self.urls
    }

    /// The ssh keys (for the push to the URL already rewritten: applying
    /// the URL keys a second time could rewrite it twice).
    pub(crate) fn ssh(&self) -> &[(String, String)] {
        &self.ssh
    }
}

impl Git {
    /// Gives this command `pairs` as configuration of its own, through
    /// `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` (no
    /// quoting: a URL with `=` in it stays whole, as it would not in `-c`).
    pub(in crate::git) fn config_pairs(mut self, pairs: &[(String, String)]) -> Git {
        if pairs.is_empty() {
            return self;
        }
        self = self.env("GIT_CONFIG_COUNT", pairs.len().to_string());
        for (i, (key, value)) in pairs.iter().enumerate() {
            self = self
                .env(format!("GIT_CONFIG_KEY_{i}"), key)
                .env(format!("GIT_CONFIG_VALUE_{i}"), value);
        }
        self
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

#[cfg(test)]
mod tests {
    use super::RemoteAccess;

    #[test]
    fn remote_keys_are_read_as_git_lists_them() {
        let out = b"url.git@github.com:.insteadof\nhttps://github.com/\0core.sshcommand\nssh -i k\0url.x=y.pushinsteadof\nz:\0ssh.variant\0";
        let access = RemoteAccess::parse(out);
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            access.urls(),
            [
                pair("url.git@github.com:.insteadof", "https://github.com/"),
                pair("url.x=y.pushinsteadof", "z:")
            ]
        );
        // A key without a value (`ssh.variant` alone) is no setting.
        assert_eq!(access.ssh(), [pair("core.sshcommand", "ssh -i k")]);
    }
}
