//! The vocabulary of the pull-request loop: issues taken in by label and
//! milestone, their links, reviews and review comments, checks, and who
//! may write.

use crate::types::IssueState;
use serde::{Deserialize, Serialize};

/// Which open issues to list: every label must be on the issue; the
/// milestone is named by its title.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssueQuery {
    /// Labels the issues must all carry (none: any).
    pub labels: Vec<String>,
    /// The milestone's title (none: any).
    pub milestone: Option<String>,
}

/// What a user may do in the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    /// Not a member, or no access.
    None,
    /// Read (GitHub's read and triage; GitLab's guest and reporter).
    Read,
    /// Push (GitHub's write and maintain; GitLab's developer).
    Write,
    /// Administer (GitHub's and Forgejo's admin and owner; GitLab's
    /// maintainer and owner).
    Admin,
}

/// A review's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewState {
    /// Approved.
    Approved,
    /// Changes requested.
    ChangesRequested,
    /// Comments without a verdict.
    Commented,
    /// Dismissed.
    Dismissed,
    /// Not submitted yet (only its author sees it).
    Pending,
}

/// A review of a pull request (GitLab: an approval).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    /// The forge's id (GitLab: the approver's user id).
    pub id: u64,
    /// Who reviewed.
    pub author: String,
    /// The verdict.
    pub state: ReviewState,
    /// The review's own text (empty when none).
    pub body: String,
    /// When it was submitted (RFC 3339; empty when the forge does not say).
    pub submitted_at: String,
}

/// A comment on a file (and line) of a pull request's diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewComment {
    /// The forge's id.
    pub id: u64,
    /// Who wrote it.
    pub author: String,
    /// Its text.
    pub body: String,
    /// The file, relative to the repository's root.
    pub path: String,
    /// The line in the new version of the file; `None` for a comment on
    /// the file or on a line that no longer exists.
    pub line: Option<u64>,
    /// When it was written (RFC 3339).
    pub created_at: String,
}

/// Where a check stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckState {
    /// Queued or running.
    Pending,
    /// Passed.
    Success,
    /// Failed (or errored, or timed out).
    Failure,
    /// Skipped, cancelled or neutral: neither passed nor failed.
    Skipped,
}

/// A check of a pull request's head commit: a GitHub check run or commit
/// status, a GitLab pipeline job, a Forgejo commit status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Its name (a status's context, a job's name).
    pub name: String,
    /// Where it stands.
    pub state: CheckState,
    /// Its page, when the forge gives one.
    pub url: Option<String>,
    /// The forge's one-line description or summary (empty when none).
    pub summary: String,
    /// The end of its log or output, where the API gives one (GitHub: a
    /// check run's output text; GitLab: a failed job's trace).
    pub log_tail: Option<String>,
}

/// How another issue is linked to an issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// The other issue blocks this one (GitLab `is_blocked_by`, a Forgejo
    /// dependency, GitHub `blocked_by`).
    BlockedBy,
    /// This issue blocks the other.
    Blocks,
    /// The other is this one's sub-issue (GitHub).
    Child,
    /// The other is this one's parent (GitHub).
    Parent,
    /// Related without an order (GitLab `relates_to`).
    Related,
}

/// An issue linked to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueLink {
    /// How it is linked.
    pub kind: LinkKind,
    /// The other issue's number.
    pub number: u64,
    /// The other issue's repository (`owner/name`) when it is not this
    /// one's.
    pub repository: Option<String>,
    /// Whether the other issue is open.
    pub state: IssueState,
}
