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
    fn inert_in_place_keeps_every_offset() {
        let text = "a\x1b[2J\u{85}b\u{202e}c\td";
        let shown = inert_in_place(text);
        assert_eq!(shown, "a?[2J\u{bf}b\u{fffd}c\td");
        assert_eq!(shown.len(), text.len());
        assert_eq!(shown.chars().count(), text.chars().count());
        assert!(matches!(
            inert_in_place("plain"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn quoting_keeps_one_line() {
        assert_eq!(quoted("a b"), "'a b'");
        assert_eq!(quoted("a\nb\t\"c\""), "'a\\nb\\t\"c\"'");
    }
}

/// `text` made inert for a terminal or a Markdown page: every control
/// character but a newline and a tab (escape sequences among them), and the
/// bidirectional overrides that reorder what a reader sees, shown as
/// `\x1b`, `\u{202e}` instead of acting. Text from agents, gates and file
/// names passes through here before it is shown.
pub fn inert(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(acts) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if acts(c) && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if acts(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

/// Whether a terminal acts on `c` rather than showing it: a control
/// character but a newline or a tab, or a bidirectional override.
fn acts(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` made inert in place: each character [`inert`] would spell out
/// replaced by one printable character of the same UTF-8 length (`?`, `¿`,
/// `\u{fffd}`), so that byte offsets and columns into it still hold (a
/// source line shown under its diagnostic).
pub fn inert_in_place(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(acts) {
        return text.into();
    }
    (text.chars())
        .map(|c| match (acts(c), c.len_utf8()) {
            (false, _) => c,
            (true, 1) => '?',
            (true, 2) => '\u{bf}',
            (true, _) => '\u{fffd}',
        })
        .collect::<String>()
        .into()
}

/// `text` for Markdown prose: [`inert`], with `&`, `<` and `>` as entities,
/// so no HTML in it is ever rendered.
pub fn markdown_text(text: &str) -> String {
    inert(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A Markdown code fence that `text` cannot close: one backtick more than
/// its longest run of backticks, and at least three.
pub fn fence(text: &str) -> String {
    let longest = (text.split(|c| c != '`')).map(str::len).max().unwrap_or(0);
    "`".repeat((longest + 1).max(3))
}

#[cfg(test)]
mod inert_tests {
    use super::*;

    #[test]
    fn escapes_and_overrides_are_shown_not_acted_on() {
        assert_eq!(inert("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(inert("\x1b[2Jgone\x07"), "\\x1b[2Jgone\\x07");
        assert_eq!(inert("a\u{202e}b\u{9b}c"), "a\\u{202e}b\\x9bc");
        assert_eq!(
            markdown_text("<img src=x> & \x1b"),
            "&lt;img src=x&gt; &amp; \\x1b"
        );
        assert_eq!(fence("no ticks"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }
}
