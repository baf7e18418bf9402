//! What every child of planwright inherits: its stdin, stdout and stderr
//! and no other descriptor (not one the binary itself inherited, as
//! `exec 9>>file; planwright run ...` gives it), no environment of
//! planwright's (`GITHUB_TOKEN` in its own environment stays there), and
//! no sight of processes outside its attempt. Checked from inside the
//! agent, the gate, the reviewer, and the agent of a worker started the
//! same way. These tests need Landlock and user namespaces.

use planwright_testkit::{git, text, write, Env};
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// The value of planwright's token; no child may see it anywhere.
const SECRET: &str = "planwright-secret-value";

/// Prints what the child can reach that it must not: descriptor 9 (and
/// writes to it), planwright's environment in any process it sees, and
/// the test's marker process. The patterns are written so that the
/// probe's own command lines do not match them.
const PROBE: &str = "(echo leaked >&9) 2>/dev/null\n\
    if [ -e /proc/self/fd/9 ]; then echo 'descriptor 9 is open'; fi\n\
    grep -l 'planwright-secret-valu[e]' /proc/[0-9]*/environ 2>/dev/null\n\
    grep -l '424[2].5' /proc/[0-9]*/cmdline 2>/dev/null\n\
    true\n";

/// An environment with the three probing scripts and a plan of one ticket
/// whose gate probes; the agent writes what it found to `a.txt`.
fn probing_env() -> Env {
    let env = Env::new_in(Path::new("/var/tmp"), &[("README.md", "hi\n")]).with_cli(BIN);
    let root = env.root();
    write(root, "probe.sh", PROBE);
    let probe = root.join("probe.sh").display().to_string();
    write(
        root,
        "agent.sh",
        &format!("{{ sh {probe}; echo clean; }} > \"$1/a.txt\"\n"),
    );
    write(
        root,
        "gate.sh",
        &format!("found=$(sh {probe}); [ -z \"$found\" ] || {{ echo \"$found\"; exit 1; }}\n"),
    );
    write(
        root,
        "reviewer.sh",
        &format!(
            "found=$(sh {probe} | tr '\\n' ' ')\n\
             if [ -z \"$found\" ]; then v=ship; else v=block; fi\n\
             printf '{{\"verdict\": \"%s\", \"summary\": \"probe found: %s\", \"findings\": [], \"checks\": []}}' \
             \"$v\" \"$found\" > \"$PLANWRIGHT_VERDICT_FILE\"\n"
        ),
    );
    let gate = root.join("gate.sh").display().to_string();
    let plan = serde_json::json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "probe", "argv": ["sh", gate]}],
        "tickets": [{"id": "A", "title": "a", "body": "make a",
            "scope": [{"pattern": "a.txt", "op": "create"}]}]});
    write(root, "plan.json", &plan.to_string());
    env
}

/// `planwright run` started as `exec 9>>outside.txt; exec planwright ...`,
/// with the token in its environment and a marker process running.
fn run_holding_descriptor_9(env: &Env, config: &str) -> Output {
    write(env.root(), "planwright.toml", config);
    let agent = format!("sh {} {{worktree}}", env.root().join("agent.sh").display());
    let mut marker = Command::new("sleep").arg("4242.5").spawn().unwrap();
    let mut cmd = Command::new("sh");
    env.cli().hermetic(&mut cmd);
    let out = cmd
        .current_dir(env.root())
        .env("GITHUB_TOKEN", SECRET)
        .env("PLANWRIGHT_SECRET", SECRET)
        .args(["-c", "exec 9>>\"$0\"; exec \"$@\"", "outside.txt", BIN])
        .args(["run", "plan.json", "--repo", "repo", "--config"])
        .args(["planwright.toml", "--agent", "cmd", "--agent-cmd", &agent])
        // The gate under test is the run's, not preflight's trial of it.
        .arg("--no-gate-probe")
        .output()
        .unwrap();
    marker.kill().unwrap();
    let _ = marker.wait();
    out
}

fn assert_nothing_reached(env: &Env, out: &Output) {
    let said = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}\n{}", logs(&env.repo()));
    let outside = std::fs::read_to_string(env.root().join("outside.txt")).unwrap();
    assert_eq!(outside, "", "a child wrote through descriptor 9");
    assert_eq!(git(&env.repo(), &["show", "main:a.txt"]), "clean");
}

/// Every log of the run, to say why it failed.
fn logs(repo: &Path) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg("for f in $(find .planwright/runs -name '*.log'); do echo \"== $f\"; cat \"$f\"; done")
        .current_dir(repo)
        .output()
        .unwrap();
    text(&out.stdout)
}

const REVIEWED: &str = "[review]\nagent = \"cmd\"\n";

#[test]
fn agent_gate_and_reviewer_inherit_nothing_of_planwright() {
    let env = probing_env();
    let reviewer = env.root().join("reviewer.sh").display().to_string();
    let config = format!("{REVIEWED}cmd = \"sh {reviewer}\"\n");
    let out = run_holding_descriptor_9(&env, &config);
    assert_nothing_reached(&env, &out);
    let events = std::fs::read_dir(env.repo().join(".planwright/runs"))
        .unwrap()
        .map(|run| std::fs::read_to_string(run.unwrap().path().join("events.jsonl")).unwrap())
        .collect::<String>();
    assert!(events.contains("\"verdict\":\"ship\""), "{events}");
}

/// A worker started as `exec 9>>outside.txt; exec planwright worker` by
/// the executor's command: its agent does not get descriptor 9 either.
#[test]
fn a_workers_agent_inherits_nothing_of_the_worker() {
    let env = probing_env();
    let cache = env.root().join("cache").display().to_string();
    let outside = env.root().join("outside.txt").display().to_string();
    let command = [
        "sh",
        "-c",
        "exec 9>>\"$0\"; exec \"$@\"",
        &outside,
        BIN,
        "worker",
        "--cache",
        &cache,
    ];
    let words: Vec<String> = command.iter().map(|w| format!("{w:?}")).collect();
    let config = format!(
        "[executor]\nkind = \"process\"\ncommand = [{}]\n",
        words.join(", ")
    );
    let out = run_holding_descriptor_9(&env, &config);
    assert_nothing_reached(&env, &out);
}
