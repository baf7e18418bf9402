//! Pushing a delivered commit to planwright's own branch on the remote,
//! with git itself.
//!
//! The lease: `--force-with-lease` against what planwright last pushed to
//! that branch, kept in `refs/planwright/pushed/<remote>/<branch>` of the
//! user's repository (a branch planwright never pushed must not exist on
//! the remote yet), so a push never overwrites what someone else put there.
//! The token of an `https` remote reaches git through a credential helper
//! given for this push only (`-c`), which reads it from a variable of the
//! git child's environment: it is never written to disk or to any config.

use super::DeliverError;
use crate::error::EngineError;
use crate::git::guard::Guard;
use crate::git::refs::set_ref;
use crate::git::remote::{self, Reach, RemoteCommand};
use crate::git::repo::Repo;
use planwright_config::forge::ForgeKind;
use planwright_config::Secret;

/// The user name each forge accepts beside a token over https.
fn token_user(kind: ForgeKind) -> &'static str {
    match kind {
        ForgeKind::Github => "x-access-token",
        ForgeKind::Gitlab => "oauth2",
        ForgeKind::Forgejo => "planwright",
    }
}

/// The ref that records what planwright last pushed to `branch` of `remote`.
pub fn pushed_ref(remote: &str, branch: &str) -> String {
    format!("refs/planwright/pushed/{remote}/{branch}")
}

/// The URL git pushes to for `remote`, or why there is none: rewritten
/// as the user's global `url.<base>.insteadOf` and `pushInsteadOf` say
/// (see [`remote::push_url`]).
pub fn remote_url(repo: &Repo, remote: &str) -> Result<String, DeliverError> {
    remote::push_url(repo, remote)?.ok_or_else(|| DeliverError::NoRemote {
        remote: remote.to_string(),
    })
}

/// One push: `commit` to `refs/heads/<branch>` of `remote`.
#[derive(Debug)]
pub(crate) struct Push<'a> {
    /// The remote's name (for the lease's ref and messages).
    pub remote: &'a str,
    /// The URL git pushes to for it: pushing there rather than to the
    /// remote's name leaves the user's remote-tracking refs alone.
    pub url: &'a str,
    /// Whether its URL is `http(s)`, so the token goes with the push.
    pub http: bool,
    /// The forge's kind (the user name beside the token).
    pub kind: ForgeKind,
    /// The branch on the remote.
    pub branch: &'a str,
    /// The commit it must point at.
    pub commit: &'a str,
}

/// What a push did to the branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// The branch was created.
    Created,
    /// The branch moved to the commit.
    Moved,
    /// The branch already pointed at the commit.
    Unchanged,
}

/// A push that went through, and the failures it went through first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushOutcome {
    /// What it did.
    pub pushed: Pushed,
    /// Why each earlier try failed (a remote out of reach, a 5xx), in
    /// order; empty when the first try went through.
    pub retried: Vec<String>,
}

/// Pushes, then records the commit as what planwright last pushed there.
/// A try that fails for a passing reason (the remote out of reach, a 5xx
/// or 429 of its HTTP server) is tried again with the API's bounded policy
/// ([`planwright_forge::RetryPolicy`]: 4 tries, waits of 1s, 2s, 4s).
pub(crate) fn push(
    repo: &Repo,
    guard: &Guard,
    p: &Push,
    token: Option<&Secret>,
) -> Result<PushOutcome, DeliverError> {
    let lease_ref = pushed_ref(p.remote, p.branch);
    let last = repo.ref_tip(&lease_ref)?;
    let target = format!("refs/heads/{}", p.branch);
    let lease = last.as_deref().unwrap_or("");
    let git = remote::push(repo, reach(p, token), p.url, (p.commit, &target), lease)?;
    let options = planwright_forge::Options::default();
    // planwright's own write as far as the integrity guard of a run is
    // concerned (the push writes nothing but objects it already has).
    let (out, retried) = guard.own_write(|| {
        retry_passing(&git, &options.retry, options.timer.as_ref()).map_err(EngineError::from)
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let output = format!("{stdout}\n{stderr}");
        return Err(rejected(p, &output, last.is_some(), retried.len() + 1));
    }
    set_ref(repo, guard, &lease_ref, p.commit)?;
    // Porcelain: `<flag>\t<from>:<to>\t<summary>`; `*` new, `=` up to date.
    let flag = stdout
        .lines()
        .find(|l| l.contains(&target))
        .and_then(|l| l.chars().next());
    let pushed = match flag {
        Some('*') => Pushed::Created,
        Some('=') => Pushed::Unchanged,
        _ => Pushed::Moved,
    };
    Ok(PushOutcome { pushed, retried })
}

/// How a command of `p` reaches the forge's remote: as the user has it
/// (see [`remote::push`]), over https with `token`.
fn reach<'a>(p: &Push, token: Option<&'a Secret>) -> Reach<'a> {
    Reach {
        http: p.http,
        token: token.map(|t| (token_user(p.kind), t)),
    }
}

/// Runs the push, again while it fails for a passing reason, as `policy`
/// says; returns the last try's output and why each earlier one failed.
pub(super) fn retry_passing(
    git: &RemoteCommand,
    policy: &planwright_forge::RetryPolicy,
    timer: &dyn planwright_forge::Timer,
) -> Result<(std::process::Output, Vec<String>), crate::error::GitError> {
    let mut wait = policy.backoff;
    let mut retried = Vec::new();
    loop {
        let out = git.run()?;
        let last_try = retried.len() + 1 >= policy.attempts.max(1) as usize;
        let why = passing(&String::from_utf8_lossy(&out.stderr));
        match why {
            Some(why) if !out.status.success() && !last_try => {
                retried.push(why);
                timer.sleep(wait);
                wait *= 2;
            }
            _ => return Ok((out, retried)),
        }
    }
}

/// Why a push failed, when the reason passes (worth another try): the
/// remote out of reach, or its HTTP server answering 5xx or 429. A
/// refusal (the lease, a hook, the credentials) never passes.
fn passing(stderr: &str) -> Option<String> {
    if unreachable(stderr) {
        return Some("the remote could not be reached".into());
    }
    // git: "The requested URL returned error: 503", "RPC failed; HTTP 502".
    let status = ["returned error: ", "RPC failed; HTTP "]
        .iter()
        .find_map(|s| stderr.split(s).nth(1))
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse::<u16>().ok())?;
    (status >= 500 || status == 429).then(|| format!("the remote answered HTTP {status}"))
}

fn unreachable(stderr: &str) -> bool {
    [
        "Could not resolve host",
        "Failed to connect",
        "Connection refused",
        "Connection timed out",
        "Network is unreachable",
    ]
    .iter()
    .any(|s| stderr.contains(s))
}

/// Why the remote refused, in words that say what to do.
fn rejected(p: &Push, output: &str, pushed_before: bool, tries: usize) -> DeliverError {
    let detail = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("To ") && *l != "Done")
        .collect::<Vec<_>>()
        .join("; ");
    let reason = if output.contains("stale info") || output.contains("fetch first") {
        if pushed_before {
            "the branch moved on the remote since planwright last pushed it (someone else pushed to it)"
        } else {
            "the branch already exists on the remote, and planwright did not push it"
        }
    } else if output.contains("pre-receive hook declined")
        || output.contains("protected branch")
        || output.contains("Protected branch")
    {
        "the remote refused it (branch protection or a server hook)"
    } else if output.contains("Authentication failed")
        || output.contains("could not read Username")
        || output.contains("could not read Password")
        || output.contains("unable to get password")
        || output.contains("403")
        || output.contains("Permission denied")
    {
        "the remote refused the credentials"
    } else if let Some(why) = passing(output) {
        return DeliverError::Push {
            remote: p.remote.to_string(),
            branch: p.branch.to_string(),
            reason: "the remote failed or could not be reached, on every try",
            detail: format!("{why}, {tries} tries; {detail}"),
        };
    } else {
        "git push failed"
    };
    DeliverError::Push {
        remote: p.remote.to_string(),
        branch: p.branch.to_string(),
        reason,
        detail,
    }
}

/// The ref a fetch of `branch` from `remote` is kept in (`respond` reads
/// what others pushed there).
pub fn fetched_ref(remote: &str, branch: &str) -> String {
    format!("refs/planwright/forge/{remote}/{branch}")
}

/// Fetches `branch` of the remote at `url` into [`fetched_ref`], with the
/// token as [`push`] gives it; its commit, or `None` when the remote has
/// no such branch.
pub(crate) fn fetch(
    repo: &Repo,
    guard: &Guard,
    p: &Push,
    token: Option<&Secret>,
) -> Result<Option<String>, DeliverError> {
    // The same git as the push's: the user's ssh settings, the token.
    let into = fetched_ref(p.remote, p.branch);
    let git = remote::fetch(repo, reach(p, token), p.url, p.branch, &into)?;
    let options = planwright_forge::Options::default();
    let (out, _) = guard.own_write(|| {
        retry_passing(&git, &options.retry, options.timer.as_ref()).map_err(EngineError::from)
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        if stderr.contains("couldn't find remote ref") {
            return Ok(None);
        }
        let detail: Vec<&str> = stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        return Err(DeliverError::Engine(EngineError::Repo {
            message: format!(
                "fetching `{}` from `{}` failed: {}",
                p.branch,
                p.remote,
                detail.join("; ")
            ),
            hint: Some(
                "check that `git fetch` from the remote works from this repository (for https, the forge's token: see `token_env`), then run again".into(),
            ),
        }));
    }
    Ok(repo.ref_tip(&into)?)
}
