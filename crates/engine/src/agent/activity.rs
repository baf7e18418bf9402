//! What a running agent is doing, for the live views: its messages, its
//! tool calls with their status and its plans, as an adapter reads them
//! from a CLI that streams them (only `acp` does). Everything an agent
//! wrote is untrusted: each text is put on one line and made inert (no
//! escape sequence or control character acts, nothing turns text around)
//! and cut before it leaves the adapter, and an attempt sends at most
//! [`MAX_ACTIVITIES`].

use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The most activities one attempt sends; past it, one
/// [`ActivityKind::Omitted`] says how many were left out.
pub const MAX_ACTIVITIES: usize = 500;

/// The most characters of an activity's text.
pub const MAX_TEXT_CHARS: usize = 300;

/// What an activity is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActivityKind {
    /// A message of the agent (its streamed chunks joined).
    Message,
    /// A tool call: its title, and its status when the agent gave one.
    ToolCall,
    /// The agent's plan: its entries with their status.
    Plan,
    /// How many activities past [`MAX_ACTIVITIES`] were left out.
    Omitted,
}

impl ActivityKind {
    /// The name shown and stored.
    pub fn as_str(self) -> &'static str {
        match self {
            ActivityKind::Message => "message",
            ActivityKind::ToolCall => "tool_call",
            ActivityKind::Plan => "plan",
            ActivityKind::Omitted => "omitted",
        }
    }
}

/// One thing a running agent did or said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Activity {
    /// What it is about.
    pub kind: ActivityKind,
    /// Inert, at most [`MAX_TEXT_CHARS`] characters.
    pub text: String,
    /// A tool call's status (`pending`, `in_progress`, `completed`,
    /// `failed`), inert and cut like the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// Where an attempt's activities go (the run's event log; a recorder in
/// tests). Called on the thread reading the agent's output: it must be quick.
pub trait ActivitySink: Send + Sync + std::fmt::Debug {
    /// Takes one activity.
    fn activity(&self, activity: &Activity);
}

/// An attempt's activities on their way to its sink: made inert, cut,
/// and counted against [`MAX_ACTIVITIES`].
#[derive(Debug, Default)]
pub struct ActivityFeed {
    sink: Option<Arc<dyn ActivitySink>>,
    sent: usize,
    left_out: usize,
}

impl ActivityFeed {
    /// A feed into `sink`; with none, activities go nowhere.
    pub fn new(sink: Option<Arc<dyn ActivitySink>>) -> ActivityFeed {
        ActivityFeed {
            sink,
            sent: 0,
            left_out: 0,
        }
    }

    /// Sends one activity, or counts it as left out past the cap.
    pub fn push(&mut self, kind: ActivityKind, text: &str, status: Option<&str>) {
        let Some(sink) = &self.sink else {
            return;
        };
        if self.sent >= MAX_ACTIVITIES {
            self.left_out += 1;
            return;
        }
        self.sent += 1;
        sink.activity(&Activity {
            kind,
            text: shown(text),
            status: status.map(shown).filter(|s| !s.is_empty()),
        });
    }

    /// Ends the attempt's feed: says how many were left out, if any.
    pub fn finish(&mut self) {
        let Some(sink) = &self.sink else {
            return;
        };
        if self.left_out > 0 {
            let n = std::mem::take(&mut self.left_out);
            sink.activity(&Activity {
                kind: ActivityKind::Omitted,
                text: format!("{n} more left out (an attempt shows at most {MAX_ACTIVITIES})"),
                status: None,
            });
        }
    }
}

/// `text` on one line, safe to show anywhere: escape sequences (colours,
/// window titles) dropped, line breaks and tabs as spaces, runs of spaces
/// joined, every other character that would act shown as
/// [`planwright_plan::words::inert`] shows it (`\x07`, `\u{202e}`), and cut
/// to [`MAX_TEXT_CHARS`] characters (the last one `…` when cut).
fn shown(text: &str) -> String {
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let c = match c {
            '\u{1b}' => {
                skip_escape(&mut chars);
                continue;
            }
            '\n' | '\r' | '\t' => ' ',
            c => c,
        };
        if c == ' ' && (line.is_empty() || line.ends_with(' ')) {
            continue;
        }
        line.push(c);
    }
    let line = planwright_plan::words::inert(line.trim_end());
    if line.chars().count() <= MAX_TEXT_CHARS {
        return line.into_owned();
    }
    let mut cut: String = line.chars().take(MAX_TEXT_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// Skips the rest of an escape sequence: CSI (`ESC [` ... a final byte),
/// OSC (`ESC ]` ... BEL or `ESC \`), or one character after ESC.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                    break;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn text_is_made_inert_and_cut() {
        assert_eq!(
            shown("\u{1b}[1;31mred\u{1b}[0m\tx\u{7}\u{202e}y\r\n\u{1b}]0;title\u{7}z  "),
            "red x\\x07\\u{202e}y z"
        );
        let long = "a".repeat(400);
        let cut = shown(&long);
        assert_eq!(cut.chars().count(), MAX_TEXT_CHARS);
        assert!(cut.ends_with('…'));
    }

    #[derive(Debug, Default)]
    struct Recorded(Mutex<Vec<Activity>>);

    impl ActivitySink for Recorded {
        fn activity(&self, activity: &Activity) {
            self.0.lock().unwrap().push(activity.clone());
        }
    }

    #[test]
    fn past_the_cap_one_activity_says_how_many_were_left_out() {
        let sink = Arc::new(Recorded::default());
        let mut feed = ActivityFeed::new(Some(sink.clone()));
        for n in 0..MAX_ACTIVITIES + 7 {
            feed.push(ActivityKind::Message, &format!("m{n}"), None);
        }
        feed.finish();
        let got = sink.0.lock().unwrap();
        assert_eq!(got.len(), MAX_ACTIVITIES + 1);
        assert_eq!(
            got[MAX_ACTIVITIES - 1].text,
            format!("m{}", MAX_ACTIVITIES - 1)
        );
        let last = got.last().unwrap();
        assert_eq!(last.kind, ActivityKind::Omitted);
        assert_eq!(last.text, "7 more left out (an attempt shows at most 500)");
    }
}
