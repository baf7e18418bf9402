//! Typed git operations on objects: the blob id of bytes or a file, the
//! id a revision names, a blob's bytes, whether one commit descends from
//! another, and whether a merge changed a path. The run calls these by
//! name; none of it builds git's argv itself.

use crate::error::EngineError;
use crate::git::repo::Repo;
use std::path::Path;

/// The blob id of `bytes`, as git would store them (no filters: the bytes
/// themselves, whatever the repository's attributes say).
pub(crate) fn hash_bytes(repo: &Repo, bytes: Vec<u8>) -> Result<String, EngineError> {
    Ok((repo.git())
        .args(["hash-object", "--no-filters", "--stdin"])
        .input(bytes)
        .text()?)
}

/// The blob id of the file at `path`, without filters.
pub(crate) fn hash_file(repo: &Repo, path: &Path) -> Result<String, EngineError> {
    Ok((repo.git())
        .args(["hash-object", "--no-filters", "--"])
        .arg(path)
        .text()?)
}

/// The id of the object `spec` names (`COMMIT:PATH`, `REF^{tree}`); an
/// error when it names none.
pub(crate) fn object_id(repo: &Repo, spec: &str) -> Result<String, EngineError> {
    Ok((repo.git())
        .args(["rev-parse", "--verify", "--quiet", spec])
        .text()?)
}

/// The id of the object `spec` names, or None when it names none.
pub(crate) fn lookup(repo: &Repo, spec: &str) -> Result<Option<String>, EngineError> {
    Ok((repo.git())
        .args(["rev-parse", "--verify", "--quiet", spec])
        .text_if_success()?)
}

/// The repository's object format: `sha1` or `sha256`.
pub(crate) fn format(repo: &Repo) -> Result<String, EngineError> {
    Ok((repo.git())
        .args(["rev-parse", "--show-object-format"])
        .text()?)
}

/// The bytes of blob `id`.
pub(crate) fn blob(repo: &Repo, id: &str) -> Result<Vec<u8>, EngineError> {
    Ok(repo.git().args(["cat-file", "blob", id]).output()?.stdout)
}

/// Those of `commits` no other of them descends from (`merge-base
/// --independent`).
pub(crate) fn independent(repo: &Repo, commits: &[&str]) -> Result<Vec<String>, EngineError> {
    let tips = (repo.git())
        .args(["merge-base", "--independent"])
        .args(commits)
        .text()?;
    Ok(tips.lines().map(str::to_string).collect())
}

/// The commits `to` has and `from` lacks, oldest first.
pub(crate) fn commits_between(
    repo: &Repo,
    from: &str,
    to: &str,
) -> Result<Vec<String>, EngineError> {
    let commits = (repo.git())
        .args(["rev-list", "--reverse", &format!("{from}..{to}")])
        .text()?;
    Ok(commits.lines().map(str::to_string).collect())
}

/// Whether `ancestor` is `commit` or one of its ancestors.
pub(crate) fn is_ancestor(repo: &Repo, ancestor: &str, commit: &str) -> Result<bool, EngineError> {
    Ok((repo.git())
        .args(["merge-base", "--is-ancestor", ancestor, commit])
        .succeeds()?)
}

/// The message of `commit`, as it was written.
pub(crate) fn message_of(repo: &Repo, commit: &str) -> Result<String, EngineError> {
    let out = (repo.git()).args(["cat-file", "commit", commit]).output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // The headers end at the first blank line.
    Ok(text
        .split_once("\n\n")
        .map_or(String::new(), |(_, m)| m.to_string()))
}

/// The names of the paths that differ between `from` and `to`, renames
/// as a removal and an addition.
pub(crate) fn changed_paths(repo: &Repo, from: &str, to: &str) -> Result<Vec<String>, EngineError> {
    let text = (repo.git())
        .args(["diff", "--name-only", "--no-renames", from, to])
        .text()?;
    Ok(text.lines().map(String::from).collect())
}

/// Whether the merge commit `commit` changed `path` against its first
/// parent (the branch it landed on).
pub(crate) fn merge_changed(repo: &Repo, commit: &str, path: &str) -> Result<bool, EngineError> {
    let names = (repo.git())
        .args([
            "diff-tree",
            "--no-commit-id",
            "--name-only",
            "-r",
            "-m",
            "--first-parent",
        ])
        .arg(commit)
        .args(["--", path])
        .text()?;
    Ok(!names.is_empty())
}
