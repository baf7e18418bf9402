//! Counterfactuals, executed: a declared mutation of a control path must
//! make the declared tests fail. Gates passing says the tests pass; this
//! says they would notice if the change were wrong.
//!
//! Each counterfactual runs confined like a gate, in planwright's own checkout of the candidate
//! (never the agent's workspace): the tests first run as they are (the
//! baseline, which must pass), then the control path is mutated, the tests
//! run again, and the file is put back.

use crate::error::EngineError;
use crate::gates::{append, GateRoom};
use crate::git::Git;
use crate::process::{self, Cancel, Exit, Finished};
use planwright_plan::model::{Counterfactual, Mutation};
use serde::{Deserialize, Serialize};
use std::path::{Component, Path};
use std::time::Duration;

/// What the mutated tests did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The tests failed under the mutation: the control is pinned.
    Red,
    /// The tests still passed: nothing pins the control.
    Green,
    /// The mutated tests ran out of time.
    Timeout,
    /// The counterfactual could not be judged (baseline failed, the
    /// mutation did not apply, the tests could not start).
    Error,
}

/// One counterfactual's result, for the report and the next charter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterfactualResult {
    /// The mutated file.
    pub control_path: String,
    /// The test command, as a shell would read it.
    pub command: String,
    /// What happened.
    pub outcome: Outcome,
    /// Why, in one line.
    pub message: String,
    /// The end of the tests' output (at most [`EXCERPT_LINES`] lines and
    /// [`EXCERPT_BYTES`] bytes).
    pub output_excerpt: String,
}

/// The argv that runs a counterfactual's tests: its own argv when it has
/// one (native plans), else Go's test runner (standard_v1's convention).
pub fn command(cf: &Counterfactual) -> Vec<String> {
    if let Some(argv) = cf.tests.argv.as_ref().filter(|a| !a.is_empty()) {
        return argv.clone();
    }
    let package = cf.tests.package.clone().unwrap_or_else(|| "./...".into());
    [
        "go",
        "test",
        "-json",
        "-count=1",
        "-run",
        &cf.tests.run,
        &package,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The most lines of test output a counterfactual's result keeps.
pub const EXCERPT_LINES: usize = 30;
/// The most bytes of test output a counterfactual's result keeps: it
/// travels in an event and in every report.
pub const EXCERPT_BYTES: usize = 2048;

/// The end of `text`: its last lines, cut to the last bytes at a character
/// boundary (the end of a test run is where the failure is).
pub fn excerpt(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(EXCERPT_LINES)..].join("\n");
    let mut start = tail.len().saturating_sub(EXCERPT_BYTES);
    while !tail.is_char_boundary(start) {
        start += 1;
    }
    tail[start..].to_string()
}

/// Runs one counterfactual in `dir`, a planwright-owned checkout of the
/// candidate, appending every output to `log`. `dir` is left as it was.
pub fn run(
    cf: &Counterfactual,
    dir: &Path,
    room: &GateRoom,
    timeout: Option<Duration>,
    log: &Path,
    cancel: &Cancel,
) -> Result<Option<CounterfactualResult>, EngineError> {
    let argv = command(cf);
    let command = planwright_plan::model::Gate {
        name: String::new(),
        argv: argv.clone(),
    }
    .command_line();
    let result = |outcome, message: String, output_excerpt: String| CounterfactualResult {
        control_path: cf.control_path.clone(),
        command: command.clone(),
        outcome,
        message,
        output_excerpt,
    };
    append(
        log,
        &format!("== counterfactual on `{}`: baseline\n", cf.control_path),
    )?;
    let Some(baseline) = tests(&argv, dir, room, timeout, log, cancel)? else {
        return Ok(None);
    };
    if !baseline.success() {
        return Ok(Some(result(
            Outcome::Error,
            format!("the baseline run of `{command}` failed ({}): the tests must pass before the mutation", baseline.exit),
            excerpt(&baseline.output_tail),
        )));
    }
    let path = match control_file(dir, &cf.control_path) {
        Ok(path) => path,
        Err(why) => return Ok(Some(result(Outcome::Error, why, String::new()))),
    };
    let original = std::fs::read(&path).map_err(|e| EngineError::io(&path, e))?;
    if let Err(why) = mutate(&cf.mutation, dir, &path, &original)? {
        return Ok(Some(result(Outcome::Error, why, String::new())));
    }
    append(
        log,
        &format!("== counterfactual on `{}`: mutated\n", cf.control_path),
    )?;
    let mutated = tests(&argv, dir, room, timeout, log, cancel);
    // Put the file back before anything else, whatever the tests did.
    std::fs::write(&path, &original).map_err(|e| EngineError::io(&path, e))?;
    let Some(mutated) = mutated? else {
        return Ok(None);
    };
    let tail = excerpt(&mutated.output_tail);
    Ok(Some(match mutated.exit {
        Exit::Code(0) => result(
            Outcome::Green,
            format!(
                "`{command}` still passes with `{}` mutated: no test pins it",
                cf.control_path
            ),
            tail,
        ),
        Exit::TimedOut => result(
            Outcome::Timeout,
            format!("`{command}` ran out of time under the mutation"),
            tail,
        ),
        other => result(
            Outcome::Red,
            format!("`{command}` fails under the mutation ({other}): the control is pinned"),
            tail,
        ),
    }))
}

/// The control path inside `dir`, refusing one that leaves it.
fn control_file(dir: &Path, rel: &str) -> Result<std::path::PathBuf, String> {
    let inside = Path::new(rel)
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    if !inside {
        return Err(format!("control path `{rel}` leaves the repository"));
    }
    let path = dir.join(rel);
    let meta = std::fs::symlink_metadata(&path);
    match meta {
        Ok(m) if m.is_file() => Ok(path),
        Ok(_) => Err(format!("control path `{rel}` is not a regular file")),
        Err(_) => Err(format!(
            "control path `{rel}` does not exist in the candidate"
        )),
    }
}

/// Applies the mutation; the inner error says why it did not apply.
fn mutate(
    mutation: &Mutation,
    dir: &Path,
    path: &Path,
    original: &[u8],
) -> Result<Result<(), String>, EngineError> {
    match mutation {
        Mutation::FindReplace { find, replace } => {
            let Ok(text) = std::str::from_utf8(original) else {
                return Ok(Err(format!("`{}` is not UTF-8 text", path.display())));
            };
            let count = if find.is_empty() {
                0
            } else {
                text.matches(find.as_str()).count()
            };
            if count != 1 {
                return Ok(Err(format!(
                    "the mutation's `find` text must occur exactly once in the control path; it occurs {count} times"
                )));
            }
            let mutated = text.replacen(find.as_str(), replace, 1);
            std::fs::write(path, mutated).map_err(|e| EngineError::io(path, e))?;
            Ok(Ok(()))
        }
        Mutation::Patch { patch } => {
            let file = tempfile::NamedTempFile::new().map_err(|e| EngineError::io(dir, e))?;
            std::fs::write(file.path(), patch).map_err(|e| EngineError::io(file.path(), e))?;
            // `git apply` outside a repository is a plain patch tool; inside
            // planwright's checkout it must not consult the index either.
            let out = Git::new(dir)
                .args(["apply", "--unsafe-paths", "--whitespace=nowarn"])
                .arg(file.path())
                .raw()?;
            if out.status.success() {
                Ok(Ok(()))
            } else {
                Ok(Err(format!(
                    "the mutation's patch does not apply cleanly: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )))
            }
        }
    }
}

/// Runs the tests once; None when the run was cancelled.
fn tests(
    argv: &[String],
    dir: &Path,
    room: &GateRoom,
    timeout: Option<Duration>,
    log: &Path,
    cancel: &Cancel,
) -> Result<Option<Finished>, EngineError> {
    let spec = room.spec(argv, dir, timeout, log);
    let done = match process::run(&spec, cancel) {
        Ok(done) => done,
        Err(e) => {
            append(log, &format!("{e}\n"))?;
            return Ok(Some(Finished {
                exit: Exit::Code(127),
                stdout_tail: String::new(),
                output_tail: e.to_string(),
                duration: Duration::ZERO,
            }));
        }
    };
    append(log, &format!("\n-> {}\n", done.exit))?;
    Ok((done.exit != Exit::Cancelled).then_some(done))
}
