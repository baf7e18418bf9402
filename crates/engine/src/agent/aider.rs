//! aider, headless:
//!
//! ```text
//! aider --message-file PROMPT --yes-always --no-auto-commits
//!   --no-dirty-commits --no-gitignore --no-stream --no-pretty
//!   --no-check-update --no-show-release-notes --analytics-disable
//!   --no-suggest-shell-commands [--model M]
//! ```
//!
//! `--yes-always` answers its questions (add a file to the chat, create a
//! file); it suggests no shell commands, so it runs none; it commits
//! nothing (planwright makes the one commit) and leaves `.gitignore` alone.
//! Its history files go in its slot home (`AIDER_CHAT_HISTORY_FILE`,
//! `AIDER_INPUT_HISTORY_FILE`), which it may write, reset before each
//! attempt (in the workspace, removed after the attempt, with
//! `[agent] isolate = false`); its repository-map cache (`.aider.tags.cache.v*`) is removed from the
//! workspace after the attempt. Text output only (aider 0.8x): the answer,
//! then per model call `Tokens: 12k sent, 1.2k cache write, 3.4k cache
//! hit, 456 received. Cost: $0.05 message, $0.12 session.` aider exits 0
//! even when the model call failed, so its error lines decide.
//!
//! Those printed figures are rounded (`12k`, `$0.05`), so the attempt's
//! tokens and cost come from its analytics log (`--analytics-log`, in the
//! attempt's own temporary folder), whose `message_send` events hold each
//! call's exact `prompt_tokens` (aider's `sent`), `completion_tokens` and
//! `cost` (aider 0.86.2, `base_coder.py` `show_usage_report`), but no
//! cache split: that is taken from the call's printed line where aider
//! printed it in full (below 1000 tokens); a rounded one cannot be
//! separated and counts as input.

use super::cli::{Cli, Invocation, Limit, Parsed, StateLayout, StreamParser};
use super::limits::{self, Now};
use super::{AttemptContext, Usage, UsageSoFar};
use serde_json::Value;
use std::path::PathBuf;

/// The aider adapter.
#[derive(Default)]
pub(crate) struct Aider;

impl Cli for Aider {
    const NAME: &'static str = "aider";
    const INSTALL: &'static str = "python -m pip install aider-install && aider-install";
    const ENV: &'static [&'static str] = &[
        "AIDER_*",
        "OPENAI_*",
        "ANTHROPIC_*",
        "OPENROUTER_*",
        "GEMINI_*",
    ];
    const HOSTS: &'static [&'static str] = &[
        "api.openai.com:443",
        "api.anthropic.com:443",
        "openrouter.ai:443",
        "generativelanguage.googleapis.com:443",
    ];
    const PROMPT_ON_STDIN: bool = false;
    const STRAYS: &'static [&'static str] = &[
        ".aider.tags.cache.v3",
        ".aider.tags.cache.v4",
        ".aider.chat.history.md",
        ".aider.input.history",
    ];

    fn args(&self, ctx: &AttemptContext, run: Invocation<'_>) -> Vec<String> {
        let mut args = vec![
            "--message-file".to_string(),
            ctx.prompt_file.display().to_string(),
        ];
        args.extend(
            [
                "--yes-always",
                "--no-auto-commits",
                "--no-dirty-commits",
                "--no-gitignore",
                "--no-stream",
                "--no-pretty",
                "--no-check-update",
                "--no-show-release-notes",
                "--analytics-disable",
                "--no-suggest-shell-commands",
            ]
            .map(String::from),
        );
        if let Some(log) = self.record(ctx) {
            args.extend(["--analytics-log".to_string(), log.display().to_string()]);
        }
        args.extend(run.model_args("--model"));
        args
    }

    /// Its analytics log, in the attempt's temporary folder (fresh for
    /// each attempt, so it holds this attempt's calls only).
    fn record(&self, ctx: &AttemptContext) -> Option<PathBuf> {
        let tmp = ctx.env.iter().rev().find(|(k, _)| k == "TMPDIR")?;
        Some(PathBuf::from(&tmp.1).join(ANALYTICS_LOG))
    }

    /// Nothing to seed: its history files, in the slot home.
    fn state(&self, _var: &dyn Fn(&str) -> Option<String>) -> Option<StateLayout> {
        Some(StateLayout {
            vars: vec![],
            files: vec![
                ("AIDER_CHAT_HISTORY_FILE", "chat.history.md"),
                ("AIDER_INPUT_HISTORY_FILE", "input.history"),
            ],
            seeds: vec![],
            tunes: vec![],
        })
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        Box::<AiderParser>::default()
    }
}

/// The analytics log's name in the attempt's temporary folder.
const ANALYTICS_LOG: &str = "aider-analytics.jsonl";

/// Reads aider's text output, and then its analytics log.
#[derive(Debug, Default)]
pub(crate) struct AiderParser {
    /// The printed usage, summed: the running total while aider runs.
    usage: Option<Usage>,
    /// The cache figures of each printed usage line.
    printed: Vec<CacheFigures>,
    /// The usage and cost its analytics log holds, once read.
    recorded: Option<Recorded>,
    model: Option<String>,
    /// Lines since the last `Tokens:` line (the answer being printed).
    pending: Vec<String>,
    /// The answer before the last `Tokens:` line.
    answer: Option<String>,
    /// An error line not followed by a successful call.
    error: Option<String>,
    /// The last printed line of the error being read, which the next line
    /// may continue ([`wraps_into`]).
    wrap: Option<String>,
    /// A line that is not its start-up banner was read.
    past_banner: bool,
    /// Its retries of the provider's refusal since its last successful
    /// call (its `Retrying in N seconds...` after such an error).
    retries: usize,
}

/// The retries of a provider's refusal (429, 500, 503) planwright lets
/// aider make on its own, as Codex and Gemini CLI are set to make one:
/// aider has no setting for them (0.86.2 retries for about a minute,
/// `RETRY_TIMEOUT`), so planwright stops it when it announces the next
/// one ([`StreamParser::gives_up`]).
pub(crate) const MAX_RETRIES: usize = 1;

/// How the lines of aider's start-up banner begin (aider 0.86's
/// announcements): they are not the answer.
const BANNER: &[&str] = &[
    "Aider v",
    "Main model:",
    "Weak model:",
    "Editor model:",
    "Model:",
    "Git repo:",
    "Repo-map:",
    "Added ",
    "Cur working dir:",
    "Git working dir:",
    "Multiline mode:",
    "Restored previous conversation history.",
    "Use /help",
];

/// The width aider's console wraps its messages at when its output is no
/// terminal (rich's default; planwright passes no `COLUMNS`).
const WRAP_WIDTH: usize = 80;

/// Whether `next` continues `prev`, wrapped at [`WRAP_WIDTH`]: rich breaks
/// a line greedily, so a break there means `next`'s first word did not
/// fit after `prev` (a word longer than the width is cut at it). aider's
/// own lines after an error (its sentence about it, `Retrying in ...`) and
/// a blank line never continue one.
fn wraps_into(prev: &str, next: &str) -> bool {
    let word = next.split_whitespace().next().unwrap_or_default();
    let fits = prev.chars().count() + 1 + word.chars().count() <= WRAP_WIDTH;
    !word.is_empty()
        && !fits
        && !next.starts_with(char::is_whitespace)
        && !is_error_line(next)
        && !next.starts_with("Retrying in ")
        && !next.starts_with("Tokens:")
}

/// Lines kept of an answer in progress, so a chatty run stays bounded.
const MAX_PENDING: usize = 200;

/// A printed token figure: its value, and whether aider printed it in
/// full (`456`, `1,234`) rather than rounded (`1.2k`, `12k`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Figure {
    n: u64,
    exact: bool,
}

/// The cache figures of one printed usage line (none printed: 0, exact).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CacheFigures {
    write: Figure,
    hit: Figure,
}

/// What the analytics log says of the attempt's calls.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Recorded {
    usage: Option<Usage>,
    /// aider's own cost, when it had a price for the model (above 0).
    cost: Option<f64>,
    /// Its `exit` event, its last record, was seen.
    exited: bool,
}

/// One `message_send` event: `prompt_tokens`, `completion_tokens`, `cost`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Call {
    sent: u64,
    received: u64,
    cost: f64,
}

impl StreamParser for AiderParser {
    fn line(&mut self, line: &str) {
        let line = line.trim_end();
        let wrapped = self.wrap.take().is_some_and(|prev| wraps_into(&prev, line));
        if let (true, Some(error)) = (wrapped, self.error.as_mut()) {
            // The wrapped rest of the error's last line, where its reset
            // time may be ("... Rate limit reached for\nrequests. Please
            // try again in 1s.").
            error.push(' ');
            error.push_str(line);
            self.wrap = Some(line.to_string());
            if self.pending.len() < MAX_PENDING {
                self.pending.push(line.to_string());
            }
            return;
        }
        if let Some(rest) = line.trim_start().strip_prefix("Tokens:") {
            self.tokens(rest);
            return;
        }
        for prefix in ["Main model: ", "Model: "] {
            if let Some(rest) = line.strip_prefix(prefix) {
                self.model = rest.split_whitespace().next().map(str::to_string);
                return;
            }
        }
        if !self.past_banner {
            if line.trim().is_empty() || BANNER.iter().any(|b| line.starts_with(b)) {
                return;
            }
            self.past_banner = true;
        }
        if line.trim_start().starts_with("Retrying in ")
            && self
                .error
                .as_deref()
                .is_some_and(|e| e.lines().any(is_limit_line))
        {
            self.retries += 1;
        }
        if is_error_line(line) {
            // Every error since the last successful call: the reset time may
            // be in one line and the verdict in the next.
            let all = match self.error.take() {
                Some(earlier) => format!("{earlier}\n{line}"),
                None => line.to_string(),
            };
            self.error = Some(all);
            self.wrap = Some(line.to_string());
        }
        if self.pending.len() < MAX_PENDING {
            self.pending.push(line.to_string());
        }
    }

    fn gives_up(&self) -> bool {
        self.retries > MAX_RETRIES
    }

    fn so_far(&self) -> Option<UsageSoFar> {
        let usage = self.usage?;
        Some(UsageSoFar {
            model: self.model.clone(),
            usage,
        })
    }

    fn record(&mut self, content: Option<&[u8]>) -> Option<String> {
        let Some(content) = content else {
            return Some(
                "aider: no analytics log: its tokens are read from its printed usage, \
                 which rounds figures of 1000 and more, and its cost is computed"
                    .to_string(),
            );
        };
        let calls = calls(&String::from_utf8_lossy(content));
        let (usage, rounded) = exact_usage(&calls, &self.printed);
        let cost: f64 = calls.iter().map(|c| c.cost).sum();
        self.recorded = Some(Recorded {
            usage,
            cost: (cost > 0.0).then_some(cost),
            exited: exited(&String::from_utf8_lossy(content)),
        });
        let mut note = format!(
            "aider: tokens and cost from its analytics log ({})",
            planwright_plan::words::count(calls.len(), "call")
        );
        if self.printed.len() != calls.len() {
            note.push_str(&format!(
                "; its output has {}, which do not pair with them: no cache split",
                planwright_plan::words::count(self.printed.len(), "usage line")
            ));
        } else if rounded > 0 {
            note.push_str(&format!(
                "; {rounded} printed a cache figure rounded, which counts as input"
            ));
        }
        Some(note)
    }

    fn finish(&mut self, _output_tail: &str, now: Now) -> Parsed {
        let last = std::mem::take(&mut self.pending).join("\n");
        let final_message = self
            .answer
            .take()
            .or_else(|| (!last.trim().is_empty()).then(|| last.trim().to_string()));
        let limit = self
            .error
            .as_deref()
            .filter(|e| e.lines().any(is_limit_line))
            .map(|e| Limit::from_message(e.to_string(), now));
        // Stopped (its time was up) while it waited to try the refused call again.
        let retrying = limit.clone().filter(|_| waits_to_retry(&last));
        // Without its log, the printed usage; never the printed, rounded
        // cost. Its last say is then a usage line or an error line.
        let recorded = self.recorded.take().unwrap_or(Recorded {
            usage: self.usage,
            cost: None,
            exited: self.usage.is_some() || self.error.is_some(),
        });
        Parsed {
            retrying,
            final_message,
            model: self.model.take(),
            usage: recorded.usage,
            cost_usd: recorded.cost,
            // litellm's exception for a 401 (and 403: `PermissionDeniedError`).
            key_refused: self.error.as_deref().is_some_and(|e| {
                e.lines().any(|l| {
                    let l = l.trim_start();
                    l.starts_with("litellm.AuthenticationError")
                        || l.starts_with("litellm.PermissionDeniedError")
                })
            }),
            failure: self.error.take(),
            limit,
            complete: recorded.exited,
            ..Parsed::default()
        }
    }
}

/// The `message_send` events of an analytics log (one JSON object a
/// line); other events and lines that do not parse are skipped.
fn calls(log: &str) -> Vec<Call> {
    let call = |line: &str| {
        let v: Value = serde_json::from_str(line.trim()).ok()?;
        if v.get("event").and_then(Value::as_str) != Some("message_send") {
            return None;
        }
        let p = v.get("properties")?;
        let cost = p.get("cost").and_then(Value::as_f64).unwrap_or(0.0);
        Some(Call {
            sent: p.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
            received: p
                .get("completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            cost: if cost.is_finite() { cost.max(0.0) } else { 0.0 },
        })
    };
    log.lines().filter_map(call).collect()
}

/// Whether an analytics log ends in aider's `exit` event.
fn exited(log: &str) -> bool {
    let last = log.lines().rev().find(|l| !l.trim().is_empty());
    last.and_then(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .is_some_and(|v| v.get("event").and_then(Value::as_str) == Some("exit"))
}

/// The exact usage of `calls`, split by the cache figures of the printed
/// usage lines when they pair with the calls one to one, and how many
/// calls printed a cache figure rounded (counted as input). aider's
/// `sent` is litellm's `prompt_tokens`, which counts the cache read and
/// written, plus the cache write again (aider 0.86.2 adds it for the
/// Anthropic-style usage that reports one; litellm 1.81 already counts
/// it): fresh input is `sent - hit - 2 * write`.
fn exact_usage(calls: &[Call], printed: &[CacheFigures]) -> (Option<Usage>, usize) {
    if calls.is_empty() {
        return (None, 0);
    }
    let paired = printed.len() == calls.len();
    let mut total = Usage::default();
    let mut rounded = 0;
    for (i, call) in calls.iter().enumerate() {
        let none = Figure { n: 0, exact: true };
        let cache = printed.get(i).filter(|_| paired).copied();
        let (write, hit) = cache.map_or((none, none), |c| (c.write, c.hit));
        rounded += usize::from(!write.exact || !hit.exact);
        let write = if write.exact { write.n } else { 0 };
        let hit = if hit.exact { hit.n } else { 0 };
        total += Usage {
            input_tokens: call.sent.saturating_sub(hit + 2 * write),
            output_tokens: call.received,
            cache_read_tokens: hit,
            cache_write_tokens: write,
        };
    }
    (Some(total), rounded)
}

impl AiderParser {
    fn tokens(&mut self, rest: &str) {
        let tokens = rest.split_once("Cost:").map_or(rest, |(t, _)| t);
        let mut u = Usage::default();
        let mut sent = 0;
        let none = Figure { n: 0, exact: true };
        let mut cache = CacheFigures {
            write: none,
            hit: none,
        };
        // ", " separates the parts; a bare "," groups digits (older aiders).
        for part in tokens.split(", ") {
            let part = part.trim().trim_end_matches('.');
            let Some((num, what)) = part.split_once(' ') else {
                continue;
            };
            let figure = tokens_figure(num).unwrap_or_default();
            let n = figure.n;
            match what.trim() {
                "sent" => sent = n,
                "received" => u.output_tokens = n,
                "cache hit" => (u.cache_read_tokens, cache.hit) = (n, figure),
                "cache write" => (u.cache_write_tokens, cache.write) = (n, figure),
                _ => {}
            }
        }
        self.printed.push(cache);
        // `sent` counts the cache read once and the cache write twice (see
        // `exact_usage`).
        u.input_tokens = sent.saturating_sub(u.cache_read_tokens + 2 * u.cache_write_tokens);
        let mut total = self.usage.unwrap_or_default();
        total += u;
        self.usage = Some(total);
        let answer = std::mem::take(&mut self.pending).join("\n");
        if !answer.trim().is_empty() {
            self.answer = Some(answer.trim().to_string());
        }
        // A call that succeeded after a retried error clears it.
        self.error = None;
        self.retries = 0;
    }
}

/// `456`, `1,234` (exact), `1.2k`, `12k`, `1.5M` (rounded).
fn tokens_figure(text: &str) -> Option<Figure> {
    let t = text.trim().replace(',', "");
    if let Ok(n) = t.parse::<u64>() {
        return Some(Figure { n, exact: true });
    }
    let (num, scale) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 1e3),
        'm' | 'M' => (&t[..t.len() - 1], 1e6),
        _ => (t.as_str(), 1.0),
    };
    let n: f64 = num.parse().ok()?;
    let n = (n.is_finite() && n >= 0.0).then(|| (n * scale).round() as u64)?;
    Some(Figure { n, exact: false })
}

/// aider's own error lines (it exits 0 after them): litellm's exceptions
/// and aider's sentences about them, each at the start of its line.
fn is_error_line(line: &str) -> bool {
    let l = line.trim_start();
    (l.starts_with("litellm.") && l.contains("Error")) || limits::begins_with(l, AIDER_LIMITS)
}

/// How aider's own sentences about a refusal by the provider begin.
const AIDER_LIMITS: &[&str] = &[
    "the api provider has rate limited you",
    "the api provider's servers are down or overloaded",
    "insufficient credits",
];

/// litellm's exceptions for the provider's trouble: 429, 503 and 500.
const LITELLM_TROUBLE: [&str; 3] = [
    "litellm.RateLimitError",
    "litellm.ServiceUnavailableError",
    "litellm.InternalServerError",
];

/// Whether one of aider's error lines is the provider's refusal: litellm's
/// exception for its trouble, aider's sentences about one, or litellm's
/// exception carrying Anthropic's empty-balance message.
fn is_limit_line(line: &str) -> bool {
    let l = line.trim_start();
    LITELLM_TROUBLE.iter().any(|e| l.starts_with(e))
        || limits::begins_with(l, AIDER_LIMITS)
        || (l.starts_with("litellm.") && l.contains("Your credit balance is too low"))
}

/// Whether aider's output ends in its wait before another try
/// (`Retrying in 0.2 seconds...`).
fn waits_to_retry(lines: &str) -> bool {
    let last = lines.lines().rev().find(|l| !l.trim().is_empty());
    last.is_some_and(|l| l.trim_start().starts_with("Retrying in "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cli::{parse_output, EPOCH};

    fn parse(text: &str) -> Parsed {
        parse_output(AiderParser::default(), text.lines(), "", EPOCH)
    }

    #[test]
    fn output_that_ends_while_aider_retries_a_refusal_is_retrying() {
        let overloaded = "litellm.ServiceUnavailableError: ServiceUnavailableError: OpenAIException - The \nserver is overloaded. Please try again later.\nThe API provider's servers are down or overloaded.\nRetrying in 0.5 seconds...\n";
        let p = parse(overloaded);
        assert!(p.limit.is_some() && p.retrying.is_some(), "{p:?}");
        let answered = format!("{overloaded}a.txt\nTokens: 24 sent, 7 received.\n");
        let p = parse(&answered);
        assert!(p.retrying.is_none() && p.limit.is_none(), "{p:?}");
        let failing = "litellm.BadRequestError: OpenAIException - no such model\nRetrying in 0.5 seconds...\n";
        assert!(
            parse(failing).retrying.is_none(),
            "not the provider's trouble"
        );
    }

    #[test]
    fn aider_gives_up_on_its_second_retry_of_a_refusal_and_not_of_other_errors() {
        let refused = "litellm.RateLimitError: RateLimitError: OpenAIException - limited\nThe API provider has rate limited you. Try again later or check your quotas.\n";
        let mut p = AiderParser::default();
        for line in format!("{refused}Retrying in 0.2 seconds...\n{refused}").lines() {
            p.line(line);
        }
        assert!(!p.gives_up(), "its first retry is its own");
        p.line("Retrying in 0.5 seconds...");
        assert!(p.gives_up(), "its second is past the bound");
        let parsed = p.finish("", EPOCH);
        assert!(parsed.retrying.is_some(), "{parsed:?}");
        // An answer in between starts the count again.
        let mut p = AiderParser::default();
        let answered = format!("{refused}Retrying in 0.2 seconds...\na.txt\nTokens: 24 sent, 7 received.\n{refused}Retrying in 0.2 seconds...\n");
        answered.lines().for_each(|l| p.line(l));
        assert!(!p.gives_up());
        // A connection error is retried as aider does, not counted.
        let mut p = AiderParser::default();
        for _ in 0..5 {
            p.line("litellm.APIConnectionError: Connection reset");
            p.line("Retrying in 0.2 seconds...");
        }
        assert!(!p.gives_up());
    }

    /// aider 0.86.2 (litellm 1.81.10) refused by the real-agent tier's
    /// mock with a 429 (`retry-after: 1`, OpenAI's message), as its agent
    /// log holds it: litellm's exception wrapped at 80 columns, the reset
    /// time on its second line.
    const WRAPPED_429: &str = "Model: openai/gpt-5.4 with whole edit format\n\
        Git repo: .git with 1 files\n\
        Repo-map: using 1024 tokens, auto refresh\n\
        \n\
        litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached for\n\
        requests. Please try again in 1s.\n\
        The API provider has rate limited you. Try again later or check your quotas.\n\
        Retrying in 0.2 seconds...\n";

    #[test]
    fn a_wrapped_error_line_is_read_whole_with_its_reset_time() {
        let p = parse(WRAPPED_429);
        let limit = p.limit.expect("a rate limit");
        assert_eq!(limit.retry_after, Some(std::time::Duration::from_secs(1)));
        let failure = p.failure.unwrap();
        assert!(
            failure.starts_with("litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached for requests. Please try again in 1s.\nThe API provider has rate limited you."),
            "{failure}"
        );
        assert!(p.retrying.is_some(), "its output ends in its wait to retry");
        // A line that fits after a short error line is not its rest.
        let short = "litellm.RateLimitError: limited\nrequests. Please try again in 1s.\n";
        assert_eq!(parse(short).limit.unwrap().retry_after, None);
        assert!(!wraps_into(
            "litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached for",
            "Retrying in 0.2 seconds..."
        ));
    }

    /// aider 0.86.2 against the Anthropic API (litellm 1.81.10), a call
    /// reporting 11 fresh input, 5 cache write, 1300 cache read and 7
    /// output tokens: its line, and its analytics log's events.
    const ANTHROPIC: &str = "Main model: anthropic/claude-sonnet-4-6 with whole edit format\na.txt\n```\nmade\n```\n\nTokens: 1.3k sent, 5 cache write, 1.3k cache hit, 7 received.\n";
    const ANTHROPIC_LOG: &str = r#"{"event": "launched", "properties": {}, "user_id": "u", "time": 1796245559}
{"event": "message_send_starting", "properties": {}, "user_id": "u", "time": 1796245562}
{"event": "message_send", "properties": {"main_model": "anthropic/REDACTED", "weak_model": "anthropic/REDACTED", "editor_model": "anthropic/REDACTED", "edit_format": "whole", "prompt_tokens": 1321, "completion_tokens": 7, "total_tokens": 1328, "cost": 0, "total_cost": 0.0}, "user_id": "u", "time": 1796245563}
{"event": "exit", "properties": {"reason": "Completed --message-file"}, "user_id": "u", "time": 1796245563}
"#;

    fn with_log(text: &str, log: Option<&str>) -> (Parsed, Option<String>) {
        let mut p = AiderParser::default();
        for line in text.lines() {
            p.line(line);
        }
        let note = p.record(log.map(str::as_bytes));
        (p.finish("", EPOCH), note)
    }

    fn kinds(u: Usage) -> (u64, u64, u64, u64) {
        let Usage {
            input_tokens,
            output_tokens,
            cache_read_tokens,
            cache_write_tokens,
        } = u;
        (
            input_tokens,
            output_tokens,
            cache_read_tokens,
            cache_write_tokens,
        )
    }

    #[test]
    fn the_analytics_log_gives_exact_tokens_and_full_cache_figures_split_them() {
        // The cache hit is printed rounded: it counts as input, exactly.
        let (p, note) = with_log(ANTHROPIC, Some(ANTHROPIC_LOG));
        assert_eq!(kinds(p.usage.unwrap()), (1311, 7, 0, 5));
        assert_eq!(p.cost_usd, None, "no price for the model: computed");
        let note = note.unwrap();
        assert!(
            note.contains("(1 call); 1 printed a cache figure rounded"),
            "{note}"
        );
        // Printed in full, both split off.
        let small = ANTHROPIC
            .replace("1.3k sent", "42 sent")
            .replace("1.3k cache hit", "13 cache hit");
        let log = ANTHROPIC_LOG.replace("1321", "34");
        let (p, _) = with_log(&small, Some(&log));
        assert_eq!(kinds(p.usage.unwrap()), (11, 7, 13, 5));
        // Its cost when it had a price, to the last digit.
        let priced = log.replace(r#""cost": 0,"#, r#""cost": 0.00012345678,"#);
        assert_eq!(
            with_log(&small, Some(&priced)).0.cost_usd,
            Some(0.00012345678)
        );
        // Printed lines that do not pair with the calls split nothing.
        let forged = format!("{small}Tokens: 5 sent, 900 cache hit, 1 received.\n");
        let (p, note) = with_log(&forged, Some(&log));
        assert_eq!(kinds(p.usage.unwrap()), (34, 7, 0, 0));
        assert!(note.unwrap().contains("do not pair"));
    }

    /// aider's start-up banner is not its answer.
    #[test]
    fn the_final_message_leaves_out_the_banner() {
        let text = "Aider v0.86.2\nMain model: openai/gpt-5.4 with whole edit format\nWeak model: openai/gpt-5.4\nGit repo: .git with 1 files\nRepo-map: using 1024 tokens, auto refresh\nAdded a.txt to the chat.\n\nI made a.txt.\n\nTokens: 24 sent, 7 received.\n";
        let (p, _) = with_log(text, None);
        assert_eq!(p.final_message.as_deref(), Some("I made a.txt."));
    }

    #[test]
    fn without_its_log_the_printed_usage_and_no_cost() {
        let text = "Main model: claude-sonnet-4-6 with diff edit format\nI will edit a.py.\nTokens: 12k sent, 1.2k cache write, 3.4k cache hit, 456 received. Cost: $0.05 message, $0.12 session.\nApplied edit to a.py\nDone, all tests pass.\nTokens: 1,000 sent, 10 received. Cost: $0.01 message, $0.13 session.\n";
        let (p, note) = with_log(text, None);
        assert!(note.unwrap().starts_with("aider: no analytics log"));
        assert_eq!(
            kinds(p.usage.unwrap()),
            (12_000 - 3_400 - 2 * 1_200 + 1_000, 466, 3_400, 1_200)
        );
        assert_eq!(p.cost_usd, None, "the printed cost is rounded");
        assert_eq!(p.model.as_deref(), Some("claude-sonnet-4-6"));
        assert_eq!(
            p.final_message.as_deref(),
            Some("Applied edit to a.py\nDone, all tests pass.")
        );
        assert!(p.failure.is_none() && p.complete);
        // A log that ends before its exit event: aider was stopped.
        let (p, _) = with_log("litellm.AuthenticationError: bad key\n", Some(""));
        assert!(p.usage.is_none() && p.failure.is_some() && !p.complete);
        let exit = r#"{"event": "exit", "properties": {"reason": "Completed --message-file"}}"#;
        let (p, _) = with_log("litellm.AuthenticationError: bad key\n", Some(exit));
        assert!(
            p.failure.is_some() && p.complete,
            "its error was its last say"
        );
    }

    #[test]
    fn errors_decide_because_the_exit_code_does_not() {
        let limited =
            parse("The API provider has rate limited you. Try again later or check your quotas.\n");
        assert!(limited.failure.is_some() && limited.limit.is_some());
        let recovered = parse("litellm.APIConnectionError: reset\nRetrying in 0.2 seconds...\nTokens: 5 sent, 5 received.\n");
        assert!(recovered.failure.is_none() && recovered.limit.is_none());
        let answered = parse(
            "The API provider has rate limited you, the test says.\nTokens: 5 sent, 5 received.\n",
        );
        assert!(answered.failure.is_none() && answered.limit.is_none());
        let words = parse("litellm.APIError: quota exceeded while testing the rate limit\n");
        assert!(words.failure.is_some() && words.limit.is_none());
        let auth = parse("litellm.AuthenticationError: bad key\n");
        assert!(auth.failure.is_some() && auth.limit.is_none());
        let rounded = |n| Some(Figure { n, exact: false });
        assert_eq!(tokens_figure("1.5M"), rounded(1_500_000));
        assert_eq!(tokens_figure("1.2k"), rounded(1_200));
        assert_eq!(
            tokens_figure("1,234"),
            Some(Figure {
                n: 1_234,
                exact: true
            })
        );
        assert_eq!(tokens_figure("x"), None);
        assert_eq!(parse("Tokens: lots sent\n").usage.unwrap().total(), 0);
    }
}
