//! What a fake forge keeps, shared by the three APIs: repositories, their
//! branches, issues and pull requests (one numbering on GitHub and
//! Forgejo, two on GitLab), comments; and the answers every API gives
//! alike (faults, 401, pages).

use super::server::{Incoming, Outgoing};
use super::{Api, Fault, ForgeRequest, TOKEN};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How two issues are linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// The first blocks the second.
    Blocks,
    /// The first is the second's parent (GitHub's sub-issues).
    Parent,
    /// Related, no order (GitLab's `relates_to`).
    Relates,
}

/// A pull request (merge request) as the fake keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakePull {
    /// Its number (GitLab: its `iid`).
    pub number: u64,
    /// The title as stored (with any draft prefix the client wrote).
    pub title: String,
    /// The description.
    pub body: String,
    /// The branch it merges from.
    pub head: String,
    /// The branch it merges into.
    pub base: String,
    /// Open (not merged, not closed).
    pub open: bool,
    /// Merged.
    pub merged: bool,
    /// GitHub's own draft flag (the other two read the title's prefix).
    pub draft: bool,
}

/// A comment as the fake keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeComment {
    /// Its id (unique in the fake).
    pub id: u64,
    /// Who wrote it.
    pub author: String,
    /// Its text.
    pub body: String,
    /// GitLab's system note ("changed the description"), not a comment.
    pub system: bool,
    /// When, as the API shows it.
    pub created_at: String,
}

/// A review's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Approve (GitLab: an approval).
    Approve,
    /// Request changes (GitLab shows nothing of it but its comments).
    RequestChanges,
    /// Comment only.
    Comment,
}

/// A review as the fake keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeReview {
    /// Its id.
    pub id: u64,
    /// Who reviewed.
    pub author: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The review's text.
    pub body: String,
    /// When.
    pub submitted_at: String,
}

/// A comment on a file and line of a pull request's diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeReviewComment {
    /// Its id.
    pub id: u64,
    /// The review it belongs to.
    pub review_id: u64,
    /// Who wrote it.
    pub author: String,
    /// The file.
    pub path: String,
    /// The line in the new file (`None`: on the file, or outdated).
    pub line: Option<u64>,
    /// Its text.
    pub body: String,
    /// When.
    pub created_at: String,
}

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Passed.
    Success,
    /// Failed.
    Failure,
    /// Still running.
    Pending,
}

/// A check of a pull request's head: a GitHub check run, a job of
/// GitLab's pipeline, a Forgejo commit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeCheck {
    /// Its id (later checks have higher ones).
    pub id: u64,
    /// Its name.
    pub name: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Its one-line summary.
    pub summary: String,
    /// Its log (GitHub: the output text; GitLab: the job's trace).
    pub log: String,
    /// A commit status rather than a check run (GitHub tells the two
    /// apart; GitLab and Forgejo show every check their one way).
    pub commit_status: bool,
}

/// An issue, or a pull request (which GitHub and Forgejo also list as an
/// issue of the same number).
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub author: String,
    pub open: bool,
    pub labels: Vec<String>,
    pub milestone: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// Set for a pull request.
    pub pull: Option<PullPart>,
    pub comments: Vec<FakeComment>,
    pub reviews: Vec<FakeReview>,
    pub review_comments: Vec<FakeReviewComment>,
    pub checks: Vec<FakeCheck>,
}

#[derive(Debug, Clone)]
pub(crate) struct PullPart {
    pub head: String,
    pub base: String,
    pub merged: bool,
    pub draft: bool,
    /// The head branch's commit when the pull request was opened (read
    /// from the bare repository when there is one).
    pub head_sha: String,
}

/// A repository on the fake.
#[derive(Debug)]
pub(crate) struct Repo {
    pub id: u64,
    pub full_name: String,
    pub default_branch: String,
    branches: Vec<String>,
    /// A bare repository whose branches also count.
    pub bare: Option<PathBuf>,
    pub issues: BTreeMap<u64, Item>,
    /// GitLab's merge requests (numbered apart); the others keep pull
    /// requests in `issues`.
    pub merge_requests: BTreeMap<u64, Item>,
    separate: bool,
    /// The repository's labels; a label's id is its place, from 1.
    pub labels: Vec<String>,
    /// Milestone titles; a milestone's number is its place, from 1.
    pub milestones: Vec<String>,
    /// Collaborators and their permission in GitHub's words (`admin`,
    /// `maintain`, `write`, `triage`, `read`).
    pub collaborators: Vec<(String, String)>,
    /// `(a, b, kind)`: issue `a` blocks `b` (`Link::Blocks`) or is `b`'s
    /// parent (`Link::Parent`), or they relate (`Link::Relates`).
    pub links: Vec<(u64, u64, Link)>,
    clock: u64,
    next_comment: u64,
}

/// 2026-01-01T00:00:00Z, where the fake's clock starts.
pub const CLOCK_START: u64 = 1_767_225_600;

/// A fixed, increasing time: the fake's clock is a counter of seconds
/// from [`CLOCK_START`].
fn stamp(n: u64) -> String {
    planwright_engine::clock::format_unix(CLOCK_START + n)
}

impl Repo {
    fn tick(&mut self) -> String {
        self.clock += 1;
        stamp(self.clock)
    }

    /// Sets the clock to `unix` (seconds since the epoch), so that what
    /// follows is stamped from then on.
    pub fn set_clock(&mut self, unix: u64) {
        self.clock = unix.saturating_sub(CLOCK_START);
    }

    pub fn add_branch(&mut self, branch: &str) {
        if !self.branches.iter().any(|b| b == branch) {
            self.branches.push(branch.to_string());
        }
    }

    /// Whether the branch exists: told, or in the bare repository.
    pub fn has_branch(&self, branch: &str) -> bool {
        if self.branches.iter().any(|b| b == branch) {
            return true;
        }
        let Some(git_dir) = &self.bare else {
            return false;
        };
        std::process::Command::new("git")
            .arg("--git-dir")
            .arg(git_dir)
            .args(["rev-parse", "--verify", "--quiet"])
            .arg(format!("refs/heads/{branch}"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// The commit a branch points at in the bare repository; a made-up one
    /// for a branch the fake was told of.
    pub fn branch_sha(&self, branch: &str) -> String {
        let Some(git_dir) = &self.bare else {
            return format!("{:040x}", branch.len() as u64 * 7919);
        };
        std::process::Command::new("git")
            .arg("--git-dir")
            .arg(git_dir)
            .args(["rev-parse", "--verify", "--quiet"])
            .arg(format!("refs/heads/{branch}"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    }

    fn next_number(&self, pull: bool) -> u64 {
        let map = if pull && self.separate {
            &self.merge_requests
        } else {
            &self.issues
        };
        map.keys().max().map_or(1, |n| n + 1)
    }

    pub fn add_issue(&mut self, title: &str, body: &str, author: &str) -> u64 {
        let number = self.next_number(false);
        let now = self.tick();
        self.issues
            .insert(number, item(number, title, body, author, &now, None));
        number
    }

    pub fn add_pull(&mut self, title: &str, body: &str, author: &str, pull: PullPart) -> u64 {
        let number = self.next_number(true);
        let now = self.tick();
        let item = item(number, title, body, author, &now, Some(pull));
        if self.separate {
            self.merge_requests.insert(number, item);
        } else {
            self.issues.insert(number, item);
        }
        number
    }

    /// The issue (not a pull request) or pull request `number`.
    pub fn issue_mut(&mut self, number: u64) -> &mut Item {
        self.issues
            .get_mut(&number)
            .unwrap_or_else(|| panic!("the fake has no issue {number}"))
    }

    pub fn pull_mut(&mut self, number: u64) -> &mut PullPart {
        let map = if self.separate {
            &mut self.merge_requests
        } else {
            &mut self.issues
        };
        let item = map.get_mut(&number);
        item.and_then(|i| i.pull.as_mut())
            .unwrap_or_else(|| panic!("the fake has no pull request {number}"))
    }

    /// Every pull request, by number.
    pub fn pull_items(&self) -> Vec<&Item> {
        let map = if self.separate {
            &self.merge_requests
        } else {
            &self.issues
        };
        map.values().filter(|i| i.pull.is_some()).collect()
    }

    pub fn pull_item_mut(&mut self, number: u64) -> Option<&mut Item> {
        let map = if self.separate {
            &mut self.merge_requests
        } else {
            &mut self.issues
        };
        map.get_mut(&number).filter(|i| i.pull.is_some())
    }

    pub fn pulls(&self) -> Vec<FakePull> {
        self.pull_items()
            .into_iter()
            .map(|i| {
                let p = i.pull.as_ref().expect("a pull request");
                FakePull {
                    number: i.number,
                    title: i.title.clone(),
                    body: i.body.clone(),
                    head: p.head.clone(),
                    base: p.base.clone(),
                    open: i.open,
                    merged: p.merged,
                    draft: p.draft,
                }
            })
            .collect()
    }

    /// The item a comment thread belongs to (GitLab: `on_pull` picks the
    /// merge requests' numbering).
    pub fn thread_mut(&mut self, number: u64, on_pull: bool) -> Option<&mut Item> {
        if on_pull && self.separate {
            self.merge_requests.get_mut(&number)
        } else {
            self.issues.get_mut(&number)
        }
    }

    pub fn add_comment(
        &mut self,
        number: u64,
        on_pull: bool,
        author: &str,
        body: &str,
        system: bool,
    ) -> FakeComment {
        self.next_comment += 1;
        let id = self.id * 1000 + self.next_comment;
        let created_at = self.tick();
        let comment = FakeComment {
            id,
            author: author.to_string(),
            body: body.to_string(),
            system,
            created_at,
        };
        let item = self
            .thread_mut(number, on_pull)
            .unwrap_or_else(|| panic!("the fake has no issue or pull request {number}"));
        item.comments.push(comment.clone());
        comment
    }

    pub fn comments_on(&mut self, number: u64, on_pull: bool) -> Vec<FakeComment> {
        self.thread_mut(number, on_pull)
            .map(|i| i.comments.clone())
            .unwrap_or_default()
    }

    /// A label's id, the label made when the repository lacks it.
    pub fn label_id(&mut self, name: &str) -> u64 {
        match self.labels.iter().position(|l| l == name) {
            Some(i) => i as u64 + 1,
            None => {
                self.labels.push(name.to_string());
                self.labels.len() as u64
            }
        }
    }

    /// The open issues (GitHub and Forgejo: pull requests too) carrying
    /// every label and the milestone, oldest first.
    pub fn open_issues(&self, labels: &[String], milestone: Option<&str>) -> Vec<&Item> {
        self.issues
            .values()
            .filter(|i| i.open)
            .filter(|i| labels.iter().all(|l| i.labels.contains(l)))
            .filter(|i| milestone.is_none_or(|m| i.milestone.as_deref() == Some(m)))
            .collect()
    }

    /// A collaborator's permission in GitHub's words.
    pub fn permission_of(&self, login: &str) -> Option<&str> {
        self.collaborators
            .iter()
            .find(|(l, _)| l.eq_ignore_ascii_case(login))
            .map(|(_, p)| p.as_str())
    }

    /// A new id for a review, review comment or check, unique in the fake.
    pub fn next_id(&mut self) -> u64 {
        self.next_comment += 1;
        self.id * 1000 + self.next_comment
    }

    /// The fake's next time stamp.
    pub fn now(&mut self) -> String {
        self.tick()
    }

    /// The pull request (merge request) whose head commit is `sha`.
    pub fn pull_at(&self, sha: &str) -> Option<&Item> {
        self.pull_items()
            .into_iter()
            .find(|i| i.pull.as_ref().is_some_and(|p| p.head_sha == sha))
    }

    /// Marks an item updated now.
    pub fn touch(&mut self, number: u64, on_pull: bool) {
        let now = self.tick();
        if let Some(item) = self.thread_mut(number, on_pull) {
            item.updated_at = now;
        }
    }
}

fn item(
    number: u64,
    title: &str,
    body: &str,
    author: &str,
    now: &str,
    pull: Option<PullPart>,
) -> Item {
    Item {
        number,
        title: title.to_string(),
        body: body.to_string(),
        author: author.to_string(),
        open: true,
        labels: Vec::new(),
        milestone: None,
        created_at: now.to_string(),
        updated_at: now.to_string(),
        pull,
        comments: Vec::new(),
        reviews: Vec::new(),
        review_comments: Vec::new(),
        checks: Vec::new(),
    }
}

/// Everything a fake holds.
pub(crate) struct State {
    api: Api,
    /// `http://127.0.0.1:PORT`: where links point.
    pub origin: String,
    pub repos: Vec<Repo>,
    pub page_size: usize,
    /// GitLab's group milestones: `(group, title)`.
    pub group_milestones: Vec<(String, String)>,
    pub faults: Vec<Fault>,
    /// Faults for the next request whose method is the first and whose
    /// path holds the second, each once.
    pub aimed: Vec<(String, String, Fault)>,
    pub requests: Vec<ForgeRequest>,
}

impl State {
    pub fn new(api: Api) -> State {
        State {
            api,
            origin: String::new(),
            repos: Vec::new(),
            page_size: 30,
            group_milestones: Vec::new(),
            faults: Vec::new(),
            aimed: Vec::new(),
            requests: Vec::new(),
        }
    }

    pub fn add_repository(&mut self, full_name: &str) {
        let id = self.repos.len() as u64 + 1;
        let mut repo = Repo {
            id,
            full_name: full_name.to_string(),
            default_branch: "main".to_string(),
            branches: Vec::new(),
            bare: None,
            issues: BTreeMap::new(),
            merge_requests: BTreeMap::new(),
            separate: self.api == Api::Gitlab,
            labels: Vec::new(),
            milestones: Vec::new(),
            collaborators: Vec::new(),
            links: Vec::new(),
            clock: 0,
            next_comment: 0,
        };
        repo.add_branch("main");
        self.repos.push(repo);
    }

    /// The repository of that name (GitLab: or of that numeric id).
    pub fn repo(&mut self, name: &str) -> Option<&mut Repo> {
        self.repos
            .iter_mut()
            .find(|r| r.full_name.eq_ignore_ascii_case(name) || r.id.to_string() == name)
    }

    pub fn repo_mut(&mut self, name: &str) -> &mut Repo {
        self.repo(name)
            .unwrap_or_else(|| panic!("the fake has no repository {name}"))
    }

    /// A page of `items` as the request asks (`page`, and `per_page` or
    /// `limit`, never more than the fake's page size), with the page
    /// headers of the API: `Link` (all three), and GitLab's `x-page`,
    /// `x-next-page`, `x-per-page`, `x-total`, `x-total-pages`, Forgejo's
    /// `x-total-count`.
    pub fn page(&self, req: &Incoming, items: Vec<Value>) -> Outgoing {
        let size_key = if self.api == Api::Forgejo {
            "limit"
        } else {
            "per_page"
        };
        let asked = req.query(size_key).and_then(|v| v.parse().ok());
        let size = asked.unwrap_or(self.page_size).clamp(1, self.page_size);
        let page: usize = req
            .query("page")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1)
            .max(1);
        let total = items.len();
        let pages = total.div_ceil(size).max(1);
        let chunk: Vec<Value> = items
            .into_iter()
            .skip((page - 1) * size)
            .take(size)
            .collect();
        let mut out = Outgoing::json(200, Value::Array(chunk));
        let link = |p: usize| {
            let mut target = set_query(&req.target, "page", &p.to_string());
            target = set_query(&target, size_key, &size.to_string());
            format!("<{}{}>", self.origin, target)
        };
        let mut links = Vec::new();
        if page < pages {
            links.push(format!("{}; rel=\"next\"", link(page + 1)));
            links.push(format!("{}; rel=\"last\"", link(pages)));
        }
        if page > 1 {
            links.push(format!("{}; rel=\"first\"", link(1)));
            links.push(format!("{}; rel=\"prev\"", link(page - 1)));
        }
        if !links.is_empty() {
            out = out.header("link", links.join(", "));
        }
        match self.api {
            Api::Gitlab => {
                let next = if page < pages {
                    (page + 1).to_string()
                } else {
                    String::new()
                };
                out.header("x-page", page.to_string())
                    .header("x-next-page", next)
                    .header("x-per-page", size.to_string())
                    .header("x-total", total.to_string())
                    .header("x-total-pages", pages.to_string())
            }
            Api::Forgejo => out.header("x-total-count", total.to_string()),
            Api::Github => out,
        }
    }
}

/// `target` with `key=value` in its query, replacing a former value.
fn set_query(target: &str, key: &str, value: &str) -> String {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut pairs: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty() && p.split('=').next() != Some(key))
        .collect();
    let pair = format!("{key}={value}");
    pairs.push(&pair);
    format!("{path}?{}", pairs.join("&"))
}

/// Whether the request carries the token: `Authorization: Bearer`/`token`
/// (GitLab also takes `PRIVATE-TOKEN`).
pub(crate) fn authorized(req: &Incoming) -> bool {
    let bearer = req.header("authorization").is_some_and(|v| {
        let mut parts = v.split_whitespace();
        let scheme = parts.next().unwrap_or("").to_ascii_lowercase();
        (scheme == "bearer" || scheme == "token") && parts.next() == Some(TOKEN)
    });
    bearer || req.header("private-token") == Some(TOKEN)
}

/// The headers with the token's value replaced.
pub(crate) fn redacted(headers: &[(String, String)]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| match k.as_str() {
            "authorization" => {
                let scheme = v.split_whitespace().next().unwrap_or("");
                (k.clone(), format!("{scheme} <redacted>"))
            }
            "private-token" => (k.clone(), "<redacted>".to_string()),
            _ => (k.clone(), v.clone()),
        })
        .collect()
}

/// 401 as each API says it.
pub(crate) fn unauthorized(api: Api) -> Outgoing {
    match api {
        Api::Github => Outgoing::json(
            401,
            json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"}),
        ),
        Api::Gitlab => Outgoing::json(401, json!({"message": "401 Unauthorized"})),
        Api::Forgejo => Outgoing::json(401, json!({"message": "token is required", "url": ""})),
    }
}

/// A queued fault's answer.
pub(crate) fn fault_answer(api: Api, fault: Fault) -> Outgoing {
    match fault {
        Fault::TooManyRequests { retry_after } => {
            Outgoing::json(429, json!({"message": "Too Many Requests"}))
                .header("retry-after", retry_after.to_string())
        }
        Fault::SecondaryRateLimit { retry_after } => Outgoing::json(
            403,
            json!({
                "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
            }),
        )
        .header("retry-after", retry_after.to_string()),
        Fault::RateLimitReset { at } if api == Api::Gitlab => {
            Outgoing::json(429, json!({"message": "Retry later"}))
                .header("ratelimit-remaining", "0")
                .header("ratelimit-reset", at.to_string())
        }
        Fault::RateLimitReset { at } => Outgoing::json(
            403,
            json!({"message": "API rate limit exceeded for user ID 1.", "documentation_url": "https://docs.github.com/rest"}),
        )
        .header("x-ratelimit-limit", "5000")
        .header("x-ratelimit-remaining", "0")
        .header("x-ratelimit-reset", at.to_string()),
        Fault::ServerError => Outgoing::json(500, json!({"message": "500 Internal Server Error"})),
        Fault::Forbidden => match api {
            Api::Github => Outgoing::json(
                403,
                json!({"message": "Resource not accessible by personal access token", "documentation_url": "https://docs.github.com/rest", "status": "403"}),
            ),
            Api::Gitlab => Outgoing::json(403, json!({"message": "403 Forbidden"})),
            Api::Forgejo => Outgoing::json(403, json!({"message": "token does not have at least one of required scope(s): [write:repository]", "url": ""})),
        },
        Fault::Malformed => Outgoing::text(200, "<html>Sign in to continue</html>"),
        Fault::ForeignLink => Outgoing::json(200, json!([])).header(
            "link",
            "<http://forge.invalid/api/v4/projects/1/notes?page=2>; rel=\"next\"",
        ),
        Fault::HangUp => Outgoing {
            hang_up: true,
            ..Outgoing::empty(0)
        },
    }
}
