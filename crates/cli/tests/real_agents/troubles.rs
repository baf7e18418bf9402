//! Part of the real-agent tier (see `real_agents.rs`): provider trouble that is not the
//! ticket's fault: rate limits, overloads, 500s and hung streams.

use super::*;

/// How one CLI meets provider trouble, as the tier shows it: one row per
/// CLI, three tests each ([`trouble_tests`]).
struct Troubles {
    setup: fn(&MockModel) -> Setup,
    expect: &'static Expect,
    /// A 429 with `retry-after`, and an overload (of `overloaded_status`).
    limited: Meets,
    overloaded: Meets,
    overloaded_status: u16,
    /// The attempts' outcomes when the first call's stream hangs.
    hung: &'static [&'static str],
    /// The reset the run records from the mock's `retry-after`, in
    /// milliseconds: at least, at most (the CLI's own jitter on it). `None`:
    /// the CLI does not pass it on (docs/agents.md names those).
    reset: Option<(u64, u64)>,
}

/// What one trouble does to a CLI.
struct Meets {
    /// The model calls the mock refuses: for a CLI that gives up, those it
    /// makes before it does, so that the next attempt gets an answer.
    calls: usize,
    /// The attempts' outcomes: `unavailable` first when the CLI gives up
    /// (then the run pauses once), `finished` alone when its own retries
    /// got an answer within the attempt.
    outcomes: &'static [&'static str],
    /// How the pause's reason starts.
    reason: &'static str,
}

/// The mock's `retry-after`, in seconds.
const RETRY_AFTER_SECS: u64 = 1;

/// The shortest pause (docs/agents.md: a backoff of 1, 2, 4, ... minutes).
const FIRST_BACKOFF_MS: u64 = 60_000;

/// An `Unavailable` attempt paused its pool (or ticket) once, and used
/// no strike: its `pool_paused` event.
fn assert_paused(env: &Env, reason_starts: &str) -> Value {
    let paused = events(env, "pool_paused");
    assert_eq!(paused.len(), 1, "{paused:?}");
    let reason = paused[0]["reason"].as_str().unwrap();
    assert!(reason.starts_with(reason_starts), "{reason}");
    paused[0].clone()
}

/// `trouble` as `meets` says; the `pool_paused` event when the CLI gave up.
fn meet(test: &str, t: &Troubles, trouble: Trouble, meets: &Meets) -> Option<Value> {
    let met = (trouble, meets.calls);
    let (env, _) = troubled(test, t.setup, t.expect, met, meets.outcomes);
    if meets.outcomes[0] == "unavailable" {
        return Some(assert_paused(&env, meets.reason));
    }
    let paused = events(&env, "pool_paused");
    assert!(paused.is_empty(), "{test}: {paused:?}");
    None
}

/// A 429 with `retry-after`: no strike, then merged; when the CLI gave
/// up, the run records the reset it named, and a pause of it within the
/// documented bounds (at least the first backoff, at most `max_pause`).
fn rate_limited(test: &str, t: &Troubles) {
    if !wanted(test) {
        return;
    }
    let limited = Trouble::RateLimited {
        retry_after_secs: RETRY_AFTER_SECS,
    };
    let Some(paused) = meet(test, t, limited, &t.limited) else {
        return;
    };
    let named = paused["retry_after_ms"].as_u64();
    let within = match (named, t.reset) {
        (Some(ms), Some((least, most))) => (least..=most).contains(&ms),
        (named, reset) => named.is_none() && reset.is_none(),
    };
    assert!(within, "{test}: the reset the run recorded\n{paused}");
    let bounded = named.unwrap_or(0).max(FIRST_BACKOFF_MS).min(MAX_PAUSE_MS);
    assert_eq!(
        paused["wait_ms"].as_u64(),
        Some(bounded),
        "{test}\n{paused}"
    );
}

/// An overloaded provider: no strike, then merged.
fn overloaded(test: &str, t: &Troubles) {
    if !wanted(test) {
        return;
    }
    let over = Trouble::Overloaded {
        status: t.overloaded_status,
    };
    meet(test, t, over, &t.overloaded);
}

/// A stream that never ends, then merged.
fn hung_stream(test: &str, t: &Troubles) {
    if !wanted(test) {
        return;
    }
    let hung = Meets {
        calls: 1,
        outcomes: t.hung,
        reason: "",
    };
    meet(test, t, Trouble::Hang, &hung);
}

/// The rate-limited, overloaded and hung-stream tests of one CLI's row.
macro_rules! trouble_tests {
    ($row:ident: $limited:ident, $overloaded:ident, $hung:ident) => {
        #[test]
        fn $limited() {
            rate_limited(stringify!($limited), &$row);
        }
        #[test]
        fn $overloaded() {
            overloaded(stringify!($overloaded), &$row);
        }
        #[test]
        fn $hung() {
            hung_stream(stringify!($hung), &$row);
        }
    };
}

/// Gives up on a refusal and pauses the run, then merges.
const GIVES_UP: &[&str] = &["unavailable", "finished"];

/// Its own retries got an answer within the attempt.
const RETRIED: &[&str] = &["finished"];

/// The agent's time limit ended the attempt: a strike, then merged.
const TIMED_OUT: &[&str] = &["timed_out", "finished"];

/// Claude Code makes three calls before it gives up on a refusal, and
/// waits the `retry-after` with up to a quarter more of its own.
const CLAUDE_TROUBLES: Troubles = Troubles {
    setup: claude,
    expect: &CLAUDE,
    limited: Meets {
        calls: 3,
        outcomes: GIVES_UP,
        reason: "API Error: Request rejected (429)",
    },
    overloaded: Meets {
        calls: 3,
        outcomes: GIVES_UP,
        reason: "API Error: ",
    },
    overloaded_status: 529,
    hung: TIMED_OUT,
    reset: Some((1000, 1250)),
};

/// Gemini CLI tries twice (the slot's `general.maxAttempts`) and gives up
/// on the second refusal; the next attempt meets the third and gets an
/// answer on its retry.
const GEMINI_TROUBLES: Troubles = Troubles {
    setup: gemini,
    expect: &GEMINI,
    limited: Meets {
        calls: 3,
        outcomes: GIVES_UP,
        reason: "Resource has been exhausted",
    },
    overloaded: Meets {
        calls: 3,
        outcomes: GIVES_UP,
        reason: "The model is overloaded.",
    },
    overloaded_status: 503,
    hung: TIMED_OUT,
    reset: Some((1000, 1000)),
};

/// Codex retries a refused request once (the slot's
/// `request_max_retries`), an overloaded one also as a stream
/// (`stream_max_retries`, "Reconnecting... 1/1"), and names no reset.
const CODEX_TROUBLES: Troubles = Troubles {
    setup: codex,
    expect: &CODEX,
    limited: Meets {
        calls: 2,
        outcomes: GIVES_UP,
        reason: "exceeded retry limit, last status: 429",
    },
    overloaded: Meets {
        calls: 4,
        outcomes: GIVES_UP,
        reason: "unexpected status 503",
    },
    overloaded_status: 503,
    hung: TIMED_OUT,
    reset: None,
};

/// opencode gives up on a 429 after nine calls (its title request and
/// the session's, each retried); an overload and a hung stream it
/// retries on its own, silently, until it is answered.
const OPENCODE_TROUBLES: Troubles = Troubles {
    setup: opencode,
    expect: &OPENCODE,
    limited: Meets {
        calls: 9,
        outcomes: GIVES_UP,
        reason: "Rate limit reached for requests.",
    },
    overloaded: Meets {
        calls: 3,
        outcomes: RETRIED,
        reason: "",
    },
    overloaded_status: 503,
    hung: RETRIED,
    reset: Some((1000, 1000)),
};

/// aider retries a refusal on its own, once, each of its tries three
/// calls (litellm's OpenAI client retries twice); planwright stops it as
/// it announces its second retry (`aider::MAX_RETRIES`).
const AIDER_TROUBLES: Troubles = Troubles {
    setup: aider,
    expect: &AIDER,
    limited: Meets {
        calls: AIDER_CALLS,
        outcomes: GIVES_UP,
        reason: "litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached for requests. Please try again in 1s.",
    },
    overloaded: Meets {
        calls: AIDER_CALLS,
        outcomes: GIVES_UP,
        reason: "litellm.ServiceUnavailableError: ",
    },
    overloaded_status: 503,
    hung: TIMED_OUT,
    reset: Some((1000, 1000)),
};

/// The calls aider makes before planwright stops it: two tries of three.
const AIDER_CALLS: usize = 6;

/// The Copilot CLI retries a refused call five times on its own (the
/// `retry-after` it is given, else its own backoff) and then gives up.
const COPILOT_TROUBLES: Troubles = Troubles {
    setup: copilot,
    expect: &COPILOT,
    limited: Meets {
        calls: 6,
        outcomes: GIVES_UP,
        reason: "Failed to get response from the AI model; retried 5 times",
    },
    overloaded: Meets {
        calls: 6,
        outcomes: GIVES_UP,
        reason: "Failed to get response from the AI model; retried 5 times",
    },
    overloaded_status: 503,
    hung: TIMED_OUT,
    reset: Some((1000, 1000)),
};

trouble_tests!(CLAUDE_TROUBLES: claude_rate_limited, claude_overloaded, claude_hung_stream);
trouble_tests!(GEMINI_TROUBLES: gemini_rate_limited, gemini_overloaded, gemini_hung_stream);
trouble_tests!(CODEX_TROUBLES: codex_rate_limited, codex_overloaded, codex_hung_stream);
trouble_tests!(OPENCODE_TROUBLES: opencode_rate_limited, opencode_overloaded, opencode_hung_stream);
trouble_tests!(AIDER_TROUBLES: aider_rate_limited, aider_overloaded, aider_hung_stream);
trouble_tests!(COPILOT_TROUBLES: copilot_rate_limited, copilot_overloaded, copilot_hung_stream);

/// OpenAI's 500 in its own words ("We're currently experiencing high
/// demand"; Anthropic's and Gemini's 500 in theirs): the provider's
/// trouble, no strike, then merged.
fn server_error(test: &str, t: &Troubles, meets: &Meets) {
    if !wanted(test) {
        return;
    }
    meet(test, t, Trouble::Overloaded { status: 500 }, meets);
}

#[test]
fn claude_server_error() {
    let meets = Meets {
        calls: 3,
        outcomes: GIVES_UP,
        reason: "API Error: 500",
    };
    server_error("claude_server_error", &CLAUDE_TROUBLES, &meets);
}

#[test]
fn gemini_server_error() {
    // Gemini CLI 0.61 gives a 500's body as its message.
    let meets = Meets {
        calls: 3,
        outcomes: GIVES_UP,
        reason: r#"{"error":{"code":500,"message":"The model is overloaded."#,
    };
    server_error("gemini_server_error", &GEMINI_TROUBLES, &meets);
}

#[test]
fn codex_server_error() {
    let meets = Meets {
        calls: 4,
        outcomes: GIVES_UP,
        // Codex's own words for it, after its retry notice.
        reason: "We’re currently experiencing high demand",
    };
    server_error("codex_server_error", &CODEX_TROUBLES, &meets);
}

#[test]
fn opencode_server_error() {
    let meets = Meets {
        calls: 3,
        outcomes: RETRIED,
        reason: "",
    };
    server_error("opencode_server_error", &OPENCODE_TROUBLES, &meets);
}

#[test]
fn aider_server_error() {
    let meets = Meets {
        calls: AIDER_CALLS,
        outcomes: GIVES_UP,
        reason: "litellm.InternalServerError: ",
    };
    server_error("aider_server_error", &AIDER_TROUBLES, &meets);
}

#[test]
fn copilot_server_error() {
    let meets = Meets {
        calls: 6,
        outcomes: GIVES_UP,
        reason: "Failed to get response from the AI model; retried 5 times",
    };
    server_error("copilot_server_error", &COPILOT_TROUBLES, &meets);
}

/// The first model call's answer spoiled (`Truncated`: cut mid-way, the
/// connection closed; `TrailingGarbage`: bytes after its end): the CLI
/// ends each attempt with a classified outcome, never a hang (the agent's
/// time limit is far beyond) nor a panic, and the ticket merges. The
/// outcomes of its attempts, as the CLI meets it.
pub(super) fn spoiled(
    test: &str,
    setup: fn(&MockModel) -> Setup,
    trouble: Trouble,
    outcomes: &[&str],
) {
    if !wanted(test) {
        return;
    }
    let mock = MockModel::start(script(Some((trouble, 1))));
    let setup = setup(&mock);
    let limits = format!(
        "timeout_secs = {TROUBLE_TIMEOUT_SECS}\nmax_pause = {}\n",
        MAX_PAUSE_MS / 1000
    );
    let env = tier_env(&setup, &mock, &limits);
    let (out, summary) = run(&env, &setup);
    let logs = logs(&env);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{test}: {summary}\n{logs}\n{}",
        seen(&mock)
    );
    assert_eq!(summary["merged"], json!(["A"]), "{summary}\n{logs}");
    let file = std::fs::read_to_string(env.repo().join("a.txt")).unwrap_or_default();
    assert_eq!(file, format!("{CONTENT}\n"));
    assert_proxied(&env, &mock);
    let seen_outcomes = attempt_outcomes(&env);
    assert_eq!(seen_outcomes, outcomes, "{test}\n{logs}\n{}", seen(&mock));
    assert!(!logs.contains("panicked"), "{test}\n{logs}");
}

/// The truncated-answer and trailing-garbage tests of one CLI.
macro_rules! spoiled_tests {
    ($setup:ident: $cut:ident => $cut_outcomes:expr, $garbage:ident => $garbage_outcomes:expr) => {
        #[test]
        fn $cut() {
            spoiled(stringify!($cut), $setup, Trouble::Truncated, $cut_outcomes);
        }
        #[test]
        fn $garbage() {
            spoiled(
                stringify!($garbage),
                $setup,
                Trouble::TrailingGarbage,
                $garbage_outcomes,
            );
        }
    };
}

/// Gemini CLI 0.61 fails the attempt on an answer it cannot read (a cut
/// stream: `TypeError: terminated`; garbage after the end: its JSON
/// parse error): an `agent_failed` strike, then merged.
const FAILED_ONCE: &[&str] = &["failed", "finished"];

// The others call again for a cut answer within the attempt, and read an
// answer with garbage after its end (aider calls again): merged at once.
spoiled_tests!(claude: claude_truncated => RETRIED, claude_trailing_garbage => RETRIED);
spoiled_tests!(gemini: gemini_truncated => FAILED_ONCE, gemini_trailing_garbage => FAILED_ONCE);
spoiled_tests!(codex: codex_truncated => RETRIED, codex_trailing_garbage => RETRIED);
spoiled_tests!(opencode: opencode_truncated => RETRIED, opencode_trailing_garbage => RETRIED);
spoiled_tests!(aider: aider_truncated => RETRIED, aider_trailing_garbage => RETRIED);
spoiled_tests!(copilot: copilot_truncated => RETRIED, copilot_trailing_garbage => RETRIED);
