//! Part of the real-agent tier (see `real_agents.rs`): the ACP agents.

use super::*;

/// Gemini CLI's figures through ACP: its `_meta.quota` per model, exact
/// but without the cache split (cached input counts as input).
const GEMINI_ACP: Expect = Expect {
    model: "gemini-2.5-pro",
    rates: [1.25, 10.0, 0.125, 1.25],
    cache_lumped: true,
    // Its quota counts have no cache split: the cost is an estimate.
    cost_source: "estimated",
    ..GEMINI
};

/// Zed's `claude-agent-acp`, set up as the claude adapter (its slot's
/// `CLAUDE_CONFIG_DIR`), with Claude Code's figures as it means them and
/// the cost of its `usage_update`.
fn claude_agent_acp(mock: &MockModel) -> Setup {
    Setup {
        agent: "acp",
        cli: "claude-agent-acp",
        agent_toml: "cmd = \"claude-agent-acp\"\n",
        ..claude(mock)
    }
}

/// `claude-agent-acp` merges through the ACP client, confined and
/// proxied as the claude adapter is, with exact figures and its reported
/// cost.
#[test]
fn claude_agent_acp_ok() {
    let Some(env) = ok("claude_agent_acp_ok", claude_agent_acp, &CLAUDE) else {
        return;
    };
    assert!(logs(&env).contains("acp: session "), "{}", logs(&env));
}

/// `gemini --acp` merges through the ACP client, confined and proxied as
/// the gemini adapter is, on the model set by `session/set_model`, with
/// exact figures and its tool calls as activity.
#[test]
fn gemini_acp_ok() {
    let Some(env) = ok("gemini_acp_ok", gemini_acp, &GEMINI_ACP) else {
        return;
    };
    assert!(
        logs(&env).contains("acp: model gemini-2.5-pro\n"),
        "{}",
        logs(&env)
    );
    let activity = events(&env, "agent_activity");
    assert!(
        activity.iter().any(|a| a["kind"] == "tool_call"),
        "{activity:?}\n{}",
        logs(&env)
    );
}

/// A model Gemini CLI's session does not offer ends the attempt before
/// any model call, as unavailable (no strike), naming what it offers.
#[test]
fn gemini_acp_refuses_a_model_it_does_not_offer() {
    if !wanted("gemini_acp_refuses_a_model_it_does_not_offer") {
        return;
    }
    let mock = MockModel::start(script(None));
    let setup = Setup {
        model: "gemini-0-nonesuch",
        ..gemini_acp(&mock)
    };
    let env = tier_env(&setup, &mock, "timeout_secs = 120\nmax_unavailable = 1\n");
    // Preflight's probe asks for a session; when it offers models there,
    // the one not offered is refused before any attempt, else the attempt
    // finds out (unavailable, no strike).
    let pre = preflight(&env, &setup);
    let stdout = text(&pre.stdout);
    let why = "the agent does not offer model `gemini-0-nonesuch`; it offers `auto`, ";
    if pre.status.code() == Some(1) {
        assert!(stdout.contains(why), "{stdout}");
        assert!(stdout.contains("`gemini-2.5-pro`"), "{stdout}");
    } else {
        assert!(
            stdout.contains("the models it offers are for the attempt to find"),
            "{stdout}"
        );
        let (out, summary) = run(&env, &setup);
        assert_eq!(out.status.code(), Some(1), "{summary}\n{}", logs(&env));
        let ticket = &report(&env)["tickets"][0];
        assert_eq!(ticket["failure"]["kind"], "unavailable", "{ticket}");
        let message = ticket["failure"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{message}");
    }
    let calls = mock.requests().iter().filter(|r| r.is_model_call()).count();
    assert_eq!(calls, 0, "{}", seen(&mock));
}

/// Preflight checks the model each ticket may be routed to against what
/// Gemini CLI's session offers (its own list, built from its access
/// flags, not from the model server): a ticket's own `model` it does not
/// offer is a `routing` error listing what it does; one it offers, and a
/// `cheap` ticket's `gemini-3-flash` (offered as its preview), pass.
#[test]
fn gemini_acp_preflight_checks_each_routed_model() {
    if !wanted("gemini_acp_preflight_checks_each_routed_model") {
        return;
    }
    let mock = MockModel::start(script(None));
    let setup = Setup {
        model: "",
        ..gemini_acp(&mock)
    };
    let env = tier_env(&setup, &mock, "timeout_secs = 120\n");
    let routed = |id: &str, key: &str, value: &str| {
        let mut t = json!({"id": id, "title": id, "body": "Create the file.",
            "scope": [{"pattern": format!("{id}.txt"), "op": "create"}]});
        t[key] = json!(value);
        t
    };
    let plan = json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "ok", "argv": ["true"]}],
        "tickets": [routed("A", "model", "gemini-2.5-pro"),
            routed("B", "model", "gemini-0-nonesuch"), routed("C", "tier", "cheap")]});
    std::fs::write(env.root().join("plan.json"), plan.to_string()).unwrap();
    let pre = preflight(&env, &setup);
    let stdout = text(&pre.stdout);
    assert_eq!(pre.status.code(), Some(1), "{stdout}");
    let refused = "agent `acp`: ticket B may be routed to model `gemini-0-nonesuch`, and the agent does not offer model `gemini-0-nonesuch`; it offers `auto`, ";
    assert!(stdout.contains(refused), "{stdout}");
    assert!(stdout.contains("`gemini-2.5-pro`"), "{stdout}");
    let others = stdout
        .matches(", and the agent does not offer model")
        .count();
    assert_eq!(others, 1, "only B's model is refused\n{stdout}");
    assert!(mock.requests().is_empty(), "{}", seen(&mock));
}

/// `opencode acp`, set up as the opencode adapter (its slot's XDG
/// folders, the lent cache), on the mock provider's model, which its
/// configuration names: its session offers no models to set.
fn opencode_acp(mock: &MockModel) -> Setup {
    let mut setup = Setup {
        agent: "acp",
        agent_toml: "cmd = \"opencode acp\"\n",
        ..opencode(mock)
    };
    let config = &mut setup.files[0];
    let mut json: Value = serde_json::from_str(&config.1).unwrap();
    json["model"] = json!("mock/gpt-5.4");
    config.1 = json.to_string();
    setup
}

/// `opencode acp` merges through the ACP client, confined and proxied as
/// the opencode adapter is: it calls its own server on its loopback,
/// which `NO_PROXY` keeps from the proxy. Known limits, asserted as they
/// are: opencode 1.18.33's prompt result gives the `usage` of its last
/// step only (one model call of the two), and as its session offers no
/// models and names none, and its `usage_update` costs nothing, the
/// attempt's cost is unknown.
#[test]
fn opencode_acp_ok() {
    if !wanted("opencode_acp_ok") {
        return;
    }
    let mock = MockModel::start(script(None));
    let setup = opencode_acp(&mock);
    let env = tier_env(&setup, &mock, "timeout_secs = 900\n");
    let (out, summary) = run(&env, &setup);
    let logs = logs(&env);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{summary}\n{logs}\n{}",
        seen(&mock)
    );
    assert_eq!(summary["merged"], json!(["A"]), "{summary}\n{logs}");
    assert_proxied(&env, &mock);
    assert!(logs.contains("acp: session "), "{logs}");
    let answered = mock
        .answered()
        .into_iter()
        .filter(|r| r.offers_tools())
        .count();
    assert!(answered >= 2, "{}", seen(&mock));
    let report = report(&env);
    let last = report["tickets"][0]["attempts"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["usage"], usage_of(1, false), "{last}");
    assert!(last["cost_usd"].is_null(), "{last}");
}

/// The three ACP agents meet a spoiled answer (cut mid-way, or garbage
/// after its end) with a classified outcome, never a hang, then merge:
/// the outcomes of their attempts, as each meets it.
fn acp_spoiled(test: &str, setup: fn(&MockModel) -> Setup, trouble: Trouble, outcomes: &[&str]) {
    super::troubles::spoiled(test, setup, trouble, outcomes);
}

/// Called again within the attempt, or read with the garbage ignored.
const MERGED: &[&str] = &["finished"];

/// Gemini CLI answers the prompt with a JSON-RPC error 500 carrying its
/// own error (`terminated`, its JSON parse error): `Failed`, a strike.
const FAILED_ONCE: &[&str] = &["failed", "finished"];

#[test]
fn gemini_acp_truncated() {
    acp_spoiled(
        "gemini_acp_truncated",
        gemini_acp,
        Trouble::Truncated,
        FAILED_ONCE,
    );
}

#[test]
fn gemini_acp_trailing_garbage() {
    acp_spoiled(
        "gemini_acp_trailing_garbage",
        gemini_acp,
        Trouble::TrailingGarbage,
        FAILED_ONCE,
    );
}

#[test]
fn claude_agent_acp_truncated() {
    acp_spoiled(
        "claude_agent_acp_truncated",
        claude_agent_acp,
        Trouble::Truncated,
        MERGED,
    );
}

#[test]
fn claude_agent_acp_trailing_garbage() {
    acp_spoiled(
        "claude_agent_acp_trailing_garbage",
        claude_agent_acp,
        Trouble::TrailingGarbage,
        MERGED,
    );
}

#[test]
fn opencode_acp_truncated() {
    acp_spoiled(
        "opencode_acp_truncated",
        opencode_acp,
        Trouble::Truncated,
        MERGED,
    );
}

#[test]
fn opencode_acp_trailing_garbage() {
    acp_spoiled(
        "opencode_acp_trailing_garbage",
        opencode_acp,
        Trouble::TrailingGarbage,
        MERGED,
    );
}
