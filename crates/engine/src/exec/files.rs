//! Files of the work trees planwright owns (workspaces and gate
//! checkouts): their modes put back as git writes them, folders an agent
//! or a gate shut opened up, removed or emptied without following a
//! symlink, and the `[workspace] copy` files found in the user's checkout.

use crate::error::EngineError;
use crate::git::worktree::{Clean, Cleaned, Mode, WorkTree};
use planwright_os::beneath::{Dir, Kind};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Gives the work tree `dir` and each tracked directory in it the mode
/// git makes a directory with (`0777` less the umask), from the top down,
/// and removes each tracked regular file whose permission bits are not
/// those git writes (`0666`, or `0777` for an executable, less the umask),
/// for the next reset to write it anew; `tree` is planwright's git on
/// `dir`. git's own check sees only a file's executable bit and no
/// directory's mode, so a test file or folder an agent or a gate made
/// unreadable (`chmod 000`) would stay so for every later one, and a
/// folder no one may enter stops the reset when planwright is not root.
/// A file may be a hard link to one outside, so it is written anew, never
/// changed in place; a directory cannot be. Nothing in `dir` is followed.
/// With `among` (the paths inotify saw change, see
/// [`crate::exec::changes`]), only the files at or beneath them
/// and their folders are looked at: nothing else changed.
pub(crate) fn restore_modes(
    tree: &WorkTree,
    dir: &Path,
    among: Option<&[PathBuf]>,
) -> Result<(), EngineError> {
    let umask = planwright_os::process::umask();
    let mut files = Vec::new();
    // Sorted by component: a directory comes before what it holds.
    let mut dirs = BTreeSet::from([PathBuf::new()]);
    if let Some(paths) = among {
        // A folder whose files are all gone from the index still counts.
        dirs.extend(
            paths
                .iter()
                .flat_map(|p| p.ancestors())
                .map(Path::to_path_buf),
        );
    }
    for (rel, mode) in tree.entries(among)? {
        dirs.extend(rel.ancestors().skip(1).map(Path::to_path_buf));
        let want = match mode {
            Mode::Regular => 0o666 & !umask,
            Mode::Executable => 0o777 & !umask,
            Mode::Other => continue,
        };
        files.push((rel, want));
    }
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Ok(());
    };
    let above = Dir::open(parent)?;
    let want = 0o777 & !umask;
    for rel in dirs {
        let rel = Path::new(name).join(rel);
        // Not a directory any more: the reset's to put right.
        let found = above.entry(&rel).ok().flatten();
        if found.is_some_and(|e| e.kind == Kind::Dir && e.mode != want) {
            above.set_dir_mode(&rel, want)?;
        }
    }
    let root = Dir::open(dir)?;
    for (rel, want) in files {
        // A path through a symlink is the reset's to put right.
        let found = root.entry(&rel).ok().flatten();
        if found.is_some_and(|e| e.kind == Kind::File && e.mode != want) {
            root.remove(&rel)?;
        }
    }
    Ok(())
}

/// The real file `[workspace] copy` entry `rel` names in the user's
/// checkout at `root`: it must exist and be a regular file, and a symlink
/// is followed only when it stays inside the repository.
pub(crate) fn copy_source(root: &Path, rel: &str) -> Result<PathBuf, EngineError> {
    let refuse = |why: String| {
        EngineError::Settings(format!(
            "`[workspace] copy` in `planwright.toml` names `{rel}`, {why}; \
             put the file itself in your checkout, or remove it from `[workspace] copy`"
        ))
    };
    let path = root.join(rel);
    let real = match path.canonicalize() {
        Ok(real) => real,
        Err(_) if path.symlink_metadata().is_ok() => {
            return Err(refuse("a symlink whose target does not exist".to_string()))
        }
        Err(_) => {
            return Err(refuse(format!(
                "which is not in your checkout `{}`",
                root.display()
            )))
        }
    };
    let real_root = root.canonicalize().map_err(|e| EngineError::io(root, e))?;
    if !real.starts_with(&real_root) {
        return Err(refuse(format!(
            "a symlink to `{}`, outside the repository (planwright copies nothing from outside it)",
            real.display()
        )));
    }
    if !real.is_file() {
        return Err(refuse("which is not a file".to_string()));
    }
    Ok(real)
}

/// `path` emptied (created when missing).
pub(crate) fn fresh_dir(path: &Path) -> Result<PathBuf, EngineError> {
    remove_any(path)?;
    std::fs::create_dir_all(path).map_err(|e| EngineError::io(path, e))?;
    Ok(path.to_path_buf())
}

/// Removes whatever is at `path` (file, symlink or directory), never
/// following a symlink.
pub(crate) fn remove_any(path: &Path) -> Result<(), EngineError> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.is_dir() {
        return std::fs::remove_file(path).map_err(|e| EngineError::io(path, e));
    }
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            open_up(path)?;
            std::fs::remove_dir_all(path).map_err(|e| EngineError::io(path, e))
        }
        done => done.map_err(|e| EngineError::io(path, e)),
    }
}

/// Cleans the work tree `dir` of `tree` as `how` says. git cannot enter
/// a folder no one may open or search (an agent's or a gate's `chmod
/// 000`; root can), and then fails: the folders it names are opened up
/// (see [`open_up_beneath`]) and it runs once more. What git said it
/// removed. With `among`, only at or beneath these paths.
pub(crate) fn clean(
    tree: &WorkTree,
    how: Clean,
    dir: &Path,
    among: Option<&[PathBuf]>,
) -> Result<Vec<u8>, EngineError> {
    let folders = match tree.clean(how, among)? {
        Cleaned::Done(said) => return Ok(said),
        Cleaned::Shut { folders, .. } => folders,
    };
    let root = Dir::open(dir)?;
    for rel in folders {
        open_up_beneath(&root, &rel)?;
    }
    again(tree, how, among)
}

/// A clean's result, a folder it could not enter an error.
fn again(tree: &WorkTree, how: Clean, among: Option<&[PathBuf]>) -> Result<Vec<u8>, EngineError> {
    match tree.clean(how, among)? {
        Cleaned::Done(said) => Ok(said),
        Cleaned::Shut { error, .. } => Err(error.into()),
    }
}

/// Lets the owner into every directory below `dir`, so that it can be
/// removed: a gate or an agent may leave one it made unreadable, and
/// overlayfs leaves its work directory so.
fn open_up(dir: &Path) -> Result<(), EngineError> {
    let (Some(up), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Ok(());
    };
    Ok(open_up_beneath(&Dir::open(up)?, Path::new(name))?)
}

/// Gives the owner every right on the directory `rel` below `root` and on
/// each directory in it, from the top down, following nothing.
fn open_up_beneath(root: &Dir, rel: &Path) -> Result<(), planwright_os::beneath::BeneathError> {
    let mut todo = vec![rel.to_path_buf()];
    while let Some(rel) = todo.pop() {
        let Some(entry) = root.entry(&rel)?.filter(|e| e.kind == Kind::Dir) else {
            continue;
        };
        root.set_dir_mode(&rel, entry.mode | 0o700)?;
        todo.extend(root.dir(&rel)?.names()?.into_iter().map(|n| rel.join(n)));
    }
    Ok(())
}

/// The line a log gets when a run first uses one of the work trees
/// planwright keeps (a workspace, a gate checkout): `what` (`workspace
/// slot-1`) was made from nothing, or, when `differed` counts the tracked
/// files that differed from planwright's index, reused (kept from an
/// earlier run, or made before the first attempt), those files written
/// again from git's objects.
pub(crate) fn first_use(what: &str, differed: Option<usize>) -> String {
    match differed {
        None => format!("-- {what} made: every file written from git's objects\n"),
        Some(n) => format!(
            "-- {what} reused: checked against planwright's index, {} differed \
             and {} written again from git's objects\n",
            planwright_plan::words::count(n, "tracked file"),
            if n == 1 { "was" } else { "were" }
        ),
    }
}

/// Creates the directory `path` goes in.
pub(crate) fn create_parent(path: &Path) -> Result<(), EngineError> {
    match path.parent() {
        Some(dir) => std::fs::create_dir_all(dir).map_err(|e| EngineError::io(dir, e)),
        None => Ok(()),
    }
}

/// For tests of what an ordinary user meets (root enters any folder):
/// when this process is root, runs the test `name` of this test binary
/// again as uid and gid 65534 (through `setpriv`), with `/tmp` for its
/// temporary directories, and fails when that fails.
#[cfg(test)]
pub(crate) fn again_as_an_ordinary_user(name: &str) {
    let me = std::fs::metadata("/proc/self").expect("/proc is mounted");
    if std::os::unix::fs::MetadataExt::uid(&me) != 0 {
        return;
    }
    let test = std::env::current_exe().unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&test)
        .args(["--exact", name, "--test-threads=1"])
        .env("TMPDIR", "/tmp")
        .env("HOME", "/tmp")
        .output()
        .expect("root runs the test again as an ordinary user with `setpriv`");
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "as uid 65534: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    /// A directory its owner made unreadable (as gates may, and overlayfs
    /// does with its work directory) is opened up for removal; `remove_any`
    /// does so when removing fails (only for a user other than root).
    #[test]
    fn directories_their_owner_cannot_enter_are_opened_up_for_removal() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("upper");
        let (shut, inner) = (top.join("shut"), top.join("shut/inner"));
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(inner.join("f"), "x").unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o755)).unwrap();
        symlink(&outside, top.join("link")).unwrap();
        for dir in [&inner, &shut] {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o000)).unwrap();
        }
        open_up(&top).unwrap();
        for dir in [&top, &shut, &inner] {
            let mode = std::fs::metadata(dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o700, 0o700, "{}", dir.display());
        }
        let mode = std::fs::metadata(&outside).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755, "a symlink is not followed");
        remove_any(&top).unwrap();
        assert!(!top.exists());
    }
}
