//! A slot's workspace made ready before its agent runs, end to end: the
//! `[workspace] setup` command (once per slot, again when its inputs
//! change) and the files `[workspace] copy` brings in.

use planwright_engine::agent::{self, Agents};
use planwright_engine::Event;
use planwright_engine::FailureKind;
use planwright_engine::Resume;
use planwright_testkit::*;
use serde_json::json;
use std::sync::Arc;

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
    s.workspace.setup = vec![vec!["sh".into(), "-c".into(), script.into()]];
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["A", "B", "C"], "{:?}", out.summary);
    // Once per gate checkout (the ticket slot's, made while the first
    // agent worked, and the merge's when a merge had to gate again); the
    // set-up's `deps/` survived each reset.
    let run = env.repo().join(".planwright/runs").join(&out.summary.run);
    let logs = ["A", "B", "C"].map(|id| {
        let made = std::fs::read_to_string(run.join(id).join("attempt-1.checkout.log"));
        std::fs::read_to_string(run.join(id).join("ticket.log")).unwrap()
            + &made.unwrap_or_default()
    });
    let setups_in = |place: &str| -> usize {
        logs.iter()
            .flat_map(|l| l.lines())
            .filter(|l| l.contains("(set-up in") && l.contains(place))
            .count()
    };
    let checkout_setups = setups_in("/checkouts/");
    // Preflight's own checkout logs its set-up elsewhere.
    let checkouts = std::fs::read_dir(env.repo().join(".planwright/checkouts"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name() != "preflight")
        .count();
    assert_eq!(checkout_setups, checkouts, "{logs:?}");
    // The agents' single workspace was set up once and kept its result.
    assert_eq!(setups_in("/workspaces/"), 1, "{logs:?}");
}

/// The `(set-up in …)` lines of agent workspaces in the ticket logs of `ids`.
fn workspace_setups(env: &Env, run: &str, ids: &[&str]) -> usize {
    ids.iter()
        .map(|id| {
            let log = env
                .repo()
                .join(".planwright/runs")
                .join(run)
                .join(id)
                .join("ticket.log");
            let text = std::fs::read_to_string(log).unwrap_or_default();
            text.lines()
                .filter(|l| l.contains("(set-up in") && l.contains("workspaces/slot-"))
                .count()
        })
        .sum()
}

#[test]
fn workspace_setup_runs_again_only_when_its_inputs_change() {
    let env = Env::new(&[
        ("README.md", "hi\n"),
        (".gitignore", "deps/\n"),
        ("lock.txt", "v1\n"),
    ]);
    // Each agent reports the lock its workspace was set up from, and B
    // changes the lock.
    let agent = sh_agent(
        &env,
        "#!/bin/sh\ncd \"$1\"\ncat deps/lock > \"$PLANWRIGHT_TICKET.txt\"\nif [ \"$PLANWRIGHT_TICKET\" = B ]; then echo v2 > lock.txt; fi\n",
        "{worktree}",
    );
    let mut b = ticket("B", json!([any("B.txt"), any("lock.txt")]));
    b["depends_on"] = json!(["A"]);
    let mut c = ticket("C", json!([any("C.txt")]));
    c["depends_on"] = json!(["B"]);
    let plan = plan(json!({
        "gates": gate(&["true"]),
        "tickets": [ticket("A", json!([any("A.txt")])), b, c]
    }));
    let mut s = settings();
    s.jobs = 1;
    let script = "mkdir -p deps && cp lock.txt deps/lock";
    s.workspace.setup = vec![vec!["sh".into(), "-c".into(), script.into()]];
    s.workspace.setup_inputs = vec!["lock.txt".into()];
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["A", "B", "C"], "{:?}", out.summary);
    for (id, lock) in [("A", "v1"), ("B", "v1"), ("C", "v2")] {
        assert_eq!(git(&env.repo(), &["show", &format!("main:{id}.txt")]), lock);
    }
    // Once for the new slot, once more for C, whose base has the new lock.
    assert_eq!(
        workspace_setups(&env, &out.summary.run, &["A", "B", "C"]),
        2
    );
}

#[test]
fn a_failing_workspace_setup_rejects_the_attempt_before_the_agent_runs() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let agent = sh_agent(&env, "#!/bin/sh\ncd \"$1\"\necho x > A.txt\n", "{worktree}");
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("A.txt")]))]}));
    let mut s = settings();
    s.strikes = 1;
    // It works on the base commit in preflight's checkout, and fails in
    // the agent's workspace (a registry gone down since, say).
    let script = "case $PWD in */workspaces/*) echo no network >&2; exit 7;; esac";
    s.workspace.setup = vec![vec!["sh".into(), "-c".into(), script.into()]];
    let out = run_with(&env, &plan, &s, agent);
    let failure = out.summary.failed.get("A").expect("A failed");
    assert_eq!(failure.kind, FailureKind::GateFailure);
    assert!(
        failure.message.contains(&format!(
            "the set-up `sh -c {script}` failed in the agent's workspace"
        )),
        "{failure:?}"
    );
    assert!(
        !out.events
            .iter()
            .any(|e| matches!(e, Event::AgentReported { .. })),
        "the agent never ran"
    );
}

#[test]
fn copied_files_are_there_for_the_agent_and_never_in_the_candidate() {
    let env = Env::new(&[("README.md", "hi\n"), (".gitignore", ".env\n")]);
    write(&env.repo(), ".env", "SECRET=1\n");
    // Each agent shows what `.env` held and then changes it; B also stops
    // git from ignoring it.
    let agent = sh_agent(
        &env,
        "#!/bin/sh\ncd \"$1\"\ncat .env > \"$PLANWRIGHT_TICKET.txt\"\necho CHANGED > .env\nif [ \"$PLANWRIGHT_TICKET\" = B ]; then echo '!.env' >> .gitignore; fi\n",
        "{worktree}",
    );
    let mut b = ticket("B", json!([any("B.txt"), any(".gitignore"), any(".env")]));
    b["depends_on"] = json!(["A"]);
    let plan = plan(json!({
        "gates": gate(&["true"]),
        "tickets": [ticket("A", json!([any("A.txt"), any(".env")])), b]
    }));
    let mut s = settings();
    s.jobs = 1;
    s.workspace.copy = vec![".env".into()];
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["A", "B"], "{:?}", out.summary);
    for id in ["A", "B"] {
        let seen = git(&env.repo(), &["show", &format!("main:{id}.txt")]);
        assert_eq!(seen, "SECRET=1", "{id} started from the user's `.env`");
    }
    assert_eq!(
        git(
            &env.repo(),
            &["ls-tree", "-r", "--name-only", "main", ".env"]
        ),
        ""
    );
    assert_eq!(
        std::fs::read_to_string(env.repo().join(".env")).unwrap(),
        "SECRET=1\n",
        "the user's own copy is untouched"
    );
}

#[test]
fn a_copy_never_follows_a_symlink_an_agent_left_in_its_workspace() {
    let env = Env::new(&[("README.md", "hi\n"), (".gitignore", "conf\n")]);
    write(&env.repo(), "conf/local.env", "MINE=1\n");
    let outside = env.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    // A replaces the ignored `conf` folder with a link out of its
    // workspace; B, next in the same slot, reads what it was given.
    let agent = sh_agent(
        &env,
        &format!(
            "#!/bin/sh\ncd \"$1\"\ncat conf/local.env > \"$PLANWRIGHT_TICKET.txt\"\nif [ \"$PLANWRIGHT_TICKET\" = A ]; then rm -rf conf; ln -s {} conf; fi\n",
            outside.display()
        ),
        "{worktree}",
    );
    let mut b = ticket("B", json!([any("B.txt")]));
    b["depends_on"] = json!(["A"]);
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("A.txt")])), b]}));
    let mut s = settings();
    s.jobs = 1;
    s.workspace.copy = vec!["conf/local.env".into()];
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["A", "B"], "{:?}", out.summary);
    assert_eq!(git(&env.repo(), &["show", "main:B.txt"]), "MINE=1");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "nothing was written through the link"
    );
}

#[test]
fn a_copy_file_missing_tracked_or_linked_out_of_the_repository_fails_preflight() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let outside = env.tmp.path().join("outside.env");
    std::fs::write(&outside, "x\n").unwrap();
    std::os::unix::fs::symlink(&outside, env.repo().join("linked.env")).unwrap();
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("A.txt")]))]}));
    let mut s = settings();
    s.workspace.copy = vec![".env".into(), "README.md".into(), "linked.env".into()];
    let agents = Agents::from(Arc::from(sh_agent(&env, "#!/bin/sh\n", "{worktree}")));
    // `planwright preflight` says what `run` would.
    let alone = planwright_engine::preflight(&env.repo(), &plan, &s, &[], &agents);
    let failed = planwright_engine::prepare(&env.repo(), plan, s, Resume::default(), &[], &agents)
        .err()
        .expect("preflight refuses");
    let copy_checks = |checks: &[planwright_engine::Check]| {
        checks
            .iter()
            .filter(|c| c.check == planwright_engine::CheckName::Copy)
            .map(|c| c.message.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(copy_checks(&alone), copy_checks(&failed.checks));
    let copy: Vec<&str> = failed
        .checks
        .iter()
        .filter(|c| {
            c.check == planwright_engine::CheckName::Copy
                && c.status == planwright_engine::CheckStatus::Error
        })
        .map(|c| c.message.as_str())
        .collect();
    assert_eq!(copy.len(), 3, "{copy:?}");
    assert!(
        copy[0].contains("`.env`, which is not in your checkout"),
        "{}",
        copy[0]
    );
    assert!(
        copy[1].contains("`README.md`, which git tracks"),
        "{}",
        copy[1]
    );
    assert!(copy[2].contains("outside the repository"), "{}", copy[2]);
    assert!(copy
        .iter()
        .all(|m| m.contains("`[workspace] copy` in `planwright.toml`")));
}
