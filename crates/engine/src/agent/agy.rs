//! Antigravity CLI (`agy`), headless:
//!
//! ```text
//! agy --print=PROMPT --output-format stream-json --print-timeout 1800s
//!   --dangerously-skip-permissions [--model M]
//! ```
//!
//! run in the workspace. `--print` takes the prompt itself (no standard
//! input); a charter too long for one argument is replaced by a sentence
//! pointing at the prompt file. `--print-timeout` (default 5 minutes) is
//! set to the attempt's own limit. Headless mode cannot answer permission
//! requests, so they are skipped; Antigravity's terminal sandbox (on by
//! default in its settings) and planwright's own sandbox bound the agent.
//! Antigravity's headless flags and its stream-json schema are not fully
//! documented: this follows what agb parses (lines keyed by `type` or
//! `event`: `init`, `step_update`, `result {status: SUCCESS|ERROR,
//! response}`; tokens under `usage`, `telemetry` or `stats`), agy 1.0.x.

use super::cli::{json_line, Cli, Invocation, Limit, Parsed, StreamParser};
use super::limits::{self, Now};
use super::{AttemptContext, Usage, UsageSoFar};
use serde_json::Value;

/// The Antigravity CLI adapter.
#[derive(Default)]
pub(crate) struct Agy;

/// Linux refuses a single argument longer than 128 KiB (`MAX_ARG_STRLEN`).
const MAX_INLINE_PROMPT: usize = 100 * 1024;

impl Cli for Agy {
    const NAME: &'static str = "agy";
    const INSTALL: &'static str = "curl -fsSL https://antigravity.google/cli/install.sh | bash";
    const ENV: &'static [&'static str] = &["GEMINI_*", "GOOGLE_*"];
    const HOSTS: &'static [&'static str] = &[
        "generativelanguage.googleapis.com:443",
        "cloudcode-pa.googleapis.com:443",
        "oauth2.googleapis.com:443",
        "accounts.google.com:443",
        "www.googleapis.com:443",
    ];
    const PROMPT_ON_STDIN: bool = false;

    fn args(&self, ctx: &AttemptContext, run: Invocation<'_>) -> Vec<String> {
        let prompt = match std::fs::read_to_string(&ctx.prompt_file) {
            Ok(text) if text.len() <= MAX_INLINE_PROMPT => text,
            _ => format!(
                "Read the file {} and carry out the task it describes.",
                ctx.prompt_file.display()
            ),
        };
        let secs = ctx.timeout.map_or(1800, |t| t.as_secs().max(1));
        let mut args = vec![
            format!("--print={prompt}"),
            "--output-format".into(),
            "stream-json".into(),
            "--print-timeout".into(),
            format!("{secs}s"),
            "--dangerously-skip-permissions".into(),
        ];
        args.extend(run.model_args("--model"));
        args
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        Box::<AgyParser>::default()
    }

    /// Its state is not isolated: its settings folder (unconfirmed: as
    /// Antigravity's CLI describes it, 1.0.x) is read where it is.
    fn reads(&self, var: &dyn Fn(&str) -> Option<String>) -> Vec<std::path::PathBuf> {
        let home = var("HOME").filter(|h| h.starts_with('/'));
        let settings = home.map(|h| std::path::PathBuf::from(h).join(".gemini/antigravity-cli"));
        settings.into_iter().collect()
    }
}

/// Reads agy's stream-json (and its one-object json) output.
#[derive(Debug, Default)]
pub(crate) struct AgyParser {
    parsed: Parsed,
    /// Whether the last error is the provider's refusal.
    limited: bool,
}

/// How agy's refusals by its provider (Google's API) begin, lower case.
const LIMITS: &[&str] = &[
    "resource_exhausted",
    "you have exhausted your",
    "quota exceeded",
    "429",
];

impl StreamParser for AgyParser {
    fn line(&mut self, line: &str) {
        let Some(v) = json_line(line) else { return };
        let p = &mut self.parsed;
        for key in [
            "session_id",
            "sessionId",
            "conversation_id",
            "conversationId",
        ] {
            if let Some(id) = v.get(key).and_then(Value::as_str) {
                p.session_id = Some(id.to_string());
            }
        }
        if let Some(model) = v.get("model").and_then(Value::as_str) {
            p.model = Some(model.to_string());
        }
        let kind = v
            .get("type")
            .or_else(|| v.get("event"))
            .and_then(Value::as_str);
        match kind {
            Some("result") => self.result(&v),
            Some("error") => self.error(&v),
            // The one-object `json` format has no type, only a status.
            None if v.get("status").is_some() => self.result(&v),
            _ => {}
        }
    }

    fn so_far(&self) -> Option<UsageSoFar> {
        self.parsed.so_far()
    }

    fn finish(&mut self, _output_tail: &str, now: Now) -> Parsed {
        let mut p = std::mem::take(&mut self.parsed);
        if let Some(message) = p.failure.clone().filter(|_| self.limited) {
            p.limit = Some(Limit::from_message(message, now));
        }
        p
    }
}

impl AgyParser {
    /// An error: its message, and whether it is the provider's refusal (by
    /// its code or status, else by how the message begins). A later
    /// result replaces it.
    fn error(&mut self, v: &Value) {
        let e = v.get("error").filter(|e| e.is_object()).unwrap_or(v);
        let message = message(v).unwrap_or_else(|| v.to_string());
        let code = e.get("code").and_then(Value::as_u64);
        let status = e.get("status").and_then(Value::as_str);
        self.limited = code == Some(429)
            || status == Some("RESOURCE_EXHAUSTED")
            || limits::begins_with(&message, LIMITS);
        self.parsed.failure = Some(message);
    }

    fn result(&mut self, v: &Value) {
        let body = v.get("result").filter(|r| r.is_object()).unwrap_or(v);
        let status = [v, body]
            .iter()
            .find_map(|x| x.get("status").and_then(Value::as_str))
            .unwrap_or("")
            .to_lowercase();
        let answer = ["response", "structured_output", "result"]
            .iter()
            .find_map(|k| body.get(*k).and_then(Value::as_str));
        let p = &mut self.parsed;
        p.complete = true;
        p.final_message = answer.map(str::to_string).or(p.final_message.take());
        let tokens = ["usage", "telemetry", "stats"]
            .iter()
            .find_map(|k| body.get(*k).or_else(|| v.get(*k)));
        if let Some(t) = tokens {
            p.usage = Some(usage(t));
        }
        p.failure = None;
        self.limited = false;
        if matches!(status.as_str(), "error" | "failed" | "failure") {
            match [body, v].into_iter().find(|x| x.get("error").is_some()) {
                Some(holder) => self.error(holder),
                None => {
                    let why = message(body).or_else(|| message(v));
                    self.parsed.failure =
                        Some(why.unwrap_or_else(|| format!("agy reported status {status}")));
                }
            }
        }
    }
}

fn message(v: &Value) -> Option<String> {
    let e = v.get("error").unwrap_or(v);
    e.get("message")
        .and_then(Value::as_str)
        .or_else(|| e.as_str())
        .map(str::to_string)
}

fn first(v: &Value, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_u64))
}

/// Names vary; like Gemini CLI's stream stats, `input_tokens` includes the
/// cached input and `input` (when present) is the part that was not cached.
fn usage(t: &Value) -> Usage {
    let cached = first(
        t,
        &[
            "cached",
            "cached_input_tokens",
            "cachedTokens",
            "cache_read_tokens",
        ],
    )
    .unwrap_or(0);
    let total_in = first(
        t,
        &[
            "input_tokens",
            "inputTokens",
            "prompt_tokens",
            "promptTokens",
            "prompt",
        ],
    );
    let fresh = first(t, &["input"]).or_else(|| total_in.map(|i| i.saturating_sub(cached)));
    let output = first(
        t,
        &[
            "output_tokens",
            "outputTokens",
            "candidates",
            "completion_tokens",
        ],
    );
    Usage {
        input_tokens: fresh.unwrap_or(0),
        output_tokens: output.unwrap_or(0)
            + first(t, &["thoughts", "reasoning_tokens"]).unwrap_or(0),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cli::{parse_output, EPOCH};

    fn parse(lines: &[&str]) -> Parsed {
        parse_output(AgyParser::default(), lines, "", EPOCH)
    }

    #[test]
    fn event_keyed_stream() {
        let p = parse(&[
            r#"{"event":"init","session_id":"a1","model":"gemini-3-flash"}"#,
            r#"{"event":"step_update","text":"editing"}"#,
            r#"{"event":"result","result":{"status":"SUCCESS","response":"Done.","usage":{"input_tokens":100,"cached":30,"output_tokens":7}}}"#,
        ]);
        assert!(p.complete && p.failure.is_none());
        assert_eq!(p.final_message.as_deref(), Some("Done."));
        let u = p.usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.cache_read_tokens, u.output_tokens),
            (70, 30, 7)
        );
        assert_eq!(p.session_id.as_deref(), Some("a1"));
    }

    #[test]
    fn error_status_and_quota() {
        let p = parse(&[
            r#"{"type":"result","status":"ERROR","error":{"message":"RESOURCE_EXHAUSTED: quota exceeded"}}"#,
        ]);
        assert!(p.failure.is_some() && p.limit.is_some());
        let recovered = parse(&[
            r#"{"type":"error","error":{"message":"RESOURCE_EXHAUSTED: retry in 5s"}}"#,
            r#"{"type":"result","status":"SUCCESS","response":"Done."}"#,
        ]);
        assert!(recovered.failure.is_none() && recovered.limit.is_none());
        let words = parse(&[
            r#"{"type":"result","status":"ERROR","error":{"message":"tests failed: quota exceeded"}}"#,
        ]);
        assert!(words.failure.is_some() && words.limit.is_none());
        let coded =
            parse(&[r#"{"type":"result","status":"ERROR","error":{"message":"busy","code":429}}"#]);
        assert!(coded.limit.is_some());
        let plain = parse(&[r#"{"status":"failed","error":"no workspace"}"#]);
        assert_eq!(plain.failure.as_deref(), Some("no workspace"));
        assert!(plain.limit.is_none());
    }
}
