//! Gate commands that cannot run, found before a run spends a token on
//! them: an npm, pnpm or yarn script that `package.json` of the base does
//! not have, a `cargo` subcommand that does not exist, a `make` target the
//! base's makefile does not name (where the makefile is plain enough to
//! read). Each is an error with the names it could have meant.

use super::{Check, CheckName};
use crate::git::repo::Repo;
use planwright_plan::model::Gate;
use planwright_plan::suggest::closest;
use std::cell::OnceCell;
use std::collections::BTreeSet;

/// What the base commit `base` of `repo` offers, read when a gate first asks.
struct Offered<'r> {
    repo: &'r Repo,
    base: &'r str,
    scripts: OnceCell<Option<BTreeSet<String>>>,
    cargo: OnceCell<Option<BTreeSet<String>>>,
}

/// Checks each distinct gate of `gates` (every ticket's, the configured
/// ones included) against the base commit `base`.
pub(super) fn check_gate_commands(repo: &Repo, base: &str, gates: &[Gate], out: &mut Vec<Check>) {
    let offered = Offered {
        repo,
        base,
        scripts: OnceCell::new(),
        cargo: OnceCell::new(),
    };
    let mut seen: BTreeSet<&[String]> = BTreeSet::new();
    for gate in gates {
        if seen.insert(&gate.argv) {
            out.extend(check_one(&offered, &gate.argv));
        }
    }
}

fn check_one(offered: &Offered, argv: &[String]) -> Option<Check> {
    let program = argv.first()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    match name {
        "npm" | "pnpm" | "yarn" => {
            let script = package_script(name, &argv[1..])?;
            let scripts = offered.scripts.get_or_init(|| offered.package_scripts());
            missing(
                argv,
                script,
                scripts.as_ref()?,
                "a script of `package.json`",
            )
        }
        "cargo" => {
            let sub = argv.get(1).filter(|s| !s.starts_with(['-', '+']))?;
            let subcommands = offered.cargo.get_or_init(cargo_subcommands);
            missing(argv, sub, subcommands.as_ref()?, "a `cargo` command")
        }
        "make" | "gmake" => {
            let (file, targets) = make_targets(argv)?;
            let known = offered.makefile_targets(&file)?;
            let what = format!("a target of `{file}`");
            targets.iter().find_map(|t| missing(argv, t, &known, &what))
        }
        _ => None,
    }
}

/// The error for `name`, which `argv` runs, when `known` lacks it.
fn missing(argv: &[String], name: &str, known: &BTreeSet<String>, what: &str) -> Option<Check> {
    if known.contains(name) {
        return None;
    }
    let line = argv.join(" ");
    let hint = match closest(name, known.iter().map(String::as_str)) {
        Some(near) => format!(
            "did you mean `{}`? Fix the gate",
            line.replacen(name, near, 1)
        ),
        None if known.is_empty() => format!("there is none; fix the gate `{line}`"),
        None => {
            let some: Vec<&str> = known.iter().take(12).map(String::as_str).collect();
            format!("{what} is one of: {}", some.join(", "))
        }
    };
    Some(Check::error(
        CheckName::Gates,
        format!("the gate `{line}` cannot run: `{name}` is not {what} on the base"),
        hint,
    ))
}

/// The script a package manager's gate runs: `test` (`npm test`, `npm t`,
/// `pnpm test`, `yarn test`) and `X` of `run X`; `None` for other commands
/// (a bare `yarn X` may be one of yarn's own).
fn package_script<'a>(manager: &str, rest: &'a [String]) -> Option<&'a str> {
    let first = rest.first()?.as_str();
    match first {
        "test" => Some("test"),
        "t" | "tst" if manager == "npm" => Some("test"),
        "run" | "run-script" => rest
            .get(1)
            .map(String::as_str)
            .filter(|s| !s.starts_with('-')),
        _ => None,
    }
}

impl Offered<'_> {
    /// The script names of `package.json` at the base; `None` when there is
    /// none or it is no JSON object (what npm says then is the project's).
    fn package_scripts(&self) -> Option<BTreeSet<String>> {
        let text = self.repo.file_at(self.base, "package.json").ok()??;
        let value: serde_json::Value = serde_json::from_str(&text).ok()?;
        let scripts = value.as_object()?.get("scripts");
        let names = scripts
            .and_then(|s| s.as_object())
            .map(|s| s.keys().cloned().collect())
            .unwrap_or_default();
        Some(names)
    }

    /// The targets `file` at the base names, when it is plain enough to be
    /// sure of them: no `include`, no pattern rules, no variables in
    /// target names.
    fn makefile_targets(&self, file: &str) -> Option<BTreeSet<String>> {
        let text = self.repo.file_at(self.base, file).ok()??;
        let mut targets = BTreeSet::new();
        for line in text.lines() {
            let word = line.split_whitespace().next().unwrap_or_default();
            if matches!(word, "include" | "-include" | "sinclude") {
                return None;
            }
            if line.starts_with(['\t', '#', ' ']) {
                continue;
            }
            let Some((names, rest)) = line.split_once(':') else {
                continue;
            };
            if rest.starts_with('=') || names.contains('=') {
                continue;
            }
            if names.contains(['%', '$']) {
                return None;
            }
            targets.extend(names.split_whitespace().map(String::from));
        }
        Some(targets)
    }
}

/// The makefile `make` reads and the targets it is asked for; `None` when
/// the command changes directory, names variables, or asks for the default.
fn make_targets(argv: &[String]) -> Option<(String, Vec<String>)> {
    let mut file = None;
    let mut targets = Vec::new();
    let mut words = argv[1..].iter();
    while let Some(w) = words.next() {
        match w.as_str() {
            "-f" | "--file" | "--makefile" => file = Some(words.next()?.clone()),
            "-C" | "--directory" | "-I" | "-o" | "-W" => return None,
            w if w.starts_with('-') => {}
            w if w.contains('=') => {}
            w => targets.push(w.to_string()),
        }
    }
    if targets.is_empty() {
        return None;
    }
    Some((file.unwrap_or_else(|| "Makefile".into()), targets))
}

/// `cargo --list`'s commands (built-in ones and `cargo-*` programs on
/// `PATH`), with their aliases; `None` when it cannot be asked.
fn cargo_subcommands() -> Option<BTreeSet<String>> {
    let out = std::process::Command::new("cargo")
        .arg("--list")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut names = BTreeSet::new();
    for line in text.lines().filter(|l| l.starts_with(' ')) {
        // "    build, b             Compile ..." or "    fmt    Formats ...".
        let head = line
            .split("  ")
            .find(|p| !p.trim().is_empty())
            .unwrap_or_default();
        names.extend(
            head.split(',')
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty()),
        );
    }
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split(' ').map(String::from).collect()
    }

    #[test]
    fn scripts_are_read_from_the_commands_that_run_one() {
        assert_eq!(package_script("npm", &argv("run tset")), Some("tset"));
        assert_eq!(package_script("npm", &argv("t")), Some("test"));
        assert_eq!(package_script("pnpm", &argv("test")), Some("test"));
        assert_eq!(
            package_script("yarn", &argv("run lint --fix")),
            Some("lint")
        );
        assert_eq!(package_script("yarn", &argv("install")), None);
        assert_eq!(package_script("npm", &argv("ci")), None);
    }

    #[test]
    fn a_missing_name_suggests_the_near_one() {
        let known: BTreeSet<String> = ["test", "lint"].map(String::from).into();
        let c = missing(&argv("npm run tset"), "tset", &known, "a script").unwrap();
        assert_eq!(
            c.hint.as_deref(),
            Some("did you mean `npm run test`? Fix the gate")
        );
        assert!(missing(&argv("npm test"), "test", &known, "a script").is_none());
    }

    #[test]
    fn make_targets_are_found_unless_the_command_moves() {
        assert_eq!(
            make_targets(&argv("make -j4 check V=1")),
            Some(("Makefile".into(), vec!["check".into()]))
        );
        assert_eq!(make_targets(&argv("make -C sub check")), None);
        assert_eq!(make_targets(&argv("make")), None);
    }
}
