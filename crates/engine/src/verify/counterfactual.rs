//! Counterfactuals, executed: a declared mutation of a control path must
//! make the declared tests fail. Gates passing says the tests pass; this
//! says they would notice if the change were wrong.
//!
//! Each counterfactual runs confined like a gate, in planwright's own checkout of the candidate
//! (never the agent's workspace): the tests first run as they are (the
//! baseline, which must pass), then the control path is mutated, the tests
//! run again, and the file is put back.

use crate::error::EngineError;
use crate::git::worktree::WorkTree;
use crate::model::CounterfactualOutcome;
use crate::verify::gates::{append, GateRoom};
use planwright_os::beneath::{BeneathError, Dir, Kind};
use planwright_os::process::{self, Cancel, Exit, Finished};
use planwright_plan::model::{Counterfactual, Mutation};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// One counterfactual's result, for the report and the next charter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterfactualResult {
    /// The mutated file.
    pub control_path: String,
    /// The test command, as a shell would read it.
    pub command: String,
    /// What happened.
    pub outcome: CounterfactualOutcome,
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
/// candidate, appending every output to `log`; `git` is planwright's own
/// git on `dir` (for a `patch` mutation). `dir` is left as it was. Every
/// file operation is beneath `dir` and through no symlink: the tests are
/// the candidate's code and may have replaced the control path.
pub fn run(
    cf: &Counterfactual,
    dir: &Path,
    git: &WorkTree,
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
            CounterfactualOutcome::Error,
            format!("the baseline run of `{command}` failed ({}): the tests must pass before the mutation", baseline.exit),
            excerpt(&baseline.output_tail),
        )));
    }
    let root = Dir::open(dir)?;
    // No git call of planwright's reads it, but none should find it there.
    root.remove(Path::new(".git"))?;
    let rel = Path::new(&cf.control_path);
    let original = match control_file(&root, rel) {
        Ok(original) => original,
        Err(why) => {
            return Ok(Some(result(
                CounterfactualOutcome::Error,
                why,
                String::new(),
            )))
        }
    };
    if let Err(why) = mutate(&cf.mutation, &root, rel, git, &original)? {
        return Ok(Some(result(
            CounterfactualOutcome::Error,
            why,
            String::new(),
        )));
    }
    append(
        log,
        &format!("== counterfactual on `{}`: mutated\n", cf.control_path),
    )?;
    let mutated = tests(&argv, dir, room, timeout, log, cancel);
    // Put the file back before anything else, whatever the tests did.
    if let Some(why) = put_back(&root, rel, &original)? {
        return Ok(Some(result(
            CounterfactualOutcome::Error,
            why,
            String::new(),
        )));
    }
    let Some(mutated) = mutated? else {
        return Ok(None);
    };
    let tail = excerpt(&mutated.output_tail);
    Ok(Some(match mutated.exit {
        Exit::Code(0) => result(
            CounterfactualOutcome::Green,
            format!(
                "`{command}` still passes with `{}` mutated: no test pins it",
                cf.control_path
            ),
            tail,
        ),
        Exit::TimedOut => result(
            CounterfactualOutcome::Timeout,
            format!("`{command}` ran out of time under the mutation"),
            tail,
        ),
        other => result(
            CounterfactualOutcome::Red,
            format!("`{command}` fails under the mutation ({other}): the control is pinned"),
            tail,
        ),
    }))
}

/// A control file's content and permissions, to put back.
struct Original {
    bytes: Vec<u8>,
    mode: u32,
}

/// The control path's content, refusing one that leaves `root` or is not
/// a regular file reached through no symlink.
fn control_file(root: &Dir, rel: &Path) -> Result<Original, String> {
    let shown = rel.display();
    let entry = match root.entry(rel) {
        Ok(Some(entry)) => entry,
        Ok(None) => {
            return Err(format!(
                "control path `{shown}` does not exist in the candidate"
            ))
        }
        Err(BeneathError::Escapes { .. }) => {
            return Err(format!(
                "control path `{shown}` leaves the repository or goes through a symlink"
            ))
        }
        Err(e) => return Err(format!("control path `{shown}`: {e}")),
    };
    if entry.kind != Kind::File {
        return Err(format!(
            "control path `{shown}` is {}, not a regular file",
            entry.kind
        ));
    }
    let bytes = root
        .read(rel)
        .map_err(|e| format!("control path `{shown}`: {e}"))?;
    Ok(Original {
        bytes,
        mode: entry.mode,
    })
}

/// Restores the control file after the mutated run; what the tests had
/// put in its place (a symlink, a FIFO, a directory) is removed, not
/// written through, and makes the counterfactual an error.
fn put_back(root: &Dir, rel: &Path, original: &Original) -> Result<Option<String>, EngineError> {
    let shown = rel.display();
    let (found, why) = match root.entry(rel) {
        Ok(None) => (
            None,
            Some(format!(
                "the mutated tests removed the control path `{shown}`"
            )),
        ),
        Ok(Some(e)) if e.kind == Kind::File => (Some(Kind::File), None),
        Ok(Some(e)) => (
            Some(e.kind),
            Some(format!(
                "the mutated tests replaced the control path `{shown}` with {}",
                e.kind
            )),
        ),
        // A directory on its way is a symlink or a file now.
        Err(e @ (BeneathError::Escapes { .. } | BeneathError::Kind { .. })) => (
            None,
            Some(format!(
                "the mutated tests replaced a directory of the control path: {e}"
            )),
        ),
        Err(e) => return Err(e.into()),
    };
    if let Some(up) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
        root.create_dirs(up)?;
    }
    if found.is_some_and(|k| k != Kind::File) {
        root.remove(rel)?;
    }
    root.replace(rel, &original.bytes, original.mode)?;
    Ok(why)
}

/// Applies the mutation; the inner error says why it did not apply.
fn mutate(
    mutation: &Mutation,
    root: &Dir,
    rel: &Path,
    git: &WorkTree,
    original: &Original,
) -> Result<Result<(), String>, EngineError> {
    match mutation {
        Mutation::FindReplace { find, replace } => {
            let Ok(text) = std::str::from_utf8(&original.bytes) else {
                return Ok(Err(format!("`{}` is not UTF-8 text", rel.display())));
            };
            let count = if find.is_empty() {
                0
            } else {
                text.matches(find.as_str()).count()
            };
            if count != 1 {
                return Ok(Err(format!(
                    "the mutation's `find` text must occur exactly once in the control path; it occurs {}",
                    planwright_plan::words::count(count, "time")
                )));
            }
            let mutated = text.replacen(find.as_str(), replace, 1);
            root.replace(rel, mutated.as_bytes(), original.mode)?;
            Ok(Ok(()))
        }
        Mutation::Patch { patch } => {
            // planwright's own git directory, never one the tests left in
            // the checkout; the patch on stdin, so no file is involved.
            Ok(git
                .apply(patch.as_bytes())?
                .map_err(|said| format!("the mutation's patch does not apply cleanly: {said}")))
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
            let e = crate::error::sandbox_stops(e)?;
            return Ok(Some(Finished {
                exit: Exit::Code(127),
                stdout_tail: String::new(),
                stderr_tail: String::new(),
                output_tail: e.to_string(),
                duration: Duration::ZERO,
                limit: None,
            }));
        }
    };
    append(log, &format!("\n-> {}\n", done.exit))?;
    Ok((done.exit != Exit::Cancelled).then_some(done))
}
