//! The worker protocol's JSON Schema: checked in as the types say, and
//! every message a coordinator or worker writes is one it accepts.

use planwright_engine::agent::Usage;
use planwright_engine::agent::{Activity, ActivityKind, AgentReport, AgentSpec};
use planwright_engine::remote::protocol::{
    self, AttemptEnd, AttemptSpec, FromWorker, SandboxState, ToWorker, WorkerSettings, PROTOCOL,
};
use serde_json::{json, Value};

fn schema_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../schemas/worker-protocol.schema.json")
}

#[test]
fn checked_in_schema_matches_the_messages() {
    let generated = serde_json::to_string_pretty(&protocol::schema()).unwrap() + "\n";
    let path = schema_path();
    if std::env::var_os("PLANWRIGHT_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "schemas/worker-protocol.schema.json is out of date with the messages; run `PLANWRIGHT_BLESS=1 cargo test -p planwright-engine --test worker_protocol` and commit it"
    );
}

fn settings() -> WorkerSettings {
    WorkerSettings {
        unsandboxed: false,
        setup: vec![vec!["npm".into(), "ci".into()]],
        setup_inputs: vec!["package-lock.json".into()],
        pristine: false,
        setup_timeout_secs: Some(600),
        setup_env: vec!["NPM_*".into()],
        agent_network: planwright_config::AgentNetwork::Proxy,
        allow: vec![planwright_config::HostPort::parse("registry.npmjs.org:443").unwrap()],
        hosts: vec![("mock".into(), "127.0.0.1:8080".parse().unwrap())],
        log_limit: Some(1 << 20),
    }
}

/// One message of each kind, as written on the wire.
fn every_message() -> Vec<Value> {
    let spec = AttemptSpec {
        slot: 1,
        object_format: "sha1".into(),
        ticket: "T1".into(),
        attempt: 2,
        base_commit: "a".repeat(40),
        start_commit: "b".repeat(40),
        charter: "# T1\n".into(),
        message: "T1: work\n".into(),
        agent_timeout_secs: Some(1800),
        agent: AgentSpec::cmd("sh agent.sh"),
        model: Some("claude-sonnet-4-6".into()),
        budget_usd: Some(1.5),
        settings: settings(),
        heartbeat_ms: 5000,
        lost_after_ms: 30000,
        resume_key: Some("0123456789abcdef0123456789abcdef".into()),
    };
    let usage = Usage {
        input_tokens: 1,
        output_tokens: 2,
        cache_read_tokens: 3,
        cache_write_tokens: 4,
    };
    let mut end = AttemptEnd::new(&AgentReport::from(
        planwright_engine::agent::AgentOutcome::Finished,
    ));
    end.usage = Some(usage);
    end.rejected = Some(planwright_engine::Failure::new(
        planwright_engine::FailureKind::ScopeViolation,
        "creates `x`",
    ));
    let to = [
        ToWorker::Hello {
            protocol: PROTOCOL,
            planwright: "0.1.0".into(),
        },
        ToWorker::Attempt(Box::new(spec)),
        ToWorker::Objects { bytes: 10 },
        ToWorker::Cancel,
        ToWorker::Heartbeat { ack: 3 },
        ToWorker::Resume {
            slot: 0,
            object_format: "sha1".into(),
            key: "0123456789abcdef0123456789abcdef".into(),
            ticket: "T1".into(),
            attempt: 1,
            ack: 2,
        },
        ToWorker::Check {
            programs: vec!["claude".into()],
        },
    ];
    let from = [
        FromWorker::Hello {
            protocol: PROTOCOL,
            planwright: "0.1.0".into(),
            sandbox: SandboxState {
                enforced: true,
                detail: "landlock".into(),
            },
            unsandboxed: false,
        },
        FromWorker::Checked {
            missing: vec!["claude".into()],
        },
        FromWorker::Heartbeat { ack: 1 },
        FromWorker::Resumed { ack: 4 },
        FromWorker::Wants {
            missing: vec!["a".repeat(40)],
            have: vec![],
        },
        FromWorker::Progress {
            phase: planwright_engine::Phase::Agent,
        },
        FromWorker::Usage { model: None, usage },
        FromWorker::Activity {
            activity: Activity {
                kind: ActivityKind::ToolCall,
                text: "edit a.txt".into(),
                status: Some("completed".into()),
            },
        },
        FromWorker::Log {
            file: "attempt-1.agent.log".into(),
            bytes: 5,
        },
        FromWorker::Candidate {
            commit: "c".repeat(40),
            bytes: 100,
        },
        FromWorker::Result(Box::new(end)),
        FromWorker::Refused {
            reason: "no sandbox".into(),
            hint: "run on Linux".into(),
        },
    ];
    let mut all: Vec<Value> = to
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect();
    all.extend(from.iter().map(|m| serde_json::to_value(m).unwrap()));
    all
}

#[test]
fn every_message_is_one_the_schema_accepts_and_others_are_not() {
    let validator = jsonschema::validator_for(&protocol::schema()).expect("the schema compiles");
    for m in every_message() {
        let errors: Vec<String> = validator.iter_errors(&m).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{m}: {errors:?}");
    }
    for bad in [
        json!({"type": "hello", "protocol": 1}),
        json!({"type": "launch", "ticket": "T1"}),
        json!({"type": "log", "file": "x", "bytes": 1, "extra": true}),
    ] {
        assert!(!validator.is_valid(&bad), "accepted {bad}");
    }
}
