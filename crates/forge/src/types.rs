//! The vocabulary shared by every forge: kinds, repositories, tokens, pull
//! requests, issues and comments.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Which API a forge speaks. Gitea speaks Forgejo's (`forgejo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    /// GitHub REST v3 (github.com and GitHub Enterprise Server).
    Github,
    /// GitLab REST v4 (merge requests).
    Gitlab,
    /// Forgejo and Gitea API v1 (Codeberg included).
    Forgejo,
}

impl ForgeKind {
    /// Every kind, in the order the docs list them.
    pub const ALL: [ForgeKind; 3] = [ForgeKind::Github, ForgeKind::Gitlab, ForgeKind::Forgejo];

    /// The name used in `planwright.toml`, JSON and messages.
    pub fn name(self) -> &'static str {
        match self {
            ForgeKind::Github => "github",
            ForgeKind::Gitlab => "gitlab",
            ForgeKind::Forgejo => "forgejo",
        }
    }

    /// The forge's name in prose: `GitHub`, `GitLab`, `Forgejo`.
    pub fn title(self) -> &'static str {
        match self {
            ForgeKind::Github => "GitHub",
            ForgeKind::Gitlab => "GitLab",
            ForgeKind::Forgejo => "Forgejo",
        }
    }

    /// What the forge calls a pull request ("merge request" on GitLab).
    pub fn pull_request_noun(self) -> &'static str {
        match self {
            ForgeKind::Gitlab => "merge request",
            _ => "pull request",
        }
    }

    /// What a token needs to deliver: the scopes named in 401/403 hints.
    pub fn token_scopes(self) -> &'static str {
        match self {
            ForgeKind::Github => {
                "a classic token with the `repo` scope, or a fine-grained token with \
                 Contents and Pull requests read and write (and Issues to comment)"
            }
            ForgeKind::Gitlab => "a token with the `api` scope (Developer role or higher)",
            ForgeKind::Forgejo => "a token with the `write:repository` and `write:issue` scopes",
        }
    }

    /// The kind and API URL of a well-known public host (`github.com`,
    /// `gitlab.com`, `codeberg.org`); `None` for any other host, whose kind
    /// and API URL the user must name.
    pub fn of_public_host(host: &str) -> Option<(ForgeKind, &'static str)> {
        match host.to_ascii_lowercase().as_str() {
            "github.com" | "www.github.com" => Some((ForgeKind::Github, "https://api.github.com")),
            "gitlab.com" | "www.gitlab.com" => {
                Some((ForgeKind::Gitlab, "https://gitlab.com/api/v4"))
            }
            "codeberg.org" => Some((ForgeKind::Forgejo, "https://codeberg.org/api/v1")),
            _ => None,
        }
    }
}

impl fmt::Display for ForgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ForgeKind {
    type Err = String;

    /// `github`, `gitlab`, `forgejo`, or `gitea` (which is `forgejo`).
    fn from_str(s: &str) -> Result<ForgeKind, String> {
        match s {
            "github" => Ok(ForgeKind::Github),
            "gitlab" => Ok(ForgeKind::Gitlab),
            "forgejo" | "gitea" => Ok(ForgeKind::Forgejo),
            other => Err(format!(
                "unknown forge kind `{other}`: expected `github`, `gitlab` or `forgejo` (Gitea is `forgejo`)"
            )),
        }
    }
}

/// A repository on a forge: `owner/name` (GitLab: `group/subgroup/name`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Repository(String);

impl Repository {
    /// Parses `owner/name`: two or more non-empty segments of letters,
    /// digits, `-`, `_` and `.`, none of them `.` or `..`.
    pub fn parse(text: &str) -> Result<Repository, String> {
        let segments: Vec<&str> = text.split('/').collect();
        let good = |s: &&str| {
            !s.is_empty()
                && *s != "."
                && *s != ".."
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        if segments.len() < 2 || !segments.iter().all(good) {
            return Err(format!(
                "`{text}` is not a repository: expected `owner/name` (letters, digits, `-`, `_`, `.`)"
            ));
        }
        Ok(Repository(text.to_string()))
    }

    /// The whole path, `owner/name`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Everything before the last `/`: the owner (GitLab: the namespace).
    pub fn owner(&self) -> &str {
        self.0.rsplit_once('/').map_or("", |(o, _)| o)
    }

    /// The last segment.
    pub fn name(&self) -> &str {
        self.0.rsplit_once('/').map_or(&self.0, |(_, n)| n)
    }
}

impl TryFrom<String> for Repository {
    type Error = String;
    fn try_from(s: String) -> Result<Repository, String> {
        Repository::parse(&s)
    }
}

impl From<Repository> for String {
    fn from(r: Repository) -> String {
        r.0
    }
}

impl fmt::Display for Repository {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A forge token. Sent only in the `Authorization` header (never in a URL);
/// its `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// Wraps a token read by the caller (from the variable `token_env`
    /// names).
    pub fn new(secret: impl Into<String>) -> Token {
        Token(secret.into())
    }

    /// The secret itself: for the `Authorization` header and for the git
    /// credential helper of a push, nothing else.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// Where a pull request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PullState {
    /// Open (draft or not).
    Open,
    /// Merged into its base.
    Merged,
    /// Closed without being merged.
    Closed,
}

impl PullState {
    /// `open`, `merged` or `closed`, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            PullState::Open => "open",
            PullState::Merged => "merged",
            PullState::Closed => "closed",
        }
    }
}

/// A pull request (GitLab: a merge request), as the forge reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    /// The number people type: GitHub's `number`, GitLab's `iid`,
    /// Forgejo's `number` (its index).
    pub number: u64,
    /// Its page on the forge.
    pub url: String,
    /// The title without any draft prefix (`Draft:`, `WIP:`).
    pub title: String,
    /// The description (empty when the forge has none).
    pub body: String,
    /// The branch it merges from.
    pub head: String,
    /// The branch it merges into.
    pub base: String,
    /// Open, merged or closed.
    pub state: PullState,
    /// Whether it is a draft (GitHub's `draft`; GitLab's `draft` or a
    /// `Draft:` title; Forgejo's `draft` or a `WIP:`/`Draft:` title).
    pub draft: bool,
    /// The commit its head branch points at, when the forge says.
    pub head_sha: Option<String>,
}

/// A pull request to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPullRequest {
    /// The title, without a draft prefix (the client adds the forge's own).
    pub title: String,
    /// The description (Markdown).
    pub body: String,
    /// The branch to merge from (already pushed).
    pub head: String,
    /// The branch to merge into.
    pub base: String,
    /// Open it as a draft.
    pub draft: bool,
}

/// What to change on an open pull request; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PullRequestUpdate {
    /// A new title (without a draft prefix).
    pub title: Option<String>,
    /// A new description.
    pub body: Option<String>,
    /// A new base branch.
    pub base: Option<String>,
    /// Make it a draft (`true`) or ready for review (`false`).
    pub draft: Option<bool>,
}

/// Whether an issue is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueState {
    /// Open.
    Open,
    /// Closed (for whatever reason).
    Closed,
}

/// An issue, as the forge reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    /// Its number (GitLab: `iid`).
    pub number: u64,
    /// Its page on the forge.
    pub url: String,
    /// The title.
    pub title: String,
    /// The description (empty when none).
    pub body: String,
    /// Open or closed.
    pub state: IssueState,
    /// Whether the number names a pull request, not an issue (GitHub and
    /// Forgejo number both alike; on GitLab an issue number never is one).
    pub is_pull_request: bool,
    /// The names of its labels.
    pub labels: Vec<String>,
}

/// What a comment is posted on, or read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommentOn {
    /// An issue, by number.
    Issue(u64),
    /// A pull request's conversation (not a review comment on a line).
    PullRequest(u64),
}

/// A comment in an issue's or pull request's conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    /// The forge's id of the comment.
    pub id: u64,
    /// The login of who wrote it.
    pub author: String,
    /// Its text (Markdown).
    pub body: String,
    /// When it was written, as the forge says it (RFC 3339).
    pub created_at: String,
    /// Its page on the forge, when the forge gives one.
    pub url: Option<String>,
}

/// What the forge says of the repository itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepositoryInfo {
    /// `owner/name` as the forge spells it.
    pub full_name: String,
    /// Its page on the forge.
    pub url: String,
    /// The branch pull requests go to by default.
    pub default_branch: String,
}
