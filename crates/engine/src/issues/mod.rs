//! `planwright import issues`: a native plan from a forge's open issues
//! (docs/forge.md, "Issues in"). One ticket `issue-N` per issue; edges
//! from the body's `Depends on #N` / `Blocked by #N` / `Requires #N` lines
//! and from the forge's own links; the paths the body names as scope, its
//! task list as checks. Each ticket keeps its issue in its metadata
//! (`"issue": {"number", "url", "repository"}`), which `deliver` reads to
//! write `Closes #N`.
//!
//! Every choice is written down as a [`Decision`], so `--dry-run` can say
//! which line made which edge. A blocker is never left to wait silently:
//! one that is closed is satisfied, one outside the selection that is open
//! is an error naming it, and so is a cycle.

mod labels;
mod read;

pub use labels::{
    delivered as unlabel_delivered, start as label_issues, LabelReporter, LabelWriter,
};
pub use read::{read, Named, Reading};

use planwright_forge::{Forge, ForgeError, Issue, IssueQuery, IssueState, LinkKind};
use planwright_plan::model::{ScopeEntry, Ticket};
use planwright_plan::{Format, Plan};
use serde::Serialize;
use std::collections::BTreeMap;

/// Which issues to import.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Labels every issue must carry.
    pub labels: Vec<String>,
    /// The milestone (its title).
    pub milestone: Option<String>,
    /// Only these issues (with labels or a milestone: these, which must
    /// also match them).
    pub numbers: Vec<u64>,
}

/// One reading decision: what was read from which issue, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// The issue it is about.
    pub issue: u64,
    /// What was decided, in words.
    pub text: String,
}

/// The plan and how it was read.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The native plan.
    pub plan: Plan,
    /// Every reading decision, issue by issue.
    pub decisions: Vec<Decision>,
}

/// Why an import stopped.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// No open issue matches the selection.
    #[error("no open issue of `{repository}` matches {what}")]
    NothingSelected {
        /// `owner/name`.
        repository: String,
        /// The selection in words.
        what: String,
    },
    /// `--issue N` names no issue, a pull request, a closed issue, or one
    /// outside the labels or milestone.
    #[error("issue #{number}: {why}")]
    NotSelectable {
        /// The number given.
        number: u64,
        /// Why it cannot be imported.
        why: String,
    },
    /// An open blocker outside the selection: its ticket would wait forever.
    #[error(
        "issue #{issue} is blocked by {blocker}, which is open and not imported ({source_of_edge})"
    )]
    OutsideBlocker {
        /// The blocked issue.
        issue: u64,
        /// The blocker (`#N`, or `owner/name#N` for another repository's).
        blocker: String,
        /// What made the edge (the line, or the forge's link).
        source_of_edge: String,
    },
    /// A blocker that names no issue of the repository.
    #[error("issue #{issue} names #{blocker} as a blocker ({line}), but the repository has no such issue")]
    NoSuchBlocker {
        /// The blocked issue.
        issue: u64,
        /// The number named.
        blocker: u64,
        /// The line.
        line: String,
    },
    /// The issues block one another in a circle.
    #[error("the issues block one another in a cycle: {0}")]
    Cycle(String),
    /// The forge's API failed.
    #[error(transparent)]
    Forge(#[from] ForgeError),
}

impl ImportError {
    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            ImportError::NothingSelected { .. } => Some("check the label and milestone names on the forge, or name the issues to import by number".into()),
            ImportError::NotSelectable { .. } => Some("name open issues (not pull requests) of the repository".into()),
            ImportError::OutsideBlocker { blocker, .. } => Some(format!(
                "import {blocker} too (give it the label, or name it by number), close it if it is done, or remove the dependency from the issue"
            )),
            ImportError::NoSuchBlocker { .. } => Some("fix the issue number in the issue's body".into()),
            ImportError::Cycle(_) => Some("remove one of these dependencies on the forge (a body line or a link), then import again".into()),
            ImportError::Forge(e) => e.hint(),
        }
    }
}

/// Imports the issues `selection` names from `forge`, onto `base`.
pub fn import(
    forge: &dyn Forge,
    selection: &Selection,
    base: &str,
) -> Result<Imported, ImportError> {
    let issues = select(forge, selection)?;
    let numbers: Vec<u64> = issues.iter().map(|i| i.number).collect();
    let mut decisions = Vec::new();
    let mut edges: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let mut readings = BTreeMap::new();
    for issue in &issues {
        let reading = read(&issue.body);
        let mut blockers = body_blockers(forge, issue, &reading, &numbers, &mut decisions)?;
        for b in link_blockers(forge, issue, &numbers, &mut decisions)? {
            if !blockers.contains(&b) {
                blockers.push(b);
            }
        }
        edges.insert(issue.number, blockers);
        readings.insert(issue.number, reading);
    }
    if let Some(cycle) = find_cycle(&edges) {
        return Err(ImportError::Cycle(cycle));
    }
    let repository = forge.repository().as_str().to_string();
    let tickets = issues
        .iter()
        .map(|issue| {
            ticket(
                issue,
                &readings[&issue.number],
                &edges[&issue.number],
                &repository,
                &mut decisions,
            )
        })
        .collect();
    let mut plan = Plan::new(Format::Native, tickets);
    plan.base = base.to_string();
    plan.repo = Some(repository);
    let title = match &issues[..] {
        [one] => one.title.clone(),
        many => format!(
            "Issues {}",
            many.iter()
                .map(|i| format!("#{}", i.number))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    plan.metadata.insert("title".into(), title.into());
    decisions.sort_by_key(|d| d.issue);
    Ok(Imported { plan, decisions })
}

/// The open issues the selection names, by number.
fn select(forge: &dyn Forge, s: &Selection) -> Result<Vec<Issue>, ImportError> {
    let filtered = !s.labels.is_empty() || s.milestone.is_some();
    let mut issues = if filtered || s.numbers.is_empty() {
        forge.issues(&IssueQuery {
            labels: s.labels.clone(),
            milestone: s.milestone.clone(),
        })?
    } else {
        Vec::new()
    };
    if !s.numbers.is_empty() {
        let mut chosen = Vec::new();
        for &n in &s.numbers {
            if let Some(i) = issues.iter().find(|i| i.number == n) {
                chosen.push(i.clone());
                continue;
            }
            chosen.push(one_issue(forge, n, filtered)?);
        }
        issues = chosen;
    }
    issues.sort_by_key(|i| i.number);
    issues.dedup_by_key(|i| i.number);
    if issues.is_empty() {
        return Err(ImportError::NothingSelected {
            repository: forge.repository().as_str().to_string(),
            what: selection_words(s),
        });
    }
    Ok(issues)
}

/// `--issue N` read alone: it must be an open issue (and, with labels or a
/// milestone, it was not among those that match them).
fn one_issue(forge: &dyn Forge, n: u64, filtered: bool) -> Result<Issue, ImportError> {
    let why = |why: &str| ImportError::NotSelectable {
        number: n,
        why: why.into(),
    };
    match forge.issue(n)? {
        None => Err(why("the repository has no such issue")),
        Some(i) if i.is_pull_request => Err(why("it is a pull request, not an issue")),
        Some(i) if i.state == IssueState::Closed => Err(why("it is closed")),
        Some(_) if filtered => Err(why("it does not carry the labels or milestone asked for")),
        Some(i) => Ok(i),
    }
}

fn selection_words(s: &Selection) -> String {
    let mut parts = Vec::new();
    if !s.labels.is_empty() {
        parts.push(format!(
            "the labels {}",
            s.labels
                .iter()
                .map(|l| format!("`{l}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(m) = &s.milestone {
        parts.push(format!("the milestone `{m}`"));
    }
    if parts.is_empty() {
        "the selection (it has no open issue)".into()
    } else {
        parts.join(" and ")
    }
}

/// The blockers the body's lines name: an edge to one in the selection, a
/// closed one satisfied, an open one outside the selection an error.
fn body_blockers(
    forge: &dyn Forge,
    issue: &Issue,
    reading: &Reading,
    selected: &[u64],
    decisions: &mut Vec<Decision>,
) -> Result<Vec<u64>, ImportError> {
    let n = issue.number;
    let mut edges = Vec::new();
    for named in &reading.blockers {
        let b = named.number;
        if b == n {
            decisions.push(Decision {
                issue: n,
                text: format!("ignored `{}`: an issue does not block itself", named.line),
            });
            continue;
        }
        if selected.contains(&b) {
            decisions.push(Decision {
                issue: n,
                text: format!("`{}` → issue-{n} depends on issue-{b}", named.line),
            });
            edges.push(b);
            continue;
        }
        match forge.issue(b)? {
            Some(other) if other.state == IssueState::Closed => decisions.push(Decision {
                issue: n,
                text: format!("`{}` → #{b} is closed: satisfied, no edge", named.line),
            }),
            Some(_) => {
                return Err(ImportError::OutsideBlocker {
                    issue: n,
                    blocker: format!("#{b}"),
                    source_of_edge: format!("the line `{}`", named.line),
                })
            }
            None => {
                return Err(ImportError::NoSuchBlocker {
                    issue: n,
                    blocker: b,
                    line: named.line.clone(),
                })
            }
        }
    }
    Ok(edges)
}

/// The blockers the forge's own links name: blocked-by links and (GitHub)
/// sub-issues, which their parent waits for; and the issues of the
/// selection this one blocks or is a sub-issue of, which wait for it and
/// are written down on their side.
fn link_blockers(
    forge: &dyn Forge,
    issue: &Issue,
    selected: &[u64],
    decisions: &mut Vec<Decision>,
) -> Result<Vec<u64>, ImportError> {
    let n = issue.number;
    let mut edges = Vec::new();
    for link in forge.issue_links(n)? {
        let (verb, waits) = match link.kind {
            LinkKind::BlockedBy => ("is blocked by", true),
            LinkKind::Child => ("has the sub-issue", true),
            LinkKind::Blocks | LinkKind::Parent | LinkKind::Related => continue,
        };
        let shown = match &link.repository {
            Some(r) => format!("{r}#{}", link.number),
            None => format!("#{}", link.number),
        };
        let here = link.repository.is_none();
        if here && selected.contains(&link.number) {
            decisions.push(Decision {
                issue: n,
                text: format!(
                    "the forge's link ({verb} {shown}) → issue-{n} depends on issue-{}",
                    link.number
                ),
            });
            if waits && !edges.contains(&link.number) {
                edges.push(link.number);
            }
        } else if link.state == IssueState::Closed {
            decisions.push(Decision {
                issue: n,
                text: format!("the forge's link ({verb} {shown}) → closed: satisfied, no edge"),
            });
        } else {
            return Err(ImportError::OutsideBlocker {
                issue: n,
                blocker: shown.clone(),
                source_of_edge: format!("the forge's link: #{n} {verb} {shown}"),
            });
        }
    }
    Ok(edges)
}

/// A cycle of `edges` (issue → its blockers), as `#1 → #2 → #1`.
fn find_cycle(edges: &BTreeMap<u64, Vec<u64>>) -> Option<String> {
    // 0: not seen, 1: on the path, 2: done.
    let mut mark: BTreeMap<u64, u8> = BTreeMap::new();
    for &start in edges.keys() {
        let mut path = Vec::new();
        if let Some(c) = visit(start, edges, &mut mark, &mut path) {
            return Some(c);
        }
    }
    None
}

fn visit(
    n: u64,
    edges: &BTreeMap<u64, Vec<u64>>,
    mark: &mut BTreeMap<u64, u8>,
    path: &mut Vec<u64>,
) -> Option<String> {
    match mark.get(&n) {
        Some(2) => return None,
        Some(1) => {
            let from = path.iter().position(|&p| p == n).unwrap_or(0);
            let mut cycle: Vec<String> = path[from..].iter().map(|p| format!("#{p}")).collect();
            cycle.push(format!("#{n}"));
            return Some(cycle.join(" is blocked by "));
        }
        _ => {}
    }
    mark.insert(n, 1);
    path.push(n);
    for &b in edges.get(&n).into_iter().flatten() {
        if let Some(c) = visit(b, edges, mark, path) {
            return Some(c);
        }
    }
    path.pop();
    mark.insert(n, 2);
    None
}

fn ticket(
    issue: &Issue,
    reading: &Reading,
    blockers: &[u64],
    repository: &str,
    decisions: &mut Vec<Decision>,
) -> Ticket {
    let n = issue.number;
    for p in &reading.paths {
        decisions.push(Decision {
            issue: n,
            text: format!("scope: `{p}` (named in the body)"),
        });
    }
    if reading.paths.is_empty() {
        decisions.push(Decision {
            issue: n,
            text: "scope: none named in the body (the whole repository, `**`)".into(),
        });
    }
    for t in &reading.tasks {
        decisions.push(Decision {
            issue: n,
            text: format!("check: {t} (from the task list)"),
        });
    }
    let body = if issue.body.trim().is_empty() {
        issue.title.clone()
    } else {
        issue.body.clone()
    };
    let mut t = Ticket::new(format!("issue-{n}"), body);
    t.title = issue.title.clone();
    t.scope = reading.paths.iter().map(ScopeEntry::any).collect();
    t.depends_on = blockers.iter().map(|b| format!("issue-{b}")).collect();
    t.checks = reading.tasks.clone();
    t.metadata.insert(
        ISSUE_KEY.into(),
        serde_json::json!({ "number": n, "url": issue.url, "repository": repository }),
    );
    t
}

/// The ticket metadata key that holds the ticket's issue.
pub const ISSUE_KEY: &str = "issue";

/// The issue a ticket was imported from (its metadata's `issue`).
pub fn ticket_issue(t: &Ticket) -> Option<planwright_plan::delivery::IssueRef> {
    let issue = t.metadata.get(ISSUE_KEY)?;
    Some(planwright_plan::delivery::IssueRef {
        number: issue.get("number")?.as_u64()?,
        repository: issue
            .get("repository")
            .and_then(|r| r.as_str())
            .map(String::from),
    })
}
