//! Repositories for the engine's own tests, made with the one git builder.

use crate::git::repo::Repo;
use crate::git::Git;
use std::path::Path;

/// A new repository at `root`.
pub(crate) fn init(root: &Path) {
    Git::outside()
        .args(["init", "-q"])
        .arg(root)
        .output()
        .unwrap();
}

/// git `args` on the repository at `root` (its `.git`) with a test
/// identity: stdout, trailing newline removed.
pub(crate) fn git(root: &Path, args: &[&str]) -> String {
    Git::with_tree(root.join(".git"), root)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .text()
        .unwrap()
}

/// A repository in `dir/repo` with `files` committed, planwright's own
/// git directory made, and the commit.
pub(crate) fn committed(dir: &Path, files: &[(&str, String)]) -> (Repo, String) {
    let root = dir.join("repo");
    for (rel, text) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    init(&root);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "base"]);
    let commit = git(&root, &["rev-parse", "HEAD"]);
    let repo = Repo::open(&root).unwrap();
    repo.ensure_own_git(&[]).unwrap();
    (repo, commit)
}
