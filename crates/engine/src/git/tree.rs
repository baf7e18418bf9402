//! Typed git operations on commits' trees and the differences between
//! them: the merge of two commits without a checkout, a commit's tree, the
//! patch and the paths between two commits, the history of paths. The run
//! calls these by name; none of it builds git's argv itself.

use crate::error::EngineError;
use crate::git::repo::Repo;
use std::collections::HashMap;

/// What `merge-tree --write-tree` made of two commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Merged {
    /// They merge cleanly into this tree.
    Clean(String),
    /// They conflict in these paths.
    Conflict(Vec<String>),
}

/// Merges `ours` and `theirs` without a checkout or an index (git 2.38's
/// `merge-tree --write-tree`): their merged tree, or the paths that
/// conflict.
pub(crate) fn merge_tree(repo: &Repo, ours: &str, theirs: &str) -> Result<Merged, EngineError> {
    let git = (repo.git()).args(["merge-tree", "--write-tree", "--name-only", ours, theirs]);
    merged(git)
}

/// Merges `ours` and `theirs` as if `base` were their common ancestor
/// (`merge-tree --write-tree --merge-base`, git 2.40): the change from
/// `base` to `theirs` carried onto `ours`, or the paths that conflict.
pub(crate) fn merge_tree_from(
    repo: &Repo,
    base: &str,
    ours: &str,
    theirs: &str,
) -> Result<Merged, EngineError> {
    let base = format!("--merge-base={base}");
    let git = (repo.git()).args([
        "merge-tree",
        "--write-tree",
        "--name-only",
        &base,
        ours,
        theirs,
    ]);
    merged(git)
}

fn merged(git: crate::git::Git) -> Result<Merged, EngineError> {
    let out = git.raw()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // Its exit code is the answer: 0 clean, 1 conflicts, else a failure.
    // The first line is the tree; on a conflict the paths follow, then a
    // blank line and git's messages.
    let mut lines = text.lines();
    let tree = lines.next().unwrap_or_default().to_string();
    match out.status.code() {
        Some(0) => Ok(Merged::Clean(tree)),
        Some(1) => Ok(Merged::Conflict(
            lines
                .take_while(|l| !l.is_empty())
                .map(str::to_string)
                .collect(),
        )),
        _ => Err(git.failure(&out).into()),
    }
}

/// The tree of `commit`.
pub(crate) fn tree_of(repo: &Repo, commit: &str) -> Result<String, EngineError> {
    Ok((repo.git())
        .args(["rev-parse", &format!("{commit}^{{tree}}")])
        .text()?)
}

/// The patch from `from` to `to`, as git's own diff writes it (no external
/// diff, no text conversion, no colour, whatever the repository's config
/// says), or None when either commit is gone.
pub(crate) fn patch(repo: &Repo, from: &str, to: &str) -> Result<Option<String>, EngineError> {
    let out = (repo.git())
        .args([
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            from,
            to,
        ])
        .raw()?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// The paths that differ between `from` and `to` (a rename is a
/// deletion and an addition).
pub(crate) fn paths_changed(repo: &Repo, from: &str, to: &str) -> Result<Vec<String>, EngineError> {
    let files = (repo.git())
        .args(["diff", "--name-only", "--no-renames", from, to])
        .text()?;
    Ok(files.lines().map(str::to_string).collect())
}

/// `git log --format=%h %s REV`: the history of `rev`, one line a
/// commit, newest first.
pub(crate) fn log(repo: &Repo, rev: &str) -> Result<String, EngineError> {
    Ok((repo.git()).args(["log", "--format=%h %s", rev]).text()?)
}

/// `git log --format=%h %s FROM..TO -- PATHS`: the commits that changed
/// `paths` between `from` and `to`, one line each.
pub(crate) fn log_of_paths(
    repo: &Repo,
    from: &str,
    to: &str,
    paths: &[String],
) -> Result<String, EngineError> {
    Ok((repo.git())
        .args(["log", "--format=%h %s", &format!("{from}..{to}"), "--"])
        .args(paths)
        .text()?)
}

/// `git diff --stat FROM TO -- PATHS`: how much `paths` changed.
pub(crate) fn stat_of_paths(
    repo: &Repo,
    from: &str,
    to: &str,
    paths: &[String],
) -> Result<String, EngineError> {
    Ok((repo.git())
        .args(["diff", "--stat", "--no-color", from, to, "--"])
        .args(paths)
        .text()?)
}

/// Every file of `rev`'s tree, recursively: path -> (mode, object id).
pub(crate) fn files(
    repo: &Repo,
    rev: &str,
) -> Result<HashMap<String, (String, String)>, EngineError> {
    let out = (repo.git())
        .args(["ls-tree", "-r", "-z", "--full-tree", rev])
        .output()?;
    let mut files = HashMap::new();
    for record in out.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let record = String::from_utf8_lossy(record);
        let Some((meta, path)) = record.split_once('\t') else {
            continue;
        };
        let mut meta = meta.split(' ');
        let (Some(mode), Some(_), Some(id)) = (meta.next(), meta.next(), meta.next()) else {
            continue;
        };
        files.insert(path.to_string(), (mode.to_string(), id.to_string()));
    }
    Ok(files)
}

/// The tree of `commit` with each of `paths` as `from` has it (removed
/// where `from` has none), built in a scratch index so no checkout and no
/// index of the user's is touched.
pub(crate) fn with_paths_of(
    repo: &Repo,
    commit: &str,
    from: &str,
    paths: &[&str],
) -> Result<String, EngineError> {
    let scratch = tempfile::Builder::new()
        .prefix("planwright-carry-")
        .tempdir()
        .map_err(|e| EngineError::io(std::env::temp_dir(), e))?;
    let index = scratch.path().join("index");
    let git = || {
        repo.git()
            .env("GIT_INDEX_FILE", index.display().to_string())
    };
    git().args(["read-tree", commit]).output()?;
    let mut info = String::new();
    for path in paths {
        let line = match entry(repo, from, path)? {
            Some((mode, id)) => format!("{mode} {id}\t{path}\n"),
            // Mode 0 with the null id (as long as the object format's ids)
            // removes the path from the index.
            None => format!("0 {}\t{path}\n", "0".repeat(from.len())),
        };
        info.push_str(&line);
    }
    git()
        .args(["update-index", "--index-info"])
        .input(info)
        .output()?;
    Ok(git().args(["write-tree"]).text()?)
}

/// The mode and object id of the file `path` in `rev`, when it has one.
pub(crate) fn entry(
    repo: &Repo,
    rev: &str,
    path: &str,
) -> Result<Option<(String, String)>, EngineError> {
    // ls-tree takes paths literally, not as pathspecs.
    let out = (repo.git())
        .args(["ls-tree", "-z", "--full-tree", rev, "--", path])
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let Some((meta, _)) = text.split('\0').next().and_then(|r| r.split_once('\t')) else {
        return Ok(None);
    };
    let mut meta = meta.split(' ');
    match (meta.next(), meta.next(), meta.next()) {
        (Some(mode), Some("blob"), Some(id)) => Ok(Some((mode.to_string(), id.to_string()))),
        _ => Ok(None),
    }
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// git's status letter: A, M, D, T, R or C.
    pub status: char,
    /// The old path of a rename or copy.
    pub from: Option<String>,
    /// The path (the new one for renames and copies).
    pub path: String,
    /// The old file mode (`000000` for a created path).
    pub old_mode: String,
    /// The new file mode (`120000` for a symlink, `160000` for a submodule).
    pub new_mode: String,
    /// The new blob id.
    pub new_blob: String,
}

/// The changes from `base` to `candidate`.
pub fn changes(repo: &Repo, base: &str, candidate: &str) -> Result<Vec<Change>, EngineError> {
    let out = repo
        .git()
        .args([
            "diff-tree",
            "--no-ext-diff",
            "--no-textconv",
            "-r",
            "-M",
            "-C",
            "--no-commit-id",
            "-z",
            base,
            candidate,
        ])
        .output()?;
    Ok(parse_diff_tree(&out.stdout))
}

/// Parses `diff-tree -z` raw output.
pub fn parse_diff_tree(raw: &[u8]) -> Vec<Change> {
    let mut fields = raw
        .split(|b| *b == 0)
        .map(|s| String::from_utf8_lossy(s).into_owned());
    let mut out = Vec::new();
    while let Some(meta) = fields.next() {
        let Some(meta) = meta.strip_prefix(':') else {
            continue;
        };
        let parts: Vec<&str> = meta.split(' ').collect();
        if parts.len() < 5 {
            continue;
        }
        let status = parts[4].chars().next().unwrap_or('M');
        let first = fields.next().unwrap_or_default();
        let (from, path) = if matches!(status, 'R' | 'C') {
            (Some(first), fields.next().unwrap_or_default())
        } else {
            (None, first)
        };
        out.push(Change {
            status,
            from,
            path,
            old_mode: parts[0].to_string(),
            new_mode: parts[1].to_string(),
            new_blob: parts[3].to_string(),
        });
    }
    out
}
