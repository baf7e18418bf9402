use super::{ChangedPaths, Changes};
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A tree with a deep folder, every file and folder observed, nothing
/// changed yet.
fn observed() -> (tempfile::TempDir, PathBuf, ChangedPaths) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    fs::create_dir_all(root.join("a/b/c/d/e")).unwrap();
    fs::create_dir_all(root.join("src")).unwrap();
    for f in [
        "top.txt",
        "a/b/c/d/e/deep.txt",
        "src/one.txt",
        "src/two.txt",
    ] {
        fs::write(root.join(f), f).unwrap();
    }
    let mut changes = ChangedPaths::new(&root).unwrap();
    for d in ["", "a", "a/b", "a/b/c", "a/b/c/d", "a/b/c/d/e", "src"] {
        changes.observe(Path::new(d), true);
    }
    for f in [
        "top.txt",
        "a/b/c/d/e/deep.txt",
        "src/one.txt",
        "src/two.txt",
    ] {
        changes.observe(Path::new(f), false);
    }
    assert_eq!(changes.take(), Changes::Paths(BTreeSet::new()));
    (tmp, root, changes)
}

fn paths(list: &[&str]) -> Changes {
    Changes::Paths(list.iter().map(PathBuf::from).collect())
}

#[test]
fn a_write_deep_in_a_long_untouched_folder_is_seen() {
    let (_tmp, root, mut changes) = observed();
    fs::write(root.join("a/b/c/d/e/deep.txt"), "changed").unwrap();
    assert_eq!(changes.take(), paths(&["a/b/c/d/e/deep.txt"]));
    // And nothing more the next time.
    assert_eq!(changes.take(), paths(&[]));
}

#[test]
fn a_new_file_a_deletion_and_a_mode_change_are_seen() {
    let (_tmp, root, mut changes) = observed();
    fs::write(root.join("a/b/c/new.txt"), "new").unwrap();
    fs::remove_file(root.join("src/one.txt")).unwrap();
    fs::set_permissions(root.join("src/two.txt"), fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        changes.take(),
        paths(&["a/b/c/new.txt", "src/one.txt", "src/two.txt"])
    );
}

#[test]
fn a_new_folder_is_reported_whole() {
    let (_tmp, root, mut changes) = observed();
    fs::create_dir_all(root.join("src/new/deeper")).unwrap();
    fs::write(root.join("src/new/deeper/x.txt"), "x").unwrap();
    assert_eq!(changes.take(), paths(&["src/new"]));
}

/// A hard link made outside the tree writes the tracked file under
/// another name: the descriptor of the file itself sees it.
#[test]
fn a_write_through_a_hard_link_outside_the_tree_is_seen() {
    let (tmp, root, mut changes) = observed();
    let outside = tmp.path().join("elsewhere");
    fs::hard_link(root.join("a/b/c/d/e/deep.txt"), &outside).unwrap();
    assert_eq!(changes.take(), paths(&["a/b/c/d/e/deep.txt"]));
    fs::write(&outside, "through the link").unwrap();
    assert_eq!(changes.take(), paths(&["a/b/c/d/e/deep.txt"]));
}

#[test]
fn a_truncation_by_name_and_a_rename_over_a_file_are_seen() {
    let (_tmp, root, mut changes) = observed();
    fs::OpenOptions::new()
        .write(true)
        .open(root.join("top.txt"))
        .unwrap()
        .set_len(0)
        .unwrap();
    fs::write(root.join("src/tmp"), "replacement").unwrap();
    fs::rename(root.join("src/tmp"), root.join("src/one.txt")).unwrap();
    assert_eq!(
        changes.take(),
        paths(&["src/one.txt", "src/tmp", "top.txt"])
    );
}

/// The descriptors beneath a moved folder would name its old paths.
#[test]
fn a_moved_folder_makes_the_changes_unknown() {
    let (_tmp, root, mut changes) = observed();
    fs::rename(root.join("a/b"), root.join("moved")).unwrap();
    assert!(matches!(changes.take(), Changes::Unknown(_)));
}

/// More events than the kernel queues: an overflow, never a silent loss.
#[test]
fn an_overflowing_queue_makes_the_changes_unknown() {
    let (_tmp, root, mut changes) = observed();
    let max: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Two files in turn: the kernel folds an event into the one before it
    // only when they are the same.
    for i in 0..=max {
        let f = if i % 2 == 0 {
            "src/one.txt"
        } else {
            "src/two.txt"
        };
        fs::write(root.join(f), i.to_string()).unwrap();
    }
    assert!(matches!(changes.take(), Changes::Unknown(_)));
}
