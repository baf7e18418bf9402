//! Part of the real-agent tier (see `real_agents.rs`): calls refused as the request's fault
//! (400) or the key's (401), and a gateway the agent cannot reach.

use super::*;
use planwright_testkit::mock_model::REFUSAL;

/// Every model call refused as invalid (400, which no CLI retries): each
/// attempt is `agent_failed`, read from the CLI's own error record, whose
/// message names the provider's; the ticket's failure message and
/// evidence.
fn refused(test: &str, setup: fn(&MockModel) -> Setup) -> Option<(String, String)> {
    if !wanted(test) {
        return None;
    }
    let mock = MockModel::start(script(Some((Trouble::Invalid, 1000))));
    let setup = setup(&mock);
    let env = tier_env(&setup, &mock, &untested_limit());
    let (out, summary) = run(&env, &setup);
    let logs = logs(&env);
    assert_eq!(out.status.code(), Some(1), "{summary}\n{logs}");
    assert!(
        !mock.requests().is_empty(),
        "the CLI never called the mock\n{logs}"
    );
    assert_offline(&env, &mock);
    let ticket = &report(&env)["tickets"][0];
    let outcomes: Vec<&Value> = ticket["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["agent_outcome"])
        .collect();
    assert_eq!(outcomes, [&json!("failed"), &json!("failed")], "{ticket}");
    let failure = &ticket["failure"];
    assert_eq!(failure["kind"], "agent_failed", "{ticket}");
    let message = failure["message"].as_str().unwrap().to_string();
    assert!(message.contains(REFUSAL), "{message}\n{logs}");
    assert!(
        !message.contains("ended before its final record"),
        "{message}"
    );
    let evidence = failure["evidence"].as_str().unwrap_or_default().to_string();
    Some((message, evidence))
}

/// Claude Code's failure is its result line with `is_error`, and its
/// evidence its error records (the API error, then the result), not the
/// end of its stream.
#[test]
fn claude_refused() {
    let Some((message, evidence)) = refused("claude_refused", claude) else {
        return;
    };
    assert!(
        message.starts_with("the agent exited with exit code 1: API Error: 400"),
        "{message}"
    );
    let records: Vec<Value> = evidence
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("{l}\n{evidence}")))
        .collect();
    assert_eq!(records.len(), 2, "{evidence}");
    assert_eq!(records[0]["is_api_error_message"], true, "{evidence}");
    assert_eq!(records[1]["type"], "result", "{evidence}");
    assert_eq!(records[1]["is_error"], true, "{evidence}");
}

/// opencode 1.18 ends a failed session on its `error` record (it prints no
/// `done`): its failure names the provider's message.
#[test]
fn opencode_refused() {
    refused("opencode_refused", opencode);
}

#[test]
fn codex_refused() {
    refused("codex_refused", codex);
}

#[test]
fn gemini_refused() {
    refused("gemini_refused", gemini);
}

/// aider exits 0 after its error line, which decides; its analytics log
/// ends in its `exit` event, so its output did not end early.
#[test]
fn aider_refused() {
    refused("aider_refused", aider);
}

/// The mock's own loopback address, not its mapped name: inside the
/// agent's network namespace nothing listens there, and the proxy refuses
/// loopback it was not given by name, so the CLI never reaches the mock.
#[test]
fn claude_cannot_reach_the_mock_directly() {
    cannot_reach_the_mock_directly("claude_cannot_reach_the_mock_directly", claude, "");
}

#[test]
fn copilot_cannot_reach_the_mock_directly() {
    cannot_reach_the_mock_directly("copilot_cannot_reach_the_mock_directly", copilot, "/v1");
}

/// The set-up's first variable, its base URL, at the mock's loopback
/// address (and `path`).
fn cannot_reach_the_mock_directly(test: &str, setup: fn(&MockModel) -> Setup, path: &str) {
    if !wanted(test) {
        return;
    }
    let mock = MockModel::start(script(None));
    let mut setup = setup(&mock);
    let direct = format!("{}{path}", mock.base_url());
    setup.env[0].1 = direct.clone();
    let env = tier_env(&setup, &mock, &untested_limit());
    // Preflight (which every run makes first) names the `hosts` line.
    let out = preflight(&env, &setup);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let named = format!("points the agent at `{direct}`, a loopback address");
    assert!(stdout.contains(&named), "{stdout}");
    assert!(stdout.contains("[sandbox] hosts = {"), "{stdout}");
    assert!(mock.requests().is_empty(), "{}", seen(&mock));
}

#[test]
fn copilot_refused() {
    refused("copilot_refused", copilot);
}

/// Every call refused with 401 (the provider's own words for a key it
/// does not accept): the run stops at the first such attempt with "the
/// key is refused" (exit 2), and no ticket is charged a strike.
pub(super) fn key_refused(test: &str, setup: fn(&MockModel) -> Setup) {
    if !wanted(test) {
        return;
    }
    let mock = MockModel::start(script(Some((Trouble::Unauthorized, 1000))));
    let setup = setup(&mock);
    let env = tier_env(&setup, &mock, &untested_limit());
    let args = [
        "run",
        "plan.json",
        "--repo",
        "repo",
        "--agent",
        setup.agent,
        "--jobs",
        "1",
        "--no-gate-probe",
    ];
    let out = unchanged_around(&env, &setup, &args);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{said}\n{}", logs(&env));
    let refused = format!(
        "agent `{}`: the key is refused by its provider",
        setup.agent
    );
    assert!(
        said.contains(&refused) && said.contains("no ticket was charged a strike"),
        "{said}"
    );
    assert!(!mock.requests().is_empty(), "the CLI never called the mock");
    assert_offline(&env, &mock);
    let ticket = &report(&env)["tickets"][0];
    assert!(ticket["failure"].is_null(), "{ticket}");
    let attempts = ticket["attempts"].as_array().cloned().unwrap_or_default();
    assert_eq!(attempts.len(), 1, "{ticket}");
}

#[test]
fn claude_key_refused() {
    key_refused("claude_key_refused", claude);
}

#[test]
fn gemini_key_refused() {
    key_refused("gemini_key_refused", gemini);
}

#[test]
fn codex_key_refused() {
    key_refused("codex_key_refused", codex);
}

#[test]
fn opencode_key_refused() {
    key_refused("opencode_key_refused", opencode);
}

#[test]
fn aider_key_refused() {
    key_refused("aider_key_refused", aider);
}

#[test]
fn copilot_key_refused() {
    key_refused("copilot_key_refused", copilot);
}
