//! Hostile agents: every attack of issue 9, each as a run with an agent
//! script, asserting how it ends, that the base branch and every other ref,
//! the user's checkout and config are unchanged, and that no process it
//! started is left. These tests need Landlock and unprivileged user
//! namespaces, and fail (not skip) without them.

use planwright_config::{ConfigSource, SandboxMode};
use planwright_engine::agent::{self, Agent};
use planwright_engine::process::Cancel;
use planwright_engine::sandbox::{Containment, Mode};
use planwright_engine::{prepare, run, RunSettings};
use planwright_engine::{EngineError, FailureKind};
use planwright_engine::{Event, Recorder};
use planwright_testkit::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Settings of a confined run; fails when the kernel cannot confine.
fn enforced() -> RunSettings {
    if let Err(e) = Containment::new(Mode::Enforce) {
        panic!("the containment tests need Landlock and user namespaces: {e}");
    }
    let mut s = settings();
    s.strikes = 1;
    assert_eq!(s.contain.mode, SandboxMode::Enforce);
    s
}

fn unconfined() -> RunSettings {
    let mut s = enforced();
    s.contain.mode = SandboxMode::Off;
    s
}

/// The `cmd` agent running the shell script `body` with the workspace as `$1`.
fn sh_agent(env: &Env, body: &str) -> Box<dyn Agent> {
    let script = env.tmp.path().join("agent.sh");
    std::fs::write(&script, body).unwrap();
    agent::from_name(
        "cmd",
        Some(&format!("sh {} {{worktree}}", script.display())),
    )
    .unwrap()
}

fn try_run(
    env: &Env,
    plan: &planwright_plan::Plan,
    s: &RunSettings,
    agent: Box<dyn Agent>,
) -> Result<Outcome, EngineError> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let agent: Arc<dyn Agent> = Arc::from(agent);
    let session = prepare(
        &env.repo(),
        plan.clone(),
        s.clone(),
        Default::default(),
        &[],
        &agent::Agents::from(agent),
    )
    .map_err(|f| {
        // What `run` refuses with exit 3 (preflight's git-config check), as
        // the CLI maps it; anything else is a broken test.
        match f.checks.iter().find(|c| {
            c.check == planwright_engine::CheckName::GitConfig
                && c.status == planwright_engine::CheckStatus::Error
        }) {
            Some(c) => EngineError::Integrity(c.message.clone()),
            None => panic!("preflight failed: {:?}", f.checks),
        }
    })?;
    let executor = session.local_executor();
    let summary = run(
        session,
        executor,
        vec![Box::new(Recorder(events.clone()))],
        &Cancel::default(),
    )?;
    let events = events.lock().unwrap().clone();
    Ok(Outcome { summary, events })
}

fn one(id: &str, scope: serde_json::Value, gates: serde_json::Value) -> planwright_plan::Plan {
    plan(json!({"gates": gates, "tickets": [ticket(id, scope)]}))
}

fn kind(out: &Outcome, id: &str) -> FailureKind {
    out.summary
        .failed
        .get(id)
        .unwrap_or_else(|| panic!("{id} did not fail: {:?}", out.summary))
        .kind
}

/// What no agent may change in the user's repository.
#[derive(Debug, PartialEq)]
struct Guarded {
    refs: String,
    config: String,
    hooks: Vec<String>,
    status: String,
    files: Vec<(String, String)>,
}

fn guarded(env: &Env) -> Guarded {
    let repo = env.repo();
    let refs = git(
        &repo,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    )
    .lines()
    // planwright's own refs: the run's branch, candidates, quarantine.
    .filter(|l| !l.starts_with("refs/heads/planwright/") && !l.starts_with("refs/planwright/"))
    .collect::<Vec<_>>()
    .join("\n");
    let mut hooks: Vec<String> = std::fs::read_dir(repo.join(".git/hooks"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    hooks.sort();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&repo).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            files.push((name, std::fs::read_to_string(&path).unwrap_or_default()));
        }
    }
    files.sort();
    Guarded {
        refs,
        config: std::fs::read_to_string(repo.join(".git/config")).unwrap(),
        hooks,
        status: git(&repo, &["status", "--porcelain", "--untracked-files=all"]),
        files,
    }
}

/// A name for the processes of one test: its scripts export it as
/// `PLANWRIGHT_MARK`, so everything they start carries it in its
/// environment, whatever its pid (a confined child sees only the pids of
/// its own namespace, and its procfs shows no others).
fn mark(env: &Env) -> String {
    let root = env.root().file_name().unwrap().to_string_lossy();
    format!("contain-{root}")
}

/// The host's live processes whose environment holds `mark` (a zombie's
/// environment is gone with its memory).
fn marked(mark: &str) -> Vec<String> {
    let needle = format!("PLANWRIGHT_MARK={mark}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .collect()
}

fn assert_none_left(mark: &str) {
    let left = marked(mark);
    assert!(left.is_empty(), "processes {left:?} outlived their attempt");
}

/// How many lines `file` has (each a process of the script that started).
fn started(file: &Path) -> usize {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("the script wrote nothing to {}: {e}", file.display()));
    text.lines().count()
}

fn agent_tmp(env: &Env) -> PathBuf {
    env.repo().join(".planwright/tmp/agent-slot-1")
}

/// A shell line that says, in `$TMPDIR/pids`, that the shell running it
/// has started.
const RECORD_PID: &str = "echo started >> \"$TMPDIR/pids\"";

fn npm_project() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "package.json",
            "{\"name\": \"t\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"node test.js\"}}\n",
        ),
        (
            "test.js",
            "const v = require('fs').readFileSync('answer.txt', 'utf8').trim();\nif (v !== '42') { console.error('wrong answer: ' + v); process.exit(1); }\n",
        ),
        ("answer.txt", "0\n"),
        (".gitignore", "node_modules/\n.npmrc\n"),
    ]
}

#[test]
fn planted_node_binaries_and_an_npmrc_do_not_make_npm_test_pass() {
    let env = Env::new(&npm_project());
    let before = guarded(&env);
    let agent = sh_agent(
        &env,
        r#"cd "$1"
echo 41 > answer.txt
mkdir -p node_modules/.bin ../node_modules/.bin
printf '#!/bin/sh\nexit 0\n' > node_modules/.bin/node
chmod +x node_modules/.bin/node
printf '#!/bin/sh\nexit 0\n' > ../node_modules/.bin/node 2>/dev/null
echo 'script-shell=/bin/true' > .npmrc
exit 0
"#,
    );
    let plan = one("A", json!([any("answer.txt")]), gate(&["npm", "test"]));
    let out = try_run(&env, &plan, &enforced(), agent).unwrap();
    assert_eq!(kind(&out, "A"), FailureKind::GateFailure);
    let f = &out.summary.failed["A"];
    let log = std::fs::read_to_string(
        env.repo()
            .join(".planwright/runs")
            .join(&out.summary.run)
            .join("A/ticket.log"),
    )
    .unwrap();
    assert!(
        log.contains("wrong answer: 41"),
        "the real test ran: {f:?}\n{log}"
    );
    assert!(
        !env.repo()
            .join(".planwright/workspaces/node_modules")
            .exists(),
        "the agent wrote above its workspace"
    );
    assert_eq!(guarded(&env), before);
}

#[test]
fn a_committed_npmrc_is_gate_script_tampering() {
    let mut files = npm_project();
    files.retain(|(p, _)| *p != ".gitignore");
    let env = Env::new(&files);
    let agent = sh_agent(
        &env,
        "cd \"$1\"\necho 'script-shell=/bin/true' > .npmrc\necho 41 > answer.txt\n",
    );
    let plan = one(
        "A",
        json!([any("answer.txt"), any(".npmrc")]),
        gate(&["npm", "test"]),
    );
    let out = try_run(&env, &plan, &enforced(), agent).unwrap();
    assert_eq!(kind(&out, "A"), FailureKind::GateScriptTampering);
}

#[test]
fn a_setsid_process_that_swaps_content_dies_with_the_agent() {
    let env = Env::new(&npm_project());
    let before = guarded(&env);
    let mark = mark(&env);
    let agent = sh_agent(
        &env,
        &format!(
            r#"export PLANWRIGHT_MARK={mark}
cd "$1"
echo 41 > answer.txt
setsid sh -c '{RECORD_PID}; sleep 1; while :; do echo 42 > answer.txt; sleep 0.05; done' </dev/null >/dev/null 2>&1 &
sh -c '{RECORD_PID}; (setsid sleep 1000 </dev/null >/dev/null 2>&1 &); exec sleep 1000' </dev/null >/dev/null 2>&1 &
while [ "$(wc -l < "$TMPDIR/pids" 2>/dev/null)" != 2 ]; do sleep 0.01; done
"#
        ),
    );
    let plan = one("A", json!([any("answer.txt")]), gate(&["npm", "test"]));
    let out = try_run(&env, &plan, &enforced(), agent).unwrap();
    assert_eq!(kind(&out, "A"), FailureKind::GateFailure);
    assert_eq!(started(&agent_tmp(&env).join("pids")), 2);
    assert_none_left(&mark);
    assert_eq!(guarded(&env), before);
}

/// The limit is what this test tests, and the agent must have started its
/// daemon before the limit ends it: where a loaded machine had not got
/// that far, the test tries again with a limit four times as long.
#[test]
fn an_agent_past_its_time_limit_leaves_nothing_running() {
    for secs in [2, 8, 32, 128, 512] {
        let env = Env::new(&[("README.md", "hi\n")]);
        let mark = mark(&env);
        let agent = sh_agent(
            &env,
            &format!(
                "export PLANWRIGHT_MARK={mark}\n\
                 setsid sh -c '{RECORD_PID}; exec sleep 1000' </dev/null >/dev/null 2>&1 &\n{RECORD_PID}\n\
                 while [ \"$(wc -l < \"$TMPDIR/pids\")\" != 2 ]; do sleep 0.01; done\nexec sleep 1000\n"
            ),
        );
        let mut s = enforced();
        s.agent_timeout = Some(std::time::Duration::from_secs(secs));
        let plan = one("A", json!([any("a.txt")]), gate(&["true"]));
        let out = try_run(&env, &plan, &s, agent).unwrap();
        assert_eq!(kind(&out, "A"), FailureKind::Timeout);
        assert_none_left(&mark);
        let pids = std::fs::read_to_string(agent_tmp(&env).join("pids")).unwrap_or_default();
        if pids.lines().count() == 2 {
            return;
        }
    }
    panic!("the agent never started its daemon within its time limit");
}

#[test]
fn a_gate_that_leaves_a_daemon_leaves_nothing_running() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "a.txt", "a\n");
    let mark = mark(&env);
    let script = format!(
        "export PLANWRIGHT_MARK={mark}\n\
         setsid sh -c '{RECORD_PID}; exec sleep 1000' </dev/null >/dev/null 2>&1 &\n\
         while [ ! -s \"$TMPDIR/pids\" ]; do sleep 0.01; done"
    );
    let plan = one("A", json!([any("a.txt")]), gate(&["sh", "-c", &script]));
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    let out = try_run(&env, &plan, &enforced(), agent).unwrap();
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    assert_eq!(
        started(&env.repo().join(".planwright/tmp/gate-slot-1/pids")),
        1
    );
    assert_none_left(&mark);
}

/// A gate that makes a tracked test file and its folder unreadable
/// (`chmod 000`) fails no later gate of its slot: the next candidate's gate
/// there finds the modes git writes, with the overlay (the change lands in
/// its layer) and without (the reset writes the file anew and sets the
/// folder's mode). Root reads a file of mode `0000`, so the gate checks the
/// modes itself, and after the run an ordinary user (`nobody`, through
/// `setpriv`) runs the test file where the gates ran.
#[test]
fn a_test_file_and_folder_a_gate_made_unreadable_are_restored_for_the_next_candidate() {
    let umask = planwright_engine::process::umask();
    let want = format!("{:o} {:o}", 0o777 & !umask, 0o666 & !umask);
    for overlay in [true, false] {
        let env = Env::new(&[("t/t.sh", "echo ran\n")]);
        std::fs::set_permissions(
            env.tmp.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        for dir in env.tmp.path().ancestors() {
            let mode =
                std::os::unix::fs::PermissionsExt::mode(&dir.metadata().unwrap().permissions());
            assert!(
                mode & 0o001 != 0,
                "{} (mode {:o}) is closed to other users, so `nobody` cannot reach the test file: run the tests with a TMPDIR others can enter",
                dir.display(),
                mode & 0o7777
            );
        }
        env.fixture("A", 0, "a.txt", "a\n");
        env.fixture("B", 0, "b.txt", "b\n");
        let mut a = ticket("A", json!([any("a.txt")]));
        a["gates"] = gate(&["sh", "-c", "chmod 000 t/t.sh t"]);
        let mut b = ticket("B", json!([any("b.txt")]));
        b["depends_on"] = json!(["A"]);
        let check = format!("test \"$(stat -c %a t) $(stat -c %a t/t.sh)\" = '{want}'");
        b["gates"] = gate(&["sh", "-c", &check]);
        let plan = plan(json!({"gates": gate(&["true"]), "tickets": [a, b]}));
        let mut s = enforced();
        s.jobs = 1;
        s.contain.gate_overlay = overlay;
        let agent =
            agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
        let out = try_run(&env, &plan, &s, agent).unwrap();
        assert_eq!(
            out.summary.merged,
            ["A", "B"],
            "overlay {overlay}: {:?}",
            out.summary
        );
        let test_file = env.repo().join(".planwright/checkouts/slot-1/t/t.sh");
        let nobody = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh"])
            .arg(&test_file)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&nobody.stdout),
            "ran\n",
            "overlay {overlay}: {}",
            String::from_utf8_lossy(&nobody.stderr)
        );
    }
}

/// A pathname socket (in a directory below `/tmp` that is neither's), an
/// abstract socket and a TCP listener on the host's loopback, all
/// listened on outside: neither the agent nor a gate reaches them. The
/// agent (whose network is the proxy's) fails and the gate fails when a
/// connect succeeds.
#[test]
fn neither_agent_nor_gate_reaches_a_socket_outside() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let env = Env::new(&[("README.md", "hi\n")]);
    let outside = tempfile::tempdir().unwrap();
    let path = outside.path().join("service.sock");
    let _pathname = UnixListener::bind(&path).unwrap();
    let name = format!("planwright-contain-{}", std::process::id());
    let _abstract =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(&name).unwrap()).unwrap();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    std::net::TcpStream::connect(("127.0.0.1", port)).expect("the test reaches its listener");
    let connect = env.tmp.path().join("connect.py");
    std::fs::write(
        &connect,
        format!(
            "import socket, sys\n\
             for a in [{path:?}, '\\0{name}']:\n\
             \x20   try:\n\
             \x20       socket.socket(socket.AF_UNIX).connect(a); sys.exit('reached ' + a)\n\
             \x20   except OSError:\n\
             \x20       pass\n\
             try:\n\
             \x20   socket.create_connection(('127.0.0.1', {port}), 5); sys.exit('reached port {port}')\n\
             except OSError:\n\
             \x20   pass\n"
        ),
    )
    .unwrap();
    let c = connect.display();
    let agent = sh_agent(
        &env,
        &format!("python3 {c} && cd \"$1\" && echo a > a.txt\n"),
    );
    let connect = connect.to_str().unwrap();
    let plan = one("A", json!([any("a.txt")]), gate(&["python3", connect]));
    let out = try_run(&env, &plan, &enforced(), agent).unwrap();
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
}

/// A script that attacks the user's repository by absolute path: moves the
/// base, tags, deletes a branch, adds a merge driver and a filter, an
/// include and `core.worktree`, a hook, edits the user's checkout, a file
/// outside the repository, another slot and the state store; then does its
/// ticket properly.
fn absolute_path_attack(env: &Env, outside: &Path) -> String {
    let repo = env.repo();
    let r = repo.display();
    format!(
        r#"cd "$1"
g() {{ git -c user.name=x -c user.email=x@x --git-dir={r}/.git "$@" 2>/dev/null; }}
c=$(g commit-tree -p main -m evil 'main^{{tree}}')
[ -n "$c" ] && g update-ref refs/heads/main "$c"
g tag evil main
g branch -D keep
g config merge.evil.driver 'touch {o}/driver-ran'
g config filter.evil.clean 'touch {o}/filter-ran'
g config includeIf.gitdir:/.path /tmp/x
g config core.worktree /tmp
printf '#!/bin/sh\ntouch {o}/hook-ran\n' > {r}/.git/hooks/pre-commit 2>/dev/null
chmod +x {r}/.git/hooks/pre-commit 2>/dev/null
echo changed >> {r}/README.md 2>/dev/null
echo 'rm -rf ~' >> {o}/.bashrc 2>/dev/null
mkdir -p ../slot-2 2>/dev/null && echo stolen > ../slot-2/a.txt 2>/dev/null
echo garbage >> {r}/.planwright/state.db 2>/dev/null
echo a > a.txt
exit 0
"#,
        o = outside.display()
    )
}

#[test]
fn writes_outside_the_workspace_are_denied() {
    let env = Env::new(&[("README.md", "hi\n")]);
    git(&env.repo(), &["branch", "keep"]);
    let outside = env.tmp.path().join("home");
    std::fs::create_dir_all(&outside).unwrap();
    let before = guarded(&env);
    let agent = sh_agent(&env, &absolute_path_attack(&env, &outside));
    let plan = one("A", json!([any("a.txt")]), gate(&["test", "-f", "a.txt"]));
    let out = try_run(&env, &plan, &enforced(), agent).unwrap();
    // Every write outside failed; the ticket's own work merged.
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    let after = guarded(&env);
    assert_eq!(after.config, before.config);
    assert_eq!(after.hooks, before.hooks);
    let other_refs = |g: &Guarded| {
        g.refs
            .lines()
            .filter(|l| !l.starts_with("refs/heads/main "))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(other_refs(&after), other_refs(&before));
    assert_eq!(env.log(), ["A: ticket A", "base"]);
    assert_eq!(git(&env.repo(), &["show", "main:README.md"]), "hi");
    assert_eq!(
        std::fs::read_to_string(env.repo().join("README.md")).unwrap(),
        "hi\n"
    );
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert!(!env.repo().join(".planwright/workspaces/slot-2").exists());
    // The state store still reads, and says what is true.
    let again = try_run(&env, &plan, &enforced(), sh_agent(&env, "exit 1\n")).unwrap();
    assert_eq!(again.summary.merged, ["A"]);
}

#[test]
fn unconfined_changes_to_the_repository_stop_the_run_and_are_restored() {
    let env = Env::new(&[("README.md", "hi\n")]);
    git(&env.repo(), &["branch", "keep"]);
    let outside = env.tmp.path().join("home");
    std::fs::create_dir_all(&outside).unwrap();
    let before = guarded(&env);
    let mut script = absolute_path_attack(&env, &outside);
    // Unconfined, these would succeed and are not what is tested here.
    script = script
        .lines()
        .filter(|l| !l.contains("README.md") && !l.contains("state.db") && !l.contains(".bashrc"))
        .collect::<Vec<_>>()
        .join("\n");
    let agent = sh_agent(&env, &script);
    let plan = one("A", json!([any("a.txt")]), gate(&["test", "-f", "a.txt"]));
    let err = try_run(&env, &plan, &unconfined(), agent)
        .err()
        .expect("the run stops");
    let EngineError::Integrity(message) = &err else {
        panic!("not an integrity error: {err}");
    };
    for name in [
        "refs/heads/main",
        "refs/tags/evil",
        "refs/heads/keep",
        "config",
        "hooks/pre-commit",
    ] {
        assert!(message.contains(name), "{name} not named: {message}");
    }
    assert_eq!(guarded(&env), before, "refs, config and hooks are restored");
    assert_eq!(env.log(), ["base"]);
    for ran in ["driver-ran", "filter-ran", "hook-ran"] {
        assert!(!outside.join(ran).exists(), "{ran}");
    }
}

#[test]
fn an_edit_of_the_users_checkout_stops_the_run() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let r = env.repo();
    let agent = sh_agent(
        &env,
        &format!(
            "cd \"$1\"\necho a > a.txt\necho changed >> {}/README.md\n",
            r.display()
        ),
    );
    let plan = one("A", json!([any("a.txt")]), gate(&["true"]));
    let err = try_run(&env, &plan, &unconfined(), agent)
        .err()
        .expect("the run stops");
    assert!(
        matches!(&err, EngineError::Integrity(m) if m.contains("git status")),
        "{err}"
    );
    assert_eq!(env.log(), ["base"]);
}

#[test]
fn risky_repository_config_is_refused_unless_accepted_by_name() {
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "a.txt", "a\n");
    git(&env.repo(), &["config", "filter.x.clean", "cat"]);
    git(&env.repo(), &["config", "merge.x.driver", "true"]);
    let plan = one("A", json!([any("a.txt")]), gate(&["true"]));
    let scripted =
        || agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    let err = try_run(&env, &plan, &enforced(), scripted())
        .err()
        .expect("refused");
    assert!(
        matches!(&err, EngineError::Integrity(m) if m.contains("filter.x.clean") && m.contains("merge.x.driver")),
        "{err}"
    );
    assert_eq!(env.log(), ["base"]);
    let mut s = enforced();
    s.contain.allow_config = vec!["filter.x.clean".into(), "merge.x.driver".into()];
    let out = try_run(&env, &plan, &s, scripted()).unwrap();
    assert_eq!(out.summary.merged, ["A"]);
}

#[test]
fn a_rewritten_git_file_does_not_survive_into_the_next_ticket() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let r = env.repo();
    let agent = sh_agent(
        &env,
        &format!(
            r#"cd "$1"
case "$PLANWRIGHT_TICKET" in
A) rm -rf .git; printf 'gitdir: {r}/.git\n' > .git; echo a > a.txt ;;
B) test -d .git || exit 9
   test "$(git rev-parse --git-dir)" = .git || exit 8
   echo b > b.txt; git add b.txt; git -c user.name=x -c user.email=x@x commit -qm 'agent commit'
   echo stray > stray.txt ;;
esac
"#,
            r = r.display()
        ),
    );
    let plan = plan(json!({
        "gates": gate(&["true"]),
        "tickets": [ticket("A", json!([any("a.txt")])), {
            "id": "B", "title": "ticket B", "body": "b", "scope": [any("b.txt")], "depends_on": ["A"]
        }]
    }));
    let mut s = enforced();
    s.jobs = 1;
    let out = try_run(&env, &plan, &s, agent).unwrap();
    assert_eq!(out.summary.merged, ["A"]);
    assert_eq!(
        kind(&out, "B"),
        FailureKind::ScopeViolation,
        "stray.txt is B's own"
    );
    assert_eq!(env.log(), ["A: ticket A", "base"]);
    assert_eq!(git(&r, &["status", "--porcelain"]), "");
}

#[test]
fn a_chain_of_symlinks_out_of_the_repository_is_a_scope_violation() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let before = guarded(&env);
    let mut script = String::from("cd \"$1\"\nln -s .. u0\n");
    for i in 1..15 {
        script.push_str(&format!("ln -s u{}/.. u{i}\n", i - 1));
    }
    script.push_str("ln -s u14/etc/passwd pw\n");
    let agent = sh_agent(&env, &script);
    let plan = one("A", json!([any("u*"), any("pw")]), gate(&["true"]));
    let out = try_run(&env, &plan, &enforced(), agent).unwrap();
    assert_eq!(kind(&out, "A"), FailureKind::ScopeViolation);
    assert!(out.summary.failed["A"].message.contains("symlink"));
    assert_eq!(guarded(&env), before);
}

#[test]
fn a_symlink_into_git_is_a_scope_violation() {
    let env = Env::new(&[("lib/x.txt", "x\n")]);
    let agent = sh_agent(&env, "cd \"$1\"\nln -s ../.git lib/g\n");
    let plan = one("A", json!([any("lib/**")]), gate(&["true"]));
    let out = try_run(&env, &plan, &enforced(), agent).unwrap();
    assert_eq!(kind(&out, "A"), FailureKind::ScopeViolation);
    assert!(
        out.summary.failed["A"].message.contains(".git"),
        "{:?}",
        out.summary
    );
}

#[test]
fn an_agent_running_npm_install_and_a_gate_needing_node_modules_pass() {
    let mut files = npm_project();
    files.retain(|(p, _)| *p != "package.json" && *p != "test.js");
    files.push((
        "package.json",
        "{\"name\": \"t\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"node test.js\"}, \"dependencies\": {\"answer\": \"file:vendor/answer\"}}\n",
    ));
    files.push((
        "vendor/answer/package.json",
        "{\"name\": \"answer\", \"version\": \"1.0.0\", \"main\": \"index.js\"}\n",
    ));
    files.push((
        "vendor/answer/index.js",
        "module.exports = (v) => v === '42';\n",
    ));
    files.push((
        "test.js",
        "const ok = require('answer');\nconst v = require('fs').readFileSync('answer.txt', 'utf8').trim();\nif (!ok(v)) { console.error('wrong answer: ' + v); process.exit(1); }\n",
    ));
    let env = Env::new(&files);
    // The lock file, as `npm install` writes it, is part of the project.
    let npm = |dir: &Path, args: &[&str]| {
        let out = std::process::Command::new("npm")
            .args(args)
            .args(["--offline", "--no-audit", "--no-fund", "--cache"])
            .arg(env.tmp.path().join("npm-cache"))
            .current_dir(dir)
            .output()
            .expect("npm runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    npm(&env.repo(), &["install"]);
    std::fs::remove_dir_all(env.repo().join("node_modules")).unwrap();
    git(&env.repo(), &["add", "-A"]);
    git(&env.repo(), &["commit", "-qm", "lock"]);
    let before = guarded(&env);
    let agent = sh_agent(
        &env,
        r#"set -e
cd "$1"
npm install --offline --no-audit --no-fund --logs-max=0 --update-notifier=false --cache "$TMPDIR/npm-cache" >/dev/null 2>&1
node -e "process.exit(require('answer')('42') ? 0 : 1)"
echo 42 > answer.txt
"#,
    );
    let plan = one("A", json!([any("answer.txt")]), gate(&["npm", "test"]));
    let mut s = enforced();
    s.workspace.setup = vec![vec![
        "sh".into(),
        "-c".into(),
        "npm ci --offline --no-audit --no-fund --logs-max=0 --update-notifier=false --cache \"$TMPDIR/npm-cache\"".into(),
    ]];
    s.workspace.setup_inputs = vec!["package-lock.json".into()];
    let out = try_run(&env, &plan, &s, agent).unwrap();
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    let after = guarded(&env);
    assert_eq!(after.config, before.config);
    assert_eq!(after.hooks, before.hooks);
    let recorded = out
        .events
        .iter()
        .any(|e| matches!(e, Event::Contained { sandbox } if sandbox.starts_with("landlock") && sandbox.ends_with(", gate overlay")));
    assert!(
        recorded,
        "the run records which sandbox ran: {:?}",
        out.events
    );
}

/// In both ways a workspace is cleaned: keeping what the commit's ignore
/// rules ignore (after deleting the ignore files an agent left), and
/// `pristine` (where no ignore file is read).
#[test]
fn files_an_agent_hid_behind_its_own_ignore_file_do_not_ride_into_the_next_ticket() {
    for pristine in [false, true] {
        hidden_files_do_not_ride(pristine);
    }
}

fn hidden_files_do_not_ride(pristine: bool) {
    let env = Env::new(&[("README.md", "hi\n")]);
    let agent = sh_agent(
        &env,
        r#"cd "$1"
case "$PLANWRIGHT_TICKET" in
A) mkdir -p sub; printf '*\n' > sub/.gitignore; echo evil > sub/evil.txt; echo a > a.txt ;;
B) echo b > sub/b.txt 2>/dev/null || { mkdir -p sub; echo b > sub/b.txt; } ;;
esac
"#,
    );
    let plan = plan(json!({
        "gates": gate(&["true"]),
        "tickets": [ticket("A", json!([any("a.txt")])), {
            "id": "B", "title": "ticket B", "body": "b", "scope": [any("sub/**")], "depends_on": ["A"]
        }]
    }));
    let mut s = enforced();
    s.jobs = 1;
    s.workspace.pristine = pristine;
    let out = try_run(&env, &plan, &s, agent).unwrap();
    assert_eq!(
        out.summary.merged,
        ["A", "B"],
        "pristine {pristine}: {:?}",
        out.summary
    );
    let files = git(&env.repo(), &["ls-tree", "-r", "--name-only", "main"]);
    assert_eq!(
        files.lines().collect::<Vec<_>>(),
        ["README.md", "a.txt", "sub/b.txt"],
        "pristine {pristine}"
    );
}

/// A repository whose plan and configuration are committed, and the
/// settings of a confined run that reads both from there.
fn decided_by_files() -> (Env, RunSettings) {
    let env = Env::new(&[
        ("a.txt", "a\n"),
        ("plan.json", "{}\n"),
        ("planwright.toml", "[run]\njobs = 1\n"),
    ]);
    let mut s = enforced();
    s.plan_path = env.repo().join("plan.json").display().to_string();
    s.config_source = Some(ConfigSource::File(env.repo().join("planwright.toml")));
    (env, s)
}

#[test]
fn a_candidate_that_rewrites_the_runs_plan_configuration_or_state_is_rejected() {
    for (path, expected) in [
        ("planwright.toml", FailureKind::RailViolation),
        ("plan.json", FailureKind::RailViolation),
        (".planwright/state.db", FailureKind::ScopeViolation),
    ] {
        let (env, s) = decided_by_files();
        let before = env.tip();
        let guard = guarded(&env);
        let agent = sh_agent(
            &env,
            &format!(
                "cd \"$1\"\necho b > a.txt\nmkdir -p \"$(dirname {path})\"\nprintf '[sandbox]\\nmode = \"off\"\\n' > {path}\n"
            ),
        );
        // Even a scope that names the file gives no leave without the flag.
        let plan = one("A", json!([any("**"), any(path)]), gate(&["true"]));
        let out = try_run(&env, &plan, &s, agent).unwrap();
        assert_eq!(kind(&out, "A"), expected, "{path}: {:?}", out.summary);
        assert!(
            out.summary.failed["A"].message.contains(path),
            "{path}: {}",
            out.summary.failed["A"].message
        );
        assert_eq!(env.tip(), before, "{path}: nothing landed");
        assert_eq!(guarded(&env), guard, "{path}");
    }
}

#[test]
fn allowed_a_config_change_lands_and_the_next_run_says_which_merge_made_it() {
    let (env, mut s) = decided_by_files();
    s.allow_config_change = true;
    let agent = sh_agent(
        &env,
        "cd \"$1\"\nprintf '[run]\\njobs = 2\\n' > planwright.toml\n",
    );
    let plan = one("A", json!([any("planwright.toml")]), gate(&["true"]));
    let out = try_run(&env, &plan, &s, agent).unwrap();
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    let config = std::fs::read_to_string(env.repo().join("planwright.toml")).unwrap();
    assert_eq!(
        config, "[run]\njobs = 2\n",
        "the base and the checkout moved"
    );
    // The next invocation reads the changed file and says where it came from.
    let again = try_run(&env, &plan, &s, sh_agent(&env, "exit 1\n")).unwrap();
    let changed: Vec<&Event> = (again.events.iter())
        .filter(|e| matches!(e, Event::InputChanged { .. }))
        .collect();
    assert!(
        matches!(changed.as_slice(), [Event::InputChanged { role, merged_by, .. }]
            if role == "configuration" && merged_by == &["A".to_string()]),
        "{changed:?}"
    );
}

#[test]
fn a_changed_lifecycle_script_or_set_up_script_never_reaches_a_set_up() {
    // A stand-in `npm` that records each run in its working directory,
    // with the `package.json` it would have read.
    let bin = tempfile::tempdir().unwrap();
    let npm = bin.path().join("npm");
    std::fs::write(
        &npm,
        "#!/bin/sh\n{ echo \"$@\"; cat package.json; } >> ran-set-up.txt\n",
    )
    .unwrap();
    std::fs::set_permissions(&npm, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cases = [
        (
            vec![npm.display().to_string(), "ci".to_string()],
            "cd \"$1\"\necho '{\"scripts\": {\"postinstall\": \"touch poisoned\"}}' > package.json\n",
        ),
        (
            vec!["sh".to_string(), "setup.sh".to_string()],
            "cd \"$1\"\necho 'touch poisoned' > setup.sh\n",
        ),
    ];
    for (setup, body) in cases {
        let env = Env::new(&[
            (
                "package.json",
                "{\"scripts\": {\"postinstall\": \"true\"}}\n",
            ),
            ("setup.sh", "echo set-up >> ran-set-up.txt\n"),
            (".gitignore", "ran-set-up.txt\n"),
        ]);
        let guard = guarded(&env);
        let mut s = enforced();
        s.workspace.setup = vec![setup.clone()];
        let plan = one("A", json!([any("**")]), gate(&["true"]));
        let out = try_run(&env, &plan, &s, sh_agent(&env, body)).unwrap();
        assert_eq!(
            kind(&out, "A"),
            FailureKind::GateScriptTampering,
            "{setup:?}"
        );
        // The base commit's set-up runs in gate checkouts by design
        // (preflight tries it in the first slot's, and a slot's is made on
        // it while its agent works); the candidate's never does: nothing
        // it wrote ran there.
        let checkouts = env.repo().join(".planwright/checkouts");
        let dirs: Vec<_> = std::fs::read_dir(&checkouts)
            .unwrap_or_else(|e| panic!("{}: {e}", checkouts.display()))
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(!dirs.is_empty(), "{setup:?}: no gate checkout");
        for dir in dirs {
            let record = std::fs::read_to_string(dir.join("ran-set-up.txt")).unwrap_or_default();
            assert!(
                !dir.join("poisoned").exists() && !record.contains("poisoned"),
                "{setup:?}: the candidate's set-up ran in {}",
                dir.display()
            );
        }
        assert_eq!(guarded(&env), guard, "{setup:?}");
    }
}

/// The gate checkout's package cache is the set-up's: its gates read it and
/// cannot write it, and no agent reaches it; the agent's own cache is its
/// slot's, not the user's.
#[test]
fn a_gate_checkouts_package_cache_is_read_only_to_gates_and_out_of_agents_reach() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let checkouts = env.repo().join(".planwright/caches/checkouts");
    let fill = "mkdir -p \"$npm_config_cache\" && echo seed > \"$npm_config_cache/seed\"";
    let gate_script =
        "grep -q seed \"$npm_config_cache/seed\" && ! touch \"$npm_config_cache/planted\"";
    let agent_script = format!(
        "cd \"$1\"\n\
         case \"$npm_config_cache\" in *\"/.planwright/caches/agents/\"*) ;; *) exit 9 ;; esac\n\
         for d in {dir}/*/npm; do touch \"$d/planted\" 2>/dev/null && exit 8; done\n\
         echo ok > answer.txt\n",
        dir = checkouts.display()
    );
    let mut s = enforced();
    s.workspace.setup = vec![vec!["sh".into(), "-c".into(), fill.into()]];
    let plan = one(
        "A",
        json!([any("answer.txt")]),
        gate(&["sh", "-c", gate_script]),
    );
    let out = try_run(&env, &plan, &s, sh_agent(&env, &agent_script)).unwrap();
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    let filled: Vec<PathBuf> = std::fs::read_dir(&checkouts)
        .unwrap()
        .map(|d| d.unwrap().path().join("npm"))
        .collect();
    assert!(
        filled.iter().any(|npm| npm.join("seed").is_file()),
        "{filled:?}"
    );
    assert!(filled.iter().all(|npm| !npm.join("planted").exists()));
}
