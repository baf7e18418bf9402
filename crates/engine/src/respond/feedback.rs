//! What a round answers on one pull request: review comments on files,
//! review bodies, comments in its conversation and failed checks of its
//! head, less what was answered before, planwright's own text, and
//! authors who may not ask for work.

use planwright_forge::{
    CheckState, CommentOn, Forge, ForgeError, ForgeKind, Permission, PullRequest, ReviewState,
};
use std::collections::HashMap;

/// The hidden mark every reply of `respond` starts with; text holding it
/// (or any other mark of planwright's, `<!-- planwright:`) is planwright's
/// own and never answered.
pub const REPLY_MARKER: &str = "<!-- planwright:respond";

/// What kind of text an [`Item`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A comment on a file (and line) of the diff.
    ReviewComment,
    /// A review's own text.
    Review,
    /// A comment in the pull request's conversation.
    Comment,
    /// A failed check of the head commit.
    Check,
}

/// One piece of feedback from the forge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// What it is.
    pub kind: Kind,
    /// The key it is remembered by once answered: `comment:ID`,
    /// `review:ID`, `note:ID`, `check:NAME@SHA`.
    pub key: String,
    /// Who wrote it (a check: none).
    pub author: Option<String>,
    /// The file it is on, when it is on one.
    pub path: Option<String>,
    /// The line, when it is on one.
    pub line: Option<u64>,
    /// Its page on the forge, when known.
    pub url: Option<String>,
    /// Its text (a check: its name, summary and log tail).
    pub body: String,
    /// When it was written (seconds since the epoch), when the forge says.
    pub at: Option<u64>,
}

/// Why something on the pull request is not answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The key of what was skipped.
    pub key: String,
    /// Why, in words.
    pub why: String,
}

/// The feedback of one pull request a round may answer.
#[derive(Debug, Clone, Default)]
pub struct Pending {
    /// What is new and allowed, oldest first.
    pub items: Vec<Item>,
    /// What was left out, and why (answered items are not listed).
    pub skipped: Vec<Skipped>,
}

impl Pending {
    /// When the newest comment or review (checks aside) was written.
    pub fn newest(&self) -> Option<u64> {
        self.items
            .iter()
            .filter(|i| i.kind != Kind::Check)
            .filter_map(|i| i.at)
            .max()
    }
}

/// Who may ask for work: `[respond] authors`, else users with write
/// permission; asked of the forge once per login per round.
pub struct Authors<'a> {
    forge: &'a dyn Forge,
    listed: &'a [String],
    login: String,
    known: HashMap<String, bool>,
}

impl<'a> Authors<'a> {
    /// The allowlist `listed` (empty: write permission), and planwright's
    /// own `login`.
    pub fn new(forge: &'a dyn Forge, listed: &'a [String], login: String) -> Authors<'a> {
        Authors {
            forge,
            listed,
            login,
            known: HashMap::new(),
        }
    }

    /// Why `author` is not answered, or `None` when it is.
    fn refuse(&mut self, author: &str) -> Result<Option<String>, ForgeError> {
        if author.eq_ignore_ascii_case(&self.login) {
            return Ok(Some("planwright's own".into()));
        }
        if !self.listed.is_empty() {
            let listed = self.listed.iter().any(|l| l.eq_ignore_ascii_case(author));
            return Ok((!listed).then(|| format!("@{author} is not in `[respond] authors`")));
        }
        if is_bot(author) {
            return Ok(Some(format!(
                "@{author} is a bot (list it in `[respond] authors` to answer it)"
            )));
        }
        let key = author.to_ascii_lowercase();
        let allowed = match self.known.get(&key) {
            Some(a) => *a,
            None => {
                let a = self.forge.permission(author)? >= Permission::Write;
                self.known.insert(key, a);
                a
            }
        };
        Ok((!allowed).then(|| format!("@{author} has no write permission")))
    }
}

/// Whether a login is a bot's by its name (`name[bot]`, `name-bot`).
fn is_bot(login: &str) -> bool {
    let l = login.to_ascii_lowercase();
    l.ends_with("[bot]") || l.ends_with("-bot") || l.ends_with("_bot")
}

/// Whether a text is planwright's own (a reply, a delivery's comment).
fn planwrights(body: &str) -> bool {
    body.contains("<!-- planwright:")
}

/// The page of a comment on the diff, from the pull request's page.
fn review_comment_url(kind: ForgeKind, pull: &PullRequest, id: u64) -> String {
    match kind {
        ForgeKind::Github => format!("{}#discussion_r{id}", pull.url),
        ForgeKind::Gitlab => format!("{}#note_{id}", pull.url),
        ForgeKind::Forgejo => format!("{}/files#issuecomment-{id}", pull.url),
    }
}

/// Everything on `pull` a round may answer: new since `answered` (the keys
/// of earlier rounds), not planwright's own, by an allowed author.
pub fn pending(
    forge: &dyn Forge,
    pull: &PullRequest,
    answered: &[String],
    authors: &mut Authors,
) -> Result<Pending, ForgeError> {
    let mut found = Vec::new();
    for c in forge.review_comments(pull.number)? {
        found.push(Item {
            kind: Kind::ReviewComment,
            key: format!("comment:{}", c.id),
            url: Some(review_comment_url(forge.kind(), pull, c.id)),
            author: Some(c.author),
            path: Some(c.path),
            line: c.line,
            body: c.body,
            at: crate::clock::parse_unix(&c.created_at),
        });
    }
    for r in forge.reviews(pull.number)? {
        let answerable = matches!(
            r.state,
            ReviewState::ChangesRequested | ReviewState::Commented
        );
        if !answerable || r.body.trim().is_empty() {
            continue;
        }
        found.push(Item {
            kind: Kind::Review,
            key: format!("review:{}", r.id),
            url: (forge.kind() == ForgeKind::Github)
                .then(|| format!("{}#pullrequestreview-{}", pull.url, r.id)),
            author: Some(r.author),
            path: None,
            line: None,
            body: r.body,
            at: crate::clock::parse_unix(&r.submitted_at),
        });
    }
    for c in forge.comments(CommentOn::PullRequest(pull.number))? {
        found.push(Item {
            kind: Kind::Comment,
            key: format!("note:{}", c.id),
            url: c.url,
            author: Some(c.author),
            path: None,
            line: None,
            body: c.body,
            at: crate::clock::parse_unix(&c.created_at),
        });
    }
    let sha = pull.head_sha.clone().unwrap_or_default();
    for c in forge.checks(pull.number)? {
        if c.state != CheckState::Failure {
            continue;
        }
        let mut body = format!("check `{}` failed", c.name);
        if !c.summary.trim().is_empty() {
            body.push_str(&format!(": {}", c.summary.trim()));
        }
        if let Some(log) = c.log_tail.as_deref().filter(|l| !l.trim().is_empty()) {
            body.push_str(&format!("\n\nThe end of its log:\n{}", log.trim_end()));
        }
        found.push(Item {
            kind: Kind::Check,
            key: format!("check:{}@{sha}", c.name),
            author: None,
            path: None,
            line: None,
            url: c.url,
            body,
            at: None,
        });
    }
    let mut out = Pending::default();
    for item in found {
        if answered.contains(&item.key) {
            continue;
        }
        let why = match &item.author {
            _ if planwrights(&item.body) => Some("planwright's own".to_string()),
            Some(author) => authors.refuse(author)?,
            None => None,
        };
        match why {
            Some(why) => out.skipped.push(Skipped { key: item.key, why }),
            None => out.items.push(item),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bots_are_told_by_their_names() {
        assert!(is_bot("dependabot[bot]") && is_bot("renovate-bot") && is_bot("lint_bot"));
        assert!(!is_bot("ana") && !is_bot("abbot"));
    }

    #[test]
    fn the_newest_is_of_comments_not_checks() {
        let item = |kind, at| Item {
            kind,
            key: String::new(),
            author: None,
            path: None,
            line: None,
            url: None,
            body: String::new(),
            at,
        };
        let p = Pending {
            items: vec![
                item(Kind::ReviewComment, Some(10)),
                item(Kind::Comment, Some(30)),
                item(Kind::Check, Some(99)),
            ],
            skipped: vec![],
        };
        assert_eq!(p.newest(), Some(30));
    }
}
