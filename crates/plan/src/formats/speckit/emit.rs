//! Writing a plan as a Spec Kit tasks.md. A plan read from one is written
//! with its phases, sections and task lines as they were, when reading
//! that back gives the plan's dependencies; any other plan is written as
//! one phase per wave of the DAG, every task `[P]`.

use crate::diag::{Diagnostic, Sink};
use crate::model::{Plan, Ticket};
use crate::pointer::Pointer;
use serde_json::Value;
use std::collections::HashMap;

/// Writes `plan` as a tasks.md.
pub(super) fn emit(plan: &Plan, sink: &mut dyn Sink) -> String {
    if !plan.gates.is_empty() {
        sink.push(
            Diagnostic::warning(
                "speckit.emit.plan-gates",
                "/gates",
                "a tasks.md has no gates; they are not written",
            )
            .with_hint(format!(
                "give them at run time with `[gates] run` or `{}`",
                crate::Flag::Gate
            )),
        );
    }
    let ids = ids(plan, sink);
    if let Some(text) = as_read(plan, &ids) {
        return text;
    }
    waves(plan, &ids, sink)
}

/// Each ticket's task id: its own when all are `T` and a number, else
/// T001, T002, ... in plan order.
fn ids(plan: &Plan, sink: &mut dyn Sink) -> HashMap<String, String> {
    let own = plan.tickets.iter().all(|t| super::ID_RE.is_match(&t.id));
    plan.tickets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if own {
                return (t.id.clone(), t.id.clone());
            }
            let id = format!("T{:03}", i + 1);
            sink.push(Diagnostic::warning(
                "speckit.emit.id",
                Pointer::root().key("tickets").index(i).key("id"),
                format!(
                    "{}: Spec Kit task ids are `T` and a number; written as {id}",
                    t.id
                ),
            ));
            (t.id.clone(), id)
        })
        .collect()
}

fn meta<'a>(t: &'a Ticket, key: &str) -> Option<&'a Value> {
    t.metadata.get("speckit")?.get(key)
}

/// The source's layout with the tickets in it, when every ticket came
/// from it unchanged and reading the text back gives the plan's order.
fn as_read(plan: &Plan, ids: &HashMap<String, String>) -> Option<String> {
    let source = plan.metadata.get("speckit")?;
    let phases = source.get("phases")?.as_array()?;
    let mut out = title(
        source
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or("Tasks"),
    );
    let mut at: Option<(u64, u64)> = None;
    for t in &plan.tickets {
        let phase = meta(t, "phase")?.as_u64()?;
        let section = meta(t, "section")?.as_u64()?;
        if at.map(|a| a.0) != Some(phase) {
            let p = phases.get(phase as usize)?;
            if let Some(h) = p.get("heading").and_then(Value::as_str) {
                out.push_str(&format!("\n## {h}\n\n"));
            }
            for n in p
                .get("notes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                out.push_str(&format!("{n}\n\n"));
            }
        } else if at.map(|a| a.1) != Some(section) {
            out.push_str(&format!("\n### Part {}\n\n", section + 1));
        }
        at = Some((phase, section));
        let description = meta(t, "description")?.as_str()?;
        let more: Vec<&str> = meta(t, "more")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        out.push_str(&line(t, ids, description, &more));
    }
    let back = super::validate(
        &super::read::parse("", out.clone()).ok()?.value(),
        &mut Vec::new(),
    )?;
    let same = back.tickets.len() == plan.tickets.len()
        && back.tickets.iter().zip(&plan.tickets).all(|(b, t)| {
            b.id == t.id
                && b.body == t.body
                && b.scope == t.scope
                && sorted(&b.depends_on) == sorted(&t.depends_on)
        });
    same.then_some(out)
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

fn title(text: &str) -> String {
    format!("# {text}\n")
}

fn line(t: &Ticket, ids: &HashMap<String, String>, description: &str, more: &[&str]) -> String {
    let mut labels = String::new();
    if meta(t, "parallel").and_then(Value::as_bool) == Some(true) {
        labels.push_str(" [P]");
    }
    if let Some(story) = meta(t, "story").and_then(Value::as_str) {
        labels.push_str(&format!(" [{story}]"));
    }
    let id = ids.get(&t.id).map_or(t.id.as_str(), String::as_str);
    let mut out = format!("- [ ] {id}{labels} {description}\n");
    for m in more {
        out.push_str(&format!("  {m}\n"));
    }
    out
}

/// One phase per wave: a ticket goes in the phase after its deepest
/// dependency's; all of a phase's tasks are `[P]`.
fn waves(plan: &Plan, ids: &HashMap<String, String>, sink: &mut dyn Sink) -> String {
    let depth = crate::analysis::wave_of(plan, &crate::graph::TicketGraph::new(plan));
    let count = depth.values().max().map_or(0, |d| d + 1);
    let mut out = title(&format!(
        "Tasks: plan converted from {}",
        plan.source_format
    ));
    for k in 0..count {
        out.push_str(&format!("\n## Phase {}\n\n", k + 1));
        let members: Vec<(usize, &Ticket)> = plan
            .tickets
            .iter()
            .enumerate()
            .filter(|(_, t)| depth.get(t.id.as_str()) == Some(&k))
            .collect();
        let before: Vec<&str> = plan
            .tickets
            .iter()
            .filter(|t| k > 0 && depth.get(t.id.as_str()) == Some(&(k - 1)))
            .map(|t| t.id.as_str())
            .collect();
        if members
            .iter()
            .any(|(_, t)| before.iter().any(|b| !t.depends_on.iter().any(|d| d == b)))
        {
            let names: Vec<&str> = members.iter().map(|(_, t)| t.id.as_str()).take(5).collect();
            sink.push(Diagnostic::warning(
                "speckit.emit.order",
                "/tickets",
                format!("phases are barriers: in phase {}, {} wait for every task of the phase before, not only their dependencies", k + 1, names.join(", ")),
            ));
        }
        for (i, t) in members {
            out.push_str(&task_line(t, i, ids, sink));
        }
    }
    out
}

/// A ticket as a `[P]` task line: its title (or first line) and the
/// files of its scope, then the rest of its body indented under it.
fn task_line(t: &Ticket, i: usize, ids: &HashMap<String, String>, sink: &mut dyn Sink) -> String {
    let first = t.body.lines().next().unwrap_or_default().trim();
    let head = if t.title.is_empty() {
        first.to_string()
    } else {
        t.title.replace('\n', " ")
    };
    let mut description = head.clone();
    let mut files = Vec::new();
    for s in &t.scope {
        let written = match s.pattern.strip_suffix("/**") {
            Some(folder) => format!("{folder}/"),
            None if !s.pattern.contains('/') => format!("`{}`", s.pattern),
            None => s.pattern.clone(),
        };
        if super::paths(&written).len() == 1 && s.pattern != "**" {
            files.push(written);
        } else if s.pattern != "**" {
            sink.push(Diagnostic::warning(
                "speckit.emit.files",
                Pointer::root().key("tickets").index(i).key("scope"),
                format!(
                    "{}: a task line names files by path; `{}` is not written",
                    t.id, s.pattern
                ),
            ));
        }
    }
    files.retain(|f| !head.contains(f.as_str()));
    if !files.is_empty() {
        description.push_str(&format!(" in {}", files.join(", ")));
    }
    let skip = if t.title.is_empty() || first == t.title {
        1
    } else {
        0
    };
    let more: Vec<&str> = t
        .body
        .lines()
        .skip(skip)
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let id = ids.get(&t.id).map_or(t.id.as_str(), String::as_str);
    let mut out = format!("- [ ] {id} [P] {description}\n");
    for m in more {
        out.push_str(&format!("  {}\n", m.trim_start()));
    }
    out
}
