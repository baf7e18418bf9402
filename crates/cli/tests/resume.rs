//! `run` killed at each transition, at random and by every signal: it
//! resumes and merges each ticket once, and no agent outlives planwright.

use planwright_testkit::{git, text, wait_until, write, Env};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// A plan of `n` tickets `T01`..; every third depends on the one three
/// before it, so the run has chains and parallel work.
fn chain_plan(n: usize) -> String {
    let tickets: Vec<Value> = (1..=n)
        .map(|i| {
            let id = format!("T{i:02}");
            let mut t = serde_json::json!({"id": id, "title": id, "body": "make it",
                "scope": [{"pattern": format!("{}.txt", id.to_lowercase()), "op": "create"}]});
            if i > 3 {
                t["depends_on"] = serde_json::json!([format!("T{:02}", i - 3)]);
            }
            t
        })
        .collect();
    serde_json::json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "readme", "argv": ["test", "-f", "README.md"]}], "tickets": tickets})
    .to_string()
}

/// [`chain_plan`] of `n` independent tickets (`n` at most 3) whose gate
/// also waits until every ticket's candidate exists: their verifications
/// end together, so the merge queue lands them as one stack.
fn stacked_plan(repo: &Path, n: usize) -> String {
    let mut plan: Value = serde_json::from_str(&chain_plan(n)).unwrap();
    let wait = format!(
        "until [ \"$(git -C '{}' log --all --format=%s | grep -c '^T[0-9][0-9]: ')\" -ge {n} ]; do sleep 0.1; done; test -f README.md",
        repo.display()
    );
    plan["gates"] = serde_json::json!([{"name": "together", "argv": ["sh", "-c", wait]}]);
    plan.to_string()
}

/// A `cmd` agent that logs each call (`ticket attempt`), writes its file at
/// once, then takes `pause` seconds.
fn logging_agent(env: &Env, pause: &str) -> (String, PathBuf) {
    let log = out_dir(env).join("agent-calls.log");
    let script = env.root().join("agent.sh");
    let body = format!(
        "echo \"$PLANWRIGHT_TICKET $PLANWRIGHT_ATTEMPT\" >> '{}'\nt=$(echo \"$PLANWRIGHT_TICKET\" | tr A-Z a-z)\necho x > \"$t.txt\"\nsleep {pause}\n",
        log.display()
    );
    std::fs::write(&script, body).unwrap();
    (format!("sh {}", script.display()), log)
}

fn cmd_run(env: &Env, agent_cmd: &str, jobs: &str) -> Command {
    let mut c = env.command();
    // The stacked plan's gate waits for the tickets' candidates, which
    // the base has none of: no trial of it on the base.
    c.args(["run", "plan.json", "--repo", "repo", "--agent", "cmd"])
        .args(["--agent-cmd", agent_cmd, "--jobs", jobs, "--output", "json"])
        .arg("--no-gate-probe")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    c
}

/// Whether any process is left in process group `pgid`.
fn group_alive(pgid: u32) -> bool {
    Command::new("kill")
        .args(["-0", "--", &format!("-{pgid}")])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// Waits until the killed run's own children (git) are gone, as they
/// would be by the time a person runs planwright again.
fn wait_group_gone(pgid: u32) {
    wait_until(&format!("group {pgid} is gone"), || !group_alive(pgid));
}

/// After a run finished: every ticket merged exactly once, no agent ran
/// again for a ticket after its candidate was verified, the state store
/// agrees with git, and the user's checkout is clean and up to date.
fn assert_exactly_once(env: &Env, ids: &[String], calls: &Path) {
    let repo = env.repo();
    let trailers = git(
        &repo,
        &[
            "log",
            "--format=%(trailers:key=Planwright-Ticket,valueonly)",
            "main",
        ],
    );
    for id in ids {
        let n = trailers.lines().filter(|l| l.trim() == id).count();
        assert_eq!(n, 1, "{id} merged {n} times:\n{trailers}");
    }
    let status: Value = serde_json::from_slice(
        &env.planwright(&["status", "--repo", "repo", "--output", "json"])
            .stdout,
    )
    .unwrap();
    let history = git(&repo, &["log", "--format=%H", "main"]);
    let calls = std::fs::read_to_string(calls).unwrap_or_default();
    for t in status["tickets"].as_array().unwrap() {
        let id = t["id"].as_str().unwrap();
        assert_eq!(t["state"], "merged", "{t}");
        assert!(history.contains(t["merge_commit"].as_str().unwrap()), "{t}");
        let verified = t["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["phase"] == "verified")
            .and_then(|a| a["n"].as_u64());
        let later = calls.lines().filter(|l| {
            let (who, n) = l.split_once(' ').unwrap();
            who == id && n.parse::<u64>().unwrap() > verified.unwrap_or(u64::MAX)
        });
        assert_eq!(
            later.count(),
            0,
            "{id}: the agent ran after a verified candidate\n{calls}"
        );
    }
    assert_eq!(
        git(&repo, &["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
    assert_eq!(
        git(&repo, &["rev-parse", "HEAD"]),
        git(&repo, &["rev-parse", "main"])
    );
    for id in ids {
        assert!(
            repo.join(format!("{}.txt", id.to_lowercase())).is_file(),
            "{id}"
        );
    }
    let refs = git(
        &repo,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/planwright",
            "refs/heads/planwright",
        ],
    );
    assert_eq!(refs, "", "no ref per ticket or run is left");
}

fn crash_env(n: usize) -> (Env, Vec<String>) {
    let env = Env::new(&[("README.md", "hi\n")]).with_cli(BIN);
    write(env.root(), "plan.json", &chain_plan(n));
    // The agents are sandboxed: what they tell the test goes to a folder
    // the configuration lets them write.
    let out = out_dir(&env);
    std::fs::create_dir_all(&out).unwrap();
    write(
        env.root(),
        "planwright.toml",
        &format!("[sandbox]\nwritable = [\"{}\"]\n", out.display()),
    );
    (env, (1..=n).map(|i| format!("T{i:02}")).collect())
}

/// The folder sandboxed agents of the crash tests may write.
fn out_dir(env: &Env) -> PathBuf {
    env.root().join("out")
}

/// Starts a run of `env`'s plan whose agent says it started, then sleeps
/// until it is ended; returns once the agent runs, with the agent's script.
fn sleeping_run(env: &Env) -> (std::process::Child, PathBuf) {
    let started = out_dir(env).join("agent.started");
    let script = env.root().join("agent.sh");
    std::fs::write(
        &script,
        format!("echo started > '{}'\nsleep 900\n", started.display()),
    )
    .unwrap();
    let child = cmd_run(env, &format!("sh {}", script.display()), "1")
        .spawn()
        .unwrap();
    wait_until("the agent started", || {
        std::fs::read_to_string(&started).is_ok_and(|p| p.ends_with('\n'))
    });
    (child, script)
}

#[test]
fn a_run_killed_at_each_transition_resumes_exactly() {
    // PLANWRIGHT_TEST_ABORT_AT=N kills planwright at its Nth transition
    // point; N grows until a run completes without reaching it.
    let mut n = 1;
    // Continued runs that landed a stack whose gates had passed before the
    // kill, without running them again.
    let mut not_gated_again = 0;
    loop {
        let (env, ids) = crash_env(2);
        write(env.root(), "plan.json", &stacked_plan(&env.repo(), 2));
        let (agent, calls) = logging_agent(&env, "0");
        let mut child = cmd_run(&env, &agent, "2")
            .env("PLANWRIGHT_TEST_ABORT_AT", n.to_string())
            .spawn()
            .unwrap();
        let pgid = child.id();
        let status = child.wait().unwrap();
        wait_group_gone(pgid);
        if status.code() == Some(0) {
            assert!(n > 20, "only {n} transition points");
            // The points covered a batch's: the run they were counted on
            // landed its two tickets as one stack.
            let events = env.run_file("events.jsonl");
            let landed = events
                .lines()
                .find(|l| l.contains("\"event\":\"batch_landed\""));
            assert!(
                landed.is_some_and(|l| l.contains("T01") && l.contains("T02")),
                "{events}"
            );
            assert!(
                not_gated_again > 0,
                "no kill fell between a stack's gates and its landing"
            );
            break;
        }
        assert_eq!(status.code(), None, "point {n}: killed, not failed");
        if env.repo().join(".planwright/state.db").is_file() {
            let s: Value = serde_json::from_slice(
                &env.planwright(&["status", "--repo", "repo", "--output", "json"])
                    .stdout,
            )
            .unwrap();
            assert_ne!(
                s["run"]["status"], "running",
                "point {n}: the run's process is gone"
            );
        }
        // Both streams: with `--output json` an error is a JSON document on
        // stdout, and stderr is empty.
        let again = cmd_run(&env, &agent, "2")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            again.status.code(),
            Some(0),
            "point {n}: the second run completes: {}{}",
            text(&again.stdout),
            text(&again.stderr)
        );
        assert_exactly_once(&env, &ids, &calls);
        let runs = std::fs::read_dir(env.repo().join(".planwright/runs")).unwrap();
        let logs = (runs.flat_map(|r| std::fs::read_dir(r.unwrap().path()).unwrap())).map(|t| {
            std::fs::read_to_string(t.unwrap().path().join("ticket.log")).unwrap_or_default()
        });
        not_gated_again += logs.filter(|l| l.contains("before; not run again")).count();
        n += 1;
    }
}

#[test]
fn twenty_random_kills_of_a_twelve_ticket_run_merge_each_ticket_once() {
    let (env, ids) = crash_env(12);
    let (agent, calls) = logging_agent(&env, "0.3");
    // A fixed-seed generator: the kill times vary, the test repeats.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut kills = 0;
    while kills < 20 {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let delay = 100 + (seed >> 33) % 800;
        let mut child = cmd_run(&env, &agent, "3").spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay));
        let pgid = child.id();
        let _ = child.kill();
        let status = child.wait().unwrap();
        wait_group_gone(pgid);
        if status.code() == Some(0) {
            break;
        }
        kills += 1;
    }
    assert!(kills >= 20 || calls.exists(), "{kills} kills");
    let last = cmd_run(&env, &agent, "3").output().unwrap();
    assert_eq!(
        last.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&last.stdout),
        String::from_utf8_lossy(&last.stderr)
    );
    assert_exactly_once(&env, &ids, &calls);
}

#[test]
fn every_signal_ends_the_agents_before_planwright_exits() {
    for signals in [&["-TERM"][..], &["-HUP"], &["-INT", "-INT"]] {
        let (env, _) = crash_env(1);
        let (mut child, script) = sleeping_run(&env);
        for s in signals {
            Command::new("kill")
                .args([s.to_string(), child.id().to_string()])
                .status()
                .unwrap();
        }
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(1), "{signals:?}: interrupted");
        // The agent runs in a PID namespace of its own, so its `$$` means
        // nothing here: look for its script by its (unique) path instead.
        let alive = Command::new("pgrep")
            .args(["-f", &script.display().to_string()])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(!alive, "{signals:?}: the agent outlived planwright");
        let s: Value = serde_json::from_slice(
            &env.planwright(&["status", "--repo", "repo", "--output", "json"])
                .stdout,
        )
        .unwrap();
        assert_eq!(s["run"]["status"], "interrupted");
    }
}

#[test]
fn after_a_kill_no_view_shows_a_ticket_running() {
    let (env, _) = crash_env(1);
    let (mut child, _) = sleeping_run(&env);
    // A page served while the run goes on follows it to its end.
    let live = Served::start(&env);
    assert!(live
        .page()
        .contains("data-count=\"running\"><dt>running</dt><dd>1</dd>"));
    let pgid = child.id();
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().code(), None, "killed");
    wait_group_gone(pgid);

    let human = env.planwright(&["status", "--repo", "repo"]);
    let human = text(&human.stdout);
    let lines: Vec<&str> = human.lines().collect();
    assert!(lines[0].contains("(interrupted)"), "{human}");
    assert_eq!(
        lines[1], "1 ticket: 0 merged, 0 failed, 0 blocked, 1 interrupted, 0 pending",
        "{human}"
    );
    let row = lines.iter().find(|l| l.starts_with("T01 ")).unwrap();
    assert_eq!(
        row.split_whitespace().nth(1),
        Some("interrupted"),
        "{human}"
    );

    let s = env.status_json();
    assert_eq!(s["run"]["status"], "interrupted", "{s}");
    assert_eq!(s["tickets"][0]["state"], "interrupted", "{s}");
    assert_eq!(s["run"]["running_count"], 0, "{s}");
    assert_eq!(s["run"]["interrupted_count"], 1, "{s}");
    assert_eq!(s["counts"]["running"], 0, "{s}");

    let frame = text(
        &env.planwright(&["watch", "--repo", "repo", "--once", "120x20"])
            .stdout,
    );
    let lines: Vec<&str> = frame.lines().collect();
    assert!(lines[0].contains("(interrupted)"), "{frame}");
    assert!(
        lines[1].starts_with("0 merged 0 failed 0 blocked 1 interrupted 0 pending"),
        "{frame}"
    );
    let row = lines.iter().find(|l| l.contains(" T01 ")).unwrap();
    assert!(row.contains("T01  interrupted  #1"), "{frame}");
    assert!(frame.contains("slot 1: idle"), "{frame}");
    assert!(!frame.contains("running"), "{frame}");

    let html = text(
        &env.planwright(&["report", "--repo", "repo", "--format", "html"])
            .stdout,
    );
    let gone = "<span class=\"badge st-interrupted\">interrupted</span></h1>";
    wait_until("the live page shows the kill", || {
        live.page().contains(gone)
    });
    for page in [html, live.page(), Served::start(&env).page()] {
        assert!(page.contains(gone), "{page}");
        assert!(
            page.contains("data-count=\"interrupted\"><dt>interrupted</dt><dd>1</dd>"),
            "{page}"
        );
        assert!(page.contains("<g class=\"node st-interrupted\""), "{page}");
        assert!(page.contains("badge out-interrupted"), "{page}");
        for running in ["st-running\"", "out-running\"", "data-count=\"running\""] {
            assert!(!page.contains(running), "{running}: {page}");
        }
        assert!(!page.contains("id=\"live\""), "{page}");
    }

    let md = text(
        &env.planwright(&["report", "--repo", "repo", "--to", "md"])
            .stdout,
    );
    assert!(md.contains("- status: interrupted"), "{md}");
    assert!(md.contains("| T01 | T01 | interrupted |"), "{md}");
}

/// `planwright serve` on `env`'s run, stopped when dropped.
struct Served {
    child: std::process::Child,
    url: String,
}

impl Served {
    fn start(env: &Env) -> Served {
        use std::io::BufRead;
        let mut child = env
            .command()
            .args(["serve", "--interval", "50", "--repo", "repo"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let url = first
            .split_whitespace()
            .find_map(|w| w.strip_prefix("http://"))
            .unwrap_or_else(|| panic!("no URL in {first:?}"))
            .to_string();
        Served { child, url }
    }

    /// The page as it is now.
    fn page(&self) -> String {
        use std::io::{Read, Write};
        let (host, path) = self.url.split_once('/').unwrap();
        let mut s = std::net::TcpStream::connect(host).unwrap();
        write!(s, "GET /{path} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
        let mut page = String::new();
        s.read_to_string(&mut page).unwrap();
        page
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
