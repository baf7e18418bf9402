//! Gemini CLI (`gemini`), headless:
//!
//! ```text
//! GEMINI_CLI_TRUST_WORKSPACE=true \
//! gemini --output-format json --approval-mode yolo [-m M] \
//!   -p "Carry out the task given above." < prompt
//! ```
//!
//! `-p` is appended to what comes on standard input, so the charter needs
//! no command-line length limit. `yolo` approves every tool call (headless
//! mode cannot ask); Gemini CLI's file tools stay inside the workspace
//! (the working directory), its shell does not, which is what planwright's
//! own sandbox is for. A fresh workspace is an untrusted folder, where
//! headless mode exits 55: the variable trusts it (used instead of
//! `--skip-trust`, which older releases reject as an unknown flag). Follows
//! the `json` output of gemini-cli 0.2x-0.4x (`JsonFormatter`): one
//! pretty-printed object `{session_id, response, stats: {models: {M:
//! {tokens: {prompt, candidates, total, cached, thoughts, tool}}}}, error?:
//! {type, message, code}}`, on stderr when the run fails.

use super::cli::{count, text, user_dir, Cli, Invocation, Limit, Parsed};
use super::cli::{Seed, StateLayout, StreamParser, Tune};
use super::limits::{self, Now};
use super::{AttemptContext, Usage};
use serde_json::Value;

/// The Gemini CLI adapter.
#[derive(Default)]
pub(crate) struct Gemini;

/// The instruction after the charter on standard input.
const PROMPT_TAIL: &str = "Carry out the task given above.";

impl Cli for Gemini {
    const NAME: &'static str = "gemini";
    const FAMILY: Option<&'static str> = Some("gemini");
    const INSTALL: &'static str = "npm install -g @google/gemini-cli";
    const ENV: &'static [&'static str] = &["GEMINI_*", "GOOGLE_*"];
    const HOSTS: &'static [&'static str] = &[
        "generativelanguage.googleapis.com:443",
        "cloudcode-pa.googleapis.com:443",
        "oauth2.googleapis.com:443",
        "accounts.google.com:443",
        "www.googleapis.com:443",
    ];

    fn args(&self, _ctx: &AttemptContext, run: Invocation<'_>) -> Vec<String> {
        let mut args: Vec<String> = ["--output-format", "json", "--approval-mode", "yolo"]
            .map(String::from)
            .to_vec();
        args.extend(run.model_args("-m"));
        args.extend(["-p".to_string(), PROMPT_TAIL.to_string()]);
        args
    }

    fn env(&self) -> Vec<(String, String)> {
        vec![("GEMINI_CLI_TRUST_WORKSPACE".into(), "true".into())]
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        Box::<GeminiParser>::default()
    }

    /// `GEMINI_CLI_HOME` replaces the home directory: state goes to
    /// `$GEMINI_CLI_HOME/.gemini/` (sessions, `settings.json`, the OAuth
    /// login in `oauth_creds.json`, API keys in `.env`).
    fn state(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<StateLayout> {
        let user = user_dir(var, "GEMINI_CLI_HOME", "").join(".gemini");
        Some(StateLayout {
            vars: vec![("GEMINI_CLI_HOME", "")],
            files: vec![],
            seeds: vec![
                Seed::link(user.join("oauth_creds.json"), ".gemini/oauth_creds.json"),
                Seed::link(
                    user.join("google_accounts.json"),
                    ".gemini/google_accounts.json",
                ),
                Seed::link(
                    user.join("gemini-credentials.json"),
                    ".gemini/gemini-credentials.json",
                ),
                Seed::link(user.join(".env"), ".gemini/.env"),
                Seed::copy(user.join("settings.json"), ".gemini/settings.json"),
            ],
            tunes: vec![Tune {
                to: ".gemini/settings.json",
                edit: fewer_attempts,
            }],
        })
    }
}

/// Gemini CLI's `general.maxAttempts` in a slot's `settings.json`: one
/// retry, where its default of 10 (with its backoff) outlasts a short
/// agent time limit and turns a rate limit into a `timeout` strike.
pub(crate) const MAX_ATTEMPTS: u64 = 2;

/// The seeded `settings.json` with `general.maxAttempts` at most
/// [`MAX_ATTEMPTS`] (a lower one of the user's is kept); one that is not
/// plain JSON (comments) is left as it is.
fn fewer_attempts(seeded: Option<&[u8]>) -> Option<Vec<u8>> {
    let mut settings: Value = match seeded {
        Some(bytes) => serde_json::from_slice(bytes).ok()?,
        None => Value::Object(Default::default()),
    };
    let general = (settings.as_object_mut()?)
        .entry("general")
        .or_insert_with(|| Value::Object(Default::default()))
        .as_object_mut()?;
    let own = general.get("maxAttempts").and_then(Value::as_u64);
    if own.is_some_and(|n| n <= MAX_ATTEMPTS) {
        return None;
    }
    general.insert("maxAttempts".into(), MAX_ATTEMPTS.into());
    serde_json::to_vec_pretty(&settings).ok()
}

/// How much stdout the parser keeps: the JSON object comes at the end.
const KEEP_BYTES: usize = 8 << 20;

/// Reads Gemini CLI's `json` output.
#[derive(Debug, Default)]
pub(crate) struct GeminiParser {
    stdout: String,
}

impl StreamParser for GeminiParser {
    fn line(&mut self, line: &str) {
        // One pretty-printed object: collected, read at the end.
        if self.stdout.len() + line.len() < KEEP_BYTES {
            self.stdout.push_str(line);
            self.stdout.push('\n');
        }
    }

    fn finish(&mut self, output_tail: &str, now: Now) -> Parsed {
        let object = last_object(&self.stdout).or_else(|| last_object(output_tail));
        let Some(v) = object else {
            return Parsed {
                retrying: retrying(output_tail),
                ..Parsed::default()
            };
        };
        let mut p = Parsed {
            complete: v.get("response").is_some() || v.get("error").is_some(),
            session_id: text(&v, "session_id"),
            final_message: text(&v, "response"),
            ..Parsed::default()
        };
        read_stats(&v, &mut p);
        if let Some(e) = v.get("error") {
            let message = text(e, "message").unwrap_or_else(|| e.to_string());
            if is_limit(e) {
                p.limit = Some(Limit::from_message(message.clone(), now));
            }
            p.key_refused = code(e).is_some_and(limits::is_key_status);
            p.failure = Some(message);
        }
        p
    }
}

/// Whether Gemini CLI's error object is its provider's trouble: by its
/// type (`TerminalQuotaError`, `RetryableQuotaError`) or its code, one of
/// [`limits::PROVIDER_STATUSES`] (the 503 it gives up on once its attempts
/// are spent), never by its message.
fn is_limit(error: &Value) -> bool {
    let kind = text(error, "type").unwrap_or_default();
    kind.ends_with("QuotaError") || code(error).is_some_and(limits::is_provider_status)
}

/// The error object's `code`, a number or a numeric string.
fn code(error: &Value) -> Option<u64> {
    match error.get("code") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.parse().ok(),
        _ => None,
    }
}

/// Whether Gemini CLI's output ended while it waited to retry a refused
/// call: its last `Attempt N failed` line is a quota refusal (followed by
/// `Suggested retry after 1s.. Retrying after 5365ms...`) or names one of
/// [`limits::PROVIDER_STATUSES`] (`Attempt 1 failed with status 503. Retrying with
/// backoff...`). The suggested delay is the reset.
fn retrying(tail: &str) -> Option<Limit> {
    let lines: Vec<&str> = tail.lines().map(str::trim).collect();
    let at = lines
        .iter()
        .rposition(|l| l.starts_with("Attempt ") && l.contains(" failed"))?;
    let line = lines[at];
    let next = lines.get(at + 1).copied().unwrap_or("");
    let suggested = next.strip_prefix("Suggested retry after ");
    let status = line
        .split_once(" failed with status ")
        .and_then(|(_, rest)| limits::leading_status(rest));
    let refused = suggested.is_some() || status.is_some_and(limits::is_provider_status);
    if !refused {
        return None;
    }
    Some(Limit {
        reason: format!("Gemini CLI was retrying when it stopped: {line}"),
        retry_after: suggested.and_then(limits::duration),
    })
}

/// Tokens per model: `prompt` includes `cached`; thoughts are billed as output.
fn read_stats(v: &Value, p: &mut Parsed) {
    let Some(models) = v.pointer("/stats/models").and_then(Value::as_object) else {
        return;
    };
    let mut total = Usage::default();
    let mut main: Option<(u64, &String)> = None;
    for (name, m) in models {
        let t = m.get("tokens").unwrap_or(&Value::Null);
        let prompt = count(t, "prompt");
        let cached = count(t, "cached").min(prompt);
        let u = Usage {
            input_tokens: prompt - cached,
            output_tokens: count(t, "candidates") + count(t, "thoughts"),
            cache_read_tokens: cached,
            cache_write_tokens: 0,
        };
        total += u;
        if main.is_none_or(|(most, _)| u.total() > most) {
            main = Some((u.total(), name));
        }
        p.per_model.push((name.clone(), u));
    }
    p.usage = Some(total);
    p.model = main.map(|(_, name)| name.clone());
}

/// The last complete JSON object in `text` that starts at the beginning
/// of a line (what precedes it may be warnings, and what follows it, a
/// line the CLI or a process of the agent printed after it, is ignored).
fn last_object(text: &str) -> Option<Value> {
    let starts: Vec<usize> = text
        .match_indices('{')
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || text.as_bytes()[i - 1] == b'\n')
        .collect();
    starts.into_iter().rev().find_map(|i| {
        let mut values = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        values.next()?.ok().filter(Value::is_object)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slot's `settings.json` as seeding leaves it for a user whose own
    /// is `user` (none when `None`).
    fn seeded_settings(user: Option<&str>) -> Value {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("user");
        std::fs::create_dir_all(dir.join(".gemini")).unwrap();
        if let Some(text) = user {
            std::fs::write(dir.join(".gemini/settings.json"), text).unwrap();
        }
        let var = |name: &str| (name == "GEMINI_CLI_HOME").then(|| dir.display().to_string());
        let layout = Gemini.state(&var).unwrap();
        let home = tmp.path().join("homes/slot-1/gemini");
        crate::agent::cli::prepare_state(&home, &layout).unwrap();
        let text = std::fs::read_to_string(home.join(".gemini/settings.json")).unwrap();
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }

    #[test]
    fn the_slot_settings_cut_gemini_retries_to_two_attempts_keeping_the_users() {
        assert_eq!(
            seeded_settings(None),
            serde_json::json!({"general": {"maxAttempts": 2}})
        );
        let user = r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"maxAttempts": 10, "vimMode": true}}"#;
        assert_eq!(
            seeded_settings(Some(user)),
            serde_json::json!({"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"maxAttempts": 2, "vimMode": true}})
        );
        let fewer = r#"{"general": {"maxAttempts": 1}}"#;
        assert_eq!(
            seeded_settings(Some(fewer)),
            serde_json::json!({"general": {"maxAttempts": 1}})
        );
        let commented = "{\n  // mine\n  \"general\": {}\n}\n";
        assert_eq!(
            seeded_settings(Some(commented)),
            Value::String(commented.into()),
            "not plain JSON: left as it is"
        );
    }
    use crate::agent::cli::{parse_output, EPOCH};
    use std::time::Duration;

    fn parse(stdout: &str, tail: &str) -> Parsed {
        parse_output(GeminiParser::default(), stdout.lines(), tail, EPOCH)
    }

    #[test]
    fn per_model_tokens_normalized() {
        let out = "Loaded cached credentials.\n{\n  \"session_id\": \"g1\",\n  \"response\": \"Done.\",\n  \"stats\": {\"models\": {\n    \"gemini-3-flash\": {\"tokens\": {\"prompt\": 1000, \"candidates\": 50, \"total\": 1100, \"cached\": 600, \"thoughts\": 50, \"tool\": 0}},\n    \"gemini-2.5-flash-lite\": {\"tokens\": {\"prompt\": 10, \"candidates\": 5, \"cached\": 0}}\n  }}\n}\n";
        let p = parse(out, "");
        assert!(p.complete && p.failure.is_none());
        assert_eq!(p.final_message.as_deref(), Some("Done."));
        assert_eq!(p.session_id.as_deref(), Some("g1"));
        assert_eq!(p.model.as_deref(), Some("gemini-3-flash"));
        let u = p.usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.cache_read_tokens, u.output_tokens),
            (410, 600, 105)
        );
        assert_eq!(p.per_model.len(), 2);
    }

    /// A line after the final object (a warning, or a process of the
    /// agent writing to the CLI's stdout) leaves the object as it is.
    #[test]
    fn a_line_after_the_final_object_is_ignored() {
        let out = "{\n  \"session_id\": \"g1\",\n  \"response\": \"Done.\",\n  \"stats\": {\"models\": {\"gemini-2.5-pro\": {\"tokens\": {\"prompt\": 24, \"candidates\": 7, \"cached\": 13}}}}\n}\nData collection is disabled.\n{oops\n";
        let p = parse(out, "");
        assert!(p.complete, "{p:?}");
        assert_eq!(p.session_id.as_deref(), Some("g1"));
        assert_eq!(p.final_message.as_deref(), Some("Done."));
        assert_eq!(p.usage.map(|u| u.input_tokens), Some(11));
    }

    #[test]
    fn quota_error_on_stderr() {
        let tail = "{\n  \"error\": {\n    \"type\": \"TerminalQuotaError\",\n    \"message\": \"You have exhausted your daily quota on this model. Your quota will reset after 2h.\",\n    \"code\": 429\n  }\n}\n";
        let p = parse("", tail);
        assert_eq!(
            p.limit.unwrap().retry_after,
            Some(Duration::from_secs(7200))
        );
        assert!(p.failure.is_some());
        let words = "{\"error\": {\"type\": \"FatalToolExecutionError\", \"message\": \"quota exceeded: RESOURCE_EXHAUSTED in test\", \"code\": 54}}\n";
        let p = parse("", words);
        assert!(p.failure.is_some() && p.limit.is_none(), "{p:?}");
        let spent = "{\"error\": {\"type\": \"Error\", \"message\": \"The model is overloaded. Please try again later.\", \"code\": 503}}\n";
        let p = parse("", spent);
        assert!(p.limit.is_some(), "its attempts spent on a 503: {p:?}");
        let garbage = parse("{\n  \"response\": \"cut", "Error: boom");
        assert_eq!(garbage, Parsed::default());
    }

    #[test]
    fn output_that_ends_while_retrying_a_refusal_says_so() {
        // gemini-cli 0.61.0 against a server answering 429 with
        // `retryDelay: 1s`, then 503 (recorded by the real-agent tier).
        let quota = "YOLO mode is enabled.\nAttempt 1 failed: Resource has been exhausted (e.g. check quota).\nSuggested retry after 1s.. Retrying after 5365ms...\n";
        let r = parse("", quota).retrying.unwrap();
        assert_eq!(r.retry_after, Some(Duration::from_secs(1)));
        assert!(r.reason.contains("Attempt 1 failed"), "{}", r.reason);
        let over = "Attempt 2 failed with status 503. Retrying with backoff... _ApiError: {\"error\":{\"code\":503}}\n    at async retryWithBackoff (file:///x.js:1:2)\n";
        let r = parse("", over).retrying.unwrap();
        assert_eq!(r.retry_after, None);
        let bad_request = "Attempt 1 failed with status 400. Retrying with backoff...\n";
        assert!(parse("", bad_request).retrying.is_none());
        // A final object says how the run ended: no retry was pending.
        let done = "{\"response\": \"Done.\"}\n";
        assert!(parse(done, quota).retrying.is_none());
    }
}
