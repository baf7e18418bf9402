//! agb sweep specs: one operation applied to many targets, compiled into an
//! agb plan with one ticket per target.

use crate::diag::{Diagnostic, Sink};
use crate::pointer::Pointer;
use globset::GlobBuilder;
use serde_json::{json, Map, Value};

const KEYS: [&str; 11] = [
    "repo",
    "operation",
    "targets",
    "targetGlob",
    "scopePerTarget",
    "base",
    "gate",
    "tier",
    "pool_hint",
    "caps",
    "prosecution",
];

/// The glob of a spec, if it uses `targetGlob`, so the caller can list the
/// repository's tracked files only when needed.
pub fn target_glob(spec: &Value) -> Option<&str> {
    spec.get("targetGlob").and_then(Value::as_str)
}

/// Compiles a sweep spec into an agb plan. `tracked` is the list of files git
/// tracks in the spec's repository (needed only for `targetGlob`).
pub fn compile(spec: &Value, tracked: Option<&[String]>, sink: &mut dyn Sink) -> Option<Value> {
    let Some(obj) = spec.as_object() else {
        sink.push(Diagnostic::error(
            "sweep.spec.type",
            "",
            "a sweep spec must be a JSON object",
        ));
        return None;
    };
    let mut errors = 0;
    let mut error = |sink: &mut dyn Sink, d: Diagnostic| {
        errors += 1;
        sink.push(d);
    };
    for key in obj.keys().filter(|k| !KEYS.contains(&k.as_str())) {
        sink.push(
            Diagnostic::warning(
                "sweep.field.unknown",
                Pointer::root().key(key),
                format!("unknown sweep field `{key}`; ignored"),
            )
            .at_key(),
        );
    }
    let repo = obj
        .get("repo")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty());
    if repo.is_none() {
        error(
            sink,
            Diagnostic::error("sweep.repo", "/repo", "sweep.repo is required"),
        );
    }
    let operation = match obj.get("operation").and_then(Value::as_str) {
        Some(op) if op.contains("{target}") => Some(op),
        _ => {
            error(
                sink,
                Diagnostic::error(
                    "sweep.operation",
                    "/operation",
                    "sweep.operation must be a string containing `{target}`",
                )
                .with_hint(
                    "`{target}` is replaced by each target path and `{i}` by its 1-based index",
                ),
            );
            None
        }
    };
    let targets = targets(obj, tracked, sink, &mut errors);
    let scope = scope_templates(obj, sink, &mut errors);
    if errors > 0 {
        return None;
    }
    let (operation, targets) = (operation?, targets?);
    let tickets: Vec<Value> = targets
        .iter()
        .enumerate()
        .map(|(k, target)| {
            let i = (k + 1).to_string();
            let fill = |s: &str| s.replace("{target}", target).replace("{i}", &i);
            json!({
                "id": format!("S{i}"),
                "title": format!("sweep: {target}"),
                "body": fill(operation),
                "scope": scope.iter().map(|s| fill(s)).collect::<Vec<_>>(),
                "tier": obj.get("tier").cloned().unwrap_or_else(|| "cheap".into()),
                "pool_hint": obj.get("pool_hint").cloned().unwrap_or_else(|| "auto".into()),
            })
        })
        .collect();
    let mut plan = Map::new();
    plan.insert("repo".into(), repo?.into());
    plan.insert(
        "base".into(),
        obj.get("base").cloned().unwrap_or_else(|| "main".into()),
    );
    for key in ["gate", "caps", "prosecution"] {
        if let Some(v) = obj.get(key) {
            plan.insert(key.into(), v.clone());
        }
    }
    plan.insert("tickets".into(), tickets.into());
    Some(Value::Object(plan))
}

fn targets(
    obj: &Map<String, Value>,
    tracked: Option<&[String]>,
    sink: &mut dyn Sink,
    errors: &mut usize,
) -> Option<Vec<String>> {
    let mut fail = |d: Diagnostic| {
        *errors += 1;
        sink.push(d);
        None
    };
    match (obj.get("targets"), obj.get("targetGlob")) {
        (Some(_), Some(_)) => fail(Diagnostic::error(
            "sweep.targets",
            "/targetGlob",
            "give either `targets` or `targetGlob`, not both",
        )),
        (Some(Value::Array(items)), None) => {
            let list: Option<Vec<String>> =
                items.iter().map(|v| v.as_str().map(String::from)).collect();
            match list {
                Some(list) if !list.is_empty() => Some(list),
                _ => fail(Diagnostic::error(
                    "sweep.targets",
                    "/targets",
                    "sweep.targets must be a non-empty array of paths",
                )),
            }
        }
        (Some(_), None) => fail(Diagnostic::error(
            "sweep.targets",
            "/targets",
            "sweep.targets must be a non-empty array of paths",
        )),
        (None, Some(Value::String(glob))) => {
            let matcher = match GlobBuilder::new(glob).literal_separator(true).build() {
                Ok(g) => g.compile_matcher(),
                Err(e) => {
                    return fail(Diagnostic::error(
                        "sweep.target-glob",
                        "/targetGlob",
                        format!("invalid targetGlob: {e}"),
                    ))
                }
            };
            let list: Vec<String> = tracked
                .unwrap_or_default()
                .iter()
                .filter(|p| matcher.is_match(p.as_str()))
                .cloned()
                .collect();
            if list.is_empty() {
                fail(Diagnostic::error(
                    "sweep.target-glob",
                    "/targetGlob",
                    format!("targetGlob '{glob}' matches no file git tracks in the repository"),
                ))
            } else {
                Some(list)
            }
        }
        (None, Some(_)) => fail(Diagnostic::error(
            "sweep.target-glob",
            "/targetGlob",
            "sweep.targetGlob must be a string",
        )),
        (None, None) => fail(Diagnostic::error(
            "sweep.targets",
            "",
            "a sweep spec needs `targets` or `targetGlob`",
        )),
    }
}

fn scope_templates(
    obj: &Map<String, Value>,
    sink: &mut dyn Sink,
    errors: &mut usize,
) -> Vec<String> {
    match obj.get("scopePerTarget") {
        None => vec!["{target}".to_string()],
        Some(Value::Array(items)) if !items.is_empty() && items.iter().all(Value::is_string) => {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        }
        Some(_) => {
            *errors += 1;
            sink.push(Diagnostic::error(
                "sweep.scope-per-target",
                "/scopePerTarget",
                "sweep.scopePerTarget must be a non-empty array of pathspec templates",
            ));
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_targets_in_order() {
        let spec = json!({"repo": "/r", "operation": "fix {target} ({i})", "targets": ["a.js", "b.js"],
                          "gate": {"test": "npm test"}});
        let mut diags = Vec::new();
        let plan = compile(&spec, None, &mut diags).unwrap();
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(plan["tickets"][1]["id"], "S2");
        assert_eq!(plan["tickets"][1]["body"], "fix b.js (2)");
        assert_eq!(plan["tickets"][1]["title"], "sweep: b.js");
        assert_eq!(plan["tickets"][0]["scope"], json!(["a.js"]));
        assert_eq!(plan["tickets"][0]["tier"], "cheap");
        assert_eq!(plan["base"], "main");
    }

    #[test]
    fn expands_globs_over_tracked_files() {
        let spec = json!({"repo": "/r", "operation": "{target}", "targetGlob": "src/*.js", "scopePerTarget": ["{target}", "test/{i}.js"]});
        let tracked: Vec<String> = ["src/a.js", "src/sub/b.js", "src/c.js", "README.md"]
            .map(String::from)
            .to_vec();
        let plan = compile(&spec, Some(&tracked), &mut Vec::new()).unwrap();
        let ids: Vec<&str> = plan["tickets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["body"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["src/a.js", "src/c.js"]);
        assert_eq!(
            plan["tickets"][1]["scope"],
            json!(["src/c.js", "test/2.js"])
        );
    }

    #[test]
    fn reports_every_problem() {
        let mut diags = Vec::new();
        assert!(compile(&json!({"operation": "no placeholder"}), None, &mut diags).is_none());
        let codes: Vec<&str> = diags.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(codes, ["sweep.repo", "sweep.operation", "sweep.targets"]);
    }
}
