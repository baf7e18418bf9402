//! The fake Forgejo (and Gitea): API v1 under `/api/v1`.
//!
//! Routes: `GET /repos/{o}/{r}`; `GET|POST /repos/{o}/{r}/pulls` (the
//! listing takes `state=open|closed|all`, `page` and `limit`, and has no
//! filter by head branch); `GET|PATCH /repos/{o}/{r}/pulls/{n}` (`PATCH`
//! takes `title`, `body`, `base`, `state` and answers 201, as Gitea's
//! does); `GET /repos/{o}/{r}/issues/{n}` (a pull request too, with its
//! `pull_request` object); `GET|POST /repos/{o}/{r}/issues/{n}/comments`
//! (the listing is not paged). A pull request is a draft when its title
//! starts with `WIP:` or `[WIP]` (the default work-in-progress prefixes),
//! and its `draft` field says so. Creating one answers 404 for a branch
//! the repository does not have, 409 for a second open one of the same
//! head and base, 422 when head and base are the same branch.
//!
//! The pull-request loop's routes: `GET /user`; `GET /repos/{o}/{r}/issues`
//! (open, by `labels` and `milestones` title, `type=issues`) and
//! `.../milestones`; `GET|POST .../labels` and `POST|DELETE
//! .../issues/{n}/labels[/{id}]` (labels by id; an id it lacks is a 422);
//! `GET .../collaborators/{user}/permission`; `GET .../pulls/{n}/reviews`
//! and `.../pulls/{n}/reviews/{id}/comments`; `GET
//! .../commits/{sha}/statuses` (every one, newest first); `GET
//! .../issues/{n}/dependencies` and `.../issues/{n}/blocks`.

use super::server::{decode, Incoming, Outgoing};
use super::state::{Item, Link, PullPart, Repo, State};
use super::{FakeComment, BOT};
use super::{Outcome, Verdict};
use serde_json::{json, Value};

fn not_found(origin: &str) -> Outgoing {
    Outgoing::json(
        404,
        json!({"errors": Value::Null, "message": "The target couldn't be found.", "url": format!("{origin}/api/swagger")}),
    )
}

/// Whether the title starts with a default work-in-progress prefix.
pub(crate) fn is_draft(title: &str) -> bool {
    let upper = title.to_ascii_uppercase();
    ["WIP:", "[WIP]"].iter().any(|p| upper.starts_with(p))
}

/// Answers one authorized request.
pub(crate) fn route(state: &mut State, req: &Incoming) -> Outgoing {
    let origin = state.origin.clone();
    let Some(rest) = req.path().strip_prefix("/api/v1/") else {
        return not_found(&origin);
    };
    if rest == "user" && req.method == "GET" {
        return Outgoing::json(200, user(BOT));
    }
    let segments: Vec<&str> = rest.trim_matches('/').split('/').collect();
    let ["repos", owner, name, rest @ ..] = segments.as_slice() else {
        return not_found(&origin);
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
        return not_found(&origin);
    };
    let answer = match (req.method.as_str(), rest) {
        ("GET", []) => Some(Outgoing::json(200, repository(&at, repo))),
        ("GET", ["pulls"]) => {
            let items = list(&at, repo, req);
            return state.page(req, items);
        }
        ("POST", ["pulls"]) => Some(create(&at, repo, &req.json())),
        ("GET", ["pulls", n]) => number(n)
            .and_then(|n| repo.pull_item_mut(n))
            .map(|i| Outgoing::json(200, pull(&at, i))),
        ("PATCH", ["pulls", n]) => number(n).and_then(|n| edit(&at, repo, n, &req.json())),
        ("GET", ["issues", n]) => number(n)
            .and_then(|n| repo.issues.get(&n))
            .map(|i| Outgoing::json(200, issue(&at, i))),
        ("GET", ["issues", n, "comments"]) => {
            number(n).and_then(|n| repo.issues.get(&n)).map(|i| {
                let items: Vec<Value> = i
                    .comments
                    .iter()
                    .map(|c| comment(&at, i.number, c))
                    .collect();
                Outgoing::json(200, Value::Array(items))
            })
        }
        ("POST", ["issues", n, "comments"]) => {
            number(n).and_then(|n| post_comment(&at, repo, n, &req.json()))
        }
        _ => None,
    };
    answer.unwrap_or_else(|| not_found(&origin))
}

struct Place<'a> {
    origin: &'a str,
    repo: &'a str,
}

fn number(text: &str) -> Option<u64> {
    text.parse().ok()
}

fn user(login: &str) -> Value {
    json!({"id": login.len(), "login": login, "username": login, "full_name": ""})
}

fn repository(at: &Place, repo: &Repo) -> Value {
    let (owner, name) = repo
        .full_name
        .split_once('/')
        .unwrap_or(("", &repo.full_name));
    json!({
        "id": repo.id,
        "owner": user(owner),
        "name": name,
        "full_name": repo.full_name,
        "private": true,
        "html_url": format!("{}/{}", at.origin, at.repo),
        "default_branch": repo.default_branch,
    })
}

fn pull(at: &Place, item: &Item) -> Value {
    let p = item.pull.as_ref().expect("a pull request");
    let branch = |name: &str, sha: &str| {
        json!({
            "label": name,
            "ref": name,
            "sha": sha,
            "repo_id": 1,
            "repo": {"full_name": at.repo},
        })
    };
    json!({
        "id": item.number + 100_000,
        "url": format!("{}/{}/pulls/{}", at.origin, at.repo, item.number),
        "number": item.number,
        "user": user(&item.author),
        "title": item.title,
        "body": item.body,
        "labels": [],
        "state": if item.open { "open" } else { "closed" },
        "draft": is_draft(&item.title),
        "is_locked": false,
        "comments": item.comments.len(),
        "html_url": format!("{}/{}/pulls/{}", at.origin, at.repo, item.number),
        "mergeable": true,
        "merged": p.merged,
        "merged_at": if p.merged { json!(item.updated_at) } else { Value::Null },
        "base": branch(&p.base, &format!("{:040x}", p.base.len())),
        "head": branch(&p.head, &p.head_sha),
        "created_at": item.created_at,
        "updated_at": item.updated_at,
        "closed_at": if item.open { Value::Null } else { json!(item.updated_at) },
    })
}

fn issue(at: &Place, item: &Item) -> Value {
    let pull_request = item.pull.as_ref().map_or(Value::Null, |p| {
        json!({
            "merged": p.merged,
            "merged_at": if p.merged { json!(item.updated_at) } else { Value::Null },
            "draft": is_draft(&item.title),
            "html_url": format!("{}/{}/pulls/{}", at.origin, at.repo, item.number),
        })
    });
    let page = if item.pull.is_some() {
        "pulls"
    } else {
        "issues"
    };
    json!({
        "id": item.number + 200_000,
        "url": format!("{}/api/v1/repos/{}/issues/{}", at.origin, at.repo, item.number),
        "html_url": format!("{}/{}/{page}/{}", at.origin, at.repo, item.number),
        "number": item.number,
        "user": user(&item.author),
        "title": item.title,
        "body": item.body,
        "labels": item.labels.iter().map(|l| json!({"name": l, "color": "ededed"})).collect::<Vec<_>>(),
        "state": if item.open { "open" } else { "closed" },
        "comments": item.comments.len(),
        "created_at": item.created_at,
        "updated_at": item.updated_at,
        "closed_at": if item.open { Value::Null } else { json!(item.updated_at) },
        "pull_request": pull_request,
    })
}

fn comment(at: &Place, number: u64, c: &FakeComment) -> Value {
    json!({
        "id": c.id,
        "html_url": format!("{}/{}/issues/{number}#issuecomment-{}", at.origin, at.repo, c.id),
        "issue_url": format!("{}/{}/issues/{number}", at.origin, at.repo),
        "pull_request_url": "",
        "user": user(&c.author),
        "body": c.body,
        "created_at": c.created_at,
        "updated_at": c.created_at,
    })
}

fn list(at: &Place, repo: &Repo, req: &Incoming) -> Vec<Value> {
    let state = req.query("state").unwrap_or_else(|| "open".into());
    let mut items: Vec<&Item> = repo
        .pull_items()
        .into_iter()
        .filter(|i| match state.as_str() {
            "all" => true,
            "closed" => !i.open,
            _ => i.open,
        })
        .collect();
    items.reverse();
    items.into_iter().map(|i| pull(at, i)).collect()
}

fn create(at: &Place, repo: &mut Repo, body: &Value) -> Outgoing {
    let text = |k: &str| body[k].as_str().unwrap_or("").to_string();
    let (title, head, base) = (text("title"), text("head"), text("base"));
    if title.is_empty() || head.is_empty() || base.is_empty() {
        let message = "[Head]: Required; [Base]: Required; [Title]: Required";
        return Outgoing::json(422, json!({"message": message, "url": ""}));
    }
    if head == base {
        let message = "Invalid PullRequest: There are no changes between the head and the base";
        return Outgoing::json(422, json!({"message": message, "url": ""}));
    }
    if !repo.has_branch(&head) || !repo.has_branch(&base) {
        return not_found(at.origin);
    }
    let open_same = repo.pull_items().into_iter().find(|i| {
        i.open
            && i.pull
                .as_ref()
                .is_some_and(|p| p.head == head && p.base == base)
    });
    if let Some(other) = open_same {
        let message = format!(
            "pull request already exists for these targets [id: {}, issue_id: {}, head_repo_id: {}, base_repo_id: {}, head_branch: {head}, base_branch: {base}]",
            other.number + 100_000, other.number, repo.id, repo.id
        );
        return Outgoing::json(409, json!({"message": message, "url": ""}));
    }
    let part = PullPart {
        head_sha: repo.branch_sha(&head),
        head,
        base,
        merged: false,
        draft: false,
    };
    let number = repo.add_pull(&title, &text("body"), BOT, part);
    let item = repo.issues.get(&number).expect("just added");
    Outgoing::json(201, pull(at, item))
}

fn edit(at: &Place, repo: &mut Repo, number: u64, body: &Value) -> Option<Outgoing> {
    if let Some(base) = body["base"].as_str() {
        if !repo.has_branch(base) {
            return Some(not_found(at.origin));
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
    Some(Outgoing::json(201, pull(at, item)))
}

fn post_comment(at: &Place, repo: &mut Repo, number: u64, body: &Value) -> Option<Outgoing> {
    repo.issues.get(&number)?;
    let Some(text) = body["body"].as_str().filter(|t| !t.is_empty()) else {
        return Some(Outgoing::json(
            422,
            json!({"message": "[Body]: Required", "url": ""}),
        ));
    };
    let c = repo.add_comment(number, false, BOT, text, false);
    Some(Outgoing::json(201, comment(at, number, &c)))
}

fn list_issues(at: &Place, repo: &Repo, req: &Incoming) -> Vec<Value> {
    let labels: Vec<String> = req
        .query("labels")
        .map(|l| l.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let milestone = req.query("milestones");
    let only_issues = req.query("type").as_deref() == Some("issues");
    let items = repo.open_issues(&labels, milestone.as_deref());
    items
        .into_iter()
        .rev()
        .filter(|i| !only_issues || i.pull.is_none())
        .map(|i| issue(at, i))
        .collect()
}

fn label(id: u64, name: &str) -> Value {
    json!({"id": id, "name": name, "color": "ededed", "description": ""})
}

fn create_label(repo: &mut Repo, body: &Value) -> Outgoing {
    let Some(name) = body["name"].as_str().filter(|n| !n.is_empty()) else {
        return Outgoing::json(422, json!({"message": "[Name]: Required", "url": ""}));
    };
    let id = repo.label_id(name);
    Outgoing::json(201, label(id, name))
}

/// Labels by id, as Forgejo takes them; an id it does not have is refused.
fn add_labels(repo: &mut Repo, number: u64, body: &Value) -> Option<Outgoing> {
    repo.issues.get(&number)?;
    let ids: Vec<u64> = body["labels"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    let mut names = Vec::new();
    for id in ids {
        match repo.labels.get((id as usize).wrapping_sub(1)) {
            Some(name) => names.push(name.clone()),
            None => {
                let message = format!("label does not exist [id: {id}]");
                return Some(Outgoing::json(422, json!({"message": message, "url": ""})));
            }
        }
    }
    let all = repo.labels.clone();
    let item = repo.issues.get_mut(&number)?;
    for name in names {
        if !item.labels.contains(&name) {
            item.labels.push(name);
        }
    }
    let shown: Vec<Value> = item
        .labels
        .iter()
        .map(|l| {
            label(
                all.iter().position(|x| x == l).map_or(0, |i| i as u64 + 1),
                l,
            )
        })
        .collect();
    Some(Outgoing::json(200, Value::Array(shown)))
}

fn remove_label(repo: &mut Repo, number: u64, id: u64) -> Option<Outgoing> {
    let name = repo.labels.get((id as usize).wrapping_sub(1))?.clone();
    let item = repo.issues.get_mut(&number)?;
    item.labels.retain(|l| *l != name);
    Some(Outgoing::empty(204))
}

fn permission(repo: &Repo, login: &str, origin: &str) -> Outgoing {
    let Some(role) = repo.permission_of(login) else {
        return not_found(origin);
    };
    let permission = match role {
        "admin" => "admin",
        "maintain" | "write" => "write",
        _ => "read",
    };
    Outgoing::json(
        200,
        json!({"permission": permission, "role_name": permission, "user": user(login)}),
    )
}

fn review(at: &Place, item: &Item, r: &super::FakeReview) -> Value {
    let state = match r.verdict {
        Verdict::Approve => "APPROVED",
        Verdict::RequestChanges => "REQUEST_CHANGES",
        Verdict::Comment => "COMMENT",
    };
    let count = item
        .review_comments
        .iter()
        .filter(|c| c.review_id == r.id)
        .count();
    json!({
        "id": r.id,
        "user": user(&r.author),
        "body": r.body,
        "state": state,
        "commit_id": item.pull.as_ref().map(|p| p.head_sha.clone()),
        "stale": false,
        "official": true,
        "dismissed": false,
        "comments_count": count,
        "submitted_at": r.submitted_at,
        "html_url": format!("{}/{}/pulls/{}#issuecomment-{}", at.origin, at.repo, item.number, r.id),
    })
}

fn review_comment(at: &Place, pull: u64, c: &super::FakeReviewComment) -> Value {
    json!({
        "id": c.id,
        "body": c.body,
        "user": user(&c.author),
        "pull_request_review_id": c.review_id,
        "path": c.path,
        "position": c.line.unwrap_or(0),
        "original_position": 0,
        "created_at": c.created_at,
        "updated_at": c.created_at,
        "html_url": format!("{}/{}/pulls/{pull}/files#issuecomment-{}", at.origin, at.repo, c.id),
    })
}

fn status(c: &super::FakeCheck, origin: &str) -> Value {
    let status = match c.outcome {
        Outcome::Success => "success",
        Outcome::Failure => "failure",
        Outcome::Pending => "pending",
    };
    json!({
        "id": c.id,
        "status": status,
        "context": c.name,
        "description": c.summary,
        "target_url": format!("{origin}/actions/runs/{}", c.id),
        "creator": user(BOT),
        "created_at": "2026-01-01T00:00:00Z",
    })
}

/// The routes of the pull-request loop: reviews, review comments, checks,
/// issue links, issues by label and milestone, labels, permissions.
/// `None` when the request is none of them.
fn feedback(state: &mut State, req: &Incoming, at: &Place, rest: &[&str]) -> Option<Outgoing> {
    let repo = state.repo(at.repo)?;
    let answer = match (req.method.as_str(), rest) {
        ("GET", ["pulls", n, "reviews"]) => {
            let Some(item) = number(n).and_then(|n| repo.pull_item_mut(n)) else {
                return Some(not_found(at.origin));
            };
            let items = item.reviews.iter().map(|r| review(at, item, r)).collect();
            return Some(state.page(req, items));
        }
        ("GET", ["pulls", n, "reviews", rid, "comments"]) => {
            let item = number(n).and_then(|n| repo.pull_item_mut(n));
            let rid = number(rid);
            item.filter(|i| i.reviews.iter().any(|r| Some(r.id) == rid))
                .map(|i| {
                    let found: Vec<Value> = i
                        .review_comments
                        .iter()
                        .filter(|c| Some(c.review_id) == rid)
                        .map(|c| review_comment(at, i.number, c))
                        .collect();
                    Outgoing::json(200, Value::Array(found))
                })
        }
        ("GET", ["commits", sha, "statuses"]) => {
            let items: Vec<Value> = repo
                .pull_at(sha)
                .map(|i| {
                    i.checks
                        .iter()
                        .rev()
                        .map(|c| status(c, at.origin))
                        .collect()
                })
                .unwrap_or_default();
            return Some(state.page(req, items));
        }
        ("GET", ["issues", n, which @ ("dependencies" | "blocks")]) => {
            let Some(n) = number(n).filter(|n| repo.issues.contains_key(n)) else {
                return Some(not_found(at.origin));
            };
            let blocked_by = *which == "dependencies";
            let others: Vec<u64> = repo
                .links
                .iter()
                .filter(|(_, _, k)| *k == Link::Blocks)
                .filter_map(|(a, b, _)| match blocked_by {
                    true if *b == n => Some(*a),
                    false if *a == n => Some(*b),
                    _ => None,
                })
                .collect();
            let items = others
                .iter()
                .filter_map(|o| repo.issues.get(o))
                .map(|i| {
                    let mut v = issue(at, i);
                    v["repository"] = json!({"id": repo.id, "full_name": repo.full_name});
                    v
                })
                .collect();
            return Some(state.page(req, items));
        }
        ("GET", ["issues"]) => {
            let items = list_issues(at, repo, req);
            return Some(state.page(req, items));
        }
        ("GET", ["milestones"]) => {
            let items = repo
                .milestones
                .iter()
                .enumerate()
                .map(|(i, t)| json!({"id": i + 1, "title": t, "state": "open"}))
                .collect();
            return Some(state.page(req, items));
        }
        ("GET", ["labels"]) => {
            let items = repo
                .labels
                .iter()
                .enumerate()
                .map(|(i, l)| label(i as u64 + 1, l))
                .collect();
            return Some(state.page(req, items));
        }
        ("POST", ["labels"]) => Some(create_label(repo, &req.json())),
        ("POST", ["issues", n, "labels"]) => {
            number(n).and_then(|n| add_labels(repo, n, &req.json()))
        }
        ("DELETE", ["issues", n, "labels", id]) => {
            number(n).and_then(|n| remove_label(repo, n, number(id)?))
        }
        ("GET", ["collaborators", login, "permission"]) => {
            Some(permission(repo, &decode(login), at.origin))
        }
        _ => return None,
    };
    Some(answer.unwrap_or_else(|| not_found(at.origin)))
}
