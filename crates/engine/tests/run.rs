//! End-to-end runs of the engine on temporary repositories.

mod common;

use common::*;
use planwright_engine::agent;
use planwright_engine::events::Event;
use planwright_engine::FailureKind;
use serde_json::json;

fn gate(argv: &[&str]) -> serde_json::Value {
    json!([{"name": argv.join(" "), "argv": argv}])
}

fn failing_kind(outcome: &Outcome, id: &str) -> FailureKind {
    outcome
        .summary
        .failed
        .get(id)
        .unwrap_or_else(|| panic!("{id} did not fail: {:?}", outcome.summary))
        .kind
}

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
    let env = Env::new(&[("a.txt", "old\n")]);
    env.fixture("A", 0, "a.txt", "new\n");
    let out = single(
        &env,
        ticket("A", json!([{"pattern": "a.txt", "op": "create"}])),
        gate(&["true"]),
    );
    assert_eq!(failing_kind(&out, "A"), FailureKind::ScopeViolation);
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

/// The `cmd` agent running the shell script `body` with `args`.
fn sh_agent(env: &Env, body: &str, args: &str) -> Box<dyn planwright_engine::agent::Agent> {
    let script = env.tmp.path().join("agent.sh");
    std::fs::write(&script, body).unwrap();
    agent::from_name("cmd", Some(&format!("sh {} {args}", script.display()))).unwrap()
}

#[test]
fn cmd_agent_blocked_line_and_timeout() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let agent = sh_agent(
        &env,
        "#!/bin/sh\ncase \"$PLANWRIGHT_TICKET\" in\n  A) echo thinking; echo 'TICKET-BLOCKED: needs a human';;\n  B) sleep 30;;\nesac\n",
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
        "{worktree}",
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
    env.fixture("A", 2, "a.txt", "a\n");
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
fn gates_rerun_on_the_merged_tree_when_the_base_moved() {
    // B's gate waits until A has landed, passes on B's own tree, and fails
    // on the merged tree, which has A's file.
    let env = Env::new(&[("README.md", "hi\n")]);
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
fn a_merge_conflict_sends_the_ticket_back_to_be_rebuilt_on_the_new_base() {
    // A and B both rewrite the shared file; whichever lands second conflicts,
    // is rebuilt on the new base (its fixture rewrites the whole file), and lands.
    let env = Env::new(&[("shared.txt", "one\ntwo\nthree\n")]);
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
        std::fs::read_to_string(env.repo().join("shared.txt")).unwrap(),
        "ONE\ntwo\nthree\nfour\n"
    );
}

#[test]
fn worktree_setup_runs_once_per_slot() {
    let env = Env::new(&[("README.md", "hi\n"), (".gitignore", "deps/\n")]);
    for id in ["A", "B", "C"] {
        env.fixture(id, 0, &format!("{id}.txt"), "x\n");
    }
    let plan = plan(json!({
        "gates": gate(&["test", "-f", "deps/ready"]),
        "tickets": [ticket("A", json!([any("A.txt")])), ticket("B", json!([any("B.txt")])), ticket("C", json!([any("C.txt")]))]
    }));
    let mut s = settings();
    s.jobs = 1;
    let script = "mkdir -p deps && touch deps/ready";
    s.pool.setup = vec![vec!["sh".into(), "-c".into(), script.into()]];
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["A", "B", "C"], "{:?}", out.summary);
    // One checkout for the tickets; the set-up's `deps/` survived each reset.
    let logs = ["A", "B", "C"].map(|id| {
        std::fs::read_to_string(
            env.repo()
                .join(".planwright/runs")
                .join(&out.summary.run)
                .join(id)
                .join("ticket.log"),
        )
        .unwrap()
    });
    let setups: usize = logs.iter().map(|l| l.matches("(set-up in").count()).sum();
    assert_eq!(setups, 1, "{logs:?}");
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
