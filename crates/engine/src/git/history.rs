//! Typed git operations on a stretch of history, for `planwright replay`:
//! the first-parent commits of a range, what each changed (with its
//! operations and lines), its patch, and how two trees differ. The replay
//! calls these by name; none of it builds git's argv itself.

use crate::error::EngineError;
use crate::git::repo::Repo;

/// What one commit did to one path, as `diff-tree --name-status -M` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// The path is new.
    Create(String),
    /// The path changed (content or mode).
    Modify(String),
    /// The path is gone.
    Delete(String),
    /// `from` moved to `to` (possibly changed).
    Rename {
        /// The old path.
        from: String,
        /// The new path.
        to: String,
    },
}

impl Change {
    /// The paths it touches: both sides of a rename.
    pub(crate) fn paths(&self) -> Vec<&str> {
        match self {
            Change::Create(p) | Change::Modify(p) | Change::Delete(p) => vec![p],
            Change::Rename { from, to } => vec![from, to],
        }
    }
}

/// One first-parent commit of a range.
#[derive(Debug, Clone)]
pub(crate) struct Commit {
    /// Its id.
    pub(crate) id: String,
    /// Its first parent, which its change is taken against.
    pub(crate) parent: String,
    /// Its message, whole.
    pub(crate) message: String,
}

/// The first-parent commits of `range` (`A..B`, or anything `rev-list`
/// takes), oldest first, and how many of them are merges. The range's base
/// is the first parent of its oldest commit. `Err` when git cannot
/// resolve the range.
pub(crate) fn first_parent(repo: &Repo, range: &str) -> Result<(Vec<Commit>, String), RangeError> {
    let git = (repo.git()).args([
        "rev-list",
        "--first-parent",
        "--reverse",
        "--parents",
        "--end-of-options",
        range,
    ]);
    let out = git
        .raw()
        .map_err(|e| RangeError::Unresolved(e.to_string()))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        let why = why.lines().next().unwrap_or("").trim().to_string();
        return Err(RangeError::Unresolved(why));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut commits = Vec::new();
    let mut base = None;
    for line in text.lines() {
        let ids: Vec<&str> = line.split_whitespace().collect();
        let (Some(id), Some(parent)) = (ids.first(), ids.get(1)) else {
            // A root commit has nothing to replay against.
            return Err(RangeError::Root(line.trim().to_string()));
        };
        base.get_or_insert_with(|| parent.to_string());
        if ids.len() > 2 {
            continue;
        }
        commits.push(Commit {
            id: id.to_string(),
            parent: parent.to_string(),
            message: String::new(),
        });
    }
    let Some(base) = base else {
        return Err(RangeError::Empty);
    };
    for c in &mut commits {
        c.message = (repo.git())
            .args(["show", "-s", "--format=%B", &c.id])
            .text()
            .map_err(|e| RangeError::Unresolved(e.to_string()))?;
    }
    Ok((commits, base))
}

/// Why a range cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RangeError {
    /// git cannot resolve it.
    #[error("{0}")]
    Unresolved(String),
    /// It names no commit.
    #[error("the range names no commit")]
    Empty,
    /// It reaches a root commit.
    #[error("the range reaches the root commit {0}")]
    Root(String),
}

/// The commit `rev` names.
pub(crate) fn commit_of(repo: &Repo, rev: &str) -> Result<String, EngineError> {
    Ok((repo.git())
        .args(["rev-parse", "--verify", "--end-of-options"])
        .arg(format!("{rev}^{{commit}}"))
        .text()?)
}

/// Every first-parent commit of `range`, merges included.
pub(crate) fn first_parent_count(repo: &Repo, range: &str) -> Result<usize, EngineError> {
    let text = (repo.git())
        .args([
            "rev-list",
            "--first-parent",
            "--count",
            "--end-of-options",
            range,
        ])
        .text()?;
    Ok(text.trim().parse().unwrap_or(0))
}

/// What `commit` changed against `parent`, renames found.
pub(crate) fn changes(repo: &Repo, parent: &str, commit: &str) -> Result<Vec<Change>, EngineError> {
    let out = (repo.git())
        .args([
            "diff-tree",
            "-r",
            "-z",
            "-M",
            "--name-status",
            "--no-commit-id",
        ])
        .args([parent, commit])
        .output()?;
    let mut fields = out.stdout.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut text = || {
        fields
            .next()
            .map(|f| String::from_utf8_lossy(f).into_owned())
    };
    let mut all = Vec::new();
    while let Some(status) = text() {
        let path = text().unwrap_or_default();
        all.push(match status.chars().next() {
            Some('A') => Change::Create(path),
            Some('D') => Change::Delete(path),
            Some('R') => Change::Rename {
                from: path,
                to: text().unwrap_or_default(),
            },
            // A copy is a new path; its source stays.
            Some('C') => Change::Create(text().unwrap_or_default()),
            _ => Change::Modify(path),
        });
    }
    Ok(all)
}

/// Lines added plus lines removed by `commit` against `parent` (a binary
/// file counts as one line).
pub(crate) fn changed_lines(repo: &Repo, parent: &str, commit: &str) -> Result<u64, EngineError> {
    let text = (repo.git())
        .args(["diff-tree", "-r", "-M", "--numstat", "--no-commit-id"])
        .args([parent, commit])
        .text()?;
    Ok(text
        .lines()
        .map(|l| {
            let mut f = l.split('\t');
            let n = |s: Option<&str>| s.and_then(|s| s.parse::<u64>().ok());
            match (n(f.next()), n(f.next())) {
                (Some(a), Some(d)) => a + d,
                _ => 1,
            }
        })
        .sum())
}

/// The patch of `commit` against `parent` that `git apply --3way` takes:
/// binary, full blob ids (so the three-way fallback finds the preimage),
/// renames found, no external diff or text conversion.
pub(crate) fn commit_patch(
    repo: &Repo,
    parent: &str,
    commit: &str,
) -> Result<Vec<u8>, EngineError> {
    Ok((repo.git())
        .args([
            "diff-tree",
            "-p",
            "-M",
            "--binary",
            "--full-index",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--no-commit-id",
        ])
        .args([parent, commit])
        .output()?
        .stdout)
}

/// The paths whose content differs between two trees (or commits), with
/// git's status letter (`M path`, `A path`, `D path`).
pub(crate) fn tree_difference(repo: &Repo, a: &str, b: &str) -> Result<Vec<String>, EngineError> {
    let out = (repo.git())
        .args(["diff-tree", "-r", "-z", "--name-status", "--no-renames"])
        .args([a, b])
        .output()?;
    let mut fields = out.stdout.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut all = Vec::new();
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        all.push(format!(
            "{} {}",
            String::from_utf8_lossy(status),
            String::from_utf8_lossy(path)
        ));
    }
    Ok(all)
}

/// Every file of `rev`'s tree.
pub(crate) fn files_at(repo: &Repo, rev: &str) -> Result<Vec<String>, EngineError> {
    let out = (repo.git())
        .args(["ls-tree", "-r", "-z", "--name-only", rev])
        .output()?;
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect())
}

/// A clone of `source` in `dest` (a new folder) with `branch` checked out
/// at `commit`: the replay's scratch repository, so the run never touches
/// the user's. A local clone hard-links the objects, and takes neither
/// the source's config nor its hooks.
pub(crate) fn scratch_clone(
    source: &Repo,
    dest: &std::path::Path,
    branch: &str,
    commit: &str,
) -> Result<Repo, EngineError> {
    crate::git::Git::outside()
        .args(["clone", "-q", "--no-checkout", "--"])
        .arg(source.root())
        .arg(dest)
        .output()?;
    let repo = Repo::open(dest)?;
    (repo.git())
        .args(["checkout", "-q", "-B", branch, commit])
        .output()?;
    Ok(repo)
}
