//! What a conversion lost, found by reading the written document back and
//! comparing it with the plan it came from: a safety net under the
//! writers' own warnings, so that every piece of meaning the target cannot
//! hold is named, ticket by ticket and item by item.

use crate::diag::Diagnostic;
use crate::model::{Format, Gate, Plan, ScopeEntry, ScopeOp, Ticket};
use std::collections::{HashMap, HashSet};

/// One `convert.lost` warning per item of `original` missing from `back`
/// (the converted document read back), unless one of `said` (the writer's
/// warnings) already names that field of that ticket.
pub fn losses(original: &Plan, back: &Plan, to: Format, said: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let lost =
        |out: &mut Vec<Diagnostic>, ticket: Option<(usize, &str)>, field: &str, item: String| {
            if covered(said, ticket.map(|(_, id)| id), field) {
                return;
            }
            let (pointer, who) = match ticket {
                Some((i, id)) => (format!("/tickets/{i}/{field}"), format!("{id}: ")),
                None => (format!("/{field}"), String::new()),
            };
            out.push(
                Diagnostic::warning(
                    "convert.lost",
                    pointer,
                    format!("{who}{to} cannot express {item}; it is not in the output"),
                )
                .with_hint("carry it over by hand, or keep the plan in a format that can say it"),
            );
        };
    plan_level(original, back, &mut |field, item| {
        lost(&mut out, None, field, item)
    });
    let matched = match_tickets(original, back);
    let back_deps: HashMap<&str, &[String]> = (back.tickets.iter())
        .map(|t| (t.id.as_str(), t.depends_on.as_slice()))
        .collect();
    let back_ids: HashMap<&str, &str> = matched
        .iter()
        .filter_map(|(o, b)| Some((o.id.as_str(), (*b)?.id.as_str())))
        .collect();
    for (i, (t, b)) in matched.iter().enumerate() {
        let Some(b) = b else {
            lost(
                &mut out,
                Some((i, &t.id)),
                "id",
                format!("ticket `{}`", t.id),
            );
            continue;
        };
        // A title written back as another one is changed, not lost: say to what.
        let retitled = !t.title.is_empty() && !b.title.is_empty() && t.title != b.title;
        if retitled && !covered(said, Some(&t.id), "title") {
            out.push(
                Diagnostic::warning(
                    "convert.changed",
                    format!("/tickets/{i}/title"),
                    format!(
                        "{}: {to} cannot keep the title `{}`; it reads back as `{}`",
                        t.id, t.title, b.title
                    ),
                )
                .with_hint("carry the title over by hand, or keep the plan in a format that can say it"),
            );
        }
        // A dependency the output leaves to the order (it still waits for
        // it, through another) is reduced, not lost.
        for d in &t.depends_on {
            let Some(bd) = back_ids.get(d.as_str()) else { continue };
            if !b.depends_on.iter().any(|x| x == bd) && waits_for(&back_deps, &b.id, bd) {
                out.push(Diagnostic::warning(
                    "convert.reduced",
                    format!("/tickets/{i}/depends_on"),
                    format!("{}: {to} writes the dependency on {d} as implied: the ticket still waits for it, through the tickets it depends on", t.id),
                ));
            }
        }
        let orig_gates = effective_gates(original, t);
        let back_gates = effective_gates(back, b);
        ticket_level(
            t,
            b,
            &back_ids,
            &orig_gates,
            &back_gates,
            &|bd| waits_for(&back_deps, &b.id, bd),
            &mut |field, item| lost(&mut out, Some((i, &t.id)), field, item),
        );
    }
    out
}

/// Whether ticket `id` waits for `dep` under `deps` (each ticket's
/// dependencies), directly or through others.
fn waits_for(deps: &HashMap<&str, &[String]>, id: &str, dep: &str) -> bool {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack = vec![id];
    while let Some(at) = stack.pop() {
        for d in deps.get(at).copied().unwrap_or_default() {
            if d == dep {
                return true;
            }
            if seen.insert(d) {
                stack.push(d);
            }
        }
    }
    false
}

/// Whether a writer's warning already names `field` of `ticket` (a warning
/// naming no ticket speaks for all of them).
fn covered(said: &[Diagnostic], ticket: Option<&str>, field: &str) -> bool {
    said.iter().any(|d| {
        let rule = d.code.rsplit('.').next().unwrap_or("");
        let names_field = field_of(rule) == Some(field);
        let speaks_for = match (ticket, d.message.split_once(": ")) {
            (Some(id), Some((head, _))) if !head.contains(' ') => head == id,
            _ => true,
        };
        names_field && speaks_for
    })
}

/// The plan field a writer's warning rule is about.
fn field_of(rule: &str) -> Option<&'static str> {
    Some(match rule {
        "rails" => "rails",
        "tier" => "tier",
        "pool-hint" => "pool_hint",
        "model" => "model",
        "counterfactuals" => "counterfactuals",
        "estimate-minutes" => "estimate_minutes",
        "scope-op" | "glob" | "files" => "scope",
        "command" | "gates" | "plan-gates" | "gate" => "gates",
        "check" | "acceptance" => "checks",
        "depends-on" | "producer" | "order" | "cycle" => "depends_on",
        "title" => "title",
        "intent" => "body",
        "review" => "review",
        "caps" => "caps",
        "repo" => "repo",
        "base" => "base",
        "metadata" => "metadata",
        _ => return None,
    })
}

fn plan_level(o: &Plan, b: &Plan, lost: &mut dyn FnMut(&str, String)) {
    if let Some(repo) = o.repo.as_ref().filter(|r| b.repo.as_ref() != Some(*r)) {
        lost("repo", format!("the repository `{repo}`"));
    }
    if o.base != b.base {
        lost("base", format!("the base branch `{}`", o.base));
    }
    for (pool, cap) in o.caps.iter().filter(|(k, v)| b.caps.get(*k) != Some(*v)) {
        lost("caps", format!("the cap {pool} = {cap}"));
    }
    if o.review != b.review {
        lost(
            "review",
            format!("the review setting dry_passes = {}", o.review.dry_passes),
        );
    }
    for key in o.metadata.keys().filter(|k| !b.metadata.contains_key(*k)) {
        lost("metadata", format!("the field `{key}`"));
    }
}

fn ticket_level(
    t: &Ticket,
    b: &Ticket,
    back_ids: &HashMap<&str, &str>,
    orig_gates: &[&Gate],
    back_gates: &[&Gate],
    reduced: &dyn Fn(&str) -> bool,
    lost: &mut dyn FnMut(&str, String),
) {
    if !t.title.is_empty() && b.title.is_empty() {
        lost("title", format!("the title `{}`", t.title));
    }
    if t.body != b.body {
        lost("body", "the body as written".to_string());
    }
    for s in t.scope.iter().filter(|s| !b.scope.contains(s)) {
        lost("scope", format!("the scope entry {}", scope_text(s)));
    }
    for r in t.rails.iter().filter(|r| !b.rails.contains(r)) {
        lost("rails", format!("the rail `{r}`"));
    }
    for d in &t.depends_on {
        let kept = back_ids
            .get(d.as_str())
            .is_some_and(|bd| b.depends_on.iter().any(|x| x == bd) || reduced(bd));
        if !kept {
            lost("depends_on", format!("the dependency on {d}"));
        }
    }
    let options = [
        ("tier", &t.tier, &b.tier),
        ("pool_hint", &t.pool_hint, &b.pool_hint),
        ("model", &t.model, &b.model),
    ];
    for (field, o, n) in options {
        if let Some(v) = o.as_ref().filter(|_| o != n) {
            lost(field, format!("the {field} `{v}`"));
        }
    }
    for g in orig_gates
        .iter()
        .filter(|g| !back_gates.iter().any(|x| x.argv == g.argv))
    {
        lost("gates", format!("the gate `{}`", g.command_line()));
    }
    for c in t.checks.iter().filter(|c| !b.checks.contains(c)) {
        lost("checks", format!("the check `{c}`"));
    }
    for c in t
        .counterfactuals
        .iter()
        .filter(|c| !b.counterfactuals.contains(c))
    {
        lost(
            "counterfactuals",
            format!("the counterfactual on `{}`", c.control_path),
        );
    }
    if let Some(m) = t
        .estimate_minutes
        .filter(|_| t.estimate_minutes != b.estimate_minutes)
    {
        lost(
            "estimate_minutes",
            format!(
                "the estimate of {}",
                crate::words::count(m as usize, "minute")
            ),
        );
    }
}

fn scope_text(s: &ScopeEntry) -> String {
    match &s.op {
        ScopeOp::Any => format!("`{}`", s.pattern),
        ScopeOp::Create => format!("`{}` (create)", s.pattern),
        ScopeOp::Modify => format!("`{}` (modify)", s.pattern),
        ScopeOp::Delete => format!("`{}` (delete)", s.pattern),
        ScopeOp::Rename { from } => format!("`{}` (rename from `{from}`)", s.pattern),
    }
}

/// The plan's gates and the ticket's own: where a gate is declared may
/// move in a conversion without anything being lost.
fn effective_gates<'a>(plan: &'a Plan, t: &'a Ticket) -> Vec<&'a Gate> {
    plan.gates.iter().chain(&t.gates).collect()
}

/// Each original ticket with its counterpart: same id, else (ids renumbered)
/// same title and body, else the ticket at the same place when both plans
/// have as many tickets (a format that numbers its tickets keeps the order).
fn match_tickets<'a>(o: &'a Plan, b: &'a Plan) -> Vec<(&'a Ticket, Option<&'a Ticket>)> {
    let mut used = HashSet::new();
    let same_count = o.tickets.len() == b.tickets.len();
    o.tickets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let found = b
                .tickets
                .iter()
                .find(|x| x.id == t.id)
                .or_else(|| {
                    b.tickets
                        .iter()
                        .find(|x| x.title == t.title && x.body == t.body && !used.contains(&x.id))
                })
                .or_else(|| {
                    b.tickets
                        .get(i)
                        .filter(|x| same_count && !used.contains(&x.id))
                });
            if let Some(f) = found {
                used.insert(f.id.clone());
            }
            (t, found)
        })
        .collect()
}
