//! What a plan says about its delivery to a forge: the pull request's
//! title and lead paragraph, the issue it is for, and whether it delivers
//! all of it. The formats keep these in `metadata` (codeboost `issue` and
//! `summary`; standard_v1 `summary`, `ticket_reference`, `delivery` and
//! `remaining_scope`; a native plan's `title`); this reads them in one
//! place.

use crate::model::Plan;
use serde_json::Value;

/// An issue a plan names: `#N` of the repository delivered to, or of
/// another one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueRef {
    /// `owner/name` when the plan names the repository; `None` for "the
    /// repository delivered to" (a codeboost plan).
    pub repository: Option<String>,
    /// The issue's number.
    pub number: u64,
}

impl IssueRef {
    /// Whether it is an issue of `repository` (`owner/name`).
    pub fn is_in(&self, repository: &str) -> bool {
        self.repository
            .as_deref()
            .is_none_or(|r| r.eq_ignore_ascii_case(repository))
    }

    /// How a pull request on `repository` names it: `#N`, or
    /// `owner/name#N` for another repository's.
    pub fn shown_from(&self, repository: &str) -> String {
        match &self.repository {
            Some(r) if !self.is_in(repository) => format!("{r}#{}", self.number),
            _ => format!("#{}", self.number),
        }
    }
}

/// The delivery facts of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryFacts {
    /// The pull request's title: the plan's summary (its first line), a
    /// native plan's title, else the first ticket's title.
    pub title: String,
    /// The lead paragraph: the plan's summary, when it has one.
    pub summary: Option<String>,
    /// The issue the plan is for.
    pub issue: Option<IssueRef>,
    /// standard_v1 `delivery: partial`: the pull request only refers to the
    /// issue, and `remaining_scope` is posted on it at merge.
    pub partial: bool,
    /// What the issue still needs after a partial delivery.
    pub remaining_scope: Option<String>,
    /// Whether the plan is a codeboost plan, whose `issue` must exist in
    /// the repository delivered to.
    pub codeboost: bool,
}

impl DeliveryFacts {
    /// Reads them from `plan`.
    pub fn of(plan: &Plan) -> DeliveryFacts {
        let meta = &plan.metadata;
        let text = |k: &str| {
            meta.get(k)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
        };
        let summary = text("summary");
        let first_ticket = plan.tickets.first().map(|t| {
            if t.title.trim().is_empty() {
                t.id.clone()
            } else {
                t.title.trim().to_string()
            }
        });
        let title = summary
            .as_deref()
            .and_then(|s| s.lines().next())
            .map(|s| s.trim().to_string())
            .or_else(|| text("title"))
            .or(first_ticket)
            .unwrap_or_else(|| "planwright run".into());
        let codeboost = plan.source_format == crate::Format::Codeboost;
        let issue = if codeboost {
            meta.get("issue").and_then(Value::as_u64).map(|number| IssueRef {
                repository: None,
                number,
            })
        } else {
            meta.get("ticket_reference").and_then(ticket_reference)
        };
        DeliveryFacts {
            title,
            summary,
            issue,
            partial: text("delivery").as_deref() == Some("partial"),
            remaining_scope: text("remaining_scope"),
            codeboost,
        }
    }
}

/// A standard_v1 `ticket_reference` of a GitHub issue: its `id`
/// (`owner/name#N`), else its `url` (`.../owner/name/issues/N`, GitLab's
/// `.../-/issues/N` too).
fn ticket_reference(r: &Value) -> Option<IssueRef> {
    let from_id = r.get("id").and_then(Value::as_str).and_then(|id| {
        let (repo, n) = id.trim().rsplit_once('#')?;
        let number = n.parse().ok()?;
        let repository = (!repo.is_empty()).then(|| repo.to_string());
        Some(IssueRef { repository, number })
    });
    from_id.or_else(|| {
        let url = r.get("url").and_then(Value::as_str)?;
        let path = url.split_once("://")?.1.split_once('/')?.1;
        let (repo, n) = path.trim_end_matches('/').rsplit_once("/issues/")?;
        let number = n.parse().ok()?;
        let repo = repo.trim_end_matches("/-");
        repo.contains('/').then(|| IssueRef {
            repository: Some(repo.to_string()),
            number,
        })
    })
}

/// Text written by an agent or a plan, made safe for a pull request or an
/// issue comment: no HTML ([`crate::words::markdown_text`]), no mention
/// (`@name`), no issue or merge-request reference (`#12`, `!3`) and no
/// closing keyword (`Closes`, `Fixes`, `Resolves`) that could act on the
/// forge, no link or image, no table cell border. A zero-width space
/// (U+200B) after `@`, `#` and `!` and inside each keyword keeps the text
/// readable while the forge no longer reads it as a command.
pub fn forge_text(text: &str) -> String {
    const ZWSP: char = '\u{200b}';
    let text = crate::words::markdown_text(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '@' | '#' | '!' => {
                out.push(c);
                out.push(ZWSP);
            }
            '[' | ']' | '|' | '`' | '*' | '_' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    // `Closes https://forge/o/n/issues/1` names no `#`: break the keyword.
    let mut result = String::with_capacity(out.len());
    let mut word = String::new();
    let flush = |word: &mut String, result: &mut String| {
        let lower = word.to_ascii_lowercase();
        let keyword = ["close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves", "resolved", "implement", "implements"];
        if keyword.contains(&lower.as_str()) {
            let (head, tail) = word.split_at(2);
            result.push_str(head);
            result.push(ZWSP);
            result.push_str(tail);
        } else {
            result.push_str(word);
        }
        word.clear();
    };
    for c in out.chars() {
        if c.is_ascii_alphabetic() {
            word.push(c);
        } else {
            flush(&mut word, &mut result);
            result.push(c);
        }
    }
    flush(&mut word, &mut result);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Format, Ticket};
    use serde_json::json;

    fn plan(format: Format, meta: Value) -> Plan {
        let mut p = Plan::new(format, vec![Ticket::new("t1", "b")]);
        p.metadata = meta.as_object().unwrap().clone();
        p
    }

    #[test]
    fn codeboost_names_an_issue_of_the_repository_delivered_to() {
        let f = DeliveryFacts::of(&plan(Format::Codeboost, json!({"issue": 7, "summary": "Fix it\nmore"})));
        assert_eq!(f.title, "Fix it");
        assert_eq!(f.issue.as_ref().unwrap().shown_from("o/n"), "#7");
        assert!(f.codeboost && !f.partial);
    }

    #[test]
    fn standard_v1_names_its_issue_by_id_or_url() {
        let meta = json!({"summary": "S", "delivery": "partial", "remaining_scope": "the rest",
            "ticket_reference": {"type": "github_issue", "id": "acme/app#12", "url": "https://github.com/acme/app/issues/12"}});
        let f = DeliveryFacts::of(&plan(Format::StandardV1, meta));
        let issue = f.issue.unwrap();
        assert_eq!((issue.shown_from("Acme/App"), issue.shown_from("acme/other")), ("#12".into(), "acme/app#12".into()));
        assert!(f.partial);
        assert_eq!(f.remaining_scope.as_deref(), Some("the rest"));
        let by_url = json!({"ticket_reference": {"id": "ENG-1", "url": "https://gitlab.example.com/g/app/-/issues/3"}});
        let issue = DeliveryFacts::of(&plan(Format::StandardV1, by_url)).issue.unwrap();
        assert_eq!((issue.repository.as_deref(), issue.number), (Some("g/app"), 3));
        let none = DeliveryFacts::of(&plan(Format::StandardV1, json!({"ticket_reference": {"id": "X", "url": "https://x/y"}})));
        assert!(none.issue.is_none());
    }

    #[test]
    fn text_from_agents_cannot_mention_close_link_or_inject_html() {
        let t = forge_text("@admin Closes #4, fixes o/n#5 and resolves https://x/o/n/issues/6 <img src=x> [a](b) | !7");
        for bad in ["@admin", "Closes", "#4", "fixes", "resolves", "<img", "[a](b)", "!7", " | "] {
            assert!(!t.contains(bad), "{bad} in {t}");
        }
        assert!(t.contains("&lt;img src=x&gt;"), "{t}");
        assert_eq!(forge_text("plain words, closet"), "plain words, closet");
    }

    #[test]
    fn other_plans_take_their_title_or_their_first_tickets() {
        let f = DeliveryFacts::of(&plan(Format::Agb, json!({})));
        assert_eq!((f.title.as_str(), f.issue, f.summary), ("t1", None, None));
        let f = DeliveryFacts::of(&plan(Format::Native, json!({"title": "Native"})));
        assert_eq!(f.title, "Native");
    }
}
