//! The worker protocol, version [`PROTOCOL`]:
//! JSON messages, one per line, each with a `type`; a message with a
//! `bytes` field is followed by exactly that many raw bytes (a git pack, a
//! piece of a log).

use crate::agent::{Activity, AgentReport};
use crate::model::report::{AgentOutcomeKind, CostSource, Usage};
use crate::model::Failure;
use planwright_config::{AgentNetwork, AgentSpec, HostPort};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};
use std::net::SocketAddr;

/// The protocol version this build speaks. A worker and a coordinator of
/// different versions refuse each other at `hello`.
pub const PROTOCOL: u32 = 3;

/// The longest line a peer may send: a charter is the largest.
const MAX_LINE: u64 = 16 << 20;

/// What the coordinator sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToWorker {
    /// The first message.
    Hello {
        /// [`PROTOCOL`].
        protocol: u32,
        /// The coordinator's planwright version.
        planwright: String,
    },
    /// One attempt to run.
    Attempt(Box<AttemptSpec>),
    /// The objects the worker said it lacks, as a git pack of `bytes`
    /// bytes (0: nothing was missing).
    Objects {
        /// The pack's length.
        bytes: u64,
    },
    /// End the attempt now (a timeout, Ctrl-C): the worker answers with a
    /// `cancelled` result.
    Cancel,
    /// The coordinator is still there: sent every `heartbeat_ms` of the
    /// attempt. A worker that hears nothing for `lost_after_ms` ends the
    /// attempt and exits.
    Heartbeat {
        /// The number of the last of the worker's journaled messages the
        /// coordinator heard (messages other than `heartbeat`, numbered
        /// from 1): the worker need not keep them for a resumption.
        #[serde(default)]
        ack: u64,
    },
    /// The first message of a new connection for an attempt whose
    /// connection broke: the worker keeping it answers `resumed` and sends
    /// again what the coordinator missed.
    Resume {
        /// The slot of the attempt (its `attempt`'s `slot`).
        slot: usize,
        /// The repository's object format (its `attempt`'s
        /// `object_format`): which of the cache's stores the slot is in.
        object_format: String,
        /// The attempt's `resume_key`: a worker keeps an attempt for a
        /// connection that knows it, and for no other.
        key: String,
        /// The attempt's ticket.
        ticket: String,
        /// The attempt's number.
        attempt: u32,
        /// The number of the last of the worker's journaled messages the
        /// coordinator heard.
        ack: u64,
    },
    /// Preflight: which of these programs (the agents' CLIs) can the
    /// worker not find on its `PATH`? Answered with `checked`.
    Check {
        /// Program names or paths.
        programs: Vec<String>,
    },
}

/// What a worker sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FromWorker {
    /// The answer to `hello`.
    Hello {
        /// [`PROTOCOL`].
        protocol: u32,
        /// The worker's planwright version.
        planwright: String,
        /// How the worker confines agents.
        sandbox: SandboxState,
        /// Whether it was started `--unsandboxed` (it runs the agents of a
        /// coordinator with `[sandbox] mode = "off"`).
        #[serde(default)]
        unsandboxed: bool,
    },
    /// The answer to `check`: the programs it cannot find.
    Checked {
        /// The programs of `check` not on the worker's `PATH`.
        missing: Vec<String>,
    },
    /// Which of the attempt's commits it lacks, and the commits it has that
    /// the pack may leave out.
    Wants {
        /// Commits the attempt needs that the worker's cache lacks.
        missing: Vec<String>,
        /// Commits the worker's cache holds (the pack's `--not`).
        have: Vec<String>,
    },
    /// A phase of the attempt begins (`workspace`, `agent`, `commit`).
    Progress {
        /// The phase.
        phase: crate::model::Phase,
    },
    /// The agent's running token totals.
    Usage {
        /// The model, as the CLI named it.
        model: Option<String>,
        /// Tokens so far.
        usage: Usage,
    },
    /// What the agent is doing, for the live views (inert and cut, as
    /// the coordinator makes it again).
    Activity {
        /// The activity.
        activity: Activity,
    },
    /// More of one of the attempt's files (its agent log, the ticket
    /// log), `bytes` raw bytes to append.
    Log {
        /// The file's name in the attempt's folder (no `/`).
        file: String,
        /// The piece's length.
        bytes: u64,
    },
    /// The candidate commit, and a git pack of `bytes` bytes holding it and
    /// every object it needs that the base commit does not have.
    Candidate {
        /// The commit.
        commit: String,
        /// The pack's length.
        bytes: u64,
    },
    /// How the attempt ended: the last message of an attempt.
    Result(Box<AttemptEnd>),
    /// The worker cannot run the attempt (no sandbox, an unknown agent):
    /// why, and how to fix it. The last message of an attempt.
    Refused {
        /// Why.
        reason: String,
        /// How to fix it.
        hint: String,
    },
    /// The worker is still there: sent every `heartbeat_ms` of the
    /// attempt. A coordinator that hears nothing for `lost_after_ms`
    /// counts the worker lost.
    Heartbeat {
        /// The number of the last of the coordinator's journaled messages
        /// the worker heard (messages other than `heartbeat`, numbered
        /// from 1).
        #[serde(default)]
        ack: u64,
    },
    /// The answer to `resume`: the attempt goes on; the coordinator sends
    /// again what the worker missed.
    Resumed {
        /// The number of the last of the coordinator's journaled messages
        /// the worker heard.
        ack: u64,
    },
}

/// A message of either direction: what follows it on the stream.
pub trait Message: for<'de> Deserialize<'de> {
    /// The length of the raw bytes that follow the message, if any do.
    fn payload_len(&self) -> Option<u64>;
    /// Whether the message is numbered, kept until acknowledged, and sent
    /// again on a resumed connection: all but the connection's own
    /// (`heartbeat`, `resume`, `resumed`).
    fn journaled(&self) -> bool;
}

impl Message for ToWorker {
    fn payload_len(&self) -> Option<u64> {
        match self {
            ToWorker::Objects { bytes } => Some(*bytes),
            _ => None,
        }
    }

    fn journaled(&self) -> bool {
        !matches!(self, ToWorker::Heartbeat { .. } | ToWorker::Resume { .. })
    }
}

impl Message for FromWorker {
    fn payload_len(&self) -> Option<u64> {
        match self {
            FromWorker::Log { bytes, .. } | FromWorker::Candidate { bytes, .. } => Some(*bytes),
            _ => None,
        }
    }

    fn journaled(&self) -> bool {
        !matches!(
            self,
            FromWorker::Heartbeat { .. } | FromWorker::Resumed { .. }
        )
    }
}

/// How a worker confines agents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxState {
    /// Whether agents run in planwright's sandbox there.
    pub enforced: bool,
    /// What the sandbox is made of, or why there is none.
    pub detail: String,
}

/// An attempt, as the worker runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttemptSpec {
    /// The slot's index on the worker's machine.
    pub slot: usize,
    /// The repository's object format (`sha1`, `sha256`).
    pub object_format: String,
    /// The ticket id.
    pub ticket: String,
    /// 1-based attempt number.
    pub attempt: u32,
    /// The candidate's parent.
    pub base_commit: String,
    /// The commit the workspace starts from.
    pub start_commit: String,
    /// The prompt.
    pub charter: String,
    /// The candidate commit's message.
    pub message: String,
    /// The agent's wall-clock limit, in seconds.
    pub agent_timeout_secs: Option<u64>,
    /// The agent, as the coordinator's settings name it: `name` (an
    /// adapter, `cmd`, `scripted:DIR`) and the `[agent]` `options`.
    #[schemars(with = "serde_json::Value")]
    pub agent: AgentSpec,
    /// The model chosen for this attempt.
    pub model: Option<String>,
    /// Dollars the attempt may still spend.
    pub budget_usd: Option<f64>,
    /// How the worker prepares the workspace and confines the agent.
    pub settings: WorkerSettings,
    /// How often each side sends `heartbeat`, in milliseconds.
    pub heartbeat_ms: u64,
    /// After how long without a message from the coordinator the worker
    /// ends the attempt and exits, in milliseconds.
    pub lost_after_ms: u64,
    /// Set when the coordinator can reconnect to the worker's machine
    /// (docs/scaling.md, "A broken connection"): the worker keeps the
    /// attempt for `lost_after_ms` after its connection closes, for a new
    /// connection whose `resume` carries this key. A secret of the
    /// coordinator's, never written to a file.
    #[serde(default)]
    pub resume_key: Option<String>,
}

/// The parts of the coordinator's settings a worker applies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkerSettings {
    /// `[sandbox] mode = "off"` on the coordinator: the worker runs the
    /// agent unconfined only if it was started with `--unsandboxed` too.
    pub unsandboxed: bool,
    /// `[workspace] setup`.
    pub setup: Vec<Vec<String>>,
    /// `[workspace] setup_inputs`.
    pub setup_inputs: Vec<String>,
    /// `[workspace] pristine`.
    pub pristine: bool,
    /// `[workspace] setup_timeout_secs`.
    pub setup_timeout_secs: Option<u64>,
    /// `[workspace] env`.
    pub setup_env: Vec<String>,
    /// `[sandbox] agent_network`: `proxy`, `open` or `none`.
    #[schemars(with = "String")]
    pub agent_network: AgentNetwork,
    /// `[sandbox] allow`, each `host:port`.
    #[schemars(with = "Vec<String>")]
    pub allow: Vec<HostPort>,
    /// `[sandbox] hosts`: name -> address (`ip:port`).
    #[schemars(with = "Vec<(String, String)>")]
    pub hosts: Vec<(String, SocketAddr)>,
    /// `[agent] log_limit_mib`, in bytes.
    pub log_limit: Option<u64>,
}

/// What a worker applies of the run's settings.
impl From<&planwright_config::RunSettings> for WorkerSettings {
    fn from(s: &planwright_config::RunSettings) -> Self {
        let (w, c) = (&s.workspace, &s.contain);
        WorkerSettings {
            unsandboxed: c.mode == planwright_config::SandboxMode::Off,
            setup: w.setup.clone(),
            setup_inputs: w.setup_inputs.clone(),
            pristine: w.pristine,
            setup_timeout_secs: w.setup_timeout.map(|d| d.as_secs().max(1)),
            setup_env: w.env.clone(),
            agent_network: c.agent_network,
            allow: c.allow.clone(),
            hosts: c.hosts.clone(),
            log_limit: c.agent_log_limit,
        }
    }
}

/// How an attempt ended on the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttemptEnd {
    /// How the agent ended: `finished`, `blocked`, `failed`, `timed_out`,
    /// `cancelled`, `unavailable`.
    #[schemars(with = "String")]
    pub outcome: AgentOutcomeKind,
    /// What the outcome carries: the reason, the output's tail.
    #[serde(default)]
    pub detail: String,
    /// For `unavailable`: when the provider said to try again, in ms.
    #[serde(default)]
    pub retry_after_ms: Option<u64>,
    /// The model, as the CLI named it.
    pub model: Option<String>,
    /// Tokens used.
    pub usage: Option<Usage>,
    /// Cost in US dollars.
    pub cost_usd: Option<f64>,
    /// `reported`, `computed` or `estimated`.
    #[schemars(with = "Option<String>")]
    pub cost_source: Option<CostSource>,
    /// The agent's final message.
    pub final_message: Option<String>,
    /// The CLI's session id.
    pub session_id: Option<String>,
    /// The workspace's set-up failed, so the agent never ran.
    pub setup_failed: Option<Failure>,
    /// The agent's work cannot be a candidate (a path git refuses).
    pub rejected: Option<Failure>,
}

impl AttemptEnd {
    /// The end of an attempt whose agent reported `report`.
    pub fn new(report: &AgentReport) -> AttemptEnd {
        use crate::agent::AgentOutcome as O;
        let (detail, retry_after_ms) = match &report.outcome {
            O::Finished | O::TimedOut | O::Cancelled => (String::new(), None),
            O::Blocked(r) => (r.clone(), None),
            O::Failed(t) => (t.clone(), None),
            O::Unavailable {
                retry_after,
                reason,
            } => (reason.clone(), retry_after.map(|d| d.as_millis() as u64)),
        };
        AttemptEnd {
            outcome: report.outcome.kind(),
            detail,
            retry_after_ms,
            model: report.model.clone(),
            usage: report.usage,
            cost_usd: report.cost.map(|c| c.0),
            cost_source: report.cost.map(|c| c.1),
            final_message: report.final_message.clone(),
            session_id: report.session_id.clone(),
            setup_failed: None,
            rejected: None,
        }
    }

    /// The agent's report, as the coordinator records it.
    pub fn report(&self) -> AgentReport {
        use crate::agent::AgentOutcome as O;
        let outcome = match self.outcome {
            AgentOutcomeKind::Finished => O::Finished,
            AgentOutcomeKind::Blocked => O::Blocked(self.detail.clone()),
            AgentOutcomeKind::Failed => O::Failed(self.detail.clone()),
            AgentOutcomeKind::TimedOut => O::TimedOut,
            AgentOutcomeKind::Cancelled => O::Cancelled,
            AgentOutcomeKind::Unavailable => O::Unavailable {
                retry_after: self.retry_after_ms.map(std::time::Duration::from_millis),
                reason: self.detail.clone(),
            },
        };
        AgentReport {
            outcome,
            model: self.model.clone(),
            usage: self.usage,
            // A cost without a source was computed (the worker names the
            // source whenever it sends a cost).
            cost: self
                .cost_usd
                .map(|c| (c, self.cost_source.unwrap_or(CostSource::Computed))),
            final_message: self.final_message.clone(),
            session_id: self.session_id.clone(),
        }
    }
}

pub use crate::error::WireError;

/// The JSON Schema of the protocol's messages (`schemas/worker-protocol.schema.json`).
pub fn schema() -> serde_json::Value {
    #[derive(JsonSchema)]
    #[serde(untagged)]
    #[allow(dead_code)]
    /// A message of the worker protocol: what the coordinator sends, or
    /// what a worker sends.
    enum Message {
        /// Coordinator to worker.
        ToWorker(ToWorker),
        /// Worker to coordinator.
        FromWorker(FromWorker),
    }
    let mut schema =
        serde_json::to_value(schemars::schema_for!(Message)).expect("schemas serialize");
    schema["title"] = format!("planwright worker protocol {PROTOCOL}").into();
    schema
}

/// Writes one message, followed by `payload` when the message announced it.
pub fn send<T: Serialize>(to: &mut dyn Write, msg: &T, payload: &[u8]) -> Result<(), WireError> {
    let mut line =
        serde_json::to_vec(msg).map_err(|e| WireError::Malformed(e.to_string(), String::new()))?;
    line.push(b'\n');
    to.write_all(&line)?;
    to.write_all(payload)?;
    to.flush()?;
    Ok(())
}

/// Reads one message (its payload is read with [`payload`]).
pub fn receive<T: for<'de> Deserialize<'de>>(from: &mut dyn BufRead) -> Result<T, WireError> {
    let mut line = Vec::new();
    let n = from.take(MAX_LINE).read_until(b'\n', &mut line)?;
    if n == 0 {
        return Err(WireError::Closed);
    }
    if line.last() != Some(&b'\n') {
        let why = if n as u64 >= MAX_LINE {
            "longer than 16 MiB"
        } else {
            "cut off"
        };
        return Err(WireError::Malformed(why.into(), excerpt(&line)));
    }
    serde_json::from_slice(&line).map_err(|e| WireError::Malformed(e.to_string(), excerpt(&line)))
}

/// Reads a message's payload of `bytes` bytes into `to`.
pub fn payload(from: &mut dyn BufRead, bytes: u64, to: &mut dyn Write) -> Result<(), WireError> {
    let copied = std::io::copy(&mut from.take(bytes), to)?;
    if copied < bytes {
        return Err(WireError::Closed);
    }
    Ok(())
}

/// The start of a line, for a message naming it.
fn excerpt(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end();
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_and_its_payload_read_back_as_sent() {
        let mut wire = Vec::new();
        let msg = FromWorker::Log {
            file: "attempt-1.agent.log".into(),
            bytes: 5,
        };
        send(&mut wire, &msg, b"hello").unwrap();
        send(
            &mut wire,
            &FromWorker::Progress {
                phase: crate::model::Phase::Agent,
            },
            &[],
        )
        .unwrap();
        let mut from = std::io::Cursor::new(wire);
        let got: FromWorker = receive(&mut from).unwrap();
        assert_eq!(got, msg);
        let mut bytes = Vec::new();
        payload(&mut from, 5, &mut bytes).unwrap();
        assert_eq!(bytes, b"hello");
        let next: FromWorker = receive(&mut from).unwrap();
        assert_eq!(
            next,
            FromWorker::Progress {
                phase: crate::model::Phase::Agent
            }
        );
        assert!(matches!(
            receive::<FromWorker>(&mut from),
            Err(WireError::Closed)
        ));
    }

    #[test]
    fn a_line_of_another_protocol_is_named_in_the_error() {
        let mut from = std::io::Cursor::new(b"Welcome to Ubuntu!\n".to_vec());
        let e = receive::<FromWorker>(&mut from).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("Welcome to Ubuntu!"), "{text}");
        let mut cut = std::io::Cursor::new(b"{\"type\":\"progress\"".to_vec());
        let e = receive::<FromWorker>(&mut cut).unwrap_err();
        assert!(e.to_string().contains("cut off"), "{e}");
    }

    #[test]
    fn a_short_payload_is_a_closed_connection() {
        let mut from = std::io::Cursor::new(b"abc".to_vec());
        let e = payload(&mut from, 10, &mut Vec::new()).unwrap_err();
        assert!(matches!(e, WireError::Closed));
    }

    #[test]
    fn every_outcome_crosses_the_wire_unchanged() {
        use crate::agent::AgentOutcome as O;
        use crate::model::report::CostSource;
        for outcome in [
            O::Finished,
            O::Blocked("unclear".into()),
            O::Failed("exited with exit code 2".into()),
            O::TimedOut,
            O::Cancelled,
            O::Unavailable {
                retry_after: Some(std::time::Duration::from_millis(1500)),
                reason: "429".into(),
            },
        ] {
            let report = AgentReport {
                outcome,
                model: Some("m".into()),
                usage: Some(Usage {
                    input_tokens: 1,
                    output_tokens: 2,
                    cache_read_tokens: 3,
                    cache_write_tokens: 4,
                }),
                cost: Some((0.5, CostSource::Reported)),
                final_message: Some("done".into()),
                session_id: Some("s".into()),
            };
            let end = AttemptEnd::new(&report);
            let json = serde_json::to_string(&end).unwrap();
            let back: AttemptEnd = serde_json::from_str(&json).unwrap();
            assert_eq!(back.report(), report);
        }
    }
}
