//! The answer to `session/request_permission`: an edit whose every
//! location lies inside the ticket's workspace is allowed once; anything
//! else (a command, a fetch, an edit elsewhere or of no named file) is
//! rejected. Nothing is ever allowed for good: an agent that offers only
//! `allow_always` for an edit is rejected, since one answer must not
//! decide its later requests. The sandbox confines the agent whatever
//! the answer.

use serde_json::{json, Value};
use std::path::{Component, Path, PathBuf};

/// What planwright answered, for the log and the reply.
pub(super) struct Answer {
    allowed: bool,
    option: Option<String>,
    what: String,
}

impl Answer {
    /// `allowed: TITLE (KIND) PATHS` or `denied: ...`.
    pub(super) fn log_line(&self) -> String {
        let verdict = if self.allowed { "allowed" } else { "denied" };
        format!("{verdict}: {}", self.what)
    }

    /// The reply's `outcome`: the option chosen, or `cancelled` when the
    /// agent offered none of the kind the policy chose.
    pub(super) fn outcome(&self) -> Value {
        match &self.option {
            Some(id) => json!({"outcome": "selected", "optionId": id}),
            None => json!({"outcome": "cancelled"}),
        }
    }
}

/// Decides a request's `params` for an agent working in `workspace`.
pub(super) fn decide(params: &Value, workspace: &Path) -> Answer {
    let call = &params["toolCall"];
    let kind = call["kind"].as_str().unwrap_or("other");
    let paths: Vec<&str> = call["locations"]
        .as_array()
        .map(|l| l.iter().filter_map(|l| l["path"].as_str()).collect())
        .unwrap_or_default();
    let fits = kind == "edit" && !paths.is_empty() && paths.iter().all(|p| inside(p, workspace));
    let options = params["options"].as_array().cloned().unwrap_or_default();
    let pick = |kinds: &[&str]| {
        kinds.iter().find_map(|k| {
            options
                .iter()
                .find(|o| o["kind"] == *k)
                .and_then(|o| o["optionId"].as_str().map(str::to_string))
        })
    };
    let allow = if fits { pick(&["allow_once"]) } else { None };
    let allowed = allow.is_some();
    let option = allow.or_else(|| pick(&["reject_once", "reject_always"]));
    let labels = if fits && !allowed {
        " (the agent offered no allow_once option)"
    } else if kind == "other" && paths.is_empty() {
        // claude-code-acp labels its writes so: its edits are never allowed.
        " (a tool call of kind other with no locations names no file to allow)"
    } else {
        ""
    };
    Answer {
        allowed,
        option,
        what: format!(
            "{} ({kind}) [{}]{labels}",
            call["title"].as_str().unwrap_or(""),
            paths.join(", ")
        ),
    }
}

/// Whether `path` (absolute, or relative to `workspace`) names something
/// below `workspace`, read lexically: any `..` is refused outright.
fn inside(path: &str, workspace: &Path) -> bool {
    let path = Path::new(path);
    if path.components().any(|c| c == Component::ParentDir) {
        return false;
    }
    let full: PathBuf = if path.is_absolute() {
        path.to_path_buf()
    } else {
        workspace.join(path)
    };
    full.starts_with(workspace) && full != workspace
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(kind: &str, path: &str) -> Value {
        json!({"sessionId": "s", "toolCall": {"toolCallId": "t", "title": "Write",
            "kind": kind, "locations": [{"path": path}]},
            "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "no", "name": "Reject", "kind": "reject_once"}]})
    }

    #[test]
    fn edits_inside_the_workspace_are_allowed_and_all_else_is_denied() {
        let ws = Path::new("/w/slot");
        let answer = |kind, path| decide(&request(kind, path), ws).outcome()["optionId"].clone();
        assert_eq!(answer("edit", "/w/slot/src/a.rs"), "yes");
        assert_eq!(answer("edit", "src/a.rs"), "yes");
        assert_eq!(answer("edit", "/w/slot/../other/a.rs"), "no");
        assert_eq!(answer("edit", "/etc/passwd"), "no");
        assert_eq!(answer("execute", "/w/slot/run.sh"), "no");
        assert_eq!(answer("edit", "/w/slot"), "no");
        let no_reject = json!({"toolCall": {"kind": "fetch"},
            "options": [{"optionId": "yes", "kind": "allow_once"}]});
        let denied = decide(&no_reject, ws);
        assert_eq!(denied.outcome(), json!({"outcome": "cancelled"}));
        assert_eq!(denied.log_line(), "denied:  (fetch) []");
    }

    /// claude-code-acp's write: kind `other`, no locations. Denied, and the
    /// denial says why.
    #[test]
    fn a_write_of_kind_other_without_locations_is_denied_saying_why() {
        let ws = Path::new("/w/slot");
        let write = json!({"toolCall": {"title": "Write", "kind": "other"},
            "options": [{"optionId": "yes", "kind": "allow_once"},
                        {"optionId": "no", "kind": "reject_once"}]});
        let answer = decide(&write, ws);
        assert_eq!(answer.outcome()["optionId"], "no");
        assert_eq!(
            answer.log_line(),
            "denied: Write (other) [] (a tool call of kind other with no locations names no file to allow)"
        );
    }

    #[test]
    fn an_edit_offered_only_allow_always_is_rejected() {
        let ws = Path::new("/w/slot");
        let always = json!({"toolCall": {"title": "Write", "kind": "edit",
            "locations": [{"path": "/w/slot/a.rs"}]},
            "options": [{"optionId": "ever", "kind": "allow_always"},
                        {"optionId": "no", "kind": "reject_once"}]});
        let answer = decide(&always, ws);
        assert_eq!(answer.outcome()["optionId"], "no");
        assert_eq!(
            answer.log_line(),
            "denied: Write (edit) [/w/slot/a.rs] (the agent offered no allow_once option)"
        );
        let only_always = json!({"toolCall": {"kind": "edit",
            "locations": [{"path": "/w/slot/a.rs"}]},
            "options": [{"optionId": "ever", "kind": "allow_always"}]});
        assert_eq!(
            decide(&only_always, ws).outcome(),
            json!({"outcome": "cancelled"})
        );
    }
}
