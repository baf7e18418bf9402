//! `run` with hostile `cmd` agents that claim, or seem to claim, that their
//! provider refused them: what is `Unavailable` and what is a failure, and
//! that every wait ends (the pause's bound, the streak's bound, a cancel).

use planwright_testkit::{text, Env};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long any run here may take before the test calls it hung: far more
/// than each needs however loaded the machine, far less than the pauses
/// (of hours) they provoke.
const HUNG: Duration = planwright_testkit::UNTESTED_LIMIT;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// A repository with one ticket, `A`, that creates `a.txt`; `model` pins
/// it to a model of the default routing table (and so to its pool).
fn waits_env(model: Option<&str>, config: &str) -> Env {
    let env = Env::new(&[("README.md", "hi\n")]).with_cli(BIN);
    let mut a = serde_json::json!({"id": "A", "title": "A", "body": "make a.txt",
        "scope": [{"pattern": "a.txt", "op": "create"}]});
    if let Some(m) = model {
        a["model"] = m.into();
    }
    let plan = serde_json::json!({"planwright": 1, "source_format": "native",
        "base": "main", "gates": [{"name": "readme", "argv": ["test", "-f", "README.md"]}],
        "tickets": [a]});
    std::fs::write(env.root().join("plan.json"), plan.to_string()).unwrap();
    env.config(config);
    env
}

/// What these tests do in an environment.
trait Waits {
    fn config(&self, toml: &str);
    fn agent(&self, body: &str) -> String;
    fn run(&self, agent_cmd: &str) -> Child;
    fn events(&self) -> Vec<Value>;
    fn named(&self, event: &str) -> Vec<Value>;
    fn report(&self) -> Value;
    fn state_db(&self) -> PathBuf;
}

impl Waits for Env {
    fn config(&self, toml: &str) {
        std::fs::write(self.root().join("planwright.toml"), toml).unwrap();
    }

    /// Writes the agent's script; it runs in the ticket's workspace.
    fn agent(&self, body: &str) -> String {
        let script = self.root().join("agent.sh");
        std::fs::write(&script, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        format!("sh {}", script.display())
    }

    fn run(&self, agent_cmd: &str) -> Child {
        let mut c = self.command();
        c.args(["run", "plan.json", "--repo", "repo", "--agent", "cmd"])
            .args(["--agent-cmd", agent_cmd, "--jobs", "1", "--output", "json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c.spawn().unwrap()
    }

    /// The run's events, in order.
    fn events(&self) -> Vec<Value> {
        let runs = self.root().join("repo/.planwright/runs");
        let Some(Ok(run)) = std::fs::read_dir(runs).ok().and_then(|mut d| d.next()) else {
            return Vec::new();
        };
        std::fs::read_to_string(run.path().join("events.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    fn named(&self, event: &str) -> Vec<Value> {
        let events = self.events().into_iter();
        events.filter(|e| e["event"] == event).collect()
    }

    fn report(&self) -> Value {
        let out = self.planwright(&["report", "--repo", "repo", "--output", "json"]);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out.stdout)))
    }

    fn state_db(&self) -> PathBuf {
        self.root().join("repo/.planwright/state.db")
    }
}

/// Waits for `child`, killing it and failing the test if it is still
/// running after [`HUNG`].
fn finish(mut child: Child) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > HUNG {
            let out = finish_now(child);
            panic!("the run never ended: {}", text(&out.stdout));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn finish_now(mut child: Child) -> Output {
    let _ = child.kill();
    child.wait_with_output().unwrap()
}

fn summary(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!("{}{}", text(&out.stdout), text(&out.stderr));
    })
}

/// Each attempt's `agent_outcome`, from the report.
fn outcomes(env: &Env) -> Vec<String> {
    let report = env.report();
    let attempts = report["tickets"][0]["attempts"].as_array().unwrap().clone();
    let outcome = |a: &Value| a["agent_outcome"].as_str().unwrap_or("").to_string();
    attempts.iter().map(outcome).collect()
}

#[test]
fn failing_output_that_mentions_quota_is_a_failure_with_a_strike() {
    let env = waits_env(None, "");
    // On stdout alone, so that the last line is the summary's (stdout and
    // stderr reach planwright on two pipes, in no set order).
    let agent = env.agent(
        "echo 'test quota::refuses_past_the_limit ... FAILED'\n\
         echo 'quota exceeded: expected 3 requests, got 4'\n\
         echo 'test result: FAILED. 1 passed; 1 failed'\nexit 101\n",
    );
    let out = finish(env.run(&agent));
    assert_eq!(out.status.code(), Some(1));
    let s = summary(&out);
    assert_eq!(s["failed"]["A"]["kind"], "agent_failed", "{s}");
    assert_eq!(
        outcomes(&env),
        ["failed", "failed"],
        "two strikes, both used"
    );
    assert!(env.named("pool_paused").is_empty(), "{:?}", env.events());
}

#[test]
fn exit_75_is_unavailable_until_max_unavailable_then_the_ticket_fails() {
    let env = waits_env(None, "[agent]\nmax_pause = 1\nmax_unavailable = 3\n");
    let agent = env.agent("exit 75\n");
    let out = finish(env.run(&agent));
    assert_eq!(out.status.code(), Some(1));
    let s = summary(&out);
    let failure = &s["failed"]["A"];
    assert_eq!(failure["kind"], "unavailable", "{s}");
    let message = failure["message"].as_str().unwrap();
    assert!(message.contains("3 times in a row"), "{message}");
    assert!(message.contains("EX_TEMPFAIL"), "{message}");
    assert_eq!(outcomes(&env), ["unavailable"; 3], "no strike was used");
    assert_eq!(env.named("pool_paused").len(), 2, "the third fails instead");
    let evidence = env.report()["tickets"][0]["failure"]["evidence"].clone();
    let evidence = evidence.as_str().unwrap_or_default().to_string();
    assert_eq!(evidence.lines().count(), 3, "each refusal: {evidence}");
}

#[test]
fn retry_in_1s_forever_ends_in_bounded_time() {
    let env = waits_env(None, "[agent]\nmax_pause = \"2s\"\n");
    let agent = env.agent("echo 'Error: rate limit exceeded, retry in 1s' >&2\nexit 1\n");
    let out = finish(env.run(&agent));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(summary(&out)["failed"]["A"]["kind"], "unavailable");
    assert_eq!(outcomes(&env).len(), 5, "the default max_unavailable");
    let waits: Vec<u64> = env
        .named("pool_paused")
        .iter()
        .map(|e| e["wait_ms"].as_u64().unwrap())
        .collect();
    // Not the second the agent asked for: the shortest pause (a minute),
    // cut to max_pause.
    assert_eq!(waits, [2000; 4]);
}

#[test]
fn try_again_in_900000_hours_pauses_the_pool_for_max_pause_at_most() {
    // One refusal fails the ticket, so the run ends with its pool paused.
    let env = waits_env(Some("claude-sonnet-4-6"), "[agent]\nmax_unavailable = 1\n");
    let ok = env.root().join("ok");
    let agent = env.agent(&format!(
        "if [ -f '{}' ]; then echo a > a.txt; exit 0; fi\n\
         echo 'quota exceeded, try again in 900000 hours' >&2\nexit 1\n",
        ok.display()
    ));
    let before = planwright_engine::clock::unix_now();
    let out = finish(env.run(&agent));
    let after = planwright_engine::clock::unix_now();
    assert_eq!(summary(&out)["failed"]["A"]["kind"], "unavailable");
    let six_hours = 6 * 3600;
    let paused = env.named("pool_paused");
    assert_eq!(paused.len(), 1, "{paused:?}");
    assert_eq!(paused[0]["pool"], "claude");
    assert_eq!(paused[0]["wait_ms"], six_hours * 1000);
    let stamp = paused[0]["until"].as_str().unwrap();
    let until = (before + six_hours..=after + six_hours)
        .find(|t| planwright_engine::clock::format_unix(*t) == stamp)
        .unwrap_or_else(|| panic!("{stamp} is not six hours after the refusal"));
    let store = planwright_engine::Store::open(&env.state_db()).unwrap();
    let stored = store.pauses().unwrap();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!((stored[0].0.as_str(), stored[0].1), ("claude", until));
    drop(store);

    // The next invocation, with a shorter bound, cuts the saved pause too.
    env.config("[agent]\nmax_pause = 1\n");
    std::fs::write(&ok, "").unwrap();
    let out = finish(env.run(&agent));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(summary(&out)["merged"], serde_json::json!(["A"]));
}

/// Starts a run whose agent's provider asks for two hours, waits until
/// the pause began, sends `signal`, and returns the run's output.
fn cancel_during_a_two_hour_pause(model: Option<&str>, signal: &str) -> (Env, Output) {
    let env = waits_env(model, "");
    let agent = env.agent("echo 'Error: 429 Too Many Requests, retry in 2h' >&2\nexit 75\n");
    let child = env.run(&agent);
    let start = Instant::now();
    while env.named("pool_paused").is_empty() {
        if start.elapsed() > HUNG {
            let out = finish_now(child);
            panic!("the pause never began: {}", text(&out.stdout));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let wait = env.named("pool_paused")[0]["wait_ms"].as_u64().unwrap();
    assert!(wait > 3_600_000, "a pause of hours: {wait} ms");
    let pid = child.id().to_string();
    let killed = Command::new("kill").args([signal, &pid]).status().unwrap();
    assert!(killed.success());
    (env, finish(child))
}

#[test]
fn sigterm_during_a_tickets_two_hour_pause_ends_the_run() {
    let (env, out) = cancel_during_a_two_hour_pause(None, "-TERM");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(env.report()["run"]["status"], "interrupted");
}

#[test]
fn ctrl_c_during_a_pools_two_hour_pause_ends_the_run() {
    let (env, out) = cancel_during_a_two_hour_pause(Some("claude-sonnet-4-6"), "-INT");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(env.report()["run"]["status"], "interrupted");
    assert_eq!(env.named("pool_paused")[0]["pool"], "claude");
}

#[test]
fn bounds_that_would_not_bound_are_refused() {
    for (config, says) in [
        ("[agent]\nmax_unavailable = 0\n", "max_unavailable = 0"),
        ("[agent]\nmax_pause = 0\n", "max_pause = 0s"),
        ("[agent]\nmax_pause = \"169h\"\n", "at most 168h"),
        ("[agent]\nmax_pause = \"6x\"\n", "unknown unit"),
    ] {
        let env = waits_env(None, config);
        let out = finish(env.run(&env.agent("exit 0\n")));
        assert_eq!(out.status.code(), Some(2), "{config}");
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(all.contains(says), "{config}: {all}");
    }
}
