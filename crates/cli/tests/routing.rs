//! Routing end to end: which CLI and model each ticket gets from
//! `[agents]`, `[families]`, tiers and pool hints, and the routing errors
//! `preflight` and `run` refuse with.

use planwright_testkit::{git, text, write, Env};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// This file's environments: `files` committed in `repo/`, the binary
/// run in the root.
fn env_with(files: &[(&str, &str)]) -> Env {
    Env::new(files).with_cli(BIN)
}

/// A claude CLI that writes its command line into the ticket's file.
const ECHOING_CLAUDE: &str = r#"#!/bin/sh
printf '%s\n' "$*" > "$(echo "$PLANWRIGHT_TICKET" | tr A-Z a-z).txt"
cat > /dev/null
cat <<'EOF'
{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-6"}
{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s-1","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":40}}
EOF
"#;

const ROUTED_PLAN: &str = r#"{
  "planwright": 1, "source_format": "native", "base": "main",
  "gates": [{"name": "readme", "argv": ["test", "-f", "README.md"]}],
  "tickets": [
    {"id": "A", "title": "a", "body": "make a", "scope": [{"pattern": "a.txt", "op": "create"}], "tier": "mid", "pool_hint": "gemini"},
    {"id": "B", "title": "b", "body": "make b", "scope": [{"pattern": "b.txt", "op": "create"}], "tier": "frontier", "pool_hint": "claude"}CHEAP
  ]
}"#;

fn routed_env(cheap: bool) -> Env {
    use std::os::unix::fs::PermissionsExt;
    let env = env_with(&[("README.md", "hi\n")]);
    let c = r#",
    {"id": "C", "title": "c", "body": "make c", "scope": [{"pattern": "c.txt", "op": "create"}], "tier": "cheap", "pool_hint": "gemini"}"#;
    let plan = ROUTED_PLAN.replace("CHEAP", if cheap { c } else { "" });
    write(env.root(), "plan.json", &plan);
    let fake = env.root().join("bin/claude");
    write(env.root(), "bin/claude", ECHOING_CLAUDE);
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = format!("[agent]\nprogram = \"{}\"\n", fake.display());
    write(env.root(), "planwright.toml", &config);
    env
}

#[test]
fn a_claude_run_gives_gemini_hinted_tickets_claudes_model_and_says_so() {
    let env = routed_env(false);
    let args = ["plan.json", "--repo", "repo", "--agent", "claude"];
    let dry = env.planwright(&[&["run", "--dry-run"][..], &args].concat());
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    let stdout = text(&dry.stdout);
    assert!(
        stdout.contains("routes (ticket -> adapter -> model):"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  B -> claude -> claude-sonnet-4-6\n"),
        "{stdout}"
    );
    let stderr = text(&dry.stderr);
    let warning = "routing: A -> claude -> claude-sonnet-4-6: its pool hint `gemini` cannot run on the `claude` CLI";
    assert!(stderr.contains(warning), "{stderr}");
    let out = env.planwright(&[&["run"][..], &args].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for file in ["a.txt", "b.txt"] {
        let argv = git(&env.repo(), &["show", &format!("main:{file}")]);
        assert!(argv.contains("--model claude-sonnet-4-6"), "{file}: {argv}");
        assert!(!argv.contains("gemini"), "{file}: {argv}");
    }
}

/// `preflight` of the routed plan with `--agent claude`.
const CLAUDE_PREFLIGHT: &[&str] = &[
    "preflight",
    "plan.json",
    "--repo",
    "repo",
    "--agent",
    "claude",
];

/// Adds `more` to the end of the set-up's `planwright.toml`.
fn append_config(env: &Env, more: &str) {
    let config = std::fs::read_to_string(env.root().join("planwright.toml")).unwrap();
    write(env.root(), "planwright.toml", &format!("{config}{more}"));
}

/// [`CLAUDE_PREFLIGHT`], which must fail: its stdout.
fn failed_claude_preflight(env: &Env) -> String {
    let out = env.planwright(CLAUDE_PREFLIGHT);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    stdout
}

/// A gateway at a loopback address (here in Claude Code's settings) is
/// refused by the proxy in every attempt: preflight names the `hosts`
/// line; a key variable Codex's config names but the agent is not given
/// is named with its `[agent] env` line.
#[test]
fn preflight_names_a_loopback_gateway_and_a_key_not_passed() {
    let env = routed_env(false);
    let home = env.cli().home().to_path_buf();
    write(
        &home,
        ".claude/settings.json",
        r#"{"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080/v1", "ANTHROPIC_API_KEY": "k"}}"#,
    );
    let stdout = failed_claude_preflight(&env);
    assert!(
        stdout.contains("points the agent at `http://127.0.0.1:8080/v1`, a loopback address"),
        "{stdout}"
    );
    assert!(
        stdout.contains("`[sandbox] hosts = { \"model-gateway.test\" = \"127.0.0.1:8080\" }`"),
        "{stdout}"
    );
    write(
        &home,
        ".codex/config.toml",
        "model_provider = \"mock\"\n[model_providers.mock]\nbase_url = \"http://mock-model.test:9/v1\"\nenv_key = \"MOCK_KEY\"\nwire_api = \"responses\"\n",
    );
    let out = env.planwright(&[
        "preflight",
        "plan.json",
        "--repo",
        "repo",
        "--agent",
        "codex",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("names the key variable `MOCK_KEY`, which the agent is not given"),
        "{stdout}"
    );
    assert!(
        stdout.contains("`[agent] env = [\"MOCK_KEY\"]`"),
        "{stdout}"
    );
}

#[test]
fn preflight_fails_naming_a_ticket_the_agents_family_has_no_model_for() {
    let env = routed_env(true);
    append_config(&env, "[families.claude]\nmid = \"claude-sonnet-4-6\"\n");
    let stdout = failed_claude_preflight(&env);
    let error = "routing: ticket C: the family table has no claude model of tier `cheap`";
    assert!(stdout.contains(error), "{stdout}");
    assert!(
        stdout.contains("routing: B -> claude -> claude-sonnet-4-6"),
        "{stdout}"
    );
}

/// A gemini CLI that writes its command line into the ticket's file and
/// prints Gemini CLI's `json` result.
const ECHOING_GEMINI: &str = r#"#!/bin/sh
printf 'gemini %s\n' "$*" > "$(echo "$PLANWRIGHT_TICKET" | tr A-Z a-z).txt"
cat > /dev/null
cat <<'EOF'
{"session_id": "g1", "response": "Done.", "stats": {"models": {"gemini-3.1-pro-low": {"tokens": {"prompt": 10, "candidates": 5, "cached": 0}}}}}
EOF
"#;

/// `[agents]` sends each ticket to its family's CLI, each with a model of
/// its own family; `--agent` takes precedence and sends all to one.
#[test]
fn agents_send_each_family_to_its_cli_and_the_agent_flag_takes_precedence() {
    use std::os::unix::fs::PermissionsExt;
    let env = routed_env(true);
    write(env.root(), "bin/gemini", ECHOING_GEMINI);
    let gemini = env.root().join("bin/gemini");
    std::fs::set_permissions(&gemini, std::fs::Permissions::from_mode(0o755)).unwrap();
    write(
        env.root(),
        "planwright.toml",
        "[agents]\nclaude = \"claude\"\ngemini = \"gemini\"\n",
    );
    let path = format!(
        "{}:{}",
        env.root().join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let planwright = |args: &[&str]| {
        env.command()
            .env("PATH", &path)
            .args(args)
            .output()
            .unwrap()
    };
    let dry = planwright(&["run", "plan.json", "--repo", "repo", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    let (stdout, stderr) = (text(&dry.stdout), text(&dry.stderr));
    for route in [
        "  A -> gemini -> gemini-3.1-pro-low\n",
        "  B -> claude -> claude-sonnet-4-6\n",
        "  C -> gemini -> gemini-3-flash\n",
    ] {
        assert!(stdout.contains(route), "{route}: {stdout}");
    }
    assert!(
        !stderr.contains("routing:"),
        "every hint is honoured: {stderr}"
    );
    let out = planwright(&["run", "plan.json", "--repo", "repo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let a = git(&env.repo(), &["show", "main:a.txt"]);
    assert!(
        a.starts_with("gemini ") && a.contains("-m gemini-3.1-pro-low") && !a.contains("claude"),
        "{a}"
    );
    let c = git(&env.repo(), &["show", "main:c.txt"]);
    assert!(
        c.contains("-m gemini-3-flash") && !c.contains("claude"),
        "{c}"
    );
    let b = git(&env.repo(), &["show", "main:b.txt"]);
    assert!(
        b.contains("--model claude-sonnet-4-6") && !b.contains("gemini"),
        "{b}"
    );
    let one = planwright(CLAUDE_PREFLIGHT);
    let stdout = text(&one.stdout);
    assert_eq!(one.status.code(), Some(0), "{stdout}");
    let c = "routing: C -> claude -> claude-haiku-4-5: its pool hint `gemini` cannot run on the `claude` CLI";
    assert!(stdout.contains(c), "{stdout}");
}

/// A ticket no `[agents]` entry serves, with no `[agent] name`, fails
/// preflight naming it; an entry of another family's adapter is refused.
#[test]
fn agents_that_leave_a_ticket_without_an_agent_or_mismatch_a_family_are_refused() {
    let env = routed_env(false);
    write(
        env.root(),
        "planwright.toml",
        "[agents]\nclaude = \"claude\"\n",
    );
    let out = env.planwright(&["preflight", "plan.json", "--repo", "repo"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let error = "routing: ticket A: no agent of `[agents]` runs its model family";
    assert!(stdout.contains(error), "{stdout}");
    write(
        env.root(),
        "planwright.toml",
        "[agents]\ngemini = \"claude\"\n",
    );
    let out = env.planwright(&["preflight", "plan.json", "--repo", "repo"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let refused = "`[agents] gemini = \"claude\"`: the `claude` adapter runs only claude models";
    assert!(stderr.contains(refused), "{stderr}");
}

/// The routed plan's set-up with `model` as `[agent] model`.
fn with_agent_model(env: &Env, model: &str) {
    let config = std::fs::read_to_string(env.root().join("planwright.toml")).unwrap();
    let kept: String = config
        .lines()
        .filter(|l| !l.starts_with("model = "))
        .map(|l| format!("{l}\n"))
        .collect();
    let config = kept.replace("[agent]\n", &format!("[agent]\nmodel = \"{model}\"\n"));
    write(env.root(), "planwright.toml", &config);
}

/// `[agent] model` of another family than the agent's stops preflight and
/// the run before any attempt, naming the agent, the tickets and the fix;
/// one of its own family is every ticket's model, as the routes say.
#[test]
fn an_agent_model_of_another_family_is_a_routing_error_and_one_of_its_own_is_every_tickets() {
    let env = routed_env(false);
    with_agent_model(&env, "gemini-2.5-flash");
    let stdout = failed_claude_preflight(&env);
    let error = "routing: agent `claude`: `[agent] model = \"gemini-2.5-flash\"` is a gemini model, and the `claude` CLI runs only claude models (tickets A, B)";
    let hint = "hint: set `[agent] model` to a claude model such as `claude-sonnet-4-6`";
    for said in [error, hint] {
        assert!(stdout.contains(said), "{said}\n{stdout}");
    }
    let args = ["plan.json", "--repo", "repo", "--agent", "claude"];
    let run = env.planwright(&[&["run"][..], &args].concat());
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert!(text(&run.stdout).contains(error), "{}", text(&run.stdout));
    assert!(!env.repo().join(".planwright/runs").exists());

    with_agent_model(&env, "claude-opus-4-6");
    let dry = env.planwright(&[&["run", "--dry-run"][..], &args].concat());
    let stdout = text(&dry.stdout);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    for t in ["A", "B"] {
        let route = format!("  {t} -> claude -> claude-opus-4-6 (`[agent] model`)\n");
        assert!(stdout.contains(&route), "{stdout}");
    }
    let out = env.planwright(&[&["run"][..], &args].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let argv = git(&env.repo(), &["show", "main:a.txt"]);
    assert!(argv.contains("--model claude-opus-4-6"), "{argv}");
}

/// `[review] model` of another family than the reviewer's CLI stops the
/// run before it starts.
#[test]
fn a_review_model_of_another_family_than_its_reviewer_is_refused() {
    let env = routed_env(false);
    append_config(
        &env,
        "[review]\nagent = \"codex\"\nmodel = \"claude-sonnet-4-6\"\n",
    );
    let args = ["run", "plan.json", "--repo", "repo", "--agent", "claude"];
    let out = env.planwright(&args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let refused = "`[review] model = \"claude-sonnet-4-6\"` is a claude model, and the reviewer's CLI runs only gpt models";
    assert!(stderr.contains(refused), "{stderr}");
    assert!(!env.repo().join(".planwright/runs").exists());
}

/// `[agent] model` is every attempt's model, over the routed one: the
/// `cmd` agent's `{model}`, the model stored with the attempt, and the
/// pool a refusal pauses (`claude`, not the routed `gemini-pro`).
#[test]
fn the_agent_model_is_every_attempts_and_its_pools() {
    let env = routed_env(false);
    with_agent_model(&env, "claude-sonnet-4-6");
    append_config(&env, "max_pause = 1\n");
    // Refused once (EX_TEMPFAIL), then it writes the model it was given.
    let template = "sh -c '[ \"$PLANWRIGHT_ATTEMPT\" = 1 ] && exit 75; echo \"$1\" > \"$(echo $PLANWRIGHT_TICKET | tr A-Z a-z).txt\"' sh {model}";
    let agent = ["--agent", "cmd", "--agent-cmd", template, "--jobs", "1"];
    let out = env.planwright(&[&["run", "plan.json", "--repo", "repo"][..], &agent].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for file in ["a.txt", "b.txt"] {
        let shown = git(&env.repo(), &["show", &format!("main:{file}")]);
        assert_eq!(shown.trim(), "claude-sonnet-4-6", "{file}");
    }
    let report = env.planwright(&["report", "--repo", "repo", "--output", "json"]);
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let models: Vec<&Value> = report["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["attempts"].as_array().unwrap())
        .map(|a| &a["model"])
        .collect();
    assert!(
        models.iter().all(|m| *m == "claude-sonnet-4-6"),
        "{models:?}"
    );
    let events = env.run_file("events.jsonl");
    let pools: Vec<Value> = events
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "pool_paused")
        .map(|e| e["pool"].clone())
        .collect();
    assert!(
        !pools.is_empty() && pools.iter().all(|p| p == "claude"),
        "{pools:?}"
    );
}
