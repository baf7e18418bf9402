//! Scope and rail patterns: the one reading of a pattern that the overlap
//! forecast ([`crate::overlap::Glob`]) and the engine's scope check
//! ([`Pattern`]) share.
//!
//! Both start from [`normalize`]: empty and `.` segments are dropped, a
//! trailing `/` means everything below, and a pattern with no segment left
//! means the whole repository (agb's reading of `.`). [`Pattern`] then
//! matches paths exactly with globset (`*` and `?` stay within a segment);
//! the forecast reads the same text more widely, never more narrowly, so a
//! path the engine lets two tickets change is always forecast as an overlap.

use globset::{GlobBuilder, GlobMatcher};

/// The canonical text of a scope or rail pattern.
pub fn normalize(pattern: &str) -> String {
    let segs: Vec<&str> = pattern
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let below = pattern.ends_with('/') || segs.is_empty();
    let mut out = segs.join("/");
    if below && segs.last() != Some(&"**") {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str("**");
    }
    out
}

/// Whether `pattern` may match more than one path.
pub fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{']) || pattern.ends_with('/')
}

/// A compiled scope or rail pattern that matches repository-relative paths.
/// A pattern without wildcards names exactly one file.
#[derive(Debug, Clone)]
pub struct Pattern {
    matcher: GlobMatcher,
}

impl Pattern {
    /// Compiles `pattern`. Never fails: text that is not a valid glob (an
    /// unclosed `[` or `{`) is matched literally, as the forecast reads it,
    /// so that a malformed rail still protects the path it names.
    pub fn new(pattern: &str) -> Pattern {
        let text = normalize(pattern);
        let glob = GlobBuilder::new(&text)
            .literal_separator(true)
            .build()
            .or_else(|_| {
                GlobBuilder::new(&literal(&text))
                    .literal_separator(true)
                    .backslash_escape(false)
                    .build()
            })
            .expect("an escaped pattern is a valid glob");
        Pattern {
            matcher: glob.compile_matcher(),
        }
    }

    /// Whether `path` is covered.
    pub fn matches(&self, path: &str) -> bool {
        self.matcher.is_match(path)
    }
}

/// `text` with every segment but `**` escaped, so that it matches itself.
fn literal(text: &str) -> String {
    text.split('/')
        .map(|s| {
            if s == "**" {
                s.to_string()
            } else {
                globset::escape(s)
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overlap::Glob;

    #[test]
    fn normal_forms() {
        for (raw, want) in [
            ("src/x.rs", "src/x.rs"),
            ("./src//x.rs", "src/x.rs"),
            ("src/", "src/**"),
            ("src/**/", "src/**"),
            (".", "**"),
            ("", "**"),
            ("a/./b/", "a/b/**"),
        ] {
            assert_eq!(normalize(raw), want, "{raw}");
        }
    }

    #[test]
    fn patterns_respect_separators() {
        assert!(Pattern::new("src/*.rs").matches("src/a.rs"));
        assert!(!Pattern::new("src/*.rs").matches("src/x/a.rs"));
        assert!(Pattern::new("src/**").matches("src/x/a.rs"));
        assert!(Pattern::new("src/").matches("src/x/a.rs"));
        assert!(
            !Pattern::new("lib").matches("lib/a.mjs"),
            "a plain path names one file"
        );
        assert!(Pattern::new("lib").matches("lib"));
        assert!(Pattern::new("./lib/a.mjs").matches("lib/a.mjs"));
        assert!(
            Pattern::new("src/[").matches("src/["),
            "literal when invalid"
        );
        assert!(
            Pattern::new("a\\").matches("a\\"),
            "a dangling escape is literal"
        );
        assert!(Pattern::new("src/[/").matches("src/[/deep"));
    }

    /// The documented cases: the engine's matcher and the forecast agree on
    /// whether each path is covered.
    #[test]
    fn matcher_and_forecast_agree_on_documented_cases() {
        let cases: &[(&str, &str, bool)] = &[
            ("src/**", "src/a/b.rs", true),
            ("src/**", "tests/a.rs", false),
            ("src/", "src/deep/x", true),
            ("src/*.rs", "src/lib.rs", true),
            ("src/*.rs", "src/a/b.rs", false),
            ("**/*.rs", "src/lib.rs", true),
            ("**/*.rs", "lib.rs", true),
            ("*.md", "docs/readme.md", false),
            ("docs/**/index.md", "docs/index.md", true),
            ("src/a?.rs", "src/ab.rs", true),
            ("src/a?.rs", "src/a.rs", false),
            ("src/[ab].rs", "src/a.rs", true),
            ("src/{a,b}.rs", "src/b.rs", true),
            ("lib/math.mjs", "lib/math.mjs", true),
            ("lib/math.mjs", "lib/stats.mjs", false),
            ("lib", "lib/a.mjs", false),
            ("./src/x.rs", "src/x.rs", true),
            ("a//b", "a/b", true),
            (".", "anything/at/all", true),
            ("src/[", "src/[", true),
        ];
        for &(pattern, path, want) in cases {
            assert_eq!(
                Pattern::new(pattern).matches(path),
                want,
                "{pattern} {path}"
            );
            assert_eq!(
                Glob::parse(pattern).intersects(&Glob::parse(path)),
                want,
                "forecast: {pattern} {path}"
            );
        }
    }

    /// Where the forecast is wider than the engine, by design (sound, not
    /// exact): the engine's `src/**` does not match `src` itself, and its
    /// in-segment `**` stays within the segment.
    #[test]
    fn the_forecast_is_wider_only_where_documented() {
        for (pattern, path) in [("src/**", "src"), ("a/**.md", "a/b/c.md")] {
            assert!(!Pattern::new(pattern).matches(path), "{pattern} {path}");
            assert!(Glob::parse(pattern).intersects(&Glob::parse(path)));
        }
    }

    const PIECES: [&str; 14] = [
        "**", "*", "a", "b", "a*", "*b", "?", "a?", "ab", "[ab]", "{a,b}", ".", "", "a**",
    ];
    const NAMES: [&str; 6] = ["a", "b", "ab", "ba", "aa", "abb"];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Any text compiles, without a panic.
        #[test]
        fn any_text_compiles(text in "[a*?\\\\\\[\\]{},/.!-]{0,12}") {
            let _ = Pattern::new(&text).matches("a");
        }

        /// Sound: a path the engine matches is one the forecast says the
        /// pattern may match.
        #[test]
        fn the_forecast_covers_every_match(
            segs in proptest::collection::vec(proptest::sample::select(PIECES.to_vec()), 1..4),
            slash in proptest::bool::ANY,
            path in proptest::collection::vec(proptest::sample::select(NAMES.to_vec()), 1..5),
        ) {
            let pattern = segs.join("/") + if slash { "/" } else { "" };
            let path = path.join("/");
            if Pattern::new(&pattern).matches(&path) {
                proptest::prop_assert!(
                    Glob::parse(&pattern).intersects(&Glob::parse(&path)),
                    "the engine matches {path} with {pattern}, the forecast does not"
                );
            }
        }
    }
}
