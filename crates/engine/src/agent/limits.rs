//! Rate-limit and quota signals in what a CLI prints, and when they lift.
//!
//! Pure: the wall clock comes in as [`Now`], so every parser that uses
//! these is testable without a clock. Whether an attempt was refused by
//! its provider is never read from a word anywhere in the output (a test
//! about quotas would read like one): each adapter decides it from its
//! CLI's own error record, or from the start of one of that CLI's own error
//! messages ([`begins_with`]); the `cmd` agent from its exit code or the
//! start of its last line ([`is_provider_line`]). Once decided, the reset
//! time is read from that message alone, in the common shapes: a relative
//! duration ("retry in 12.2s", "reset after 5h7m30s", "try again in 5
//! minutes"), a clock time ("try again at 3:05 PM", "Dec 29th, 2025 10:15
//! PM", "resets 8pm (UTC)"), an RFC 3339 instant or a Unix timestamp.

use crate::clock::days_from_civil;
use std::time::Duration;

/// The wall clock, passed in so that parsing stays pure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    /// Seconds since the Unix epoch.
    pub unix: i64,
    /// The local time zone's offset east of UTC, in seconds (clock times
    /// without a zone, as Codex prints them, are local).
    pub utc_offset: i64,
}

impl Now {
    /// The system clock and local time zone.
    pub fn system() -> Now {
        let unix = crate::clock::unix_now() as i64;
        Now {
            unix,
            utc_offset: planwright_os::time::utc_offset(unix),
        }
    }
}

/// The HTTP statuses that are the provider's trouble, not the ticket's:
/// rate limited (429), failing (500, 502), unavailable (503) and
/// overloaded (Anthropic's 529). Every adapter reads the status from its
/// CLI's own error record or message, never from free text.
pub(crate) const PROVIDER_STATUSES: [u64; 5] = [429, 500, 502, 503, 529];

/// Whether `status` says the provider refused the key itself (401
/// Unauthorized, 403 Forbidden): no retry or pause helps, and every
/// attempt with that key fails the same way.
pub(crate) fn is_key_status(status: u64) -> bool {
    status == 401 || status == 403
}

/// Whether `status` is one of [`PROVIDER_STATUSES`].
pub(crate) fn is_provider_status(status: u64) -> bool {
    PROVIDER_STATUSES.contains(&status)
}

/// The three-digit status `text` starts with (`503 Service Unavailable`).
pub(crate) fn leading_status(text: &str) -> Option<u64> {
    let digits = text.get(..3)?;
    let after = text[3..].chars().next();
    let whole =
        digits.bytes().all(|b| b.is_ascii_digit()) && !after.is_some_and(|c| c.is_ascii_digit());
    whole.then(|| digits.parse().ok()).flatten()
}

/// What a `cmd` program's last line starts with when its provider refused
/// it (lower case; `docs/agents.md` lists them).
pub(crate) const PROVIDER_PHRASES: &[&str] = &[
    "429",
    "rate limit exceeded",
    "quota exceeded",
    "resource_exhausted",
    "overloaded",
];

/// Whether `text`, without leading blanks, begins with one of `phrases`
/// (lower case) as a whole word: case-insensitive, with `’` read as `'`.
/// Anchoring at the start is what keeps an agent's work from reading like
/// the CLI's error: a message that only mentions a phrase is not one.
pub(crate) fn begins_with(text: &str, phrases: &[&str]) -> bool {
    let lower = text.trim_start().to_lowercase().replace('\u{2019}', "'");
    phrases.iter().any(|p| {
        lower
            .strip_prefix(p)
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric()))
    })
}

/// `line` without its leading labels: words ending in `:` such as
/// `Error:`, `error: api:` or `openai.RateLimitError:`.
pub(crate) fn without_labels(line: &str) -> &str {
    let mut rest = line.trim_start();
    while let Some((word, after)) = rest.split_once(char::is_whitespace) {
        if word.len() < 2 || !word.ends_with(':') {
            break;
        }
        rest = after.trim_start();
    }
    if rest.len() > 1 && rest.ends_with(':') && !rest.contains(char::is_whitespace) {
        return "";
    }
    rest
}

/// Whether a `cmd` program's last line is its provider's refusal: after
/// its labels it begins with one of [`PROVIDER_PHRASES`].
pub(crate) fn is_provider_line(line: &str) -> bool {
    begins_with(without_labels(line), PROVIDER_PHRASES)
}

/// The last line of `text` that is not blank, trimmed.
pub(crate) fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The time from `now` until an instant given in Unix seconds (or
/// milliseconds, which some CLIs print), zero when it has passed.
pub(crate) fn until(instant: i64, now: Now) -> Duration {
    let secs = if instant > 100_000_000_000 {
        instant / 1000
    } else {
        instant
    };
    Duration::from_secs(secs.saturating_sub(now.unix).max(0) as u64)
}

/// Phrases after which a relative duration follows.
const RELATIVE: &[&str] = &[
    "retry in ",
    "retry after ",
    "try again in ",
    "reset after ",
    "resets in ",
    "reset in ",
    "available in ",
];

/// Phrases after which an instant follows.
const ABSOLUTE: &[&str] = &[
    "try again at ",
    "resets at ",
    "reset at ",
    "resets on ",
    "resets ",
    "reset: ",
];

/// When the limit described in `text` lifts, from `now`; `None` when the
/// text gives no time that can be read.
pub(crate) fn retry_after(text: &str, now: Now) -> Option<Duration> {
    let lower = text.to_lowercase();
    for phrase in RELATIVE {
        if let Some(d) = after_each(&lower, phrase).find_map(duration) {
            return Some(d);
        }
    }
    for phrase in ABSOLUTE {
        if let Some(t) = after_each(&lower, phrase).find_map(|rest| instant(rest, now)) {
            return Some(until(t, now));
        }
    }
    // Claude Code's older wording: `Claude AI usage limit reached|1760000000`.
    let legacy = after_each(&lower, "limit reached|").find_map(|rest| {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok().map(|t| until(t, now))
    });
    legacy
}

fn after_each<'a>(text: &'a str, phrase: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    text.match_indices(phrase)
        .map(move |(i, _)| &text[i + phrase.len()..])
}

/// A duration at the start of `text`: `1h2m3.5s`, `12.2s`, `30m`, or a
/// number and a unit word (`5 minutes`, `2 hours`).
pub(crate) fn duration(text: &str) -> Option<Duration> {
    compact_duration(text).or_else(|| worded_duration(text))
}

fn compact_duration(text: &str) -> Option<Duration> {
    let mut total = 0.0;
    let mut rest = text;
    let mut parts = 0;
    loop {
        let (num, tail) = number(rest)?;
        let unit = tail.chars().next()?;
        let scale = match unit {
            'h' => 3600.0,
            'm' if !tail.starts_with("ms") => 60.0,
            's' => 1.0,
            _ => break,
        };
        total += num * scale;
        parts += 1;
        rest = &tail[1..];
        if !rest.starts_with(|c: char| c.is_ascii_digit()) {
            break;
        }
    }
    (parts > 0).then(|| seconds(total))
}

fn worded_duration(text: &str) -> Option<Duration> {
    let (num, tail) = number(text)?;
    let word: String = tail
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    let scale = match word.as_str() {
        "second" | "seconds" | "sec" | "secs" => 1.0,
        "minute" | "minutes" | "min" | "mins" => 60.0,
        "hour" | "hours" | "hr" | "hrs" => 3600.0,
        "day" | "days" => 86_400.0,
        _ => return None,
    };
    Some(seconds(num * scale))
}

/// `secs` as a duration; a number too large for one (a message may say
/// anything) is the longest, which the pause's bound then cuts down.
fn seconds(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
}

/// A decimal number at the start of `text`, and what follows it.
fn number(text: &str) -> Option<(f64, &str)> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let num: f64 = text[..end].trim_end_matches('.').parse().ok()?;
    num.is_finite().then_some((num, &text[end..]))
}

/// An instant (Unix seconds) at the start of lower-case `text`.
fn instant(text: &str, now: Now) -> Option<i64> {
    let text = text.trim_start();
    rfc3339(text)
        .or_else(|| dated_clock(text, now))
        .or_else(|| clock_today(text, now))
        .or_else(|| epoch(text))
}

fn epoch(text: &str) -> Option<i64> {
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    (digits.len() == 10 || digits.len() == 13)
        .then(|| digits.parse::<i64>().ok())
        .flatten()
        .map(|t| if digits.len() == 13 { t / 1000 } else { t })
}

/// `2026-11-30t21:42:11z`, `2026-11-30 21:42:11+02:00` (lower case).
fn rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b't' | b' ') {
        return None;
    }
    let field = |from: usize, to: usize| text.get(from..to)?.parse::<i64>().ok();
    let days = days_from_civil(field(0, 4)?, field(5, 7)?, field(8, 10)?)?;
    let secs = field(11, 13)? * 3600 + field(14, 16)? * 60 + field(17, 19)?;
    let zone = text[19..].trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    let offset = zone_offset(zone).unwrap_or(0);
    Some(days * 86_400 + secs - offset)
}

fn zone_offset(zone: &str) -> Option<i64> {
    let sign = match zone.chars().next()? {
        'z' => return Some(0),
        '+' => 1,
        '-' => -1,
        _ => return None,
    };
    let h: i64 = zone.get(1..3)?.parse().ok()?;
    let m: i64 = zone.get(4..6).and_then(|m| m.parse().ok()).unwrap_or(0);
    Some(sign * (h * 3600 + m * 60))
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// Codex's form for another day: `dec 29th, 2025 10:15 pm` (local time).
fn dated_clock(text: &str, now: Now) -> Option<i64> {
    let month = MONTHS.iter().position(|m| text.starts_with(m))? as i64 + 1;
    let rest = text.split_once(' ')?.1;
    let (day, rest) = number(rest)?;
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == ',');
    let (year, rest) = number(rest.trim_start())?;
    if !(1970.0..=9999.0).contains(&year) {
        return None;
    }
    let (secs, _) = clock(rest.trim_start())?;
    let days = days_from_civil(year as i64, month, day as i64)?;
    Some(days * 86_400 + secs - now.utc_offset)
}

/// A clock time today (`3:05 pm`, `3pm`, `15:05`), local unless followed by
/// `(utc)`; a time already past today means tomorrow.
fn clock_today(text: &str, now: Now) -> Option<i64> {
    let (secs, rest) = clock(text)?;
    let offset = if rest.trim_start().starts_with("(utc)") {
        0
    } else {
        now.utc_offset
    };
    let local_now = now.unix + offset;
    let midnight = local_now - local_now.rem_euclid(86_400);
    let mut at = midnight + secs;
    if at < local_now {
        at += 86_400;
    }
    Some(at - offset)
}

/// Seconds since midnight of `3:05 pm`, `3pm`, `15:05`, `15:05:30`, and
/// what follows.
fn clock(text: &str) -> Option<(i64, &str)> {
    let (h, mut rest) = number(text).filter(|(h, _)| h.fract() == 0.0 && *h < 24.0)?;
    let mut secs = h as i64 * 3600;
    let mut minutes = false;
    while let Some(tail) = rest.strip_prefix(':') {
        let digits = tail
            .get(..2)
            .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))?;
        let scale = if minutes { 1 } else { 60 };
        secs += digits.parse::<i64>().ok()? * scale;
        minutes = true;
        rest = &tail[2..];
    }
    let trimmed = rest.trim_start();
    let meridiem = [("am", 0), ("pm", 12 * 3600)]
        .into_iter()
        .find(|(m, _)| trimmed.starts_with(m));
    if let Some((m, add)) = meridiem {
        secs = secs % (12 * 3600) + add;
        rest = &trimmed[m.len()..];
    } else if !minutes {
        return None;
    }
    (secs < 86_400).then_some((secs, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_status_is_three_digits_alone() {
        assert_eq!(leading_status("503 Service Unavailable"), Some(503));
        assert_eq!(leading_status("429"), Some(429));
        assert_eq!(leading_status("5030 odd"), None);
        assert_eq!(leading_status("50x"), None);
        assert!(is_provider_status(529) && !is_provider_status(404));
    }

    /// 2026-11-30T12:00:00Z, in a zone one hour east of UTC.
    const NOW: Now = Now {
        unix: 1_796_040_000,
        utc_offset: 3600,
    };

    fn secs(text: &str) -> Option<u64> {
        retry_after(text, NOW).map(|d| d.as_secs())
    }

    #[test]
    fn relative_durations() {
        assert_eq!(secs("Please retry in 12.220604999s."), Some(12));
        assert_eq!(secs("Your quota will reset after 5h7m30s."), Some(18_450));
        assert_eq!(secs("Try again in 5 minutes"), Some(300));
        assert_eq!(secs("Suggested retry after 12s.."), Some(12));
        assert_eq!(secs("retry in a while"), None);
    }

    #[test]
    fn clock_times_and_instants() {
        // 13:00 local is 12:00Z: now. 3:05 PM local is 2h05m away.
        assert_eq!(
            secs("You've hit your usage limit. Try again at 3:05 PM."),
            Some(7500)
        );
        // 11 AM local has passed: tomorrow.
        assert_eq!(secs("try again at 11:00 AM"), Some(22 * 3600));
        assert_eq!(secs("resets 8pm (UTC)"), Some(8 * 3600));
        assert_eq!(
            secs("or try again at Dec 1st, 2026 1:00 PM."),
            Some(24 * 3600)
        );
        assert_eq!(secs("resets at 2026-11-30T14:00:00Z"), Some(7200));
        assert_eq!(secs("resets at 2026-11-30T15:00:00+02:00"), Some(3600));
        assert_eq!(secs("Claude AI usage limit reached|1796043600"), Some(3600));
        assert_eq!(
            secs("resets at 2020-01-01T00:00:00Z"),
            Some(0),
            "a past instant"
        );
    }

    #[test]
    fn a_provider_line_begins_with_its_phrase_after_labels() {
        for line in [
            "429 Too Many Requests",
            "Error: rate limit exceeded, retry in 2h",
            "error: api: Quota exceeded for this project",
            "openai.RateLimitError: RESOURCE_EXHAUSTED",
            "  Overloaded",
        ] {
            assert!(is_provider_line(line), "{line}");
        }
        for line in [
            "test quota::exceeded ... FAILED",
            "assertion failed: quota exceeded",
            "4290 tests passed",
            "the quota exceeded check failed",
            "Error:",
            "",
            "error: test failed, to rerun pass `--lib`",
        ] {
            assert!(!is_provider_line(line), "{line}");
        }
        assert!(begins_with(
            "You\u{2019}ve hit your limit",
            &["you've hit your limit"]
        ));
        assert!(!begins_with("429x", &["429"]));
        assert_eq!(last_line("a\n  b  \n\n"), "b");
    }

    #[test]
    fn junk_never_panics() {
        for junk in [
            "try again at ",
            "retry in .",
            "resets 99:99",
            "resets é",
            "reset at 2026-",
            "try again in 900000000000000000000000000000 hours",
            "resets at Dec 1st, 99999999999999999999 1:00 PM",
            "try again at 99999999999999999999:00 pm",
        ] {
            let _ = retry_after(junk, NOW);
        }
        assert_eq!(
            secs("try again in 900000000000000000000000000000 hours"),
            Some(u64::MAX),
            "too long for a duration: the longest, for the pause's bound to cut"
        );
        assert_eq!(
            until(1_796_043_600_000, NOW).as_secs(),
            3600,
            "milliseconds"
        );
    }
}
