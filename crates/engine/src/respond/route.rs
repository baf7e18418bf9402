//! Which ticket a round runs, the forge's text its charter gets, and the
//! one reply it posts.

use super::feedback::{Item, Kind, REPLY_MARKER};
use planwright_plan::scope::Pattern;
use planwright_plan::Plan;
use std::fmt::Write;

/// The command a comment names a ticket with: `/planwright ticket ID`.
pub const TICKET_COMMAND: &str = "/planwright ticket";

/// Where a round goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// An attempt of this ticket.
    Ticket {
        /// The ticket.
        id: String,
        /// Why this one, in words.
        why: String,
    },
    /// A comment named a ticket the plan does not have: a reply says so,
    /// and nothing runs.
    NoSuchTicket(String),
}

/// The ticket a `/planwright ticket ID` line of `body` names.
fn named(body: &str) -> Option<String> {
    body.lines().find_map(|l| {
        let rest = l.trim().strip_prefix(TICKET_COMMAND)?;
        let id = rest.split_whitespace().next()?;
        Some(id.trim_matches('`').to_string())
    })
}

/// The ticket of `items`: one a comment names; else the ticket (of
/// `tickets`, the pull request's merged ones in plan order) whose scope
/// holds the most commented files, the later one on a tie; else the last
/// of `tickets`.
pub fn route(plan: &Plan, tickets: &[String], items: &[Item]) -> Route {
    if let Some(id) = items.iter().find_map(|i| named(&i.body)) {
        return match plan.ticket(&id) {
            Some(_) => Route::Ticket {
                why: format!("named with `{TICKET_COMMAND} {id}`"),
                id,
            },
            None => Route::NoSuchTicket(id),
        };
    }
    let mut best: Option<(&str, usize)> = None;
    for id in tickets {
        let Some(t) = plan.ticket(id) else { continue };
        let patterns: Vec<Pattern> = t.scope.iter().map(|e| Pattern::new(&e.pattern)).collect();
        let hits = items
            .iter()
            .filter_map(|i| i.path.as_deref())
            .filter(|p| patterns.iter().any(|pat| pat.matches(p)))
            .count();
        if hits > 0 && best.is_none_or(|(_, most)| hits >= most) {
            best = Some((id, hits));
        }
    }
    if let Some((id, _)) = best {
        return Route::Ticket {
            id: id.to_string(),
            why: "its scope holds the commented files".into(),
        };
    }
    let last = tickets.last().cloned().unwrap_or_default();
    Route::Ticket {
        id: last,
        why: "the last ticket of the run (the feedback is on no file of a ticket's scope)".into(),
    }
}

/// One item's label: what it is, by whom, where, and its page.
fn label(i: &Item) -> String {
    let what = match i.kind {
        Kind::ReviewComment => "review comment",
        Kind::Review => "review",
        Kind::Comment => "comment",
        Kind::Check => "failed check",
    };
    let mut s = what.to_string();
    if let Some(a) = &i.author {
        let _ = write!(s, " by @{a}");
    }
    if let Some(p) = &i.path {
        match i.line {
            Some(l) => {
                let _ = write!(s, " on {p}:{l}");
            }
            None => {
                let _ = write!(s, " on {p}");
            }
        }
    }
    if let Some(u) = &i.url {
        let _ = write!(s, " ({u})");
    }
    s
}

/// The forge's text a round gives its ticket's charter: each item under a
/// label naming its kind, author, file and line, and page.
pub fn evidence(items: &[Item]) -> String {
    let mut s = String::new();
    for i in items {
        let _ = writeln!(s, "--- {}:\n{}\n", label(i), i.body.trim_end());
    }
    s.trim_end().to_string()
}

/// The hidden mark of round `round`'s reply, which tells a resumed round
/// that its reply is already posted.
pub fn reply_marker(round: u32) -> String {
    format!("{REPLY_MARKER} round={round} -->")
}

/// Text from the forge or the plan as it may appear in a reply: on one
/// line, without code spans, mentions, references or HTML.
pub(super) fn inert(text: &str) -> String {
    text.replace('`', "'")
        .replace(['\n', '\r', '<', '>'], " ")
        .replace('@', "@\u{200b}")
        .replace('#', "#\u{200b}")
}

/// What a round did, for its reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The ticket merged a change, pushed to the branch.
    Changed {
        /// The ticket.
        ticket: String,
        /// The commit pushed (the merge).
        commit: String,
        /// The commits it brings, the merge last.
        commits: Vec<String>,
        /// The files it changed against what was there before.
        files: Vec<String>,
        /// The branch.
        branch: String,
    },
    /// The ticket ran and nothing changed, for this reason.
    Unchanged {
        /// The ticket, when one ran.
        ticket: Option<String>,
        /// Why, in words.
        why: String,
    },
}

/// The one reply of round `round` (of `limit`) answering `answered` items.
pub fn reply(round: u32, limit: u32, answered: usize, outcome: &Outcome) -> String {
    let mut s = format!("{}\n", reply_marker(round));
    let what = planwright_plan::words::count(answered, "item");
    let _ = writeln!(
        s,
        "planwright, round {round} of {limit}, answering {what} (comments, reviews, failed checks).\n"
    );
    match outcome {
        Outcome::Changed {
            ticket,
            commit,
            commits,
            files,
            branch,
        } => {
            let short = |c: &String| format!("`{}`", &c[..c.len().min(10)]);
            let _ = writeln!(
                s,
                "Ticket `{}` ran again and its change is pushed to `{}` as {} (commits {}). Files changed:\n",
                inert(ticket),
                inert(branch),
                short(commit),
                commits.iter().map(short).collect::<Vec<_>>().join(", ")
            );
            for f in files {
                let _ = writeln!(s, "- `{}`", inert(f));
            }
        }
        Outcome::Unchanged { ticket, why } => {
            let who = ticket
                .as_deref()
                .map_or(String::new(), |t| format!(" (ticket `{}`)", inert(t)));
            let _ = writeln!(s, "Nothing changed{who}: {}", inert(why));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        serde_json::from_value(serde_json::json!({
            "source_format": "native", "base": "main", "tickets": [
                {"id": "A", "title": "a", "body": "", "scope": [{"pattern": "a/**", "op": "any"}]},
                {"id": "B", "title": "b", "body": "", "scope": [{"pattern": "b.txt", "op": "any"}]},
                {"id": "C", "title": "c", "body": "", "scope": [{"pattern": "c.txt", "op": "any"}]}
            ]
        }))
        .unwrap()
    }

    fn on(path: Option<&str>, body: &str) -> Item {
        Item {
            kind: Kind::ReviewComment,
            key: "comment:1".into(),
            author: Some("ana".into()),
            path: path.map(String::from),
            line: Some(3),
            url: Some("https://forge.example/pr/1#discussion_r1".into()),
            body: body.into(),
            at: None,
        }
    }

    fn ids() -> Vec<String> {
        ["A", "B", "C"].map(String::from).to_vec()
    }

    #[test]
    fn a_comment_goes_to_the_ticket_whose_scope_holds_its_file() {
        let r = route(&plan(), &ids(), &[on(Some("b.txt"), "typo")]);
        assert!(
            matches!(r, Route::Ticket { ref id, .. } if id == "B"),
            "{r:?}"
        );
        let r = route(&plan(), &ids(), &[on(Some("a/x.rs"), "x"), on(None, "y")]);
        assert!(
            matches!(r, Route::Ticket { ref id, .. } if id == "A"),
            "{r:?}"
        );
    }

    #[test]
    fn no_file_goes_to_the_last_ticket_and_a_named_one_wins() {
        let r = route(&plan(), &ids(), &[on(None, "general")]);
        assert!(
            matches!(r, Route::Ticket { ref id, .. } if id == "C"),
            "{r:?}"
        );
        let r = route(
            &plan(),
            &ids(),
            &[on(Some("b.txt"), "x\n/planwright ticket A\n")],
        );
        assert!(
            matches!(r, Route::Ticket { ref id, .. } if id == "A"),
            "{r:?}"
        );
        let r = route(&plan(), &ids(), &[on(None, "/planwright ticket NOPE")]);
        assert_eq!(r, Route::NoSuchTicket("NOPE".into()));
    }

    #[test]
    fn evidence_labels_each_item_and_a_reply_is_marked_and_inert() {
        let text = evidence(&[on(Some("b.txt"), "use `@x`")]);
        assert!(
            text.starts_with("--- review comment by @ana on b.txt:3 (https://forge.example/pr/1#discussion_r1):\nuse `@x`"),
            "{text}"
        );
        let r = reply(
            2,
            3,
            1,
            &Outcome::Unchanged {
                ticket: Some("B".into()),
                why: "@ana `rm` <b>".into(),
            },
        );
        assert!(
            r.starts_with("<!-- planwright:respond round=2 -->\n"),
            "{r}"
        );
        assert!(r.contains("round 2 of 3, answering 1 item "), "{r}");
        assert!(
            r.contains("Nothing changed (ticket `B`): @\u{200b}ana 'rm'  b "),
            "{r}"
        );
    }
}
