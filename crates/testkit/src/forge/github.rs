//! The fake GitHub: REST v3 under the server's root (as api.github.com),
//! and the two GraphQL mutations that change a pull request's draft state
//! (`POST /graphql`).
//!
//! Routes: `GET /repos/{o}/{r}`; `GET|POST /repos/{o}/{r}/pulls` (the
//! listing filters by `head=owner:branch` and `state=open|closed|all`);
//! `GET|PATCH /repos/{o}/{r}/pulls/{n}` (`PATCH` takes `title`, `body`,
//! `base`, `state` and, as GitHub does, ignores `draft`); `GET
//! /repos/{o}/{r}/issues/{n}` (a pull request too, with its
//! `pull_request` object); `GET|POST /repos/{o}/{r}/issues/{n}/comments`.
//! Creating a pull request answers 422 "Validation Failed" for a head or
//! base branch the repository does not have, and for a second open pull
//! request of the same head.
//!
//! The pull-request loop's routes: `GET /user`; `GET
//! /repos/{o}/{r}/issues` (open, by `labels` and milestone number, pull
//! requests included as GitHub lists them) and `.../milestones`; `POST
//! .../issues/{n}/labels` (making a label it lacks) and `DELETE
//! .../issues/{n}/labels/{name}`; `GET
//! .../collaborators/{user}/permission`; `GET .../pulls/{n}/reviews` and
//! `.../pulls/{n}/comments` (on files and lines); `GET
//! .../commits/{sha}/check-runs` (the latest of each name, in
//! `check_runs`) and `.../commits/{sha}/statuses` (every one, newest
//! first); `GET .../issues/{n}/dependencies/blocked_by`,
//! `.../dependencies/blocking`, `.../sub_issues` and `.../parent`.

use super::server::{decode, Incoming, Outgoing};
use super::state::{Item, Link, PullPart, Repo, State};
use super::BOT;
use super::{Outcome, Verdict};
use serde_json::{json, Value};

const DOCS: &str = "https://docs.github.com/rest";

fn not_found() -> Outgoing {
    Outgoing::json(
        404,
        json!({"message": "Not Found", "documentation_url": DOCS, "status": "404"}),
    )
}

fn invalid(errors: Value) -> Outgoing {
    Outgoing::json(
        422,
        json!({"message": "Validation Failed", "errors": errors, "documentation_url": DOCS, "status": "422"}),
    )
}

/// Answers one authorized request.
pub(crate) fn route(state: &mut State, req: &Incoming) -> Outgoing {
    let origin = state.origin.clone();
    if req.path() == "/graphql" && req.method == "POST" {
        return graphql(state, req);
    }
    if req.path() == "/user" && req.method == "GET" {
        return Outgoing::json(200, user(BOT));
    }
    let segments: Vec<&str> = req.path().trim_matches('/').split('/').collect();
    let ["repos", owner, name, rest @ ..] = segments.as_slice() else {
        return not_found();
    };
    let full_name = format!("{owner}/{name}");
    let at = Place {
        origin: &origin,
        repo: &full_name,
    };
    if let Some(answer) = feedback(state, req, &at, rest) {
        return answer;
    }
    let Some(repo) = state.repo(&full_name) else {
        return not_found();
    };
    let answer = match (req.method.as_str(), rest) {
        ("GET", []) => Some(Outgoing::json(200, repository(&at, repo))),
        ("GET", ["pulls"]) => {
            let items = list_pulls(&at, repo, req);
            return state.page(req, items);
        }
        ("POST", ["pulls"]) => Some(create_pull(&at, repo, &req.json())),
        ("GET", ["pulls", n]) => number(n)
            .and_then(|n| repo.pull_item_mut(n))
            .map(|i| Outgoing::json(200, pull(&at, i, true))),
        ("PATCH", ["pulls", n]) => number(n).and_then(|n| edit_pull(&at, repo, n, &req.json())),
        ("GET", ["issues", n]) => number(n)
            .and_then(|n| repo.issues.get(&n))
            .map(|i| Outgoing::json(200, issue(&at, i))),
        ("GET", ["issues", n, "comments"]) => {
            let Some(item) = number(n).and_then(|n| repo.issues.get(&n)) else {
                return not_found();
            };
            let number = item.number;
            let items = item
                .comments
                .iter()
                .map(|c| comment(&at, number, c))
                .collect();
            return state.page(req, items);
        }
        ("POST", ["issues", n, "comments"]) => {
            number(n).and_then(|n| post_comment(&at, repo, n, &req.json()))
        }
        _ => None,
    };
    answer.unwrap_or_else(not_found)
}

/// Where links point.
struct Place<'a> {
    origin: &'a str,
    repo: &'a str,
}

fn number(text: &str) -> Option<u64> {
    text.parse().ok()
}

fn user(login: &str) -> Value {
    json!({"login": login, "id": login.len(), "type": if login.ends_with("[bot]") { "Bot" } else { "User" }})
}

fn repository(at: &Place, repo: &Repo) -> Value {
    let (owner, name) = repo
        .full_name
        .split_once('/')
        .unwrap_or(("", &repo.full_name));
    json!({
        "id": repo.id,
        "node_id": format!("R_{}", repo.id),
        "name": name,
        "full_name": repo.full_name,
        "owner": user(owner),
        "private": true,
        "html_url": format!("{}/{}", at.origin, at.repo),
        "url": format!("{}/repos/{}", at.origin, at.repo),
        "default_branch": repo.default_branch,
    })
}

fn pull(at: &Place, item: &Item, single: bool) -> Value {
    let p = item.pull.as_ref().expect("a pull request");
    let state = if item.open { "open" } else { "closed" };
    let merged_at = p.merged.then(|| item.updated_at.clone());
    let owner = at.repo.split('/').next().unwrap_or("");
    let branch = |name: &str, sha: &str| {
        json!({
            "label": format!("{owner}:{name}"),
            "ref": name,
            "sha": sha,
            "repo": {"full_name": at.repo},
        })
    };
    let mut v = json!({
        "url": format!("{}/repos/{}/pulls/{}", at.origin, at.repo, item.number),
        "id": item.number + 100_000,
        "node_id": node_id(at.repo, item.number),
        "html_url": format!("{}/{}/pull/{}", at.origin, at.repo, item.number),
        "issue_url": format!("{}/repos/{}/issues/{}", at.origin, at.repo, item.number),
        "number": item.number,
        "state": state,
        "locked": false,
        "title": item.title,
        "user": user(&item.author),
        "body": if item.body.is_empty() { Value::Null } else { json!(item.body) },
        "labels": [],
        "created_at": item.created_at,
        "updated_at": item.updated_at,
        "closed_at": if item.open { Value::Null } else { json!(item.updated_at) },
        "merged_at": merged_at,
        "draft": p.draft,
        "head": branch(&p.head, &p.head_sha),
        "base": branch(&p.base, &format!("{:040x}", p.base.len())),
    });
    if single {
        v["merged"] = json!(p.merged);
        v["mergeable"] = Value::Null;
        v["comments"] = json!(item.comments.len());
    }
    v
}

/// A pull request's GraphQL id, as GitHub's `node_id` (`PR_…`).
fn node_id(repo: &str, number: u64) -> String {
    format!("PR_{}_{number}", repo.replace('/', "_"))
}

fn issue(at: &Place, item: &Item) -> Value {
    let mut v = json!({
        "id": item.number + 200_000,
        "node_id": format!("I_{}", item.number),
        "url": format!("{}/repos/{}/issues/{}", at.origin, at.repo, item.number),
        "repository_url": format!("{}/repos/{}", at.origin, at.repo),
        "html_url": format!("{}/{}/issues/{}", at.origin, at.repo, item.number),
        "number": item.number,
        "state": if item.open { "open" } else { "closed" },
        "title": item.title,
        "body": if item.body.is_empty() { Value::Null } else { json!(item.body) },
        "user": user(&item.author),
        "labels": item.labels.iter().map(|l| json!({"name": l, "color": "ededed"})).collect::<Vec<_>>(),
        "comments": item.comments.len(),
        "created_at": item.created_at,
        "updated_at": item.updated_at,
        "closed_at": if item.open { Value::Null } else { json!(item.updated_at) },
    });
    if let Some(p) = &item.pull {
        v["html_url"] = json!(format!("{}/{}/pull/{}", at.origin, at.repo, item.number));
        v["draft"] = json!(p.draft);
        v["pull_request"] = json!({
            "url": format!("{}/repos/{}/pulls/{}", at.origin, at.repo, item.number),
            "html_url": format!("{}/{}/pull/{}", at.origin, at.repo, item.number),
            "merged_at": if p.merged { json!(item.updated_at) } else { Value::Null },
        });
    }
    v
}

fn comment(at: &Place, number: u64, c: &super::FakeComment) -> Value {
    json!({
        "id": c.id,
        "node_id": format!("IC_{}", c.id),
        "url": format!("{}/repos/{}/issues/comments/{}", at.origin, at.repo, c.id),
        "html_url": format!("{}/{}/issues/{number}#issuecomment-{}", at.origin, at.repo, c.id),
        "issue_url": format!("{}/repos/{}/issues/{number}", at.origin, at.repo),
        "body": c.body,
        "user": user(&c.author),
        "created_at": c.created_at,
        "updated_at": c.created_at,
        "author_association": "MEMBER",
    })
}

fn list_pulls(at: &Place, repo: &Repo, req: &Incoming) -> Vec<Value> {
    let state = req.query("state").unwrap_or_else(|| "open".into());
    let head = req.query("head");
    let owner = at.repo.split('/').next().unwrap_or("");
    let mut items: Vec<&Item> = repo
        .pull_items()
        .into_iter()
        .filter(|i| match state.as_str() {
            "all" => true,
            "closed" => !i.open,
            _ => i.open,
        })
        .filter(|i| {
            let p = i.pull.as_ref().expect("a pull request");
            // `head` is `user:ref-name`; a bare branch name matches nothing.
            head.as_deref()
                .is_none_or(|h| h == format!("{owner}:{}", p.head))
        })
        .collect();
    // GitHub's default order: newest first.
    items.reverse();
    items.into_iter().map(|i| pull(at, i, false)).collect()
}

fn create_pull(at: &Place, repo: &mut Repo, body: &Value) -> Outgoing {
    let text = |k: &str| body[k].as_str().unwrap_or("").to_string();
    let (title, head, base) = (text("title"), text("head"), text("base"));
    let head = head
        .split_once(':')
        .map_or(head.clone(), |(_, b)| b.to_string());
    let missing =
        |field: &str| json!([{"resource": "PullRequest", "field": field, "code": "missing_field"}]);
    if title.is_empty() {
        return invalid(missing("title"));
    }
    for (field, branch) in [("head", &head), ("base", &base)] {
        if branch.is_empty() || !repo.has_branch(branch) {
            return invalid(
                json!([{"resource": "PullRequest", "field": field, "code": "invalid"}]),
            );
        }
    }
    let owner = at.repo.split('/').next().unwrap_or("");
    if repo.pull_items().iter().any(|i| {
        i.open
            && i.pull
                .as_ref()
                .is_some_and(|p| p.head == head && p.base == base)
    }) {
        let message = format!("A pull request already exists for {owner}:{head}.");
        return invalid(json!([{"resource": "PullRequest", "code": "custom", "message": message}]));
    }
    let part = PullPart {
        head_sha: repo.branch_sha(&head),
        head,
        base,
        merged: false,
        draft: body["draft"].as_bool().unwrap_or(false),
    };
    let number = repo.add_pull(&title, &text("body"), BOT, part);
    let item = repo.issues.get(&number).expect("just added");
    Outgoing::json(201, pull(at, item, true))
}

fn edit_pull(at: &Place, repo: &mut Repo, number: u64, body: &Value) -> Option<Outgoing> {
    if let Some(base) = body["base"].as_str() {
        if !repo.has_branch(base) {
            return Some(invalid(
                json!([{"resource": "PullRequest", "field": "base", "code": "invalid"}]),
            ));
        }
    }
    let item = repo.pull_item_mut(number)?;
    if let Some(t) = body["title"].as_str() {
        item.title = t.to_string();
    }
    if let Some(b) = body["body"].as_str() {
        item.body = b.to_string();
    }
    let p = item.pull.as_mut().expect("a pull request");
    if let Some(b) = body["base"].as_str() {
        p.base = b.to_string();
    }
    match body["state"].as_str() {
        Some("closed") => item.open = false,
        Some("open") if !p.merged => item.open = true,
        _ => {}
    }
    repo.touch(number, true);
    let item = repo.issues.get(&number)?;
    Some(Outgoing::json(200, pull(at, item, true)))
}

fn post_comment(at: &Place, repo: &mut Repo, number: u64, body: &Value) -> Option<Outgoing> {
    repo.issues.get(&number)?;
    let Some(text) = body["body"].as_str() else {
        return Some(invalid(
            json!([{"resource": "IssueComment", "field": "body", "code": "missing_field"}]),
        ));
    };
    let c = repo.add_comment(number, false, BOT, text, false);
    Some(Outgoing::json(201, comment(at, number, &c)))
}

/// `convertPullRequestToDraft` and `markPullRequestReadyForReview`, each
/// with `input: {pullRequestId: $id}` and the id in `variables.id`.
fn graphql(state: &mut State, req: &Incoming) -> Outgoing {
    let body = req.json();
    let query = body["query"].as_str().unwrap_or("");
    let id = body["variables"]["id"].as_str().unwrap_or("");
    let (name, draft) = if query.contains("convertPullRequestToDraft") {
        ("convertPullRequestToDraft", true)
    } else if query.contains("markPullRequestReadyForReview") {
        ("markPullRequestReadyForReview", false)
    } else {
        let error = json!({"message": "This fake knows only the two draft mutations"});
        return Outgoing::json(200, json!({"errors": [error]}));
    };
    for repo in &mut state.repos {
        let full_name = repo.full_name.clone();
        let numbers: Vec<u64> = repo.pull_items().iter().map(|i| i.number).collect();
        for n in numbers {
            if node_id(&full_name, n) == id {
                let item = repo.pull_item_mut(n).expect("listed");
                item.pull.as_mut().expect("a pull request").draft = draft;
                repo.touch(n, true);
                let result = json!({ name: {"pullRequest": {"isDraft": draft}} });
                return Outgoing::json(200, json!({ "data": result }));
            }
        }
    }
    let message = format!("Could not resolve to a node with the global id of '{id}'");
    Outgoing::json(
        200,
        json!({"data": {name: null}, "errors": [{"type": "NOT_FOUND", "message": message}]}),
    )
}

fn list_issues(at: &Place, repo: &Repo, req: &Incoming) -> Vec<Value> {
    let labels: Vec<String> = req
        .query("labels")
        .map(|l| l.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    // `milestone` is a number here (`*` and `none` are not faked).
    let milestone = req
        .query("milestone")
        .and_then(|m| m.parse::<usize>().ok())
        .map(|n| repo.milestones.get(n - 1).cloned().unwrap_or_default());
    let items = repo.open_issues(&labels, milestone.as_deref());
    // Newest first, pull requests included, as GitHub lists them.
    items.into_iter().rev().map(|i| issue(at, i)).collect()
}

fn labels_of(item: &Item) -> Value {
    json!(item
        .labels
        .iter()
        .map(|l| json!({"name": l, "color": "ededed"}))
        .collect::<Vec<_>>())
}

fn add_labels(repo: &mut Repo, number: u64, body: &Value) -> Option<Outgoing> {
    repo.issues.get(&number)?;
    let names: Vec<String> = body["labels"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|l| l.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    for name in &names {
        // GitHub makes a label the repository lacks.
        repo.label_id(name);
    }
    let item = repo.issues.get_mut(&number)?;
    for name in names {
        if !item.labels.contains(&name) {
            item.labels.push(name);
        }
    }
    Some(Outgoing::json(200, labels_of(item)))
}

fn remove_label(repo: &mut Repo, number: u64, name: &str) -> Option<Outgoing> {
    let item = repo.issues.get_mut(&number)?;
    let before = item.labels.len();
    item.labels.retain(|l| l != name);
    if item.labels.len() == before {
        return Some(Outgoing::json(
            404,
            json!({"message": "Label does not exist", "documentation_url": DOCS, "status": "404"}),
        ));
    }
    Some(Outgoing::json(200, labels_of(item)))
}

fn permission(repo: &Repo, login: &str) -> Outgoing {
    let role = repo.permission_of(login).unwrap_or("none");
    let permission = match role {
        "maintain" => "write",
        "triage" => "read",
        other => other,
    };
    Outgoing::json(
        200,
        json!({"permission": permission, "role_name": role, "user": user(login)}),
    )
}

/// The issues linked to `n` by `kind`: those before it (`a` of `(a, n)`)
/// when `before`, else those after it.
fn linked(repo: &Repo, n: u64, kind: Link, before: bool) -> Vec<u64> {
    repo.links
        .iter()
        .filter(|(_, _, k)| *k == kind)
        .filter_map(|(a, b, _)| match before {
            true if *b == n => Some(*a),
            false if *a == n => Some(*b),
            _ => None,
        })
        .collect()
}

fn review(at: &Place, pull: u64, r: &super::FakeReview) -> Value {
    let state = match r.verdict {
        Verdict::Approve => "APPROVED",
        Verdict::RequestChanges => "CHANGES_REQUESTED",
        Verdict::Comment => "COMMENTED",
    };
    json!({
        "id": r.id,
        "node_id": format!("PRR_{}", r.id),
        "user": user(&r.author),
        "body": r.body,
        "state": state,
        "html_url": format!("{}/{}/pull/{pull}#pullrequestreview-{}", at.origin, at.repo, r.id),
        "submitted_at": r.submitted_at,
        "author_association": "MEMBER",
    })
}

fn review_comment(at: &Place, pull: u64, c: &super::FakeReviewComment) -> Value {
    json!({
        "id": c.id,
        "pull_request_review_id": c.review_id,
        "path": c.path,
        "line": c.line,
        "original_line": c.line,
        "side": "RIGHT",
        "subject_type": if c.line.is_some() { "line" } else { "file" },
        "user": user(&c.author),
        "body": c.body,
        "created_at": c.created_at,
        "updated_at": c.created_at,
        "html_url": format!("{}/{}/pull/{pull}#discussion_r{}", at.origin, at.repo, c.id),
    })
}

fn check_run(at: &Place, sha: &str, c: &super::FakeCheck) -> Value {
    let (status, conclusion) = match c.outcome {
        Outcome::Success => ("completed", json!("success")),
        Outcome::Failure => ("completed", json!("failure")),
        Outcome::Pending => ("in_progress", Value::Null),
    };
    json!({
        "id": c.id,
        "name": c.name,
        "head_sha": sha,
        "status": status,
        "conclusion": conclusion,
        "html_url": format!("{}/{}/runs/{}", at.origin, at.repo, c.id),
        "details_url": format!("{}/{}/runs/{}", at.origin, at.repo, c.id),
        "output": {"title": c.summary, "summary": "", "text": if c.log.is_empty() { Value::Null } else { json!(c.log) }},
    })
}

/// The latest check of each name, newest first (`filter=latest`, GitHub's
/// default).
fn latest(checks: &[super::FakeCheck]) -> Vec<&super::FakeCheck> {
    let mut kept: Vec<&super::FakeCheck> = Vec::new();
    for c in checks.iter().rev().filter(|c| !c.commit_status) {
        if !kept.iter().any(|k| k.name == c.name) {
            kept.push(c);
        }
    }
    kept
}

/// The routes of the pull-request loop: reviews, review comments, checks,
/// issue links, issues by label and milestone, labels, permissions.
/// `None` when the request is none of them.
fn feedback(state: &mut State, req: &Incoming, at: &Place, rest: &[&str]) -> Option<Outgoing> {
    pull_feedback(state, req, at, rest).or_else(|| issue_feedback(state, req, at, rest))
}

/// The pull request routes: reviews, comments on lines, check runs and
/// commit statuses.
fn pull_feedback(state: &mut State, req: &Incoming, at: &Place, rest: &[&str]) -> Option<Outgoing> {
    let repo = state.repo(at.repo)?;
    match (req.method.as_str(), rest) {
        ("GET", ["pulls", n, "reviews"]) => {
            let Some(item) = number(n).and_then(|n| repo.pull_item_mut(n)) else {
                return Some(not_found());
            };
            let items = item
                .reviews
                .iter()
                .map(|r| review(at, item.number, r))
                .collect();
            Some(state.page(req, items))
        }
        ("GET", ["pulls", n, "comments"]) => {
            let Some(item) = number(n).and_then(|n| repo.pull_item_mut(n)) else {
                return Some(not_found());
            };
            let items = item
                .review_comments
                .iter()
                .map(|c| review_comment(at, item.number, c))
                .collect();
            Some(state.page(req, items))
        }
        ("GET", ["commits", sha, "check-runs"]) => {
            let runs: Vec<Value> = repo
                .pull_at(sha)
                .map(|i| {
                    latest(&i.checks)
                        .into_iter()
                        .map(|c| check_run(at, sha, c))
                        .collect()
                })
                .unwrap_or_default();
            let total = runs.len();
            let mut out = state.page(req, runs);
            out.body = Some(json!({"total_count": total, "check_runs": out.body.take()}));
            Some(out)
        }
        ("GET", ["commits", sha, "statuses"]) => {
            // Every status, newest first, several per context.
            let items: Vec<Value> = repo
                .pull_at(sha)
                .map(|i| {
                    let statuses = i.checks.iter().rev().filter(|c| c.commit_status);
                    statuses.map(|c| commit_status(at, c)).collect()
                })
                .unwrap_or_default();
            Some(state.page(req, items))
        }
        _ => None,
    }
}

/// The issue routes: links between issues, the list, milestones, labels,
/// and a collaborator's permission.
fn issue_feedback(
    state: &mut State,
    req: &Incoming,
    at: &Place,
    rest: &[&str],
) -> Option<Outgoing> {
    let repo = state.repo(at.repo)?;
    let answer = match (req.method.as_str(), rest) {
        ("GET", ["issues", n, "dependencies", which @ ("blocked_by" | "blocking")]) => {
            let Some(n) = number(n).filter(|n| repo.issues.contains_key(n)) else {
                return Some(not_found());
            };
            let others = linked(repo, n, Link::Blocks, *which == "blocked_by");
            let items = others
                .iter()
                .filter_map(|o| repo.issues.get(o))
                .map(|i| issue(at, i))
                .collect();
            return Some(state.page(req, items));
        }
        ("GET", ["issues", n, "sub_issues"]) => {
            let Some(n) = number(n).filter(|n| repo.issues.contains_key(n)) else {
                return Some(not_found());
            };
            let children = linked(repo, n, Link::Parent, false);
            let items = children
                .iter()
                .filter_map(|o| repo.issues.get(o))
                .map(|i| issue(at, i))
                .collect();
            return Some(state.page(req, items));
        }
        ("GET", ["issues", n, "parent"]) => number(n)
            .and_then(|n| linked(repo, n, Link::Parent, true).first().copied())
            .and_then(|p| repo.issues.get(&p))
            .map(|i| Outgoing::json(200, issue(at, i))),
        ("GET", ["issues"]) => {
            let items = list_issues(at, repo, req);
            return Some(state.page(req, items));
        }
        ("GET", ["milestones"]) => {
            let items = repo
                .milestones
                .iter()
                .enumerate()
                .map(|(i, t)| json!({"number": i + 1, "title": t, "state": "open"}))
                .collect();
            return Some(state.page(req, items));
        }
        ("POST", ["issues", n, "labels"]) => {
            number(n).and_then(|n| add_labels(repo, n, &req.json()))
        }
        ("DELETE", ["issues", n, "labels", name]) => {
            number(n).and_then(|n| remove_label(repo, n, &decode(name)))
        }
        ("GET", ["collaborators", login, "permission"]) => Some(permission(repo, &decode(login))),
        _ => return None,
    };
    Some(answer.unwrap_or_else(not_found))
}

fn commit_status(at: &Place, c: &super::FakeCheck) -> Value {
    let state = match c.outcome {
        Outcome::Success => "success",
        Outcome::Failure => "failure",
        Outcome::Pending => "pending",
    };
    json!({
        "id": c.id,
        "state": state,
        "context": c.name,
        "description": c.summary,
        "target_url": format!("{}/{}/statuses/{}", at.origin, at.repo, c.id),
        "created_at": "2026-01-01T00:00:00Z",
    })
}
