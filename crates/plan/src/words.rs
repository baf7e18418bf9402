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
