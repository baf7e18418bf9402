//! The oldest git planwright works with, and the check that the one on
//! `PATH` is at least that, made once before a run or a preflight starts
//! (preflight's `git` check), as jj checks its own minimum.

use crate::git::{Git, GitError};
use std::fmt;

/// The oldest git whose every command and flag planwright passes. Each line
/// names what needs the version; bump it when a newer flag comes into use,
/// and say so in `docs/running.md` (the `git` check) and `README.md`.
///
/// * 2.40: `--attr-source=<commit>`, which makes a checkout of a
///   workspace or a gate checkout follow the commit's attributes, never a
///   `.gitattributes` an agent or a gate left in the work tree.
/// * 2.38: `merge-tree --write-tree` (with `--name-only`), which checks a
///   candidate against its base and lands it without a checkout.
/// * 2.31: `rev-parse --path-format=absolute`, which opens the repository.
/// * 2.29: `init --object-format`, which makes a worker's cache in the
///   object format of the coordinator's repository.
/// * 2.22: `%(trailers:key=...,valueonly,separator=...)`, which reads the
///   ledger of merged tickets.
pub(crate) const MINIMUM_GIT_VERSION: GitVersion = GitVersion {
    major: 2,
    minor: 40,
    patch: 0,
};

/// A git version, as `git --version` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct GitVersion {
    /// The first number.
    pub major: u32,
    /// The second number.
    pub minor: u32,
    /// The third number (0 when git prints none).
    pub patch: u32,
}

impl fmt::Display for GitVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl GitVersion {
    /// Reads `git version 2.47.3` (also `2.39.3 (Apple Git-146)` and
    /// `2.45.2.windows.1`, whose suffixes say nothing of the features).
    pub(crate) fn parse(said: &str) -> Option<GitVersion> {
        let word = said.trim().strip_prefix("git version ")?;
        let word = word.split_whitespace().next()?;
        let mut numbers = word.split('.').map_while(|n| n.parse::<u32>().ok());
        Some(GitVersion {
            major: numbers.next()?,
            minor: numbers.next()?,
            patch: numbers.next().unwrap_or(0),
        })
    }
}

/// The version of the git on `PATH`, which is at least
/// [`MINIMUM_GIT_VERSION`] or an error naming both.
pub(crate) fn check_version() -> Result<GitVersion, GitError> {
    let said = Git::outside().arg("--version").text()?;
    let found = GitVersion::parse(&said).ok_or_else(|| GitError::NoVersion(said.clone()))?;
    if found < MINIMUM_GIT_VERSION {
        return Err(GitError::TooOld {
            found: found.to_string(),
            needed: MINIMUM_GIT_VERSION.to_string(),
        });
    }
    Ok(found)
}

/// What to do about a git that [`check_version`] refused.
pub(crate) const VERSION_HINT: &str =
    "install a newer git (your system's package, or git-scm.com) and put it first on PATH";

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32, patch: u32) -> GitVersion {
        GitVersion {
            major,
            minor,
            patch,
        }
    }

    #[test]
    fn every_way_git_says_its_version_is_read() {
        for (said, version) in [
            ("git version 2.47.3", v(2, 47, 3)),
            ("git version 2.38.0\n", v(2, 38, 0)),
            ("git version 2.39.3 (Apple Git-146)", v(2, 39, 3)),
            ("git version 2.45.2.windows.1", v(2, 45, 2)),
            ("git version 2.40", v(2, 40, 0)),
            ("git version 2.43.0.rc1", v(2, 43, 0)),
        ] {
            assert_eq!(GitVersion::parse(said), Some(version), "{said}");
        }
        for said in ["", "git version", "hub version 2.14.2", "git version x.y"] {
            assert_eq!(GitVersion::parse(said), None, "{said}");
        }
    }

    #[test]
    fn versions_order_by_number_not_by_text() {
        assert!(v(2, 9, 0) < v(2, 38, 0));
        assert!(v(2, 39, 9) < MINIMUM_GIT_VERSION);
        assert!(v(3, 0, 0) > MINIMUM_GIT_VERSION);
        assert_eq!(MINIMUM_GIT_VERSION.to_string(), "2.40.0");
    }
}
