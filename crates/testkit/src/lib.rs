//! planwright's test environment, shared by every test crate: hermetic
//! temporary repositories ([`Env`], [`git`]), plans ([`plan`], [`ticket`]),
//! scripted-agent fixtures, runs through the engine ([`run_with`]) and of
//! the `planwright` binary in a hermetic environment ([`Cli`]), a
//! [`FakeExecutor`] that builds candidates in a clone of its own, and the
//! [`contract`] every executor must pass.

mod cli;
pub mod contract;
mod fake_executor;
pub mod forge;
pub mod git_http;
mod http;
pub mod mock_model;

pub use cli::{assert_exit, assert_says, build_of, have, plan_args, text, Cli};
pub use fake_executor::FakeExecutor;

use planwright_engine::agent::{self, Agent};
use planwright_engine::process::Cancel;
use planwright_engine::{prepare, run, Resume, RunSettings, RunSummary};
use planwright_engine::{Event, Recorder};
use planwright_plan::Plan;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The folder of the run in `repo`'s `.planwright/runs/` (the first the
/// system lists, for a test that made one run).
pub fn run_dir(repo: &Path) -> PathBuf {
    let runs = repo.join(".planwright/runs");
    let mut dirs = std::fs::read_dir(&runs)
        .unwrap_or_else(|e| panic!("{}: {e}", runs.display()))
        .map(|d| d.unwrap().path());
    dirs.next().expect("a run's folder")
}

/// The files below `dir` whose bytes hold `needle`, as `grep -rlF` finds
/// them (links not followed): where a token must never be.
pub fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            let (path, kind) = (entry.path(), entry.file_type().unwrap());
            if kind.is_dir() {
                folders.push(path);
            } else if kind.is_file() {
                let bytes = std::fs::read(&path).unwrap_or_default();
                if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                    found.push(path);
                }
            }
        }
    }
    found
}

pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A temporary folder (the root) holding a repository, `repo/`, with
/// `files` committed on `main`, and a fixture folder; for the CLI's tests
/// ([`Env::with_cli`]) also the binary's home.
pub struct Env {
    pub tmp: tempfile::TempDir,
    // The binary the CLI's tests run here.
    cli: Option<Cli>,
}

impl Env {
    pub fn new(files: &[(&str, &str)]) -> Env {
        Env::new_in(&std::env::temp_dir(), files)
    }

    /// [`Env::new`] with its root in `dir`: `/var/tmp` puts the CLI's
    /// home outside `/tmp`, as a user's usually is, where what a confined
    /// child's view does to the home shows.
    pub fn new_in(dir: &Path, files: &[(&str, &str)]) -> Env {
        let tmp = tempfile::tempdir_in(dir).unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        for (rel, text) in files {
            write(&repo, rel, text);
        }
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "base"]);
        Env { tmp, cli: None }
    }

    /// This environment with its repository's branch `main` renamed
    /// `master`, as many projects' is.
    pub fn on_master(self) -> Env {
        git(&self.repo(), &["branch", "-m", "main", "master"]);
        self
    }

    pub fn root(&self) -> &Path {
        self.tmp.path()
    }

    pub fn repo(&self) -> PathBuf {
        self.tmp.path().join("repo")
    }

    pub fn fixtures(&self) -> PathBuf {
        self.tmp.path().join("fixtures")
    }

    /// Adds a scripted fixture file for `ticket` (`attempt` 0 = every attempt).
    pub fn fixture(&self, ticket: &str, attempt: u32, rel: &str, text: &str) {
        let dir = self.fixture_dir(ticket, attempt);
        write(&dir.join("files"), rel, text);
    }

    /// Makes the scripted agent report that `ticket`'s `attempt` (0 =
    /// every attempt) cost `usd` dollars (its fixture's `cost` file).
    pub fn fixture_cost(&self, ticket: &str, attempt: u32, usd: f64) {
        let dir = self.fixture_dir(ticket, attempt);
        std::fs::write(dir.join("cost"), format!("{usd}\n")).unwrap();
    }

    pub fn fixture_dir(&self, ticket: &str, attempt: u32) -> PathBuf {
        let mut dir = self.fixtures().join(ticket);
        if attempt > 0 {
            dir = dir.join(format!("attempt-{attempt}"));
        }
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    pub fn tip(&self) -> String {
        git(&self.repo(), &["rev-parse", "main"])
    }

    /// The folder of the run in `repo/.planwright/runs/` (see [`run_dir`]).
    pub fn run_dir(&self) -> PathBuf {
        run_dir(&self.repo())
    }

    /// The text of `rel` in [`Env::run_dir`] (`events.jsonl`,
    /// `A/ticket.log`).
    pub fn run_file(&self, rel: &str) -> String {
        let path = self.run_dir().join(rel);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Subjects of the commits on main, newest first.
    pub fn log(&self) -> Vec<String> {
        git(&self.repo(), &["log", "--format=%s", "main"])
            .lines()
            .map(String::from)
            .collect()
    }
}

/// A standard_v1 plan of one ticket, `W-1`, that changes `README.md` (to
/// "hello", as its fixture writes).
pub const STANDARD_V1_README: &str = r#"{
  "plan_version": "standard_v1",
  "ticket_reference": {"type": "github_issue", "url": "https://example.invalid/issues/1", "id": "W-1"},
  "generated_by": {"agent": "a", "model": "m", "timestamp": "2026-03-01T12:00:00Z"},
  "summary": "Say hello in the README.",
  "scope": {"files": [{"path": "README.md", "operation": "modify"}]},
  "approach": [{"step": 1, "description": "Edit the README."}],
  "verification": {"test_strategy": "grep", "rollback_plan": "revert"},
  "predicted_runtime_minutes": 1, "predicted_runtime_confidence": "high"
}"#;

pub fn plan(json: serde_json::Value) -> Plan {
    let mut json = json;
    json["planwright"] = 1.into();
    json["source_format"] = "native".into();
    json.as_object_mut()
        .unwrap()
        .entry("base")
        .or_insert("main".into());
    let text = serde_json::to_string(&json).unwrap();
    let report =
        planwright_plan::validate_text("plan.json", text, &planwright_plan::Options::default());
    report
        .plan
        .unwrap_or_else(|| panic!("invalid test plan: {:?}", report.diagnostics))
}

/// The agents' and gates' time limit of tests that do not test it: far
/// beyond what a step takes however loaded the machine (a Go module built
/// in a sandbox took over a minute at load 40), so only a hang meets it. A
/// test of a time limit sets its own.
pub const UNTESTED_LIMIT: Duration = Duration::from_secs(900);

/// Waits until `done` holds, looking again every 20 ms: a test waits for
/// the event it needs, however loaded the machine, and fails naming
/// `what` only when it has not come in [`UNTESTED_LIMIT`] (a hang).
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + UNTESTED_LIMIT;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "never happened in {UNTESTED_LIMIT:?}: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn settings() -> RunSettings {
    let mut s = RunSettings::new("plan.json");
    s.jobs = 2;
    s.strikes = 2;
    s.agent_timeout = Some(UNTESTED_LIMIT);
    s.gates.timeout = Some(UNTESTED_LIMIT);
    s
}

pub struct Outcome {
    pub summary: RunSummary,
    pub events: Vec<Event>,
}

pub fn run_with(env: &Env, plan: &Plan, settings: &RunSettings, agent: Box<dyn Agent>) -> Outcome {
    run_resume(env, plan, settings, Arc::from(agent), Resume::default())
}

/// A run through `prepare` (which must pass) and the local executor.
pub fn run_resume(
    env: &Env,
    plan: &Plan,
    settings: &RunSettings,
    agent: Arc<dyn Agent>,
    resume: Resume,
) -> Outcome {
    let events = Arc::new(Mutex::new(Vec::new()));
    let session = prepare(
        &env.repo(),
        plan.clone(),
        settings.clone(),
        resume,
        &[],
        &agent::Agents::from(agent),
    )
    .unwrap_or_else(|f| panic!("preflight failed: {:?}", f.checks));
    let executor = session.local_executor();
    let summary = run(
        session,
        executor,
        vec![Box::new(Recorder(events.clone()))],
        &Cancel::default(),
    )
    .expect("the run completes");
    let events = events.lock().unwrap().clone();
    Outcome { summary, events }
}

pub fn run_scripted(env: &Env, plan: &Plan) -> Outcome {
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    run_with(env, plan, &settings(), agent)
}

pub fn ticket(id: &str, scope: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"id": id, "title": format!("ticket {id}"), "body": "do it", "scope": scope})
}

/// Tickets with nothing between them, each creating `<id>.txt`.
pub fn creating_tickets(ids: &[&str]) -> Vec<serde_json::Value> {
    let creates = |id: &str| serde_json::json!([{"pattern": format!("{id}.txt"), "op": "create"}]);
    ids.iter().map(|id| ticket(id, creates(id))).collect()
}

/// A plan's `gates`: one gate running `argv`.
pub fn gate(argv: &[&str]) -> serde_json::Value {
    serde_json::json!([{"name": argv.join(" "), "argv": argv}])
}

pub fn any(pattern: &str) -> serde_json::Value {
    serde_json::json!({"pattern": pattern, "op": "any"})
}

/// The kind of failure ticket `id` ended with (it must have failed).
pub fn failing_kind(outcome: &Outcome, id: &str) -> planwright_engine::FailureKind {
    outcome
        .summary
        .failed
        .get(id)
        .unwrap_or_else(|| panic!("{id} did not fail: {:?}", outcome.summary))
        .kind
}

/// The `cmd` agent running the shell script `body` with `args`.
pub fn sh_agent(env: &Env, body: &str, args: &str) -> Box<dyn Agent> {
    let script = env.tmp.path().join("agent.sh");
    std::fs::write(&script, body).unwrap();
    agent::from_name("cmd", Some(&format!("sh {} {args}", script.display()))).unwrap()
}
