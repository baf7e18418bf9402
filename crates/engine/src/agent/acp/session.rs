//! One ACP session as a client: the three requests of a turn
//! (`initialize`, `session/new`, `session/prompt`), the agent's requests
//! answered (permissions by [`super::policy`], everything else refused as
//! a method planwright does not offer) and its updates written to the log.

use super::policy;
use super::PROTOCOL_VERSION;
use crate::agent::{AttemptContext, Usage, UsageSink, UsageSoFar};
use crate::process::Cancel;
use serde_json::{json, Value};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

const INITIALIZE: u64 = 1;
const NEW_SESSION: u64 = 2;
const PROMPT: u64 = 3;

/// How a turn ended, as far as the protocol tells.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum TurnEnd {
    /// No answer to the prompt (yet).
    Open,
    /// `session/prompt` answered with this `stopReason`.
    Stopped(String),
    /// A request of the turn answered with this JSON-RPC error.
    Error(Value),
    /// planwright cancelled the turn at the attempt's timeout.
    TimedOut,
}

/// What a session leaves for the report.
pub(super) struct Ended {
    pub turn: TurnEnd,
    pub message: String,
    pub usage: Option<Usage>,
    pub session_id: Option<String>,
}

struct State {
    to_agent: Option<File>,
    turn: TurnEnd,
    session_id: Option<String>,
    message: String,
    usage: Option<Usage>,
}

/// The client's side of one attempt's session.
pub(super) struct Session {
    state: Mutex<State>,
    log: PathBuf,
    workspace: PathBuf,
    charter: String,
    model: Option<String>,
    usage_sink: Option<UsageSink>,
    stop: Cancel,
}

impl Session {
    /// A session writing to `to_agent`, the agent's stdin; `stop` ends the
    /// agent's process once the turn is over.
    pub fn new(to_agent: File, ctx: &AttemptContext, charter: String, stop: Cancel) -> Session {
        Session {
            state: Mutex::new(State {
                to_agent: Some(to_agent),
                turn: TurnEnd::Open,
                session_id: None,
                message: String::new(),
                usage: None,
            }),
            log: ctx.log.clone(),
            workspace: ctx.workspace.clone(),
            charter,
            model: ctx.model.clone(),
            usage_sink: ctx.usage_sink.clone(),
            stop,
        }
    }

    /// Sends `initialize`: planwright lends neither files nor terminals.
    pub fn start(&self) {
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": {
                "fs": {"readTextFile": false, "writeTextFile": false},
                "terminal": false
            },
            "clientInfo": {"name": "planwright", "version": env!("CARGO_PKG_VERSION")}
        });
        self.send(&request(INITIALIZE, "initialize", params));
    }

    /// Takes one line of the agent's stdout.
    pub fn receive(&self, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let msg: Value = match serde_json::from_str(line) {
            Ok(v @ Value::Object(_)) if v["jsonrpc"] == "2.0" => v,
            _ => return self.note(&format!("acp: not a JSON-RPC message, ignored: {line}")),
        };
        match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
            (Some(method), Some(id)) => self.answer(id, method, &msg["params"]),
            (Some("session/update"), None) => self.update(&msg["params"]["update"]),
            (Some(method), None) => self.note(&format!("acp: notification {method} ignored")),
            (None, Some(id)) => self.response(id, &msg),
            (None, None) => self.note(&format!(
                "acp: a message with neither method nor id: {line}"
            )),
        }
    }

    /// Sends `session/cancel` at the attempt's timeout.
    pub fn time_out(&self) {
        self.note("acp: the attempt's time is up; cancelling the turn");
        self.state.lock().unwrap().turn = TurnEnd::TimedOut;
        self.cancel_turn();
    }

    /// Sends `session/cancel` for the open turn, if any.
    pub fn cancel_turn(&self) {
        let id = self.state.lock().unwrap().session_id.clone();
        if let Some(id) = id {
            self.send(&json!({"jsonrpc": "2.0", "method": "session/cancel",
                "params": {"sessionId": id}}));
        }
    }

    /// The session's result, once the agent's process has ended.
    pub fn end(&self) -> Ended {
        let mut s = self.state.lock().unwrap();
        s.to_agent = None;
        Ended {
            turn: s.turn.clone(),
            message: std::mem::take(&mut s.message),
            usage: s.usage,
            session_id: s.session_id.clone(),
        }
    }

    fn response(&self, id: &Value, msg: &Value) {
        if let Some(error) = msg.get("error") {
            self.note(&format!("acp: request {id} failed: {error}"));
            return self.finish(TurnEnd::Error(error.clone()));
        }
        let result = &msg["result"];
        match id.as_u64() {
            Some(INITIALIZE) => self.initialized(result),
            Some(NEW_SESSION) => self.session_made(result),
            Some(PROMPT) => {
                self.read_usage(result);
                let reason = result["stopReason"].as_str().unwrap_or("no stopReason");
                self.note(&format!("acp: turn ended: {reason}"));
                self.finish(TurnEnd::Stopped(reason.to_string()));
            }
            _ => self.note(&format!(
                "acp: an answer to no request of planwright's: {id}"
            )),
        }
    }

    fn initialized(&self, result: &Value) {
        let version = result["protocolVersion"].as_u64();
        if version != Some(PROTOCOL_VERSION) {
            return self.finish(TurnEnd::Error(json!({"code": 0, "message": format!(
                "the agent speaks ACP version {}, planwright speaks {PROTOCOL_VERSION}",
                result["protocolVersion"]
            )})));
        }
        let params = json!({"cwd": self.workspace, "mcpServers": []});
        self.send(&request(NEW_SESSION, "session/new", params));
    }

    fn session_made(&self, result: &Value) {
        let Some(id) = result["sessionId"].as_str() else {
            return self.finish(TurnEnd::Error(
                json!({"code": 0, "message": "session/new answered without a sessionId"}),
            ));
        };
        self.note(&format!("acp: session {id}"));
        self.state.lock().unwrap().session_id = Some(id.to_string());
        let params = json!({"sessionId": id,
            "prompt": [{"type": "text", "text": self.charter}]});
        self.send(&request(PROMPT, "session/prompt", params));
    }

    fn answer(&self, id: &Value, method: &str, params: &Value) {
        let reply = if method == "session/request_permission" {
            let answer = policy::decide(params, &self.workspace);
            self.note(&format!("acp: permission {}", answer.log_line()));
            json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": answer.outcome()}})
        } else {
            self.note(&format!(
                "acp: refused {method}: planwright offers no such method"
            ));
            json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("{method} is not offered")}})
        };
        self.send(&reply);
    }

    fn update(&self, update: &Value) {
        let kind = update["sessionUpdate"].as_str().unwrap_or("?");
        match kind {
            "agent_message_chunk" => {
                let text = update["content"]["text"].as_str().unwrap_or("");
                self.state.lock().unwrap().message.push_str(text);
                self.note(&format!("acp: message: {text}"));
            }
            "tool_call" | "tool_call_update" => self.note(&format!(
                "acp: {kind} {} {} {}",
                update["toolCallId"].as_str().unwrap_or(""),
                update["title"].as_str().unwrap_or(""),
                update["status"].as_str().unwrap_or("")
            )),
            "plan" => self.note(&format!("acp: plan {}", update["entries"])),
            _ => self.note(&format!("acp: {kind}")),
        }
    }

    /// Usage as the agent reports it with the end of the turn: the
    /// prompt result's `usage`, else the `_meta.quota.token_count` Gemini
    /// CLI sends (input and output only, no cache split).
    fn read_usage(&self, result: &Value) {
        let usage = match (&result["usage"], &result["_meta"]["quota"]["token_count"]) {
            (u, _) if u.is_object() => {
                let n = |k: &str| u[k].as_u64().unwrap_or(0);
                let cache_read = n("cachedReadTokens");
                Usage {
                    input_tokens: n("inputTokens").saturating_sub(cache_read),
                    output_tokens: n("outputTokens") + n("thoughtTokens"),
                    cache_read_tokens: cache_read,
                    cache_write_tokens: n("cachedWriteTokens"),
                }
            }
            (_, q) if q.is_object() => {
                let n = |k: &str| q[k].as_u64().unwrap_or(0);
                Usage {
                    input_tokens: n("input_tokens"),
                    output_tokens: n("output_tokens"),
                    cache_read_tokens: 0,
                    cache_write_tokens: 0,
                }
            }
            _ => return,
        };
        self.state.lock().unwrap().usage = Some(usage);
        if let Some(sink) = &self.usage_sink {
            sink.report(&UsageSoFar {
                model: self.model.clone(),
                usage,
            });
        }
    }

    /// Records how the turn ended (a timeout already recorded stays) and
    /// stops the agent: planwright has no more to say to it.
    fn finish(&self, turn: TurnEnd) {
        {
            let mut s = self.state.lock().unwrap();
            if s.turn != TurnEnd::TimedOut {
                s.turn = turn;
            }
            s.to_agent = None;
        }
        self.stop.cancel();
    }

    fn send(&self, msg: &Value) {
        let mut s = self.state.lock().unwrap();
        let Some(pipe) = s.to_agent.as_mut() else {
            return;
        };
        // An agent that stopped reading is seen when its process ends.
        let _ = writeln!(pipe, "{msg}");
    }

    fn note(&self, line: &str) {
        let _ = crate::log::append(&self.log, &format!("{line}\n"));
    }
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}
