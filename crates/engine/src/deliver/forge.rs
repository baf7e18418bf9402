//! Carrying a delivery out on the forge: the codeboost issue check, the
//! pushes, each pull request opened or updated (never a second one for the
//! same head), and the after-merge comment.

use super::push::{push, Push, PushOutcome, Pushed};
use super::{DeliverError, Delivery, Pull};
use crate::git::guard::Guard;
use crate::git::repo::Repo;
use planwright_config::forge::ForgeKind as ConfigKind;
use planwright_config::forge::ForgeSettings;
use planwright_config::{RemoteUrl, Secret};
use planwright_forge::{
    CommentOn, Forge, NewPullRequest, PullRequest, PullRequestUpdate, PullState,
};
use serde::Serialize;

/// The hidden line that marks the after-merge comment of a run, so it is
/// posted once: `<!-- planwright:remaining-scope run=ID -->`.
pub const REMAINING_SCOPE_MARKER: &str = "<!-- planwright:remaining-scope";

/// A pull request's title and body, as the caller rendered them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PullText {
    /// The title (the forge's draft prefix is the client's).
    pub title: String,
    /// The body (Markdown).
    pub body: String,
}

/// What `deliver` did to one pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Opened it.
    Opened,
    /// Updated its body, title, base or draft state.
    Updated,
    /// Found it merged: nothing pushed.
    Merged,
    /// Found it closed without merging: nothing pushed or changed.
    Closed,
}

/// One pull request after the delivery: the shape of `--output json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delivered {
    /// Its number on the forge.
    pub number: u64,
    /// Its page.
    pub url: String,
    /// planwright's branch.
    pub head: String,
    /// The branch it merges into.
    pub base: String,
    /// `open`, `merged` or `closed`.
    pub state: &'static str,
    /// Whether it is a draft.
    pub draft: bool,
    /// The commit its branch was pushed to.
    pub commit: String,
    /// What the push did: `created`, `moved`, `unchanged`, or none when
    /// nothing was pushed (merged or closed).
    pub pushed: Option<&'static str>,
    /// Why each try of the push that failed before it went through failed
    /// (the remote out of reach, a 5xx): the push is tried again as the
    /// API's requests are. Empty when the first try went through.
    pub push_retried: Vec<String>,
    /// What was done to it.
    pub action: Action,
    /// The tickets it delivers.
    pub tickets: Vec<String>,
}

/// The after-merge comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "comment")]
pub enum AfterMerge {
    /// Posted now.
    Posted {
        /// The issue.
        issue: u64,
    },
    /// Posted by an earlier `deliver` (its marker is on the issue).
    AlreadyPosted {
        /// The issue.
        issue: u64,
    },
    /// Not posted: the issue is another repository's.
    OtherRepository {
        /// `owner/name#N`.
        issue: String,
    },
}

/// Everything `deliver` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The pull requests.
    pub pulls: Vec<Delivered>,
    /// The after-merge comment, when every pull request has merged and the
    /// plan leaves remaining scope.
    pub after_merge: Option<AfterMerge>,
    /// The imported issues (`import issues`) that got a comment with their
    /// pull request's link now (each gets it once).
    pub linked_issues: Vec<u64>,
    /// What the forge refused that does not stop a delivery (a label it
    /// would not take off), in words.
    pub warnings: Vec<String>,
}

/// The hidden line of the comment that links an imported issue to its
/// pull request, so it is posted once: `<!-- planwright:delivered pr=N -->`.
pub const DELIVERED_MARKER: &str = "<!-- planwright:delivered";

/// The forge's token, or which variables to set.
pub fn token(d: &Delivery) -> Result<&Secret, DeliverError> {
    settings_token(&d.settings)
}

fn settings_token(settings: &ForgeSettings) -> Result<&Secret, DeliverError> {
    settings
        .token
        .as_ref()
        .map(|(_, t)| t)
        .ok_or_else(|| DeliverError::NoToken {
            kind: settings.kind.name(),
            names: settings
                .token_env
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(" or "),
            scopes: settings.kind.scopes(),
        })
}

/// Carries out `d` with `texts` (one per pull request) through `forge`.
pub fn execute(
    repo: &Repo,
    d: &Delivery,
    texts: &[PullText],
    forge: &dyn Forge,
) -> Result<Report, DeliverError> {
    // The repository first: a wrong `repository`, `api_url` or token is
    // said before anything else is asked or pushed.
    forge.repository_info()?;
    check_issue(d, forge)?;
    // What no one else may change while planwright pushes, held for this
    // delivery (see `Guard::own_write`).
    let guard = Guard::of(repo);
    let mut pulls: Vec<Delivered> = Vec::new();
    for (pull, text) in d.pulls.iter().zip(texts) {
        let existing = forge.find_pull_request(&pull.head)?;
        let done = match existing {
            Some(pr) if pr.state != PullState::Open => finished(pull, pr),
            existing => {
                let pushed = push(
                    repo,
                    &guard,
                    &push_of(d, pull),
                    d.settings.token.as_ref().map(|t| &t.1),
                )?;
                // A parent's pull request that merged may have taken its
                // branch with it: stack onto the run's base instead.
                let parent_merged = pull.stacked_on.as_ref().is_some_and(|p| {
                    pulls
                        .iter()
                        .any(|o| o.tickets == [p.clone()] && o.state == "merged")
                });
                let base = if parent_merged {
                    &d.run.base
                } else {
                    &pull.base
                };
                let (pr, action) = open_or_update(forge, existing, pull, text, base, d.draft)?;
                delivered(pull, pr, Some(pushed), action)
            }
        };
        pulls.push(done);
    }
    let linked_issues = link_issues(d, &pulls, forge)?;
    // `[respond.labels]`: a delivered ticket's issue no longer runs or fails.
    let delivered: Vec<u64> = d
        .pulls
        .iter()
        .zip(&pulls)
        .filter(|(_, done)| done.action != Action::Closed)
        .flat_map(|(pull, _)| d.issues_of(pull))
        .filter(|issue| issue.is_in(&d.settings.repository))
        .map(|issue| issue.number)
        .collect();
    let warnings = crate::issues::unlabel_delivered(&d.labels, &delivered, forge);
    let after_merge = if pulls.iter().all(|p| p.state == "merged") {
        after_merge(d, forge)?
    } else {
        None
    };
    Ok(Report {
        pulls,
        after_merge,
        linked_issues,
        warnings,
    })
}

/// Posts, on each issue a delivered ticket was imported from, a comment
/// with its pull request's link, once per pull request (the marker says
/// it was posted).
fn link_issues(
    d: &Delivery,
    pulls: &[Delivered],
    forge: &dyn Forge,
) -> Result<Vec<u64>, DeliverError> {
    let mut posted = Vec::new();
    for (pull, done) in d.pulls.iter().zip(pulls) {
        for issue in d.issues_of(pull) {
            if !issue.is_in(&d.settings.repository) {
                continue;
            }
            let marker = format!("{DELIVERED_MARKER} pr={} -->", done.number);
            let on = CommentOn::Issue(issue.number);
            if forge.comments(on)?.iter().any(|c| c.body.contains(&marker)) {
                continue;
            }
            let body = format!(
                "{marker}\nplanwright delivered this issue's ticket in {} (run `{}`).\n",
                done.url, d.run.id
            );
            forge.post_comment(on, &body)?;
            posted.push(issue.number);
        }
    }
    Ok(posted)
}

fn push_of<'a>(d: &'a Delivery, pull: &'a Pull) -> Push<'a> {
    Push {
        remote: &d.settings.remote,
        url: &d.remote_url,
        http: RemoteUrl::parse(&d.remote_url).is_http(),
        kind: d.settings.kind,
        branch: &pull.head,
        commit: &pull.commit,
    }
}

/// codeboost: the plan's `issue` must be an issue (not a pull request) of
/// the repository, before anything is pushed.
fn check_issue(d: &Delivery, forge: &dyn Forge) -> Result<(), DeliverError> {
    let (true, Some(issue)) = (d.facts.codeboost, &d.facts.issue) else {
        return Ok(());
    };
    let repository = &d.settings.repository;
    match forge.issue(issue.number)? {
        None => Err(DeliverError::IssueMismatch(format!(
            "`{repository}` has no issue #{}",
            issue.number
        ))),
        Some(i) if i.is_pull_request => Err(DeliverError::IssueMismatch(format!(
            "#{} of `{repository}` is a pull request, not an issue",
            issue.number
        ))),
        Some(_) => Ok(()),
    }
}

fn open_or_update(
    forge: &dyn Forge,
    existing: Option<PullRequest>,
    pull: &Pull,
    text: &PullText,
    base: &str,
    draft: bool,
) -> Result<(PullRequest, Action), DeliverError> {
    let Some(pr) = existing else {
        let new = NewPullRequest {
            title: text.title.clone(),
            body: text.body.clone(),
            head: pull.head.clone(),
            base: base.to_string(),
            draft,
        };
        let opened = forge.open_pull_request(&new).map_err(|e| {
            refused(
                e,
                format!(
                    "opening the pull request from `{}` into `{base}`",
                    pull.head
                ),
                pull,
                base,
            )
        })?;
        return Ok((opened, Action::Opened));
    };
    let update = PullRequestUpdate {
        title: (pr.title != text.title).then(|| text.title.clone()),
        body: (pr.body.trim_end() != text.body.trim_end()).then(|| text.body.clone()),
        base: (pr.base != base).then(|| base.to_string()),
        draft: (pr.draft != draft).then_some(draft),
    };
    if update == PullRequestUpdate::default() {
        return Ok((pr, Action::Updated));
    }
    let updated = forge.update_pull_request(pr.number, &update).map_err(|e| {
        refused(
            e,
            format!("updating pull request #{}", pr.number),
            pull,
            base,
        )
    })?;
    Ok((updated, Action::Updated))
}

/// A forge's refusal of a pull request's content (a field it names, a
/// branch it lacks) as the error that says the branch is pushed; any
/// other error as it is.
fn refused(
    e: planwright_forge::ForgeError,
    doing: String,
    pull: &Pull,
    base: &str,
) -> DeliverError {
    use planwright_forge::ForgeError as F;
    match e {
        F::Validation { .. } | F::NotFound { .. } => DeliverError::PullRefused {
            doing,
            head: pull.head.clone(),
            base: base.to_string(),
            source: Box::new(e),
        },
        e => e.into(),
    }
}

fn finished(pull: &Pull, pr: PullRequest) -> Delivered {
    let action = if pr.state == PullState::Merged {
        Action::Merged
    } else {
        Action::Closed
    };
    delivered(pull, pr, None, action)
}

fn delivered(
    pull: &Pull,
    pr: PullRequest,
    pushed: Option<PushOutcome>,
    action: Action,
) -> Delivered {
    let push_retried = pushed
        .as_ref()
        .map(|p| p.retried.clone())
        .unwrap_or_default();
    Delivered {
        number: pr.number,
        url: pr.url,
        head: pull.head.clone(),
        base: pr.base,
        state: pr.state.name(),
        draft: pr.draft,
        commit: pull.commit.clone(),
        pushed: pushed.map(|p| match p.pushed {
            Pushed::Created => "created",
            Pushed::Moved => "moved",
            Pushed::Unchanged => "unchanged",
        }),
        push_retried,
        action,
        tickets: pull.tickets.clone(),
    }
}

/// fishhawk's rule: once the delivery has merged, `remaining_scope` is
/// posted on the plan's issue, once (the marker says it was).
fn after_merge(d: &Delivery, forge: &dyn Forge) -> Result<Option<AfterMerge>, DeliverError> {
    let facts = &d.facts;
    let (true, Some(rest), Some(issue)) = (facts.partial, &facts.remaining_scope, &facts.issue)
    else {
        return Ok(None);
    };
    if !issue.is_in(&d.settings.repository) {
        return Ok(Some(AfterMerge::OtherRepository {
            issue: issue.shown_from(&d.settings.repository),
        }));
    }
    let marker = format!("{REMAINING_SCOPE_MARKER} run={} -->", d.run.id);
    let on = CommentOn::Issue(issue.number);
    if forge.comments(on)?.iter().any(|c| c.body.contains(&marker)) {
        return Ok(Some(AfterMerge::AlreadyPosted {
            issue: issue.number,
        }));
    }
    let mut body = format!("{marker}\n**Remaining scope** (the delivery of run `{}` merged; this part of the issue is still to do):\n\n", d.run.id);
    body.push_str(&planwright_plan::delivery::forge_text(rest));
    body.push('\n');
    forge.post_comment(on, &body)?;
    Ok(Some(AfterMerge::Posted {
        issue: issue.number,
    }))
}

/// The forge kind of the API client for `[forge] kind`.
pub fn api_kind(kind: ConfigKind) -> planwright_forge::ForgeKind {
    match kind {
        ConfigKind::Github => planwright_forge::ForgeKind::Github,
        ConfigKind::Gitlab => planwright_forge::ForgeKind::Gitlab,
        ConfigKind::Forgejo => planwright_forge::ForgeKind::Forgejo,
    }
}

/// The API client of the delivery's forge, with its token.
pub fn connect(d: &Delivery) -> Result<Box<dyn Forge>, DeliverError> {
    connect_to(&d.settings)
}

/// The API client of `[forge]` (resolved), with its token: for delivery,
/// `import issues` and `respond` alike.
pub fn connect_to(settings: &ForgeSettings) -> Result<Box<dyn Forge>, DeliverError> {
    let token = settings_token(settings)?;
    let repository = planwright_forge::Repository::parse(&settings.repository)
        .map_err(|why| DeliverError::Engine(crate::error::EngineError::Settings(why)))?;
    let endpoint = planwright_forge::Endpoint {
        kind: api_kind(settings.kind),
        api_url: settings.api_url.clone(),
        repository,
        token: planwright_forge::Token::new(token.expose()),
    };
    Ok(planwright_forge::connect(&endpoint)?)
}
