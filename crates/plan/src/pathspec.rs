//! agb's pathspecs: the scope and rail entries of agb plans.

use regex::Regex;
use std::sync::LazyLock;

const SEGMENT: &str = r"(?:[a-zA-Z0-9_][a-zA-Z0-9_.-]*|\.[a-zA-Z0-9_][a-zA-Z0-9_.-]*|\*{1,2}(?:\.[a-zA-Z0-9_-]+)?|[a-zA-Z0-9_.-]*\*[a-zA-Z0-9_.-]*)";

/// agb's `PATHSPEC_RE`.
pub static PATHSPEC_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!("^{SEGMENT}(?:/{SEGMENT})*$")).expect("valid regex"));

/// Why a pathspec was rejected. Each variant has its own diagnostic code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathspecError {
    /// `*`, `**` or `.`: the whole repository.
    TooBroad,
    /// A leading `/` or `\`, or a drive letter.
    Absolute,
    /// A `.`, `..` or empty segment.
    BadSegment,
    /// Characters outside agb's conservative set.
    Charset,
}

impl PathspecError {
    /// The rule's name, used in the diagnostic code.
    pub fn rule(self) -> &'static str {
        match self {
            PathspecError::TooBroad => "too-broad",
            PathspecError::Absolute => "absolute",
            PathspecError::BadSegment => "bad-segment",
            PathspecError::Charset => "charset",
        }
    }

    /// What is wrong, for the message.
    pub fn reason(self) -> &'static str {
        match self {
            PathspecError::TooBroad => "it would match the whole repository",
            PathspecError::Absolute => "it must be relative to the repository root",
            PathspecError::BadSegment => "it has a `.`, `..` or empty segment",
            PathspecError::Charset => {
                "it must match PATHSPEC_RE (letters, digits, `_`, `.`, `-`, `*` and `/` only)"
            }
        }
    }
}

/// Normalises (a trailing `/` becomes `/**`) and checks a pathspec in agb's
/// order. Returns the normalised pathspec.
pub fn check(raw: &str) -> Result<String, PathspecError> {
    let spec = match raw.strip_suffix('/') {
        Some(dir) => format!("{dir}/**"),
        None => raw.to_string(),
    };
    if matches!(spec.as_str(), "*" | "**" | ".") {
        return Err(PathspecError::TooBroad);
    }
    let b = spec.as_bytes();
    if spec.starts_with('/')
        || spec.starts_with('\\')
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
    {
        return Err(PathspecError::Absolute);
    }
    if spec
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return Err(PathspecError::BadSegment);
    }
    // agb also rejects a path that POSIX normalisation would change; after
    // the trailing-slash rewrite and the segment rule above, only paths
    // that normalisation leaves alone remain, so that rule cannot fire here.
    if !PATHSPEC_RE.is_match(&spec) {
        return Err(PathspecError::Charset);
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_agb_pathspecs() {
        for ok in [
            "lib/math.mjs",
            "src/**",
            "src/*.rs",
            ".github/workflows/ci.yml",
            "a/**.md",
            "x*y/z",
        ] {
            assert!(check(ok).is_ok(), "{ok}");
        }
        assert_eq!(check("src/").unwrap(), "src/**");
    }

    #[test]
    fn rejects_with_the_rule_agb_applies_first() {
        let cases = [
            ("*", PathspecError::TooBroad),
            ("**", PathspecError::TooBroad),
            (".", PathspecError::TooBroad),
            ("/etc/passwd", PathspecError::Absolute),
            ("\\x", PathspecError::Absolute),
            ("C:/x", PathspecError::Absolute),
            ("a/../b", PathspecError::BadSegment),
            ("a/./b", PathspecError::BadSegment),
            ("a//b", PathspecError::BadSegment),
            ("a b", PathspecError::Charset),
            ("a/[x]", PathspecError::Charset),
            ("src/***", PathspecError::Charset),
        ];
        for (spec, want) in cases {
            assert_eq!(check(spec), Err(want), "{spec}");
        }
    }
}
