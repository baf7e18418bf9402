//! The semantic rules of fishhawk's `plan.Parse` and `plan.Validate`: what
//! the schema cannot say. Messages keep fishhawk's `plan: semantic: `
//! prefix so they read the same as in fishhawk's own logs.

use super::access::{arr, files, str};
use super::MAX_COUNTERFACTUALS;
use crate::diag::{Diagnostic, Sink};
use crate::pointer::Pointer;
use crate::words::quoted;
use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;
use serde_json::Value;
use std::collections::HashMap;

fn err(code: &str, at: impl Into<String>, message: impl AsRef<str>) -> Diagnostic {
    Diagnostic::error(
        format!("standard_v1.{code}"),
        at,
        format!("plan: semantic: {}", message.as_ref()),
    )
}

fn blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// Pushes one error per semantic rule broken anywhere in `plan`.
pub(super) fn check(plan: &Value, sink: &mut dyn Sink) {
    criteria(plan, sink);
    split(plan, sink);
    irreducible(plan, sink);
    sub_plans(plan, sink);
    delivery(plan, sink);
    decision(plan, sink);
    counterfactuals(plan, sink);
}

fn criteria(plan: &Value, sink: &mut dyn Sink) {
    let Some(verification) = plan.get("verification") else {
        return;
    };
    let at = Pointer::root()
        .key("verification")
        .key("acceptance_criteria");
    let list = arr(verification, "acceptance_criteria");
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, c) in list.iter().enumerate() {
        let Some(id) = str(c, "id") else { continue };
        if let Some(first) = seen.get(id) {
            sink.push(
                err(
                    "criterion.duplicate-id",
                    at.index(i).key("id"),
                    format!("duplicate acceptance criterion id {} (acceptance_criteria[{first}] has it too)", quoted(id)),
                )
                .with_hint("criterion ids are the join key downstream; give each a unique slug"),
            );
        } else {
            seen.insert(id, i);
        }
    }
    if str(verification, "acceptance_surface") != Some("none") {
        return;
    }
    for (i, c) in list.iter().enumerate() {
        let skip = c.get("skip_expected") == Some(&Value::Bool(true));
        let basis = str(c, "expectation_basis").is_some_and(|b| !blank(b));
        if !(skip && basis) {
            sink.push(
                err(
                    "acceptance-surface.drivable-criterion",
                    at.index(i),
                    format!(
                        "acceptance_surface none declares no observable surface, but acceptance criterion {} is drivable (not skip_expected with an expectation_basis)",
                        quoted(str(c, "id").unwrap_or("?"))
                    ),
                )
                .with_hint("remove `verification.acceptance_surface`, or mark the criterion skip_expected with an expectation_basis"),
            );
        }
    }
}

fn titles(list: &[Value], at: &Pointer, what: &str, code: &str, sink: &mut dyn Sink) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, p) in list.iter().enumerate() {
        let Some(title) = str(p, "title") else {
            continue;
        };
        match seen.get(title) {
            Some(first) => sink.push(err(
                code,
                at.index(i).key("title"),
                format!(
                    "{what} {i} has the duplicate title {} ({what} {first} has it too)",
                    quoted(title)
                ),
            )),
            None => {
                seen.insert(title, i);
            }
        }
    }
}

/// `depends_on` indexes: in range, not self, no cycle. `what` names an entry
/// in messages (`sub_plan`), `group` the list (`sub_plans`), `code` the
/// code prefix (`sub-plan`).
fn depends_on(
    list: &[Value],
    at: &Pointer,
    what: &str,
    group: &str,
    code: &str,
    sink: &mut dyn Sink,
) {
    let n = list.len();
    let mut g = DiGraph::<usize, ()>::with_capacity(n, n);
    let nodes: Vec<_> = (0..n).map(|i| g.add_node(i)).collect();
    for (i, p) in list.iter().enumerate() {
        for (k, d) in arr(p, "depends_on").iter().enumerate() {
            let Some(d) = d.as_u64() else { continue };
            let dat = at.index(i).key("depends_on").index(k);
            if d as usize >= n {
                sink.push(err(
                    &format!("{code}.depends-on-range"),
                    dat,
                    format!("{what} {i} depends_on index {d} out of range [0,{n})"),
                ));
            } else if d as usize == i {
                sink.push(err(
                    &format!("{code}.depends-on-self"),
                    dat,
                    format!("{what} {i} depends_on itself"),
                ));
            } else {
                g.add_edge(nodes[d as usize], nodes[i], ());
            }
        }
    }
    let mut cycles: Vec<Vec<usize>> = tarjan_scc(&g)
        .into_iter()
        .filter(|scc| scc.len() > 1)
        .map(|scc| {
            let mut ids: Vec<usize> = scc.into_iter().map(|x| g[x]).collect();
            ids.sort_unstable();
            ids
        })
        .collect();
    cycles.sort();
    for cycle in cycles {
        let names: Vec<String> = cycle.iter().map(usize::to_string).collect();
        sink.push(
            err(
                &format!("{code}.cycle"),
                at.index(cycle[0]).key("depends_on"),
                format!("dependency cycle among {group} [{}]", names.join(" ")),
            )
            .with_hint("remove one of the depends_on edges between these entries"),
        );
    }
}

fn split(plan: &Value, sink: &mut dyn Sink) {
    let Some(sp) = plan.get("split_proposal") else {
        return;
    };
    let at = Pointer::root().key("split_proposal").key("phases");
    let phases = arr(sp, "phases");
    titles(
        phases,
        &at,
        "split_proposal phase",
        "phase.duplicate-title",
        sink,
    );
    depends_on(
        phases,
        &at,
        "split_proposal phase",
        "split_proposal phases",
        "phase",
        sink,
    );
}

fn irreducible(plan: &Value, sink: &mut dyn Sink) {
    let Some(irr) = plan.get("irreducible") else {
        return;
    };
    if plan.get("split_proposal").is_some() {
        sink.push(
            err(
                "irreducible.with-split",
                "/irreducible",
                "irreducible and split_proposal are mutually exclusive: a plan cannot both decline and propose a split",
            )
            .with_hint("keep split_proposal if the change can be phased, irreducible if it cannot"),
        );
    }
    if str(irr, "rationale").is_some_and(blank) {
        sink.push(
            err(
                "irreducible.blank-rationale",
                "/irreducible/rationale",
                "irreducible.rationale is blank; a bare declaration is not a declaration",
            )
            .with_hint("say why the change is compile-atomic"),
        );
    }
}

fn sub_plans(plan: &Value, sink: &mut dyn Sink) {
    let Some(dec) = plan.get("decomposition") else {
        return;
    };
    let at = Pointer::root().key("decomposition").key("sub_plans");
    let list = arr(dec, "sub_plans");
    titles(list, &at, "sub_plan", "sub-plan.duplicate-title", sink);
    let mut owner: HashMap<&str, usize> = HashMap::new();
    for (i, p) in list.iter().enumerate() {
        if !p.is_object() {
            continue;
        }
        // An empty or missing `files` under a present scope is the schema's.
        if p.get("scope").is_none() {
            sink.push(
                err(
                    "sub-plan.no-files",
                    at.index(i),
                    format!("sub_plan {i} has no scope.files"),
                )
                .with_hint("give every sub-plan the files of its slice in `scope.files`"),
            );
        }
        for (k, path) in files(p) {
            match owner.get(path) {
                Some(&first) if first != i => sink.push(
                    err(
                        "sub-plan.file-overlap",
                        at.index(i).key("scope").key("files").index(k).key("path"),
                        format!(
                            "file {} is scoped by sub_plan {first} and sub_plan {i}",
                            quoted(path)
                        ),
                    )
                    .with_hint("each file belongs to exactly one slice"),
                ),
                Some(_) => {}
                None => {
                    owner.insert(path, i);
                }
            }
        }
    }
    depends_on(list, &at, "sub_plan", "sub_plans", "sub-plan", sink);
}

fn delivery(plan: &Value, sink: &mut dyn Sink) {
    let Some(rest) = str(plan, "remaining_scope") else {
        return;
    };
    if str(plan, "delivery") != Some("partial") {
        sink.push(
            err(
                "remaining-scope.not-partial",
                "/remaining_scope",
                "remaining_scope is set but delivery is not partial",
            )
            .with_hint(
                "set `delivery` to \"partial\", or remove `remaining_scope` for a full delivery",
            ),
        );
    }
    if blank(rest) && !rest.is_empty() {
        sink.push(err(
            "remaining-scope.blank",
            "/remaining_scope",
            "remaining_scope is blank",
        ));
    }
}

fn decision(plan: &Value, sink: &mut dyn Sink) {
    let Some(d) = plan.get("new_architectural_decision") else {
        return;
    };
    let at = Pointer::root().key("new_architectural_decision");
    for key in ["rationale", "decision_summary"] {
        if str(d, key).is_some_and(|s| blank(s) && !s.is_empty()) {
            sink.push(err(
                "decision.blank",
                at.key(key),
                format!("new_architectural_decision.{key} is blank"),
            ));
        }
    }
    for (i, adr) in arr(d, "related_adrs").iter().enumerate() {
        if adr.as_str().is_some_and(|s| blank(s) && !s.is_empty()) {
            sink.push(err(
                "decision.blank",
                at.key("related_adrs").index(i),
                format!("new_architectural_decision.related_adrs[{i}] is blank"),
            ));
        }
    }
}

/// Why `path` is not a clean repository-relative path, if it is not.
fn path_problem(path: &str) -> Option<&'static str> {
    if blank(path) {
        Some("is blank")
    } else if path.starts_with('/') {
        Some("is absolute")
    } else if path.contains('\\') {
        Some("contains a backslash")
    } else if path.split('/').any(|s| s == "..") {
        Some("contains a `..` segment")
    } else {
        None
    }
}

fn counterfactuals(plan: &Value, sink: &mut dyn Sink) {
    let list = arr(plan, "counterfactuals");
    let at = Pointer::root().key("counterfactuals");
    if list.len() > MAX_COUNTERFACTUALS {
        sink.push(
            err(
                "counterfactual.count",
                at.index(MAX_COUNTERFACTUALS),
                format!(
                    "{}; at most {MAX_COUNTERFACTUALS} are allowed",
                    crate::words::count(list.len(), "counterfactual")
                ),
            )
            .with_hint("keep the counterfactuals of the controls that matter most"),
        );
    }
    for (i, c) in list.iter().enumerate() {
        counterfactual(c, &at.index(i), i, sink);
    }
}

/// The rules of one counterfactual (the `i`-th, at `at`).
pub(super) fn counterfactual(c: &Value, at: &Pointer, i: usize, sink: &mut dyn Sink) {
    let control = str(c, "control_path");
    if let Some(path) = control {
        // An empty path is the schema's minLength; report only what it misses.
        if let Some(why) = path_problem(path).filter(|_| !path.is_empty()) {
            sink.push(
                err(
                    "counterfactual.control-path",
                    at.key("control_path"),
                    format!("counterfactuals[{i}].control_path {} {why}", quoted(path)),
                )
                .with_hint("name the production file as a repository-relative path such as `backend/internal/plan/validate.go`"),
            );
        } else if path.ends_with("_test.go") {
            sink.push(
                err(
                    "counterfactual.test-file",
                    at.key("control_path"),
                    format!("counterfactuals[{i}].control_path {} names a _test.go file; a test-side control cannot be shown load-bearing by its own tests", quoted(path)),
                )
                .with_hint("name the production file holding the control"),
            );
        }
    }
    if let Some(m) = c.get("mutation").filter(|m| m.is_object()) {
        mutation(m, control, &at.key("mutation"), i, sink);
    }
    if let Some(t) = c.get("tests").filter(|t| t.is_object()) {
        let tat = at.key("tests");
        if str(t, "run").is_some_and(|r| blank(r) && !r.is_empty()) {
            sink.push(
                err(
                    "counterfactual.tests-run",
                    tat.key("run"),
                    format!("counterfactuals[{i}].tests.run is blank"),
                )
                .with_hint("name the `go test -run` selector, e.g. `^TestValidate$`"),
            );
        }
        if let Some(pkg) = str(t, "package") {
            let why = if pkg.starts_with('/') {
                Some("is absolute")
            } else if pkg.split('/').any(|s| s == "..") {
                Some("contains a `..` segment")
            } else {
                None
            };
            if let Some(why) = why {
                sink.push(
                    err(
                        "counterfactual.tests-package",
                        tat.key("package"),
                        format!("counterfactuals[{i}].tests.package {} {why}", quoted(pkg)),
                    )
                    .with_hint(
                        "use a repository-relative package path such as `./backend/internal/plan`",
                    ),
                );
            }
        }
    }
}

fn mutation(m: &Value, control: Option<&str>, at: &Pointer, i: usize, sink: &mut dyn Sink) {
    let (find, replace, patch) = (str(m, "find"), str(m, "replace"), str(m, "patch"));
    let form = match (find.is_some() || replace.is_some(), patch.is_some()) {
        (true, true) => Some("has both a find/replace and a patch"),
        (false, false) => Some("has neither find+replace nor patch"),
        (true, false) if find.is_none() => Some("has replace without find"),
        (true, false) if replace.is_none() => Some("has find without replace"),
        _ => None,
    };
    if let Some(why) = form {
        sink.push(
            err(
                "counterfactual.mutation-form",
                at,
                format!("counterfactuals[{i}].mutation {why}; exactly one form is allowed"),
            )
            .with_hint("use either `find` + `replace` or `patch`"),
        );
        return;
    }
    if let (Some(f), Some(r)) = (find, replace) {
        if f == r {
            sink.push(err(
                "counterfactual.mutation-noop",
                at.key("replace"),
                format!("counterfactuals[{i}].mutation.replace equals find; the mutation changes nothing"),
            ));
        }
    }
    if let (Some(p), Some(control)) = (patch, control) {
        let touched = patch_files(p);
        if touched.is_empty() && !p.is_empty() {
            sink.push(err(
                "counterfactual.patch-file",
                at.key("patch"),
                format!("counterfactuals[{i}].mutation.patch names no file (no `---`/`+++` header); it must touch control_path {}", quoted(control)),
            ));
        }
        for f in touched.into_iter().filter(|f| f != control) {
            sink.push(
                err(
                    "counterfactual.patch-file",
                    at.key("patch"),
                    format!("counterfactuals[{i}].mutation.patch touches {}, not control_path {}", quoted(&f), quoted(control)),
                )
                .with_hint("a counterfactual mutates only its control_path; split it into one counterfactual per file"),
            );
        }
    }
}

/// The files a unified diff names in its `diff --git`, `---` and `+++`
/// headers, without the `a/`/`b/` prefixes, in order, once each.
pub(super) fn patch_files(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |p: &str| {
        let p = p.split('\t').next().unwrap_or(p).trim_end();
        let p = p
            .strip_prefix("a/")
            .or_else(|| p.strip_prefix("b/"))
            .unwrap_or(p);
        if p != "/dev/null" && !p.is_empty() && !out.iter().any(|o| o == p) {
            out.push(p.to_string());
        }
    };
    for line in patch.lines() {
        if let Some(rest) = line
            .strip_prefix("--- ")
            .or_else(|| line.strip_prefix("+++ "))
        {
            add(rest);
        } else if let Some(rest) = line.strip_prefix("diff --git ") {
            for part in rest.split(' ') {
                add(part);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_headers_name_files() {
        let p = "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n--- a/y.go\t2020\n+++ /dev/null\n";
        assert_eq!(patch_files(p), vec!["x.go", "y.go"]);
        assert!(patch_files("@@ -1 +1 @@\n-a\n+b\n").is_empty());
    }

    #[test]
    fn path_problems() {
        assert_eq!(path_problem(" "), Some("is blank"));
        assert_eq!(path_problem("/a"), Some("is absolute"));
        assert_eq!(path_problem("a\\b"), Some("contains a backslash"));
        assert_eq!(path_problem("a/../b"), Some("contains a `..` segment"));
        assert_eq!(path_problem("a/..b"), None);
    }
}
