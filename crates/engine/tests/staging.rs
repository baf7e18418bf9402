//! A candidate staged from the paths inotify saw its attempt change
//! (issue 53) holds every change the attempt made, wherever and however it
//! made it, and each is scope-checked: runs with agents in a PID namespace
//! of their own, one slot, each ticket's log saying its candidate was
//! staged by name (so none of these passes by reading the whole tree).

use planwright_engine::agent;
use planwright_engine::FailureKind;
use planwright_testkit::*;
use serde_json::json;

/// Settings of a confined run in one slot, a ticket failed at its first
/// rejected attempt.
fn one_slot() -> planwright_engine::RunSettings {
    let mut s = settings();
    s.jobs = 1;
    s.strikes = 1;
    s
}

fn scripted(env: &Env) -> Box<dyn agent::Agent> {
    agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap()
}

/// The ticket log's candidate lines of ticket `id` in every run so far.
fn candidate_lines(env: &Env, id: &str) -> Vec<String> {
    let runs = env.repo().join(".planwright/runs");
    let mut lines = Vec::new();
    for run in std::fs::read_dir(runs).unwrap() {
        let log = run.unwrap().path().join(id).join("ticket.log");
        let text = std::fs::read_to_string(log).unwrap_or_default();
        lines.extend(
            text.lines()
                .filter(|l| l.starts_with("-- candidate:"))
                .map(String::from),
        );
    }
    lines
}

/// Each of `ids` made one candidate, staged from the paths inotify saw.
fn staged_by_name(env: &Env, ids: &[&str]) {
    for id in ids {
        let lines = candidate_lines(env, id);
        assert_eq!(lines.len(), 1, "{id}: {lines:?}");
        assert!(
            lines[0].contains("inotify saw the attempt change"),
            "{id}: {lines:?}"
        );
    }
}

/// A ticket `id` after `after` with `scope`.
fn after(id: &str, after: &[&str], scope: serde_json::Value) -> serde_json::Value {
    json!({"id": id, "title": format!("ticket {id}"), "body": "do it",
           "scope": scope, "depends_on": after})
}

/// The file `rel` on `main`.
fn on_main(env: &Env, rel: &str) -> String {
    git(&env.repo(), &["show", &format!("main:{rel}")])
}

/// A folder no tracked file is in, kept by the clean between attempts
/// because it holds an ignored file (`build/*`), can hold a path `add -A`
/// stages (`!build/keep.txt`): an agent's write there is staged, and
/// checked against the scope. Once where the folder appeared in an
/// earlier attempt of the run, once where it was there when the run began
/// (the workspace of an earlier run).
#[test]
fn a_write_in_a_folder_only_ignored_files_kept_is_staged_and_scope_checked() {
    let env = Env::new(&[
        (".gitignore", "build/*\n!build/keep.txt\nout/\n"),
        ("README.md", "hi\n"),
    ]);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("A", 0, "build/out.o", "ignored\n");
    // Ignored, which git refuses when named: staged without it.
    env.fixture("A", 0, "out/made.txt", "ignored\n");
    env.fixture("C", 0, "c.txt", "c\n");
    env.fixture("C", 0, "build/keep.txt", "out of C's scope\n");
    let first = plan(json!({
        "gates": gate(&["true"]),
        "tickets": [
            ticket("A", json!([any("a.txt")])),
            after("C", &["A"], json!([any("c.txt")])),
        ]
    }));
    let out = run_with(&env, &first, &one_slot(), scripted(&env));
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    assert_eq!(failing_kind(&out, "C"), FailureKind::ScopeViolation);
    staged_by_name(&env, &["A", "C"]);

    // A second run: the workspace is kept, `build/out.o` with it.
    std::fs::remove_dir_all(env.fixtures()).unwrap();
    env.fixture("B", 0, "build/keep.txt", "kept\n");
    let second = plan(json!({
        "gates": gate(&["true"]),
        "tickets": [ticket("B", json!([{"pattern": "build/keep.txt", "op": "create"}]))]
    }));
    let out = run_with(&env, &second, &one_slot(), scripted(&env));
    assert_eq!(out.summary.merged, ["B"], "{:?}", out.summary);
    assert_eq!(on_main(&env, "build/keep.txt"), "kept");
    staged_by_name(&env, &["B"]);
}

/// A write deep in a folder no attempt touched, a new file and a new
/// folder, a deletion, a rename and a mode change: each in the candidate,
/// one ticket after another in the same workspace.
#[test]
fn every_kind_of_change_is_staged() {
    let env = Env::new(&[
        ("a/b/c/d/e/deep.txt", "deep\n"),
        ("src/one.txt", "one\n"),
        ("gone.txt", "gone\n"),
        ("old.txt", "old\n"),
        ("run.sh", "echo run\n"),
    ]);
    env.fixture("Deep", 0, "a/b/c/d/e/deep.txt", "changed deep\n");
    env.fixture("New", 0, "src/new.txt", "new\n");
    env.fixture("New", 0, "fresh/folder/x.txt", "x\n");
    std::fs::write(env.fixture_dir("Delete", 0).join("delete"), "gone.txt\n").unwrap();
    let patch = |text: &str| text.replace("\n        ", "\n");
    std::fs::write(
        env.fixture_dir("Rename", 0).join("patch"),
        patch(
            "diff --git a/old.txt b/renamed.txt
        similarity index 100%
        rename from old.txt
        rename to renamed.txt
        ",
        ),
    )
    .unwrap();
    std::fs::write(
        env.fixture_dir("Mode", 0).join("patch"),
        patch(
            "diff --git a/run.sh b/run.sh
        old mode 100644
        new mode 100755
        ",
        ),
    )
    .unwrap();
    let plan = plan(json!({
        "gates": gate(&["true"]),
        "tickets": [
            ticket("Deep", json!([{"pattern": "a/b/c/d/e/deep.txt", "op": "modify"}])),
            after("New", &["Deep"], json!([any("src/new.txt"), any("fresh/**")])),
            after("Delete", &["New"], json!([{"pattern": "gone.txt", "op": "delete"}])),
            after("Rename", &["Delete"],
                  json!([{"pattern": "renamed.txt", "op": "rename", "from": "old.txt"}])),
            after("Mode", &["Rename"], json!([any("run.sh")])),
        ]
    }));
    let out = run_with(&env, &plan, &one_slot(), scripted(&env));
    let all = ["Deep", "New", "Delete", "Rename", "Mode"];
    assert_eq!(out.summary.merged, all, "{:?}", out.summary);
    staged_by_name(&env, &all);
    let files = git(&env.repo(), &["ls-tree", "-r", "main"]);
    let names: Vec<&str> = files
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "a/b/c/d/e/deep.txt",
            "fresh/folder/x.txt",
            "renamed.txt",
            "run.sh",
            "src/new.txt",
            "src/one.txt"
        ]
    );
    assert_eq!(on_main(&env, "a/b/c/d/e/deep.txt"), "changed deep");
    assert!(
        files.contains("100755 blob"),
        "run.sh is executable: {files}"
    );
}

/// Writes through a hard link made outside the workspace reach the
/// tracked file's inode, not its folder: they are seen whichever file the
/// link is to, one checked out long ago or one an earlier attempt replaced
/// (a new inode with the same content, which no reset writes again).
/// With the sandbox off (agents still in a PID namespace of their own):
/// Landlock refuses a link between the workspace and the agent's
/// temporary folder.
#[test]
fn a_write_through_a_hard_link_is_staged_and_scope_checked() {
    let env = Env::new(&[("a/b/c/d/e/deep.txt", "deep\n"), ("linked.txt", "linked\n")]);
    let agent = sh_agent(
        &env,
        r#"cd "$1"
case "$PLANWRIGHT_TICKET" in
Replace) echo r > r.txt; cp linked.txt tmp; mv tmp linked.txt ;;
Deep) ln a/b/c/d/e/deep.txt "$TMPDIR/deep"; echo through a link > "$TMPDIR/deep" ;;
Linked) echo l > l.txt; ln linked.txt "$TMPDIR/linked"; echo evil > "$TMPDIR/linked" ;;
esac
"#,
        "{worktree}",
    );
    let plan = plan(json!({
        "gates": gate(&["true"]),
        "tickets": [
            ticket("Replace", json!([any("r.txt")])),
            after("Deep", &["Replace"], json!([any("a/b/c/d/e/deep.txt")])),
            after("Linked", &["Deep"], json!([any("l.txt")])),
        ]
    }));
    let mut s = one_slot();
    s.contain.mode = planwright_config::SandboxMode::Off;
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["Replace", "Deep"], "{:?}", out.summary);
    assert_eq!(failing_kind(&out, "Linked"), FailureKind::ScopeViolation);
    staged_by_name(&env, &["Replace", "Deep", "Linked"]);
    assert_eq!(on_main(&env, "a/b/c/d/e/deep.txt"), "through a link");
    assert_eq!(on_main(&env, "linked.txt"), "linked");
}
