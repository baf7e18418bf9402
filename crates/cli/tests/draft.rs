//! `draft` end to end with fake agents (shell scripts run by the `cmd`
//! agent): findings go back to the agent, only a valid plan is written.
#![forbid(unsafe_code)]

use std::path::Path;
use std::process::{Command, Output};

fn planwright(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planwright"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
}

/// A repository with `src/lib.rs`, a spec, and an agent script that keeps
/// every prompt it gets and writes `plans[round - 1]` (the last one again
/// when it runs out).
fn setup(dir: &Path, plans: &[&str]) {
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "init"]);
    std::fs::write(dir.join("spec.md"), "Add a greeting module.\n").unwrap();
    let prompts = dir.join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    let mut script = format!(
        "#!/bin/sh\ncp \"$PLANWRIGHT_PROMPT_FILE\" '{}'/prompt-$PLANWRIGHT_ATTEMPT.md\ncase $PLANWRIGHT_ATTEMPT in\n",
        prompts.display()
    );
    for (i, plan) in plans.iter().enumerate() {
        let round = if i + 1 == plans.len() {
            "*".to_string()
        } else {
            (i + 1).to_string()
        };
        script.push_str(&format!(
            "{round}) cat > \"$PLANWRIGHT_PLAN_FILE\" <<'EOF'\n{plan}\nEOF\n;;\n"
        ));
    }
    script.push_str("esac\n");
    let agent = dir.join("agent.sh");
    std::fs::write(&agent, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
}

// Three scope entries that contradict the repository: `modify` and
// `delete` of a missing file, `create` of one that exists.
const BAD: &str = r#"{"planwright": 1, "source_format": "native", "base": "main",
 "tickets": [{"id": "T1", "body": "Add src/greet.rs.",
   "scope": [{"pattern": "src/greet.rs", "op": "modify"},
             {"pattern": "src/old.rs", "op": "delete"},
             {"pattern": "src/lib.rs", "op": "create"}]}]}"#;

// Not a valid plan at all: a dependency on a ticket that does not exist.
const BROKEN: &str = r#"{"planwright": 1, "source_format": "native", "base": "main",
 "tickets": [{"id": "T1", "body": "Add src/greet.rs.", "depends_on": ["T9"],
   "scope": [{"pattern": "src/greet.rs", "op": "create"}]}]}"#;

const GOOD: &str = r#"{"planwright": 1, "source_format": "native", "base": "main",
 "tickets": [{"id": "T1", "body": "Add src/greet.rs.",
   "scope": [{"pattern": "src/greet.rs", "op": "create"},
             {"pattern": "src/lib.rs", "op": "modify"}]}]}"#;

fn draft(dir: &Path, rounds: &str) -> Output {
    // The agent runs in a scratch folder: its program is named absolutely.
    let agent = dir.join("agent.sh").display().to_string();
    planwright(
        dir,
        &[
            "draft",
            "--from",
            "spec.md",
            "--format",
            "native",
            "--agent",
            "cmd",
            "--agent-cmd",
            &agent,
            "--repo",
            "repo",
            "--rounds",
            rounds,
            "-o",
            "plan.json",
        ],
    )
}

#[test]
fn findings_go_back_and_the_corrected_plan_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path(), &[BAD, GOOD]);
    let out = draft(tmp.path(), "3");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("round 1: 3 errors"), "{stderr}");
    assert!(stderr.contains("round 2: the plan is valid"), "{stderr}");
    let written = std::fs::read_to_string(tmp.path().join("plan.json")).unwrap();
    assert_eq!(written.trim(), GOOD);
    let prompts = tmp.path().join("prompts");
    let first = std::fs::read_to_string(prompts.join("prompt-1.md")).unwrap();
    assert!(first.contains("Add a greeting module."), "{first}");
    assert!(
        first.contains("src/lib.rs"),
        "the repository's files are listed"
    );
    assert!(!first.contains("Problems in your previous plan"));
    let second = std::fs::read_to_string(prompts.join("prompt-2.md")).unwrap();
    assert!(
        second.contains("Problems in your previous plan"),
        "{second}"
    );
    assert!(second.contains("`src/greet.rs`"), "{second}");
    assert!(second.contains("`src/old.rs`"), "{second}");
    assert!(second.contains("`src/lib.rs`"), "{second}");
    assert!(
        !prompts.join("prompt-3.md").exists(),
        "no round after a valid plan"
    );
}

#[test]
fn no_valid_plan_writes_nothing_and_exits_1_with_the_findings() {
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path(), &[BAD, BROKEN]);
    let out = draft(tmp.path(), "2");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!tmp.path().join("plan.json").exists());
    assert!(stderr.contains("no valid plan after 2 rounds"), "{stderr}");
    // The last round's findings, underlined in its plan.
    assert!(
        stderr.contains("native.ticket.unknown-dependency"),
        "{stderr}"
    );
    assert!(stderr.contains("\"T9\""), "{stderr}");
    assert!(stderr.contains("prompts and agent logs are in"), "{stderr}");
    assert!(tmp.path().join("prompts/prompt-2.md").exists());
}

#[test]
fn an_agent_that_writes_no_plan_is_told_so() {
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path(), &[]);
    let out = draft(tmp.path(), "2");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let second = std::fs::read_to_string(tmp.path().join("prompts/prompt-2.md")).unwrap();
    assert!(second.contains("was not written"), "{second}");
}
