//! GitHub Copilot CLI (`copilot`, npm `@github/copilot`), headless:
//!
//! ```text
//! copilot --output-format json --allow-all-tools --no-ask-user
//!   --disable-builtin-mcps --disable-client-telemetry --no-auto-update
//!   --usage-output-file TMPDIR/copilot-usage.json [--model M] < prompt
//! ```
//!
//! With standard input not a terminal and no `-p`, the prompt is read from
//! it. `--allow-all-tools` is what its non-interactive mode requires; its
//! path check stays on (no `--allow-all-paths`), so its file tools keep to
//! the working directory, and no URL is approved. The built-in GitHub MCP
//! server, which would act on GitHub with the user's sign-in, is off.
//! Follows the `--output-format json` JSONL of Copilot CLI 1.0.102: one
//! `{type, data, id, timestamp}` event a line (`assistant.message`,
//! `model.call_failure`, `assistant.turn_retry`, `session.error`), then a
//! `result` line (`sessionId`, `exitCode`) as its last record. Its stdout
//! carries no token counts: they are in the file `--usage-output-file`
//! names, written as it exits (`modelMetrics` per model), read as the
//! attempt's record.

use super::cli::{count, json_line, text, user_dir, Cli, Invocation, Limit, Parsed};
use super::cli::{StateLayout, StreamParser};
use super::limits::{self, Now};
use super::{AttemptContext, Usage};
use serde_json::Value;
use std::path::PathBuf;

/// The Copilot CLI adapter.
#[derive(Default)]
pub(crate) struct Copilot;

/// The usage file's name in the attempt's temporary folder.
const USAGE_FILE: &str = "copilot-usage.json";

impl Cli for Copilot {
    const NAME: &'static str = "copilot";
    const INSTALL: &'static str = "npm install -g @github/copilot";
    // Its own variables only: `COPILOT_GITHUB_TOKEN` is its sign-in, the
    // `COPILOT_PROVIDER_*` its own model provider. `GH_TOKEN` and
    // `GITHUB_TOKEN`, which it also reads, reach it only through
    // `[agent] env`, as for every agent.
    const ENV: &'static [&'static str] = &["COPILOT_*"];
    const HOSTS: &'static [&'static str] = &[
        "api.githubcopilot.com:443",
        "api.individual.githubcopilot.com:443",
        "api.business.githubcopilot.com:443",
        "api.enterprise.githubcopilot.com:443",
        "api.github.com:443",
        "github.com:443",
    ];

    fn args(&self, ctx: &AttemptContext, run: Invocation<'_>) -> Vec<String> {
        let mut args: Vec<String> = [
            "--output-format",
            "json",
            "--allow-all-tools",
            "--no-ask-user",
            "--disable-builtin-mcps",
            "--disable-client-telemetry",
            "--no-auto-update",
        ]
        .map(String::from)
        .to_vec();
        if let Some(file) = self.record(ctx) {
            args.extend([
                "--usage-output-file".to_string(),
                file.display().to_string(),
            ]);
        }
        args.extend(run.model_args("--model"));
        args
    }

    /// Its usage file, in the attempt's temporary folder (fresh for each
    /// attempt, so it holds this attempt's calls only).
    fn record(&self, ctx: &AttemptContext) -> Option<PathBuf> {
        let tmp = ctx.env.iter().rev().find(|(k, _)| k == "TMPDIR")?;
        Some(PathBuf::from(&tmp.1).join(USAGE_FILE))
    }

    /// Its settings, sessions and logs live in `COPILOT_HOME` (default
    /// `~/.copilot`), and the package its executable unpacks as it first
    /// starts (about 235 MB) in `COPILOT_CACHE_HOME`: both per slot, reset
    /// with the home. Its `settings.json` is copied; its sign-in is in the
    /// system keychain or `config.json`, which also holds state it
    /// rewrites, so it is linked.
    fn state(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<StateLayout> {
        let home = user_dir(var, "COPILOT_HOME", ".copilot");
        Some(StateLayout {
            vars: vec![("COPILOT_HOME", ""), ("COPILOT_CACHE_HOME", "cache")],
            files: vec![],
            seeds: vec![
                super::cli::Seed::link(home.join("config.json"), "config.json"),
                super::cli::Seed::copy(home.join("settings.json"), "settings.json"),
            ],
            tunes: vec![],
        })
    }

    /// `--help` unpacks its package and starts its program (`--version`
    /// alone is answered by the executable before either).
    fn probe_args(&self, _confined: bool) -> Vec<String> {
        ["--no-auto-update", "--help"].map(String::from).to_vec()
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        Box::<CopilotParser>::default()
    }
}

/// A model call the provider refused, as `model.call_failure` gave it.
#[derive(Debug, Clone, Default)]
struct CallFailure {
    status: Option<u64>,
    message: String,
}

/// Reads `copilot --output-format json` events and its usage file.
#[derive(Debug, Default)]
pub(crate) struct CopilotParser {
    parsed: Parsed,
    /// The `session.error`'s `statusCode` and `errorType`.
    status: Option<u64>,
    error_type: Option<String>,
    /// The last refused call.
    last_failure: Option<CallFailure>,
    /// What the call Copilot waits to retry was refused with.
    waiting: Option<String>,
    /// Tokens per model from the usage file.
    recorded: Option<Vec<(String, Usage)>>,
}

impl StreamParser for CopilotParser {
    fn line(&mut self, line: &str) {
        let Some(v) = json_line(line) else { return };
        let data = v.get("data").unwrap_or(&Value::Null);
        match v.get("type").and_then(Value::as_str) {
            Some("assistant.message") => {
                if let Some(m) = text(data, "model") {
                    self.parsed.model = Some(m);
                }
                if let Some(t) = text(data, "content").filter(|t| !t.trim().is_empty()) {
                    self.parsed.final_message = Some(t);
                }
            }
            Some("model.call_start") => {
                // A call is under way: not waiting to retry any more.
                self.waiting = None;
                if let Some(m) = text(data, "model") {
                    self.parsed.model = Some(m);
                }
            }
            Some("model.call_failure") => self.call_failure(data),
            Some("assistant.turn_retry") => self.retry(data),
            Some("session.error") => self.error(data),
            Some("result") => self.result(&v),
            _ => {}
        }
    }

    fn record(&mut self, content: Option<&[u8]>) -> Option<String> {
        let Some(content) = content else {
            return Some(
                "copilot: it wrote no usage file: the attempt's tokens are not reported"
                    .to_string(),
            );
        };
        let v: Value = serde_json::from_slice(content).unwrap_or(Value::Null);
        let models = per_model(&v);
        let note = format!(
            "copilot: tokens from its usage file ({})",
            planwright_plan::words::count(models.len(), "model")
        );
        if let Some(current) = text(&v, "currentModel") {
            self.parsed.model = Some(current);
        }
        self.recorded = Some(models);
        Some(note)
    }

    fn finish(&mut self, _output_tail: &str, now: Now) -> Parsed {
        let mut p = std::mem::take(&mut self.parsed);
        p.retrying = self.waiting.take().map(|m| Limit::from_message(m, now));
        if let Some(models) = self.recorded.take().filter(|m| !m.is_empty()) {
            let mut total = Usage::default();
            for (_, u) in &models {
                total += *u;
            }
            p.usage = Some(total);
            if models.len() > 1 {
                p.per_model = models;
            } else if p.model.is_none() {
                p.model = models.first().map(|(m, _)| m.clone());
            }
        }
        // The provider's refusal is the error's status or Copilot's own
        // classification of it, never its words.
        if let Some(message) = p.failure.clone() {
            let refused = self.status.is_some_and(limits::is_provider_status)
                || self.error_type.as_deref() == Some("rate_limit");
            if refused {
                p.limit = Some(limit(message, now));
            }
            p.key_refused = self.status.is_some_and(limits::is_key_status)
                || self.error_type.as_deref() == Some("authentication");
        }
        p
    }
}

impl CopilotParser {
    /// A refused call: Copilot waits (its backoff, or the `retry-after`
    /// it was given) before it says it retries and calls again, so a
    /// timeout before that next call starts is the provider's trouble,
    /// not the ticket's.
    fn call_failure(&mut self, data: &Value) {
        let failure = CallFailure {
            status: data.get("statusCode").and_then(Value::as_u64),
            message: text(data, "errorMessage").unwrap_or_default(),
        };
        if failure.status.is_some_and(limits::is_provider_status) {
            self.waiting = Some(failure_message(&failure));
        }
        self.last_failure = Some(failure);
    }

    /// Its retry of a call it classed as rate-limited, whatever the status.
    fn retry(&mut self, data: &Value) {
        let Some(failure) = self.last_failure.clone() else {
            return;
        };
        if text(data, "reason").as_deref() == Some("rate_limit") {
            self.waiting = Some(failure_message(&failure));
        }
    }

    fn error(&mut self, data: &Value) {
        self.status = data.get("statusCode").and_then(Value::as_u64);
        self.error_type = text(data, "errorType");
        let message = text(data, "message").unwrap_or_else(|| "copilot reported an error".into());
        self.parsed.failure = Some(message);
        self.waiting = None;
    }

    /// Its last record: the session's id and exit code.
    fn result(&mut self, v: &Value) {
        self.parsed.complete = true;
        self.waiting = None;
        if let Some(id) = text(v, "sessionId") {
            self.parsed.session_id = Some(id);
        }
        let code = v.get("exitCode").and_then(Value::as_i64).unwrap_or(0);
        if code != 0 && self.parsed.failure.is_none() {
            self.parsed.failure = Some(format!("copilot ended its session with exit code {code}"));
        }
    }
}

/// A refused call's reason: its status and the provider's message (the
/// error body's `message` when it is JSON, as Copilot passes it on).
fn failure_message(f: &CallFailure) -> String {
    let said = serde_json::from_str::<Value>(&f.message)
        .ok()
        .and_then(|v| text(&v, "message"))
        .unwrap_or_else(|| f.message.clone());
    match f.status {
        Some(s) => format!("{s} {said}"),
        None => said,
    }
}

/// The limit a `session.error` reports; its reset read from the last
/// error it quotes ("... retried 5 times (total retry wait time: 5.63
/// seconds) Last error: 429 ... Please try again in 1s."), not from its
/// own retries' wait.
fn limit(message: String, now: Now) -> Limit {
    let last = message
        .rfind("Last error:")
        .map_or(message.as_str(), |i| &message[i..]);
    Limit {
        retry_after: limits::retry_after(last, now),
        reason: message,
    }
}

/// Tokens per model of a usage file: `modelMetrics.<model>.usage`
/// `{inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens}`, whose
/// `inputTokens` count the cached input (OpenAI's way), taken out here.
fn per_model(v: &Value) -> Vec<(String, Usage)> {
    let Some(models) = v.get("modelMetrics").and_then(Value::as_object) else {
        return Vec::new();
    };
    models
        .iter()
        .map(|(name, m)| {
            let u = m.get("usage").unwrap_or(&Value::Null);
            let (read, write) = (count(u, "cacheReadTokens"), count(u, "cacheWriteTokens"));
            let usage = Usage {
                input_tokens: count(u, "inputTokens").saturating_sub(read + write),
                output_tokens: count(u, "outputTokens"),
                cache_read_tokens: read,
                cache_write_tokens: write,
            };
            (name.clone(), usage)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cli::{parse_output, EPOCH};

    fn parse(lines: &[&str], usage_file: Option<&str>) -> Parsed {
        let mut parser = CopilotParser::default();
        for line in lines {
            parser.line(line);
        }
        parser.record(usage_file.map(str::as_bytes));
        parser.finish("", EPOCH)
    }

    /// Copilot CLI 1.0.102 against the real-agent tier's mock (OpenAI
    /// chat completions, two calls of 24 input tokens, 13 of them cached).
    const USAGE_FILE: &str = r#"{"totalPremiumRequestCost":0,"modelMetrics":{"gpt-5.4":{"requests":{"count":2,"cost":0},"usage":{"inputTokens":48,"outputTokens":14,"cacheReadTokens":26,"cacheWriteTokens":0},"totalNanoAiu":0}},"currentModel":"gpt-5.4","lastCallInputTokens":24,"lastCallOutputTokens":7}"#;

    const MESSAGE: &str = r#"{"type":"assistant.message","data":{"messageId":"m","model":"gpt-5.4","content":"Wrote the file.","toolRequests":[]},"id":"1","timestamp":"2026-12-07T04:03:33.553Z"}"#;
    const RESULT: &str = r#"{"type":"result","timestamp":"2026-12-07T04:03:33.905Z","sessionId":"5ef09936-bc4d-4e41-b098-dbd975d6098f","exitCode":0,"usage":{"premiumRequests":0}}"#;

    #[test]
    fn a_session_reads_its_message_and_its_usage_file() {
        let p = parse(&[MESSAGE, RESULT], Some(USAGE_FILE));
        assert!(p.complete && p.failure.is_none());
        assert_eq!(p.final_message.as_deref(), Some("Wrote the file."));
        assert_eq!(
            p.session_id.as_deref(),
            Some("5ef09936-bc4d-4e41-b098-dbd975d6098f")
        );
        assert_eq!(p.model.as_deref(), Some("gpt-5.4"));
        let u = p.usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.output_tokens, u.cache_read_tokens),
            (22, 14, 26)
        );
        let cut = parse(&[MESSAGE], None);
        assert!(!cut.complete && cut.usage.is_none());
    }

    #[test]
    fn a_refusal_is_read_from_its_status_never_its_words() {
        let limited = parse(
            &[
                r#"{"type":"session.error","data":{"errorType":"rate_limit","message":"Failed to get response from the AI model; retried 5 times (total retry wait time: 5.63 seconds) Last error: 429 Rate limit reached for requests. Please try again in 1s.","statusCode":429}}"#,
                r#"{"type":"result","sessionId":"s","exitCode":1}"#,
            ],
            None,
        );
        let limit = limited.limit.expect("a limit");
        assert_eq!(limit.retry_after, Some(std::time::Duration::from_secs(1)));
        let words = parse(
            &[
                r#"{"type":"session.error","data":{"errorType":"query","message":"429 rate limit exceeded in the quota test","statusCode":400}}"#,
            ],
            None,
        );
        assert!(words.failure.is_some() && words.limit.is_none());
        let key = parse(
            &[
                r#"{"type":"session.error","data":{"errorType":"authentication","message":"Authentication failed with provider (HTTP 401).","statusCode":401}}"#,
            ],
            None,
        );
        assert!(key.key_refused && key.limit.is_none());
    }

    #[test]
    fn output_cut_while_it_waits_to_retry_is_the_providers() {
        let p = parse_output(
            CopilotParser::default(),
            [
                r#"{"type":"model.call_failure","data":{"model":"gpt-5.4","statusCode":503,"errorMessage":"{\"message\":\"The server is overloaded.\"}"}}"#,
            ],
            "",
            EPOCH,
        );
        let retrying = p.retrying.expect("retrying");
        assert_eq!(retrying.reason, "503 The server is overloaded.");
        let calling = parse_output(
            CopilotParser::default(),
            [
                r#"{"type":"model.call_failure","data":{"statusCode":503,"errorMessage":"x"}}"#,
                r#"{"type":"assistant.turn_retry","data":{"reason":"api_error"}}"#,
                r#"{"type":"model.call_start","data":{"model":"gpt-5.4"}}"#,
            ],
            "",
            EPOCH,
        );
        assert!(calling.retrying.is_none());
    }
}
