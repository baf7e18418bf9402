//! Scope and rails: the candidate's diff against the base commit, read from
//! `git diff-tree -r -M -C -z` (both sides of renames and copies), checked
//! against the ticket's declared scope entries and rails; and the
//! candidate's symlinks, resolved through its tree (chains included).

use crate::error::EngineError;
use crate::exec::names;
use crate::git::repo::Repo;
use crate::git::{objects, tree};
use crate::model::failure::{Failure, FailureKind};
use planwright_plan::model::{ScopeOp, Ticket};
use planwright_plan::scope::Pattern;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Component, Path, PathBuf};

pub use crate::git::tree::{changes, parse_diff_tree, Change};

/// What happened to one path, from the scope's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Created,
    Modified,
    Deleted,
}

fn allows(op: &ScopeOp, what: Op, path: &str, from: Option<&str>) -> bool {
    match op {
        ScopeOp::Any => true,
        ScopeOp::Create => what == Op::Created,
        ScopeOp::Modify => what == Op::Modified,
        ScopeOp::Delete => what == Op::Deleted,
        ScopeOp::Rename { from: declared } => {
            (what == Op::Created && from == Some(declared.as_str()))
                || (what == Op::Deleted && path == declared)
        }
    }
}

fn op_name(what: Op) -> &'static str {
    match what {
        Op::Created => "creates",
        Op::Modified => "modifies",
        Op::Deleted => "deletes",
    }
}

/// What the earlier merge of a ticket that runs again (`--rerun`) did, for
/// its scope operations to be judged against the base as it was before
/// that merge: a path the ticket itself created may exist, one it deleted
/// may be gone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Earlier {
    /// The paths it created, each with the path it renamed it from, if any.
    pub created: HashMap<String, Option<String>>,
    /// The paths it deleted (or renamed away).
    pub deleted: HashSet<String>,
}

impl Earlier {
    /// What the merged commit `commit` (a ticket's one commit on its first
    /// parent) created and deleted.
    pub fn of_merge(repo: &Repo, commit: &str) -> Result<Earlier, EngineError> {
        let changes = changes(repo, &format!("{commit}^"), commit)?;
        let mut earlier = Earlier::default();
        for (path, what, from) in touched_paths(&changes) {
            match what {
                Op::Created => {
                    earlier
                        .created
                        .insert(path.to_string(), from.map(str::to_string));
                }
                Op::Deleted => {
                    earlier.deleted.insert(path.to_string());
                }
                Op::Modified => {}
            }
        }
        Ok(earlier)
    }

    /// Adds what `other`, another merge of the same ticket, did.
    pub fn add(&mut self, other: Earlier) {
        self.created.extend(other.created);
        self.deleted.extend(other.deleted);
    }

    /// `base` (a tree's paths) as it was before this merge.
    pub fn undo(&self, base: &HashSet<String>) -> HashSet<String> {
        let kept = base.iter().filter(|p| !self.created.contains_key(*p));
        kept.chain(&self.deleted).cloned().collect()
    }
}

/// Checks scope and rails. The changes are a diff against the base, so a
/// deleted or renamed path is always one the base has. `earlier` is what
/// the ticket's own earlier merge did, when it runs again: changing a path
/// that merge created is creating it again.
pub fn check_scope(
    ticket: &Ticket,
    run_rails: &RunRails,
    changes: &[Change],
    repo: &Repo,
    earlier: &Earlier,
) -> Result<(), Failure> {
    if changes.is_empty() {
        return Err(Failure::new(
            FailureKind::EmptyDiff,
            "the attempt changed nothing",
        ));
    }
    let rules = Rules {
        ticket,
        run_rails,
        rails: ticket
            .rails
            .iter()
            .map(|r| (r.clone(), Pattern::new(r)))
            .collect(),
        scope: ticket
            .scope
            .iter()
            .map(|e| (Pattern::new(&e.pattern), &e.op))
            .collect(),
    };
    for (path, what, from) in touched_paths(changes) {
        // A name git indexes on Linux but refuses where `core.protectHFS`
        // or `core.protectNTFS` is on (macOS, Windows) must not reach a
        // branch others check out there. Only a path the candidate
        // creates can be one: the base's own paths are the user's.
        if let Some(why) = (what == Op::Created)
            .then(|| names::refused(path.as_bytes()))
            .flatten()
        {
            return Err(names::bad_name(path, why));
        }
        match earlier.created.get(path) {
            Some(was) if what == Op::Modified => rules.check(path, Op::Created, was.as_deref())?,
            _ => rules.check(path, what, from)?,
        }
    }
    for c in changes {
        check_mode(c, repo)?;
    }
    Ok(())
}

/// What no ticket's scope gives leave to change: planwright's own state
/// (`.planwright/`), and the files that decide the run, its plan and its
/// `planwright.toml` (an agent that rewrites them rewrites what judges it
/// on the next run), unless the user passed `--allow-config-change` and the
/// ticket's scope names the file itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunRails {
    /// Each deciding file's path in the repository, with what it is to the
    /// run ("the plan", "the configuration").
    pub decisive: Vec<(String, &'static str)>,
    /// `--allow-config-change`.
    pub allow_change: bool,
}

impl RunRails {
    fn check(&self, ticket: &Ticket, path: &str, what: Op) -> Result<(), Failure> {
        let own = Path::new(crate::git::repo::STATE_DIR);
        if Path::new(path).starts_with(own) {
            return Err(Failure::new(
                FailureKind::ScopeViolation,
                format!(
                    "{} `{path}`, inside `{}/`, which is planwright's own state: no ticket may change it",
                    op_name(what),
                    crate::git::repo::STATE_DIR
                ),
            ));
        }
        let Some((_, role)) = self.decisive.iter().find(|(p, _)| p == path) else {
            return Ok(());
        };
        let named = planwright_plan::gate_integrity::named(&ticket.scope, path);
        if self.allow_change && named {
            return Ok(());
        }
        let allow = planwright_plan::Flag::AllowConfigChange;
        let hint = match named {
            true => format!("the ticket's scope names it; pass `{allow}` to let it"),
            false => format!(
                "only a ticket whose scope names the file, in a run with `{allow}`, may change it"
            ),
        };
        Err(Failure::new(
            FailureKind::RailViolation,
            format!("{} `{path}`, {role} of this run ({hint})", op_name(what)),
        ))
    }
}

/// A ticket's rails and scope, compiled.
struct Rules<'a> {
    ticket: &'a Ticket,
    run_rails: &'a RunRails,
    rails: Vec<(String, Pattern)>,
    scope: Vec<(Pattern, &'a ScopeOp)>,
}

impl Rules<'_> {
    fn check(&self, path: &str, what: Op, from: Option<&str>) -> Result<(), Failure> {
        let scope_violation = |why: String| Failure::new(FailureKind::ScopeViolation, why);
        if !inside(path) {
            return Err(scope_violation(format!("`{path}` leaves the repository")));
        }
        self.run_rails.check(self.ticket, path, what)?;
        if let Some((rail, _)) = self.rails.iter().find(|(_, p)| p.matches(path)) {
            return Err(Failure::new(
                FailureKind::RailViolation,
                format!(
                    "{} `{path}`, which is protected by rail `{rail}`",
                    op_name(what)
                ),
            ));
        }
        // A rename entry covers its new path and, for the deletion, its `from`.
        let matching: Vec<&ScopeOp> = self
            .scope
            .iter()
            .filter(|(p, op)| {
                p.matches(path) || matches!(op, ScopeOp::Rename { from } if from == path)
            })
            .map(|(_, op)| *op)
            .collect();
        if matching.is_empty() {
            let patterns: Vec<&str> = self
                .ticket
                .scope
                .iter()
                .map(|e| e.pattern.as_str())
                .collect();
            return Err(scope_violation(format!(
                "{} `{path}`, which is outside the ticket's scope",
                op_name(what)
            ))
            .with_evidence(format!("scope: {}", patterns.join(", "))));
        }
        if !matching.iter().any(|op| allows(op, what, path, from)) {
            return Err(scope_violation(format!(
                "{} `{path}`, but its scope entry does not allow that",
                op_name(what)
            )));
        }
        Ok(())
    }
}

fn touched_paths(changes: &[Change]) -> Vec<(&str, Op, Option<&str>)> {
    let mut out = Vec::new();
    for c in changes {
        match c.status {
            'A' => out.push((c.path.as_str(), Op::Created, None)),
            'D' => out.push((c.path.as_str(), Op::Deleted, None)),
            'R' => {
                let from = c.from.as_deref().unwrap_or_default();
                out.push((from, Op::Deleted, None));
                out.push((c.path.as_str(), Op::Created, Some(from)));
            }
            'C' => out.push((c.path.as_str(), Op::Created, None)),
            _ => out.push((c.path.as_str(), Op::Modified, None)),
        }
    }
    out
}

fn inside(path: &str) -> bool {
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

fn check_mode(c: &Change, repo: &Repo) -> Result<(), Failure> {
    match c.new_mode.as_str() {
        "160000" => Err(Failure::new(
            FailureKind::ScopeViolation,
            format!(
                "`{}` is a submodule; tickets may not add or change submodules",
                c.path
            ),
        )),
        "120000" => {
            let target = objects::blob(repo, &c.new_blob)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            if symlink_escapes(&c.path, &target) {
                Err(Failure::new(
                    FailureKind::ScopeViolation,
                    format!(
                        "`{}` is a symlink to `{target}`, which leaves the workspace",
                        c.path
                    ),
                ))
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

/// Whether a symlink at `link` (repository-relative) pointing to `target`
/// resolves outside the repository.
pub fn symlink_escapes(link: &str, target: &str) -> bool {
    if target.is_empty() || Path::new(target).is_absolute() {
        return true;
    }
    let mut at: PathBuf = Path::new(link)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    for c in Path::new(target).components() {
        match c {
            Component::Normal(part) => at.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !at.pop() {
                    return true;
                }
            }
            _ => return true,
        }
    }
    false
}

/// The files of a commit: path -> (mode, object id).
struct Tree(HashMap<String, (String, String)>);

impl Tree {
    fn read(repo: &Repo, rev: &str) -> Result<Tree, EngineError> {
        Ok(Tree(tree::files(repo, rev)?))
    }

    fn symlinks(&self) -> impl Iterator<Item = (&String, &String)> {
        self.0
            .iter()
            .filter(|(_, (mode, _))| mode == LINK)
            .map(|(p, (_, id))| (p, id))
    }
}

/// Fails a candidate with a symlink whose target, resolved through the
/// candidate's tree (each link of a chain in turn), leaves the repository
/// or enters `.git`. A link the base already had, pointing the same way
/// and escaping there too, is the repository's own and passes.
pub fn check_symlinks(
    repo: &Repo,
    base: &str,
    candidate: &str,
    changes: &[Change],
) -> Result<Result<(), Failure>, EngineError> {
    // Links resolve through the other links only: when the diff neither
    // adds, changes nor removes a link, the candidate's links are the
    // base's, and a base's own link passes.
    let touched_link = changes
        .iter()
        .any(|c| c.new_mode == LINK || c.old_mode == LINK);
    if !touched_link {
        return Ok(Ok(()));
    }
    let tree = Tree::read(repo, candidate)?;
    let targets = link_targets(repo, &tree)?;
    let base_tree = Tree::read(repo, base)?;
    let base_targets = link_targets(repo, &base_tree)?;
    let mut links: Vec<&String> = targets.keys().collect();
    links.sort();
    for link in links {
        let Err(why) = resolve(link, &targets) else {
            continue;
        };
        let same_in_base =
            base_targets.get(link) == targets.get(link) && resolve(link, &base_targets).is_err();
        if !same_in_base {
            return Ok(Err(Failure::new(
                FailureKind::ScopeViolation,
                format!(
                    "`{link}` is a symlink to `{}` that {why}",
                    targets.get(link).map_or("", String::as_str)
                ),
            )));
        }
    }
    Ok(Ok(()))
}

/// Each symlink of `tree` with its target.
fn link_targets(repo: &Repo, tree: &Tree) -> Result<HashMap<String, String>, EngineError> {
    let mut out = HashMap::new();
    for (path, id) in tree.symlinks() {
        let target = objects::blob(repo, id)?;
        out.insert(path.clone(), String::from_utf8_lossy(&target).into_owned());
    }
    Ok(out)
}

/// The file mode of a symlink.
const LINK: &str = "120000";

/// Links followed before a chain counts as a loop (Linux's limit).
const MAX_LINKS: usize = 40;

/// Resolves the symlink at `link` through `targets` (the tree's symlinks)
/// like the kernel would in a checkout: Ok when it stays inside the
/// repository and out of `.git`, else why not.
pub fn resolve(link: &str, targets: &HashMap<String, String>) -> Result<(), &'static str> {
    let mut at: Vec<String> = link.split('/').map(String::from).collect();
    at.pop();
    let mut pending: VecDeque<String> = VecDeque::new();
    let follow = |target: &str, pending: &mut VecDeque<String>| {
        if target.starts_with('/') || target.is_empty() {
            return Err("leaves the repository (absolute or empty)");
        }
        for part in target.split('/').rev() {
            pending.push_front(part.to_string());
        }
        Ok(())
    };
    follow(targets.get(link).map_or("", String::as_str), &mut pending)?;
    let mut followed = 1;
    while let Some(part) = pending.pop_front() {
        match part.as_str() {
            "" | "." => {}
            ".." => {
                if at.pop().is_none() {
                    return Err("leaves the repository");
                }
            }
            name => {
                if name.eq_ignore_ascii_case(".git") {
                    return Err("enters `.git`");
                }
                at.push(name.to_string());
                if let Some(next) = targets.get(&at.join("/")) {
                    followed += 1;
                    if followed > MAX_LINKS {
                        return Err("is a loop of symlinks");
                    }
                    at.pop();
                    follow(next, &mut pending)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_renames_and_plain_changes() {
        let raw = b":100644 100644 aaa bbb M\0src/a.rs\0:100644 100644 ccc ddd R090\0old.rs\0new.rs\0:000000 120000 000 eee A\0link\0";
        let c = parse_diff_tree(raw);
        assert_eq!(c.len(), 3);
        assert_eq!(
            (c[1].status, c[1].from.as_deref(), c[1].path.as_str()),
            ('R', Some("old.rs"), "new.rs")
        );
        assert_eq!(c[2].new_mode, "120000");
    }

    fn change(status: char, from: Option<&str>, path: &str) -> Change {
        Change {
            status,
            from: from.map(String::from),
            path: path.into(),
            old_mode: "100644".into(),
            new_mode: "100644".into(),
            new_blob: "0".into(),
        }
    }

    /// A new repository with no commit (kept while the tempdir lives).
    fn empty_repo() -> (tempfile::TempDir, Repo) {
        let dir = tempfile::tempdir().unwrap();
        crate::git::testing::init(dir.path());
        let repo = Repo::open(dir.path()).unwrap();
        (dir, repo)
    }

    /// A name git indexes on Linux but refuses on macOS is refused when the
    /// candidate creates it (added, or a rename's or copy's new path), and
    /// named; a path the base already has is the user's, not the attempt's.
    #[test]
    fn a_created_path_git_refuses_elsewhere_is_a_scope_violation_naming_it() {
        let (_dir, repo) = empty_repo();
        let ticket: Ticket = serde_json::from_value(serde_json::json!({
            "id": "T", "body": "b", "scope": [{"pattern": "lib/**", "op": "any"}]
        }))
        .unwrap();
        let hfs = "lib/.g\u{200c}it/x";
        let rails = RunRails::default();
        for created in [
            change('A', None, hfs),
            change('R', Some("lib/a"), hfs),
            change('C', Some("lib/a"), hfs),
        ] {
            let f = check_scope(
                &ticket,
                &rails,
                std::slice::from_ref(&created),
                &repo,
                &Earlier::default(),
            )
            .unwrap_err();
            assert_eq!(f.kind, FailureKind::ScopeViolation, "{created:?}");
            assert!(
                f.message.starts_with(&format!("`{hfs}`: git refuses")),
                "{f:?}"
            );
            assert_eq!(f.evidence, hfs);
        }
        let theirs = [change('M', None, hfs), change('D', None, hfs)];
        assert_eq!(
            check_scope(&ticket, &rails, &theirs, &repo, &Earlier::default()),
            Ok(())
        );
    }

    #[test]
    fn ops_must_agree_with_the_declared_ones() {
        let (_dir, repo) = empty_repo();
        let ticket: Ticket = serde_json::from_value(serde_json::json!({
            "id": "T", "body": "b",
            "scope": [{"pattern": "new.md", "op": "rename", "from": "old.md"},
                      {"pattern": "a.txt", "op": "modify"}, {"pattern": "gone.txt", "op": "delete"}]
        }))
        .unwrap();
        let ok = [
            change('R', Some("old.md"), "new.md"),
            change('M', None, "a.txt"),
            change('D', None, "gone.txt"),
        ];
        let rails = RunRails::default();
        assert_eq!(
            check_scope(&ticket, &rails, &ok, &repo, &Earlier::default()),
            Ok(())
        );
        for bad in [
            change('R', Some("other.md"), "new.md"),
            change('A', None, "new.md"),
            change('D', None, "a.txt"),
            change('M', None, "gone.txt"),
        ] {
            let f = check_scope(
                &ticket,
                &rails,
                std::slice::from_ref(&bad),
                &repo,
                &Earlier::default(),
            )
            .unwrap_err();
            assert_eq!(f.kind, FailureKind::ScopeViolation, "{bad:?}");
        }
    }

    #[test]
    fn a_rerun_may_change_what_its_own_earlier_merge_created() {
        let (_dir, repo) = empty_repo();
        let ticket: Ticket = serde_json::from_value(serde_json::json!({
            "id": "T", "body": "b",
            "scope": [{"pattern": "a.txt", "op": "create"}, {"pattern": "new.md", "op": "rename", "from": "old.md"}]
        }))
        .unwrap();
        let rails = RunRails::default();
        let again = [change('M', None, "a.txt"), change('M', None, "new.md")];
        let first = check_scope(&ticket, &rails, &again, &repo, &Earlier::default()).unwrap_err();
        assert_eq!(first.kind, FailureKind::ScopeViolation);
        let earlier = Earlier {
            created: [
                ("a.txt".into(), None),
                ("new.md".into(), Some("old.md".into())),
            ]
            .into(),
            deleted: ["old.md".to_string()].into(),
        };
        assert_eq!(
            check_scope(&ticket, &rails, &again, &repo, &earlier),
            Ok(())
        );
        let base: HashSet<String> = ["a.txt", "new.md", "README"].map(String::from).into();
        let before: HashSet<String> = ["old.md", "README"].map(String::from).into();
        assert_eq!(earlier.undo(&base), before);
    }

    #[test]
    fn chains_of_symlinks_are_resolved_through_the_tree() {
        let t = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let mut chain = vec![("u0".to_string(), "..".to_string())];
        for i in 1..15 {
            chain.push((format!("u{i}"), format!("u{}/..", i - 1)));
        }
        chain.push(("pw".into(), "u14/etc/passwd".into()));
        let chain: HashMap<String, String> = chain.into_iter().collect();
        assert_eq!(resolve("pw", &chain), Err("leaves the repository"));
        assert_eq!(
            resolve("lib/g", &t(&[("lib/g", "../.git")])),
            Err("enters `.git`")
        );
        assert_eq!(
            resolve("a", &t(&[("a", "b"), ("b", "a")])),
            Err("is a loop of symlinks")
        );
        assert_eq!(resolve("a/l", &t(&[("a/l", "../b/x"), ("b", "c")])), Ok(()));
        assert_eq!(
            resolve("a/l", &t(&[("a/l", "../b/../../x")])),
            Err("leaves the repository")
        );
        assert_eq!(
            resolve("l", &t(&[("l", "d/x"), ("d", "..")])),
            Err("leaves the repository")
        );
        assert_eq!(
            resolve("l", &t(&[("l", "/etc")])),
            Err("leaves the repository (absolute or empty)")
        );
    }

    #[test]
    fn symlinks_that_leave_are_caught() {
        assert!(symlink_escapes("a/link", "../../etc/passwd"));
        assert!(symlink_escapes("link", "/etc/passwd"));
        assert!(!symlink_escapes("a/link", "../b/file"));
        assert!(!symlink_escapes("a/link", "./c"));
    }
}
