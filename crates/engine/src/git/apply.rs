//! Applying a recorded change to a workspace as an agent would, through
//! the workspace's own repository (the `.git` made for the agent, which
//! borrows the run's objects): the replay agent's one git operation.

use crate::error::EngineError;
use crate::git::Git;
use std::path::Path;

/// What became of a patch applied to a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Applied {
    /// It applied, by context or by a clean three-way merge.
    Clean,
    /// The workspace holds its change already (a new attempt that starts
    /// from the previous one's candidate).
    Already,
    /// It no longer applies: git's words, with the paths that conflict.
    Conflict(String),
}

/// Applies `patch` (a file) in `workspace` with `git apply --3way`: where
/// its context no longer matches, a three-way merge from the preimage
/// blobs. A conflict leaves the files as git left them; the caller fails
/// the attempt rather than commit them.
pub(crate) fn apply_three_way(workspace: &Path, patch: &Path) -> Result<Applied, EngineError> {
    let git = || Git::with_tree(workspace.join(".git"), workspace);
    let reverse = git()
        .args(["apply", "--reverse", "--check", "--whitespace=nowarn"])
        .arg(patch)
        .raw()?;
    if reverse.status.success() {
        return Ok(Applied::Already);
    }
    let out = git()
        .args(["apply", "--3way", "--whitespace=nowarn"])
        .arg(patch)
        .raw()?;
    if out.status.success() {
        return Ok(Applied::Clean);
    }
    let why = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = why
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(20)
        .collect();
    Ok(Applied::Conflict(lines.join("\n")))
}
