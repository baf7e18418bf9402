//! Typed git operations that talk to a forge's remote: the URL a push
//! goes to, as the user's own config rewrites it, and the push and fetch
//! commands, run as the user reaches the remote (their ssh settings, or a
//! token over https through a credential helper of that command only).
//! Delivery calls these by name and decides what their answers mean; none
//! of it builds git's argv itself.

use crate::git::repo::Repo;
use crate::git::{Git, GitError, RemoteAccess};
use planwright_config::Secret;
use std::process::Output;

/// The variable of the git child that holds the token for the helper.
const TOKEN_VAR: &str = "PLANWRIGHT_PUSH_TOKEN";
/// The variable of the git child that holds the user name for the helper.
const USER_VAR: &str = "PLANWRIGHT_PUSH_USER";

/// The credential helper: answers `get` with the user and the token from
/// its environment, and ignores `store` and `erase` (nothing is kept).
const HELPER: &str = "!f() { test \"$1\" = get || exit 0; echo \"username=${PLANWRIGHT_PUSH_USER}\"; echo \"password=${PLANWRIGHT_PUSH_TOKEN}\"; }; f";

/// How one command reaches the remote.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reach<'a> {
    /// Over https (else ssh, or a local path).
    pub(crate) http: bool,
    /// For https: the user name the forge accepts beside a token, and the
    /// token, given to git through [`HELPER`].
    pub(crate) token: Option<(&'a str, &'a Secret)>,
}

/// A command to the remote, ready to run (and to run again).
#[derive(Debug, Clone)]
pub(crate) struct RemoteCommand {
    git: Git,
}

impl RemoteCommand {
    /// Runs it to its end; its output whatever its exit.
    pub(crate) fn run(&self) -> Result<Output, GitError> {
        self.git.raw()
    }
}

/// The URL git pushes to for `remote`, rewritten as the user's global
/// `url.<base>.insteadOf` and `pushInsteadOf` say (see [`RemoteAccess`]),
/// or None when the repository has no such remote.
pub(crate) fn push_url(repo: &Repo, remote: &str) -> Result<Option<String>, GitError> {
    let access = RemoteAccess::read()?;
    (repo.git())
        .config_pairs(access.urls())
        .args(["remote", "get-url", "--push", remote])
        .text_if_success()
}

/// `push --porcelain` of `commit` to `target` (a full ref) of `url`, with
/// `--force-with-lease` against `lease` (the empty string: `target` must
/// not exist there yet). Hooks stay off, as everywhere.
pub(crate) fn push(
    repo: &Repo,
    reach: Reach,
    url: &str,
    (commit, target): (&str, &str),
    lease: &str,
) -> Result<RemoteCommand, GitError> {
    let lease = format!("--force-with-lease={target}:{lease}");
    let git = (remote_git(repo, reach)?)
        .args(["push", "--porcelain", "--no-verify", &lease, url])
        .arg(format!("{commit}:{target}"));
    Ok(RemoteCommand { git })
}

/// A fetch of `branch` of `url` into the ref `into`, forced, with no tags
/// and no `FETCH_HEAD`.
pub(crate) fn fetch(
    repo: &Repo,
    reach: Reach,
    url: &str,
    branch: &str,
    into: &str,
) -> Result<RemoteCommand, GitError> {
    let git = (remote_git(repo, reach)?)
        .args(["fetch", "--no-tags", "--no-write-fetch-head", url])
        .arg(format!("+refs/heads/{branch}:{into}"));
    Ok(RemoteCommand { git })
}

/// git for a command that talks to the remote: it runs as the user has
/// the remote, over ssh with the user's own ssh configuration (the
/// variables that choose the ssh command pass through, and so do
/// `core.sshCommand` and `ssh.variant` of the global config, see
/// [`RemoteAccess`]) and agent, or over https with the token through a
/// credential helper of this command only. The URL was rewritten by the
/// user's `insteadOf` already ([`push_url`]).
fn remote_git(repo: &Repo, reach: Reach) -> Result<Git, GitError> {
    let access = RemoteAccess::read()?;
    let mut git = (repo.git())
        .config_pairs(access.ssh())
        .args(["-c", "credential.helper="])
        .args(["-c", "credential.interactive=false"]);
    for var in ["GIT_SSH_COMMAND", "GIT_SSH", "GIT_SSH_VARIANT"] {
        if let Ok(v) = std::env::var(var) {
            git = git.env(var, v);
        }
    }
    if let (true, Some((user, token))) = (reach.http, reach.token) {
        git = git
            .args(["-c", &format!("credential.helper={HELPER}")])
            .env(USER_VAR, user)
            .env(TOKEN_VAR, token.expose());
    }
    Ok(git)
}
