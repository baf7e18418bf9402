//! Taskmaster's own CLI as the oracle of planwright's Taskmaster reader.

use super::{cached, copy_tree, corpus, read_with_planwright, text, Reading};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One generated case: a tasks.json, Taskmaster's state beside it, and the
/// tag asked for on both command lines.
#[derive(Default)]
struct Case {
    name: &'static str,
    tasks: Value,
    state: Option<Value>,
    config: Option<Value>,
    tag: Option<&'static str>,
    /// Taskmaster's own commands read different tags here: `list` one,
    /// `validate-dependencies` (its `readJSON`) another, which planwright
    /// follows (docs/formats/taskmaster.md).
    split: bool,
}

fn task(id: u32, deps: Value, status: &str, subtasks: Value) -> Value {
    json!({"id": id, "title": format!("Task {id}"), "description": format!("Do part {id}."),
           "status": status, "dependencies": deps, "priority": "medium",
           "details": "As the title says.", "testStrategy": "", "subtasks": subtasks})
}

fn pending(id: u32, deps: Value) -> Value {
    task(id, deps, "pending", json!([]))
}

fn subtask(id: u32, deps: Value) -> Value {
    json!({"id": id, "title": format!("Step {id}"), "description": format!("Step {id} of it."),
           "status": "pending", "dependencies": deps, "details": ""})
}

fn cases() -> Vec<Case> {
    let plain = |name, tasks| Case {
        name,
        tasks,
        ..Case::default()
    };
    let shipped = include_str!("../../../plan/tests/data/foreign/taskmaster.tasks.json");
    let two_tags = json!({"master": {"tasks": [pending(1, json!([]))]},
        "feature": {"tasks": [pending(1, json!([])), pending(2, json!([1])), pending(3, json!([1, 2]))]}});
    vec![
        plain("shipped", serde_json::from_str(shipped).unwrap()),
        plain(
            "standard form, subtasks across tasks",
            json!({"tasks": [
                pending(1, json!([])),
                task(2, json!([1]), "pending", json!([subtask(1, json!([])), subtask(2, json!(["2.1"]))])),
                pending(3, json!(["2.1"])),
                task(4, json!([]), "pending", json!([subtask(1, json!(["3"]))])),
            ]}),
        ),
        plain(
            "every status",
            json!({"master": {"tasks": [
                task(1, json!([]), "done", json!([])),
                task(2, json!([]), "cancelled", json!([])),
                pending(3, json!([1, 2])),
                task(4, json!([3]), "in-progress", json!([])),
                task(5, json!([4]), "deferred", json!([])),
                task(6, json!([]), "review", json!([])),
                task(7, json!([6]), "blocked", json!([])),
            ]}}),
        ),
        Case {
            name: "current tag in state.json",
            tasks: two_tags.clone(),
            state: Some(json!({"currentTag": "feature"})),
            ..Case::default()
        },
        Case {
            name: "tag asked for",
            tasks: two_tags.clone(),
            state: Some(json!({"currentTag": "master"})),
            tag: Some("feature"),
            ..Case::default()
        },
        Case {
            name: "current tag not in the file",
            tasks: two_tags.clone(),
            state: Some(json!({"currentTag": "gone"})),
            split: true,
            ..Case::default()
        },
        Case {
            name: "default tag in config.json",
            tasks: two_tags.clone(),
            config: Some(json!({"global": {"defaultTag": "feature"}})),
            split: true,
            ..Case::default()
        },
        plain(
            "cycle among subtasks",
            json!({"master": {"tasks": [pending(1, json!([])),
                task(2, json!([1]), "pending", json!([subtask(1, json!(["2.2"])), subtask(2, json!(["2.1"]))]))]}}),
        ),
        plain(
            "cycle through a done task",
            json!({"master": {"tasks": [task(1, json!([3]), "done", json!([])),
                pending(2, json!([1])), pending(3, json!([2]))]}}),
        ),
        plain(
            "missing dependency",
            json!({"master": {"tasks": [pending(1, json!([])), pending(2, json!([9]))]}}),
        ),
        plain(
            "missing subtask",
            json!({"master": {"tasks": [pending(1, json!([])), pending(2, json!(["1.4"]))]}}),
        ),
        plain(
            "self dependency",
            json!({"master": {"tasks": [pending(1, json!([])), pending(2, json!([2]))]}}),
        ),
    ]
}

/// What Taskmaster made of a case.
#[derive(Debug)]
struct Oracle {
    /// The tag `list` says it read, and the tasks it listed.
    tag: String,
    tasks: Vec<Value>,
    /// The tag `validate-dependencies` read, the kinds it reported
    /// (`CIRCULAR`, `MISSING`, `SELF`), and how many tasks it analysed.
    checked_tag: String,
    problems: BTreeSet<String>,
    analysed: usize,
}

/// Runs Taskmaster's CLI in `dir`, offline (its update check off), with a
/// home of its own: what it printed, or why it refused.
fn task_master(program: &Path, dir: &Path, args: &[&str]) -> Result<String, String> {
    let (home, tmp) = (dir.join("home"), dir.join("tmp"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("TMPDIR", &tmp)
        .env("TASKMASTER_SKIP_AUTO_UPDATE", "1")
        .env("NO_COLOR", "1")
        .output()
        .expect("task-master runs");
    let said = text(&out.stdout) + &text(&out.stderr);
    if out.status.success() {
        Ok(said)
    } else {
        Err(format!("task-master {args:?} failed: {said}"))
    }
}

/// Runs Taskmaster on the case in `dir`, each command in its own copy: it
/// writes its own files (`state.json`, and the standard form migrated to
/// the tagged one).
fn ask_taskmaster(program: &Path, dir: &Path, tag: Option<&str>) -> Oracle {
    let tag_args: Vec<&str> = tag.map(|t| vec!["--tag", t]).unwrap_or_default();
    let listing = dir.with_extension("list");
    copy_tree(dir, &listing);
    let mut args = vec!["list", "--with-subtasks", "--format", "json"];
    args.extend(&tag_args);
    let out = task_master(program, &listing, &args).unwrap_or_else(|e| panic!("{e}"));
    let start = out
        .find('{')
        .unwrap_or_else(|| panic!("no JSON from `list`: {out}"));
    let list: Value = serde_json::Deserializer::from_str(&out[start..])
        .into_iter()
        .next()
        .expect("a JSON value")
        .unwrap_or_else(|e| panic!("{e}: {out}"));
    let checking = dir.with_extension("validate");
    copy_tree(dir, &checking);
    let mut args = vec!["validate-dependencies"];
    args.extend(&tag_args);
    let report = task_master(program, &checking, &args).unwrap_or_else(|e| panic!("{e}"));
    let problems = report
        .lines()
        .filter_map(|l| l.split_once("[ERROR]   [").map(|(_, r)| r))
        .filter_map(|r| r.split_once(']').map(|(kind, _)| kind.to_string()))
        .collect();
    let analysed = report
        .lines()
        .find_map(|l| {
            l.split_once("Analyzing dependencies for ")?
                .1
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no task count in: {report}"));
    let checked_tag = report
        .lines()
        .find_map(|l| l.trim().strip_prefix("[tag] "))
        .unwrap_or_else(|| panic!("no tag in: {report}"))
        .trim()
        .to_string();
    Oracle {
        tag: list["metadata"]["tag"].as_str().expect("a tag").to_string(),
        checked_tag,
        tasks: list["tasks"].as_array().expect("tasks").clone(),
        problems,
        analysed,
    }
}

const FINISHED: [&str; 3] = ["done", "completed", "cancelled"];

fn id(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The tickets planwright's documented mapping makes of the tasks
/// Taskmaster read (docs/formats/taskmaster.md, "Mapping to the IR"): one
/// per unfinished task; its dependencies and its subtasks' dependencies on
/// other tasks, less the finished ones.
fn expected_tickets(tasks: &[Value]) -> Vec<(String, BTreeSet<String>)> {
    let finished: BTreeSet<String> = tasks
        .iter()
        .filter(|t| FINISHED.contains(&t["status"].as_str().unwrap()))
        .map(|t| id(&t["id"]))
        .collect();
    let mut tickets = Vec::new();
    for t in tasks {
        let me = id(&t["id"]);
        if finished.contains(&me) {
            continue;
        }
        let mut deps: Vec<String> = t["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .map(id)
            .collect();
        for s in t["subtasks"].as_array().into_iter().flatten() {
            let siblings: BTreeSet<String> = t["subtasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| id(&s["id"]))
                .collect();
            for d in s["dependencies"].as_array().unwrap().iter().map(id) {
                // A bare number in a subtask is a sibling when there is one.
                if d.contains('.') || !siblings.contains(&d) {
                    deps.push(d);
                }
            }
        }
        let deps = deps
            .into_iter()
            .map(|d| d.split('.').next().unwrap().to_string())
            .filter(|d| *d != me && !finished.contains(d))
            .collect();
        tickets.push((me, deps));
    }
    tickets
}

/// planwright's code for each kind `validate-dependencies` reports.
fn code_of(kind: &str) -> &'static str {
    match kind {
        "CIRCULAR" => "taskmaster.dag.cycle",
        "MISSING" => "taskmaster.dependency.unknown",
        "SELF" => "taskmaster.dependency.self",
        other => panic!("validate-dependencies reports `{other}`, which this test does not know: map it to planwright's code"),
    }
}

fn check(case: &Case, oracle: &Oracle, ours: &Reading) -> Result<(), String> {
    let say = |what: String| Err(format!("{}: {what}\nTaskmaster: {oracle:?}", case.name));
    if !oracle.problems.is_empty() {
        let mut wanted: BTreeSet<&str> = oracle.problems.iter().map(|k| code_of(k)).collect();
        // A task that depends on itself is the one cycle Taskmaster also
        // calls circular; planwright names it once, as a self-dependency.
        if wanted.contains("taskmaster.dependency.self") {
            wanted.remove("taskmaster.dag.cycle");
        }
        for code in wanted {
            if !ours.errors.contains(code) {
                return say(format!(
                    "Taskmaster rejects it, planwright has no `{code}`: {:?}",
                    ours.errors
                ));
            }
        }
        return Ok(());
    }
    if !ours.errors.is_empty() {
        return say(format!(
            "Taskmaster accepts it, planwright rejects it: {:?}",
            ours.errors
        ));
    }
    let current = case.state.as_ref().and_then(|s| s["currentTag"].as_str());
    if case.tag.is_none()
        && current.is_some_and(|c| c != oracle.tag)
        && !ours.warnings.contains("taskmaster.tag.current")
    {
        return say(format!(
            "Taskmaster read `{}`, not the current tag, and planwright did not warn",
            oracle.tag
        ));
    }
    if oracle.checked_tag != oracle.tag || oracle.analysed != oracle.tasks.len() {
        if !case.split {
            return say("Taskmaster's `list` and `validate-dependencies` read different tags here: say so in docs/formats/taskmaster.md and mark the case `split`".into());
        }
        // planwright reads as `validate-dependencies` does: as many tickets
        // as it analysed tasks (every task of these cases is pending).
        if ours.tickets.len() != oracle.analysed {
            return say(format!(
                "planwright read {:?}, `validate-dependencies` {} tasks of `{}`",
                ours.tickets, oracle.analysed, oracle.checked_tag
            ));
        }
        return Ok(());
    }
    if case.split {
        return say("Taskmaster's commands now agree on the tag: take the case's `split` off and the docs' words".into());
    }
    let mut wanted = expected_tickets(&oracle.tasks);
    let mut got = ours.tickets.clone();
    wanted.sort();
    got.sort();
    if wanted != got {
        return say(format!(
            "tickets differ: Taskmaster's tasks make {wanted:?}, planwright read {got:?}"
        ));
    }
    Ok(())
}

fn write_case(dir: &Path, case: &Case) {
    let at = dir.join(".taskmaster");
    std::fs::create_dir_all(at.join("tasks")).unwrap();
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap();
    std::fs::write(at.join("tasks/tasks.json"), pretty(&case.tasks)).unwrap();
    if let Some(state) = &case.state {
        std::fs::write(at.join("state.json"), pretty(state)).unwrap();
    }
    if let Some(config) = &case.config {
        std::fs::write(at.join("config.json"), pretty(config)).unwrap();
    }
}

#[test]
fn planwright_reads_what_taskmaster_reads() {
    let Some(corpus) = corpus("planwright_reads_what_taskmaster_reads") else {
        return;
    };
    let program = cached(corpus.join("taskmaster/node_modules/.bin/task-master"));
    let tmp = tempfile::tempdir().unwrap();
    let cases = cases();
    // Each CLI start takes seconds: the cases run side by side.
    let results: Vec<Result<(), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .iter()
            .enumerate()
            .map(|(i, case)| {
                let dir: PathBuf = tmp.path().join(format!("case{i}"));
                let program = &program;
                s.spawn(move || {
                    write_case(&dir, case);
                    let oracle = ask_taskmaster(program, &dir, case.tag);
                    let tag: Vec<&str> = case.tag.map(|t| vec!["--tag", t]).unwrap_or_default();
                    let ours = read_with_planwright(&dir, ".taskmaster/tasks/tasks.json", &tag);
                    check(case, &oracle, &ours)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The one documented difference of tag selection: a tagged file with
/// neither the current tag nor `master`. Taskmaster disagrees with itself
/// there (its `list` shows the first tag's tasks under the name `master`,
/// its `validate-dependencies` reads no task); planwright refuses the file
/// and lists its tags (docs/formats/taskmaster.md).
#[test]
fn a_file_without_master_is_refused_where_taskmaster_reads_two_ways() {
    let Some(corpus) = corpus("a_file_without_master_is_refused_where_taskmaster_reads_two_ways")
    else {
        return;
    };
    let program = cached(corpus.join("taskmaster/node_modules/.bin/task-master"));
    let tmp = tempfile::tempdir().unwrap();
    let case = Case {
        name: "no master",
        tasks: json!({"alpha": {"tasks": [pending(1, json!([])), pending(2, json!([1]))]},
                      "beta": {"tasks": [pending(1, json!([]))]}}),
        ..Case::default()
    };
    let dir = tmp.path().join("case");
    write_case(&dir, &case);
    let oracle = ask_taskmaster(&program, &dir, None);
    assert_eq!(
        (oracle.tag.as_str(), oracle.tasks.len()),
        ("master", 2),
        "{oracle:?}"
    );
    assert_eq!(oracle.analysed, 0, "{oracle:?}");
    let ours = read_with_planwright(&dir, ".taskmaster/tasks/tasks.json", &[]);
    assert!(
        ours.errors.contains("taskmaster.tag.none"),
        "{:?}",
        ours.errors
    );
}

/// `completed`, a status of Taskmaster's `TaskStatus` type, is read by
/// planwright as finished work (no ticket; a dependency on it is met),
/// where Taskmaster's own `list` refuses the whole file (documented in
/// docs/formats/taskmaster.md, "Where we differ").
#[test]
fn completed_is_finished_work_where_taskmasters_list_refuses_the_file() {
    let Some(corpus) = corpus("completed_is_finished_work_where_taskmasters_list_refuses_the_file")
    else {
        return;
    };
    let program = cached(corpus.join("taskmaster/node_modules/.bin/task-master"));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("case");
    write_case(
        &dir,
        &Case {
            name: "completed",
            tasks: json!({"master": {"tasks": [task(1, json!([]), "completed", json!([])), pending(2, json!([1]))]}}),
            ..Case::default()
        },
    );
    let refused = task_master(&program, &dir, &["list", "--format", "json"]).expect_err(
        "Taskmaster's list now reads `completed`: update the docs' table and this test",
    );
    assert!(
        refused.contains("Invalid task status: completed"),
        "{refused}"
    );
    let ours = read_with_planwright(&dir, ".taskmaster/tasks/tasks.json", &[]);
    assert!(ours.errors.is_empty(), "{:?}", ours.errors);
    assert_eq!(ours.tickets, vec![("2".to_string(), BTreeSet::new())]);
}
