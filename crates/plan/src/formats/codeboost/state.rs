//! The projected-state checks: the plan's file operations applied item by
//! item to the repository tree, each checked against the tree as the items
//! before it left it.

use super::{path_problem, FileEntry, Item, Kind};
use crate::diag::Diagnostic;
use std::collections::BTreeSet;

/// The tracked files of the tree, as the items so far changed it. Like
/// codeboost's projected state it holds files only: a directory is where
/// files are, never itself something an item may edit, delete or rename.
struct Tree {
    files: BTreeSet<String>,
}

impl Tree {
    fn under<'a>(&'a self, dir: &str) -> impl Iterator<Item = &'a String> + 'a {
        let prefix = format!("{dir}/");
        self.files
            .range(prefix.clone()..)
            .take_while(move |f| f.starts_with(&prefix))
    }

    fn exists(&self, path: &str) -> bool {
        self.files.contains(path)
    }

    fn is_directory(&self, path: &str) -> bool {
        self.under(path).next().is_some()
    }

    /// Nothing is there, no file under it, and no parent is a file.
    fn free(&self, path: &str) -> bool {
        !self.exists(path)
            && !self.is_directory(path)
            && !path
                .match_indices('/')
                .any(|(cut, _)| self.files.contains(&path[..cut]))
    }

    fn apply(&mut self, file: &FileEntry<'_>) {
        let (Some(path), Some(kind)) = (file.path, file.kind) else {
            return;
        };
        match kind {
            Kind::Edit => {}
            Kind::Add => {
                self.files.insert(path.to_string());
            }
            Kind::Delete => {
                self.files.remove(path);
            }
            Kind::Rename => {
                let Some(Some(from)) = file.renamed_from else {
                    return;
                };
                if self.files.remove(from) {
                    self.files.insert(path.to_string());
                }
            }
        }
    }
}

/// Checks every item against `files` (the tracked files of the base tree).
pub(super) fn check(items: &[Item<'_>], files: &BTreeSet<String>, sink: &mut Vec<Diagnostic>) {
    let mut tree = Tree {
        files: files.clone(),
    };
    for (n, item) in items.iter().enumerate() {
        let after = if n == 0 {
            ""
        } else {
            " after the items before it"
        };
        for file in &item.files {
            check_file(&tree, item, file, after, sink);
        }
        for file in &item.files {
            tree.apply(file);
        }
    }
}

fn check_file(
    tree: &Tree,
    item: &Item<'_>,
    file: &FileEntry<'_>,
    after: &str,
    sink: &mut Vec<Diagnostic>,
) {
    let (Some(path), Some(kind)) = (file.path, file.kind) else {
        return;
    };
    if path_problem(path).is_some() {
        return;
    }
    let label = &item.label;
    let missing = |p: &str, at, what: &str| {
        if tree.is_directory(p) {
            let count = tree.under(p).count();
            return Diagnostic::error(
                "codeboost.state.directory",
                at,
                format!(
                    "{label} {what} `{p}`, a directory with {} under it in the repository tree{after}; codeboost plans name files, not directories",
                    crate::words::count(count, "file")
                ),
            )
            .with_hint("list the files to change one by one");
        }
        let hint = if kind == Kind::Rename {
            "check the old path in `renamed_from`"
        } else {
            "check the path, or use kind \"add\" for a new file"
        };
        Diagnostic::error(
            "codeboost.state.missing",
            at,
            format!("{label} {what} `{p}`, which does not exist in the repository tree{after}"),
        )
        .with_hint(hint)
    };
    let taken = |p: &str, at, what: &str| {
        Diagnostic::error(
            "codeboost.state.exists",
            at,
            format!("{label} {what} `{p}`, which already exists in the repository tree{after}"),
        )
        .with_hint("use kind \"edit\" for an existing file, or choose a free path")
    };
    let at = file.at.key("path");
    match kind {
        Kind::Edit | Kind::Delete if !tree.exists(path) => {
            sink.push(missing(path, at, kind.verb()))
        }
        Kind::Add if !tree.free(path) => sink.push(taken(path, at, "adds")),
        Kind::Rename => {
            if let Some(Some(from)) = file.renamed_from {
                if path_problem(from).is_none() && !tree.exists(from) {
                    sink.push(missing(from, file.at.key("renamed_from"), "renames"));
                }
            }
            if !tree.free(path) {
                sink.push(taken(path, at, "renames a file to"));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_where_files_are_not_entries() {
        let tree = Tree {
            files: ["src/a.rs", "src/b/c.rs", "srcx"].map(String::from).into(),
        };
        assert!(!tree.exists("src"), "a directory is not an entry");
        assert!(tree.is_directory("src") && tree.is_directory("src/b"));
        assert!(!tree.exists("sr") && !tree.is_directory("sr"));
        assert!(!tree.free("src") && !tree.free("src/b"));
        assert!(!tree.free("src/a.rs/x"), "a file cannot hold files");
        assert!(tree.free("src/new.rs"));
        assert_eq!(tree.under("src").count(), 2);
    }
}
