//! One ACP session as a client: the requests of a turn (`initialize`,
//! `session/new`, `session/set_model` when the attempt has a model the
//! agent offers, `session/prompt`), the agent's requests answered
//! (permissions by [`super::policy`], everything else refused as a method
//! planwright does not offer) and its updates written to the log and fed
//! to the attempt's activity sink.

use super::known::{self, InputTokens};
use super::policy;
use super::PROTOCOL_VERSION;
use crate::agent::activity::{ActivityFeed, ActivityKind, MAX_TEXT_CHARS};
use crate::agent::{AttemptContext, Usage, UsageSink, UsageSoFar};
use planwright_os::process::{Cancel, Line};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::Mutex;

const INITIALIZE: u64 = 1;
const NEW_SESSION: u64 = 2;
const PROMPT: u64 = 3;
const SET_MODEL: u64 = 4;

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
    /// The agent offers models, but not the attempt's: why, in a sentence.
    ModelNotOffered(String),
}

/// What a session leaves for the report.
pub(super) struct Ended {
    pub turn: TurnEnd,
    pub message: String,
    pub usage: Option<Usage>,
    /// The model the agent says it used, else the one it was set to.
    pub model: Option<String>,
    /// Tokens per model, when the agent splits them.
    pub per_model: Vec<(String, Usage)>,
    pub session_id: Option<String>,
    /// The session's cost as the agent reported it (its last `usage_update`).
    pub cost: Option<f64>,
    /// The tokens are the agent's estimate without a cache split
    /// (Gemini CLI's `_meta.quota`), so a cost computed from them is too.
    pub estimated: bool,
}

#[derive(Default)]
struct State {
    /// Lines for the agent's stdin (a writer thread sends them on).
    to_agent: Option<Sender<String>>,
    turn: Option<TurnEnd>,
    session_id: Option<String>,
    message: String,
    /// Message chunks not yet fed as one activity.
    pending: String,
    /// Tool call titles by id, for updates that send only a status.
    tools: HashMap<String, String>,
    feed: ActivityFeed,
    usage: Option<Usage>,
    /// The model `session/set_model` set.
    model_set: Option<String>,
    per_model: Vec<(String, Usage)>,
    cost: Option<f64>,
    estimated: bool,
    /// The models `session/new` offered (a probe's finding).
    offered: Option<Vec<String>>,
}

/// The client's side of one attempt's session.
pub(super) struct Session {
    state: Mutex<State>,
    /// Notes written while a line of the agent's is read: they may quote
    /// the agent, so they go to the log through the capped writer, after
    /// that line, rather than straight to the file.
    held: Mutex<Option<Vec<String>>>,
    log: PathBuf,
    workspace: PathBuf,
    charter: String,
    model: Option<String>,
    usage_sink: Option<UsageSink>,
    stop: Cancel,
    /// How the agent counts `inputTokens` (`None`: by its `totalTokens`).
    input: Option<InputTokens>,
    /// Preflight's probe: the session ends once `session/new` answers.
    probe: bool,
}

impl Session {
    /// A session writing lines to `to_agent`, the agent's stdin, asking
    /// for `model` when given; `stop` ends the agent's process once the
    /// turn is over.
    pub(super) fn new(
        to_agent: Sender<String>,
        ctx: &AttemptContext,
        charter: String,
        model: Option<String>,
        stop: Cancel,
        input: Option<InputTokens>,
    ) -> Session {
        Session {
            state: Mutex::new(State {
                to_agent: Some(to_agent),
                feed: ActivityFeed::new(ctx.activity_sink.clone()),
                ..State::default()
            }),
            held: Mutex::new(None),
            log: ctx.log.clone(),
            workspace: ctx.workspace.clone(),
            charter,
            model,
            usage_sink: ctx.usage_sink.clone(),
            stop,
            input,
            probe: false,
        }
    }

    /// The same session as preflight's probe: it ends once `session/new`
    /// has answered, sending no prompt.
    pub(super) fn probing(mut self) -> Session {
        self.probe = true;
        self
    }

    /// What a probe found: the models `session/new` offered, if any.
    pub(super) fn offered(&self) -> Option<Vec<String>> {
        self.state.lock().unwrap().offered.clone()
    }

    /// Sends `initialize`: planwright lends neither files nor terminals.
    pub(super) fn start(&self) {
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

    /// Takes one line of the agent's stdout (cut at the line limit);
    /// what planwright notes about it goes to `out`, the capped log.
    pub(super) fn receive(&self, text: &str, out: &mut Line) {
        *self.held.lock().unwrap() = Some(Vec::new());
        self.read(text, out.cut());
        let notes = self.held.lock().unwrap().take().unwrap_or_default();
        for note in notes {
            out.note(&note);
        }
    }

    fn read(&self, line: &str, cut: u64) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let msg: Value = match serde_json::from_str(line) {
            Ok(v @ Value::Object(_)) if v["jsonrpc"] == "2.0" && cut == 0 => v,
            _ => {
                return self.note(&format!(
                    "acp: not a JSON-RPC message, ignored ({} bytes): {}",
                    line.len() as u64 + cut,
                    excerpt(line)
                ))
            }
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

    /// Sends `session/cancel` at the attempt's timeout; whether a turn
    /// was open to cancel.
    pub(super) fn time_out(&self) -> bool {
        self.note("acp: the attempt's time is up; cancelling the turn");
        let sent = self.cancel_turn();
        let mut s = self.state.lock().unwrap();
        if s.turn.is_none() {
            s.turn = Some(TurnEnd::TimedOut);
        }
        sent
    }

    /// Sends `session/cancel` when the run is cancelled (Ctrl-C); whether
    /// a turn was open to cancel.
    pub(super) fn interrupt(&self) -> bool {
        self.note("acp: the run was cancelled; cancelling the turn");
        self.cancel_turn()
    }

    /// Sends `session/cancel` for the open turn, if any.
    fn cancel_turn(&self) -> bool {
        let s = self.state.lock().unwrap();
        let id = s.session_id.clone().filter(|_| s.turn.is_none());
        drop(s);
        let Some(id) = id else {
            return false;
        };
        self.send(&json!({"jsonrpc": "2.0", "method": "session/cancel",
            "params": {"sessionId": id}}));
        true
    }

    /// Writes a line of planwright's to the agent log: through the capped
    /// writer while a line of the agent's is read, else at once.
    pub(super) fn note(&self, line: &str) {
        if let Some(held) = self.held.lock().unwrap().as_mut() {
            return held.push(line.to_string());
        }
        let _ = crate::log::append(&self.log, &format!("{line}\n"));
    }

    /// The session's result, once the agent's process has ended.
    pub(super) fn end(&self) -> Ended {
        let mut s = self.state.lock().unwrap();
        s.to_agent = None;
        flush_message(&mut s);
        s.feed.finish();
        let (model, per_model) = match s.per_model.as_slice() {
            [] => (s.model_set.clone(), Vec::new()),
            each => (most_used(each), each.to_vec()),
        };
        Ended {
            turn: s.turn.clone().unwrap_or(TurnEnd::Open),
            message: std::mem::take(&mut s.message),
            usage: s.usage,
            model,
            per_model,
            session_id: s.session_id.clone(),
            cost: s.cost,
            estimated: s.estimated,
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
            Some(SET_MODEL) => self.prompt(),
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
        // `models` is ACP's unstable session model selection.
        let offered: Option<Vec<String>> =
            result["models"]["availableModels"].as_array().map(|each| {
                each.iter()
                    .filter_map(|m| m["modelId"].as_str().map(String::from))
                    .collect()
            });
        if self.probe {
            self.state.lock().unwrap().offered = offered;
            return self.finish(TurnEnd::Stopped(PROBED.into()));
        }
        let Some(model) = &self.model else {
            return self.prompt();
        };
        let Some(offered) = offered else {
            self.note(&format!(
                "acp: the agent offers no models to choose from; `{model}` is not set"
            ));
            return self.prompt();
        };
        let Some(chosen) = offered_as(model, &offered) else {
            let why = not_offered(model, &offered);
            self.note(&format!("acp: {why}"));
            return self.finish(TurnEnd::ModelNotOffered(why));
        };
        // An alias (`sonnet[1m]`) is set; the attempt records the model
        // it was asked for, which the price table knows.
        if chosen == model.as_str() || chosen.starts_with(model.as_str()) {
            self.note(&format!("acp: model {chosen}"));
        } else {
            self.note(&format!("acp: model {model} (offered as {chosen})"));
        }
        let recorded = if chosen.contains(model.as_str()) {
            chosen
        } else {
            model
        };
        self.state.lock().unwrap().model_set = Some(recorded.to_string());
        let params = json!({"sessionId": id, "modelId": chosen});
        self.send(&request(SET_MODEL, "session/set_model", params));
    }

    fn prompt(&self) {
        let id = self.state.lock().unwrap().session_id.clone();
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
        let text = |key: &str| update[key].as_str().unwrap_or("");
        let mut s = self.state.lock().unwrap();
        if kind == "agent_message_chunk" {
            let chunk = update["content"]["text"].as_str().unwrap_or("");
            s.message.push_str(chunk);
            // More than a shown message holds is never shown.
            if s.pending.len() < 4 * MAX_TEXT_CHARS {
                s.pending.push_str(chunk);
            }
            drop(s);
            return self.note(&format!("acp: message: {chunk}"));
        }
        flush_message(&mut s);
        let line = match kind {
            "tool_call" | "tool_call_update" => {
                let (id, status) = (text("toolCallId"), update["status"].as_str());
                let title = match update["title"].as_str() {
                    Some(title) => {
                        s.tools.insert(id.to_string(), title.to_string());
                        title.to_string()
                    }
                    None => s.tools.get(id).cloned().unwrap_or_default(),
                };
                if kind == "tool_call" || status.is_some() {
                    s.feed.push(ActivityKind::ToolCall, &title, status);
                }
                let given = if update["title"].is_string() {
                    title.as_str()
                } else {
                    ""
                };
                format!("acp: {kind} {id} {given} {}", status.unwrap_or(""))
            }
            "usage_update" => {
                let cost = known::cost(update);
                if cost.is_some() {
                    s.cost = cost;
                }
                format!(
                    "acp: usage_update {} used of a context of {}{}",
                    update["used"],
                    update["size"],
                    cost.map(|c| format!(", cost ${c}")).unwrap_or_default()
                )
            }
            "plan" => {
                s.feed
                    .push(ActivityKind::Plan, &plan_text(&update["entries"]), None);
                format!("acp: plan {}", update["entries"])
            }
            _ => format!("acp: {kind}"),
        };
        drop(s);
        self.note(&line);
    }

    /// Usage as the agent reports it with the end of the turn: the
    /// prompt result's `usage`, else the `_meta.quota` Gemini CLI sends
    /// (input and output only, no cache split; per model in its
    /// `model_usage`).
    fn read_usage(&self, result: &Value) {
        let quota = &result["_meta"]["quota"];
        let (usage, estimated) = match (&result["usage"], &quota["token_count"]) {
            (u, _) if u.is_object() => (known::usage(u, self.input), false),
            (_, q) if q.is_object() => (quota_usage(q), true),
            _ => return,
        };
        let per_model: Vec<(String, Usage)> = quota["model_usage"]
            .as_array()
            .map(|each| {
                each.iter()
                    .filter_map(|m| {
                        Some((
                            m["model"].as_str()?.to_string(),
                            quota_usage(&m["token_count"]),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut s = self.state.lock().unwrap();
        s.usage = Some(usage);
        s.estimated = estimated;
        s.per_model = per_model;
        let model = match s.per_model.as_slice() {
            [] => s.model_set.clone(),
            each => most_used(each),
        };
        drop(s);
        if let Some(sink) = &self.usage_sink {
            sink.report(&UsageSoFar {
                model: model.or_else(|| self.model.clone()),
                usage,
            });
        }
    }

    /// Records how the turn ended (a timeout already recorded stays) and
    /// stops the agent: planwright has no more to say to it.
    fn finish(&self, turn: TurnEnd) {
        {
            let mut s = self.state.lock().unwrap();
            if s.turn.is_none() {
                s.turn = Some(turn);
            }
            s.to_agent = None;
        }
        self.stop.cancel();
    }

    fn send(&self, msg: &Value) {
        let s = self.state.lock().unwrap();
        if let Some(to_agent) = &s.to_agent {
            // A writer that stopped (the agent closed its stdin) is seen
            // when the agent's process ends.
            let _ = to_agent.send(msg.to_string());
        }
    }
}

/// Feeds the message chunks gathered so far as one activity.
fn flush_message(s: &mut State) {
    if !s.pending.trim().is_empty() {
        let text = std::mem::take(&mut s.pending);
        s.feed.push(ActivityKind::Message, &text, None);
    }
    s.pending.clear();
}

/// A plan's entries, `content (status)`, joined by `; `.
fn plan_text(entries: &Value) -> String {
    let entries = entries.as_array().map(Vec::as_slice).unwrap_or_default();
    let each: Vec<String> = entries
        .iter()
        .map(|e| {
            let content = e["content"].as_str().unwrap_or("");
            match e["status"].as_str() {
                Some(status) => format!("{content} ({status})"),
                None => content.to_string(),
            }
        })
        .collect();
    each.join("; ")
}

/// Gemini CLI's `token_count`: input (cached input in it) and output.
fn quota_usage(q: &Value) -> Usage {
    let n = |k: &str| q[k].as_u64().unwrap_or(0);
    Usage {
        input_tokens: n("input_tokens"),
        output_tokens: n("output_tokens"),
        cache_read_tokens: 0,
        cache_write_tokens: 0,
    }
}

/// The model that used the most tokens (the first of equals).
fn most_used(each: &[(String, Usage)]) -> Option<String> {
    let total = |u: &Usage| u.input_tokens + u.output_tokens;
    let mut best: Option<&(String, Usage)> = None;
    for m in each {
        if best.is_none_or(|b| total(&m.1) > total(&b.1)) {
            best = Some(m);
        }
    }
    best.map(|(model, _)| model.clone())
}

/// The start of a line the agent printed, for a note about it: the line
/// itself is in the log just before.
fn excerpt(line: &str) -> String {
    const SHOWN: usize = 200;
    match line.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}...", &line[..end]),
        None => line.to_string(),
    }
}

/// The `stopReason` a probe's session ends with, once `session/new` has
/// answered.
pub(super) const PROBED: &str = "probed";

/// The model ID among `offered` that `model` names: the same, or its
/// preview (`gemini-3-flash` offered as `gemini-3-flash-preview`), or
/// the model a `-preview` name is the preview of, or an alias that is a
/// word of its name (`claude-sonnet-4-6` offered as `sonnet` or
/// `sonnet[1m]`, as claude-agent-acp offers Claude's models).
pub(crate) fn offered_as<'a>(model: &str, offered: &'a [String]) -> Option<&'a str> {
    named(model, offered).or_else(|| {
        let words: Vec<&str> = model.split(['-', '/']).collect();
        offered.iter().map(String::as_str).find(|id| {
            let alias = id.split('[').next().unwrap_or(id);
            alias.len() >= 3 && alias != "default" && alias != "auto" && words.contains(&alias)
        })
    })
}

/// [`offered_as`] by name: the same, or a preview's.
fn named<'a>(model: &str, offered: &'a [String]) -> Option<&'a str> {
    let preview = format!("{model}-preview");
    let exact = offered.iter().find(|m| *m == model);
    let previewed = || {
        offered
            .iter()
            .find(|m| **m == preview || m.starts_with(&format!("{preview}-")))
    };
    let released = || {
        let base = model.strip_suffix("-preview")?;
        offered.iter().find(|m| *m == base)
    };
    exact
        .or_else(previewed)
        .or_else(released)
        .map(String::as_str)
}

/// "the agent does not offer model `M`; it offers `a`, `b`".
pub(crate) fn not_offered(model: &str, offered: &[String]) -> String {
    let list: Vec<String> = offered.iter().map(|m| format!("`{m}`")).collect();
    let list = if list.is_empty() {
        "none".to_string()
    } else {
        list.join(", ")
    };
    format!("the agent does not offer model `{model}`; it offers {list}")
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_is_offered_as_itself_or_its_preview() {
        let offered: Vec<String> = [
            "auto",
            "gemini-3-flash-preview",
            "gemini-2.5-pro",
            "gemini-3.1-pro-preview-customtools",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            offered_as("gemini-2.5-pro", &offered),
            Some("gemini-2.5-pro")
        );
        assert_eq!(
            offered_as("gemini-3-flash", &offered),
            Some("gemini-3-flash-preview")
        );
        assert_eq!(
            offered_as("gemini-3.1-pro", &offered),
            Some("gemini-3.1-pro-preview-customtools")
        );
        assert_eq!(
            offered_as("gemini-2.5-pro-preview", &offered),
            Some("gemini-2.5-pro")
        );
        assert_eq!(offered_as("gemini-2.5-flash", &offered), None);
        // claude-agent-acp 0.23.1 offers Claude's models by alias.
        let claude: Vec<String> = ["default", "sonnet[1m]", "opus[1m]", "haiku"]
            .map(String::from)
            .to_vec();
        assert_eq!(offered_as("claude-sonnet-4-6", &claude), Some("sonnet[1m]"));
        assert_eq!(offered_as("claude-haiku-4-5", &claude), Some("haiku"));
        assert_eq!(offered_as("gpt-5.4", &claude), None);
        assert_eq!(
            not_offered("x", &offered[..2]),
            "the agent does not offer model `x`; it offers `auto`, `gemini-3-flash-preview`"
        );
    }
}
