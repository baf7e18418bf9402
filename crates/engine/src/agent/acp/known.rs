//! The ACP agents planwright knows by their program: which CLI adapter's
//! per-slot set-up applies to each (its home, environment names, hosts
//! and model family), and how each means the figures of its `usage`,
//! which ACP leaves to the agent (whether `inputTokens` counts the cache).

use serde_json::Value;

use crate::agent::Usage;

/// What an agent's `inputTokens` count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputTokens {
    /// Only input not read from or written to a cache, as Anthropic's API
    /// counts it (`totalTokens` is input + output + both cache figures).
    CacheApart,
    /// All input, the cached read included.
    CacheIncluded,
}

/// One known ACP agent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KnownAcp {
    /// The file name of its program.
    pub program: &'static str,
    /// The adapter whose per-slot set-up it gets (`[agent] state` names
    /// one for a program not in the table).
    pub state: &'static str,
    /// How it counts `inputTokens`; `None` reads them by `totalTokens`.
    pub input: Option<InputTokens>,
}

/// The table. Zed's `claude-agent-acp` (and its forerunner
/// `claude-code-acp`) run Claude Code, which needs its writable state
/// folder; `opencode acp` and `gemini --acp` are those CLIs' own modes.
pub(crate) const KNOWN: &[KnownAcp] = &[
    KnownAcp {
        program: "claude-agent-acp",
        state: "claude",
        input: Some(InputTokens::CacheApart),
    },
    KnownAcp {
        program: "claude-code-acp",
        state: "claude",
        input: Some(InputTokens::CacheApart),
    },
    KnownAcp {
        program: "opencode",
        state: "opencode",
        input: Some(InputTokens::CacheApart),
    },
    KnownAcp {
        program: "gemini",
        state: "gemini",
        input: Some(InputTokens::CacheIncluded),
    },
];

/// The known agent a program's file name is, if any.
pub(crate) fn known(program_file: &str) -> Option<&'static KnownAcp> {
    KNOWN.iter().find(|k| k.program == program_file)
}

/// The ACP `usage` object of a prompt's answer, read as `input` says (by
/// its `totalTokens` when `None`, else as including the cache, the
/// reading of ACP's draft): input excludes the cache, output includes the
/// thoughts.
pub(crate) fn usage(u: &Value, input: Option<InputTokens>) -> Usage {
    let n = |k: &str| u[k].as_u64().unwrap_or(0);
    let (given, output) = (n("inputTokens"), n("outputTokens") + n("thoughtTokens"));
    let (read, write) = (n("cachedReadTokens"), n("cachedWriteTokens"));
    let input = input.unwrap_or_else(|| match u["totalTokens"].as_u64() {
        Some(total) if total == given + output + read + write && read + write > 0 => {
            InputTokens::CacheApart
        }
        _ => InputTokens::CacheIncluded,
    });
    let input_tokens = match input {
        InputTokens::CacheApart => given,
        InputTokens::CacheIncluded => given.saturating_sub(read),
    };
    Usage {
        input_tokens,
        output_tokens: output,
        cache_read_tokens: read,
        cache_write_tokens: write,
    }
}

/// The session's cost so far from a `usage_update`, when it gives one in
/// US dollars (`cost: {amount, currency}`).
pub(crate) fn cost(update: &Value) -> Option<f64> {
    let cost = &update["cost"];
    let usd = cost["currency"].as_str().is_none_or(|c| c == "USD");
    cost["amount"]
        .as_f64()
        .filter(|a| usd && a.is_finite() && *a >= 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// claude-agent-acp 0.23.1's answer, as it sent it.
    #[test]
    fn claude_agent_acp_counts_input_apart_from_the_cache() {
        let u = json!({"inputTokens":1390,"outputTokens":110,"cachedReadTokens":3100,
            "cachedWriteTokens":2000,"totalTokens":6600});
        let want = Usage {
            input_tokens: 1390,
            output_tokens: 110,
            cache_read_tokens: 3100,
            cache_write_tokens: 2000,
        };
        let claude = known("claude-agent-acp").unwrap();
        assert_eq!(claude.state, "claude");
        assert_eq!(usage(&u, claude.input), want);
        // An unknown agent sending the same is read by its total.
        assert_eq!(usage(&u, None), want);
    }

    #[test]
    fn an_agent_whose_input_includes_the_cache_is_read_so() {
        let u = json!({"inputTokens":120,"outputTokens":30,"cachedReadTokens":20,
            "cachedWriteTokens":5,"totalTokens":150});
        let got = usage(&u, None);
        assert_eq!((got.input_tokens, got.cache_read_tokens), (100, 20));
        assert_eq!(usage(&u, Some(InputTokens::CacheIncluded)), got);
    }

    #[test]
    fn a_usage_updates_cost_is_read_in_dollars_only() {
        let update = json!({"sessionUpdate":"usage_update","used":9,"size":99,
            "cost":{"amount":0.01425,"currency":"USD"}});
        assert_eq!(cost(&update), Some(0.01425));
        let eur = json!({"cost":{"amount":1.0,"currency":"EUR"}});
        assert_eq!(cost(&eur), None);
        assert_eq!(cost(&json!({"used": 9})), None);
    }
}
