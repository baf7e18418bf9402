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

use super::cli::{Cli, Invocation, Limit, Parsed, StateLayout, StreamParser};
use super::limits::{self, Now};
use super::{AttemptContext, Usage, UsageSoFar};

/// The aider adapter.
#[derive(Default)]
pub struct Aider;

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
        args.extend(run.model_args("--model"));
        args
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

/// Reads aider's text output.
#[derive(Debug, Default)]
pub struct AiderParser {
    usage: Option<Usage>,
    session_cost: Option<f64>,
    model: Option<String>,
    /// Lines since the last `Tokens:` line (the answer being printed).
    pending: Vec<String>,
    /// The answer before the last `Tokens:` line.
    answer: Option<String>,
    /// An error line not followed by a successful call.
    error: Option<String>,
}

/// Lines kept of an answer in progress, so a chatty run stays bounded.
const MAX_PENDING: usize = 200;

impl StreamParser for AiderParser {
    fn line(&mut self, line: &str) {
        let line = line.trim_end();
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
        if is_error_line(line) {
            // Every error since the last successful call: the reset time may
            // be in one line and the verdict in the next.
            let all = match self.error.take() {
                Some(earlier) => format!("{earlier}\n{line}"),
                None => line.to_string(),
            };
            self.error = Some(all);
        }
        if self.pending.len() < MAX_PENDING {
            self.pending.push(line.to_string());
        }
    }

    fn so_far(&self) -> Option<UsageSoFar> {
        let usage = self.usage?;
        Some(UsageSoFar {
            model: self.model.clone(),
            usage,
        })
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
        Parsed {
            retrying,
            final_message,
            model: self.model.take(),
            usage: self.usage,
            cost_usd: self.session_cost,
            failure: self.error.take(),
            limit,
            complete: self.usage.is_some(),
            ..Parsed::default()
        }
    }
}

impl AiderParser {
    fn tokens(&mut self, rest: &str) {
        let (tokens, cost) = rest.split_once("Cost:").unwrap_or((rest, ""));
        let mut u = Usage::default();
        let mut sent = 0;
        // ", " separates the parts; a bare "," groups digits (older aiders).
        for part in tokens.split(", ") {
            let part = part.trim().trim_end_matches('.');
            let Some((num, what)) = part.split_once(' ') else {
                continue;
            };
            let n = tokens_number(num).unwrap_or(0);
            match what.trim() {
                "sent" => sent = n,
                "received" => u.output_tokens = n,
                "cache hit" => u.cache_read_tokens = n,
                "cache write" => u.cache_write_tokens = n,
                _ => {}
            }
        }
        // `sent` is litellm's prompt_tokens, which counts cached input too.
        u.input_tokens = sent.saturating_sub(u.cache_read_tokens + u.cache_write_tokens);
        let mut total = self.usage.unwrap_or_default();
        total += u;
        self.usage = Some(total);
        if let Some(session) = dollars_before(cost, "session") {
            self.session_cost = Some(session);
        }
        let answer = std::mem::take(&mut self.pending).join("\n");
        if !answer.trim().is_empty() {
            self.answer = Some(answer.trim().to_string());
        }
        // A call that succeeded after a retried error clears it.
        self.error = None;
    }
}

/// `456`, `1,234`, `1.2k`, `12k`, `1.5M`.
fn tokens_number(text: &str) -> Option<u64> {
    let t = text.trim().replace(',', "");
    let (num, scale) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 1e3),
        'm' | 'M' => (&t[..t.len() - 1], 1e6),
        _ => (t.as_str(), 1.0),
    };
    let n: f64 = num.parse().ok()?;
    (n.is_finite() && n >= 0.0).then(|| (n * scale).round() as u64)
}

/// The dollar amount just before `word` in `$0.05 message, $0.12 session.`.
fn dollars_before(text: &str, word: &str) -> Option<f64> {
    text.split(',').find_map(|part| {
        let part = part.trim().trim_end_matches('.');
        let amount = part.strip_suffix(word)?.trim().strip_prefix('$')?;
        amount.parse().ok()
    })
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
    fn token_lines_sum_and_session_cost_is_the_last() {
        let p = parse(
            "Main model: claude-sonnet-4-6 with diff edit format\nI will edit a.py.\nTokens: 12k sent, 1.2k cache write, 3.4k cache hit, 456 received. Cost: $0.05 message, $0.12 session.\nApplied edit to a.py\nDone, all tests pass.\nTokens: 1,000 sent, 10 received. Cost: $0.01 message, $0.13 session.\n",
        );
        let u = p.usage.unwrap();
        assert_eq!(u.input_tokens, 12_000 - 1_200 - 3_400 + 1_000);
        assert_eq!(
            (u.output_tokens, u.cache_read_tokens, u.cache_write_tokens),
            (466, 3_400, 1_200)
        );
        assert_eq!(p.cost_usd, Some(0.13));
        assert_eq!(p.model.as_deref(), Some("claude-sonnet-4-6"));
        assert_eq!(
            p.final_message.as_deref(),
            Some("Applied edit to a.py\nDone, all tests pass.")
        );
        assert!(p.failure.is_none() && p.complete);
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
        assert_eq!(tokens_number("1.5M"), Some(1_500_000));
        assert_eq!(tokens_number("x"), None);
        assert_eq!(parse("Tokens: lots sent\n").usage.unwrap().total(), 0);
    }
}
