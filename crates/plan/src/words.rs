//! The small words of messages, in one place so that every message counts
//! and quotes the same way: `1 ticket`, `2 tickets`; `'x'`.

/// `noun` as it goes with `n`: `ticket` for 1, `tickets` otherwise
/// (`advisory` -> `advisories`).
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        return noun.to_string();
    }
    match noun.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{stem}ies"),
        _ => format!("{noun}s"),
    }
}

/// `1 error`, `2 errors`, `3 advisories`.
pub fn count(n: usize, noun: &str) -> String {
    format!("{n} {}", plural(n, noun))
}

/// How many tickets an overlap message names before it counts the rest.
pub const NAMED_TICKETS: usize = 20;

/// `T1 and T2 may run at the same time and both may change `a` / `b``, or
/// for more tickets, the count, the patterns and the first
/// [`NAMED_TICKETS`] of them; shared by `validate`, `show` and `preflight`.
pub fn overlap_message(tickets: &[String], patterns: &[String]) -> String {
    const NAMED_PATTERNS: usize = 5;
    let mut ticked: Vec<String> = patterns
        .iter()
        .take(NAMED_PATTERNS)
        .map(|p| format!("`{p}`"))
        .collect();
    if patterns.len() > NAMED_PATTERNS {
        ticked.push(format!("{} more", patterns.len() - NAMED_PATTERNS));
    }
    if let [a, b] = tickets {
        return format!(
            "{a} and {b} may run at the same time and both may change {}",
            ticked.join(" / ")
        );
    }
    let named = &tickets[..tickets.len().min(NAMED_TICKETS)];
    let rest = tickets.len() - named.len();
    let list = if rest == 0 {
        named.join(", ")
    } else {
        format!("{} and {rest} more", named.join(", "))
    };
    format!(
        "{} may run at the same time and may change the same paths ({}): {list}",
        count(tickets.len(), "ticket"),
        ticked.join(", ")
    )
}

/// A value taken from the input, quoted for a message: `'x'`, as the
/// messages of every format quote ids and paths. Control characters are
/// shown escaped so that a message stays on one line.
pub fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_right() {
        assert_eq!(count(1, "ticket"), "1 ticket");
        assert_eq!(count(0, "ticket"), "0 tickets");
        assert_eq!(count(2, "advisory"), "2 advisories");
        assert_eq!(count(2, "day"), "2 days");
        assert_eq!(plural(1, "entry"), "entry");
        assert_eq!(plural(3, "entry"), "entries");
    }

    #[test]
    fn quoting_keeps_one_line() {
        assert_eq!(quoted("a b"), "'a b'");
        assert_eq!(quoted("a\nb\t\"c\""), "'a\\nb\\t\"c\"'");
    }
}
