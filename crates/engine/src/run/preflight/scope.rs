//! The scope checks: `scope-ops`, scope operations against the base tree
//! (`create` of what exists, `modify` or `delete` of what does not,
//! counting what an ancestor may create, and globs that match nothing);
//! and `overlap`, scopes of tickets that may run at the same time.

use super::{ok_if_quiet, Check, CheckName};
use crate::run::Outlook;
use planwright_plan::graph::TicketGraph;
use planwright_plan::model::{ScopeEntry, ScopeOp};
use planwright_plan::overlap::{Glob, Overlap};
use planwright_plan::scope::{is_glob, Pattern};
use planwright_plan::Plan;
use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};

/// Whether `pattern` matches some file of `files`; compiled once, not per file.
fn matches_any(pattern: &str, files: &HashSet<String>) -> bool {
    let pattern = Pattern::new(pattern);
    files.iter().any(|f| pattern.matches(f))
}

/// The tickets before each ticket, found on first use: most scope entries
/// never ask (a `create`, or a path the base has), and a chain of n tickets
/// has n²/2 ancestor pairs, which took seconds at a few thousand tickets.
struct Ancestry<'p> {
    plan: &'p Plan,
    graph: &'p TicketGraph,
    /// The patterns of each ticket's entries that may create a file,
    /// parsed when an entry first asks about that ticket.
    creates: Vec<OnceCell<Vec<Glob>>>,
}

impl<'p> Ancestry<'p> {
    fn new(plan: &'p Plan, graph: &'p TicketGraph) -> Ancestry<'p> {
        Ancestry {
            plan,
            graph,
            creates: vec![OnceCell::new(); plan.tickets.len()],
        }
    }

    fn creates(&self, ticket: usize) -> &[Glob] {
        self.creates[ticket].get_or_init(|| {
            self.plan.tickets[ticket]
                .scope
                .iter()
                .filter(|e| !matches!(e.op, ScopeOp::Modify | ScopeOp::Delete))
                .map(|e| Glob::parse(&e.pattern))
                .collect()
        })
    }

    /// Plan indices of the ticket's ancestors; unknown ids are left out.
    fn of(&self, ticket: usize) -> Vec<usize> {
        self.graph.ancestors(ticket)
    }

    /// Whether some ancestor (`ancestors`) may create a file `pattern` matches.
    fn created_before(&self, ancestors: &[usize], pattern: &str) -> bool {
        let wanted = Glob::parse(pattern);
        ancestors
            .iter()
            .any(|&a| self.creates(a).iter().any(|g| g.intersects(&wanted)))
    }
}

/// Scope operations against the base's files; a ticket that runs again is
/// judged against the base as it was before its own earlier merge
/// (`earlier`).
pub(crate) fn check_scope_ops(
    plan: &Plan,
    graph: &TicketGraph,
    base: &HashSet<String>,
    merged: &HashSet<String>,
    earlier: &HashMap<String, crate::verify::Earlier>,
    out: &mut Vec<Check>,
) {
    // Most plans never ask (no entry names a path the base lacks).
    let ancestry = OnceCell::new();
    let before = out.len();
    for (i, t) in plan.tickets.iter().enumerate() {
        if merged.contains(&t.id) {
            continue;
        }
        // A file an ancestor may create counts as existing for this ticket.
        // `pattern` may be a glob: it is compared with the ancestor's by
        // intersection, as the overlap forecast compares scopes.
        let ancestors = OnceCell::new();
        let created_before = |pattern: &str| {
            let ancestry = ancestry.get_or_init(|| Ancestry::new(plan, graph));
            let ancestors = ancestors.get_or_init(|| ancestry.of(i));
            ancestry.created_before(ancestors, pattern)
        };
        let before_own = earlier.get(&t.id).map(|e| e.undo(base));
        let base = before_own.as_ref().unwrap_or(base);
        for e in &t.scope {
            let problem = op_problem(e, base, &created_before);
            if let Some(why) = problem {
                out.push(Check::error(
                    CheckName::ScopeOps,
                    format!("ticket {}: `{}` {why}", t.id, e.pattern),
                    "fix the scope entry's `op`, or the base branch",
                ));
            } else if e.op == ScopeOp::Any
                && is_glob(&e.pattern)
                && !matches_any(&e.pattern, base)
                && !created_before(&e.pattern)
            {
                // Likely a typo (`src/**/*.tsx` in a `.ts` project); a
                // `create` entry is meant to match nothing yet.
                out.push(Check::warning(
                    CheckName::ScopeOps,
                    format!("ticket {}: the scope glob `{}` matches no file of the base", t.id, e.pattern),
                    "check the pattern; if the ticket creates these files, declare the entry `create`",
                ));
            }
        }
    }
    ok_if_quiet(
        out,
        before,
        CheckName::ScopeOps,
        "scope operations agree with the base tree",
    );
}

/// What is wrong with scope entry `e` given the base's files and what an
/// ancestor may create, if anything.
fn op_problem(
    e: &ScopeEntry,
    base: &HashSet<String>,
    created_before: &dyn Fn(&str) -> bool,
) -> Option<&'static str> {
    let exists = |p: &str| base.contains(p) || created_before(p);
    let glob = is_glob(&e.pattern);
    match &e.op {
        ScopeOp::Create if !glob && base.contains(&e.pattern) => {
            Some("is declared `create` but already exists in the base")
        }
        ScopeOp::Modify | ScopeOp::Delete if !glob && !exists(&e.pattern) => {
            Some("is declared `modify`/`delete` but does not exist in the base")
        }
        ScopeOp::Modify | ScopeOp::Delete
            if glob && !matches_any(&e.pattern, base) && !created_before(&e.pattern) =>
        {
            Some("is declared `modify`/`delete` but matches no file of the base")
        }
        ScopeOp::Rename { from } if !exists(from) => {
            Some("renames a file that does not exist in the base")
        }
        _ => None,
    }
}

/// The `overlap` check: scopes of tickets that may run at the same time
/// and are not skipped.
pub(crate) fn check_overlap(
    plan: &Plan,
    known: Option<&[Overlap]>,
    outlook: &Outlook,
    out: &mut Vec<Check>,
) {
    let before = out.len();
    let made;
    let overlaps = match known {
        Some(known) => known,
        None => {
            made = planwright_plan::overlap::forecast(plan);
            &made
        }
    };
    let skipped = outlook.skipped();
    for o in overlaps {
        let open: Vec<String> = o
            .tickets
            .iter()
            .filter(|id| !skipped.contains(*id))
            .cloned()
            .collect();
        if open.len() < 2 {
            continue;
        }
        out.push(Check::warning(
            CheckName::Overlap,
            planwright_plan::words::overlap_message(&open, &o.patterns),
            "make them depend on one another, or split the scopes; otherwise a later one may hit a merge conflict",
        ));
    }
    ok_if_quiet(
        out,
        before,
        CheckName::Overlap,
        "no scope overlap between tickets that may run at the same time",
    );
}
