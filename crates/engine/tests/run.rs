//! End-to-end runs of the engine on temporary repositories.

use planwright_engine::agent::{self, Agents};
use planwright_engine::Event;
use planwright_engine::FailureKind;
use planwright_engine::Resume;
use planwright_testkit::*;
use serde_json::json;
use std::sync::Arc;

#[test]
fn parallel_tickets_and_a_dependency_merge_as_one_commit_each() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("B", 0, "b.txt", "b\n");
    env.fixture("C", 0, "c.txt", "c needs a\n");
    let mut c = ticket("C", json!([any("c.txt")]));
    c["depends_on"] = json!(["A"]);
    c["rails"] = json!(["a.txt"]);
    let plan = plan(json!({
        "gates": gate(&["test", "-f", "README.md"]),
        "tickets": [ticket("A", json!([any("a.txt")])), ticket("B", json!([any("b.txt")])), c]
    }));
    let out = run_scripted(&env, &plan);
    assert!(out.summary.all_merged(), "{:?}", out.summary);
    let log = env.log();
    assert_eq!(log.len(), 4, "{log:?}");
    assert_eq!(log[3], "base");
    let c_pos = log.iter().position(|s| s == "C: ticket C").unwrap();
    let a_pos = log.iter().position(|s| s == "A: ticket A").unwrap();
    assert!(c_pos < a_pos, "C lands after A: {log:?}");
    let body = git(&env.repo(), &["log", "-1", "--format=%B", "main"]);
    assert!(body.contains("Planwright-Ticket: "), "{body}");
    assert!(
        body.contains(&format!("Planwright-Run: {}", out.summary.run)),
        "{body}"
    );
    // Every merged commit has exactly one parent: no merge commits.
    let parents = git(&env.repo(), &["log", "--format=%p", "main"]);
    assert!(parents.lines().all(|p| !p.contains(' ')), "{parents}");
    // The user's clean checkout of main was fast-forwarded.
    assert!(env.repo().join("c.txt").is_file());
    assert_eq!(
        git(
            &env.repo(),
            &["status", "--porcelain", "--untracked-files=no"]
        ),
        ""
    );
}

fn single(env: &Env, t: serde_json::Value, gates: serde_json::Value) -> Outcome {
    let plan = plan(json!({"gates": gates, "tickets": [t]}));
    let before = env.tip();
    let mut s = settings();
    s.strikes = 1;
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    let out = run_with(env, &plan, &s, agent);
    assert_eq!(
        env.tip(),
        before,
        "nothing of a rejected attempt reaches the base"
    );
    out
}

#[test]
fn empty_diff_is_rejected() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture_dir("A", 0);
    let out = single(&env, ticket("A", json!([any("a.txt")])), gate(&["true"]));
    assert_eq!(failing_kind(&out, "A"), FailureKind::EmptyDiff);
}

#[test]
fn out_of_scope_edit_is_rejected() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("A", 0, "README.md", "changed\n");
    let out = single(&env, ticket("A", json!([any("a.txt")])), gate(&["true"]));
    assert_eq!(failing_kind(&out, "A"), FailureKind::ScopeViolation);
    assert!(out.summary.failed["A"].message.contains("README.md"));
}

#[test]
fn rail_hit_is_rejected() {
    let env = Env::new(&[("lib/math.mjs", "x\n")]);
    env.fixture("A", 0, "lib/math.mjs", "changed\n");
    let mut t = ticket("A", json!([any("lib/**")]));
    t["rails"] = json!(["lib/math.mjs"]);
    let out = single(&env, t, gate(&["true"]));
    assert_eq!(failing_kind(&out, "A"), FailureKind::RailViolation);
}

#[test]
fn modifying_a_file_declared_create_is_rejected() {
    // B declares `create` for a file its dependency A creates: preflight
    // cannot know, the verifier sees B modify it.
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "a.txt", "old\n");
    env.fixture("B", 0, "a.txt", "new\n");
    let mut b = ticket("B", json!([{"pattern": "a.txt", "op": "create"}]));
    b["depends_on"] = json!(["A"]);
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")])), b]}));
    let mut s = settings();
    s.strikes = 1;
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(failing_kind(&out, "B"), FailureKind::ScopeViolation);
}

#[test]
fn symlink_leaving_the_worktree_is_rejected() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let dir = env.fixture_dir("A", 0).join("files");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink("../../../../etc/passwd", dir.join("link")).unwrap();
    let out = single(&env, ticket("A", json!([any("link")])), gate(&["true"]));
    assert_eq!(failing_kind(&out, "A"), FailureKind::ScopeViolation);
    assert!(out.summary.failed["A"].message.contains("symlink"));
}

#[test]
fn failing_gate_is_rejected_with_its_output() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "a.txt", "a\n");
    let out = single(
        &env,
        ticket("A", json!([any("a.txt")])),
        gate(&["sh", "-c", "echo broken-widget >&2; exit 3"]),
    );
    assert_eq!(failing_kind(&out, "A"), FailureKind::GateFailure);
    let log = std::fs::read_to_string(
        env.repo()
            .join(".planwright/runs")
            .join(&out.summary.run)
            .join("A/ticket.log"),
    )
    .unwrap();
    assert!(log.contains("broken-widget"), "{log}");
}

#[test]
fn blocked_agent_is_rejected() {
    let env = Env::new(&[("README.md", "hi\n")]);
    std::fs::write(
        env.fixture_dir("A", 0).join("blocked"),
        "the spec is contradictory\n",
    )
    .unwrap();
    let out = single(&env, ticket("A", json!([any("a.txt")])), gate(&["true"]));
    assert_eq!(failing_kind(&out, "A"), FailureKind::AgentBlocked);
    assert!(out.summary.failed["A"].message.contains("contradictory"));
}

#[test]
fn cmd_agent_blocked_line_and_timeout() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let agent = sh_agent(
        &env,
        "#!/bin/sh\ncase \"$PLANWRIGHT_TICKET\" in\n  A) echo thinking; echo 'TICKET-BLOCKED: needs a human';;\n  B) exec sleep 900;;\nesac\n",
        "{ticket}",
    );
    let plan = plan(
        json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")])), ticket("B", json!([any("b.txt")]))]}),
    );
    let mut s = settings();
    s.strikes = 1;
    s.agent_timeout = Some(std::time::Duration::from_secs(1));
    let before = env.tip();
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(failing_kind(&out, "A"), FailureKind::AgentBlocked);
    assert!(out.summary.failed["A"].message.contains("needs a human"));
    assert_eq!(failing_kind(&out, "B"), FailureKind::Timeout);
    assert_eq!(env.tip(), before);
}

#[test]
fn an_agent_that_repoints_its_git_file_cannot_touch_the_users_index() {
    let env = Env::new(&[("README.md", "hi\n")]);
    // The slot is `<repo>/.planwright/workspaces/slot-1`.
    let agent = sh_agent(
        &env,
        "#!/bin/sh\nset -e\ncd \"$1\"\nmain=$(cd ../../.. && pwd)\nrm -rf .git\nprintf 'gitdir: %s/.git\\n' \"$main\" > .git\necho A > a.txt\n",
        "{worktree}",
    );
    let plan = plan(
        json!({"gates": gate(&["test", "-f", "a.txt"]), "tickets": [ticket("A", json!([any("a.txt")]))]}),
    );
    let out = run_with(&env, &plan, &settings(), agent);
    assert!(out.summary.all_merged(), "{:?}", out.summary);
    assert_eq!(git(&env.repo(), &["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read_to_string(env.repo().join("a.txt")).unwrap(),
        "A\n"
    );
}

#[test]
fn cmd_agent_edits_with_placeholders_and_env() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let agent = sh_agent(
        &env,
        "#!/bin/sh\nset -e\ncd \"$1\"\ntest -f \"$PLANWRIGHT_PROMPT_FILE\"\necho \"$PLANWRIGHT_TICKET attempt $PLANWRIGHT_ATTEMPT\" > out.txt\n",
        "{workspace}",
    );
    let plan = plan(
        json!({"gates": gate(&["test", "-f", "out.txt"]), "tickets": [ticket("A", json!([any("out.txt")]))]}),
    );
    let out = run_with(&env, &plan, &settings(), agent);
    assert!(out.summary.all_merged(), "{:?}", out.summary);
    assert_eq!(
        std::fs::read_to_string(env.repo().join("out.txt")).unwrap(),
        "A attempt 1\n"
    );
}

#[test]
fn retry_passes_after_a_rejected_attempt_with_the_evidence_in_the_charter() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 1, "a.txt", "a\n");
    env.fixture("A", 1, "stray.txt", "oops\n");
    // The retry starts from attempt 1's candidate: it removes the stray file.
    write(&env.fixture_dir("A", 2), "delete", "stray.txt\n");
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")]))]}));
    let out = run_scripted(&env, &plan);
    assert_eq!(out.summary.merged, ["A"]);
    let rejected: Vec<_> = out
        .events
        .iter()
        .filter(|e| matches!(e, Event::AttemptRejected { .. }))
        .collect();
    assert_eq!(rejected.len(), 1);
    assert!(!env.repo().join("stray.txt").exists());
    let prompt = std::fs::read_to_string(
        env.repo()
            .join(".planwright/runs")
            .join(&out.summary.run)
            .join("A/attempt-2.prompt.md"),
    )
    .unwrap();
    assert!(
        prompt.contains("scope_violation") && prompt.contains("stray.txt"),
        "{prompt}"
    );
}

#[test]
fn failed_ticket_blocks_its_descendants_and_nothing_else() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "outside.txt", "x\n");
    env.fixture("B", 0, "b.txt", "b\n");
    env.fixture("C", 0, "c.txt", "c\n");
    env.fixture("D", 0, "d.txt", "d\n");
    let mut c = ticket("C", json!([any("c.txt")]));
    c["depends_on"] = json!(["A"]);
    let mut d = ticket("D", json!([any("d.txt")]));
    d["depends_on"] = json!(["C"]);
    let plan = plan(
        json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")])), ticket("B", json!([any("b.txt")])), c, d]}),
    );
    let out = run_scripted(&env, &plan);
    assert_eq!(out.summary.merged, ["B"]);
    assert_eq!(out.summary.failed.keys().collect::<Vec<_>>(), ["A"]);
    assert_eq!(out.summary.blocked, ["C", "D"]);
}

#[test]
fn a_candidate_on_a_base_that_did_not_move_lands_as_it_is() {
    // A and B start together on one base. The first to land finds the
    // base where its candidate was made, so its candidate is the commit;
    // the second is merged onto the moved base, a new commit. The gate
    // outlasts a second, so a commit made again at the merge would differ
    // from the candidate in its time.
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("B", 0, "b.txt", "b\n");
    let plan = plan(
        json!({"gates": gate(&["sleep", "1.1"]), "tickets": [ticket("A", json!([any("a.txt")])), ticket("B", json!([any("b.txt")]))]}),
    );
    let base = env.tip();
    let out = run_scripted(&env, &plan);
    assert!(out.summary.all_merged(), "{:?}", out.summary);
    let store = planwright_engine::Store::open(&env.repo().join(".planwright/state.db")).unwrap();
    let candidate = |id: &str| {
        let attempts = store.attempts(&out.summary.run, id).unwrap();
        assert_eq!(attempts.len(), 1, "{id}: {attempts:?}");
        attempts[0].candidate.clone().unwrap()
    };
    let landed: Vec<(String, String)> = out
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Merged { ticket, commit } => Some((ticket.clone(), commit.clone())),
            _ => None,
        })
        .collect();
    let [(first, first_commit), (second, second_commit)] = &landed[..] else {
        panic!("two merges: {landed:?}");
    };
    assert_eq!(*first_commit, candidate(first));
    assert_eq!(
        git(&env.repo(), &["rev-parse", &format!("{first_commit}^")]),
        base
    );
    assert_ne!(*second_commit, candidate(second));
    assert_eq!(
        git(&env.repo(), &["rev-parse", &format!("{second_commit}^")]),
        *first_commit
    );
    assert_eq!(env.tip(), *second_commit);
}

#[test]
fn a_second_run_continues_and_skips_merged_tickets() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("B", 0, "README.md", "out of scope\n");
    let plan = plan(
        json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")])), ticket("B", json!([any("b.txt")]))]}),
    );
    let first = run_scripted(&env, &plan);
    assert_eq!(first.summary.merged, ["A"]);
    assert!(first.summary.failed.contains_key("B"));
    std::fs::remove_dir_all(env.fixtures().join("B")).unwrap();
    env.fixture("B", 0, "b.txt", "b\n");
    let second = run_scripted(&env, &plan);
    assert_eq!(
        second.summary.run, first.summary.run,
        "the same plan continues its run"
    );
    assert_eq!(second.summary.merged, ["A", "B"]);
    assert!(second
        .events
        .contains(&Event::AlreadyMerged { ticket: "A".into() }));
    let started_a = second
        .events
        .iter()
        .any(|e| matches!(e, Event::AttemptStarted { ticket, .. } if ticket == "A"));
    assert!(!started_a, "a merged ticket is not run again");
    assert_eq!(env.log().len(), 3);
}

#[test]
fn a_ticket_the_plan_no_longer_has_is_said_with_an_event_and_left_out_of_the_summary() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("B", 0, "b.txt", "b\n");
    let a = ticket("A", json!([any("a.txt")]));
    let b = ticket("B", json!([any("b.txt")]));
    let first = run_scripted(
        &env,
        &plan(json!({"gates": gate(&["true"]), "tickets": [a, b.clone()]})),
    );
    assert_eq!(first.summary.merged, ["A", "B"]);
    let second = run_scripted(
        &env,
        &plan(json!({"gates": gate(&["true"]), "tickets": [b]})),
    );
    assert_eq!(second.summary.run, first.summary.run);
    let removed: Vec<&Event> = (second.events.iter())
        .filter(|e| matches!(e, Event::Removed { .. }))
        .collect();
    assert_eq!(removed, [&Event::Removed { ticket: "A".into() }]);
    assert_eq!(second.summary.merged, ["B"]);
}

#[test]
fn gates_rerun_on_the_merged_tree_when_the_base_moved() {
    // B's gate waits until A has landed, passes on B's own tree, and fails
    // on the merged tree, which has A's file.
    let env = Env::new(&[("README.md", "hi\n")]);
    // Nothing has `main` checked out, so each merge moves it at once.
    git(&env.repo(), &["checkout", "-q", "--detach"]);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("B", 0, "b.txt", "b\n");
    let mut a = ticket("A", json!([any("a.txt")]));
    a["estimate_minutes"] = json!(1);
    let mut b = ticket("B", json!([any("b.txt")]));
    let wait = format!(
        "until git -C '{}' cat-file -e main:a.txt 2>/dev/null; do sleep 0.1; done; test ! -f a.txt",
        env.repo().display()
    );
    b["gates"] = gate(&["sh", "-c", &wait]);
    let plan = plan(json!({"gates": gate(&["true"]), "tickets": [a, b]}));
    let mut s = settings();
    s.strikes = 1;
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["A"]);
    let f = &out.summary.failed["B"];
    assert_eq!(f.kind, FailureKind::GateFailure);
    assert!(f.message.contains("moved base"), "{}", f.message);
    assert!(!env.repo().join("b.txt").exists());
}

#[test]
fn changing_the_gate_script_is_tampering() {
    let env = Env::new(&[(
        "package.json",
        "{\"scripts\": {\"test\": \"node --test\"}}\n",
    )]);
    env.fixture(
        "A",
        0,
        "package.json",
        "{\"scripts\": {\"test\": \"exit 0\"}}\n",
    );
    let out = single(
        &env,
        ticket("A", json!([any("package.json")])),
        gate(&["npm", "test"]),
    );
    assert_eq!(failing_kind(&out, "A"), FailureKind::GateScriptTampering);
    assert!(
        out.summary.failed["A"].message.contains("test"),
        "{}",
        out.summary.failed["A"].message
    );
}

#[test]
fn changing_the_file_a_gate_runs_is_tampering_unless_the_scope_names_it() {
    // The base's check fails; the agent's passes, in a glob of its scope.
    let env = Env::new(&[("ci/check.sh", "exit 1\n")]);
    env.fixture("A", 0, "ci/check.sh", "exit 0\n");
    let out = single(
        &env,
        ticket("A", json!([any("ci/**")])),
        gate(&["sh", "./ci/check.sh"]),
    );
    assert_eq!(failing_kind(&out, "A"), FailureKind::GateScriptTampering);
    assert_eq!(
        out.summary.failed["A"].message,
        "`ci/check.sh` changed; the gate `sh ./ci/check.sh` runs it, and the ticket's scope does not name it"
    );
    // Named in the scope, the ticket may change it (the gate then runs the
    // ticket's version: a test script the ticket extends, say).
    let env = Env::new(&[("ci/check.sh", "exit 1\n")]);
    env.fixture("A", 0, "ci/check.sh", "exit 0\n");
    let named = ticket("A", json!([any("ci/**"), any("ci/check.sh")]));
    let out = run_scripted(
        &env,
        &plan(json!({"gates": gate(&["sh", "./ci/check.sh"]), "tickets": [named]})),
    );
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
}

#[test]
fn a_merge_conflict_sends_the_ticket_back_to_be_rebuilt_on_the_new_base() {
    // A and B both rewrite the shared file; whichever lands second conflicts,
    // is rebuilt on the new base (its fixture rewrites the whole file), and lands.
    let env = Env::new(&[("shared.txt", "one\ntwo\nthree\n")]);
    git(&env.repo(), &["checkout", "-q", "--detach"]);
    env.fixture("A", 0, "shared.txt", "ONE\ntwo\nthree\n");
    env.fixture("B", 1, "shared.txt", "uno\ntwo\nthree\n");
    env.fixture("B", 2, "shared.txt", "ONE\ntwo\nthree\nfour\n");
    let mut b = ticket("B", json!([any("shared.txt")]));
    // B waits for A to land, so its first candidate is built on the old base.
    let wait = format!(
        "until git -C '{}' log --format=%s main | grep -q 'A: '; do sleep 0.1; done",
        env.repo().display()
    );
    b["gates"] = gate(&["sh", "-c", &wait]);
    let plan = plan(
        json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("shared.txt")])), b]}),
    );
    let out = run_scripted(&env, &plan);
    assert_eq!(out.summary.merged, ["A", "B"], "{:?}", out.summary);
    let conflict = out.events.iter().any(|e| {
        matches!(e, Event::AttemptRejected { ticket, failure, .. } if ticket == "B" && failure.kind == FailureKind::MergeConflict)
    });
    assert!(conflict, "{:?}", out.events);
    assert_eq!(
        git(&env.repo(), &["show", "main:shared.txt"]),
        "ONE\ntwo\nthree\nfour"
    );
}

#[test]
fn a_gate_past_its_time_limit_is_a_timeout() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "a.txt", "a\n");
    let plan = plan(
        json!({"gates": gate(&["sleep", "30"]), "tickets": [ticket("A", json!([any("a.txt")]))]}),
    );
    let mut s = settings();
    s.strikes = 1;
    s.gates.timeout = Some(std::time::Duration::from_secs(1));
    let before = env.tip();
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(failing_kind(&out, "A"), FailureKind::Timeout);
    assert!(out.summary.failed["A"].message.contains("sleep 30"));
    assert_eq!(env.tip(), before);
}

#[test]
fn a_checkout_of_another_branch_is_left_alone() {
    let env = Env::new(&[("README.md", "hi\n")]);
    git(&env.repo(), &["checkout", "-q", "-b", "work"]);
    write(&env.repo(), "notes.txt", "mine, uncommitted\n");
    env.fixture("A", 0, "a.txt", "a\n");
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")]))]}));
    let out = run_scripted(&env, &plan);
    assert_eq!(out.summary.merged, ["A"]);
    assert_eq!(
        git(&env.repo(), &["rev-parse", "--abbrev-ref", "HEAD"]),
        "work"
    );
    assert!(
        !env.repo().join("a.txt").exists(),
        "the user's checkout is not touched"
    );
    assert_eq!(
        std::fs::read_to_string(env.repo().join("notes.txt")).unwrap(),
        "mine, uncommitted\n"
    );
    assert_eq!(git(&env.repo(), &["show", "main:a.txt"]), "a");
}

#[test]
fn commits_the_agent_made_are_folded_into_one() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let script = env.tmp.path().join("agent.sh");
    std::fs::write(
        &script,
        "set -e\necho one > one.txt\ngit add one.txt\nGIT_CONFIG_GLOBAL=/dev/null git -c user.name=a -c user.email=a@a commit -qm 'agent wip'\necho two > two.txt\n",
    )
    .unwrap();
    let plan = plan(
        json!({"gates": gate(&["test", "-f", "one.txt"]), "tickets": [ticket("A", json!([any("one.txt"), any("two.txt")]))]}),
    );
    let agent = agent::from_name("cmd", Some(&format!("sh {}", script.display()))).unwrap();
    let out = run_with(&env, &plan, &settings(), agent);
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    assert_eq!(env.log(), ["A: ticket A", "base"]);
    let files = git(&env.repo(), &["show", "--format=", "--name-only", "main"]);
    assert_eq!(files.lines().collect::<Vec<_>>(), ["one.txt", "two.txt"]);
}

#[test]
fn a_slot_git_forgot_is_made_anew() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("B", 0, "b.txt", "b\n");
    let first =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")]))]}));
    assert_eq!(run_scripted(&env, &first).summary.merged, ["A"]);
    std::fs::remove_dir_all(env.repo().join(".planwright/index")).unwrap();
    let second =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("B", json!([any("b.txt")]))]}));
    assert_eq!(run_scripted(&env, &second).summary.merged, ["B"]);
}

fn trailers(env: &Env, id: &str) -> usize {
    git(
        &env.repo(),
        &[
            "log",
            "--format=%(trailers:key=Planwright-Ticket,valueonly)",
            "main",
        ],
    )
    .lines()
    .filter(|l| l.trim() == id)
    .count()
}

#[test]
fn an_edited_plan_continues_the_run_and_changed_tickets_run_again_only_when_asked() {
    let env = Env::new(&[("README.md", "hi\n")]);
    for id in ["A", "B", "D"] {
        env.fixture(id, 0, &format!("{id}.txt"), "x\n");
    }
    let t = |id: &str| {
        ticket(
            id,
            json!([{"pattern": format!("{id}.txt"), "op": "create"}]),
        )
    };
    let first = plan(json!({"gates": gate(&["true"]), "tickets": [t("A"), t("B")]}));
    let one = run_scripted(&env, &first);
    assert_eq!(one.summary.merged, ["A", "B"]);
    // B's body changes and D is new: A stays merged, D runs, B is reported.
    let mut b = t("B");
    b["body"] = json!("do it differently");
    let edited = plan(json!({"gates": gate(&["true"]), "tickets": [t("A"), b, t("D")]}));
    let two = run_scripted(&env, &edited);
    assert_eq!(two.summary.run, one.summary.run, "the run continues");
    assert_eq!(two.summary.merged, ["A", "D"]);
    assert_eq!(two.summary.changed, ["B"]);
    assert!(two
        .events
        .iter()
        .any(|e| matches!(e, Event::Changed { ticket, .. } if ticket == "B")));
    // Lost state: git alone says what merged.
    std::fs::remove_dir_all(env.repo().join(".planwright")).unwrap();
    git(&env.repo(), &["worktree", "prune"]);
    let three = run_scripted(&env, &edited);
    assert_eq!(
        (three.summary.merged.len(), three.summary.changed.len()),
        (2, 1)
    );
    let started = |o: &Outcome| {
        o.events
            .iter()
            .filter(|e| matches!(e, Event::AttemptStarted { .. }))
            .count()
    };
    assert_eq!(started(&three), 0, "nothing runs twice");
    // B runs again only when asked. Its file exists now, so its scope
    // says `any` instead of `create` (preflight checks tickets that will run).
    let mut b = ticket("B", json!([any("B.txt")]));
    b["body"] = json!("do it differently");
    env.fixture("B", 0, "B.txt", "y\n");
    let edited = plan(json!({"gates": gate(&["true"]), "tickets": [t("A"), b, t("D")]}));
    let agent: Arc<dyn agent::Agent> = Arc::from(
        agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap(),
    );
    let resume = Resume {
        rerun_changed: true,
        ..Resume::default()
    };
    let four = run_resume(&env, &edited, &settings(), agent, resume);
    assert_eq!(four.summary.merged, ["A", "B", "D"], "{:?}", four.summary);
    assert_eq!(
        (
            trailers(&env, "A"),
            trailers(&env, "B"),
            trailers(&env, "D")
        ),
        (1, 2, 1)
    );
    assert_eq!(git(&env.repo(), &["show", "main:B.txt"]), "y");
}

/// An agent that writes `<ticket>.txt`, and that, in B's first attempt,
/// puts a commit of someone else's on the run's branch.
struct MovesTheRunBranch {
    repo: std::path::PathBuf,
}

impl agent::Agent for MovesTheRunBranch {
    fn name(&self) -> &str {
        "moves-the-run-branch"
    }
    fn attempt(
        &self,
        ctx: &agent::AttemptContext,
        _cancel: &planwright_engine::process::Cancel,
    ) -> Result<agent::AgentReport, planwright_engine::EngineError> {
        if ctx.ticket == "B" && ctx.attempt == 1 {
            let held = git(
                &self.repo,
                &[
                    "for-each-ref",
                    "--format=%(refname)",
                    "refs/heads/planwright/run/",
                ],
            );
            assert!(!held.is_empty(), "A's merge is on the run's branch");
            let tip = git(&self.repo, &["rev-parse", &held]);
            let tree = format!("{tip}^{{tree}}");
            let theirs = git(
                &self.repo,
                &["commit-tree", &tree, "-p", &tip, "-m", "someone else's"],
            );
            git(&self.repo, &["update-ref", &held, &theirs, &tip]);
        }
        let rel = format!("{}.txt", ctx.ticket);
        std::fs::write(ctx.workspace.join(rel), "done\n").unwrap();
        Ok(agent::AgentOutcome::Finished.into())
    }
}

#[test]
fn a_merge_lands_on_the_run_branch_where_someone_else_moved_it() {
    // `main` is checked out, so the merges go to the run's branch, and B's
    // merge finds it moved since A's merge put it where planwright knew it.
    let env = Env::new(&[("README.md", "hi\n")]);
    let mut b = ticket("B", json!([any("B.txt")]));
    b["depends_on"] = json!(["A"]);
    let plan = plan(json!({
        "gates": gate(&["true"]),
        "tickets": [ticket("A", json!([any("A.txt")])), b]
    }));
    let agent: Arc<dyn agent::Agent> = Arc::new(MovesTheRunBranch { repo: env.repo() });
    let out = run_resume(&env, &plan, &settings(), agent, Resume::default());
    assert_eq!(out.summary.merged, ["A", "B"], "{:?}", out.summary);
    assert_eq!(
        env.log(),
        ["B: ticket B", "someone else's", "A: ticket A", "base"]
    );
}

/// An agent that, while it works, edits a tracked file of the user's checkout.
struct EditsTheCheckout {
    repo: std::path::PathBuf,
}

impl agent::Agent for EditsTheCheckout {
    fn name(&self) -> &str {
        "edits-the-checkout"
    }
    fn attempt(
        &self,
        ctx: &agent::AttemptContext,
        _cancel: &planwright_engine::process::Cancel,
    ) -> Result<agent::AgentReport, planwright_engine::EngineError> {
        std::fs::write(self.repo.join("README.md"), "the user's edit\n").unwrap();
        std::fs::write(ctx.workspace.join("a.txt"), "a\n").unwrap();
        Ok(agent::AgentOutcome::Finished.into())
    }
}

#[test]
fn a_dirty_checkout_of_the_base_is_never_moved_and_the_merges_wait_on_the_run_branch() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")]))]}));
    let before = env.tip();
    let agent: Arc<dyn agent::Agent> = Arc::new(EditsTheCheckout { repo: env.repo() });
    let out = run_resume(&env, &plan, &settings(), agent, Resume::default());
    assert_eq!(out.summary.merged, ["A"]);
    let held = out.summary.held.clone().expect("the merge is held");
    assert_eq!(held.branch, format!("planwright/run/{}", out.summary.run));
    assert!(
        held.reason.contains("git merge --ff-only planwright/run/"),
        "{}",
        held.reason
    );
    assert_eq!(
        env.tip(),
        before,
        "main did not move under the dirty checkout"
    );
    assert_eq!(
        std::fs::read_to_string(env.repo().join("README.md")).unwrap(),
        "the user's edit\n"
    );
    assert_eq!(
        git(&env.repo(), &["diff", "--cached", "--name-only"]),
        "",
        "nothing staged"
    );
    assert_eq!(
        git(&env.repo(), &["show", &format!("{}:a.txt", held.branch)]),
        "a"
    );
    // Once the checkout is clean, the next run lands the held merges.
    git(&env.repo(), &["checkout", "--", "README.md"]);
    env.fixture("A", 0, "a.txt", "unused\n");
    let again = run_scripted(&env, &plan);
    assert_eq!(
        (again.summary.merged.clone(), again.summary.held.clone()),
        (vec!["A".to_string()], None)
    );
    assert_eq!(git(&env.repo(), &["show", "main:a.txt"]), "a");
    assert_eq!(
        std::fs::read_to_string(env.repo().join("a.txt")).unwrap(),
        "a\n"
    );
    assert_eq!(
        git(
            &env.repo(),
            &["status", "--porcelain", "--untracked-files=no"]
        ),
        ""
    );
    assert_eq!(git(&env.repo(), &["branch", "--list", "planwright/*"]), "");
}

/// Without a reviewer a codeboost item's `check` is guidance: preflight
/// says it will not be judged, and the charter says so too, with the
/// item's `change` for each file.
#[test]
fn unjudged_checks_are_said_and_codeboost_changes_reach_the_charter() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("P1", 0, "a.txt", "a\n");
    let text = json!({
        "schema_version": 1, "issue": 1, "revision": 1, "summary": "s", "questions": [],
        "items": [{
            "id": "P1", "title": "a", "intent": "Add a.", "depends_on": [],
            "files": [{"path": "a.txt", "kind": "add", "renamed_from": null, "change": "Write the letter a."}],
            "acceptance": [{"type": "check", "text": "a.txt holds one line."}]
        }]
    });
    let report = planwright_plan::validate_text(
        "plan.json",
        text.to_string(),
        &planwright_plan::Options::default(),
    );
    let plan = report.plan.expect("a valid codeboost plan");
    let mut s = settings();
    s.extra_gates = vec![planwright_config::gate_from_argv(&["true".to_string()])];
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    let agent: Arc<dyn agent::Agent> = Arc::from(agent);
    let checks =
        planwright_engine::preflight(&env.repo(), &plan, &s, &[], &Agents::from(agent.clone()));
    let warned: Vec<&str> = (checks.iter())
        .filter(|c| c.check == planwright_engine::CheckName::Checks)
        .map(|c| c.message.as_str())
        .collect();
    assert_eq!(
        warned,
        ["1 codeboost `check` item will not be judged: no reviewer is configured, so agents get them as guidance only and only gates decide"]
    );
    let out = run_resume(&env, &plan, &s, agent, Resume::default());
    assert_eq!(out.summary.merged, ["P1"], "{:?}", out.summary);
    let prompt = std::fs::read_to_string(
        env.repo()
            .join(".planwright/runs")
            .join(&out.summary.run)
            .join("P1/attempt-1.prompt.md"),
    )
    .unwrap();
    for needle in [
        "## What to change, file by file\n\n- `a.txt`: Write the letter a.\n",
        "## Checks to satisfy\n\nNo reviewer will judge these",
        "- a.txt holds one line.",
    ] {
        assert!(prompt.contains(needle), "{needle} missing:\n{prompt}");
    }
    assert!(!prompt.contains("reviewer will make"), "{prompt}");
}
