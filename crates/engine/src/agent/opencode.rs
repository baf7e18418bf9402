//! opencode (`opencode run`), headless:
//!
//! ```text
//! opencode run --format json --dir WORKTREE [-m PROVIDER/MODEL] < prompt
//! ```
//!
//! Without `--auto`, `run` rejects every permission request (a question,
//! a path outside the project), so the agent stays in the workspace with
//! the tools opencode's configuration allows there. A model without a
//! provider gets the provider of its family (`claude-*` anthropic, `gpt-*`
//! openai, `gemini-*` google). Follows the `--format json` events of
//! opencode 1.x (`run.ts`): `{type, timestamp, sessionID, ...}` with
//! `text {part: {text}}`, `tool_use`, `step_finish {part: {reason, cost,
//! tokens: {input, output, reasoning, cache: {read, write}}}}` (one per
//! step: summed), `error {error: {name, data: {message, statusCode?}}}`.
//! Its last record is a `step_finish` with reason `stop` when the session
//! ends, or the `error` it ends on: opencode 1.18 prints no `done` (older
//! 1.x did; it is still read).

use super::cli::{count, json_line, text, user_dir, Cli, Invocation, Limit, Parsed};
use super::cli::{Seed, StateLayout, StreamParser};
use super::limits::{self, Now};
use super::{AttemptContext, Usage, UsageSoFar};
use serde_json::Value;

/// The opencode adapter.
#[derive(Default)]
pub(crate) struct Opencode;

impl Cli for Opencode {
    const NAME: &'static str = "opencode";
    const INSTALL: &'static str = "npm install -g opencode-ai";
    const ENV: &'static [&'static str] = &[
        "ANTHROPIC_*",
        "OPENAI_*",
        "OPENROUTER_*",
        "GEMINI_*",
        "OPENCODE_*",
    ];
    const HOSTS: &'static [&'static str] = &[
        "api.anthropic.com:443",
        "api.openai.com:443",
        "openrouter.ai:443",
        "generativelanguage.googleapis.com:443",
        "models.dev:443",
        "opencode.ai:443",
    ];

    fn args(&self, ctx: &AttemptContext, run: Invocation<'_>) -> Vec<String> {
        let mut args: Vec<String> = ["run", "--format", "json", "--dir"]
            .map(String::from)
            .to_vec();
        args.push(ctx.workspace.display().to_string());
        if let Some(model) = run.model {
            args.extend(["-m".to_string(), with_provider(model)]);
        }
        args
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        Box::<OpencodeParser>::default()
    }

    /// Sessions, its database and the login (`auth.json`) live under
    /// `$XDG_DATA_HOME/opencode`; `$XDG_STATE_HOME` holds its other state
    /// and `$XDG_CACHE_HOME` its caches (it makes `$XDG_CACHE_HOME/opencode`
    /// as it starts, and fails when it cannot): all three per slot, reset
    /// with the home. Its `bin` there, where it looks for ripgrep when
    /// `rg` is not on `PATH` and downloads it from GitHub when missing, and
    /// its `packages`, where it installs the npm packages of providers it
    /// does not bundle and of plugins (and uses one it finds without
    /// fetching it), are the user's, lent read-only. Its configuration folder is a copy of
    /// the user's in the slot too: opencode writes there as it starts (a
    /// `.gitignore`), and dies when it cannot.
    fn state(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<StateLayout> {
        let data = user_dir(var, "XDG_DATA_HOME", ".local/share").join("opencode");
        let config = user_dir(var, "XDG_CONFIG_HOME", ".config").join("opencode");
        let cache = user_dir(var, "XDG_CACHE_HOME", ".cache").join("opencode");
        Some(StateLayout {
            vars: vec![
                ("XDG_DATA_HOME", "data"),
                ("XDG_STATE_HOME", "state"),
                ("XDG_CACHE_HOME", "cache"),
                ("XDG_CONFIG_HOME", "config"),
            ],
            files: vec![],
            seeds: vec![
                Seed::link(data.join("auth.json"), "data/opencode/auth.json"),
                Seed::link(data.join("mcp-auth.json"), "data/opencode/mcp-auth.json"),
                Seed::copy(config, "config/opencode"),
                Seed::lend(cache.join("bin"), "cache/opencode/bin"),
                Seed::lend(cache.join("packages"), "cache/opencode/packages"),
            ],
            tunes: vec![],
        })
    }
}

/// `provider/model` as opencode wants it.
pub(crate) fn with_provider(model: &str) -> String {
    if model.contains('/') {
        return model.to_string();
    }
    let provider = [
        ("claude", "anthropic"),
        ("gpt", "openai"),
        ("o", "openai"),
        ("gemini", "google"),
    ]
    .iter()
    .find(|(prefix, _)| {
        model.starts_with(prefix)
            && model[prefix.len()..].starts_with(|c: char| c == '-' || c.is_ascii_digit())
    })
    .map(|(_, p)| *p);
    match provider {
        Some(p) => format!("{p}/{model}"),
        None => model.to_string(),
    }
}

/// Reads `opencode run --format json` events.
#[derive(Debug, Default)]
pub(crate) struct OpencodeParser {
    parsed: Parsed,
    cost: f64,
    status: Option<u64>,
}

impl StreamParser for OpencodeParser {
    fn line(&mut self, line: &str) {
        let Some(v) = json_line(line) else { return };
        if let Some(id) = text(&v, "sessionID") {
            self.parsed.session_id = Some(id);
        }
        let part = v.get("part").unwrap_or(&Value::Null);
        match v.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = text(part, "text").filter(|t| !t.trim().is_empty()) {
                    self.parsed.final_message = Some(t);
                }
            }
            Some("step_finish") => self.step(part),
            Some("error") => self.error(&v),
            Some("done") => self.parsed.complete = true,
            _ => {}
        }
    }

    fn so_far(&self) -> Option<UsageSoFar> {
        self.parsed.so_far()
    }

    fn finish(&mut self, _output_tail: &str, now: Now) -> Parsed {
        let mut p = std::mem::take(&mut self.parsed);
        // opencode prices from its own model list; 0 means it had no price.
        p.cost_usd = (self.cost > 0.0).then_some(self.cost);
        // The provider's refusal is the error's HTTP status, never its words.
        if let Some(message) = p.failure.clone() {
            if self.status.is_some_and(limits::is_provider_status) {
                p.limit = Some(Limit::from_message(message, now));
            }
            p.key_refused = self.status.is_some_and(limits::is_key_status);
        }
        p
    }
}

impl OpencodeParser {
    fn step(&mut self, part: &Value) {
        let t = part.get("tokens").unwrap_or(&Value::Null);
        let cache = t.get("cache").unwrap_or(&Value::Null);
        // opencode's `input` already excludes cache reads and writes.
        let step = Usage {
            input_tokens: count(t, "input"),
            output_tokens: count(t, "output") + count(t, "reasoning"),
            cache_read_tokens: count(cache, "read"),
            cache_write_tokens: count(cache, "write"),
        };
        let mut total = self.parsed.usage.unwrap_or_default();
        total += step;
        self.parsed.usage = Some(total);
        if let Some(c) = part
            .get("cost")
            .and_then(Value::as_f64)
            .filter(|c| c.is_finite())
        {
            self.cost += c.max(0.0);
        }
        if part.get("reason").and_then(Value::as_str) == Some("stop") {
            // The session went on to its end: an error before it (retried,
            // or written into the stream by a tool) is not the verdict.
            self.parsed.complete = true;
            self.parsed.failure = None;
            self.status = None;
        }
    }

    /// An error: the final record of a session that ends on it, replaced
    /// by a later `stop` step when opencode recovered.
    fn error(&mut self, v: &Value) {
        self.parsed.complete = true;
        let e = v.get("error").unwrap_or(&Value::Null);
        let data = e.get("data").unwrap_or(&Value::Null);
        self.status = data.get("statusCode").and_then(Value::as_u64);
        let message = text(data, "message")
            .or_else(|| text(e, "name"))
            .unwrap_or_else(|| "opencode reported an error".into());
        self.parsed.failure = Some(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cli::{parse_output, EPOCH};

    fn parse(lines: &[&str]) -> Parsed {
        parse_output(OpencodeParser::default(), lines, "", EPOCH)
    }

    #[test]
    fn steps_are_summed() {
        let p = parse(&[
            r#"{"type":"step_start","timestamp":1,"sessionID":"ses_1","part":{"type":"step-start"}}"#,
            r#"{"type":"step_finish","timestamp":2,"sessionID":"ses_1","part":{"type":"step-finish","reason":"tool-calls","cost":0.01,"tokens":{"input":100,"output":10,"reasoning":5,"cache":{"read":50,"write":20}}}}"#,
            r#"{"type":"text","timestamp":3,"sessionID":"ses_1","part":{"type":"text","text":"Done."}}"#,
            r#"{"type":"step_finish","timestamp":4,"sessionID":"ses_1","part":{"type":"step-finish","reason":"stop","cost":0.02,"tokens":{"input":10,"output":1,"reasoning":0,"cache":{"read":100,"write":0}}}}"#,
        ]);
        let u = p.usage.unwrap();
        assert_eq!(
            (
                u.input_tokens,
                u.output_tokens,
                u.cache_read_tokens,
                u.cache_write_tokens
            ),
            (110, 16, 150, 20)
        );
        assert!((p.cost_usd.unwrap() - 0.03).abs() < 1e-9);
        assert_eq!(p.session_id.as_deref(), Some("ses_1"));
        assert_eq!(p.final_message.as_deref(), Some("Done."));
        assert!(p.complete);
    }

    /// opencode 1.18.33 against a server answering 400 (recorded by the
    /// real-agent tier): the error is the last line it prints.
    const REFUSED: &str = r#"{"type":"error","timestamp":1796246276088,"sessionID":"ses_dc76101b8ffe0L7sFu2VuD3rhr","error":{"name":"APIError","data":{"message":"The mock model refuses this request.","statusCode":400,"isRetryable":false,"responseHeaders":{"content-length":"116","content-type":"application/json"},"responseBody":"{\"error\":{\"message\":\"The mock model refuses this request.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}","metadata":{"url":"http://mock-model.test:41015/v1/chat/completions"}}}}"#;

    #[test]
    fn a_session_that_ends_on_its_error_ended_with_its_final_record() {
        let p = parse(&[REFUSED]);
        assert!(p.complete, "opencode 1.18 prints no done event");
        assert_eq!(
            p.failure.as_deref(),
            Some("The mock model refuses this request.")
        );
        assert!(p.limit.is_none());
        let cut = parse(&[r#"{"type":"step_start","sessionID":"s","part":{"type":"step-start"}}"#]);
        assert!(!cut.complete);
    }

    #[test]
    fn errors_and_providers() {
        let p = parse(&[
            r#"{"type":"error","sessionID":"s","error":{"name":"APIError","data":{"message":"Too Many Requests","statusCode":429}}}"#,
        ]);
        assert!(p.limit.is_some() && p.failure.is_some());
        let words = parse(&[
            r#"{"type":"error","sessionID":"s","error":{"name":"UnknownError","data":{"message":"429: rate limit exceeded in the quota test"}}}"#,
        ]);
        assert!(words.failure.is_some() && words.limit.is_none());
        let recovered = parse(&[
            r#"{"type":"error","sessionID":"s","error":{"name":"APIError","data":{"message":"Too Many Requests","statusCode":429}}}"#,
            r#"{"type":"step_finish","sessionID":"s","part":{"reason":"stop","tokens":{"input":1,"output":1}}}"#,
        ]);
        assert!(recovered.failure.is_none() && recovered.limit.is_none());
        assert_eq!(
            with_provider("claude-sonnet-4-6"),
            "anthropic/claude-sonnet-4-6"
        );
        assert_eq!(with_provider("gpt-5.4"), "openai/gpt-5.4");
        assert_eq!(with_provider("o3"), "openai/o3");
        assert_eq!(with_provider("gemini-3-flash"), "google/gemini-3-flash");
        assert_eq!(with_provider("ollama/qwen3"), "ollama/qwen3");
        assert_eq!(with_provider("orca"), "orca");
    }
}
