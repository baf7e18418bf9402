//! The checks of git and the repository itself: `git` new enough, `repo`,
//! `base` and `clean`, the run `lock`, and `git-config` that would run
//! programs in planwright's git.

use super::{base, Check, CheckName};
use crate::git::repo::Repo;
use crate::git::version::{self, MINIMUM_GIT_VERSION};
use planwright_plan::Plan;
use std::collections::HashSet;
use std::path::Path;

/// The `git` check: the git on `PATH` is new enough.
pub(super) fn check_git_version(out: &mut Vec<Check>) {
    out.push(match version::check_version() {
        Ok(found) => Check::ok(
            CheckName::Git,
            format!("git {found} (planwright needs {MINIMUM_GIT_VERSION} or newer)"),
        ),
        Err(e) => Check::error(CheckName::Git, e.to_string(), version::VERSION_HINT),
    });
}

/// The `repo` check: `dir` is a git repository, which it opens.
pub(super) fn open_repo(dir: &Path, out: &mut Vec<Check>) -> Option<Repo> {
    match Repo::open(dir) {
        Ok(repo) => {
            out.push(Check::ok(
                CheckName::Repo,
                format!("`{}` is a git repository", repo.root().display()),
            ));
            Some(repo)
        }
        Err(e) => {
            out.push(Check::error(
                CheckName::Repo,
                e.to_string(),
                format!(
                    "pass a git repository with `{} DIR`",
                    planwright_plan::Flag::Repo
                ),
            ));
            None
        }
    }
}

/// The `base` and `clean` checks; the files of the base commit, when it
/// could be read.
pub(super) fn check_repo(
    repo: &Repo,
    plan: &Plan,
    source: &Result<planwright_config::BaseSource, Check>,
    out: &mut Vec<Check>,
) -> Option<HashSet<String>> {
    let source = match source {
        Ok(source) => *source,
        Err(check) => {
            out.push(check.clone());
            return None;
        }
    };
    let tip = match repo.branch_tip(&plan.base) {
        Ok(Some(tip)) => {
            out.push(Check::ok(
                CheckName::Base,
                format!(
                    "base branch `{}` ({}) is at {}",
                    plan.base,
                    base::said(source),
                    &tip[..tip.len().min(10)]
                ),
            ));
            tip
        }
        _ => {
            out.push(Check::error(
                CheckName::Base,
                format!(
                    "the base branch `{}` ({}) does not exist",
                    plan.base,
                    base::said(source)
                ),
                base::missing_hint(&plan.base, source),
            ));
            return None;
        }
    };
    match repo.changed_files() {
        Ok(changed) if changed.is_empty() => out.push(Check::ok(
            CheckName::Clean,
            "the working tree has no uncommitted changes",
        )),
        Ok(changed) => out.push(Check::error(
            CheckName::Clean,
            format!(
                "the working tree has uncommitted changes: {}",
                some_files(&changed)
            ),
            "commit or stash them (`git stash`) first",
        )),
        Err(e) => out.push(Check::error(
            CheckName::Clean,
            format!("cannot tell whether the working tree has uncommitted changes: {e}"),
            "check the repository with `git status`",
        )),
    }
    crate::git::tracked_files(repo.root(), &tip)
        .ok()
        .map(|f| f.into_iter().collect())
}

/// How many changed files a message names before "and N more".
const FILES_NAMED: usize = 5;

/// `` `a`, `b` and 3 more files ``: the first few of `files`, inert.
fn some_files(files: &[String]) -> String {
    let named: Vec<String> = files
        .iter()
        .take(FILES_NAMED)
        .map(|f| format!("`{}`", planwright_plan::words::inert(f)))
        .collect();
    match files.len().saturating_sub(FILES_NAMED) {
        0 => named.join(", "),
        more => format!(
            "{} and {more} more {}",
            named.join(", "),
            planwright_plan::words::plural(more, "file")
        ),
    }
}

pub(super) fn check_git_config(repo: &Repo, allow: &[String], out: &mut Vec<Check>) {
    match repo.risky_config(allow) {
        Ok(risky) if risky.is_empty() => out.push(Check::ok(
            CheckName::GitConfig,
            "the repository's git config runs no programs in planwright's git calls",
        )),
        Ok(risky) => out.push(Check::error(
            CheckName::GitConfig,
            crate::git::integrity::risky_config_message(&risky),
            "a repository whose config runs programs cannot be trusted (exit 3)",
        )),
        Err(e) => out.push(Check::error(
            CheckName::GitConfig,
            e.to_string(),
            "check that `git config --list` works in the repository",
        )),
    }
}

/// A run lock held now refuses `run` (exit 2), so preflight and
/// `--dry-run` refuse in its words.
pub(super) fn check_lock(repo: &Repo, out: &mut Vec<Check>) {
    match crate::run::lock::holder(repo) {
        Ok(None) => {}
        Ok(Some(crate::error::EngineError::Repo { message, hint })) => out.push(Check::error(
            CheckName::Lock,
            message,
            hint.unwrap_or_default(),
        )),
        Ok(Some(e)) | Err(e) => out.push(Check::error(
            CheckName::Lock,
            format!("cannot read the run lock: {e}"),
            "check the permissions of the repository's git directory",
        )),
    }
}

#[cfg(test)]
mod tests {
    /// The dirty-checkout error names the first five files, then how many
    /// more there are.
    #[test]
    fn the_changed_files_are_named_five_then_counted() {
        let files = |n: usize| (1..=n).map(|i| format!("f{i}")).collect::<Vec<_>>();
        assert_eq!(super::some_files(&files(1)), "`f1`");
        assert_eq!(super::some_files(&files(5)), "`f1`, `f2`, `f3`, `f4`, `f5`");
        assert_eq!(
            super::some_files(&files(7)),
            "`f1`, `f2`, `f3`, `f4`, `f5` and 2 more files"
        );
        assert_eq!(
            super::some_files(&files(6)),
            "`f1`, `f2`, `f3`, `f4`, `f5` and 1 more file"
        );
    }
}
