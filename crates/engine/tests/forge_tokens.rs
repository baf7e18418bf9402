//! The forge's tokens live in planwright's process only: an agent and a
//! gate of a run see none of the token variables `deliver` reads, also
//! when `[agent] env` and `[gates] env` name another variable (which they
//! do see).

use planwright_engine::agent::{self, AgentOptions};
use planwright_testkit::{any, git, plan, run_with, settings, ticket, Env};
use serde_json::json;

/// Every default token variable of `[forge] token_env`, and one a user
/// would name there.
const TOKENS: &[&str] = &[
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITLAB_TOKEN",
    "FORGEJO_TOKEN",
    "GITEA_TOKEN",
    "MY_FORGE_TOKEN",
];

/// A shell test that fails when any token variable is set, and when the
/// named variable is not.
fn check_script() -> String {
    let mut s = String::from("test \"$TEAM_TOOL_TOKEN\" = named || exit 3\n");
    for t in TOKENS {
        s.push_str(&format!("test -z \"${{{t}+set}}\" || exit 4\n"));
    }
    s
}

#[test]
fn agents_and_gates_see_no_forge_token_even_when_another_variable_is_named() {
    assert!(
        planwright_config::forge::TOKEN_VARIABLES
            .iter()
            .all(|v| TOKENS.contains(v)),
        "every default token variable is checked"
    );
    for t in TOKENS {
        std::env::set_var(t, format!("{t}-secret"));
    }
    std::env::set_var("TEAM_TOOL_TOKEN", "named");
    let env = Env::new(&[("README.md", "hi\n")]);
    let script = env.tmp.path().join("agent.sh");
    let body = format!(
        "cd \"$1\"\n{}env | cut -d= -f1 | sort > names.txt\n",
        check_script()
    );
    std::fs::write(&script, body).unwrap();
    let opts = AgentOptions {
        cmd: Some(format!("sh {} {{workspace}}", script.display())),
        env: vec!["TEAM_TOOL_TOKEN".into()],
        ..AgentOptions::default()
    };
    let agent = agent::from_options("cmd", &opts).unwrap();
    let plan = plan(json!({
        "gates": [{"name": "no tokens", "argv": ["sh", "-c", check_script()]}],
        "tickets": [ticket("A", json!([any("names.txt")]))],
    }));
    let mut s = settings();
    s.gates.env = vec!["TEAM_TOOL_TOKEN".into()];
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    let names = git(&env.repo(), &["show", "main:names.txt"]);
    assert!(names.lines().any(|n| n == "TEAM_TOOL_TOKEN"), "{names}");
    for t in TOKENS {
        assert!(!names.lines().any(|n| n == *t), "the agent saw {t}");
    }
}
