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

/// The file at the root that marks the project's kind ([`test_command`]
/// says how it is tested), with the kind's name: `("Cargo.toml", "Rust")`.
pub fn marker(has: impl Fn(&str) -> bool) -> Option<(&'static str, &'static str)> {
    let kind = |m: &Marker| match m.test[0] {
        "cargo" => "Rust",
        "go" => "Go",
        "npm" => "Node",
        _ => "Python",
    };
    MARKERS
        .iter()
        .find_map(|m| m.files.iter().find(|f| has(f)).map(|f| (*f, kind(m))))
}

/// The lock file at the root whose set-up [`setup_line`] names.
pub fn lock_file(has: impl Fn(&str) -> bool) -> Option<&'static str> {
    LOCKS.iter().map(|(file, _)| *file).find(|f| has(f))
}

/// Lock files at the repository root, in order of preference, with the
/// `[workspace] setup` value that installs what they pin.
const LOCKS: &[(&str, &str)] = &[
    ("package-lock.json", r#"setup = [["npm", "ci"]]"#),
    (
        "pnpm-lock.yaml",
        r#"setup = [["pnpm", "install", "--frozen-lockfile"]]"#,
    ),
    (
        "yarn.lock",
        r#"setup = [["yarn", "install", "--frozen-lockfile"]]"#,
    ),
    ("Cargo.lock", r#"setup = [["cargo", "fetch", "--locked"]]"#),
    ("uv.lock", r#"setup = [["uv", "sync", "--frozen"]]"#),
    (
        "poetry.lock",
        r#"setup = [["poetry", "install", "--no-root"]]"#,
    ),
    (
        "requirements.txt",
        r#"setup = [["python3", "-m", "venv", ".venv"], [".venv/bin/pip", "install", "-r", "requirements.txt"]]"#,
    ),
];

/// The `[workspace] setup` line for the lock file at the root for which
/// `has` is true (`package-lock.json` -> `setup = [["npm", "ci"]]`);
/// `None` when there is none.
pub fn setup_line(has: impl Fn(&str) -> bool) -> Option<String> {
    LOCKS
        .iter()
        .find(|(file, _)| has(file))
        .map(|(_, line)| line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_file_names_its_set_up() {
        let of = |files: &[&str]| setup_line(|f| files.contains(&f));
        assert_eq!(
            of(&["package.json", "package-lock.json"]).as_deref(),
            Some(r#"setup = [["npm", "ci"]]"#)
        );
        assert_eq!(
            of(&["Cargo.toml", "Cargo.lock"]).as_deref(),
            Some(r#"setup = [["cargo", "fetch", "--locked"]]"#)
        );
        assert_eq!(of(&["package.json"]), None);
    }

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
