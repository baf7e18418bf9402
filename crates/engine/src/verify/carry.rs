//! What a retry carries of the previous candidate: everything but what
//! planwright rejects. Out-of-scope paths, rails and the files gates run go
//! back to the base, and escaping symlinks are removed, so a retry never
//! starts from the very content it was rejected for (and no planted link
//! waits in its workspace).

use super::scope::{changes, check_scope, check_symlinks, Change, Earlier, RunRails};
use crate::error::EngineError;
use crate::git::repo::Repo;
use crate::git::tree;
use crate::model::failure::Failure;
use planwright_plan::model::{Gate, Ticket};
use std::collections::BTreeMap;

/// The rules a candidate is judged by, as verification applies them.
pub(crate) struct Rules<'a> {
    /// The ticket: its scope and rails.
    pub ticket: &'a Ticket,
    /// Its gates.
    pub gates: &'a [Gate],
    /// The `[workspace] setup` commands.
    pub setups: &'a [Vec<String>],
    /// The run's own rails (its plan and configuration).
    pub run_rails: &'a RunRails,
    /// What the ticket's earlier merge did, when it runs again.
    pub earlier: &'a Earlier,
}

/// The previous candidate, less what was dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Carried {
    /// A commit whose parent is the previous attempt's base: the candidate
    /// itself when nothing was dropped.
    pub commit: String,
    /// Each path put back to the base (or removed), with why, in path order.
    pub dropped: Vec<(String, String)>,
    /// Whether anything of the change is left.
    pub empty: bool,
}

/// Paths a candidate may have that verification rejects one at a time: a
/// bound on the rounds of dropping (each round drops at least one path).
const MAX_ROUNDS: usize = 10_000;

/// `candidate` (a child of `base`) without what `rules` reject: each path
/// the scope, the rails or a mode rejects goes back to `base`'s version
/// (removed where `base` has none), both sides of a rejected rename too;
/// then each escaping symlink and each file a gate runs that the ticket
/// may not change, one at a time until the rest passes.
pub(crate) fn without_rejected(
    repo: &Repo,
    rules: &Rules,
    base: &str,
    candidate: &str,
) -> Result<Carried, EngineError> {
    let found = changes(repo, base, candidate)?;
    let mut dropped: BTreeMap<String, String> = BTreeMap::new();
    for c in &found {
        let one = std::slice::from_ref(c);
        if let Err(f) = check_scope(rules.ticket, rules.run_rails, one, repo, rules.earlier) {
            for path in c.from.iter().chain([&c.path]) {
                dropped.insert(path.clone(), f.message.clone());
            }
        }
    }
    let mut commit = rebuild(repo, base, candidate, &dropped)?;
    for _ in 0..MAX_ROUNDS {
        let now = changes(repo, base, &commit)?;
        let Some((paths, why)) = next_rejected(repo, rules, base, &commit, &now)? else {
            break;
        };
        for path in paths {
            dropped.insert(path, why.clone());
        }
        commit = rebuild(repo, base, candidate, &dropped)?;
    }
    let empty = changes(repo, base, &commit)?.is_empty();
    Ok(Carried {
        commit,
        dropped: dropped.into_iter().collect(),
        empty,
    })
}

/// The paths of the first escaping symlink or changed gate file of
/// `commit`, with the failure's words, if there is one.
fn next_rejected(
    repo: &Repo,
    rules: &Rules,
    base: &str,
    commit: &str,
    now: &[Change],
) -> Result<Option<(Vec<String>, String)>, EngineError> {
    if let Err(f) = check_symlinks(repo, base, commit, now)? {
        // The message names the link first: "`a/b` is a symlink to ...".
        return Ok(named_path(&f).map(|p| (vec![p], f.message.clone())));
    }
    let changed: Vec<String> = (now.iter())
        .flat_map(|c| c.from.iter().chain([&c.path]))
        .cloned()
        .collect();
    let scope = &rules.ticket.scope;
    let checked = crate::git::integrity::check_gate_scripts(
        repo,
        rules.gates,
        rules.setups,
        scope,
        base,
        commit,
        &changed,
    )?;
    let Err(f) = checked else {
        return Ok(None);
    };
    // The file the failure names, else `package.json`, whose scripts it is
    // about.
    let path = named_path(&f)
        .filter(|p| changed.contains(p))
        .or_else(|| changed.iter().find(|p| *p == "package.json").cloned());
    Ok(path.map(|p| (vec![p], f.message.clone())))
}

/// The path a failure's message names first, in backticks.
fn named_path(f: &Failure) -> Option<String> {
    let rest = f.message.split_once('`')?.1;
    Some(rest.split_once('`')?.0.to_string())
}

/// `candidate`'s tree with each path of `dropped` as `base` has it (or
/// absent), committed on `base`; `candidate` itself when nothing is dropped.
fn rebuild(
    repo: &Repo,
    base: &str,
    candidate: &str,
    dropped: &BTreeMap<String, String>,
) -> Result<String, EngineError> {
    if dropped.is_empty() {
        return Ok(candidate.to_string());
    }
    let paths: Vec<&str> = dropped.keys().map(String::as_str).collect();
    let tree = tree::with_paths_of(repo, candidate, base, &paths)?;
    let message = "planwright: the previous candidate, less what was rejected";
    crate::git::refs::commit_tree(repo, &tree, base, message)
}
