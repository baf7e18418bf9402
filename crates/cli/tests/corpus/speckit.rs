//! Spec Kit's pinned package as the oracle of planwright's `tasks.md`
//! reader: its template, and its `/tasks` prompt's example task lines.

use super::{cached, corpus, read_with_planwright, Reading};
use std::path::Path;

/// The package's `core_pack`, where its templates and prompts are.
fn core_pack(test: &str) -> Option<std::path::PathBuf> {
    let corpus = corpus(test)?;
    Some(cached(corpus.join("specify/specify_cli/core_pack")))
}

/// The template planwright's own tests read is the pinned package's, and
/// planwright refuses it as what it is: a template (placeholder ids).
#[test]
fn the_pinned_template_is_the_one_the_tests_hold_and_is_refused() {
    let Some(pack) = core_pack("the_pinned_template_is_the_one_the_tests_hold_and_is_refused")
    else {
        return;
    };
    let shipped = std::fs::read_to_string(pack.join("templates/tasks-template.md")).unwrap();
    let held = include_str!("../../../plan/tests/data/foreign/speckit.tasks-template.md");
    assert!(
        shipped == held,
        "crates/plan/tests/data/foreign/speckit.tasks-template.md is not the pinned package's template: copy it again (and its commit in the README there)"
    );
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("tasks.md"), &shipped).unwrap();
    let ours = read_with_planwright(tmp.path(), "tasks.md", &["--format", "speckit"]);
    assert!(ours.errors.contains("speckit.task.id"), "{:?}", ours.errors);
    assert!(
        ours.warnings.contains("speckit.task.placeholder"),
        "{:?}",
        ours.warnings
    );
}

/// One example line of the prompt's "Checklist Format (REQUIRED)".
struct Example {
    line: String,
    /// For a wrong one, the reason the prompt gives.
    wrong: Option<String>,
}

fn examples(prompt: &str) -> Vec<Example> {
    let mut out = Vec::new();
    for l in prompt.lines() {
        let (rest, correct) = if let Some(r) = l.strip_prefix("- ✅ CORRECT: `") {
            (r, true)
        } else if let Some(r) = l.strip_prefix("- ❌ WRONG: `") {
            (r, false)
        } else {
            continue;
        };
        let (line, after) = rest.split_once('`').expect("an example in backticks");
        let reason = after.trim().trim_start_matches('(').trim_end_matches(')');
        out.push(Example {
            line: line.to_string(),
            wrong: (!correct).then(|| reason.to_string()),
        });
    }
    out
}

/// A tasks.md holding the example alone, in the phase its story label (or
/// the reason it is wrong) places it: a user story phase for a line with a
/// story label or one said to lack it, else Setup.
fn tasks_md(ex: &Example) -> String {
    let line = &ex.line;
    let lacks_story = ex
        .wrong
        .as_ref()
        .is_some_and(|r| r.to_lowercase().contains("story label"));
    let phase = if line.contains("[US") || lacks_story {
        "## Phase 3: User Story 1 - Sign up (Priority: P1)"
    } else {
        "## Phase 1: Setup (Shared Infrastructure)"
    };
    format!("# Tasks: Example\n\n{phase}\n\n{line}\n")
}

/// planwright's codes for the reasons the prompt gives a line is wrong.
fn codes_for(reason: &str) -> Vec<&'static str> {
    let mut codes = Vec::new();
    let reason = reason.to_lowercase();
    if reason.contains("missing checkbox") {
        codes.push("speckit.task.checkbox");
    }
    if reason.contains("missing id") || reason.contains("missing task id") {
        codes.push("speckit.task.id");
    }
    if reason.contains("story label") {
        codes.push("speckit.task.story");
    }
    if reason.contains("file path") {
        codes.push("speckit.task.no-files");
    }
    assert!(
        !codes.is_empty(),
        "the prompt gives a reason this test does not know: `{reason}`: map it to planwright's code"
    );
    codes
}

fn check_correct(dir: &Path, ex: &Example, ours: &Reading) -> Result<(), String> {
    if !ours.errors.is_empty() {
        return Err(format!(
            "`{}` is correct, planwright says {:?}",
            ex.line, ours.errors
        ));
    }
    let id = ex.line.split_whitespace().nth(3).expect("an id");
    if ours
        .tickets
        .iter()
        .map(|(t, _)| t.as_str())
        .collect::<Vec<_>>()
        != [id]
    {
        return Err(format!(
            "`{}` is one task {id}: planwright read {:?}",
            ex.line, ours.tickets
        ));
    }
    let has_path = ex.line.split_whitespace().any(|w| w.contains('/'));
    if has_path == ours.warnings.contains("speckit.task.no-files") {
        return Err(format!(
            "`{}`: a file path is named: {has_path}, planwright's warnings {:?} ({})",
            ex.line,
            ours.warnings,
            dir.display()
        ));
    }
    Ok(())
}

/// Each example line of the pinned `/tasks` prompt is read as it says: the
/// correct ones as one task with no error (a line naming no file path gets
/// the `speckit.task.no-files` warning: the prompt asks for "a clear action
/// with exact file path", and its first correct example has none), the
/// wrong ones with planwright's error or warning for the reason it gives.
#[test]
fn the_tasks_prompts_examples_are_read_as_it_says() {
    let Some(pack) = core_pack("the_tasks_prompts_examples_are_read_as_it_says") else {
        return;
    };
    let prompt = std::fs::read_to_string(pack.join("commands/tasks.md")).unwrap();
    let examples = examples(&prompt);
    assert!(
        examples.iter().filter(|e| e.wrong.is_none()).count() >= 2
            && examples.iter().filter(|e| e.wrong.is_some()).count() >= 2,
        "the prompt's examples were not found: has its \"Checklist Format\" section changed?"
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, ex) in examples.iter().enumerate() {
        let dir = tmp.path().join(format!("example{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tasks.md"), tasks_md(ex)).unwrap();
        let ours = read_with_planwright(&dir, "tasks.md", &["--format", "speckit"]);
        let verdict = match &ex.wrong {
            None => check_correct(&dir, ex, &ours),
            Some(reason) => codes_for(reason)
                .into_iter()
                .find(|c| !ours.errors.contains(*c) && !ours.warnings.contains(*c))
                .map_or(Ok(()), |c| {
                    Err(format!(
                        "`{}` is wrong ({reason}): planwright has no `{c}`: {:?} {:?}",
                        ex.line, ours.errors, ours.warnings
                    ))
                }),
        };
        if let Err(e) = verdict {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
