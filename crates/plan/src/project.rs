//! What a repository's own files say about how it is tested, so that a
//! hint suggesting a test command suggests the project's, never another
//! ecosystem's (no `cargo test` for a Python project).

/// A project kind, known by a file at the repository root.
struct Marker {
    /// Any of these files at the root marks the project.
    files: &'static [&'static str],
    /// The conventional command that runs its tests.
    test: &'static [&'static str],
}

/// In order of preference when a repository has several.
const MARKERS: &[Marker] = &[
    Marker {
        files: &["Cargo.toml"],
        test: &["cargo", "test"],
    },
    Marker {
        files: &["go.mod"],
        test: &["go", "test", "./..."],
    },
    Marker {
        files: &["package.json"],
        test: &["npm", "test"],
    },
    Marker {
        files: &[
            "pyproject.toml",
            "pytest.ini",
            "setup.py",
            "setup.cfg",
            "tox.ini",
        ],
        test: &["pytest"],
    },
];

/// The test command of the repository whose root holds the files for which
/// `has` is true (`Cargo.toml` -> `cargo test`, `package.json` -> `npm
/// test`, ...); `None` when no marker is there.
pub fn test_command(has: impl Fn(&str) -> bool) -> Option<Vec<String>> {
    MARKERS
        .iter()
        .find(|m| m.files.iter().any(|f| has(f)))
        .map(|m| m.test.iter().map(|w| w.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(files: &[&str]) -> Option<String> {
        test_command(|f| files.contains(&f)).map(|argv| argv.join(" "))
    }

    #[test]
    fn each_ecosystem_gets_its_own_command() {
        assert_eq!(of(&["Cargo.toml", "src"]).as_deref(), Some("cargo test"));
        assert_eq!(of(&["go.mod"]).as_deref(), Some("go test ./..."));
        assert_eq!(of(&["package.json"]).as_deref(), Some("npm test"));
        assert_eq!(of(&["pyproject.toml"]).as_deref(), Some("pytest"));
        assert_eq!(of(&["README.md"]), None);
    }
}
