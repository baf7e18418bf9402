//! Lent cache folders: a CLI that needs a populated cache to start
//! (opencode's `bin`, where it keeps the ripgrep it would otherwise
//! download as it starts) is lent a copy of the user's, filled once by
//! planwright, outside any ticket, and written by no sandbox.

use crate::error::EngineError;
use planwright_os::beneath::{BeneathError, Dir};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where the lent cache folders of the slot homes in `homes`
/// (`.planwright/homes`) are kept: beside the slots' folders, in none of
/// them, so no agent or reviewer may write there.
pub(crate) fn lent_root(homes: &Path) -> PathBuf {
    homes.join(".lent")
}

/// Lends the user's cache folder `from` to the CLI `cli`'s fresh slot home
/// `home` (in `homes`) at `to`: a symlink to planwright's copy of it in
/// [`lent_root`], filled once per process from the user's folder and never
/// from a slot, which every slot reads and none writes (the CLI's attempt
/// to write there fails, so nothing one ticket's agent leaves there
/// reaches the next). Nothing is lent when the user has no such folder.
pub(crate) fn lend(
    homes: &Path,
    home: &Dir,
    cli: &OsStr,
    from: &Path,
    to: &Path,
) -> Result<(), EngineError> {
    if !from.is_dir() {
        return Ok(());
    }
    let lent = lent_root(homes).join(cli).join(to);
    fill_once(&lent, from)?;
    if let Some(up) = to.parent().filter(|p| !p.as_os_str().is_empty()) {
        home.create_dirs(up)?;
    }
    Ok(home.symlink(&lent, to)?)
}

/// Makes `lent` a copy of `from` unless this process did already: while a
/// run lasts, the folder the slots see never changes under them.
fn fill_once(lent: &Path, from: &Path) -> Result<(), EngineError> {
    static FILLED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    let mut filled = FILLED.lock().unwrap_or_else(|e| e.into_inner());
    if filled.contains(lent) {
        return Ok(());
    }
    let (Some(up), Some(name)) = (lent.parent(), lent.file_name()) else {
        return Ok(());
    };
    std::fs::create_dir_all(up).map_err(|e| EngineError::io(up, e))?;
    let up = Dir::open(up)?;
    up.remove(Path::new(name))?;
    place(&up, from, Path::new(name), false)?;
    filled.insert(lent.to_path_buf());
    Ok(())
}

/// Links or copies the user's `from` to `to` in a fresh home: a file, or
/// (copied) a folder of settings with the regular files and folders in it.
pub(crate) fn place(home: &Dir, from: &Path, to: &Path, link: bool) -> Result<(), BeneathError> {
    let Ok(source) = std::fs::metadata(from) else {
        return Ok(());
    };
    if let Some(up) = to.parent().filter(|p| !p.as_os_str().is_empty()) {
        home.create_dirs(up)?;
    }
    if source.is_file() && link {
        return home.symlink(from, to);
    }
    if source.is_file() {
        return home.copy_in(from, to);
    }
    if !source.is_dir() || link {
        return Ok(());
    }
    home.create_dirs(to)?;
    let entries = std::fs::read_dir(from).map_err(|source| BeneathError::Io {
        path: from.to_path_buf(),
        source,
    })?;
    for entry in entries.flatten() {
        // A folder is entered only as itself, so no symlink loops; a
        // symlink to a file is the user's way to share one.
        let inner = entry.file_type().is_ok_and(|t| t.is_dir());
        let path = entry.path();
        if inner || path.is_file() {
            place(home, &path, &to.join(entry.file_name()), false)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two slots get links to one copy of the user's folder, made when the
    /// first was lent it (a later change of the user's reaches neither);
    /// without the user's folder nothing is lent.
    #[test]
    fn every_slot_links_to_one_copy_filled_once_and_nothing_without_the_users() {
        let tmp = tempfile::tempdir().unwrap();
        let user = tmp.path().join("user-cache/bin");
        std::fs::create_dir_all(user.join("sub")).unwrap();
        std::fs::write(user.join("rg"), "the user's").unwrap();
        std::fs::write(user.join("sub/x"), "x").unwrap();
        let homes = tmp.path().join("homes");
        let to = Path::new("cache/tool/bin");
        let lent = lent_root(&homes).join("tool").join(to);
        let home = |slot: &str| {
            let dir = homes.join(slot).join("tool");
            std::fs::create_dir_all(&dir).unwrap();
            (Dir::open(&dir).unwrap(), dir)
        };
        let (one, one_path) = home("slot-1");
        lend(&homes, &one, OsStr::new("tool"), &user, to).unwrap();
        std::fs::write(user.join("rg"), "changed later").unwrap();
        let (two, two_path) = home("slot-2");
        lend(&homes, &two, OsStr::new("tool"), &user, to).unwrap();
        for path in [&one_path, &two_path] {
            assert_eq!(std::fs::read_link(path.join(to)).unwrap(), lent);
            let rg = std::fs::read_to_string(path.join(to).join("rg")).unwrap();
            assert_eq!(rg, "the user's");
            assert_eq!(std::fs::read(path.join(to).join("sub/x")).unwrap(), b"x");
        }
        let (three, three_path) = home("slot-3");
        let missing = tmp.path().join("no-cache/bin");
        lend(&homes, &three, OsStr::new("other"), &missing, to).unwrap();
        assert!(std::fs::symlink_metadata(three_path.join(to)).is_err());
        assert!(!lent_root(&homes).join("other").exists());
    }
}
