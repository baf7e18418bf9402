//! Reading the forges' JSON: the small helpers every client shares
//! (GitHub and Forgejo share more, in [`crate::hub`]).

use crate::http::{Http, Method};
use crate::{Check, CommentOn, ForgeError, PullRequest, PullRequestUpdate, PullState};
use serde_json::{json, Value};

/// A JSON body being read, with what to say when it does not fit.
pub(crate) struct Body<'a> {
    pub http: &'a Http,
    pub method: Method,
    pub path: &'a str,
}

impl Body<'_> {
    /// The string at a dotted path (`head.ref`); `""` when null or absent.
    pub fn text(&self, v: &Value, at: &str) -> String {
        pick(v, at).as_str().unwrap_or("").to_string()
    }

    /// The string at a dotted path, which must be there.
    pub fn required(&self, v: &Value, at: &str) -> Result<String, ForgeError> {
        match pick(v, at).as_str() {
            Some(s) => Ok(s.to_string()),
            None => Err(self.missing(at, "a string")),
        }
    }

    /// The number at a dotted path, which must be there.
    pub fn number(&self, v: &Value, at: &str) -> Result<u64, ForgeError> {
        pick(v, at)
            .as_u64()
            .ok_or_else(|| self.missing(at, "a number"))
    }

    fn missing(&self, at: &str, expected: &str) -> ForgeError {
        self.http
            .response_error(self.method, self.path, &format!("`{at}` is not {expected}"))
    }
}

/// The JSON of `GET path`, or `None` when the forge has no such thing
/// (404 for a thing of a repository that exists; 410 Gone, GitHub's
/// answer for a deleted issue or a repository with issues turned off).
/// `what` names it in any other error.
pub(crate) fn found(http: &Http, path: &str, what: &str) -> Result<Option<Value>, ForgeError> {
    let reply = http.send(Method::Get, path, None)?;
    if reply.status == 410 {
        return Ok(None);
    }
    if !reply.ok() {
        return match http.error(Method::Get, path, &reply, Some(what)) {
            ForgeError::NotFound { .. } => Ok(None),
            e => Err(e),
        };
    }
    http.parse(Method::Get, path, &reply).map(Some)
}

/// A thing the repository does not have (a milestone, say).
pub(crate) fn not_found(http: &Http, what: String) -> ForgeError {
    ForgeError::NotFound {
        kind: http.kind,
        repository: http.repository.clone(),
        what,
    }
}

/// The fields of a pull request's update, under each forge's names for the
/// body and the base (`title` is the same everywhere): `None` when nothing
/// changes. `title` is the title to send (with a draft prefix where the
/// forge's draft is one).
pub(crate) fn update_fields(
    title: Option<String>,
    update: &PullRequestUpdate,
    [body_key, base_key]: [&str; 2],
) -> Option<Value> {
    let mut fields = serde_json::Map::new();
    if let Some(title) = title {
        fields.insert("title".into(), json!(title));
    }
    if let Some(body) = &update.body {
        fields.insert(body_key.into(), json!(body));
    }
    if let Some(base) = &update.base {
        fields.insert(base_key.into(), json!(base));
    }
    (!fields.is_empty()).then_some(Value::Object(fields))
}

/// The number a comment goes to, and what a 404 names.
pub(crate) fn target(on: CommentOn, pull_name: &str) -> (u64, String) {
    match on {
        CommentOn::Issue(n) => (n, format!("issue {n}")),
        CommentOn::PullRequest(n) => (n, format!("{pull_name} {n}")),
    }
}

/// The value at a dotted path; `Null` when any step is missing.
pub(crate) fn pick<'v>(v: &'v Value, at: &str) -> &'v Value {
    at.split('.').fold(v, |v, key| &v[key])
}

/// The names of a `labels` array: objects with `name` (GitHub, Forgejo)
/// or strings (GitLab).
pub(crate) fn label_names(v: &Value) -> Vec<String> {
    let labels = v["labels"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    labels
        .iter()
        .filter_map(|l| l.as_str().or_else(|| l["name"].as_str()))
        .map(str::to_string)
        .collect()
}

/// `(draft, title)`: whether the title starts with one of the draft
/// prefixes (compared without case), and the title without it.
pub(crate) fn split_draft<'t>(title: &'t str, prefixes: &[&str]) -> (bool, &'t str) {
    for prefix in prefixes {
        let n = prefix.len();
        if title.len() >= n && title.is_char_boundary(n) && title[..n].eq_ignore_ascii_case(prefix)
        {
            return (true, title[n..].trim_start());
        }
    }
    (false, title)
}

/// The pull request a head branch names: the open one, else the one with
/// the highest number (the latest).
pub(crate) fn choose(mut found: Vec<PullRequest>) -> Option<PullRequest> {
    found.sort_by_key(|p| (p.state == PullState::Open, p.number));
    found.pop()
}

/// A title with a draft prefix when `draft`.
pub(crate) fn with_prefix(title: &str, draft: bool, prefix: &str) -> String {
    if draft {
        format!("{prefix} {title}")
    } else {
        title.to_string()
    }
}

/// The title to send for an update on a forge whose draft state is a
/// title prefix: `None` when neither the title nor the draft state
/// changes; else the new (or current) bare title with the new (or
/// current) draft state's prefix. `current` reads the pull request when
/// one of the two is not given.
pub(crate) fn prefixed_title(
    update: &PullRequestUpdate,
    prefix: &str,
    current: impl FnOnce() -> Result<PullRequest, ForgeError>,
) -> Result<Option<String>, ForgeError> {
    let (title, draft) = match (&update.title, update.draft) {
        (None, None) => return Ok(None),
        (Some(title), Some(draft)) => (title.clone(), draft),
        (title, draft) => {
            let now = current()?;
            (
                title.clone().unwrap_or(now.title),
                draft.unwrap_or(now.draft),
            )
        }
    };
    Ok(Some(with_prefix(&title, draft, prefix)))
}

/// The last lines of a log: at most 50 lines and 8,000 characters.
pub(crate) fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let mut kept = lines[lines.len().saturating_sub(50)..].join("\n");
    if kept.len() > 8000 {
        let mut cut = kept.len() - 8000;
        while !kept.is_char_boundary(cut) {
            cut += 1;
        }
        kept = kept[cut..].to_string();
    }
    kept
}

/// The checks with the latest of each name kept: `checks` is newest first.
pub(crate) fn latest_per_name(checks: Vec<Check>) -> Vec<Check> {
    let mut kept: Vec<Check> = Vec::new();
    for c in checks {
        if !kept.iter().any(|k| k.name == c.name) {
            kept.push(c);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_is_the_last_fifty_lines() {
        let log: String = (1..=60).map(|i| format!("line {i}\n")).collect();
        let t = tail(&log);
        assert!(t.starts_with("line 11\n") && t.ends_with("line 60"), "{t}");
        assert_eq!(tail(&"é".repeat(5000)).chars().count(), 4000);
    }

    #[test]
    fn draft_prefixes_are_split_without_case() {
        let p = ["Draft:", "[Draft]", "WIP:"];
        assert_eq!(split_draft("draft: Fix it", &p), (true, "Fix it"));
        assert_eq!(split_draft("[WIP] x", &["[WIP]"]), (true, "x"));
        assert_eq!(split_draft("Drafting", &p), (false, "Drafting"));
        assert_eq!(split_draft("é", &p), (false, "é"));
    }
}
