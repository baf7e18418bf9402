//! Claude Code (`claude`), headless:
//!
//! ```text
//! claude -p --output-format stream-json --verbose
//!   --permission-mode acceptEdits
//!   --allowedTools Read,Edit,MultiEdit,Write,Glob,Grep,LS,Bash,TodoWrite
//!   [--model M] [--max-budget-usd B] < prompt
//! ```
//!
//! `acceptEdits` accepts file edits inside the working directory without a
//! prompt; the listed tools run without one; anything else (web access, MCP
//! tools) would need an approval nobody can give in `-p` mode, so it is
//! refused. Follows the stream-json format of Claude Code 2.x: a
//! `system/init` line, `assistant` messages, `rate_limit_event` lines, and
//! a final `result` line (the only line in `json` mode, which this parser
//! also reads). `--include-partial-messages` adds the API's own stream
//! events (`stream_event`), whose `message_delta` carries each call's
//! output tokens as they grow: the `assistant` lines repeat the usage of
//! the call's start (one output token), so without them a running total
//! would count each call's output only when the `result` line comes.
//!
//! Any process the agent starts can write lines into the CLI's stdout
//! (through `/proc/<pid>/fd/1`), so no line but the CLI's last `result`
//! decides anything: a later `result` replaces every verdict before it,
//! and a `rate_limit_event` only says when a limit that result reports
//! lifts.

use super::cli::{count, json_line, text, user_dir, Cli, Invocation, Limit, Parsed};
use super::cli::{Seed, StateLayout, StreamParser};
use super::limits::{self, Now};
use super::{AttemptContext, Usage, UsageSoFar};
use serde_json::Value;
use std::time::Duration;

/// The Claude Code adapter.
#[derive(Default)]
pub(crate) struct Claude;

impl Cli for Claude {
    const NAME: &'static str = "claude";
    const FAMILY: Option<&'static str> = Some("claude");
    const INSTALL: &'static str = "npm install -g @anthropic-ai/claude-code";
    const ENV: &'static [&'static str] = &["ANTHROPIC_*", "CLAUDE_*", "CLAUDE_CODE_*"];
    const HOSTS: &'static [&'static str] = &[
        "api.anthropic.com:443",
        "console.anthropic.com:443",
        "platform.claude.com:443",
        "claude.ai:443",
    ];

    fn args(&self, _ctx: &AttemptContext, run: Invocation<'_>) -> Vec<String> {
        let mut args: Vec<String> = [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Read,Edit,MultiEdit,Write,Glob,Grep,LS,Bash,TodoWrite",
        ]
        .map(String::from)
        .to_vec();
        args.extend(run.model_args("--model"));
        if let Some(budget) = run.max_budget_usd {
            args.extend(["--max-budget-usd".to_string(), format!("{budget:.4}")]);
        }
        args
    }

    /// Claude Code retries a refused call up to ten times on its own, with
    /// growing waits that can outlast the agent's timeout; after two it
    /// gives up and planwright's pause (which honours the reset) takes over.
    fn env(&self) -> Vec<(String, String)> {
        vec![(MAX_RETRIES_ENV.into(), MAX_RETRIES.to_string())]
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        Box::<ClaudeParser>::default()
    }

    /// `CLAUDE_CONFIG_DIR` holds sessions, settings and (on Linux) the
    /// login in `.credentials.json`; on macOS the login is in the keychain,
    /// which a redirected directory does not see (use `ANTHROPIC_API_KEY`
    /// or `[agent] isolate = false` there). The user's settings (a gateway
    /// URL and key in `settings.json`'s `env`), memory, subagents and
    /// commands are copied.
    /// The `ANTHROPIC_BASE_URL` in the `env` of the user's `settings.json`
    /// (which each slot's copy carries).
    fn gateways(&self, var: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
        let path = user_dir(var, "CLAUDE_CONFIG_DIR", ".claude").join("settings.json");
        let read = || {
            let settings: Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
            settings
                .pointer("/env/ANTHROPIC_BASE_URL")?
                .as_str()
                .map(String::from)
        };
        let place = format!("the `env` of `{}`", path.display());
        read().map(|url| vec![(place, url)]).unwrap_or_default()
    }

    fn state(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<StateLayout> {
        let user = user_dir(var, "CLAUDE_CONFIG_DIR", ".claude");
        Some(StateLayout {
            vars: vec![("CLAUDE_CONFIG_DIR", "")],
            files: vec![],
            seeds: vec![
                Seed::link(user.join(".credentials.json"), ".credentials.json"),
                Seed::copy(user.join("settings.json"), "settings.json"),
                Seed::copy(user.join("CLAUDE.md"), "CLAUDE.md"),
                Seed::copy(user.join("agents"), "agents"),
                Seed::copy(user.join("commands"), "commands"),
            ],
            tunes: vec![],
        })
    }
}

/// The variable that bounds Claude Code's own retries of a refused call.
pub(crate) const MAX_RETRIES_ENV: &str = "CLAUDE_CODE_MAX_RETRIES";

/// Its retries: a refused attempt makes `1 + MAX_RETRIES` calls.
pub(crate) const MAX_RETRIES: u32 = 2;

/// How Claude Code words a refusal by its provider at the start of a
/// failed result's text (lower case): the subscription's usage limits, an
/// API error with status 429 or 529 (overloaded), an empty balance.
const LIMITS: &[&str] = &[
    "claude ai usage limit reached",
    "you've hit your limit",
    "5-hour limit reached",
    "api error: 429",
    "api error: 529",
    "api error: 500",
    "api error: 502",
    "api error: 503",
    "api error: request rejected (429)",
    "api error: rate limit",
    "api error: overloaded",
    "api error: repeated 529",
    "credit balance is too low",
];

/// Reads Claude Code's stream-json (or json) output.
#[derive(Debug, Default)]
pub(crate) struct ClaudeParser {
    parsed: Parsed,
    /// The last assistant text, in case the result line never comes.
    last_text: Option<String>,
    /// `resetsAt` of the last rejected `rate_limit_event` since the last
    /// result line.
    rejected: Option<i64>,
    /// What the last result line decided.
    verdict: Option<Verdict>,
    /// The last `system/api_retry` line of a refusal since the last
    /// answered call or result: its status and the delay Claude Code chose
    /// (from the provider's `retry-after`).
    retry: Option<(u64, Option<u64>)>,
    /// Each API call's tokens so far, by message id (a message's content
    /// blocks arrive as separate lines repeating its usage, its stream
    /// events with its growing output), until the result line gives the
    /// total.
    calls: Vec<(String, Usage)>,
    /// The message id of the last `message_start` stream event, for a
    /// `message_delta` that names none.
    streaming: Option<String>,
    /// The last API error Claude Code reported as an assistant message
    /// (`is_api_error_message`), as it printed it.
    api_error: Option<String>,
}

/// A failed result line: its message, whether it is the provider's
/// refusal, the reset of a rejected rate limit that came before it, and
/// the error records as Claude Code printed them (the API error, then
/// the result line).
#[derive(Debug)]
struct Verdict {
    message: String,
    limited: bool,
    key_refused: bool,
    resets_at: Option<i64>,
    records: String,
}

impl StreamParser for ClaudeParser {
    fn line(&mut self, line: &str) {
        let Some(v) = json_line(line) else { return };
        if let Some(id) = text(&v, "session_id") {
            self.parsed.session_id = Some(id);
        }
        match v.get("type").and_then(Value::as_str) {
            Some("system") if text(&v, "subtype").as_deref() == Some("api_retry") => {
                let status = v.get("error_status").and_then(Value::as_u64);
                self.retry = status
                    .filter(|s| limits::is_provider_status(*s))
                    .map(|s| (s, v.get("retry_delay_ms").and_then(Value::as_u64)));
            }
            Some("system") => {
                if let Some(model) = text(&v, "model") {
                    self.parsed.model = Some(model);
                }
            }
            Some("assistant") => self.assistant(&v, line),
            Some("stream_event") => self.stream_event(&v),
            Some("rate_limit_event") => self.rate_limit(&v),
            Some("result") => self.result(&v, line),
            _ => {}
        }
    }

    fn so_far(&self) -> Option<UsageSoFar> {
        let usage = self.parsed.usage.or_else(|| {
            let mut sum: Option<Usage> = None;
            for (_, u) in &self.calls {
                *sum.get_or_insert_with(Usage::default) += *u;
            }
            sum
        })?;
        Some(UsageSoFar {
            model: self.parsed.model.clone(),
            usage,
        })
    }

    fn finish(&mut self, _output_tail: &str, now: Now) -> Parsed {
        let mut parsed = std::mem::take(&mut self.parsed);
        if parsed.final_message.is_none() {
            parsed.final_message = self.last_text.take();
        }
        let delay = self.retry.and_then(|(_, ms)| ms).map(Duration::from_millis);
        if let Some(v) = self.verdict.take() {
            if v.limited {
                let reset = v.resets_at.map(|t| limits::until(t, now));
                parsed.limit = Some(Limit {
                    retry_after: reset
                        .or_else(|| limits::retry_after(&v.message, now))
                        .or(delay),
                    reason: v.message.clone(),
                });
            }
            parsed.key_refused = v.key_refused;
            parsed.failure = Some(v.message);
            parsed.evidence = Some(v.records);
        } else if let Some((status, _)) = self.retry {
            parsed.retrying = Some(Limit {
                reason: format!("Claude Code was retrying API error {status} when it stopped"),
                retry_after: delay,
            });
        }
        parsed
    }
}

impl ClaudeParser {
    fn assistant(&mut self, v: &Value, line: &str) {
        if v.get("is_api_error_message").and_then(Value::as_bool) == Some(true) {
            self.api_error = Some(line.trim().to_string());
        } else {
            // A call answered after retries: the refusal is over.
            self.retry = None;
        }
        let id = v.pointer("/message/id").and_then(Value::as_str);
        if let (Some(id), Some(u)) = (id, v.pointer("/message/usage")) {
            self.call(id, usage(u));
        }
        let Some(content) = v.pointer("/message/content").and_then(Value::as_array) else {
            return;
        };
        let texts: Vec<&str> = content
            .iter()
            .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect();
        if !texts.is_empty() {
            self.last_text = Some(texts.join("\n"));
        }
    }

    /// The API's own stream event: a call's start (its input and cache
    /// tokens) and its `message_delta` (its output so far).
    fn stream_event(&mut self, v: &Value) {
        let event = v.get("event").unwrap_or(&Value::Null);
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                let Some(id) = event.pointer("/message/id").and_then(Value::as_str) else {
                    return;
                };
                self.streaming = Some(id.to_string());
                if let Some(u) = event.pointer("/message/usage") {
                    self.call(id, usage(u));
                }
            }
            Some("message_delta") => {
                let id = text(v, "api_message_id").or_else(|| self.streaming.clone());
                if let (Some(id), Some(u)) = (id, event.get("usage")) {
                    self.call(&id, usage(u));
                }
            }
            _ => {}
        }
    }

    /// What a line says of call `id`'s tokens: each count only grows
    /// within a call, and a line may give some of them (a `message_delta`
    /// from the API may carry only `output_tokens`), so each is the most
    /// any line said.
    fn call(&mut self, id: &str, u: Usage) {
        let Some((_, call)) = self.calls.iter_mut().find(|(seen, _)| seen == id) else {
            self.calls.push((id.to_string(), u));
            return;
        };
        call.input_tokens = call.input_tokens.max(u.input_tokens);
        call.output_tokens = call.output_tokens.max(u.output_tokens);
        call.cache_read_tokens = call.cache_read_tokens.max(u.cache_read_tokens);
        call.cache_write_tokens = call.cache_write_tokens.max(u.cache_write_tokens);
    }

    fn rate_limit(&mut self, v: &Value) {
        let Some(info) = v.get("rate_limit_info") else {
            return;
        };
        if info.get("status").and_then(Value::as_str) == Some("rejected") {
            self.rejected = info.get("resetsAt").and_then(Value::as_i64);
        }
    }

    /// A result line: the attempt's totals, and a verdict that replaces
    /// any earlier line's.
    fn result(&mut self, v: &Value, line: &str) {
        let p = &mut self.parsed;
        p.complete = true;
        p.final_message = text(v, "result").or(p.final_message.take());
        p.cost_usd = v.get("total_cost_usd").and_then(Value::as_f64);
        if let Some(u) = v.get("usage") {
            p.usage = Some(usage(u));
        }
        if p.model.is_none() {
            let models = v.get("modelUsage").and_then(Value::as_object);
            p.model = models.and_then(|m| m.keys().next().cloned());
        }
        let rejected = self.rejected.take();
        let api_error = self.api_error.take();
        self.verdict = None;
        let retry = self.retry.take();
        if v.get("is_error").and_then(Value::as_bool) != Some(true) {
            return;
        }
        let message = error_message(v);
        let status = v.get("api_error_status").and_then(Value::as_u64);
        let limited =
            status.is_some_and(limits::is_provider_status) || limits::begins_with(&message, LIMITS);
        let records = match api_error {
            Some(api_error) => format!("{api_error}\n{}", line.trim()),
            None => line.trim().to_string(),
        };
        self.verdict = Some(Verdict {
            key_refused: status.is_some_and(limits::is_key_status),
            message,
            limited,
            resets_at: rejected,
            records,
        });
        // Its delay stays the reset hint of this verdict.
        self.retry = retry.filter(|_| limited);
    }
}

/// Anthropic's usage object: `input_tokens` already excludes cache reads
/// and writes.
fn usage(u: &Value) -> Usage {
    Usage {
        input_tokens: count(u, "input_tokens"),
        output_tokens: count(u, "output_tokens"),
        cache_read_tokens: count(u, "cache_read_input_tokens"),
        cache_write_tokens: count(u, "cache_creation_input_tokens"),
    }
}

/// What a failed result says: its text, else its `errors`, else its subtype
/// (`error_max_turns`, `error_max_budget_usd`, ...).
fn error_message(v: &Value) -> String {
    let errors: Vec<String> = v
        .get("errors")
        .and_then(Value::as_array)
        .map(|e| {
            e.iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                .collect()
        })
        .unwrap_or_default();
    text(v, "result")
        .filter(|r| !r.is_empty())
        .or_else(|| (!errors.is_empty()).then(|| errors.join("; ")))
        .or_else(|| text(v, "subtype"))
        .unwrap_or_else(|| "Claude Code reported an error".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cli::parse_output;

    const NOW: Now = Now {
        unix: 1_796_040_000,
        utc_offset: 0,
    };

    fn parse(lines: &[&str]) -> Parsed {
        parse_output(ClaudeParser::default(), lines, "", NOW)
    }

    #[test]
    fn success_reads_result_usage_and_cost() {
        let p = parse(&[
            r#"{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-6"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"working"}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s1","total_cost_usd":0.0123,"usage":{"input_tokens":10,"output_tokens":20,"cache_creation_input_tokens":30,"cache_read_input_tokens":40}}"#,
        ]);
        assert!(p.complete && p.failure.is_none() && p.limit.is_none());
        assert_eq!(p.final_message.as_deref(), Some("Done."));
        assert_eq!(p.session_id.as_deref(), Some("s1"));
        assert_eq!(p.model.as_deref(), Some("claude-sonnet-4-6"));
        assert_eq!(p.cost_usd, Some(0.0123));
        let u = p.usage.unwrap();
        assert_eq!(
            (
                u.input_tokens,
                u.output_tokens,
                u.cache_read_tokens,
                u.cache_write_tokens
            ),
            (10, 20, 40, 30)
        );
    }

    #[test]
    fn usage_so_far_sums_api_calls_until_the_result() {
        let mut p = ClaudeParser::default();
        assert_eq!(p.so_far(), None);
        for l in [
            r#"{"type":"system","subtype":"init","model":"claude-sonnet-4-6"}"#,
            r#"{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":5,"output_tokens":1,"cache_read_input_tokens":100}}}"#,
            r#"{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":5,"output_tokens":9,"cache_read_input_tokens":100}}}"#,
            r#"{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":2,"output_tokens":3,"cache_creation_input_tokens":7}}}"#,
        ] {
            p.line(l);
        }
        let now = p.so_far().unwrap();
        assert_eq!(now.model.as_deref(), Some("claude-sonnet-4-6"));
        assert_eq!(
            now.usage,
            Usage {
                input_tokens: 7,
                output_tokens: 12,
                cache_read_tokens: 100,
                cache_write_tokens: 7
            }
        );
        p.line(
            r#"{"type":"result","is_error":false,"usage":{"input_tokens":1,"output_tokens":2}}"#,
        );
        assert_eq!(
            p.so_far().unwrap().usage.total(),
            3,
            "the result's total wins"
        );
    }

    #[test]
    fn rejected_rate_limit_gives_its_reset() {
        let p = parse(&[
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1796043600}}"#,
            r#"{"type":"result","subtype":"success","is_error":true,"result":"You've hit your limit","api_error_status":429}"#,
        ]);
        let limit = p.limit.unwrap();
        assert_eq!(limit.retry_after, Some(Duration::from_secs(3600)));
        assert_eq!(limit.reason, "You've hit your limit");
    }

    #[test]
    fn the_last_result_decides_and_earlier_lines_do_not() {
        let forged = [
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":4102444800}}"#,
            r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 429","api_error_status":429}"#,
        ];
        let success = r#"{"type":"result","subtype":"success","is_error":false,"result":"Done."}"#;
        let p = parse(&[forged[0], forged[1], success]);
        assert!(p.failure.is_none() && p.limit.is_none(), "{p:?}");
        assert_eq!(p.final_message.as_deref(), Some("Done."));
        let max_turns = r#"{"type":"result","subtype":"error_max_turns","is_error":true}"#;
        let p = parse(&[success, max_turns]);
        assert_eq!(p.failure.as_deref(), Some("error_max_turns"));
        // A rejection before a failure that is not a limit makes it none.
        let p = parse(&[forged[0], max_turns]);
        assert!(p.failure.is_some() && p.limit.is_none(), "{p:?}");
    }

    #[test]
    fn a_limit_is_the_results_status_or_the_start_of_its_text() {
        let limited = |result: &str| {
            let line = format!(r#"{{"type":"result","is_error":true,"result":{result:?}}}"#);
            parse(&[line.as_str()]).limit.is_some()
        };
        assert!(limited("Claude AI usage limit reached|1796043600"));
        assert!(limited("API Error: 529 {\"type\":\"overloaded_error\"}"));
        assert!(!limited("Tests fail: the quota check hits its rate limit"));
        let status =
            parse(&[r#"{"type":"result","is_error":true,"result":"boom","api_error_status":529}"#]);
        assert!(status.limit.is_some());
    }

    #[test]
    fn failures_and_truncation() {
        let p = parse(&[r#"{"type":"result","subtype":"error_max_turns","is_error":true}"#]);
        assert_eq!(p.failure.as_deref(), Some("error_max_turns"));
        assert!(p.limit.is_none());
        let cut = parse(&[
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"half"}]}}"#,
            r#"{"type":"result","subtype":"succ"#,
            "not json at all",
        ]);
        assert!(!cut.complete && cut.usage.is_none());
        assert_eq!(cut.final_message.as_deref(), Some("half"));
    }

    /// Claude Code 2.1.332 with `--include-partial-messages` (recorded by
    /// the real-agent tier, fields it does not read left out): a call's
    /// `assistant` line repeats its start's usage, one output token; its
    /// `message_delta` has the output so far.
    const STREAMED: [&str; 5] = [
        r#"{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[],"usage":{"input_tokens":11,"output_tokens":1,"cache_read_input_tokens":13,"cache_creation_input_tokens":5}}},"session_id":"s","parent_tool_use_id":null,"api_message_id":"msg_1"}"#,
        r#"{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{"type":"tool_use","id":"toolu_1","name":"Write","input":{}}],"usage":{"input_tokens":11,"output_tokens":1,"cache_read_input_tokens":13,"cache_creation_input_tokens":5}},"parent_tool_use_id":null,"session_id":"s"}"#,
        r#"{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":11,"output_tokens":7,"cache_read_input_tokens":13,"cache_creation_input_tokens":5}},"session_id":"s","parent_tool_use_id":null,"api_message_id":"msg_1"}"#,
        r#"{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_2","usage":{"input_tokens":11,"output_tokens":1,"cache_read_input_tokens":13,"cache_creation_input_tokens":5}}},"session_id":"s","api_message_id":"msg_2"}"#,
        // Anthropic's own message_delta may carry the output alone.
        r#"{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}},"session_id":"s"}"#,
    ];

    #[test]
    fn running_totals_count_each_calls_output_as_its_stream_ends() {
        let mut p = ClaudeParser::default();
        let mut totals = Vec::new();
        for line in STREAMED {
            p.line(line);
            totals.push(
                p.so_far()
                    .map(|s| (s.usage.input_tokens, s.usage.output_tokens)),
            );
        }
        let want = [(11, 1), (11, 1), (11, 7), (22, 8), (22, 16)];
        assert_eq!(totals, want.map(Some));
        let u = p.so_far().unwrap().usage;
        assert_eq!((u.cache_read_tokens, u.cache_write_tokens), (26, 10));
    }

    /// Claude Code 2.1.332 against a server answering 400 (recorded by the
    /// real-agent tier, fields it does not read left out).
    const REFUSED: [&str; 4] = [
        r#"{"type":"system","subtype":"init","session_id":"s","model":"claude-sonnet-4-6"}"#,
        r#"{"type":"system","subtype":"status","status":"requesting","session_id":"s"}"#,
        r#"{"type":"assistant","message":{"id":"7a21a732","model":"<synthetic>","role":"assistant","type":"message","usage":{"input_tokens":0,"output_tokens":0},"content":[{"type":"text","text":"API Error: 400 The mock model refuses this request."}]},"session_id":"s","error":"unknown","is_api_error_message":true,"api_error_status":400,"api_error_type":"invalid_request_error"}"#,
        r#"{"stop_reason":"stop_sequence","session_id":"s","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0},"modelUsage":{},"terminal_reason":"api_error","is_error":true,"num_turns":1,"subtype":"success","api_error_status":400,"api_error_type":"invalid_request_error","result":"API Error: 400 The mock model refuses this request.","type":"result"}"#,
    ];

    #[test]
    fn a_failures_evidence_is_its_error_records() {
        let p = parse(&REFUSED);
        assert_eq!(
            p.failure.as_deref(),
            Some("API Error: 400 The mock model refuses this request.")
        );
        assert!(p.limit.is_none(), "a 400 is the request's fault");
        let records = format!("{}\n{}", REFUSED[2], REFUSED[3]);
        assert_eq!(p.evidence.as_deref(), Some(records.as_str()));
        // Without the API error, the result line alone; after a later
        // success, none.
        let p = parse(&[REFUSED[0], REFUSED[3]]);
        assert_eq!(p.evidence.as_deref(), Some(REFUSED[3]));
        let success = r#"{"type":"result","subtype":"success","is_error":false,"result":"Done."}"#;
        let p = parse(&[REFUSED[2], REFUSED[3], success]);
        assert!(p.evidence.is_none() && p.failure.is_none(), "{p:?}");
    }

    /// Claude Code 2.1.332 against a server answering 429 with
    /// `retry-after: 1` (recorded by the real-agent tier).
    const RETRY: &str = r#"{"type":"system","subtype":"api_retry","attempt":2,"max_retries":2,"retry_delay_ms":1148,"error_status":429,"error":"rate_limit","session_id":"s"}"#;

    #[test]
    fn a_refusal_takes_its_reset_from_the_retry_delay_claude_chose() {
        let p = parse(&[
            RETRY,
            r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit"}]},"is_api_error_message":true,"api_error_status":429}"#,
            r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit"}"#,
        ]);
        let limit = p.limit.unwrap();
        assert_eq!(limit.retry_after, Some(Duration::from_millis(1148)));
        assert!(p.retrying.is_none());
        for status in [500, 502, 503, 529] {
            let line = format!(
                r#"{{"type":"result","is_error":true,"api_error_status":{status},"result":"API Error: {status}"}}"#
            );
            assert!(parse(&[line.as_str()]).limit.is_some(), "{status}");
        }
    }

    #[test]
    fn output_that_ends_while_retrying_a_refusal_says_so() {
        let p = parse(&[RETRY]);
        let retrying = p.retrying.unwrap();
        assert_eq!(retrying.retry_after, Some(Duration::from_millis(1148)));
        assert!(retrying.reason.contains("429"), "{}", retrying.reason);
        // A call answered after the retry ends it; a retry of another
        // error (a 400) is no refusal.
        let answered =
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"ok"}]}}"#;
        assert!(parse(&[RETRY, answered]).retrying.is_none());
        let other = RETRY.replace("\"error_status\":429", "\"error_status\":400");
        assert!(parse(&[other.as_str()]).retrying.is_none());
    }
}
