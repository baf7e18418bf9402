//! A valid standard_v1 document as the IR: one ticket, or one per
//! `decomposition.sub_plans` entry, or one per `split_proposal.phases`
//! entry. Everything the IR has no field for stays in `metadata`, so
//! [`super::emit`] writes the same document back.

use super::access::{arr, str};
use crate::model::{
    Counterfactual, CounterfactualTests, Format, Mutation, Plan, Review, ScopeEntry, ScopeOp,
    Ticket,
};
use crate::refname::ref_name_problem;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The base branch a standard_v1 plan runs on: the format names none.
pub(super) const BASE: &str = "main";

/// The ticket id of a single-ticket plan whose `ticket_reference.id` is
/// not a valid branch name.
pub(super) const FALLBACK_ID: &str = "plan";

/// Which list of the document became the tickets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Single,
    SubPlans,
    Phases,
}

impl Shape {
    fn of(plan: &Value) -> Shape {
        let sub = plan
            .get("decomposition")
            .map_or(&[][..], |d| arr(d, "sub_plans"));
        let phases = plan
            .get("split_proposal")
            .map_or(&[][..], |s| arr(s, "phases"));
        if !sub.is_empty() {
            Shape::SubPlans
        } else if !phases.is_empty() {
            Shape::Phases
        } else {
            Shape::Single
        }
    }
}

/// The IR of a document that passed the schema and the semantic rules.
pub(super) fn to_plan(doc: &Value) -> Option<Plan> {
    let root = doc.as_object()?;
    let shape = Shape::of(doc);
    let mut metadata = match shape {
        Shape::Single => root.clone(),
        Shape::SubPlans => fields_but(root, "decomposition", "sub_plans"),
        Shape::Phases => fields_but(root, "split_proposal", "phases"),
    };
    metadata.remove("plan_version");
    if shape == Shape::Single {
        // Slices keep the source order of the counterfactuals they share out.
        metadata.remove("counterfactuals");
    }
    let mut tickets = match shape {
        Shape::Single => {
            if let Some(rest) = without(&doc["scope"], &["files"]) {
                metadata.insert("scope".into(), rest);
            } else {
                metadata.remove("scope");
            }
            vec![single(doc)]
        }
        Shape::SubPlans => {
            strip(&mut metadata, "decomposition", "sub_plans");
            slices(doc, arr(&doc["decomposition"], "sub_plans"), "sub")
        }
        Shape::Phases => {
            strip(&mut metadata, "split_proposal", "phases");
            slices(doc, arr(&doc["split_proposal"], "phases"), "phase")
        }
    };
    attach_counterfactuals(doc, &mut tickets);
    attach_checks(doc, &mut tickets);
    Some(Plan {
        source_format: Format::StandardV1,
        repo: None,
        base: BASE.into(),
        gates: Vec::new(),
        tickets,
        caps: BTreeMap::new(),
        review: Review::default(),
        metadata,
    })
}

/// `obj` without `keys`, or `None` when nothing is left.
fn without(obj: &Value, keys: &[&str]) -> Option<Value> {
    let mut map = obj.as_object()?.clone();
    for k in keys {
        map.remove(*k);
    }
    (!map.is_empty()).then_some(Value::Object(map))
}

/// The document's fields with `null` for the `list` of `key` that becomes
/// the tickets, which [`strip`] then removes as it removed the list: a
/// large plan's tickets are not copied into `metadata` first (issue 53).
fn fields_but(root: &Map<String, Value>, key: &str, list: &str) -> Map<String, Value> {
    let field = |(k, v): (&String, &Value)| {
        let v = match v {
            Value::Object(obj) if k == key => {
                let nulled = |(k, v): (&String, &Value)| {
                    let v = if k == list { Value::Null } else { v.clone() };
                    (k.clone(), v)
                };
                Value::Object(obj.iter().map(nulled).collect())
            }
            _ => v.clone(),
        };
        (k.clone(), v)
    };
    root.iter().map(field).collect()
}

fn strip(metadata: &mut Map<String, Value>, key: &str, list: &str) {
    if let Some(Value::Object(obj)) = metadata.get_mut(key) {
        obj.remove(list);
    }
}

fn scope(v: &Value) -> Vec<ScopeEntry> {
    let files = v.get("scope").map_or(&[][..], |s| arr(s, "files"));
    files
        .iter()
        .filter_map(|f| {
            let op = match str(f, "operation")? {
                "create" => ScopeOp::Create,
                "delete" => ScopeOp::Delete,
                _ => ScopeOp::Modify,
            };
            Some(ScopeEntry {
                pattern: str(f, "path")?.to_string(),
                op,
            })
        })
        .collect()
}

fn minutes(v: &Value) -> Option<u32> {
    v.get("predicted_runtime_minutes")
        .and_then(Value::as_u64)
        .and_then(|m| u32::try_from(m).ok())
}

fn model(v: &Value) -> Option<String> {
    v.get("model_recommendation")
        .and_then(|m| str(m, "implement_model"))
        .map(String::from)
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

fn ticket(id: String, title: String, body: String) -> Ticket {
    Ticket {
        title,
        ..Ticket::new(id, body)
    }
}

/// The charter of a single-ticket plan: everything the agent should read.
fn charter(doc: &Value) -> String {
    let mut body = str(doc, "summary").unwrap_or("").to_string();
    body.push_str("\n\nApproach:\n");
    for step in arr(doc, "approach") {
        let n = step.get("step").and_then(Value::as_u64).unwrap_or(0);
        body.push_str(&format!(
            "{n}. {}\n",
            str(step, "description").unwrap_or("")
        ));
    }
    let v = &doc["verification"];
    body.push_str(&format!(
        "\nTest strategy: {}\nRollback plan: {}\n",
        str(v, "test_strategy").unwrap_or(""),
        str(v, "rollback_plan").unwrap_or("")
    ));
    for (title, list) in [
        ("Out of scope", arr(v, "out_of_scope")),
        ("Risks and assumptions", arr(doc, "risks_and_assumptions")),
    ] {
        if !list.is_empty() {
            body.push_str(&format!("\n{title}:\n"));
            for item in list.iter().filter_map(Value::as_str) {
                body.push_str(&format!("- {item}\n"));
            }
        }
    }
    body
}

fn single(doc: &Value) -> Ticket {
    let id = doc
        .get("ticket_reference")
        .and_then(|r| str(r, "id"))
        .filter(|id| ref_name_problem(id).is_none())
        .unwrap_or(FALLBACK_ID);
    let mut t = ticket(
        id.to_string(),
        first_line(str(doc, "summary").unwrap_or("")),
        charter(doc),
    );
    t.scope = scope(doc);
    t.estimate_minutes = minutes(doc);
    t.model = model(doc);
    t
}

/// One ticket per slice (`sub-1`, `sub-2`, ... or `phase-1`, ...).
fn slices(doc: &Value, list: &[Value], prefix: &str) -> Vec<Ticket> {
    let summary = str(doc, "summary").unwrap_or("");
    let n = list.len();
    let id = |i: usize| format!("{prefix}-{}", i + 1);
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            let title = str(s, "title").unwrap_or("").to_string();
            let hint = str(s, "scope_hint").unwrap_or("");
            let body = format!("{title}\n\n{hint}\n\nPart {} of {n} of: {summary}\n", i + 1);
            let mut t = ticket(id(i), title, body);
            t.scope = scope(s);
            t.depends_on = arr(s, "depends_on")
                .iter()
                .filter_map(Value::as_u64)
                .map(|d| id(d as usize))
                .collect();
            t.estimate_minutes = minutes(s);
            t.model = model(s);
            let mut meta = s.as_object().cloned().unwrap_or_default();
            for k in ["title", "depends_on", "predicted_runtime_minutes"] {
                meta.remove(k);
            }
            match without(&s["scope"], &["files"]) {
                Some(rest) => meta.insert("scope".into(), rest),
                None => meta.remove("scope"),
            };
            t.metadata = meta.into();
            t
        })
        .collect()
}

fn counterfactual(c: &Value) -> Option<Counterfactual> {
    let m = c.get("mutation")?;
    let mutation = match (str(m, "find"), str(m, "replace"), str(m, "patch")) {
        (Some(find), Some(replace), None) => Mutation::FindReplace {
            find: find.into(),
            replace: replace.into(),
        },
        (None, None, Some(patch)) => Mutation::Patch {
            patch: patch.into(),
        },
        _ => return None,
    };
    let tests = c.get("tests")?;
    Some(Counterfactual {
        control_path: str(c, "control_path")?.into(),
        mutation,
        tests: CounterfactualTests {
            run: str(tests, "run")?.into(),
            package: str(tests, "package").map(String::from),
            argv: None,
        },
    })
}

/// Tickets no other ticket depends on: they see every change when they run.
fn last_sink(tickets: &[Ticket]) -> usize {
    (0..tickets.len())
        .rev()
        .find(|&i| {
            !tickets
                .iter()
                .any(|t| t.depends_on.contains(&tickets[i].id))
        })
        .unwrap_or(tickets.len().saturating_sub(1))
}

/// Each counterfactual goes to the slice that scopes its control_path (it
/// needs that slice's change), else to the last slice nothing depends on.
fn attach_counterfactuals(doc: &Value, tickets: &mut [Ticket]) {
    let fallback = last_sink(tickets);
    for c in arr(doc, "counterfactuals")
        .iter()
        .filter_map(counterfactual)
    {
        let owner = tickets
            .iter()
            .position(|t| t.scope.iter().any(|s| s.pattern == c.control_path))
            .unwrap_or(fallback);
        if let Some(t) = tickets.get_mut(owner) {
            t.counterfactuals.push(c);
        }
    }
}

/// Acceptance criteria judge the whole change, so they go to the last
/// slice nothing depends on.
fn attach_checks(doc: &Value, tickets: &mut [Ticket]) {
    let at = last_sink(tickets);
    let criteria = arr(&doc["verification"], "acceptance_criteria");
    if let Some(t) = tickets.get_mut(at) {
        t.checks = criteria
            .iter()
            .filter_map(|c| str(c, "statement"))
            .map(String::from)
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `metadata` made without copying the tickets' list is what stripping
    /// the list from a whole copy gave, its keys in the same order.
    #[test]
    fn fields_without_the_list_are_a_stripped_copy() {
        let doc = json!({"summary": "s",
            "decomposition": {"sub_plans": [{"title": "a"}], "rationale": "r", "x": [1]},
            "split_proposal": {"phases": [1]}});
        let root = doc.as_object().unwrap();
        let mut copied = root.clone();
        strip(&mut copied, "decomposition", "sub_plans");
        let mut made = fields_but(root, "decomposition", "sub_plans");
        strip(&mut made, "decomposition", "sub_plans");
        assert_eq!(
            Value::Object(made).to_string(),
            Value::Object(copied).to_string()
        );
    }
}
