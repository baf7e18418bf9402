//! The rules the readers of Taskmaster, Auto-Claude and Spec Kit plans
//! share or add to what their tools check: paths a ticket may not change,
//! lines that are almost tasks, cycles, phases.

use planwright_plan::formats::Options;
use planwright_plan::report::FileReport;
use planwright_plan::validate_text;

fn read(name: &str, text: &str) -> FileReport {
    validate_text(name, text.to_string(), &Options::default())
}

/// (code, line, column, message) of every diagnostic.
fn found(report: &FileReport) -> Vec<(String, usize, usize, String)> {
    report
        .diagnostics
        .iter()
        .map(|d| {
            let d0 = &d.diagnostic;
            (d0.code.clone(), d.line, d.column, d0.message.clone())
        })
        .collect()
}

fn codes(report: &FileReport) -> Vec<String> {
    found(report).into_iter().map(|f| f.0).collect()
}

/// Outside the repository, git's own and planwright's own paths are no
/// scope in any of the three readers, by one check.
#[test]
fn paths_outside_the_repository_git_and_state_are_errors_in_every_reader() {
    let bad = ["../x.py", "/etc/app.conf", ".git/", ".planwright/state.db"];
    for path in bad {
        let md = format!("## Phase 1: Setup\n\n- [ ] T001 Edit {path} now\n");
        let report = read("tasks.md", &md);
        assert!(!report.valid, "{path}: {:?}", found(&report));
        assert_eq!(codes(&report), ["speckit.task.path"], "{path}");
        let tm = format!(
            r#"{{"master": {{"tasks": [{{"id": 1, "title": "t", "description": "d",
              "relevantFiles": [{{"path": "{path}", "action": "modify"}}]}}]}}}}"#
        );
        let report = read("tasks.json", &tm);
        assert_eq!(codes(&report), ["taskmaster.task.path"], "{path}");
        let ac = format!(
            r#"{{"feature": "f", "workflow_type": "simple", "phases": [{{"id": "p1", "name": "a",
              "subtasks": [{{"id": "s1", "description": "d", "status": "pending",
              "files_to_modify": ["{path}"]}}]}}]}}"#
        );
        let report = read("implementation_plan.json", &ac);
        assert_eq!(codes(&report), ["autoclaude.subtask.path"], "{path}");
    }
    let report = read(
        "tasks.md",
        "## Phase 1: Setup\n\n- [ ] T001 Edit `.git/hooks/`\n",
    );
    let (_, line, column, message) = &found(&report)[0];
    assert_eq!((*line, *column), (3, 12));
    assert_eq!(
        message,
        "T001: path '.git/hooks/' names `.git`, which belongs to git"
    );
    // An endpoint is no path, and a folder such as `.github/` is one.
    let report = read(
        "tasks.md",
        "## Phase 1: Setup\n\n- [ ] T001 Serve GET /api/users from .github/app.yml\n",
    );
    assert!(report.valid, "{:?}", found(&report));
}

/// A line with a task id that breaks the checklist format is an error
/// naming it, never a task dropped in silence; a task indented under
/// another is a task of its own.
#[test]
fn speckit_almost_tasks_are_errors_and_nested_tasks_are_tasks() {
    let text = "## Phase 1: Setup\n\n- [ ] T001 Create src/a.py\n- [] T002 Create src/b.py\n- [-] T003 Create src/c.py\n[ ] T004 Create src/d.py\n1. [ ] T005 Create src/e.py\n- [ ] T006 Parent in src/f.py\n  - [ ] T007 Child in src/g.py\n  T008 and T009 are prose here\n";
    let report = read("tasks.md", text);
    let got: Vec<(String, usize, usize)> = found(&report)
        .into_iter()
        .map(|(c, l, k, _)| (c, l, k))
        .collect();
    let e = |line| ("speckit.task.checkbox".to_string(), line, 1);
    assert_eq!(
        got,
        [
            e(4),
            e(5),
            e(6),
            e(7),
            ("speckit.task.nested".to_string(), 9, 3)
        ]
    );
    let message = &found(&report)[0].3;
    assert_eq!(message, "T002: the line starts with `- []`, and a task line starts with a checkbox, `- [ ]` (`- [x]` when done); Spec Kit's agents may skip it");
    let nested = "## Phase 1: Setup\n\n- [ ] T001 Parent in src/f.py\n  - [ ] T002 Child in src/g.py\n  more of T002\n";
    let report = read("tasks.md", nested);
    let plan = report.plan.as_ref().expect("valid with a warning");
    let ids: Vec<(&str, &[String])> = plan
        .tickets
        .iter()
        .map(|t| (t.id.as_str(), t.depends_on.as_slice()))
        .collect();
    assert_eq!(
        ids,
        [("T001", &[][..]), ("T002", &["T001".to_string()][..])]
    );
    assert!(plan.tickets[1]
        .body
        .starts_with("Child in src/g.py\nmore of T002"));
}

/// The template's other rules are warnings: ids in sequence from T001,
/// story labels only in user story phases, phases only under `## `.
#[test]
fn speckit_template_rules_are_warnings() {
    let text = "## Phase 1: Setup\n\n- [ ] T000 [US1] Create src/a.py\n- [ ] T002 Create src/b.py\n- [ ] T004 Create src/c.py\n- [ ] T003 Create src/d.py\n\nPhase 2: Foundational\n---------------------\n\n- [ ] T005 Create src/e.py\n";
    let report = read("tasks.md", text);
    assert!(report.valid);
    let got: Vec<(String, usize, usize, String)> = found(&report);
    let w = |c: &str, l, k, m: &str| (c.to_string(), l, k, m.to_string());
    assert_eq!(
        got,
        [
            w("speckit.task.sequence", 3, 7, "ids start at T001"),
            w("speckit.task.story-phase", 3, 13, "T000: a task of the Setup phase has the story label [US1], which the template gives to tasks of user story phases only"),
            w("speckit.task.sequence", 4, 7, "T002 follows T000: T001 is missing"),
            w("speckit.task.sequence", 5, 7, "T004 follows T002: T003 is missing"),
            w("speckit.task.sequence", 6, 7, "T003 comes after T004, out of execution order"),
            w("speckit.phase.setext", 8, 1, "`Phase 2: Foundational` is underlined with `---`, a heading that does not start a phase here: its tasks stay in the phase above"),
        ]
    );
    assert_eq!(report.plan.as_ref().unwrap().tickets.len(), 5);
}

/// Taskmaster's `validate-dependencies` reports a cycle among one task's
/// subtasks and a cycle through a finished task as `[CIRCULAR]`; so does
/// planwright, naming the cycle.
#[test]
fn taskmaster_cycles_through_subtasks_and_finished_tasks_are_rejected() {
    let through_done = r#"{"master": {"tasks": [
  {"id": 1, "title": "a", "description": "d", "status": "done", "dependencies": [3]},
  {"id": 2, "title": "b", "description": "d", "dependencies": [1]},
  {"id": 3, "title": "c", "description": "d", "dependencies": [2]}
]}}"#;
    let report = read("tasks.json", through_done);
    let got: Vec<(String, usize, usize, String)> = found(&report)
        .into_iter()
        .filter(|f| f.0 == "taskmaster.dag.cycle")
        .collect();
    assert_eq!(got, [(
        "taskmaster.dag.cycle".to_string(), 2, 81,
        "dependency cycle: task 1 -> task 2 -> task 3 -> task 1 (Taskmaster: `[CIRCULAR] Task 1 is part of a circular dependency chain`)".to_string()
    )]);
    let subtasks = r#"{"master": {"tasks": [
  {"id": 2, "title": "b", "description": "d", "subtasks": [
    {"id": 1, "title": "s", "description": "d", "dependencies": [2]},
    {"id": 2, "title": "t", "description": "d", "dependencies": [1]}]}
]}}"#;
    let report = read("tasks.json", subtasks);
    assert!(!report.valid);
    let cycle: Vec<String> = found(&report)
        .into_iter()
        .filter(|f| f.0 == "taskmaster.dag.cycle")
        .map(|f| f.3)
        .collect();
    assert_eq!(cycle, ["dependency cycle: subtask 2.1 -> subtask 2.2 -> subtask 2.1 (Taskmaster: `[CIRCULAR] Subtask 2.1 is part of a circular dependency chain`)"]);
}

/// Two Auto-Claude phases with one id are an error (Auto-Claude maps the
/// id to the last of them); an empty phase still orders the phases around
/// it.
#[test]
fn autoclaude_repeated_phase_ids_and_empty_phases() {
    let repeated = r#"{"feature": "f", "workflow_type": "simple", "phases": [
  {"id": "p1", "name": "a", "subtasks": [{"id": "s1", "description": "d", "status": "pending", "files_to_modify": ["a.py"]}]},
  {"id": "p1", "name": "b", "subtasks": [{"id": "s2", "description": "d", "status": "pending", "files_to_modify": ["b.py"]}]}
]}"#;
    let report = read("implementation_plan.json", repeated);
    assert_eq!(
        found(&report),
        [(
            "autoclaude.phase.duplicate-id".to_string(),
            3,
            10,
            "phase \"p1\": phases 1 and 2 have this id".to_string()
        )]
    );
    let empty_middle = r#"{"feature": "f", "workflow_type": "simple", "phases": [
  {"id": "p1", "name": "a", "subtasks": [{"id": "s1", "description": "d", "status": "pending", "files_to_modify": ["a.py"]}]},
  {"id": "p2", "name": "b", "depends_on": ["p1"], "subtasks": []},
  {"id": "p3", "name": "c", "depends_on": ["p2"], "subtasks": [{"id": "s3", "description": "d", "status": "pending", "files_to_modify": ["a.py"]}]}
]}"#;
    let report = read("implementation_plan.json", empty_middle);
    let plan = report.plan.as_ref().expect("valid");
    assert_eq!(plan.tickets[1].id, "s3");
    assert_eq!(plan.tickets[1].depends_on, ["s1"]);
}

/// The tag read is the tag Taskmaster reads: `--tag`, else the current tag
/// of `.taskmaster/state.json` (which the caller reads), else `master`;
/// with neither, an error listing the tags.
#[test]
fn taskmaster_reads_the_current_tag() {
    use planwright_plan::formats::CurrentTag;
    let text = r#"{"master": {"tasks": [{"id": 1, "title": "m", "description": "d"}]},
        "feature": {"tasks": [{"id": 1, "title": "f", "description": "d"}, {"id": 2, "title": "g", "description": "d"}]}}"#;
    let with = |tag: Option<&str>, current: Option<&str>| {
        let options = Options {
            tag: tag.map(String::from),
            current_tag: current.map(|c| CurrentTag {
                tag: c.to_string(),
                from: ".taskmaster/state.json".to_string(),
            }),
            ..Options::default()
        };
        validate_text("tasks.json", text.to_string(), &options)
    };
    let count = |r: &FileReport| r.plan.as_ref().map_or(0, |p| p.tickets.len());
    assert_eq!(count(&with(None, None)), 1, "master");
    assert_eq!(count(&with(None, Some("feature"))), 2, "the current tag");
    assert_eq!(
        count(&with(Some("master"), Some("feature"))),
        1,
        "--tag wins"
    );
    let gone = with(None, Some("old"));
    assert_eq!(count(&gone), 1, "master, as Taskmaster falls back");
    assert_eq!(
        found(&gone)[0].3,
        "the current tag `old` (`.taskmaster/state.json`) is not in this tasks.json; Taskmaster reads `master` then"
    );
    let no_master = r#"{"a": {"tasks": []}, "b": {"tasks": []}}"#;
    let report = read("tasks.json", no_master);
    assert_eq!(
        found(&report)[0].3,
        "no tag to read: Taskmaster reads the current tag, else `master`, and this tasks.json has tags `a`, `b`"
    );
}

/// A title that a conversion writes back as another is named as changed,
/// with what it becomes, not as lost.
#[test]
fn a_title_written_back_as_another_is_changed_not_lost() {
    use planwright_plan::formats::{self, loss};
    use planwright_plan::Format;
    let text = r#"{"master": {"tasks": [
  {"id": 1, "title": "Make a", "description": "Create it", "relevantFiles": [{"path": "src/a.py", "action": "create"}]},
  {"id": 2, "title": "Wire b", "description": "Task 2", "dependencies": [1], "relevantFiles": [{"path": "src/b.py", "action": "modify"}]}]}}"#;
    let plan = read("tasks.json", text).plan.expect("valid");
    let mut said = Vec::new();
    let written = formats::write(&plan, Format::Speckit, &mut said);
    let back = read("tasks.md", &written).plan.expect("reads back");
    let lost = loss::losses(&plan, &back, Format::Speckit, &said);
    let about_titles: Vec<(&str, &str)> = lost
        .iter()
        .filter(|d| d.pointer.ends_with("/title"))
        .map(|d| (d.code.as_str(), d.message.as_str()))
        .collect();
    assert_eq!(
        about_titles,
        [
            (
                "convert.changed",
                "1: speckit cannot keep the title `Make a`; it reads back as `Make a in src/a.py`"
            ),
            (
                "convert.changed",
                "2: speckit cannot keep the title `Wire b`; it reads back as `Wire b in src/b.py`"
            ),
        ]
    );
}

/// A dependency a conversion leaves implied (the ticket still waits for it
/// through others) is said to be reduced, not lost, and the order is the
/// same.
#[test]
fn a_transitive_dependency_left_implied_is_reduced_and_the_order_is_the_same() {
    use planwright_plan::formats::{self, loss};
    use planwright_plan::Format;
    let text = "## Phase 1: Setup\n\n- [ ] T001 Edit src/d.py\n- [ ] T002 [P] Edit src/e.py\n- [ ] T003 [P] Edit src/f.py\n- [ ] T004 Edit src/g.py\n";
    let plan = read("tasks.md", text).plan.expect("valid");
    assert_eq!(plan.tickets[3].depends_on, ["T001", "T002", "T003"]);
    let mut said = Vec::new();
    let written = formats::write(&plan, Format::Autoclaude, &mut said);
    let back = read("implementation_plan.json", &written)
        .plan
        .expect("reads back");
    let waves = |p: &planwright_plan::Plan| planwright_plan::graph::TicketGraph::new(p).waves(p);
    assert_eq!(waves(&back), waves(&plan), "the order is the same");
    let lost = loss::losses(&plan, &back, Format::Autoclaude, &said);
    let deps: Vec<(&str, &str)> = lost
        .iter()
        .filter(|d| d.pointer.ends_with("/depends_on"))
        .map(|d| (d.code.as_str(), d.message.as_str()))
        .collect();
    assert_eq!(deps, [("convert.reduced", "T004: autoclaude writes the dependency on T001 as implied: the ticket still waits for it, through the tickets it depends on")]);
}

/// Two checks of one ticket written to Auto-Claude (one verification per
/// subtask) are joined into one manual instruction, and the writer says
/// so: read back, they are one check of two lines.
#[test]
fn two_checks_joined_into_one_auto_claude_verification_are_said_to_be() {
    use planwright_plan::formats;
    use planwright_plan::Format;
    let text = r#"{"master": {"tasks": [
  {"id": 1, "title": "Make a", "description": "Create it", "testStrategy": "pytest -q",
   "acceptanceCriteria": ["a.py prints 1"], "relevantFiles": [{"path": "src/a.py", "action": "create"}]}]}}"#;
    let plan = read("tasks.json", text).plan.expect("valid");
    assert_eq!(plan.tickets[0].checks, ["pytest -q", "a.py prints 1"]);
    let mut said = Vec::new();
    let written = formats::write(&plan, Format::Autoclaude, &mut said);
    let joined: Vec<&str> = said
        .iter()
        .filter(|d| d.code == "autoclaude.emit.check")
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        joined,
        ["1: an Auto-Claude subtask has one verification; its 2 checks are written as the lines of one manual instruction"]
    );
    let back = read("implementation_plan.json", &written)
        .plan
        .expect("reads back");
    assert_eq!(back.tickets[0].checks, ["pytest -q\na.py prints 1"]);
}

/// A tasks.md of 30,000 tasks in one chain, all in one folder, validates:
/// no recursion as deep as the chain, and no overlap between tasks that
/// wait for each other (the forecast's work is counted in its own tests).
#[test]
fn a_30000_task_chain_validates() {
    let mut text = String::from("# Tasks: chain\n\n## Phase 1: All\n\n");
    for n in 1..=30_000 {
        text.push_str(&format!("- [ ] T{n:05} Write docs/ notes {n}\n"));
    }
    let report = read("tasks.md", &text);
    let plan = report.plan.as_ref().expect("valid");
    assert_eq!(plan.tickets.len(), 30_000);
    assert!(report.overlaps.is_empty());
}
