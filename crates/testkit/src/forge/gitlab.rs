//! The fake GitLab: REST v4 under `/api/v4`.
//!
//! A project is named by its URL-encoded path (`owner%2Fname`) or its id.
//! Routes: `GET /projects/:id`; `GET|POST /projects/:id/merge_requests`
//! (the listing filters by `source_branch` and `state`, every state when
//! it is absent); `GET|PUT /projects/:id/merge_requests/:iid` (`PUT`
//! takes `title`, `description`, `target_branch`, `state_event`); `GET
//! /projects/:id/issues/:iid`; `GET|POST
//! /projects/:id/{issues,merge_requests}/:iid/notes`. A merge request is a
//! draft when its title starts with `Draft:`, `[Draft]` or `(Draft)`, and
//! its `draft` field says so. Creating one answers 422 for a branch the
//! project does not have and 409 for a second open one of the same source
//! branch, as GitLab's API does; changing a description adds a system note.
//!
//! The pull-request loop's routes: `GET /user`, `GET /users?username=`;
//! `GET /projects/:id/issues` (open, by `labels` and `milestone` title),
//! `.../milestones` and `GET /groups/:id/milestones`; `PUT
//! .../issues/:iid` (`add_labels`, `remove_labels`); `GET
//! .../members/all/:user_id` (an access level); `GET
//! .../merge_requests/:iid/approvals` and `.../discussions` (diff notes
//! with a `position`); `GET .../merge_requests/:iid/pipelines`, `GET
//! .../pipelines/:id/jobs` and `GET .../jobs/:id/trace` (plain text); `GET
//! .../issues/:iid/links`.

use super::server::{decode, Incoming, Outgoing};
use super::state::{Item, Link, PullPart, Repo, State};
use super::{FakeComment, BOT};
use super::{Outcome, Verdict};
use serde_json::{json, Value};

fn not_found(what: &str) -> Outgoing {
    Outgoing::json(404, json!({"message": format!("404 {what} Not Found")}))
}

/// Whether GitLab reads the title as a draft's.
pub(crate) fn is_draft(title: &str) -> bool {
    let lower = title.to_ascii_lowercase();
    ["draft:", "[draft]", "(draft)"]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// Answers one authorized request.
pub(crate) fn route(state: &mut State, req: &Incoming) -> Outgoing {
    let origin = state.origin.clone();
    let Some(rest) = req.path().strip_prefix("/api/v4/") else {
        return not_found("");
    };
    let segments: Vec<&str> = rest.trim_matches('/').split('/').collect();
    if segments == ["users"] && req.method == "GET" {
        return users(state, req);
    }
    if let ["groups", group, "milestones"] = segments.as_slice() {
        let (group, title) = (decode(group), req.query("title"));
        let items = state
            .group_milestones
            .iter()
            .enumerate()
            .filter(|(_, (g, t))| *g == group && title.as_deref().is_none_or(|x| x == t))
            .map(|(i, (_, t))| json!({"id": i + 2000, "iid": i + 1, "group_id": 1, "title": t, "state": "active"}))
            .collect();
        return state.page(req, items);
    }
    if segments == ["user"] && req.method == "GET" {
        return Outgoing::json(
            200,
            json!({"id": user_id(BOT), "username": BOT, "name": BOT, "state": "active"}),
        );
    }
    let ["projects", id, rest @ ..] = segments.as_slice() else {
        return not_found("");
    };
    let Some(full_name) = state.repo(&decode(id)).map(|r| r.full_name.clone()) else {
        return not_found("Project");
    };
    let at = format!("{origin}/{full_name}");
    if let Some(answer) = feedback(state, req, &at, id, rest) {
        return answer;
    }
    let Some(repo) = state.repo(&full_name) else {
        return not_found("Project");
    };
    let answer = match (req.method.as_str(), rest) {
        ("GET", []) => Some(Outgoing::json(200, project(&at, repo))),
        ("GET", ["merge_requests"]) => {
            let items = list(&at, repo, req);
            return state.page(req, items);
        }
        ("POST", ["merge_requests"]) => Some(create(&at, repo, &req.json())),
        ("GET", ["merge_requests", n]) => number(n)
            .and_then(|n| repo.merge_requests.get(&n))
            .map(|i| Outgoing::json(200, merge_request(&at, repo.id, i))),
        ("PUT", ["merge_requests", n]) => number(n).and_then(|n| edit(&at, repo, n, &req.json())),
        ("GET", ["issues", n]) => number(n)
            .and_then(|n| repo.issues.get(&n))
            .map(|i| Outgoing::json(200, issue(&at, repo.id, i))),
        ("GET", [kind @ ("issues" | "merge_requests"), n, "notes"]) => {
            let on_pull = *kind == "merge_requests";
            let Some(n) = number(n) else {
                return not_found("");
            };
            let Some(item) = repo.thread_mut(n, on_pull) else {
                return not_found(if on_pull { "Merge Request" } else { "Issue" });
            };
            let (number, mut comments) = (item.number, item.comments.clone());
            if req.query("sort").as_deref() != Some("asc") {
                comments.reverse();
            }
            let kind = if on_pull { "MergeRequest" } else { "Issue" };
            let items = comments.iter().map(|c| note(c, kind, number)).collect();
            return state.page(req, items);
        }
        ("POST", [kind @ ("issues" | "merge_requests"), n, "notes"]) => {
            let on_pull = *kind == "merge_requests";
            number(n).and_then(|n| post_note(repo, n, on_pull, &req.json()))
        }
        _ => None,
    };
    answer.unwrap_or_else(|| not_found(""))
}

fn number(text: &str) -> Option<u64> {
    text.parse().ok()
}

fn user(username: &str) -> Value {
    json!({"id": username.len(), "username": username, "name": username, "state": "active"})
}

fn project(at: &str, repo: &Repo) -> Value {
    let (namespace, name) = repo
        .full_name
        .rsplit_once('/')
        .unwrap_or(("", &repo.full_name));
    json!({
        "id": repo.id,
        "name": name,
        "path": name,
        "path_with_namespace": repo.full_name,
        "namespace": {"full_path": namespace},
        "web_url": at,
        "default_branch": repo.default_branch,
        "visibility": "private",
    })
}

fn merge_request(at: &str, project_id: u64, item: &Item) -> Value {
    let p = item.pull.as_ref().expect("a merge request");
    let state = match (p.merged, item.open) {
        (true, _) => "merged",
        (false, true) => "opened",
        (false, false) => "closed",
    };
    let draft = is_draft(&item.title);
    json!({
        "id": item.number + 100_000,
        "iid": item.number,
        "project_id": project_id,
        "title": item.title,
        "description": item.body,
        "state": state,
        "created_at": item.created_at,
        "updated_at": item.updated_at,
        "merged_at": if p.merged { json!(item.updated_at) } else { Value::Null },
        "closed_at": if state == "closed" { json!(item.updated_at) } else { Value::Null },
        "target_branch": p.base,
        "source_branch": p.head,
        "source_project_id": project_id,
        "target_project_id": project_id,
        "author": user(&item.author),
        "labels": item.labels,
        "draft": draft,
        "work_in_progress": draft,
        "sha": p.head_sha,
        "web_url": format!("{at}/-/merge_requests/{}", item.number),
    })
}

fn issue(at: &str, project_id: u64, item: &Item) -> Value {
    json!({
        "id": item.number + 200_000,
        "iid": item.number,
        "project_id": project_id,
        "title": item.title,
        "description": item.body,
        "state": if item.open { "opened" } else { "closed" },
        "labels": item.labels,
        "author": user(&item.author),
        "created_at": item.created_at,
        "updated_at": item.updated_at,
        "closed_at": if item.open { Value::Null } else { json!(item.updated_at) },
        "web_url": format!("{at}/-/issues/{}", item.number),
    })
}

fn note(c: &FakeComment, kind: &str, iid: u64) -> Value {
    json!({
        "id": c.id,
        "type": Value::Null,
        "body": c.body,
        "author": user(&c.author),
        "created_at": c.created_at,
        "updated_at": c.created_at,
        "system": c.system,
        "noteable_type": kind,
        "noteable_iid": iid,
    })
}

fn list(at: &str, repo: &Repo, req: &Incoming) -> Vec<Value> {
    let state = req.query("state");
    let source = req.query("source_branch");
    let mut items: Vec<&Item> = repo
        .pull_items()
        .into_iter()
        .filter(|i| {
            let p = i.pull.as_ref().expect("a merge request");
            let here = match state.as_deref() {
                Some("opened") => i.open,
                Some("merged") => p.merged,
                Some("closed") => !i.open && !p.merged,
                _ => true,
            };
            here && source.as_deref().is_none_or(|s| s == p.head)
        })
        .collect();
    // GitLab's default order: created_at, newest first.
    items.reverse();
    items
        .into_iter()
        .map(|i| merge_request(at, repo.id, i))
        .collect()
}

fn create(at: &str, repo: &mut Repo, body: &Value) -> Outgoing {
    let text = |k: &str| body[k].as_str().unwrap_or("").to_string();
    let (title, head, base) = (text("title"), text("source_branch"), text("target_branch"));
    for (field, value) in [
        ("source_branch", &head),
        ("target_branch", &base),
        ("title", &title),
    ] {
        if value.is_empty() {
            return Outgoing::json(400, json!({"error": format!("{field} is missing")}));
        }
    }
    for (name, branch) in [("Source", &head), ("Target", &base)] {
        if !repo.has_branch(branch) {
            let message = format!("{name} branch \"{branch}\" does not exist");
            return Outgoing::json(422, json!({"message": [message]}));
        }
    }
    let open_same = repo.pull_items().into_iter().find(|i| {
        i.open
            && i.pull
                .as_ref()
                .is_some_and(|p| p.head == head && p.base == base)
    });
    if let Some(other) = open_same {
        let message = format!(
            "Another open merge request already exists for this source branch: !{}",
            other.number
        );
        return Outgoing::json(409, json!({"message": [message]}));
    }
    let part = PullPart {
        head_sha: repo.branch_sha(&head),
        head,
        base,
        merged: false,
        draft: false,
    };
    let number = repo.add_pull(&title, &text("description"), BOT, part);
    let item = repo.merge_requests.get(&number).expect("just added");
    Outgoing::json(201, merge_request(at, repo.id, item))
}

fn edit(at: &str, repo: &mut Repo, number: u64, body: &Value) -> Option<Outgoing> {
    if let Some(base) = body["target_branch"].as_str() {
        if !repo.has_branch(base) {
            let message = format!("Target branch \"{base}\" does not exist");
            return Some(Outgoing::json(422, json!({"message": [message]})));
        }
    }
    let item = repo.merge_requests.get_mut(&number)?;
    item.pull.as_ref()?;
    let mut described = false;
    if let Some(t) = body["title"].as_str() {
        item.title = t.to_string();
    }
    if let Some(d) = body["description"].as_str() {
        described = item.body != d;
        item.body = d.to_string();
    }
    let p = item.pull.as_mut().expect("a merge request");
    if let Some(b) = body["target_branch"].as_str() {
        p.base = b.to_string();
    }
    match body["state_event"].as_str() {
        Some("close") => item.open = false,
        Some("reopen") if !p.merged => item.open = true,
        _ => {}
    }
    if described {
        repo.add_comment(number, true, BOT, "changed the description", true);
    }
    repo.touch(number, true);
    let item = repo.merge_requests.get(&number)?;
    Some(Outgoing::json(200, merge_request(at, repo.id, item)))
}

fn post_note(repo: &mut Repo, number: u64, on_pull: bool, body: &Value) -> Option<Outgoing> {
    repo.thread_mut(number, on_pull)?;
    let Some(text) = body["body"].as_str().filter(|t| !t.is_empty()) else {
        return Some(Outgoing::json(400, json!({"error": "body is missing"})));
    };
    let c = repo.add_comment(number, on_pull, BOT, text, false);
    let kind = if on_pull { "MergeRequest" } else { "Issue" };
    Some(Outgoing::json(201, note(&c, kind, number)))
}

fn edit_issue(at: &str, repo: &mut Repo, number: u64, body: &Value) -> Option<Outgoing> {
    repo.issues.get(&number)?;
    let split = |k: &str| -> Vec<String> {
        body[k]
            .as_str()
            .map(|s| {
                s.split(',')
                    .filter(|l| !l.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (add, remove) = (split("add_labels"), split("remove_labels"));
    for name in &add {
        // GitLab makes a label the project lacks.
        repo.label_id(name);
    }
    let item = repo.issues.get_mut(&number)?;
    for name in add {
        if !item.labels.contains(&name) {
            item.labels.push(name);
        }
    }
    item.labels.retain(|l| !remove.contains(l));
    repo.touch(number, false);
    let item = repo.issues.get(&number)?;
    Some(Outgoing::json(200, issue(at, repo.id, item)))
}

/// A user's id on the fake: stable, from the login.
fn user_id(login: &str) -> u64 {
    login
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
        % 1_000_000
}

/// `GET /users?username=…`: the collaborators of any project, and the bot.
fn users(state: &State, req: &Incoming) -> Outgoing {
    let name = req.query("username").unwrap_or_default();
    let known = name == BOT || state.repos.iter().any(|r| r.permission_of(&name).is_some());
    let found: Vec<Value> = if known {
        vec![json!({"id": user_id(&name), "username": name, "name": name, "state": "active"})]
    } else {
        Vec::new()
    };
    Outgoing::json(200, Value::Array(found))
}

fn member(repo: &Repo, id: &str) -> Outgoing {
    let found = repo
        .collaborators
        .iter()
        .find(|(login, _)| user_id(login).to_string() == id);
    let Some((login, role)) = found else {
        return Outgoing::json(404, json!({"message": "404 Not found"}));
    };
    let level = match role.as_str() {
        "admin" | "maintain" => 40,
        "write" => 30,
        "triage" => 20,
        _ => 10,
    };
    Outgoing::json(
        200,
        json!({"id": user_id(login), "username": login, "access_level": level, "state": "active"}),
    )
}

/// A merge request's pipeline id: this plus its iid.
const PIPELINE: u64 = 500;

fn approvals(project_id: u64, item: &Item) -> Value {
    let by: Vec<Value> = item
        .reviews
        .iter()
        .filter(|r| r.verdict == Verdict::Approve)
        .map(|r| json!({"user": {"id": r.id, "username": r.author, "name": r.author}}))
        .collect();
    json!({
        "id": item.number + 100_000,
        "iid": item.number,
        "project_id": project_id,
        "approved": !by.is_empty(),
        "approved_by": by,
    })
}

/// The merge request's notes as GitLab's discussions: each comment an
/// individual note, each review comment a diff note with a position.
fn discussions(item: &Item) -> Vec<Value> {
    let mut found: Vec<(String, Value)> = item
        .comments
        .iter()
        .map(|c| {
            let mut n = note(c, "MergeRequest", item.number);
            n["type"] = Value::Null;
            let d = json!({"id": format!("{:040x}", c.id), "individual_note": true, "notes": [n]});
            (c.created_at.clone(), d)
        })
        .collect();
    for c in &item.review_comments {
        let n = json!({
            "id": c.id,
            "type": "DiffNote",
            "body": c.body,
            "author": user(&c.author),
            "created_at": c.created_at,
            "system": false,
            "noteable_type": "MergeRequest",
            "position": {
                "position_type": if c.line.is_some() { "text" } else { "file" },
                "new_path": c.path,
                "old_path": c.path,
                "new_line": c.line,
                "old_line": Value::Null,
            },
        });
        let d = json!({"id": format!("{:040x}", c.id), "individual_note": false, "notes": [n]});
        found.push((c.created_at.clone(), d));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found.into_iter().map(|(_, d)| d).collect()
}

fn status_of(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Success => "success",
        Outcome::Failure => "failed",
        Outcome::Pending => "running",
    }
}

fn pipelines(at: &str, project_id: u64, item: &Item) -> Value {
    if item.checks.is_empty() {
        return json!([]);
    }
    let p = item.pull.as_ref().expect("a merge request");
    let failed = item.checks.iter().any(|c| c.outcome == Outcome::Failure);
    let id = PIPELINE + item.number;
    json!([{
        "id": id,
        "iid": item.number,
        "project_id": project_id,
        "sha": p.head_sha,
        "ref": p.head,
        "status": if failed { "failed" } else { "success" },
        "source": "merge_request_event",
        "web_url": format!("{at}/-/pipelines/{id}"),
    }])
}

fn job(at: &str, c: &super::FakeCheck) -> Value {
    json!({
        "id": c.id,
        "name": c.name,
        "stage": if c.summary.is_empty() { "test" } else { c.summary.as_str() },
        "status": status_of(c.outcome),
        "web_url": format!("{at}/-/jobs/{}", c.id),
    })
}

fn links(at: &str, repo: &Repo, n: u64) -> Value {
    let mut found = Vec::new();
    for (a, b, kind) in &repo.links {
        let (other, link_type) = match (kind, *a == n, *b == n) {
            (Link::Blocks, true, _) => (*b, "blocks"),
            (Link::Blocks, _, true) => (*a, "is_blocked_by"),
            (Link::Relates, true, _) => (*b, "relates_to"),
            (Link::Relates, _, true) => (*a, "relates_to"),
            // GitLab has no sub-issues of issues.
            _ => continue,
        };
        let Some(item) = repo.issues.get(&other) else {
            continue;
        };
        let mut v = issue(at, repo.id, item);
        v["link_type"] = json!(link_type);
        v["issue_link_id"] = json!(a * 1000 + b);
        v["references"] = json!({"short": format!("#{other}"), "relative": format!("#{other}"), "full": format!("{}#{other}", repo.full_name)});
        found.push(v);
    }
    Value::Array(found)
}

/// The routes of the pull-request loop: approvals, discussions,
/// pipelines and their jobs, issues by label and milestone, labels,
/// members, issue links. `None` when the request is none of them.
fn feedback(
    state: &mut State,
    req: &Incoming,
    at: &str,
    id: &str,
    rest: &[&str],
) -> Option<Outgoing> {
    let repo = state.repo(&decode(id))?;
    let answer = match (req.method.as_str(), rest) {
        ("GET", ["merge_requests", n, "approvals"]) => number(n)
            .and_then(|n| repo.merge_requests.get(&n))
            .map(|i| Outgoing::json(200, approvals(repo.id, i))),
        ("GET", ["merge_requests", n, "discussions"]) => {
            let Some(item) = number(n).and_then(|n| repo.merge_requests.get(&n)) else {
                return Some(not_found("Merge Request"));
            };
            let items = discussions(item);
            return Some(state.page(req, items));
        }
        ("GET", ["merge_requests", n, "pipelines"]) => number(n)
            .and_then(|n| repo.merge_requests.get(&n))
            .map(|i| Outgoing::json(200, pipelines(at, repo.id, i))),
        ("GET", ["pipelines", id, "jobs"]) => {
            let item = number(id)
                .and_then(|id| id.checked_sub(PIPELINE))
                .and_then(|n| repo.merge_requests.get(&n))
                .filter(|i| !i.checks.is_empty());
            let Some(item) = item else {
                return Some(not_found(""));
            };
            let items = item.checks.iter().map(|c| job(at, c)).collect();
            return Some(state.page(req, items));
        }
        ("GET", ["jobs", id, "trace"]) => {
            let id = number(id);
            let check = repo
                .merge_requests
                .values()
                .flat_map(|i| i.checks.iter())
                .find(|c| Some(c.id) == id);
            Some(check.map_or_else(|| not_found(""), |c| Outgoing::text(200, &c.log)))
        }
        ("GET", ["issues", n, "links"]) => number(n)
            .filter(|n| repo.issues.contains_key(n))
            .map(|n| Outgoing::json(200, links(at, repo, n))),
        ("GET", ["issues"]) => {
            let labels: Vec<String> = req
                .query("labels")
                .map(|l| l.split(',').map(str::to_string).collect())
                .unwrap_or_default();
            let milestone = req.query("milestone");
            let open = repo.open_issues(&labels, milestone.as_deref());
            let items = open
                .into_iter()
                .rev()
                .map(|i| issue(at, repo.id, i))
                .collect();
            return Some(state.page(req, items));
        }
        ("GET", ["milestones"]) => {
            let title = req.query("title");
            let items = repo
                .milestones
                .iter()
                .enumerate()
                .filter(|(_, t)| title.as_deref().is_none_or(|x| x == t.as_str()))
                .map(|(i, t)| json!({"id": i + 1000, "iid": i + 1, "title": t, "state": "active"}))
                .collect();
            return Some(state.page(req, items));
        }
        ("PUT", ["issues", n]) => number(n).and_then(|n| edit_issue(at, repo, n, &req.json())),
        ("GET", ["members", "all", id]) => Some(member(repo, id)),
        _ => return None,
    };
    Some(answer.unwrap_or_else(|| not_found("")))
}
