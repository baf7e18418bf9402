//! `draft` end to end with fake agents (shell scripts run by the `cmd`
//! agent): findings go back to the agent, only a valid plan is written.

use planwright_testkit::{text, Env};
use std::process::Output;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// A repository with `src/lib.rs`, a spec, and an agent script that keeps
/// every prompt it gets and writes `plans[round - 1]` (the last one again
/// when it runs out).
fn setup(plans: &[&str]) -> Env {
    let env = Env::new(&[("src/lib.rs", "pub fn f() {}\n")]).with_cli(BIN);
    let dir = env.root();
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
    env
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

fn draft(env: &Env, rounds: &str) -> Output {
    // The agent runs in a scratch folder; its program, named relative to
    // the folder planwright starts in (as docs/draft.md says), is taken
    // from there.
    let agent = "./agent.sh";
    env.planwright(&[
        "draft",
        "--from",
        "spec.md",
        "--format",
        "native",
        "--agent",
        "cmd",
        "--agent-cmd",
        agent,
        "--repo",
        "repo",
        "--rounds",
        rounds,
        "-o",
        "plan.json",
    ])
}

#[test]
fn findings_go_back_and_the_corrected_plan_is_written() {
    let env = setup(&[BAD, GOOD]);
    let out = draft(&env, "3");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("round 1: 3 errors"), "{stderr}");
    assert!(stderr.contains("round 2: the plan is valid"), "{stderr}");
    let written = std::fs::read_to_string(env.root().join("plan.json")).unwrap();
    assert_eq!(written.trim(), GOOD);
    let prompts = env.root().join("prompts");
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
    let env = setup(&[BAD, BROKEN]);
    let out = draft(&env, "2");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!env.root().join("plan.json").exists());
    assert!(stderr.contains("no valid plan after 2 rounds"), "{stderr}");
    // The last round's findings, underlined in its plan.
    assert!(
        stderr.contains("native.ticket.unknown-dependency"),
        "{stderr}"
    );
    assert!(stderr.contains("\"T9\""), "{stderr}");
    assert!(stderr.contains("prompts and agent logs are in"), "{stderr}");
    assert!(env.root().join("prompts/prompt-2.md").exists());
    // They are kept in the binary's temporary folder, which the test's
    // home holds: nothing is left in the machine's.
    let kept = env.root().join("home/tmp");
    let drafts = std::fs::read_dir(&kept).unwrap().count();
    assert_eq!(drafts, 1, "{}", kept.display());
    assert!(
        stderr.contains(&format!("in `{}", kept.join("planwright-draft-").display())),
        "{stderr}"
    );
}

#[test]
fn an_agent_that_writes_no_plan_is_told_so() {
    let env = setup(&[]);
    let out = draft(&env, "2");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let second = std::fs::read_to_string(env.root().join("prompts/prompt-2.md")).unwrap();
    assert!(second.contains("was not written"), "{second}");
}
