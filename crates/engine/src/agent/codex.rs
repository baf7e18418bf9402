//! OpenAI Codex CLI (`codex exec`), headless:
//!
//! ```text
//! codex exec --json --sandbox danger-full-access --skip-git-repo-check
//!   --color never -C WORKTREE [-m M] - < prompt
//! ```
//!
//! `exec` never asks for approval. Codex's own sandbox (the bubblewrap it
//! bundles) cannot start inside planwright's (`bwrap: Failed to make /
//! slave`), so where planwright's sandbox confines writes Codex runs its
//! commands unsandboxed (`danger-full-access`) inside it; only with
//! `[sandbox] mode = "off"` is it `workspace-write`, Codex's sandbox then
//! the only one. Without `-m`, the model is the seeded `config.toml`'s
//! top-level `model`, for the report and the cost. `--skip-git-repo-check`
//! because a workspace is not a folder the user marked as trusted. Follows
//! the `exec --json` JSONL of codex-rs `exec_events.rs` (0.5x and later):
//! `thread.started`, `item.completed` (agent_message), `turn.completed`
//! (usage, running totals), `turn.failed`, `error`.

use super::cli::{count, json_line, text, user_dir, Cli, Invocation, Limit, Parsed};
use super::cli::{Seed, StateLayout, StreamParser, Tune};
use super::limits::{self, Now};
use super::{AttemptContext, Usage, UsageSoFar};
use serde_json::Value;

/// The Codex adapter.
#[derive(Default)]
pub struct Codex;

impl Cli for Codex {
    const NAME: &'static str = "codex";
    const FAMILY: Option<&'static str> = Some("gpt");
    const INSTALL: &'static str = "npm install -g @openai/codex";
    const ENV: &'static [&'static str] = &["OPENAI_*", "CODEX_*"];
    const HOSTS: &'static [&'static str] = &[
        "api.openai.com:443",
        "auth.openai.com:443",
        "chatgpt.com:443",
    ];

    fn args(&self, ctx: &AttemptContext, run: Invocation<'_>) -> Vec<String> {
        let mut args: Vec<String> = [
            "exec",
            "--json",
            "--sandbox",
            own_sandbox(ctx),
            "--skip-git-repo-check",
            "--color",
            "never",
            "-C",
        ]
        .map(String::from)
        .to_vec();
        args.push(ctx.workspace.display().to_string());
        args.extend(run.model_args("-m"));
        // The prompt comes from standard input.
        args.push("-".to_string());
        args
    }

    /// From the `config.toml` the attempt's Codex reads: the slot's seeded
    /// copy (read before the agent starts, through no symlink), else the
    /// user's own.
    fn configured_model(&self, ctx: &AttemptContext) -> Option<String> {
        let home = ctx.env.iter().rev().find(|(k, _)| k == "CODEX_HOME");
        let dir = match home {
            Some((_, dir)) => std::path::PathBuf::from(dir),
            None => user_dir(&|name| std::env::var(name).ok(), "CODEX_HOME", ".codex"),
        };
        let bytes = crate::beneath::read_file(&dir.join("config.toml")).ok()?;
        config_model(&String::from_utf8_lossy(&bytes))
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        Box::<CodexParser>::default()
    }

    /// The `base_url` of the provider `model_provider` selects.
    fn gateways(&self, var: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
        let (place, provider) = user_provider(var);
        let url = provider.and_then(|p| p.get("base_url")?.as_str().map(String::from));
        url.map(|u| vec![(place, u)]).unwrap_or_default()
    }

    /// The `env_key` of the provider `model_provider` selects.
    fn key_vars(&self, var: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
        let (place, provider) = user_provider(var);
        let key = provider.and_then(|p| p.get("env_key")?.as_str().map(String::from));
        key.map(|k| vec![(place, k)]).unwrap_or_default()
    }

    /// Unconfined by planwright, Codex's own sandbox is the one the agent
    /// runs in: its self-test runs a command in it.
    fn probe_args(&self, confined: bool) -> Vec<String> {
        let args: &[&str] = if confined {
            &["--version"]
        } else {
            &["sandbox", "linux", "--full-auto", "true"]
        };
        args.iter().map(|a| a.to_string()).collect()
    }

    /// `CODEX_HOME` holds sessions, logs, `config.toml` and the login in
    /// `auth.json`; parallel `codex exec` runs sharing it step on each
    /// other's session files.
    fn state(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<StateLayout> {
        let user = user_dir(var, "CODEX_HOME", ".codex");
        Some(StateLayout {
            vars: vec![("CODEX_HOME", "")],
            files: vec![],
            seeds: vec![
                Seed::link(user.join("auth.json"), "auth.json"),
                Seed::copy(user.join("config.toml"), "config.toml"),
            ],
            tunes: vec![Tune {
                to: "config.toml",
                edit: fewer_retries,
            }],
        })
    }
}

/// Codex's own sandbox for the agent's commands. Its bundled bubblewrap
/// cannot mount inside planwright's sandbox (`bwrap: Failed to make /
/// slave`), so every command would hang and fail: where planwright
/// confines the agent's writes, Codex's is off (`danger-full-access`) and
/// planwright's holds; `workspace-write` only when planwright's is off.
fn own_sandbox(ctx: &AttemptContext) -> &'static str {
    let confined = ctx
        .confine
        .as_ref()
        .is_some_and(|c| c.containment.confines_writes());
    if confined {
        "danger-full-access"
    } else {
        "workspace-write"
    }
}

/// Codex's own retries, per model provider, at most these in a slot's
/// `config.toml`: one retry of a request and of a stream, and a minute of
/// silence ends a stream (its defaults, 4 and 5 retries of a stream idle
/// for 5 minutes each, outlast a short agent time limit).
pub const RETRIES: [(&str, i64); 3] = [
    ("request_max_retries", 1),
    ("stream_max_retries", 1),
    ("stream_idle_timeout_ms", 60_000),
];

/// The seeded `config.toml` with [`RETRIES`] under the provider its
/// `model_provider` names (a lower value of the user's is kept). Codex
/// refuses a `[model_providers.openai]` table (its built-in providers
/// cannot be overridden), so a config that selects none, or a built-in
/// one, is left as it is; so is one that is not valid TOML.
fn fewer_retries(seeded: Option<&[u8]>) -> Option<Vec<u8>> {
    let mut config: toml::Table = std::str::from_utf8(seeded?).ok()?.parse().ok()?;
    let id = config.get("model_provider")?.as_str()?.to_string();
    let providers = config.get_mut("model_providers")?.as_table_mut()?;
    let provider = providers.get_mut(&id)?.as_table_mut()?;
    let mut changed = false;
    for (key, most) in RETRIES {
        let own = provider.get(key).and_then(toml::Value::as_integer);
        if own.is_none_or(|n| n > most) {
            provider.insert(key.into(), most.into());
            changed = true;
        }
    }
    changed.then(|| toml::to_string(&config).ok().map(String::into_bytes))?
}

/// The provider table the user's `config.toml` selects with
/// `model_provider` (`[model_providers.NAME]`), and where it was read
/// (`` `~/.codex/config.toml` `` as a path).
fn user_provider(var: &dyn Fn(&str) -> Option<String>) -> (String, Option<toml::Table>) {
    let path = user_dir(var, "CODEX_HOME", ".codex").join("config.toml");
    let place = format!("`{}`", path.display());
    let read = || {
        let text = std::fs::read_to_string(&path).ok()?;
        let config: toml::Table = text.parse().ok()?;
        let name = config.get("model_provider")?.as_str()?.to_string();
        let providers = config.get("model_providers")?.as_table()?;
        providers.get(&name)?.as_table().cloned()
    };
    (place, read())
}

/// The top-level `model = "..."` of a Codex `config.toml` (before its
/// first table).
pub fn config_model(config: &str) -> Option<String> {
    let top = config
        .lines()
        .take_while(|l| !l.trim_start().starts_with('['));
    top.filter_map(|l| {
        l.trim()
            .strip_prefix("model")?
            .trim_start()
            .strip_prefix('=')
    })
    .filter_map(|v| {
        let v = v.trim();
        let quote = v.chars().next().filter(|q| *q == '"' || *q == '\'')?;
        let inner = &v[1..];
        Some(inner[..inner.find(quote)?].to_string())
    })
    .find(|m| !m.is_empty())
}

/// Reads `codex exec --json` output.
#[derive(Debug, Default)]
pub struct CodexParser {
    parsed: Parsed,
    /// The last `error` line was Codex's notice of a retry, or the error
    /// that notice quoted, reported again as its retries ran out.
    reconnecting: bool,
    /// The error the last retry notice quoted.
    retried: Option<String>,
    /// The HTTP status the last `error` line gives in its fields.
    error_status: Option<u64>,
    /// The status the failed turn gives (else its last `error` line).
    failed_status: Option<u64>,
    /// The turn failed right after Codex's own retries of a refused call.
    failed_after_retries: bool,
}

impl StreamParser for CodexParser {
    fn line(&mut self, line: &str) {
        let Some(v) = json_line(line) else { return };
        let kind = v.get("type").and_then(Value::as_str);
        if !matches!(kind, Some("error" | "turn.failed")) {
            // The stream went on: the retry it announced got an answer.
            self.reconnecting = false;
            self.retried = None;
            self.error_status = None;
        }
        let p = &mut self.parsed;
        match kind {
            Some("thread.started") => p.session_id = text(&v, "thread_id"),
            Some("item.completed") => {
                let item = v.get("item").unwrap_or(&Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("agent_message") {
                    p.final_message = text(item, "text").or(p.final_message.take());
                }
            }
            // Running totals: the last one is the attempt's (summing would
            // count early turns several times).
            Some("turn.completed") => {
                p.complete = true;
                p.failure = None;
                if let Some(u) = v.get("usage") {
                    p.usage = Some(usage(u));
                }
            }
            Some("turn.failed") => {
                p.complete = true;
                let message = v.pointer("/error/message").and_then(Value::as_str);
                p.failure = Some(message.unwrap_or("the turn failed").to_string());
                self.failed_status = structured_status(&v["error"]).or(self.error_status);
                self.failed_after_retries = self.reconnecting;
            }
            // A retry notice (`Reconnecting... 1/1 (...)`), or an error the
            // turn may still recover from: `turn.failed` decides.
            Some("error") => {
                let message = text(&v, "message").unwrap_or_default();
                // Codex 0.171 says `Reconnecting... 1/1 (ERROR)`, then, when
                // that retry is refused too, `ERROR` once more, then fails.
                let notice = message.trim_start().strip_prefix("Reconnecting...");
                let quoted = notice.and_then(|n| n.split_once('(')?.1.strip_suffix(')'));
                self.reconnecting = notice.is_some()
                    || (self.reconnecting && self.retried.as_deref() == Some(message.trim()));
                if notice.is_some() {
                    self.retried = quoted.map(|q| q.trim().to_string());
                }
                self.error_status = structured_status(&v).or(structured_status(&v["error"]));
            }
            _ => {}
        }
    }

    fn so_far(&self) -> Option<UsageSoFar> {
        self.parsed.so_far()
    }

    fn finish(&mut self, _output_tail: &str, now: Now) -> Parsed {
        let mut p = std::mem::take(&mut self.parsed);
        // The last turn's `turn.failed` message, when it is one of Codex's
        // own refusals (the reset time in "try again at 3:05 PM" is local).
        let by_fields = self.failed_status.is_some_and(limits::is_provider_status);
        let retried = self.failed_after_retries;
        let refused = |m: &String| {
            by_fields || retried || limits::begins_with(m, LIMITS) || provider_status(m).is_some()
        };
        if let Some(message) = p.failure.clone().filter(refused) {
            p.limit = Some(Limit::from_message(message, now));
        }
        let named = |m: &String| {
            let rest = STATUS_PREFIXES
                .iter()
                .find_map(|x| m.trim_start().strip_prefix(x));
            rest.and_then(limits::leading_status)
                .is_some_and(limits::is_key_status)
        };
        p.key_refused = p
            .failure
            .as_ref()
            .is_some_and(|m| self.failed_status.is_some_and(limits::is_key_status) || named(m));
        p
    }
}

/// The HTTP status an error object of Codex's gives in a field, where it
/// gives one: `status`, `status_code` or `http_status_code`, at its top or
/// in its `codex_error_info` (`{"http_connection_failed":
/// {"http_status_code": 500}}`), or a `codex_error_info` naming the
/// provider's trouble (`server_overloaded` as 503,
/// `internal_server_error` as 500, `usage_limit_exceeded` as 429).
fn structured_status(error: &Value) -> Option<u64> {
    let number = |v: &Value| match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    };
    let field = |v: &Value| {
        ["status", "status_code", "http_status_code"]
            .iter()
            .find_map(|k| v.get(k).and_then(number))
    };
    if let Some(status) = field(error) {
        return Some(status);
    }
    match error.get("codex_error_info")? {
        Value::String(kind) => match kind.as_str() {
            "server_overloaded" => Some(503),
            "internal_server_error" => Some(500),
            "usage_limit_exceeded" => Some(429),
            _ => None,
        },
        Value::Object(kinds) => kinds.values().find_map(field),
        _ => None,
    }
}

/// How Codex's refusals by its provider begin (lower case): the ChatGPT
/// plan's usage limit and an exhausted API quota (codex-rs `error.rs`).
const LIMITS: &[&str] = &["you've hit your usage limit", "quota exceeded"];

/// How Codex names an HTTP status in a failure (codex-rs `error.rs`):
/// `unexpected status 503 Service Unavailable: ...` and, once its retries
/// are spent, `exceeded retry limit, last status: 429 Too Many Requests`.
const STATUS_PREFIXES: [&str; 2] = ["unexpected status ", "exceeded retry limit, last status: "];

/// The status of a failure Codex names that is its provider's trouble
/// ([`limits::PROVIDER_STATUSES`]).
fn provider_status(message: &str) -> Option<u64> {
    let message = message.trim_start();
    let rest = STATUS_PREFIXES
        .iter()
        .find_map(|p| message.strip_prefix(p))?;
    limits::leading_status(rest).filter(|s| limits::is_provider_status(*s))
}

/// `cached_input_tokens` is part of `input_tokens`.
fn usage(u: &Value) -> Usage {
    let input = count(u, "input_tokens");
    let cached = count(u, "cached_input_tokens");
    Usage {
        input_tokens: input.saturating_sub(cached),
        output_tokens: count(u, "output_tokens"),
        cache_read_tokens: cached.min(input),
        cache_write_tokens: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cli::{parse_output, EPOCH};

    /// The slot's `config.toml` as seeding leaves it for a user whose own
    /// is `user`.
    fn seeded_config(user: &str) -> String {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("user");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), user).unwrap();
        let var = |name: &str| (name == "CODEX_HOME").then(|| dir.display().to_string());
        let layout = Codex.state(&var).unwrap();
        let home = tmp.path().join("homes/slot-1/codex");
        crate::agent::cli::prepare_state(&home, &layout).unwrap();
        std::fs::read_to_string(home.join("config.toml")).unwrap()
    }

    #[test]
    fn a_status_of_the_providers_trouble_is_unavailable_and_others_are_failures() {
        let failed = |message: &str| {
            let line = serde_json::json!({"type": "turn.failed", "error": {"message": message}});
            parse(&[&line.to_string()])
        };
        for message in [
            "unexpected status 503 Service Unavailable: The server is overloaded., url: http://x/v1/responses",
            "unexpected status 500 Internal Server Error: boom",
            "exceeded retry limit, last status: 429 Too Many Requests",
        ] {
            assert!(failed(message).limit.is_some(), "{message}");
        }
        // OpenAI's 500 wording, after Codex's own retry (codex 0.171.0
        // against the mock): no status in the message.
        let high_demand = |retry: &str| {
            let error = serde_json::json!({"type": "error", "message": retry});
            let failed = serde_json::json!({"type": "turn.failed", "error": {"message":
                "We're currently experiencing high demand, which may cause temporary errors."}});
            parse(&[&error.to_string(), &failed.to_string()])
        };
        assert!(high_demand("Reconnecting... 1/1 (We're currently experiencing high demand, which may cause temporary errors.)").limit.is_some());
        // As codex 0.171.0 printed it in the real-agent tier: the notice,
        // the same error again as the retry is refused, then the failure.
        let busy = "We’re currently experiencing high demand, which may cause temporary errors.";
        let lines = [
            serde_json::json!({"type": "error", "message": format!("Reconnecting... 1/1 ({busy})")}),
            serde_json::json!({"type": "error", "message": busy}),
            serde_json::json!({"type": "turn.failed", "error": {"message": busy}}),
        ]
        .map(|l| l.to_string());
        assert!(parse(&lines.each_ref().map(String::as_str)).limit.is_some());
        let other = [
            serde_json::json!({"type": "error", "message": format!("Reconnecting... 1/1 ({busy})")}),
            serde_json::json!({"type": "error", "message": "the tests failed"}),
            serde_json::json!({"type": "turn.failed", "error": {"message": "the tests failed"}}),
        ]
        .map(|l| l.to_string());
        assert!(parse(&other.each_ref().map(String::as_str)).limit.is_none());
        assert!(high_demand("the tests failed").limit.is_none());
        // A status in the error's fields decides, whatever its message.
        let fields = serde_json::json!({"type": "turn.failed", "error": {"message": "stream error",
            "codex_error_info": {"response_stream_connection_failed": {"http_status_code": 502}}}});
        assert!(parse(&[&fields.to_string()]).limit.is_some());
        let overloaded = serde_json::json!({"type": "turn.failed", "error": {"message": "busy",
            "codex_error_info": "server_overloaded"}});
        assert!(parse(&[&overloaded.to_string()]).limit.is_some());
        let bad =
            serde_json::json!({"type": "turn.failed", "error": {"message": "bad", "status": 400}});
        assert!(parse(&[&bad.to_string()]).limit.is_none());
        for message in [
            "unexpected status 400 Bad Request: no such model",
            "unexpected status 5030: odd",
            "the tests say: unexpected status 503",
        ] {
            let p = failed(message);
            assert!(p.limit.is_none() && p.failure.is_some(), "{message}");
        }
    }

    #[test]
    fn the_slot_config_cuts_the_chosen_providers_retries_keeping_the_users() {
        let user = "model = \"gpt-5.4\"\nmodel_provider = \"gw\"\n\n[model_providers.gw]\nname = \"gw\"\nbase_url = \"http://127.0.0.1:9/v1\"\nstream_max_retries = 0\nstream_idle_timeout_ms = 900000\n\n[model_providers.other]\nname = \"other\"\n";
        let seeded: toml::Table = seeded_config(user).parse().unwrap();
        assert_eq!(seeded["model"].as_str(), Some("gpt-5.4"));
        assert_eq!(
            config_model(&seeded_config(user)).as_deref(),
            Some("gpt-5.4")
        );
        let gw = seeded["model_providers"]["gw"].as_table().unwrap();
        let knob = |k: &str| gw.get(k).and_then(toml::Value::as_integer);
        assert_eq!(knob("request_max_retries"), Some(1));
        assert_eq!(
            knob("stream_max_retries"),
            Some(0),
            "the user's lower value is kept"
        );
        assert_eq!(knob("stream_idle_timeout_ms"), Some(60_000));
        assert_eq!(gw["base_url"].as_str(), Some("http://127.0.0.1:9/v1"));
        let other = seeded["model_providers"]["other"].as_table().unwrap();
        assert!(
            !other.contains_key("request_max_retries"),
            "only the chosen provider"
        );
        let built_in = "model = \"gpt-5.4\"\n# the built-in openai provider\n";
        assert_eq!(
            seeded_config(built_in),
            built_in,
            "codex refuses a [model_providers.openai]"
        );
    }

    fn parse(lines: &[&str]) -> Parsed {
        parse_output(CodexParser::default(), lines, "", EPOCH)
    }

    #[test]
    fn last_turn_usage_not_the_sum() {
        let p = parse(&[
            r#"{"type":"thread.started","thread_id":"th_1"}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":10}}"#,
            r#"{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"All done."}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":300,"cached_input_tokens":200,"output_tokens":50}}"#,
        ]);
        let u = p.usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.cache_read_tokens, u.output_tokens),
            (100, 200, 50)
        );
        assert_eq!(p.session_id.as_deref(), Some("th_1"));
        assert_eq!(p.final_message.as_deref(), Some("All done."));
        assert!(p.complete && p.failure.is_none());
    }

    #[test]
    fn turn_failed_is_a_failure_and_errors_alone_are_not() {
        let retried = parse(&[
            r#"{"type":"error","message":"stream disconnected, retrying"}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}"#,
        ]);
        assert!(retried.failure.is_none());
        let failed = parse(&[
            r#"{"type":"turn.failed","error":{"message":"You've hit your usage limit. Try again at 3:05 PM."}}"#,
        ]);
        assert_eq!(
            failed.failure.as_deref(),
            Some("You've hit your usage limit. Try again at 3:05 PM.")
        );
        assert!(parse(&[
            r#"{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}"#,
        ])
        .limit
        .is_some());
        let words = parse(&[
            r#"{"type":"turn.failed","error":{"message":"tests failed: quota exceeded in test_quota"}}"#,
        ]);
        assert!(words.failure.is_some() && words.limit.is_none());
        let odd = parse(&[
            r#"{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":9}}"#,
        ]);
        assert_eq!(odd.usage.unwrap().input_tokens, 0, "no underflow");
    }
}
