//! Paths git refuses to index. An agent may create any file name; the ones
//! git will not put in an index (and so in a candidate) are the attempt's
//! fault: a name git's own `git add` refuses here is named from these
//! rules, and one it indexes here but refuses elsewhere is a path the
//! candidate creates, which the scope check refuses by them.
//! The rules are git's `verify_path` with `core.protectNTFS` and
//! `core.protectHFS` both on, whatever the platform: a name refused on
//! Windows or macOS must not reach a base branch others check out there.

use crate::model::{Failure, FailureKind};

/// Why git refuses `path` (slash-separated, as git lists it), or `None`.
pub(crate) fn refused(path: &[u8]) -> Option<&'static str> {
    path.split(|&b| b == b'/').find_map(component)
}

/// The attempt's failure for `path`, which git refuses for `why`.
pub(crate) fn bad_name(path: &str, why: &str) -> Failure {
    Failure::new(FailureKind::ScopeViolation, format!("`{path}`: {why}")).with_evidence(path)
}

fn component(name: &[u8]) -> Option<&'static str> {
    if name.eq_ignore_ascii_case(b".git") {
        return Some("git refuses a path with a `.git` component in any case");
    }
    if ntfs_dotgit(name) {
        return Some(
            "git refuses a component that NTFS reads as `.git` \
             (trailing spaces or dots, `git~1`, a stream or a backslash)",
        );
    }
    if hfs_dotgit(name) {
        return Some("git refuses a component that HFS+ reads as `.git` (ignorable code points)");
    }
    None
}

/// `.git` or its 8.3 short name `git~1`, then only spaces and dots up to
/// the end, an alternate data stream (`:`) or a backslash (a separator on
/// NTFS).
fn ntfs_dotgit(name: &[u8]) -> bool {
    let lower = name.to_ascii_lowercase();
    let rest = if let Some(r) = lower.strip_prefix(b".git") {
        r
    } else if let Some(r) = lower.strip_prefix(b"git~1") {
        r
    } else {
        return false;
    };
    let end = rest
        .iter()
        .position(|&b| b == b':' || b == b'\\')
        .unwrap_or(rest.len());
    rest[..end].iter().all(|&b| b == b' ' || b == b'.')
}

/// `.git` once HFS+ drops the code points it ignores in names.
fn hfs_dotgit(name: &[u8]) -> bool {
    let Ok(name) = std::str::from_utf8(name) else {
        return false;
    };
    let kept: String = name.chars().filter(|&c| !hfs_ignorable(c)).collect();
    kept.len() != name.len() && kept.eq_ignore_ascii_case(".git")
}

/// The code points git's `is_hfs_dotgit` skips, as HFS+ does.
fn hfs_ignorable(c: char) -> bool {
    matches!(c as u32, 0x200c..=0x200f | 0x202a..=0x202e | 0x206a..=0x206f | 0xfeff)
}

#[cfg(test)]
mod tests {
    use super::refused;

    #[test]
    fn names_git_refuses_are_found() {
        for bad in [
            "lib/.GIT/config",
            ".Git/hooks/pre-commit",
            "lib/.git /x",
            "lib/.git./x",
            "lib/.git . ./x",
            "lib/git~1/x",
            "GIT~1/x",
            "lib/.git::$INDEX_ALLOCATION/x",
            "lib/.git\\config",
            "lib/.g\u{200c}it/config",
            "\u{feff}.GIT/x",
            "a/.gi\u{206f}t",
        ] {
            assert!(refused(bad.as_bytes()).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn names_git_indexes_are_not() {
        for good in [
            "lib/config",
            ".gitignore",
            "lib/.gitattributes",
            ".github/workflows/ci.yml",
            "lib/.gitx/y",
            "lib/git~2/x",
            "lib/git~1x",
            "lib/x.git",
            "lib/.git x/y",
            "lib/\u{200c}notgit",
            "caf\u{e9}/.g",
        ] {
            assert_eq!(refused(good.as_bytes()), None, "{good:?}");
        }
    }

    #[test]
    fn the_reason_names_the_rule() {
        assert!(refused(b"lib/.GIT/config").unwrap().contains("in any case"));
        assert!(refused(b"lib/git~1/x").unwrap().contains("NTFS"));
        assert!(refused("x/.g\u{200d}it".as_bytes())
            .unwrap()
            .contains("HFS+"));
    }
}
