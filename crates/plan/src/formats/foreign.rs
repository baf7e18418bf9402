//! What the readers of plans written for other tools (Taskmaster, Auto-Claude,
//! Spec Kit) share: these plans are written by agents and people for a
//! tool that runs them its own way, so planwright must say where its reading
//! goes beyond what the plan states.

use super::Options;
use crate::diag::{Diagnostic, Sink};
use crate::model::{Gate, ScopeEntry, ScopeOp};
use crate::pointer::Pointer;

/// What a plan's verification text becomes.
#[derive(Debug, Clone, PartialEq)]
pub enum Verification {
    /// A command the run configuration allows: it must exit 0.
    Gate(Gate),
    /// A statement for the reviewer.
    Check(String),
}

/// How a plan states a verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stated {
    /// The format says it is a command (Auto-Claude's `"type": "command"`).
    Command,
    /// Free text, which may happen to be a command (Taskmaster's `testStrategy`).
    Text,
}

/// Reads `text`, a ticket's stated verification, as a gate when it is one
/// command whose exact argv the run configuration allows (`[commands]
/// allow`), else as a check. A stated command that cannot be a gate is
/// named in a warning, with the line that would allow it: these plans are
/// written by agents, so a person approves what runs.
pub fn verification(
    format: &str,
    label: &str,
    text: &str,
    stated: Stated,
    at: &Pointer,
    options: &Options,
    sink: &mut dyn Sink,
) -> Verification {
    let command = text.trim();
    let command = command
        .strip_prefix('`')
        .and_then(|c| c.strip_suffix('`'))
        .unwrap_or(command);
    let parsed = crate::command::parse(command);
    if let Ok(argv) = &parsed {
        if options.allowed_commands.contains(argv) {
            return Verification::Gate(Gate {
                name: command.to_string(),
                argv: argv.clone(),
            });
        }
    }
    if stated == Stated::Command {
        let d = match parsed {
            Ok(argv) => Diagnostic::warning(
                format!("{format}.command.not-allowed"),
                at,
                format!("{label}: `{command}` is not on the command allowlist, so it is a check for the reviewer, not a gate"),
            )
            .with_hint(format!(
                "to run it as a gate, add to planwright.toml under [commands]: allow = [{}]",
                super::codeboost::toml_argv(&argv)
            )),
            Err(e) => Diagnostic::warning(
                format!("{format}.command.shell"),
                at,
                format!("{label}: `{command}` cannot run without a shell ({e}), so it is a check for the reviewer, not a gate"),
            )
            .with_hint(format!("gates are one program and literal arguments; give the run a gate with `[gates] run` or `{}`", crate::Flag::Gate)),
        };
        sink.push(d);
    }
    Verification::Check(text.to_string())
}

/// The scope of a ticket whose plan names no files: the whole repository,
/// with a warning naming the ticket, so that overlaps and scope violations
/// are not silently unchecked.
pub fn everything(
    code: &str,
    label: &str,
    what: &str,
    at: &Pointer,
    sink: &mut dyn Sink,
) -> Vec<ScopeEntry> {
    sink.push(
        Diagnostic::warning(
            code,
            at,
            format!("{label}: {what}, so its scope is the whole repository (`**`)"),
        )
        .with_hint(format!("name the files it changes, or narrow the scope by hand after `planwright convert {} native`", crate::Flag::To)),
    );
    vec![ScopeEntry::any("**")]
}

/// A repository path as the plan writes it, made a scope pattern: `./`
/// dropped, a trailing `/` meaning the whole folder. `Err` says why it
/// cannot name files a ticket may change: outside the repository
/// (absolute, `..`), git's own (`.git`), or planwright's state
/// (`.planwright/`). The one check of every reader of these plans.
pub fn path_pattern(path: &str) -> Result<String, &'static str> {
    let trimmed = path.trim();
    let trimmed = trimmed.strip_prefix("./").unwrap_or(trimmed);
    let pattern = match trimmed.strip_suffix('/') {
        Some(folder) => format!("{folder}/**"),
        None => trimmed.to_string(),
    };
    if let Some(why) = super::native::pattern_problem(&pattern) {
        return Err(why);
    }
    let mut segments = pattern.split('/');
    if segments
        .clone()
        .any(|s| s.eq_ignore_ascii_case(".git"))
    {
        return Err("names `.git`, which belongs to git");
    }
    if segments.next() == Some(".planwright") {
        return Err("is inside `.planwright/`, planwright's own state");
    }
    Ok(pattern)
}

/// A scope entry for `path` with `op`, or an error at `at` naming why the
/// path cannot be one.
pub fn scope_entry(
    code: &str,
    label: &str,
    path: &str,
    op: ScopeOp,
    at: &Pointer,
    sink: &mut dyn Sink,
) -> Option<ScopeEntry> {
    match path_pattern(path) {
        Ok(pattern) => Some(ScopeEntry { pattern, op }),
        Err(why) => {
            sink.push(
                Diagnostic::error(code, at, format!("{label}: path '{path}' {why}")).with_hint(
                    "write a path relative to the repository root, with `/` between segments",
                ),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_patterns() {
        assert_eq!(path_pattern("./src/a.rs"), Ok("src/a.rs".to_string()));
        assert_eq!(path_pattern("docs/"), Ok("docs/**".to_string()));
        assert!(path_pattern("/etc/passwd").is_err());
        assert!(path_pattern("../x").is_err());
        assert!(path_pattern("").is_err());
        assert!(path_pattern(".git/config").is_err());
        assert!(path_pattern("sub/.GIT/hooks/x").is_err());
        assert!(path_pattern(".planwright/state.db").is_err());
        assert_eq!(path_pattern(".github/ci.yml"), Ok(".github/ci.yml".to_string()));
    }

    #[test]
    fn only_allowed_commands_become_gates() {
        let options = Options {
            allowed_commands: vec![vec!["npm".into(), "test".into()]],
            ..Options::default()
        };
        let mut found = Vec::new();
        let at = Pointer::root();
        let mut read =
            |text: &str, stated| verification("x", "T1", text, stated, &at, &options, &mut found);
        let gate = read("`npm test`", Stated::Text);
        assert!(matches!(gate, Verification::Gate(g) if g.argv == ["npm", "test"]));
        let check = Verification::Check("cargo test".into());
        assert_eq!(read("cargo test", Stated::Text), check);
        assert_eq!(read("cargo test", Stated::Command), check);
        let piped = Verification::Check("ls | wc".into());
        assert_eq!(read("ls | wc", Stated::Command), piped);
        let codes: Vec<&str> = found.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(codes, ["x.command.not-allowed", "x.command.shell"]);
    }
}
