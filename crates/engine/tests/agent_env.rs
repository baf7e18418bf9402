//! Agents get their environment by allowlist: the base set, their
//! adapter's own variables and `[agent] env`; every other variable of
//! planwright's environment is withheld, and the log names (never the
//! values) what each attempt was given.

use planwright_engine::agent::{self, AgentOptions, AttemptContext, CmdAgent, ADAPTERS};
use planwright_engine::process::Cancel;
use planwright_testkit::{any, gate, git, plan, run_with, settings, ticket, Env};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Variables a hostile agent would look for, set in planwright's own
/// environment for every test of this file.
const WITHHELD: &[(&str, &str)] = &[
    ("GITHUB_TOKEN", "ghp_withheld"),
    ("SSH_AUTH_SOCK", "/tmp/ssh-withheld/agent.1"),
    ("AWS_SECRET_ACCESS_KEY", "aws-withheld"),
];

/// Each adapter's key, and one key no adapter of another family needs.
const KEYS: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "sk-ant-value"),
    ("OPENAI_API_KEY", "sk-openai-value"),
    ("GEMINI_API_KEY", "gemini-value"),
    ("GOOGLE_CLOUD_PROJECT", "project-value"),
    ("OPENROUTER_API_KEY", "openrouter-value"),
    ("AIDER_MODEL", "aider-value"),
    ("TEAM_TOOL_TOKEN", "named-value"),
    ("COPILOT_GITHUB_TOKEN", "copilot-value"),
];

fn set_all() {
    for (k, v) in WITHHELD.iter().chain(KEYS) {
        std::env::set_var(k, v);
    }
}

fn context(tmp: &Path) -> AttemptContext {
    let workspace = tmp.join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    let prompt_file = tmp.join("attempt-1.prompt.md");
    std::fs::write(&prompt_file, "# T1\n").unwrap();
    AttemptContext {
        ticket: "T1".into(),
        attempt: 1,
        workspace,
        prompt_file,
        log: tmp.join("attempt-1.agent.log"),
        timeout: Some(planwright_testkit::UNTESTED_LIMIT),
        model: None,
        env: Vec::new(),
        confine: None,
        log_limit: None,
        usage_sink: None,
        activity_sink: None,
    }
}

/// The names of the environment the agent saw, and the log's first line.
fn names_seen(agent: &dyn agent::Agent, tmp: &Path) -> (Vec<String>, String) {
    let ctx = context(tmp);
    agent.attempt(&ctx, &Cancel::default()).unwrap();
    let printed = std::fs::read_to_string(ctx.workspace.join("env.out")).unwrap();
    let names = printed
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_string()))
        .collect();
    let log = std::fs::read_to_string(&ctx.log).unwrap();
    (names, log.lines().next().unwrap_or_default().to_string())
}

fn assert_withheld(names: &[String], log: &str, who: &str) {
    for (k, v) in WITHHELD {
        assert!(!names.iter().any(|n| n == k), "{who} saw {k}: {names:?}");
        // By name (`COPILOT_GITHUB_TOKEN` is not `GITHUB_TOKEN`).
        let mut listed = log.trim_start_matches("environment: ").split(", ");
        assert!(
            !listed.any(|n| n == *k) && !log.contains(v),
            "{who}'s log: {log}"
        );
    }
    assert!(names.iter().any(|n| n == "PATH"), "{who} keeps PATH");
}

/// `(adapter, the variables it must get, one it must not)`.
const EXPECTED: &[(&str, &[&str], &str)] = &[
    ("claude", &["ANTHROPIC_API_KEY"], "OPENAI_API_KEY"),
    ("codex", &["OPENAI_API_KEY"], "ANTHROPIC_API_KEY"),
    (
        "gemini",
        &["GEMINI_API_KEY", "GOOGLE_CLOUD_PROJECT"],
        "OPENAI_API_KEY",
    ),
    (
        "agy",
        &["GEMINI_API_KEY", "GOOGLE_CLOUD_PROJECT"],
        "ANTHROPIC_API_KEY",
    ),
    (
        "aider",
        &["AIDER_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"],
        "GOOGLE_CLOUD_PROJECT",
    ),
    (
        "opencode",
        &["OPENROUTER_API_KEY", "ANTHROPIC_API_KEY"],
        "AIDER_MODEL",
    ),
    // Its own sign-in variable; `GITHUB_TOKEN` stays withheld.
    ("copilot", &["COPILOT_GITHUB_TOKEN"], "OPENAI_API_KEY"),
];

#[test]
fn each_adapter_gets_its_keys_and_nothing_withheld() {
    set_all();
    assert_eq!(EXPECTED.len(), ADAPTERS.len(), "every adapter is checked");
    for (name, wanted, other) in EXPECTED {
        let tmp = tempfile::tempdir().unwrap();
        let script = tmp.path().join(format!("fake-{name}"));
        std::fs::write(&script, "#!/bin/sh\nenv > env.out\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let opts = AgentOptions {
            program: Some(script.display().to_string()),
            ..AgentOptions::default()
        };
        let agent = agent::from_options(name, &opts).unwrap();
        let (names, log) = names_seen(agent.as_ref(), tmp.path());
        for key in *wanted {
            assert!(
                names.iter().any(|n| n == key),
                "{name} lacks {key}: {names:?}"
            );
            assert!(log.contains(key), "{name}'s log names {key}: {log}");
        }
        assert!(!names.iter().any(|n| n == other), "{name} saw {other}");
        assert!(
            !names.iter().any(|n| n == "TEAM_TOOL_TOKEN"),
            "{name}: unnamed"
        );
        assert!(
            !log.contains("-value"),
            "{name}'s log holds no values: {log}"
        );
        assert_withheld(&names, &log, name);
    }
}

#[test]
fn the_cmd_agent_gets_the_base_set_and_what_agent_env_names() {
    set_all();
    let tmp = tempfile::tempdir().unwrap();
    let agent = CmdAgent::new("sh -c 'env > env.out'")
        .unwrap()
        .with_env(vec!["TEAM_TOOL_TOKEN".into(), "GOOGLE_*".into()]);
    let (names, log) = names_seen(&agent, tmp.path());
    assert!(log.starts_with("environment: "), "{log}");
    assert_withheld(&names, &log, "cmd");
    for key in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"] {
        assert!(!names.iter().any(|n| n == key), "cmd saw {key} unnamed");
    }
    assert!(
        names.iter().any(|n| n == "GOOGLE_CLOUD_PROJECT"),
        "a prefix: {names:?}"
    );
    assert!(names.iter().any(|n| n == "PLANWRIGHT_TICKET"), "{names:?}");
}

/// The first log of an attempt under `.planwright/runs`.
fn attempt_log(dir: &Path) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if path.is_dir() {
            if let Some(found) = attempt_log(&path) {
                return Some(found);
            }
        } else if path.ends_with("attempt-1.agent.log") {
            return Some(path);
        }
    }
    None
}

#[test]
fn a_run_passes_its_agent_only_the_allowed_names_and_records_them() {
    set_all();
    let env = Env::new(&[("README.md", "hi\n")]);
    let script = env.tmp.path().join("agent.sh");
    std::fs::write(&script, "cd \"$1\"\nenv | cut -d= -f1 | sort > names.txt\n").unwrap();
    let opts = AgentOptions {
        cmd: Some(format!("sh {} {{workspace}}", script.display())),
        env: vec!["TEAM_TOOL_TOKEN".into()],
        ..AgentOptions::default()
    };
    let agent = agent::from_options("cmd", &opts).unwrap();
    let plan = plan(json!({
        "gates": gate(&["test", "-f", "names.txt"]),
        "tickets": [ticket("A", json!([any("names.txt")]))],
    }));
    let out = run_with(&env, &plan, &settings(), agent);
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    let merged = git(&env.repo(), &["show", "main:names.txt"]);
    let names: Vec<String> = merged.lines().map(String::from).collect();
    let log = attempt_log(&env.repo().join(".planwright/runs")).expect("the attempt's log");
    let log = std::fs::read_to_string(log).unwrap();
    let first = log.lines().next().unwrap_or_default();
    assert_withheld(&names, first, "the run's agent");
    assert!(!names.iter().any(|n| n == "ANTHROPIC_API_KEY"), "{names:?}");
    assert!(
        names.iter().any(|n| n == "TEAM_TOOL_TOKEN"),
        "named: {names:?}"
    );
    assert!(
        first.starts_with("environment: ") && first.contains("TEAM_TOOL_TOKEN"),
        "{first}"
    );
    assert!(
        !first.contains("named-value"),
        "names, never values: {first}"
    );
}
