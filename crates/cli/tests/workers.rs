//! Attempts on `planwright worker`s (`[executor] kind = "process"`): the
//! executor contract, whole runs through workers alone, and a worker lost
//! in the middle of an attempt.

use planwright_engine::agent::Agents;
use planwright_engine::{prepare, Executor, Resume};
use planwright_testkit::contract::executor_contract;
use planwright_testkit::{any, build_of, gate, git, plan, settings, text, ticket, write, Env};
use serde_json::json;
use std::sync::Arc;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// A `planwright.toml` sending attempts to workers started as `command`.
fn process_config(command: &[&str]) -> String {
    let words: Vec<String> = command.iter().map(|w| format!("{w:?}")).collect();
    format!(
        "[executor]\nkind = \"process\"\ncommand = [{}]\n",
        words.join(", ")
    )
}

#[test]
fn the_process_executor_keeps_the_contract() {
    // The coordinator in this test is the binary's build, as in a run.
    planwright_engine::remote::set_version(&build_of(BIN));
    executor_contract(&|env: &Env, agents: Agents| {
        let plan =
            plan(json!({"gates": gate(&["true"]), "tickets": [ticket("T1", json!([any("**")]))]}));
        let cache = env.root().join("worker-cache");
        let mut s = settings();
        s.executor = planwright_config::ExecutorSettings::Process {
            command: vec![
                BIN.into(),
                "worker".into(),
                "--cache".into(),
                cache.display().to_string(),
            ],
        };
        let session = prepare(&env.repo(), plan, s, Resume::default(), &[], &agents)
            .unwrap_or_else(|f| panic!("preflight failed: {:?}", f.checks));
        std::fs::create_dir_all(session.repo().state_dir()).unwrap();
        let exec: Arc<dyn Executor> = session.executor(&Default::default()).unwrap();
        exec
    });
}

/// Three tickets with nothing between them, each agent writing its own file.
fn three_tickets(env: &Env) {
    let tickets = planwright_testkit::creating_tickets(&["A", "B", "C"]);
    let plan = json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": gate(&["sh", "-c", "cat *.txt"]), "tickets": tickets});
    write(env.root(), "plan.json", &plan.to_string());
}

/// `COMMAND plan.json` (`run`, `preflight`) in `env` with its
/// `planwright.toml`, the `cmd` agent `agent` and `flags`.
fn planwright(env: &Env, command: &str, agent: &str, flags: &[&str]) -> std::process::Output {
    let mut args = vec![
        command,
        "plan.json",
        "--repo",
        "repo",
        "--config",
        "planwright.toml",
    ];
    args.extend_from_slice(flags);
    // The gate reads the tickets' files, which the base has none of.
    args.extend_from_slice(&["--no-gate-probe", "--agent", "cmd", "--agent-cmd", agent]);
    env.planwright(&args)
}

const AGENT: &str = r#"echo "$PLANWRIGHT_TICKET" > "$PLANWRIGHT_TICKET.txt"; echo done"#;

#[test]
fn a_plan_runs_through_workers_that_reach_nothing_but_their_stream() {
    let env = Env::new(&[("README.md", "base\n")]).with_cli(BIN);
    three_tickets(&env);
    let cache = env.root().join("cache");
    // Each worker in its own user, mount and network namespace: it shares
    // nothing with the coordinator but its standard streams (and the
    // file system, which the worker only reads for its cache).
    let cache_arg = cache.display().to_string();
    let command = [
        "unshare",
        "--user",
        "--map-root-user",
        "--net",
        "--mount",
        BIN,
        "worker",
        "--cache",
        &cache_arg,
    ];
    write(env.root(), "planwright.toml", &process_config(&command));
    let agent = format!("sh -c '{AGENT}'");
    let out = planwright(&env, "run", &agent, &["--jobs", "3"]);
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        said.contains(
            "; attempts on workers at process, each confining its agents in planwright's sandbox"
        ),
        "{said}"
    );
    let files = git(&env.repo(), &["ls-tree", "--name-only", "main"]);
    assert_eq!(
        files.lines().collect::<Vec<_>>(),
        ["A.txt", "B.txt", "C.txt", "README.md"]
    );
    // The attempts ran in the workers' slots, not in the repository's.
    assert!(cache.join("sha1/store.git").is_dir());
    assert!(!env.repo().join(".planwright/workspaces").exists());
    // The agent's log came back over the stream.
    let status = env.status_json();
    let run = status["run"]["id"].as_str().unwrap().to_string();
    let log = env
        .repo()
        .join(format!(".planwright/runs/{run}/A/attempt-1.agent.log"));
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.trim_end().ends_with("\ndone"), "{log}");
}

/// A worker that dies (SIGKILL) once an agent of the first attempt is at
/// work (its `started.txt` in a workspace), if no worker died so far.
const DYING_WORKER: &str = r#"#!/bin/sh
# A job in the background reads /dev/null unless given another input.
exec 3<&0
"$BIN" worker --cache "$DIR/cache" <&3 &
pid=$!
exec 3<&-
while kill -0 "$pid" 2>/dev/null; do
  if [ -n "$(find "$DIR/cache" -name started.txt 2>/dev/null)" ] && mkdir "$DIR/killed" 2>/dev/null; then
    kill -9 "$pid"
    exit 0
  fi
  sleep 0.1
done
wait "$pid"
"#;

#[test]
fn a_worker_lost_mid_attempt_reruns_its_ticket_without_a_strike_and_lands_once() {
    let env = Env::new(&[("README.md", "base\n")]).with_cli(BIN);
    let plan = json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": gate(&["true"]),
        "tickets": [ticket("A", json!([{"pattern": "A.txt", "op": "create"}]))]});
    write(env.root(), "plan.json", &plan.to_string());
    let dir = env.root().join("w");
    std::fs::create_dir_all(&dir).unwrap();
    let wrapper = dir.join("worker.sh");
    let script = DYING_WORKER
        .replace("$DIR", &dir.display().to_string())
        .replace("$BIN", BIN);
    std::fs::write(&wrapper, script).unwrap();
    let wrapper = wrapper.display().to_string();
    write(
        env.root(),
        "planwright.toml",
        &process_config(&["sh", &wrapper]),
    );
    // The first attempt waits to be cut off; the one after does the work.
    let agent = r#"sh -c 'if [ "$PLANWRIGHT_ATTEMPT" = 1 ]; then touch started.txt; sleep 900; fi; echo A > A.txt'"#;
    let out = planwright(&env, "run", agent, &["--jobs", "2", "--strikes", "1"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let said = format!("{stdout}{stderr}");
    assert!(
        said.contains("A: the worker at process failed the attempt")
            && said.contains("no strike used (1 slot working; its slot rests 10s; the run stops after 3 more lost workers)"),
        "{said}"
    );
    let log = git(&env.repo(), &["log", "--format=%s", "main"]);
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        ["A: ticket A", "base"],
        "landed once"
    );
    let status = env.status_json();
    let attempts = status["tickets"][0]["attempts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(status["tickets"][0]["state"], "merged", "{status}");
    assert_eq!(attempts.len(), 2, "{status}");
    // Where each attempt ran, in every record of it: the run's lines,
    // the ticket's log, `status` and `report --to json`.
    assert!(said.contains("A: attempt 1 started from "), "{said}");
    let slots: Vec<String> = ["1", "2"]
        .iter()
        .filter(|n| said.contains(&format!("attempt {n} started from ")))
        .map(|n| {
            let line = said
                .lines()
                .find(|l| l.contains(&format!("A: attempt {n} started")))
                .unwrap();
            line.rsplit("on process, slot ").next().unwrap().to_string()
        })
        .collect();
    assert_eq!(slots.len(), 2, "{said}");
    assert_ne!(slots[0], slots[1], "the rerun is on the other slot: {said}");
    let run = status["run"]["id"].as_str().unwrap();
    let log = std::fs::read_to_string(
        env.repo()
            .join(format!(".planwright/runs/{run}/A/ticket.log")),
    )
    .unwrap();
    assert!(
        log.contains(&format!(
            "-- attempt 1 runs on process, slot {}\n",
            slots[0]
        )) && log.contains(&format!(
            "-- attempt 2 runs on process, slot {}\n",
            slots[1]
        )),
        "{log}"
    );
    for (a, slot) in attempts.iter().zip(&slots) {
        assert_eq!(
            (&a["executor"], &a["worker"]),
            (&json!("process"), &json!("process")),
            "{a}"
        );
        assert_eq!(a["slot"].to_string(), *slot, "{a}");
    }
    let shown = env.planwright(&["status", "--repo", "repo"]);
    let shown = text(&shown.stdout);
    assert!(
        shown.contains(&format!("A: attempt 2 on process, slot {}", slots[1])),
        "{shown}"
    );
}

#[test]
fn a_worker_that_cannot_be_started_or_speaks_another_protocol_fails_preflight() {
    let env = Env::new(&[("README.md", "base\n")]).with_cli(BIN);
    three_tickets(&env);
    let preflight = |command: &[&str]| {
        write(env.root(), "planwright.toml", &process_config(command));
        let out = planwright(&env, "preflight", "true", &[]);
        assert!(!out.status.success());
        format!("{}{}", text(&out.stdout), text(&out.stderr))
    };
    let said = preflight(&["/nonexistent/planwright", "worker"]);
    assert!(
        said.contains("the worker at process could not be started (`/nonexistent/planwright`")
            && said.contains("`[executor] command`"),
        "{said}"
    );
    // A program that answers with another line than the protocol's.
    let said = preflight(&["sh", "-c", "echo Welcome to Ubuntu!"]);
    assert!(
        said.contains(
            "the worker at process sent a line that is not a message of the worker protocol"
        ) && said.contains("Welcome to Ubuntu!"),
        "{said}"
    );
    let said = preflight(&[
        "sh",
        "-c",
        r#"read l; echo '{"type":"hello","protocol":99,"planwright":"9.9.9","sandbox":{"enforced":true,"detail":"x"}}'"#,
    ]);
    assert!(
        said.contains("speaks worker protocol 99 (planwright 9.9.9)"),
        "{said}"
    );
    // A worker that cannot confine agents, while the run would.
    let hello = format!(
        r#"read l; echo '{{"type":"hello","protocol":3,"planwright":"{}","sandbox":{{"enforced":false,"detail":"no Landlock here"}}}}'; read l; echo '{{"type":"checked","missing":[]}}'"#,
        build_of(BIN)
    );
    let said = preflight(&["sh", "-c", &hello]);
    assert!(
        said.contains("the worker at process cannot confine agents: no Landlock here"),
        "{said}"
    );
    assert_eq!(git(&env.repo(), &["log", "--format=%s", "main"]), "base");
}

/// An agent whose work git's fsck refuses on the coordinator: ticket A
/// writes a `.gitattributes` line over 2,048 bytes, M a `.gitmodules` url
/// starting with `-`; B does ordinary work.
const FSCK_AGENT: &str = r#"sh -c 'case "$PLANWRIGHT_TICKET" in A) awk "BEGIN { s = \"*.txt \"; for (i = 0; i < 3000; i++) s = s \"a\"; print s \" text\" }" > .gitattributes ;; M) printf "[submodule \"x\"]\n\tpath = x\n\turl = -oProxyCommand=evil\n" > .gitmodules ;; esac; echo "$PLANWRIGHT_TICKET" > "$PLANWRIGHT_TICKET.txt"'"#;

#[test]
fn a_candidate_git_refuses_fails_its_attempt_not_the_worker() {
    let env = Env::new(&[("README.md", "base\n")]).with_cli(BIN);
    let tickets: Vec<_> = ["A", "M", "B"]
        .iter()
        .map(|id| ticket(id, json!([any("**")])))
        .collect();
    let plan = json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": gate(&["true"]), "tickets": tickets});
    write(env.root(), "plan.json", &plan.to_string());
    let cache = env.root().join("cache").display().to_string();
    write(
        env.root(),
        "planwright.toml",
        &process_config(&[BIN, "worker", "--cache", &cache]),
    );
    let out = planwright(&env, "run", FSCK_AGENT, &["--jobs", "1", "--strikes", "1"]);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        !said.contains("failed the attempt"),
        "no worker lost: {said}"
    );
    let status = env.status_json();
    let ticket = |id: &str| {
        status["tickets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} in {status}"))
    };
    assert_eq!(ticket("B")["state"], "merged", "{status}");
    for (id, path, words) in [
        ("A", ".gitattributes", "gitattributesLineLength"),
        ("M", ".gitmodules", "gitmodulesUrl"),
    ] {
        let t = ticket(id);
        assert_eq!(t["state"], "failed", "{status}");
        let attempt = &t["attempts"][0];
        assert_eq!(attempt["failure"]["kind"], "scope_violation", "{t}");
        let message = attempt["failure"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("`{path}`")) && message.contains(words),
            "{message}"
        );
    }
    let files = git(&env.repo(), &["ls-tree", "--name-only", "main"]);
    assert_eq!(files.lines().collect::<Vec<_>>(), ["B.txt", "README.md"]);
}

#[test]
fn preflight_says_the_truth_about_each_worker() {
    let env = Env::new(&[("README.md", "base\n")]).with_cli(BIN);
    three_tickets(&env);
    let cache = env.root().join("cache").display().to_string();
    let preflight = |toml: &str| {
        write(env.root(), "planwright.toml", toml);
        let out = planwright(&env, "preflight", "sh -c true", &[]);
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        (out.status.success(), said)
    };
    // Agents unconfined, but the worker was not started `--unsandboxed`.
    let off = "[sandbox]\nmode = \"off\"\n";
    let worker = process_config(&[BIN, "worker", "--cache", &cache]);
    let (ok, said) = preflight(&format!("{off}{worker}"));
    assert!(
        !ok && said.contains("the worker at process was not started `--unsandboxed`"),
        "{said}"
    );
    let unsandboxed = process_config(&[BIN, "worker", "--cache", &cache, "--unsandboxed"]);
    let (ok, said) = preflight(&format!("{off}{unsandboxed}"));
    assert!(
        ok && said.contains("sandbox: none, started `--unsandboxed`"),
        "{said}"
    );
    // The agent's program is not on the worker's PATH.
    let no_path = process_config(&["env", "PATH=/nonexistent", BIN, "worker", "--cache", &cache]);
    let (ok, said) = preflight(&no_path);
    assert!(
        !ok && said
            .contains("the worker at process cannot find the agent program `sh` on its PATH"),
        "{said}"
    );
    // A worker of another build, refused unless skew is allowed.
    let other = r#"read l; echo '{"type":"hello","protocol":3,"planwright":"0.0.7","sandbox":{"enforced":true,"detail":"x"}}'; read l; echo '{"type":"checked","missing":[]}'"#;
    let skewed = process_config(&["sh", "-c", other]);
    let (ok, said) = preflight(&skewed);
    assert!(
        !ok && said.contains("the worker at process is planwright 0.0.7, this is planwright")
            && said.contains("allow_version_skew"),
        "{said}"
    );
    let (ok, said) = preflight(&format!("{skewed}allow_version_skew = true\n"));
    assert!(
        ok && said.contains("the worker at process: planwright 0.0.7"),
        "{said}"
    );
}
