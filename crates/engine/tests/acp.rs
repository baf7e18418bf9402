//! The `acp` agent against a fake ACP agent (`tests/data/fake-acp.sh`), a
//! shell script playing scripted sessions: an edit, permission requests
//! planwright must deny, provider and plain errors, a hang past the
//! timeout, and malformed messages. No network, no model.
#![forbid(unsafe_code)]

use planwright_engine::agent::{self, AgentOutcome, AgentReport, AttemptContext, Usage};
use planwright_engine::process::Cancel;
use std::path::PathBuf;
use std::time::Duration;

const FAKE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/fake-acp.sh");

/// One attempt of the fake agent in `mode`.
struct Run {
    report: AgentReport,
    log: String,
    workspace: PathBuf,
    outside: PathBuf,
    _tmp: tempfile::TempDir,
}

fn attempt(mode: &str, timeout: Option<Duration>) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("ws");
    let run_dir = tmp.path().join("run");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&run_dir).unwrap();
    let outside = tmp.path().join("outside.txt");
    let prompt_file = run_dir.join("T1.prompt.md");
    std::fs::write(&prompt_file, "Write hello.txt.\n").unwrap();
    let template = format!("bash {FAKE} {mode} {}", outside.display());
    let agent = agent::from_name("acp", Some(&template)).unwrap();
    let ctx = AttemptContext {
        ticket: "T1".into(),
        attempt: 1,
        workspace: workspace.clone(),
        prompt_file,
        log: run_dir.join("T1.log"),
        timeout,
        model: None,
        env: vec![],
        confine: None,
        log_limit: None,
        usage_sink: None,
        activity_sink: None,
    };
    let report = agent.attempt(&ctx, &Cancel::default()).unwrap();
    let log = std::fs::read_to_string(&ctx.log).unwrap();
    Run {
        report,
        log,
        workspace,
        outside,
        _tmp: tmp,
    }
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
        "acp: message: wrote hello.txt",
        "acp: turn ended: end_turn",
    ] {
        assert!(
            run.log.contains(line),
            "no `{line}` in the log:\n{}",
            run.log
        );
    }
    // The client lends nothing, at the pinned version.
    let init = std::fs::read_to_string(run.workspace.join("initialize.json")).unwrap();
    let init: serde_json::Value = serde_json::from_str(&init).unwrap();
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
    let cancel = std::fs::read_to_string(run.workspace.join("cancelled.json")).unwrap();
    let cancel: serde_json::Value = serde_json::from_str(&cancel).unwrap();
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
    let answer = std::fs::read_to_string(run.workspace.join("fs-answer.json")).unwrap();
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], "f1");
    assert_eq!(answer["error"]["code"], -32601);
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
