//! The codeboost command grammar for `cmd` checks: a string becomes an argv,
//! never a shell command.
//!
//! ASCII space separates arguments outside quotes. Single or double quotes
//! delimit a literal part that only the same quote closes; adjacent parts
//! concatenate (`ab" cd"` is the one argument `ab cd`) and an empty quoted
//! string is an empty argument. There are no escapes. Rejected anywhere: a
//! backslash, a control character (C0, C1, DEL), an unclosed quote and (our
//! addition) a Unicode format character such as a bidi control or a
//! zero-width space, which would make two different argvs look the same.
//! Rejected outside quotes: the shell's metacharacters ``; & | < > $ ` ( ) * ? [ ] { } ! # ~``.

use std::fmt;

/// Characters that mean something to a shell; only allowed inside quotes.
pub const SHELL_CHARS: &[char] = &[
    ';', '&', '|', '<', '>', '$', '`', '(', ')', '*', '?', '[', ']', '{', '}', '!', '#', '~',
];

/// Why a command string is not a valid `cmd`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason} (at character {offset})")]
pub struct CommandError {
    /// 0-based offset, in characters, of the offending character.
    pub offset: usize,
    /// What is wrong there.
    pub reason: Reason,
}

/// The ways a command string can be wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// Nothing but spaces.
    Empty,
    /// The program name is an empty quoted string.
    EmptyExecutable,
    /// A backslash: the grammar has no escapes.
    Backslash,
    /// A control character (C0, C1 or DEL).
    Control(char),
    /// A Unicode format character (general category Cf).
    Format(char),
    /// A shell metacharacter outside quotes.
    ShellChar(char),
    /// A quote that is never closed.
    Unclosed(char),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Empty => f.write_str("the command is empty"),
            Reason::EmptyExecutable => f.write_str("the program name is empty"),
            Reason::Backslash => {
                f.write_str("backslash is not allowed (the grammar has no escapes)")
            }
            Reason::Control(c) => write!(f, "control character U+{:04X} is not allowed", *c as u32),
            Reason::Format(c) => write!(
                f,
                "invisible format character U+{:04X} is not allowed",
                *c as u32
            ),
            Reason::ShellChar(c) => write!(
                f,
                "`{c}` is shell syntax and is only allowed inside quotes (commands never run in a shell)"
            ),
            Reason::Unclosed(q) => write!(f, "the quote {q} is never closed"),
        }
    }
}

/// Unicode general category Cf (Unicode 15.1): bidi controls, zero-width
/// characters, the byte order mark, tag characters and the like.
const FORMAT_RANGES: &[(u32, u32)] = &[
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
];

/// Whether `c` is a Unicode format character (category Cf).
pub fn is_format(c: char) -> bool {
    let c = c as u32;
    FORMAT_RANGES.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// Checks that apply inside and outside quotes.
fn forbidden_anywhere(c: char) -> Option<Reason> {
    if c == '\\' {
        Some(Reason::Backslash)
    } else if c.is_control() {
        Some(Reason::Control(c))
    } else if is_format(c) {
        Some(Reason::Format(c))
    } else {
        None
    }
}

/// Splits a `cmd` check into its argv.
pub fn parse(cmd: &str) -> Result<Vec<String>, CommandError> {
    let err = |offset, reason| CommandError { offset, reason };
    let mut argv = Vec::new();
    let mut current = String::new();
    let mut in_arg = false;
    let mut quote: Option<(char, usize)> = None;
    for (i, c) in cmd.chars().enumerate() {
        if let Some(reason) = forbidden_anywhere(c) {
            return Err(err(i, reason));
        }
        match quote {
            Some((q, _)) if c == q => quote = None,
            Some(_) => current.push(c),
            None => match c {
                ' ' => {
                    if in_arg {
                        argv.push(std::mem::take(&mut current));
                        in_arg = false;
                    }
                }
                '\'' | '"' => {
                    quote = Some((c, i));
                    in_arg = true;
                }
                c if SHELL_CHARS.contains(&c) => return Err(err(i, Reason::ShellChar(c))),
                c => {
                    current.push(c);
                    in_arg = true;
                }
            },
        }
    }
    if let Some((q, at)) = quote {
        return Err(err(at, Reason::Unclosed(q)));
    }
    if in_arg {
        argv.push(current);
    }
    match argv.first() {
        None => Err(err(0, Reason::Empty)),
        Some(program) if program.is_empty() => {
            let at = cmd.chars().take_while(|c| *c == ' ').count();
            Err(err(at, Reason::EmptyExecutable))
        }
        Some(_) => Ok(argv),
    }
}

/// Writes `argv` as a command string that [`parse`] reads back as `argv`
/// (for every argv that `parse` can produce). Plain words stay bare.
pub fn quote(argv: &[String]) -> String {
    argv.iter()
        .map(|arg| quote_arg(arg))
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_bare(c: char) -> bool {
    c != ' ' && c != '\'' && c != '"' && !SHELL_CHARS.contains(&c)
}

fn quote_arg(arg: &str) -> String {
    if !arg.is_empty() && arg.chars().all(is_bare) {
        return arg.to_string();
    }
    if !arg.contains('\'') {
        return format!("'{arg}'");
    }
    if !arg.contains('"') {
        return format!("\"{arg}\"");
    }
    // Both quotes: single quotes go in double-quoted parts, everything
    // else in single-quoted parts; adjacent parts concatenate.
    let mut out = String::new();
    let mut open: Option<char> = None;
    for c in arg.chars() {
        let want = if c == '\'' { '"' } else { '\'' };
        if open != Some(want) {
            if let Some(q) = open {
                out.push(q);
            }
            out.push(want);
            open = Some(want);
        }
        out.push(c);
    }
    if let Some(q) = open {
        out.push(q);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ok(cmd: &str) -> Vec<String> {
        parse(cmd).unwrap_or_else(|e| panic!("{cmd:?} rejected: {e}"))
    }

    fn reason(cmd: &str) -> Reason {
        parse(cmd)
            .expect_err(&format!("{cmd:?} should be rejected"))
            .reason
    }

    #[test]
    fn anchors_accepted_examples() {
        assert_eq!(
            ok(r#"test '' ab" cd" '#!()'"#),
            ["test", "", "ab cd", "#!()"]
        );
        assert_eq!(
            ok("go test ./... -run 'Test.*'"),
            ["go", "test", "./...", "-run", "Test.*"]
        );
    }

    #[test]
    fn anchors_rejected_examples() {
        assert_eq!(reason("echo $HOME"), Reason::ShellChar('$'));
        assert_eq!(reason("a && b"), Reason::ShellChar('&'));
        assert_eq!(reason("git log HEAD~1"), Reason::ShellChar('~'));
        assert_eq!(reason(r"test 'a\b'"), Reason::Backslash);
    }

    #[test]
    fn quotes_concatenate_and_only_the_same_quote_closes() {
        assert_eq!(ok(r#"a"b'c"d"#), [r"ab'cd"]);
        assert_eq!(ok(r#"'say "hi"'"#), [r#"say "hi""#]);
        assert_eq!(ok("  cargo   test  "), ["cargo", "test"]);
        assert_eq!(ok("x '' \"\""), ["x", "", ""]);
    }

    #[test]
    fn every_shell_char_is_rejected_outside_quotes_only() {
        for c in SHELL_CHARS {
            assert_eq!(reason(&format!("a b{c}")), Reason::ShellChar(*c), "{c}");
            assert_eq!(ok(&format!("a 'b{c}'")), ["a", &format!("b{c}")]);
        }
    }

    #[test]
    fn rejects_control_format_unclosed_and_empty() {
        assert_eq!(reason("a\tb"), Reason::Control('\t'));
        assert_eq!(reason("a '\u{7f}'"), Reason::Control('\u{7f}'));
        assert_eq!(reason("a \u{85}"), Reason::Control('\u{85}'));
        assert_eq!(reason("a '\u{202E}x'"), Reason::Format('\u{202E}'));
        assert_eq!(reason("a\u{200B}b"), Reason::Format('\u{200B}'));
        assert_eq!(reason("\u{FEFF}ls"), Reason::Format('\u{FEFF}'));
        assert_eq!(reason("echo 'hi"), Reason::Unclosed('\''));
        assert_eq!(reason("echo \"hi'"), Reason::Unclosed('"'));
        assert_eq!(reason(""), Reason::Empty);
        assert_eq!(reason("   "), Reason::Empty);
        assert_eq!(reason("'' x"), Reason::EmptyExecutable);
    }

    #[test]
    fn offsets_count_characters() {
        let e = parse("é é $").unwrap_err();
        assert_eq!(e.offset, 4);
        assert_eq!(parse("ab 'cd").unwrap_err().offset, 3);
        for (cmd, at) in [
            ("echo $HOME", 5),
            ("a && b", 2),
            ("git log HEAD~1", 12),
            (r"test 'a\b'", 7),
            ("echo 'hi", 5),
        ] {
            assert_eq!(parse(cmd).unwrap_err().offset, at, "{cmd}");
        }
        assert_eq!(
            e.to_string(),
            "`$` is shell syntax and is only allowed inside quotes (commands never run in a shell) (at character 4)"
        );
    }

    #[test]
    fn quote_keeps_plain_words_bare() {
        let argv: Vec<String> = ["cargo", "test", "-p", "x"].map(String::from).to_vec();
        assert_eq!(quote(&argv), "cargo test -p x");
        let argv: Vec<String> = ["go", "test", "-run", "Test.*", "", "a'b\"c"]
            .map(String::from)
            .to_vec();
        assert_eq!(quote(&argv), r#"go test -run 'Test.*' '' 'a'"'"'b"c'"#);
        assert_eq!(parse(&quote(&argv)).unwrap(), argv);
    }

    fn arg_char() -> impl Strategy<Value = char> {
        prop_oneof![
            proptest::char::range('a', 'z'),
            Just(' '),
            Just('\''),
            Just('"'),
            Just('.'),
            Just('-'),
            Just('é'),
            Just('\u{1F600}'),
            proptest::sample::select(SHELL_CHARS.to_vec()),
        ]
    }

    proptest! {
        #[test]
        fn random_strings_never_panic(s in any::<String>()) {
            let _ = parse(&s);
        }

        #[test]
        fn accepted_commands_requote_to_the_same_argv(s in proptest::collection::vec(arg_char(), 0..40)) {
            let s: String = s.into_iter().collect();
            if let Ok(argv) = parse(&s) {
                prop_assert_eq!(parse(&quote(&argv)).unwrap(), argv);
            }
        }

        #[test]
        fn producible_argvs_round_trip(
            first in proptest::collection::vec(arg_char(), 1..10),
            rest in proptest::collection::vec(proptest::collection::vec(arg_char(), 0..10), 0..5),
        ) {
            let mut argv: Vec<String> = vec![first.into_iter().collect()];
            argv.extend(rest.into_iter().map(|a| a.into_iter().collect::<String>()));
            prop_assert_eq!(parse(&quote(&argv)).unwrap(), argv);
        }
    }
}
