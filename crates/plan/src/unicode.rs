//! Names of the characters a reader may have to point at: invisible ones,
//! whose glyph tells the user nothing.

/// `U+00A0 NO-BREAK SPACE`: the code point and, where known, its Unicode
/// name.
pub fn describe(c: char) -> String {
    match name(c) {
        Some(name) => format!("U+{:04X} {name}", c as u32),
        None => format!("U+{:04X}", c as u32),
    }
}

/// `\`x\`` for a visible ASCII character, else [`describe`].
pub fn shown(c: char) -> String {
    if c.is_ascii_graphic() {
        format!("`{c}`")
    } else {
        describe(c)
    }
}

/// Characters that look like a space or a line break, or show nothing at
/// all, but are not JSON whitespace: the ones a copy from a web page or a
/// word processor brings in.
pub fn is_invisible(c: char) -> bool {
    c.is_control() || c.is_whitespace() || name(c).is_some()
}

const C0: [&str; 32] = [
    "NULL",
    "START OF HEADING",
    "START OF TEXT",
    "END OF TEXT",
    "END OF TRANSMISSION",
    "ENQUIRY",
    "ACKNOWLEDGE",
    "BELL",
    "BACKSPACE",
    "CHARACTER TABULATION",
    "LINE FEED",
    "LINE TABULATION",
    "FORM FEED",
    "CARRIAGE RETURN",
    "SHIFT OUT",
    "SHIFT IN",
    "DATA LINK ESCAPE",
    "DEVICE CONTROL ONE",
    "DEVICE CONTROL TWO",
    "DEVICE CONTROL THREE",
    "DEVICE CONTROL FOUR",
    "NEGATIVE ACKNOWLEDGE",
    "SYNCHRONOUS IDLE",
    "END OF TRANSMISSION BLOCK",
    "CANCEL",
    "END OF MEDIUM",
    "SUBSTITUTE",
    "ESCAPE",
    "INFORMATION SEPARATOR FOUR",
    "INFORMATION SEPARATOR THREE",
    "INFORMATION SEPARATOR TWO",
    "INFORMATION SEPARATOR ONE",
];

fn name(c: char) -> Option<&'static str> {
    if let Some(name) = C0.get(c as usize) {
        return Some(name);
    }
    Some(match c {
        ' ' => "SPACE",
        '\u{7f}' => "DELETE",
        '\u{85}' => "NEXT LINE",
        '\u{a0}' => "NO-BREAK SPACE",
        '\u{ad}' => "SOFT HYPHEN",
        '\u{1680}' => "OGHAM SPACE MARK",
        '\u{2000}' => "EN QUAD",
        '\u{2001}' => "EM QUAD",
        '\u{2002}' => "EN SPACE",
        '\u{2003}' => "EM SPACE",
        '\u{2004}' => "THREE-PER-EM SPACE",
        '\u{2005}' => "FOUR-PER-EM SPACE",
        '\u{2006}' => "SIX-PER-EM SPACE",
        '\u{2007}' => "FIGURE SPACE",
        '\u{2008}' => "PUNCTUATION SPACE",
        '\u{2009}' => "THIN SPACE",
        '\u{200a}' => "HAIR SPACE",
        '\u{200b}' => "ZERO WIDTH SPACE",
        '\u{200c}' => "ZERO WIDTH NON-JOINER",
        '\u{200d}' => "ZERO WIDTH JOINER",
        '\u{200e}' => "LEFT-TO-RIGHT MARK",
        '\u{200f}' => "RIGHT-TO-LEFT MARK",
        '\u{2028}' => "LINE SEPARATOR",
        '\u{2029}' => "PARAGRAPH SEPARATOR",
        '\u{202f}' => "NARROW NO-BREAK SPACE",
        '\u{205f}' => "MEDIUM MATHEMATICAL SPACE",
        '\u{2060}' => "WORD JOINER",
        '\u{3000}' => "IDEOGRAPHIC SPACE",
        '\u{feff}' => "ZERO WIDTH NO-BREAK SPACE",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_what_cannot_be_seen() {
        assert_eq!(describe('\u{a0}'), "U+00A0 NO-BREAK SPACE");
        assert_eq!(describe('\n'), "U+000A LINE FEED");
        assert_eq!(describe('\u{1f}'), "U+001F INFORMATION SEPARATOR ONE");
        assert_eq!(describe('\u{3000}'), "U+3000 IDEOGRAPHIC SPACE");
        assert_eq!(describe('é'), "U+00E9");
        assert_eq!(shown('x'), "`x`");
        assert_eq!(shown(' '), "U+0020 SPACE");
        assert!(is_invisible('\u{2028}') && is_invisible('\u{200b}') && !is_invisible('é'));
    }
}
