//! A model provider on loopback for the real-agent tier: the Anthropic
//! Messages API, the OpenAI Responses and Chat Completions APIs and the
//! Gemini API, each streaming (SSE) or not as the request asks.
//!
//! Scripted and stateless: a request whose conversation does not yet hold
//! a tool result is answered with one tool call that writes the ticket's
//! file (with the CLI's own write or shell tool, whichever the request
//! offers), a request that holds one with a final message, a request that
//! offers no tool (aider) with the file in aider's "whole" edit format.
//! Every answered call reports [`USAGE`]. A [`Trouble`] answers the first
//! model calls with a rate limit, an overload or a stream that never ends.
//! Every request is recorded, so a test can assert that its CLI called.
//!
//! The server's one address is [`MockModel::base_url`]: a test that routes
//! the agent through a proxy maps a host name to it there.

use serde_json::{json, Value};
use std::io::{BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

mod errors;
use errors::troubled;

/// What each answered model call reports, per kind of token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallUsage {
    /// Input not read from a cache.
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    /// Input written to a cache (Anthropic's only: the others report none).
    pub cache_write: u64,
}

/// The usage of every answered call.
pub const USAGE: CallUsage = CallUsage {
    input: 11,
    output: 7,
    cache_read: 13,
    cache_write: 5,
};

/// The final message of every scripted conversation.
pub const FINAL_MESSAGE: &str = "Wrote the file.";

/// Provider trouble for the first model calls; the later ones are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trouble {
    /// 429 with `retry-after: SECS` (and the provider's own reset fields).
    RateLimited { retry_after_secs: u64 },
    /// The status (500, 503, 529) with the provider's "overloaded" error.
    Overloaded { status: u16 },
    /// A 200 SSE stream that sends its headers and then nothing, until the
    /// client leaves or the server stops.
    Hang,
    /// 400 with the provider's invalid-request error, saying [`REFUSAL`]:
    /// the request's fault, not the provider's trouble, which no CLI
    /// retries.
    Invalid,
    /// 401 with the provider's error for a key it does not accept.
    Unauthorized,
    /// The answer cut mid-way: its headers promise the whole body, half
    /// of it is sent, and the connection is closed.
    Truncated,
    /// The whole answer, then [`GARBAGE`] after its end (within the
    /// body's length).
    TrailingGarbage,
}

/// The bytes a [`Trouble::TrailingGarbage`] answer ends with: an event
/// that is not JSON, a stray NUL and text.
pub const GARBAGE: &str = "\ndata: }{ not json\n\n\u{0}garbage after the end\n";

/// The message of every [`Trouble::Invalid`] answer.
pub const REFUSAL: &str = "The mock model refuses this request.";

/// One request as the server received it, and the status it answered.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The path with its query.
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Null` when there was none or it was not JSON).
    pub body: Value,
    pub status: u16,
}

impl Request {
    /// Whether the request offered the model tools (a CLI's own side
    /// calls, such as opencode's title, offer none).
    pub fn offers_tools(&self) -> bool {
        self.body["tools"].as_array().is_some_and(|t| !t.is_empty())
    }

    /// Whether this asked a model for an answer (not a token count or a
    /// listing of models).
    pub fn is_model_call(&self) -> bool {
        self.method == "POST" && Api::of(&self.path).is_some()
    }
}

/// The scripted file and the trouble of a server.
#[derive(Debug, Clone)]
pub struct Script {
    /// The file the tool call writes, relative to the workspace.
    pub file: String,
    /// Its content: plain ASCII without quotes, so every tool can carry it.
    pub content: String,
    /// What the first `times` model calls get instead of an answer.
    pub trouble: Option<(Trouble, usize)>,
}

struct State {
    script: Script,
    requests: Vec<Request>,
    /// Model calls seen so far, troubled or not.
    calls: usize,
}

/// The server; stops when dropped.
pub struct MockModel {
    port: u16,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MockModel {
    /// Listens on a free loopback port.
    pub fn start(script: Script) -> MockModel {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind loopback");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State {
            script,
            requests: Vec::new(),
            calls: 0,
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (state.clone(), stop.clone());
        let thread = std::thread::spawn(move || accept(listener, s, st));
        MockModel {
            port,
            state,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`: where a client outside any sandbox reaches it.
    pub fn base_url(&self) -> String {
        self.url_at("127.0.0.1")
    }

    /// `http://HOST:PORT`: where a CLI is pointed when `[sandbox] hosts`
    /// maps `host` to [`MockModel::addr`].
    pub fn url_at(&self, host: &str) -> String {
        format!("http://{host}:{}", self.port)
    }

    /// The loopback address it listens on.
    pub fn addr(&self) -> std::net::SocketAddr {
        (Ipv4Addr::LOCALHOST, self.port).into()
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.state).requests.clone()
    }

    /// The model calls answered with a model's answer (status 200, no
    /// trouble).
    pub fn answered(&self) -> Vec<Request> {
        let troubled = lock(&self.state).script.trouble.map_or(0, |(_, n)| n);
        let calls = self.requests().into_iter().filter(Request::is_model_call);
        calls.skip(troubled).filter(|r| r.status == 200).collect()
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn accept(listener: TcpListener, state: Arc<Mutex<State>>, stop: Arc<AtomicBool>) {
    let mut workers = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let (s, st) = (state.clone(), stop.clone());
                workers.push(std::thread::spawn(move || serve(stream, &s, &st)));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    for w in workers {
        let _ = w.join();
    }
}

/// Serves the requests of one connection (clients keep it alive).
fn serve(stream: TcpStream, state: &Mutex<State>, stop: &AtomicBool) {
    stream.set_nonblocking(false).unwrap();
    // A read times out now and then so a stopped server lets go.
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    while let Some(req) = read_request(&mut reader, stop) {
        let reply = answer(state, &req);
        let status = reply.status;
        lock(state).requests.push(Request { status, ..req });
        if reply.write(&mut out, stop).is_err() || reply.close {
            return;
        }
    }
}

/// The next request on a connection, its body read as JSON; `None` when
/// it closed or the server stopped.
fn read_request(reader: &mut BufReader<TcpStream>, stop: &AtomicBool) -> Option<Request> {
    let raw = crate::http::read_request(reader, stop)?;
    Some(Request {
        method: raw.method,
        path: raw.target,
        headers: raw.headers,
        body: serde_json::from_slice(&raw.body).unwrap_or(Value::Null),
        status: 0,
    })
}

/// The four APIs, by path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Anthropic,
    Responses,
    Chat,
    Gemini,
}

impl Api {
    fn of(path: &str) -> Option<Api> {
        let route = path.split('?').next().unwrap_or(path);
        if route.ends_with("/messages") {
            Some(Api::Anthropic)
        } else if route.ends_with("/responses") {
            Some(Api::Responses)
        } else if route.ends_with("/chat/completions") {
            Some(Api::Chat)
        } else if route.ends_with(":generateContent") || route.ends_with(":streamGenerateContent") {
            Some(Api::Gemini)
        } else {
            None
        }
    }
}

/// An HTTP response: a JSON body, a list of SSE events, or a stream that
/// hangs.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Body,
    close: bool,
    /// Spoiled as [`Trouble::Truncated`] or [`Trouble::TrailingGarbage`].
    spoil: Option<Trouble>,
}

enum Body {
    Json(Value),
    /// `(event name, data)`; no name for the APIs that send none.
    Events(Vec<(Option<&'static str>, Value)>, Option<&'static str>),
    Hang,
}

impl Reply {
    fn json(status: u16, body: Value) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Body::Json(body),
            close: false,
            spoil: None,
        }
    }

    /// Writes `head` (without its length) and `body`, spoiled as asked:
    /// half of it sent under the whole's length, or garbage after it.
    fn send(&self, out: &mut TcpStream, mut head: String, mut body: String) -> std::io::Result<()> {
        if self.spoil == Some(Trouble::TrailingGarbage) {
            body.push_str(GARBAGE);
        }
        head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
        let mut bytes = head.into_bytes();
        let sent = match self.spoil {
            Some(Trouble::Truncated) => body.len() / 2,
            _ => body.len(),
        };
        bytes.extend_from_slice(&body.as_bytes()[..sent]);
        out.write_all(&bytes)?;
        out.flush()
    }

    fn write(&self, out: &mut TcpStream, stop: &AtomicBool) -> std::io::Result<()> {
        let reason = match self.status {
            200 => "OK",
            400 => "Bad Request",
            401 => "Unauthorized",
            404 => "Not Found",
            429 => "Too Many Requests",
            500 => "Internal Server Error",
            503 => "Service Unavailable",
            _ => "Error",
        };
        let mut head = format!("HTTP/1.1 {} {reason}\r\n", self.status);
        for (k, v) in &self.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        match &self.body {
            Body::Json(v) => {
                head.push_str("content-type: application/json\r\n");
                self.send(out, head, v.to_string())
            }
            Body::Events(events, done) => {
                let mut body = String::new();
                for (name, data) in events {
                    if let Some(name) = name {
                        body.push_str(&format!("event: {name}\n"));
                    }
                    body.push_str(&format!("data: {data}\n\n"));
                }
                if let Some(done) = done {
                    body.push_str(&format!("data: {done}\n\n"));
                }
                head.push_str("content-type: text/event-stream\r\ncache-control: no-cache\r\n");
                self.send(out, head, body)
            }
            Body::Hang => {
                head.push_str(
                    "content-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
                );
                out.write_all(head.as_bytes())?;
                out.flush()?;
                // Nothing more: the client's own timeout, or planwright's
                // agent timeout, ends this.
                let mut probe = [0u8; 1];
                while !stop.load(Ordering::SeqCst) {
                    match out.read(&mut probe) {
                        Ok(0) => break,
                        Ok(_) => {}
                        Err(e) if crate::http::again(&e, stop) => {}
                        Err(_) => break,
                    }
                }
                Ok(())
            }
        }
    }
}

fn answer(state: &Mutex<State>, req: &Request) -> Reply {
    let route = req.path.split('?').next().unwrap_or(&req.path).to_string();
    if route.ends_with(":countTokens") || route.ends_with("/count_tokens") {
        return Reply::json(200, json!({"totalTokens": 10, "input_tokens": 10}));
    }
    let Some(api) = Api::of(&route).filter(|_| req.method == "POST") else {
        return Reply::json(404, json!({"error": {"message": "not found", "code": 404}}));
    };
    let (script, call) = {
        let mut s = lock(state);
        s.calls += 1;
        (s.script.clone(), s.calls)
    };
    let trouble = script.trouble.filter(|(_, n)| call <= *n).map(|(t, _)| t);
    let spoil = trouble.filter(|t| matches!(t, Trouble::Truncated | Trouble::TrailingGarbage));
    if let Some(trouble) = trouble.filter(|_| spoil.is_none()) {
        return troubled(api, trouble);
    }
    let model = model_of(api, req);
    let turn = next_turn(api, &req.body, &script);
    let stream = match api {
        Api::Gemini => route.ends_with(":streamGenerateContent"),
        _ => req.body["stream"].as_bool() == Some(true),
    };
    let mut reply = respond(api, &model, call, &turn, stream);
    reply.spoil = spoil;
    // A cut answer ends its connection: nothing follows on it.
    reply.close |= spoil == Some(Trouble::Truncated);
    reply
}

/// What the model says next.
enum Turn {
    /// A tool call: its name, its arguments.
    Tool(String, Value),
    Text(String),
}

fn model_of(api: Api, req: &Request) -> String {
    match api {
        Api::Gemini => {
            let route = req.path.split('?').next().unwrap_or(&req.path);
            let name = route.rsplit('/').next().unwrap_or("");
            name.split(':').next().unwrap_or("").to_string()
        }
        _ => req.body["model"].as_str().unwrap_or("mock").to_string(),
    }
}

fn next_turn(api: Api, body: &Value, script: &Script) -> Turn {
    if has_tool_result(api, body) {
        return Turn::Text(FINAL_MESSAGE.into());
    }
    let tools = tool_names(api, body);
    let has = |n: &str| tools.iter().any(|t| t == n);
    let file = &script.file;
    let content = &script.content;
    let shell = format!("printf '%s\\n' '{content}' > '{file}'");
    if has("Write") {
        let dir = workspace(body).unwrap_or_default();
        let path = format!("{}/{file}", dir.trim_end_matches('/'));
        Turn::Tool(
            "Write".into(),
            json!({"file_path": path, "content": format!("{content}\n")}),
        )
    } else if has("write_file") {
        Turn::Tool(
            "write_file".into(),
            json!({"file_path": file, "content": format!("{content}\n")}),
        )
    } else if has("write") {
        let dir = workspace(body).unwrap_or_default();
        let path = format!("{}/{file}", dir.trim_end_matches('/'));
        Turn::Tool(
            "write".into(),
            json!({"filePath": path, "content": format!("{content}\n")}),
        )
    } else if has("exec_command") {
        Turn::Tool("exec_command".into(), json!({"cmd": shell}))
    } else if has("shell") {
        Turn::Tool("shell".into(), json!({"command": ["bash", "-lc", shell]}))
    } else if has("apply_patch") {
        let patch = format!("*** Begin Patch\n*** Add File: {file}\n+{content}\n*** End Patch\n");
        Turn::Tool("apply_patch".into(), json!({"patchText": patch}))
    } else if has("bash") {
        // The Copilot CLI's shell, which runs in its working directory.
        Turn::Tool(
            "bash".into(),
            json!({"command": shell, "description": "Write the file"}),
        )
    } else {
        // aider's "whole" edit format: the file name, then the whole file.
        Turn::Text(format!("{file}\n```\n{content}\n```\n"))
    }
}

/// Whether the conversation's last message carries a tool's result.
fn has_tool_result(api: Api, body: &Value) -> bool {
    let last = |key: &str| body[key].as_array().and_then(|m| m.last()).cloned();
    match api {
        Api::Anthropic => last("messages").is_some_and(|m| {
            m["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result"))
        }),
        Api::Responses => body["input"]
            .as_array()
            .is_some_and(|items| items.iter().any(|i| i["type"] == "function_call_output")),
        Api::Chat => last("messages").is_some_and(|m| m["role"] == "tool"),
        Api::Gemini => last("contents").is_some_and(|c| {
            c["parts"]
                .as_array()
                .is_some_and(|p| p.iter().any(|p| p.get("functionResponse").is_some()))
        }),
    }
}

fn tool_names(api: Api, body: &Value) -> Vec<String> {
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    let name = |t: &Value| -> Vec<String> {
        match api {
            Api::Gemini => t["functionDeclarations"]
                .as_array()
                .map(|d| {
                    d.iter()
                        .filter_map(|f| f["name"].as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
            Api::Chat => t["function"]["name"]
                .as_str()
                .map(String::from)
                .into_iter()
                .collect(),
            _ => t["name"].as_str().map(String::from).into_iter().collect(),
        }
    };
    tools.iter().flat_map(name).collect()
}

/// The workspace named in the system prompt ("Primary working directory:"
/// for Claude Code, "Working directory:" for opencode).
fn workspace(body: &Value) -> Option<String> {
    let text = body.to_string().replace("\\n", "\n");
    for marker in ["Primary working directory: ", "Working directory: "] {
        if let Some(i) = text.find(marker) {
            let rest = &text[i + marker.len()..];
            let end = rest.find(['\n', '"', '<']).unwrap_or(rest.len());
            return Some(rest[..end].trim().to_string());
        }
    }
    None
}

fn respond(api: Api, model: &str, call: usize, turn: &Turn, stream: bool) -> Reply {
    let mut reply = match api {
        Api::Anthropic => anthropic(model, call, turn, stream),
        Api::Responses => responses(model, call, turn),
        Api::Chat => chat(model, call, turn, stream),
        Api::Gemini => gemini(model, turn, stream),
    };
    reply
        .headers
        .push(("request-id".into(), format!("req_{call}")));
    reply
}

fn anthropic(model: &str, call: usize, turn: &Turn, stream: bool) -> Reply {
    let u = USAGE;
    let usage = json!({"input_tokens": u.input, "output_tokens": u.output,
        "cache_read_input_tokens": u.cache_read, "cache_creation_input_tokens": u.cache_write});
    let (block, stop) = match turn {
        Turn::Tool(name, args) => (
            json!({"type": "tool_use", "id": format!("toolu_{call}"), "name": name, "input": args}),
            "tool_use",
        ),
        Turn::Text(t) => (json!({"type": "text", "text": t}), "end_turn"),
    };
    let id = format!("msg_{call}");
    if !stream {
        return Reply::json(
            200,
            json!({"id": id, "type": "message", "role": "assistant", "model": model,
                "content": [block], "stop_reason": stop, "stop_sequence": null, "usage": usage}),
        );
    }
    let (start, delta) = match turn {
        Turn::Tool(name, args) => (
            json!({"type": "tool_use", "id": format!("toolu_{call}"), "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": args.to_string()}),
        ),
        Turn::Text(t) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": t}),
        ),
    };
    let mut first = usage.clone();
    first["output_tokens"] = json!(1);
    let events = vec![
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {"id": id,
            "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": first}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0,
            "content_block": start}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0,
            "delta": delta}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            Some("message_delta"),
            json!({"type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": usage}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ];
    sse(events, None)
}

fn sse(events: Vec<(Option<&'static str>, Value)>, done: Option<&'static str>) -> Reply {
    Reply {
        status: 200,
        headers: Vec::new(),
        body: Body::Events(events, done),
        close: false,
        spoil: None,
    }
}

/// The OpenAI usage object: `prompt`/`input` tokens include the cached ones.
fn openai_usage(input: &str, output: &str) -> Value {
    let u = USAGE;
    let mut v = json!({"total_tokens": u.input + u.cache_read + u.output});
    v[input] = json!(u.input + u.cache_read);
    v[output] = json!(u.output);
    let details = if input == "input_tokens" {
        "input_tokens_details"
    } else {
        "prompt_tokens_details"
    };
    v[details] = json!({"cached_tokens": u.cache_read});
    let out_details = if output == "output_tokens" {
        "output_tokens_details"
    } else {
        "completion_tokens_details"
    };
    v[out_details] = json!({"reasoning_tokens": 0});
    v
}

fn responses(model: &str, call: usize, turn: &Turn) -> Reply {
    let item = match turn {
        Turn::Tool(name, args) => json!({"type": "function_call", "id": format!("fc_{call}"),
            "call_id": format!("call_{call}"), "name": name, "arguments": args.to_string(),
            "status": "completed"}),
        Turn::Text(t) => json!({"type": "message", "id": format!("msg_{call}"),
            "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": t, "annotations": []}]}),
    };
    let id = format!("resp_{call}");
    let base = json!({"id": id, "object": "response", "model": model, "status": "in_progress",
        "output": []});
    let mut done = base.clone();
    done["status"] = json!("completed");
    done["output"] = json!([item.clone()]);
    done["usage"] = openai_usage("input_tokens", "output_tokens");
    let events = vec![
        (
            Some("response.created"),
            json!({"type": "response.created", "response": base}),
        ),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added",
            "output_index": 0, "item": item}),
        ),
        (
            Some("response.output_item.done"),
            json!({"type": "response.output_item.done",
            "output_index": 0, "item": item}),
        ),
        (
            Some("response.completed"),
            json!({"type": "response.completed", "response": done}),
        ),
    ];
    sse(events, None)
}

fn chat(model: &str, call: usize, turn: &Turn, stream: bool) -> Reply {
    let id = format!("chatcmpl-{call}");
    let usage = openai_usage("prompt_tokens", "completion_tokens");
    let (message, finish) = match turn {
        Turn::Tool(name, args) => (
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
                "id": format!("call_{call}"), "type": "function",
                "function": {"name": name, "arguments": args.to_string()}}]}),
            "tool_calls",
        ),
        Turn::Text(t) => (json!({"role": "assistant", "content": t}), "stop"),
    };
    if !stream {
        return Reply::json(
            200,
            json!({"id": id, "object": "chat.completion", "created": 1_796_040_000u64,
                "model": model, "choices": [{"index": 0, "message": message,
                "finish_reason": finish}], "usage": usage}),
        );
    }
    let chunk = |choices: Value, usage: Value| {
        (
            None,
            json!({"id": id, "object": "chat.completion.chunk",
            "created": 1_796_040_000u64, "model": model, "choices": choices, "usage": usage}),
        )
    };
    let events = vec![
        chunk(
            json!([{"index": 0, "delta": message, "finish_reason": null}]),
            Value::Null,
        ),
        chunk(
            json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
            Value::Null,
        ),
        chunk(json!([]), usage),
    ];
    sse(events, Some("[DONE]"))
}

fn gemini(model: &str, turn: &Turn, stream: bool) -> Reply {
    let u = USAGE;
    let part = match turn {
        Turn::Tool(name, args) => json!({"functionCall": {"name": name, "args": args}}),
        Turn::Text(t) => json!({"text": t}),
    };
    let body = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]},
            "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": u.input + u.cache_read,
            "candidatesTokenCount": u.output, "cachedContentTokenCount": u.cache_read,
            "totalTokenCount": u.input + u.cache_read + u.output},
        "modelVersion": model,
    });
    if stream {
        sse(vec![(None, body)], None)
    } else {
        Reply::json(200, body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;

    fn post(base: &str, path: &str, body: &Value) -> (u16, String) {
        let addr = base.trim_start_matches("http://");
        let mut s = TcpStream::connect(addr).unwrap();
        let body = body.to_string();
        write!(
            s,
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut reader = BufReader::new(s);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        let mut len = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut text = vec![0; len];
        reader.read_exact(&mut text).unwrap();
        let code = status.split_whitespace().nth(1).unwrap().parse().unwrap();
        (code, String::from_utf8(text).unwrap())
    }

    /// Everything the server sent on a connection, until it closed it.
    fn post_raw(base: &str, path: &str, body: &Value) -> (String, String) {
        let addr = base.trim_start_matches("http://");
        let mut s = TcpStream::connect(addr).unwrap();
        let body = body.to_string();
        write!(
            s,
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut all = String::new();
        s.read_to_string(&mut all).unwrap();
        let status = all.lines().next().unwrap_or_default().to_string();
        (status, all)
    }

    fn script(trouble: Option<(Trouble, usize)>) -> Script {
        Script {
            file: "a.txt".into(),
            content: "made by the mock".into(),
            trouble,
        }
    }

    #[test]
    fn anthropic_tool_call_then_final_message_with_usage() {
        let m = MockModel::start(script(None));
        let ask = json!({"model": "claude-sonnet-4-6", "stream": true,
            "system": [{"type": "text", "text": "Primary working directory: /w/x\nmore"}],
            "tools": [{"name": "Write"}, {"name": "Bash"}],
            "messages": [{"role": "user", "content": "go"}]});
        let (code, text) = post(&m.base_url(), "/v1/messages?beta=true", &ask);
        assert_eq!(code, 200);
        assert!(text.contains(r#"\"file_path\":\"/w/x/a.txt\""#), "{text}");
        assert!(
            text.contains(r#""cache_creation_input_tokens":5"#),
            "{text}"
        );
        let mut done = ask.clone();
        done["messages"] = json!([{"role": "user", "content": [{"type": "tool_result"}]}]);
        let (_, text) = post(&m.base_url(), "/v1/messages", &done);
        assert!(
            text.contains(FINAL_MESSAGE) && text.contains("end_turn"),
            "{text}"
        );
        assert_eq!(m.answered().len(), 2);
        assert_eq!(m.requests()[0].body["model"], "claude-sonnet-4-6");
    }

    #[test]
    fn each_api_answers_with_its_own_tool_and_shape() {
        let m = MockModel::start(script(None));
        let gem = json!({"contents": [{"role": "user", "parts": [{"text": "go"}]}],
            "tools": [{"functionDeclarations": [{"name": "write_file"}]}]});
        let (_, text) = post(
            &m.base_url(),
            "/v1beta/models/gemini-2.5-flash:generateContent",
            &gem,
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        let call = &v["candidates"][0]["content"]["parts"][0]["functionCall"];
        assert_eq!(
            (&call["name"], &call["args"]["file_path"]),
            (&json!("write_file"), &json!("a.txt"))
        );
        assert_eq!(v["usageMetadata"]["promptTokenCount"], 24);
        assert_eq!(v["modelVersion"], "gemini-2.5-flash");

        let resp = json!({"model": "gpt-5.4", "stream": true, "tools": [{"name": "exec_command"}],
            "input": [{"type": "message", "role": "user"}]});
        let (_, text) = post(&m.base_url(), "/v1/responses", &resp);
        assert!(
            text.contains("event: response.completed") && text.contains("exec_command"),
            "{text}"
        );
        assert!(text.contains(r#""cached_tokens":13"#), "{text}");

        let chat_ask = json!({"model": "gpt-5.4", "messages": [{"role": "user", "content": "go"}]});
        let (_, text) = post(&m.base_url(), "/v1/chat/completions", &chat_ask);
        let v: Value = serde_json::from_str(&text).unwrap();
        let whole = v["choices"][0]["message"]["content"].as_str().unwrap();
        assert_eq!(whole, "a.txt\n```\nmade by the mock\n```\n");
        assert_eq!(v["usage"]["prompt_tokens"], 24);
        assert_eq!(m.answered().len(), 3);
    }

    #[test]
    fn trouble_comes_first_then_answers() {
        let limited = Trouble::RateLimited {
            retry_after_secs: 7,
        };
        let m = MockModel::start(script(Some((limited, 1))));
        let ask = json!({"model": "gpt-5.4", "messages": []});
        let (code, text) = post(&m.base_url(), "/v1/chat/completions", &ask);
        assert_eq!(code, 429);
        assert!(text.contains("try again in 7s"), "{text}");
        assert_eq!(post(&m.base_url(), "/v1/chat/completions", &ask).0, 200);
        let seen = m.requests();
        assert_eq!(
            seen.iter().map(|r| r.status).collect::<Vec<_>>(),
            [429, 200]
        );
        assert_eq!(m.answered().len(), 1);
        let over = MockModel::start(script(Some((Trouble::Overloaded { status: 529 }, 1))));
        let (code, text) = post(&over.base_url(), "/v1/messages", &json!({}));
        assert_eq!(code, 529);
        assert!(text.contains("overloaded_error"), "{text}");
        let invalid = MockModel::start(script(Some((Trouble::Invalid, 1))));
        let (code, text) = post(&invalid.base_url(), "/v1/messages", &json!({}));
        assert_eq!(code, 400);
        assert!(
            text.contains("invalid_request_error") && text.contains(REFUSAL),
            "{text}"
        );
        assert!(invalid.answered().is_empty());
        let busy = MockModel::start(script(Some((Trouble::Overloaded { status: 500 }, 1))));
        let (code, text) = post(&busy.base_url(), "/v1/responses", &json!({}));
        assert_eq!(code, 500);
        assert!(text.contains("experiencing high demand"), "{text}");
        let cut = MockModel::start(script(Some((Trouble::Truncated, 1))));
        let (code, text) = post_raw(&cut.base_url(), "/v1/chat/completions", &ask);
        assert!(code.starts_with("HTTP/1.1 200"), "{code}");
        let whole: usize = text
            .split("content-length: ")
            .nth(1)
            .unwrap()
            .split('\r')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let body = text.split("\r\n\r\n").nth(1).unwrap();
        assert_eq!(body.len(), whole / 2, "{text}");
        let spoiled = MockModel::start(script(Some((Trouble::TrailingGarbage, 1))));
        let (code, text) = post(&spoiled.base_url(), "/v1/chat/completions", &ask);
        assert_eq!(code, 200);
        let (answer, after) = text.split_once('\n').unwrap();
        assert!(answer.contains("chat.completion"), "{text}");
        assert_eq!(format!("\n{after}"), GARBAGE);
        let key = MockModel::start(script(Some((Trouble::Unauthorized, 1))));
        let (code, text) = post(&key.base_url(), "/v1/chat/completions", &ask);
        assert_eq!(code, 401);
        assert!(text.contains("invalid_api_key"), "{text}");
    }
}
