//! Gate-script integrity: a ticket must not change what its gates run.
//! [`program_files`] names the repository files any gate runs as its
//! program; the rest of this module is about npm gates.
//!
//! `npm test` runs whatever `package.json` says, so a ticket that rewrites
//! the `test` script to `exit 0` would pass its own gate. Before a candidate
//! is trusted, its `package.json` is compared with the base's: the gate
//! script, every script it runs through `npm run`/`npm test` (followed
//! breadth-first), their `pre`/`post` hooks and the global lifecycle scripts
//! must be unchanged. Each finding is an error of kind [`KIND`].
//!
//! Same rules as agb's `verifyGateScriptIntegrity`, with one deliberate
//! difference: removing a hook also counts (it changes what the gate runs),
//! where agb only flags new or changed hooks.

use std::collections::{HashSet, VecDeque};
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

/// The error kind of every finding.
pub const KIND: &str = "gate_script_tampering";

/// Scripts npm runs on its own (install, pack, publish): changing them is
/// tampering whatever the gate is.
pub const LIFECYCLE_SCRIPTS: &[&str] = &[
    "install",
    "preinstall",
    "postinstall",
    "prepare",
    "prepack",
    "postpack",
    "publish",
];

/// How one script hands work to another (agb's pattern). No capture means
/// `npm test`, that is the script `test`.
static DELEGATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bnpm\s+(?:run(?:-script)?\s+([a-zA-Z0-9_:-]+)|test)\b").expect("valid regex")
});

/// One way the candidate changed what the gate runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tampering {
    /// The script concerned; `None` for the file as a whole (deleted,
    /// unreadable).
    pub script: Option<String>,
    /// What changed, for people: "gate script `test` changed from
    /// `node --test` to `exit 0`".
    pub message: String,
}

impl std::fmt::Display for Tampering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Whether a command runs a package manager (npm gates among them): one
/// that reads `package.json`, runs its lifecycle scripts when it installs,
/// and reads the [`RC_FILES`].
pub fn package_manager(argv: &[String]) -> bool {
    npm_script(argv).is_some()
        || matches!(
            argv.first().map(|p| p.rsplit('/').next().unwrap_or(p)),
            Some("npm" | "npx" | "pnpm" | "yarn")
        )
}

/// Package-manager configuration files that can replace what a script runs.
pub const RC_FILES: [&str; 4] = [".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs"];

/// The npm script a gate runs: `test` for `npm test` (also `npm t`,
/// `npm tst`), `X` for `npm run X` (also `run-script`, `rum`, `urn`).
/// Arguments after the script (`npm test -- --watch=false`) do not matter.
/// `None` for every other gate.
pub fn npm_script(gate_argv: &[String]) -> Option<&str> {
    let (program, rest) = gate_argv.split_first()?;
    if program.rsplit('/').next() != Some("npm") {
        return None;
    }
    match rest {
        [command, ..] if matches!(command.as_str(), "test" | "t" | "tst") => Some("test"),
        [command, script, ..]
            if matches!(command.as_str(), "run" | "run-script" | "rum" | "urn")
                && !script.starts_with('-') =>
        {
            Some(script)
        }
        _ => None,
    }
}

/// The repository files a gate runs as its program, as paths from the
/// repository's top, where gates run: the program itself when it is a
/// relative path (`./check.sh`, `scripts/test`), the script an interpreter
/// is given (`sh scripts/test.sh`, `python3 tools/check.py`), and the
/// makefile `make` reads (`-f`, or the names it looks for, in `-C`'s
/// directory), also after `env` and its settings. None when the
/// interpreter is given its code inline (`sh -c`, `python -m`, `node -e`).
/// A candidate that changes one of these files changes what judges it.
pub fn program_files(gate_argv: &[String]) -> Vec<String> {
    let mut words = gate_argv.iter().map(String::as_str).peekable();
    if words.peek() == Some(&"env") {
        words.next();
        while words
            .next_if(|w| w.starts_with('-') || w.contains('='))
            .is_some()
        {}
    }
    let Some(program) = words.next() else {
        return Vec::new();
    };
    // A bare program name is looked up on `PATH`; a bare script name is a
    // file where the gate runs.
    let mut files: Vec<String> = (program.contains('/'))
        .then(|| repo_path(program))
        .flatten()
        .into_iter()
        .collect();
    let name = program.rsplit('/').next().unwrap_or(program);
    if INTERPRETERS.contains(&name) {
        files.extend(script(words).and_then(repo_path));
    } else if matches!(name, "make" | "gmake") {
        files.extend(makefiles(words));
    }
    files
}

/// The makefiles `make` reads with these arguments: each `-f FILE`, else
/// the first of `GNUmakefile`, `makefile` and `Makefile` that exists, so
/// all three (creating one ahead of the others replaces it); in the
/// directory `-C` names.
fn makefiles<'w>(mut words: impl Iterator<Item = &'w str>) -> Vec<String> {
    let (mut dir, mut given) = (String::new(), Vec::new());
    while let Some(word) = words.next() {
        let value = |flag: &str, long: &str| {
            word.strip_prefix(long)
                .or_else(|| word.strip_prefix(flag).filter(|v| !v.is_empty()))
        };
        match word {
            "-C" | "--directory" => dir = words.next().unwrap_or("").to_string(),
            "-f" | "--file" | "--makefile" => given.extend(words.next()),
            _ => {
                if let Some(d) = value("-C", "--directory=") {
                    dir = d.to_string();
                } else if let Some(f) = value("-f", "--file=").or(word.strip_prefix("--makefile="))
                {
                    given.push(f);
                }
            }
        }
    }
    if given.is_empty() {
        given = vec!["GNUmakefile", "makefile", "Makefile"];
    }
    let under = |f: &str| match dir.as_str() {
        "" => f.to_string(),
        _ if f.starts_with('/') => f.to_string(),
        dir => format!("{dir}/{f}"),
    };
    given
        .into_iter()
        .filter_map(|f| repo_path(&under(f)))
        .collect()
}

/// Whether `scope` names `file` itself, with a pattern without wildcards:
/// the plan's leave for the ticket to change a file one of its gates runs
/// (a test script the ticket extends, say). A glob that happens to cover
/// it (`**`, `ci/**`) gives no such leave.
pub fn named(scope: &[crate::model::ScopeEntry], file: &str) -> bool {
    (scope.iter())
        .any(|e| !crate::scope::is_glob(&e.pattern) && crate::scope::normalize(&e.pattern) == file)
}

/// The first of `gates` that runs a file a glob of `scope` covers without
/// the scope naming it, with that pattern and file: a candidate that
/// changes the file will be rejected. What `validate` and `preflight` warn
/// of.
pub fn exposed<'g, 's>(
    scope: &'s [crate::model::ScopeEntry],
    gates: impl IntoIterator<Item = &'g crate::model::Gate>,
) -> Option<(&'g crate::model::Gate, &'s str, String)> {
    gates.into_iter().find_map(|gate| {
        let (pattern, file) = unnamed_in_scope(scope, &program_files(&gate.argv))?;
        Some((gate, pattern, file))
    })
}

/// The first pattern of `scope` that covers one of `files` without the
/// scope naming that file, with the file.
fn unnamed_in_scope<'s>(
    scope: &'s [crate::model::ScopeEntry],
    files: &[String],
) -> Option<(&'s str, String)> {
    let unnamed: Vec<&String> = files.iter().filter(|f| !named(scope, f)).collect();
    scope.iter().find_map(|entry| {
        let pattern = crate::scope::Pattern::new(&entry.pattern);
        let file = unnamed.iter().find(|f| pattern.matches(f))?;
        Some((entry.pattern.as_str(), file.to_string()))
    })
}

/// The script an interpreter's arguments name: the first word that is not
/// an option or an option's value.
fn script<'w>(mut words: impl Iterator<Item = &'w str>) -> Option<&'w str> {
    while let Some(word) = words.next() {
        if INLINE_CODE.contains(&word) {
            return None;
        }
        if VALUED.contains(&word) {
            words.next();
        } else if !word.starts_with('-') {
            return Some(word);
        }
    }
    None
}

/// Programs that run the file named by their first argument.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "python", "python3", "node", "ruby", "perl", "php",
];

/// Options after which an interpreter runs code given inline, or a module,
/// rather than a file.
const INLINE_CODE: &[&str] = &["-c", "-e", "-m", "-p", "--eval", "--print"];

/// Interpreters' options whose value is the next word (not bash's `-O`,
/// which would take python's `-O script.py` apart).
const VALUED: &[&str] = &["-W", "-X", "-o", "-r", "--require", "--import", "--loader"];

/// `word` as a path from the repository's top, when it names one there:
/// relative, and never above the top.
fn repo_path(word: &str) -> Option<String> {
    if word.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in word.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Compares the base and candidate `package.json` texts (`None`: the file
/// does not exist) for a gate, and returns every finding, in a stable
/// order: the gate script, the scripts it runs (breadth-first) with their
/// hooks, then the lifecycle scripts. Empty when the gate is not an npm
/// gate, or nothing changed.
pub fn check(
    gate_argv: &[String],
    base_package_json: Option<&str>,
    candidate_package_json: Option<&str>,
) -> Vec<Tampering> {
    match npm_script(gate_argv) {
        Some(root) => compare(Some(root), base_package_json, candidate_package_json),
        None => Vec::new(),
    }
}

/// Compares the lifecycle scripts alone, for a command that installs
/// (`npm ci`, `pnpm install`, `yarn`): npm runs them on its own.
pub fn check_installs(
    base_package_json: Option<&str>,
    candidate_package_json: Option<&str>,
) -> Vec<Tampering> {
    compare(None, base_package_json, candidate_package_json)
}

/// The gate script `root` with what it runs (when there is one), then the
/// lifecycle scripts.
fn compare(
    root: Option<&str>,
    base_package_json: Option<&str>,
    candidate_package_json: Option<&str>,
) -> Vec<Tampering> {
    let base = match base_package_json.map(scripts).transpose() {
        Ok(base) => base.unwrap_or_default(),
        Err(why) => {
            return whole_file(format!(
                "the base package.json {why}, so the gate script cannot be verified"
            ))
        }
    };
    let candidate = match candidate_package_json {
        None if base_package_json.is_none() => return Vec::new(),
        None => return whole_file("package.json was deleted".to_string()),
        Some(text) => match scripts(text) {
            Ok(candidate) => candidate,
            Err(why) => return whole_file(format!("the candidate's package.json {why}")),
        },
    };
    let mut findings = Findings::new(&base, &candidate);
    if let Some(root) = root {
        findings.follow(root);
    }
    for name in LIFECYCLE_SCRIPTS {
        findings.compare(name, &format!("lifecycle script `{name}`"));
    }
    findings.list
}

fn whole_file(message: String) -> Vec<Tampering> {
    vec![Tampering {
        script: None,
        message,
    }]
}

/// The `scripts` object of a package.json; missing or not an object reads
/// as no scripts (npm runs none then either).
fn scripts(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(package)) => Ok(match package.get("scripts") {
            Some(Value::Object(scripts)) => scripts.clone(),
            _ => Map::new(),
        }),
        Ok(_) => Err("is not a JSON object".to_string()),
        Err(e) => Err(format!("is not valid JSON ({e})")),
    }
}

/// Findings so far, one per script.
struct Findings<'a> {
    base: &'a Map<String, Value>,
    candidate: &'a Map<String, Value>,
    reported: HashSet<String>,
    list: Vec<Tampering>,
}

impl<'a> Findings<'a> {
    fn new(base: &'a Map<String, Value>, candidate: &'a Map<String, Value>) -> Findings<'a> {
        Findings {
            base,
            candidate,
            reported: HashSet::new(),
            list: Vec::new(),
        }
    }

    /// The gate script, then breadth-first every script it runs, each with
    /// its `pre`/`post` hooks.
    fn follow(&mut self, root: &str) {
        self.root(root);
        let mut queue = VecDeque::from([(root.to_string(), None::<String>)]);
        let mut followed = HashSet::from([root.to_string()]);
        while let Some((name, run_by)) = queue.pop_front() {
            if let Some(run_by) = &run_by {
                self.compare(&name, &format!("script `{name}`, run by `{run_by}`,"));
            }
            let hooks = [format!("pre{name}"), format!("post{name}")];
            for hook in &hooks {
                self.compare(hook, &format!("hook `{hook}` of `{name}`"));
            }
            for runner in hooks.iter().chain([&name]) {
                for next in self.delegations(runner) {
                    if followed.insert(next.clone()) {
                        queue.push_back((next, Some(runner.clone())));
                    }
                }
            }
        }
    }

    /// The gate script must exist on both sides, unchanged.
    fn root(&mut self, name: &str) {
        let subject = format!("gate script `{name}`");
        match (self.base.get(name), self.candidate.get(name)) {
            (None, None) => self.report(
                name,
                format!(
                    "{subject} is defined neither in the base nor in the candidate's package.json"
                ),
            ),
            (None, Some(now)) => self.report(
                name,
                format!(
                    "{subject} was added (`{}`); it must already exist in the base package.json",
                    show(now)
                ),
            ),
            _ => self.compare(name, &subject),
        }
    }

    /// Reports `name` if it was added, removed or changed.
    fn compare(&mut self, name: &str, subject: &str) {
        let message = match (self.base.get(name), self.candidate.get(name)) {
            (None, None) => return,
            (Some(was), Some(now)) if was == now => return,
            (None, Some(now)) => format!("{subject} was added: `{}`", show(now)),
            (Some(was), None) => format!("{subject} was removed (it was `{}`)", show(was)),
            (Some(was), Some(now)) => {
                format!("{subject} changed from `{}` to `{}`", show(was), show(now))
            }
        };
        self.report(name, message);
    }

    fn report(&mut self, name: &str, message: String) {
        if self.reported.insert(name.to_string()) {
            self.list.push(Tampering {
                script: Some(name.to_string()),
                message,
            });
        }
    }

    /// The scripts `name` runs, on either side (a changed script may have
    /// gained or lost a delegation; both are followed).
    fn delegations(&self, name: &str) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        let texts = [self.base.get(name), self.candidate.get(name)];
        for text in texts.into_iter().flatten().filter_map(Value::as_str) {
            for caps in DELEGATION.captures_iter(text) {
                let next = caps.get(1).map_or("test", |m| m.as_str()).to_string();
                if !found.contains(&next) {
                    found.push(next);
                }
            }
        }
        found
    }
}

/// A script's command as written; a value that is not a string (npm would
/// reject it) as its JSON text.
fn show(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(gate: &str) -> Vec<String> {
        gate.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn the_files_a_gate_runs_are_its_program_script_or_makefile() {
        let cases: &[(&str, &[&str])] = &[
            ("./check.sh", &["check.sh"]),
            ("scripts/test --fast", &["scripts/test"]),
            ("./tools/../ci/run.sh", &["ci/run.sh"]),
            ("sh check.sh", &["check.sh"]),
            ("bash -eu ./scripts/test.sh arg", &["scripts/test.sh"]),
            ("python3 tools/check.py", &["tools/check.py"]),
            ("python3 -O -X dev tools/check.py", &["tools/check.py"]),
            ("/usr/bin/python3 -W ignore::x t.py", &["t.py"]),
            ("env CI=1 ./check.sh", &["check.sh"]),
            ("./bin/sh x.sh", &["bin/sh", "x.sh"]),
            ("node -r ts-node/register test/all.ts", &["test/all.ts"]),
            ("make check", &["GNUmakefile", "makefile", "Makefile"]),
            ("make -C sub -f ci.mk test", &["sub/ci.mk"]),
            (
                "make --directory=sub --file=a.mk -fb.mk",
                &["sub/a.mk", "sub/b.mk"],
            ),
            // Code inline, a module, a program on PATH or outside the repository.
            ("sh -c ./check.sh", &[]),
            ("python3 -m pytest tests", &[]),
            ("node -e 1", &[]),
            ("node --test", &[]),
            ("cargo test", &[]),
            ("make -C sub -f /etc/x.mk", &[]),
            ("/usr/local/bin/check", &[]),
            ("../outside.sh", &[]),
            ("npm test", &[]),
        ];
        for (gate, want) in cases {
            assert_eq!(program_files(&argv(gate)), *want, "{gate}");
        }
    }

    fn package(scripts: &[(&str, &str)]) -> String {
        let scripts: Map<String, Value> = scripts
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect();
        serde_json::json!({"name": "demo", "version": "1.0.0", "scripts": scripts}).to_string()
    }

    fn findings(gate: &str, base: &[(&str, &str)], candidate: &[(&str, &str)]) -> Vec<Tampering> {
        check(&argv(gate), Some(&package(base)), Some(&package(candidate)))
    }

    fn scripts_of(found: &[Tampering]) -> Vec<&str> {
        found.iter().filter_map(|t| t.script.as_deref()).collect()
    }

    const TEST: (&str, &str) = ("test", "node --test");

    #[test]
    fn npm_script_recognises_npm_gates_only() {
        let script = |gate: &str| npm_script(&argv(gate)).map(str::to_string);
        assert_eq!(script("npm test").as_deref(), Some("test"));
        assert_eq!(script("npm t").as_deref(), Some("test"));
        assert_eq!(script("npm run lint").as_deref(), Some("lint"));
        assert_eq!(
            script("npm run-script build:ci").as_deref(),
            Some("build:ci")
        );
        assert_eq!(script("/usr/bin/npm test -- --x").as_deref(), Some("test"));
        assert_eq!(script("npm run"), None);
        assert_eq!(script("npm run --silent"), None);
        assert_eq!(script("npm install"), None);
        assert_eq!(script("cargo test"), None);
        assert_eq!(script("npx test"), None);
        assert_eq!(npm_script(&[]), None);
    }

    #[test]
    fn other_gates_are_not_checked() {
        let found = findings("cargo test", &[TEST], &[("test", "exit 0")]);
        assert!(found.is_empty());
        assert_eq!(check(&argv("make check"), Some("{}"), None), []);
    }

    #[test]
    fn unchanged_package_json_passes() {
        let scripts = [
            TEST,
            ("pretest", "npm run build"),
            ("build", "tsc"),
            ("postinstall", "x"),
        ];
        assert_eq!(findings("npm test", &scripts, &scripts), []);
    }

    #[test]
    fn a_changed_gate_script_is_tampering() {
        let found = findings("npm test", &[TEST], &[("test", "exit 0")]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].script.as_deref(), Some("test"));
        assert_eq!(
            found[0].message,
            "gate script `test` changed from `node --test` to `exit 0`"
        );
    }

    #[test]
    fn an_install_compares_the_lifecycle_scripts_alone() {
        let base = package(&[("test", "node --test"), ("postinstall", "node setup.js")]);
        let same = package(&[("test", "exit 0"), ("postinstall", "node setup.js")]);
        assert_eq!(check_installs(Some(&base), Some(&same)), []);
        let poisoned = package(&[("test", "node --test"), ("postinstall", "node evil.js")]);
        let found = check_installs(Some(&base), Some(&poisoned));
        assert_eq!(scripts_of(&found), ["postinstall"]);
        let added = package(&[("prepare", "node evil.js")]);
        assert_eq!(scripts_of(&check_installs(None, Some(&added))), ["prepare"]);
    }

    #[test]
    fn the_gate_script_must_exist_on_both_sides() {
        let removed = findings("npm run lint", &[("lint", "eslint .")], &[]);
        assert_eq!(
            removed[0].message,
            "gate script `lint` was removed (it was `eslint .`)"
        );

        let added = findings("npm run lint", &[], &[("lint", "true")]);
        assert_eq!(scripts_of(&added), ["lint"]);
        assert!(
            added[0].message.contains("must already exist in the base"),
            "{}",
            added[0]
        );

        let neither = findings("npm run lint", &[TEST], &[TEST]);
        assert_eq!(scripts_of(&neither), ["lint"]);

        let both = findings(
            "npm run lint",
            &[("lint", "eslint .")],
            &[("lint", "eslint .")],
        );
        assert_eq!(both, []);
    }

    #[test]
    fn scripts_the_gate_delegates_to_are_followed_breadth_first() {
        let base = [
            ("test", "npm run build && npm run-script unit"),
            ("build", "npm run compile"),
            ("compile", "tsc"),
            ("unit", "node --test"),
            ("lint", "eslint ."),
        ];
        // Unrelated scripts may change.
        let mut candidate = base;
        candidate[4] = ("lint", "true");
        assert_eq!(findings("npm test", &base, &candidate), []);

        // Two levels down still counts.
        let mut candidate = base;
        candidate[2] = ("compile", "true");
        let found = findings("npm test", &base, &candidate);
        assert_eq!(scripts_of(&found), ["compile"]);
        assert_eq!(
            found[0].message,
            "script `compile`, run by `build`, changed from `tsc` to `true`"
        );

        let mut candidate = base;
        candidate[3] = ("unit", "exit 0");
        assert_eq!(
            scripts_of(&findings("npm test", &base, &candidate)),
            ["unit"]
        );
    }

    #[test]
    fn npm_test_inside_a_script_delegates_to_test() {
        let base = [("ci", "npm test"), TEST];
        assert_eq!(findings("npm run ci", &base, &base), []);
        let found = findings("npm run ci", &base, &[("ci", "npm test"), ("test", "true")]);
        assert_eq!(scripts_of(&found), ["test"]);
    }

    #[test]
    fn a_removed_or_added_delegate_is_tampering() {
        let base = [("test", "npm run unit"), ("unit", "node --test")];
        let removed = findings("npm test", &base, &[("test", "npm run unit")]);
        assert_eq!(scripts_of(&removed), ["unit"]);
        assert!(removed[0].message.contains("was removed"), "{}", removed[0]);

        let added = findings(
            "npm test",
            &[("test", "npm run unit")],
            &[("test", "npm run unit"), ("unit", "true")],
        );
        assert_eq!(scripts_of(&added), ["unit"]);
    }

    #[test]
    fn delegation_cycles_end() {
        let base = [
            ("test", "npm run a"),
            ("a", "npm run b"),
            ("b", "npm run a"),
        ];
        assert_eq!(findings("npm test", &base, &base), []);
        let candidate = [("test", "npm run a"), ("a", "npm run b"), ("b", "true")];
        assert_eq!(scripts_of(&findings("npm test", &base, &candidate)), ["b"]);
    }

    #[test]
    fn new_or_changed_hooks_of_followed_scripts_are_tampering() {
        let base = [
            ("test", "npm run build"),
            ("build", "tsc"),
            ("prebuild", "rm -rf dist"),
        ];
        let new_hook = findings(
            "npm test",
            &base,
            &[base[0], base[1], base[2], ("pretest", "exit 0")],
        );
        assert_eq!(scripts_of(&new_hook), ["pretest"]);
        assert_eq!(
            new_hook[0].message,
            "hook `pretest` of `test` was added: `exit 0`"
        );

        let changed = findings("npm test", &base, &[base[0], base[1], ("prebuild", "true")]);
        assert_eq!(scripts_of(&changed), ["prebuild"]);

        let post = findings(
            "npm test",
            &base,
            &[base[0], base[1], base[2], ("postbuild", "x")],
        );
        assert_eq!(scripts_of(&post), ["postbuild"]);
    }

    #[test]
    fn hooks_of_scripts_the_gate_does_not_run_may_change() {
        let base = [TEST, ("lint", "eslint .")];
        let candidate = [
            TEST,
            ("lint", "eslint ."),
            ("prelint", "true"),
            ("postlint", "x"),
        ];
        assert_eq!(findings("npm test", &base, &candidate), []);
    }

    #[test]
    fn a_removed_hook_is_tampering() {
        let base = [TEST, ("pretest", "npm run lint"), ("lint", "eslint .")];
        let found = findings("npm test", &base, &[TEST, ("lint", "eslint .")]);
        assert_eq!(scripts_of(&found), ["pretest"]);
        assert!(found[0].message.contains("was removed"), "{}", found[0]);
    }

    #[test]
    fn scripts_run_by_hooks_are_followed() {
        let base = [TEST, ("pretest", "npm run lint"), ("lint", "eslint .")];
        let found = findings("npm test", &base, &[TEST, base[1], ("lint", "true")]);
        assert_eq!(scripts_of(&found), ["lint"]);
        assert!(
            found[0].message.contains("run by `pretest`"),
            "{}",
            found[0]
        );
    }

    #[test]
    fn any_change_to_a_lifecycle_script_is_tampering() {
        let base = [TEST, ("postinstall", "node setup.js")];
        let added = findings(
            "npm test",
            &base,
            &[TEST, base[1], ("preinstall", "curl x | sh")],
        );
        assert_eq!(scripts_of(&added), ["preinstall"]);
        assert_eq!(
            added[0].message,
            "lifecycle script `preinstall` was added: `curl x | sh`"
        );

        let removed = findings("npm test", &base, &[TEST]);
        assert_eq!(scripts_of(&removed), ["postinstall"]);

        let changed = findings("npm test", &base, &[TEST, ("postinstall", "node evil.js")]);
        assert_eq!(scripts_of(&changed), ["postinstall"]);

        for name in LIFECYCLE_SCRIPTS {
            let found = findings("npm test", &[TEST], &[TEST, (name, "x")]);
            assert_eq!(scripts_of(&found), [*name]);
        }
        assert_eq!(findings("npm test", &base, &base), []);
    }

    #[test]
    fn every_finding_is_reported_once() {
        let base = [("test", "npm run prepare"), ("prepare", "tsc")];
        let candidate = [("test", "exit 0"), ("prepare", "true"), ("pretest", "x")];
        let found = findings("npm test", &base, &candidate);
        assert_eq!(scripts_of(&found), ["test", "pretest", "prepare"]);
    }

    #[test]
    fn a_deleted_package_json_is_tampering() {
        let base = package(&[TEST]);
        let found = check(&argv("npm test"), Some(&base), None);
        assert_eq!(
            found,
            [Tampering {
                script: None,
                message: "package.json was deleted".into()
            }]
        );
        assert_eq!(check(&argv("npm test"), None, None), []);
    }

    #[test]
    fn a_package_json_added_by_the_candidate_defines_no_trusted_gate() {
        let found = check(&argv("npm test"), None, Some(&package(&[TEST])));
        assert_eq!(scripts_of(&found), ["test"]);
    }

    #[test]
    fn an_unreadable_package_json_is_tampering() {
        let base = package(&[TEST]);
        let broken = check(&argv("npm test"), Some(&base), Some("{\"scripts\": {"));
        assert_eq!(broken.len(), 1);
        assert_eq!(broken[0].script, None);
        assert!(broken[0]
            .message
            .starts_with("the candidate's package.json is not valid JSON"));

        let not_object = check(&argv("npm test"), Some(&base), Some("[]"));
        assert!(not_object[0].message.contains("is not a JSON object"));

        let bad_base = check(&argv("npm test"), Some("nope"), Some(&base));
        assert!(bad_base[0]
            .message
            .starts_with("the base package.json is not valid JSON"));

        // Formatting, other fields and a byte-order mark are not changes.
        let reformatted = "\u{feff}{\n  \"scripts\": { \"test\": \"node --test\" }\n}";
        assert_eq!(check(&argv("npm test"), Some(&base), Some(reformatted)), []);
    }

    #[test]
    fn a_script_that_is_not_a_string_is_compared_as_json() {
        let base = r#"{"scripts": {"test": "node --test"}}"#;
        let candidate = r#"{"scripts": {"test": ["exit 0"]}}"#;
        let found = check(&argv("npm test"), Some(base), Some(candidate));
        assert_eq!(
            found[0].message,
            "gate script `test` changed from `node --test` to `[\"exit 0\"]`"
        );
    }
}
