//! The `acp` agent against a fake ACP agent (`tests/data/fake-acp.sh`), a
//! shell script playing scripted sessions: an edit, permission requests
//! planwright must deny, provider and plain errors, a hang past the
//! timeout, and malformed messages. No network, no model.

use planwright_engine::agent::{
    self, Activity, ActivityKind, ActivitySink, AgentOutcome, AgentReport, AttemptContext,
    CostSource, Usage,
};
use planwright_engine::process::Cancel;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const FAKE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/fake-acp.sh");

/// One attempt of the fake agent in `mode`.
struct Run {
    report: AgentReport,
    log: String,
    workspace: PathBuf,
    outside: PathBuf,
    activities: Vec<Activity>,
    _tmp: tempfile::TempDir,
}

/// The activities an attempt fed, in order.
#[derive(Debug, Default)]
struct Recorded(Mutex<Vec<Activity>>);

impl ActivitySink for Recorded {
    fn activity(&self, activity: &Activity) {
        self.0.lock().unwrap().push(activity.clone());
    }
}

/// How an attempt is run besides its mode.
#[derive(Default)]
struct With {
    timeout: Option<Duration>,
    model: Option<&'static str>,
    /// Cancelled (as Ctrl-C cancels the run) once the fake agent's turn
    /// has started.
    cancel: bool,
    /// The cap of the agent log, in bytes.
    log_limit: Option<u64>,
    /// `[agent] line_limit_kib`, in bytes.
    line_limit: Option<u64>,
    /// The file name the fake agent is started as (a known ACP agent's).
    program: Option<&'static str>,
}

impl With {
    fn model(model: &'static str) -> With {
        With {
            model: Some(model),
            ..With::default()
        }
    }

    fn cancelled() -> With {
        With {
            cancel: true,
            ..With::default()
        }
    }
}

fn attempt(mode: &str, timeout: Option<Duration>) -> Run {
    attempt_with(
        mode,
        With {
            timeout,
            ..With::default()
        },
    )
}

fn attempt_with(mode: &str, with: With) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("ws");
    let run_dir = tmp.path().join("run");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&run_dir).unwrap();
    let outside = tmp.path().join("outside.txt");
    let prompt_file = run_dir.join("T1.prompt.md");
    std::fs::write(&prompt_file, "Write hello.txt.\n").unwrap();
    let template = match with.program {
        Some(name) => {
            let wrapper = tmp.path().join(name);
            std::fs::write(&wrapper, format!("#!/bin/sh\nexec bash {FAKE} \"$@\"\n")).unwrap();
            std::fs::set_permissions(
                &wrapper,
                std::os::unix::fs::PermissionsExt::from_mode(0o755),
            )
            .unwrap();
            format!("{} {mode} {}", wrapper.display(), outside.display())
        }
        None => format!("bash {FAKE} {mode} {}", outside.display()),
    };
    let mut opts = agent::AgentOptions {
        cmd: Some(template),
        ..agent::AgentOptions::default()
    };
    if let Some(limit) = with.line_limit {
        opts.line_limit = limit;
    }
    let agent = agent::from_options("acp", &opts).unwrap();
    let recorded = Arc::new(Recorded::default());
    let ctx = AttemptContext {
        ticket: "T1".into(),
        attempt: 1,
        workspace: workspace.clone(),
        prompt_file,
        log: run_dir.join("T1.log"),
        timeout: with.timeout,
        model: with.model.map(String::from),
        env: vec![],
        confine: None,
        log_limit: with.log_limit,
        usage_sink: None,
        activity_sink: Some(recorded.clone()),
    };
    let cancel = Cancel::default();
    if with.cancel {
        let (cancel, started) = (cancel.clone(), workspace.join("turn-started"));
        std::thread::spawn(move || {
            while !started.exists() {
                std::thread::sleep(Duration::from_millis(10));
            }
            cancel.cancel();
        });
    }
    let report = agent.attempt(&ctx, &cancel).unwrap();
    let log = std::fs::read_to_string(&ctx.log).unwrap();
    let activities = recorded.0.lock().unwrap().clone();
    Run {
        report,
        log,
        workspace,
        outside,
        activities,
        _tmp: tmp,
    }
}

/// The message the fake agent saved in `file` of its workspace.
fn saved(run: &Run, file: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(run.workspace.join(file)).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}: {text}"))
}

fn files(run: &Run) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(&run.workspace)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_edit_inside_the_workspace_is_allowed_and_the_turn_finishes() {
    let run = attempt("edit", None);
    assert_eq!(run.report.outcome, AgentOutcome::Finished, "{}", run.log);
    let hello = std::fs::read_to_string(run.workspace.join("hello.txt")).unwrap();
    assert_eq!(hello, "hello\n");
    assert_eq!(
        run.report.usage,
        Some(Usage {
            input_tokens: 100,
            output_tokens: 30,
            cache_read_tokens: 20,
            cache_write_tokens: 5,
        })
    );
    assert_eq!(run.report.session_id.as_deref(), Some("s1"));
    assert_eq!(run.report.final_message.as_deref(), Some("wrote hello.txt"));
    for line in [
        "acp: session s1",
        "acp: plan ",
        "acp: tool_call c1 Write hello.txt pending",
        "acp: permission allowed: edit ",
        "acp: tool_call_update c1  completed",
        "acp: message: hello.txt",
        "acp: turn ended: end_turn",
    ] {
        assert!(
            run.log.contains(line),
            "no `{line}` in the log:\n{}",
            run.log
        );
    }
    let tool = |status: &str| Activity {
        kind: ActivityKind::ToolCall,
        text: "Write hello.txt".into(),
        status: Some(status.into()),
    };
    assert_eq!(
        run.activities,
        [
            Activity {
                kind: ActivityKind::Plan,
                text: "write hello.txt (pending)".into(),
                status: None,
            },
            tool("pending"),
            tool("completed"),
            Activity {
                kind: ActivityKind::Message,
                text: "wrote hello.txt".into(),
                status: None,
            },
        ]
    );
    // The client lends nothing, at the pinned version.
    let init = saved(&run, "initialize.json");
    assert_eq!(init["params"]["protocolVersion"], 1);
    let caps = &init["params"]["clientCapabilities"];
    assert_eq!(caps["fs"]["readTextFile"], false);
    assert_eq!(caps["fs"]["writeTextFile"], false);
    assert_eq!(caps["terminal"], false);
}

#[test]
fn an_edit_outside_the_workspace_and_a_command_are_denied_and_logged() {
    let run = attempt("deny", None);
    assert_eq!(run.report.outcome, AgentOutcome::Finished, "{}", run.log);
    assert!(!run.outside.exists(), "the edit outside was allowed");
    assert_eq!(files(&run), Vec::<String>::new(), "the command was allowed");
    let denials = run.log.matches("acp: permission denied: ").count();
    assert_eq!(denials, 2, "{}", run.log);
    assert!(!run.log.contains("permission allowed"), "{}", run.log);
}

/// claude-agent-acp's usage is read as it means it (`inputTokens` leave
/// the cache out), and the cost of its last `usage_update` is the
/// attempt's, as reported.
#[test]
fn a_known_agents_usage_is_read_as_it_means_it_and_its_cost_reported() {
    let run = attempt_with(
        "claude",
        With {
            program: Some("claude-agent-acp"),
            ..With::default()
        },
    );
    assert_eq!(run.report.outcome, AgentOutcome::Finished, "{}", run.log);
    assert_eq!(
        run.report.usage,
        Some(Usage {
            input_tokens: 1390,
            output_tokens: 110,
            cache_read_tokens: 3100,
            cache_write_tokens: 2000,
        })
    );
    assert_eq!(run.report.cost, Some((0.01425, CostSource::Reported)));
}

/// Gemini CLI's quota counts have no cache split: a cost computed from
/// them is an estimate.
#[test]
fn a_cost_from_gemini_quota_counts_is_estimated() {
    let run = attempt_with("models", With::model("slow-2"));
    assert_eq!(run.report.cost, None, "no price for the fake's models");
    let run = attempt_with("gemini-quota", With::default());
    assert_eq!(run.report.outcome, AgentOutcome::Finished, "{}", run.log);
    let (usd, source) = run.report.cost.expect("priced");
    assert_eq!(source, CostSource::Estimated);
    assert!(
        (usd - (1000.0 * 1.25 + 100.0 * 10.0) / 1e6).abs() < 1e-12,
        "{usd}"
    );
}

/// With `log_limit_mib = 1`, 40 MB of lines that are not the protocol
/// and a 64 MiB line leave a log of about 1 MiB: planwright's notes about
/// them (which quote the agent) go through the same cap as its output.
#[test]
fn an_agents_flood_and_its_notes_stay_within_the_log_limit() {
    let run = attempt_with(
        "flood",
        With {
            log_limit: Some(1 << 20),
            ..With::default()
        },
    );
    assert_eq!(
        run.report.outcome,
        AgentOutcome::Finished,
        "{}",
        &run.log[run.log.len() - 2000..]
    );
    // The limit, its marker, the dropped count and the lines planwright
    // writes after the agent's process ended.
    assert!(run.log.len() < (1 << 20) + 4096, "{}", run.log.len());
    assert!(run.log.contains("more bytes of output were dropped"));
}

/// A line past `[agent] line_limit_kib` is cut, said so in the log, and
/// never taken for a message.
#[test]
fn a_line_past_the_line_limit_is_cut_and_noted() {
    let run = attempt_with(
        "long",
        With {
            line_limit: Some(1024),
            ..With::default()
        },
    );
    assert_eq!(run.report.outcome, AgentOutcome::Finished, "{}", run.log);
    assert!(
        run.log.contains(
            "[planwright: a line of output was longer than 1024 bytes; the 3976 bytes past that were not read]"
        ),
        "{}",
        run.log
    );
    assert!(
        run.log
            .contains("acp: not a JSON-RPC message, ignored (5000 bytes): yyy"),
        "{}",
        run.log
    );
}

/// An edit offered only `allow_always` (and `reject_once`) is rejected:
/// one answer never decides the agent's later requests.
#[test]
fn an_edit_offered_only_allow_always_is_rejected() {
    let run = attempt("always", None);
    assert_eq!(run.report.outcome, AgentOutcome::Finished, "{}", run.log);
    let answer = saved(&run, "always-answer.json");
    assert_eq!(answer["result"]["outcome"]["optionId"], "no", "{answer}");
    assert!(!run.workspace.join("hello.txt").exists());
    assert!(
        run.log.contains("acp: permission denied: Write (edit) [")
            && run.log.contains("(the agent offered no allow_once option)"),
        "{}",
        run.log
    );
}

#[test]
fn a_provider_error_is_unavailable_and_a_refusal_fails() {
    let run = attempt("error", None);
    assert!(
        matches!(
            run.report.outcome,
            AgentOutcome::Unavailable { retry_after: Some(d), .. } if d == Duration::from_secs(30)
        ),
        "{:?}\n{}",
        run.report.outcome,
        run.log
    );
    let run = attempt("refusal", None);
    assert_eq!(
        run.report.outcome,
        AgentOutcome::Failed("ended its turn: refusal".into())
    );
}

#[test]
fn a_hung_turn_is_cancelled_at_the_timeout() {
    let run = attempt("hang", Some(Duration::from_millis(300)));
    assert_eq!(run.report.outcome, AgentOutcome::TimedOut, "{}", run.log);
    let cancel = saved(&run, "cancelled.json");
    assert_eq!(cancel["method"], "session/cancel");
    assert_eq!(cancel["params"]["sessionId"], "s1");
    assert!(run.log.contains("time is up"), "{}", run.log);
}

#[test]
fn malformed_messages_are_logged_and_fs_requests_refused() {
    let run = attempt("malformed", None);
    assert_eq!(run.report.outcome, AgentOutcome::Finished, "{}", run.log);
    assert_eq!(
        run.log.matches("acp: not a JSON-RPC message").count(),
        2,
        "{}",
        run.log
    );
    assert!(run
        .log
        .contains("acp: a message with neither method nor id"));
    assert!(run.log.contains("acp: refused fs/read_text_file"));
    let answer = saved(&run, "fs-answer.json");
    assert_eq!(answer["id"], "f1");
    assert_eq!(answer["error"]["code"], -32601);
}

/// Past 500 activities one says how many were left out; every text is
/// inert and at most 300 characters.
#[test]
fn activity_is_capped_cut_and_made_inert() {
    let run = attempt("chatty", None);
    assert_eq!(run.report.outcome, AgentOutcome::Finished, "{}", run.log);
    assert_eq!(run.activities.len(), 501);
    let first = &run.activities[0];
    assert_eq!(first.kind, ActivityKind::ToolCall);
    assert!(first.text.starts_with("Read f1\\u{202e} xxx"), "{first:?}");
    assert_eq!(first.text.chars().count(), 300);
    assert!(first.text.ends_with('…'));
    assert_eq!(
        run.activities[499].text.split(' ').nth(1),
        Some("f500\\u{202e}")
    );
    for a in &run.activities {
        assert!(
            !a.text.contains(|c: char| c.is_control() || c == '\u{202e}'),
            "{a:?}"
        );
    }
    assert_eq!(
        run.activities[500],
        Activity {
            kind: ActivityKind::Omitted,
            text: "10 more left out (an attempt shows at most 500)".into(),
            status: None,
        }
    );
}

/// A model the agent offers is set with `session/set_model`, and the
/// model that used the most tokens is recorded; one it does not offer
/// ends the attempt as unavailable (no strike), naming what it offers.
#[test]
fn the_attempts_model_is_set_when_offered_and_refused_when_not() {
    let run = attempt_with("models", With::model("slow-2"));
    assert_eq!(run.report.outcome, AgentOutcome::Finished, "{}", run.log);
    let set = saved(&run, "set-model.json");
    assert_eq!(set["method"], "session/set_model");
    assert_eq!(
        set["params"],
        serde_json::json!({"sessionId": "s1", "modelId": "slow-2"})
    );
    let prompt = std::fs::read_to_string(run.workspace.join("prompt.json")).unwrap();
    assert!(prompt.contains("\"method\":\"session/prompt\""), "{prompt}");
    assert_eq!(run.report.model.as_deref(), Some("slow-2"));
    assert_eq!(
        run.report.usage,
        Some(Usage {
            input_tokens: 50,
            output_tokens: 9,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        })
    );

    let run = attempt_with("models", With::model("big-3"));
    let why = "the agent does not offer model `big-3`; it offers `auto`, `fast-1`, `slow-2`";
    assert_eq!(
        run.report.outcome,
        AgentOutcome::Unavailable {
            retry_after: None,
            reason: why.into()
        },
        "{}",
        run.log
    );
    let read = |file: &str| std::fs::read_to_string(run.workspace.join(file)).unwrap_or_default();
    assert!(!read("set-model.json").contains("session/set_model"));
    assert!(!read("prompt.json").contains("session/prompt"));
}

/// Ctrl-C (the run's cancel) sends `session/cancel`, and the agent that
/// ends its turn is not stopped before; one that does not end it is
/// stopped after the grace period.
#[test]
fn a_cancelled_run_cancels_the_turn_and_waits_for_it_to_end() {
    let run = attempt_with("hang", With::cancelled());
    assert_eq!(run.report.outcome, AgentOutcome::Cancelled, "{}", run.log);
    let cancel = saved(&run, "cancelled.json");
    assert_eq!(cancel["method"], "session/cancel");
    assert!(
        run.log
            .contains("acp: the run was cancelled; cancelling the turn"),
        "{}",
        run.log
    );
    assert!(
        run.log.contains("acp: turn ended: cancelled"),
        "{}",
        run.log
    );
    assert!(!run.log.contains("did not end in time"), "{}", run.log);

    let run = attempt_with("deaf", With::cancelled());
    assert_eq!(run.report.outcome, AgentOutcome::Cancelled, "{}", run.log);
    assert!(
        run.log
            .contains("acp: the turn did not end in time; stopping the agent"),
        "{}",
        run.log
    );
}

/// An ACP command that starts a CLI planwright knows gets that CLI's slot
/// home, environment names, hosts and family; another command gets none.
#[test]
fn an_acp_command_of_a_known_cli_gets_that_clis_home_environment_and_family() {
    let gemini = agent::from_name("acp", Some("gemini --acp")).unwrap();
    let own = agent::from_name("gemini", None).unwrap();
    assert_eq!(gemini.family(), Some("gemini"));
    assert_eq!(gemini.hosts(), own.hosts());
    assert_eq!(gemini.env_names(), own.env_names());
    let dir = tempfile::tempdir().unwrap();
    let (home, own_home) = (dir.path().join("acp"), dir.path().join("gemini"));
    let vars = |env: Vec<(String, String)>| env.into_iter().map(|(k, _)| k).collect::<Vec<_>>();
    assert_eq!(
        vars(gemini.isolate(&home).unwrap()),
        vars(own.isolate(&own_home).unwrap())
    );
    let set = gemini.isolate(&home).unwrap();
    assert!(
        set.iter()
            .any(|(k, v)| k == "GEMINI_CLI_HOME" && v.starts_with(home.to_str().unwrap())),
        "{set:?}"
    );
    let other = agent::from_name("acp", Some("my-agent --stdio")).unwrap();
    assert_eq!(other.family(), None);
    assert!(other.hosts().is_empty() && other.env_names().is_empty());
    assert!(other.isolate(&dir.path().join("other")).unwrap().is_empty());
}

/// Preflight's probe asks for a session and no prompt: it says which
/// set-up the agent got and which models it offers, and refuses `[agent]
/// model` when the agent does not offer it (nor its preview).
#[test]
fn the_probe_names_the_set_up_and_the_models_and_refuses_one_not_offered() {
    let probe = |model: Option<&str>| {
        let dir = tempfile::tempdir().unwrap();
        let opts = agent::AgentOptions {
            cmd: Some(format!(
                "bash {FAKE} models {}",
                dir.path().join("o").display()
            )),
            model: model.map(String::from),
            ..agent::AgentOptions::default()
        };
        let agent = agent::from_options("acp", &opts).unwrap();
        agent.probe(dir.path(), None)
    };
    let found = probe(Some("slow-2")).unwrap().unwrap();
    assert!(found.said.starts_with("`bash "), "{found:?}");
    assert!(
        found.said.ends_with("with no CLI's set-up (the base environment and `[agent] env` only); name one with `[agent] state`; it offers `auto`, `fast-1`, `slow-2`"),
        "{found:?}"
    );
    let offers = ["auto", "fast-1", "slow-2"].map(String::from).to_vec();
    assert_eq!(found.offers, Some(offers), "kept for routing's check");
    let refused = probe(Some("gemini-9")).unwrap_err();
    assert!(
        refused.ends_with(
            "the agent does not offer model `gemini-9`; it offers `auto`, `fast-1`, `slow-2`"
        ),
        "{refused}"
    );
}

/// Preflight checks every model routing may give a ticket of an ACP
/// agent (its own `model`, its tier's candidates) against what the
/// agent's session offers, as an attempt matches them (a `-preview`
/// name is its model's): one `routing` error per model not offered,
/// naming its tickets and listing what is.
#[test]
fn preflight_refuses_a_routed_model_the_acp_agent_does_not_offer() {
    use planwright_engine::agent::Agents;
    use planwright_engine::{CheckName, CheckStatus};
    use planwright_testkit::{any, gate, plan, settings, ticket, Env};
    let env = Env::new(&[("README.md", "hi\n")]);
    let routed = |id: &str, key: &str, value: &str| {
        let mut t = ticket(id, serde_json::json!([any(&format!("{id}.txt"))]));
        if !key.is_empty() {
            t[key] = value.into();
        }
        t
    };
    let plan = plan(serde_json::json!({"gates": gate(&["true"]), "tickets": [
        routed("A", "model", "slow-2"),
        routed("B", "model", "fast-9"),
        routed("C", "model", "fast-9"),
        routed("D", "tier", "cheap"),
        routed("E", "", ""),
        routed("F", "model", "fast-1-preview"),
    ]}));
    let outside = env.root().join("outside.txt");
    let cmd = format!("bash {FAKE} models {}", outside.display());
    let agent = agent::from_name("acp", Some(&cmd)).unwrap();
    let agents = Agents::from(Arc::from(agent));
    let checks = planwright_engine::preflight(&env.repo(), &plan, &settings(), &[], &agents);
    let refused: Vec<&str> = (checks.iter())
        .filter(|c| c.check == CheckName::Routing && c.status == CheckStatus::Error)
        .map(|c| c.message.as_str())
        .collect();
    let offers = "it offers `auto`, `fast-1`, `slow-2`";
    assert_eq!(
        refused,
        [
            format!("agent `acp`: tickets B, C may be routed to model `fast-9`, and the agent does not offer model `fast-9`; {offers}"),
            format!("agent `acp`: ticket D may be routed to model `gemini-3-flash`, and the agent does not offer model `gemini-3-flash`; {offers}"),
        ],
        "{checks:#?}"
    );
    let hint = (checks.iter())
        .find(|c| c.status == CheckStatus::Error && c.message.contains("fast-9"))
        .unwrap();
    let said = hint.hint.as_deref().unwrap_or_default();
    assert!(
        said.contains("route B, C to a model the agent offers"),
        "{hint:?}"
    );
}

/// `[agent] state` names the set-up of a program planwright does not
/// know; one that names no adapter is refused, saying which there are.
#[test]
fn agent_state_names_the_set_up_of_an_unknown_program() {
    let opts = |state: &str| agent::AgentOptions {
        cmd: Some("my-claude-wrapper --acp".into()),
        state: Some(state.into()),
        ..agent::AgentOptions::default()
    };
    let wrapped = agent::from_options("acp", &opts("claude")).unwrap();
    let claude = agent::from_name("claude", None).unwrap();
    assert_eq!(wrapped.family(), Some("claude"));
    assert_eq!(wrapped.env_names(), claude.env_names());
    let dir = tempfile::tempdir().unwrap();
    let set = wrapped.isolate(&dir.path().join("acp")).unwrap();
    assert!(set.iter().any(|(k, _)| k == "CLAUDE_CONFIG_DIR"), "{set:?}");
    let known = agent::from_name("acp", Some("claude-agent-acp")).unwrap();
    assert_eq!(known.family(), Some("claude"));
    let Err(e) = agent::from_options("acp", &opts("clod")) else {
        panic!("an unknown state was taken");
    };
    let text = e.to_string();
    assert!(
        text.contains("`[agent] state = \"clod\"` names no adapter") && text.contains("`claude`"),
        "{text}"
    );
}

/// The run records who ran each attempt: the adapter, its program and
/// the routed model, in `attempt_started`.
#[test]
fn attempt_started_names_the_adapter_program_and_routed_model() {
    use planwright_engine::{AttemptAgent, Event};
    use planwright_testkit::{any, gate, plan, run_with, settings, ticket, Env};
    let env = Env::new(&[("README.md", "hi\n")]);
    let scope = serde_json::json!([any("hello.txt"), any("initialize.json")]);
    let plan = plan(serde_json::json!({
        "gates": gate(&["test", "-f", "hello.txt"]),
        "tickets": [ticket("A", scope)]
    }));
    let outside = env.root().join("outside.txt");
    let opts = agent::AgentOptions {
        cmd: Some(format!("bash {FAKE} edit {}", outside.display())),
        model: Some("fast-1".into()),
        ..agent::AgentOptions::default()
    };
    let agent = agent::from_options("acp", &opts).unwrap();
    let out = run_with(&env, &plan, &settings(), agent);
    assert!(out.summary.all_merged(), "{:?}", out.summary);
    let started: Vec<&Option<AttemptAgent>> = (out.events.iter())
        .filter_map(|e| match e {
            Event::AttemptStarted { agent, .. } => Some(agent),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        [&Some(AttemptAgent {
            adapter: "acp".into(),
            program: Some("bash".into()),
            model: Some("fast-1".into()),
        })]
    );
}

/// In a run, the attempt's activity reaches the event log as
/// `agent_activity` events, between its start and its report.
#[test]
fn a_runs_acp_attempt_emits_its_activity_as_events() {
    use planwright_engine::Event;
    use planwright_testkit::{any, gate, plan, run_with, settings, ticket, Env};
    let env = Env::new(&[("README.md", "hi\n")]);
    let scope = serde_json::json!([any("hello.txt"), any("initialize.json")]);
    let plan = plan(serde_json::json!({
        "gates": gate(&["test", "-f", "hello.txt"]),
        "tickets": [ticket("A", scope)]
    }));
    let outside = env.root().join("outside.txt");
    let template = format!("bash {FAKE} edit {}", outside.display());
    let agent = agent::from_name("acp", Some(&template)).unwrap();
    let out = run_with(&env, &plan, &settings(), agent);
    assert!(out.summary.all_merged(), "{:?}", out.summary);
    let activity: Vec<(u32, ActivityKind, &str, Option<&str>)> = out
        .events
        .iter()
        .filter_map(|e| match e {
            Event::AgentActivity {
                ticket,
                attempt,
                kind,
                text,
                status,
            } if ticket == "A" => Some((*attempt, *kind, text.as_str(), status.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(
        activity,
        [
            (1, ActivityKind::Plan, "write hello.txt (pending)", None),
            (
                1,
                ActivityKind::ToolCall,
                "Write hello.txt",
                Some("pending")
            ),
            (
                1,
                ActivityKind::ToolCall,
                "Write hello.txt",
                Some("completed")
            ),
            (1, ActivityKind::Message, "wrote hello.txt", None),
        ]
    );
    let reported = out
        .events
        .iter()
        .position(|e| matches!(e, Event::AgentReported { .. }))
        .unwrap();
    let last_activity = out
        .events
        .iter()
        .rposition(|e| matches!(e, Event::AgentActivity { .. }))
        .unwrap();
    assert!(last_activity < reported, "{:?}", out.events);
}
