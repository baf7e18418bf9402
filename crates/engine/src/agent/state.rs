//! A CLI's per-slot state home: where each adapter says its CLI keeps its
//! state ([`StateLayout`]), which of the user's files a fresh home needs
//! ([`Seed`]), the retry settings written over them ([`Tune`]), and the
//! reset before each attempt ([`prepare_state`]), which follows nothing
//! the last attempt left there.

use crate::error::EngineError;
use planwright_os::beneath::{BeneathError, Dir, Kind};
use std::path::{Path, PathBuf};

/// Where a CLI keeps its state, and which of the user's files a fresh
/// per-slot state directory needs to work.
#[derive(Debug, Clone)]
pub(crate) struct StateLayout {
    /// Variables to set: name, and the folder under the slot home they
    /// point to (`""` is the home itself), made there.
    pub vars: Vec<(&'static str, &'static str)>,
    /// Variables naming a file under the slot home, which the CLI makes.
    pub files: Vec<(&'static str, &'static str)>,
    /// Files to bring over from the user's own state.
    pub seeds: Vec<Seed>,
    /// Settings written over the seeded files (the CLI's retry knobs).
    pub tunes: Vec<Tune>,
}

/// A setting planwright writes into a file of the slot home once it is
/// seeded: the CLI's own retries cut short, so that it gives up well
/// before the agent's time limit and planwright's pause takes over.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tune {
    /// The file, relative to the slot home.
    pub to: &'static str,
    /// Its new content from the seeded one (`None`: there is none), or
    /// `None` to leave it as it is (a file it cannot read safely).
    pub edit: fn(Option<&[u8]>) -> Option<Vec<u8>>,
}

/// One file of the user's CLI state to make available in a slot home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seed {
    /// The user's file, or (copied) folder; absent ones are skipped.
    pub from: PathBuf,
    /// Where it goes, relative to the slot home.
    pub to: &'static str,
    /// How it gets there.
    pub how: Placing,
}

/// How a [`Seed`] reaches a slot home.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placing {
    /// Symlinked (credentials: never copied, and a token the CLI refreshes
    /// in place is seen by every slot).
    Link,
    /// Copied (settings, which the agent may change in its slot: the next
    /// reset copies them anew).
    Copy,
    /// Lent: a folder of the user's CLI cache the CLI needs populated to
    /// start, copied once into a folder no sandbox may write and symlinked
    /// there (see [`super::lend::lend`]).
    Lend,
}

impl Seed {
    /// A credential, linked.
    pub(crate) fn link(from: PathBuf, to: &'static str) -> Seed {
        let how = Placing::Link;
        Seed { from, to, how }
    }

    /// A setting, copied.
    pub(crate) fn copy(from: PathBuf, to: &'static str) -> Seed {
        let how = Placing::Copy;
        Seed { from, to, how }
    }

    /// A folder of the cache, lent read-only.
    pub(crate) fn lend(from: PathBuf, to: &'static str) -> Seed {
        let how = Placing::Lend;
        Seed { from, to, how }
    }
}

/// Resets the slot home to its seed and returns the variables that point
/// the CLI at it. Everything the last attempt's CLI (and so its agent) left
/// in the slot's homes goes, symlinks included, and nothing there is
/// followed; only a linked credential the CLI refreshed in place is kept
/// (see [`refreshed`]).
pub(crate) fn prepare_state(
    home: &Path,
    layout: &StateLayout,
) -> Result<Vec<(String, String)>, EngineError> {
    let (Some(slot), Some(name)) = (home.parent(), home.file_name()) else {
        return Err(EngineError::io(
            home,
            std::io::Error::from(std::io::ErrorKind::InvalidInput),
        ));
    };
    // The slot's folder is planwright's; what is in it, the agent's.
    std::fs::create_dir_all(slot).map_err(|e| EngineError::io(slot, e))?;
    let slot = Dir::open(slot)?;
    let kept = refreshed(&slot, Path::new(name), layout);
    slot.empty()?;
    let dir = slot.create_dirs(Path::new(name))?;
    for seed in &layout.seeds {
        let to = Path::new(seed.to);
        match seed.how {
            Placing::Lend => {
                let homes = home.parent().and_then(Path::parent).unwrap_or(home);
                super::lend::lend(homes, &dir, name, &seed.from, to)?;
            }
            how => super::lend::place(&dir, &seed.from, to, how == Placing::Link)?,
        }
    }
    for (to, bytes) in kept {
        dir.replace(Path::new(to), &bytes, 0o600)?;
    }
    for tune in &layout.tunes {
        tune_file(&dir, tune)?;
    }
    let mut vars = Vec::new();
    for (name, rel) in &layout.vars {
        let path = if rel.is_empty() {
            home.to_path_buf()
        } else {
            dir.create_dirs(Path::new(rel))?;
            home.join(rel)
        };
        vars.push((name.to_string(), path.display().to_string()));
    }
    for (name, rel) in &layout.files {
        let path = home.join(rel);
        vars.push((name.to_string(), path.display().to_string()));
    }
    Ok(vars)
}

/// Writes `tune` into its file under `home`, read and written beneath it
/// (a seeded link is a credential, never a setting: it is left alone).
fn tune_file(home: &Dir, tune: &Tune) -> Result<(), BeneathError> {
    let to = Path::new(tune.to);
    if let Some(parent) = to.parent().filter(|p| !p.as_os_str().is_empty()) {
        home.create_dirs(parent)?;
    }
    let seeded = match home.entry(to)? {
        Some(e) if e.kind == Kind::File => Some(home.read(to)?),
        Some(_) => return Ok(()),
        None => None,
    };
    match (tune.edit)(seeded.as_deref()) {
        Some(bytes) => home.replace(to, &bytes, 0o600),
        None => Ok(()),
    }
}

/// The linked credentials of `layout` that the CLI replaced in `home` (in
/// `slot`) by a regular file newer than the user's: its refresh of a token
/// (it renamed a new file over the link), which the next attempt needs
/// once the user's copy is stale. Only regular files, read beneath the
/// home, each at most [`MAX_CREDENTIAL`] bytes.
fn refreshed(slot: &Dir, home: &Path, layout: &StateLayout) -> Vec<(&'static str, Vec<u8>)> {
    let Ok(dir) = slot.dir(home) else {
        return Vec::new();
    };
    let newer = |seed: &Seed| {
        let user = std::fs::metadata(&seed.from).ok()?.modified().ok()?;
        let entry = dir.entry(Path::new(seed.to)).ok()??;
        (entry.kind == Kind::File && entry.modified > user).then_some(())?;
        let bytes = dir.read(Path::new(seed.to)).ok()?;
        (bytes.len() <= MAX_CREDENTIAL).then_some((seed.to, bytes))
    };
    layout
        .seeds
        .iter()
        .filter(|seed| seed.how == Placing::Link)
        .filter_map(newer)
        .collect()
}

/// The largest refreshed credential kept (a login is a few kilobytes).
const MAX_CREDENTIAL: usize = 1 << 20;

/// The user's directory for a CLI's state: `$VAR` when set, else
/// `$HOME/default` (for example `CODEX_HOME`, else `~/.codex`).
pub(crate) fn user_dir(var: &dyn Fn(&str) -> Option<String>, name: &str, default: &str) -> PathBuf {
    match var(name).filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(var("HOME").unwrap_or_default()).join(default),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::time::Duration;

    #[test]
    fn state_is_seeded_by_link_and_copy() {
        let tmp = tempfile::tempdir().unwrap();
        let user = tmp.path().join("user");
        std::fs::create_dir_all(&user).unwrap();
        std::fs::write(user.join("auth.json"), "{}").unwrap();
        std::fs::write(user.join("config.toml"), "x = 1").unwrap();
        let layout = StateLayout {
            vars: vec![("TOOL_HOME", ""), ("TOOL_DATA", "data")],
            files: vec![("TOOL_LOG", "history.md")],
            seeds: vec![
                Seed::link(user.join("auth.json"), "auth.json"),
                Seed::copy(user.join("config.toml"), "config.toml"),
                Seed::link(user.join("missing"), "missing"),
            ],
            tunes: vec![],
        };
        let home = tmp.path().join("homes/slot-1/tool");
        let vars = prepare_state(&home, &layout).unwrap();
        assert_eq!(vars[0], ("TOOL_HOME".into(), home.display().to_string()));
        assert!(home.join("data").is_dir());
        let log = home.join("history.md").display().to_string();
        assert_eq!(vars[2], ("TOOL_LOG".into(), log));
        assert!(!home.join("history.md").exists(), "the CLI makes it");
        assert_eq!(
            std::fs::read_link(home.join("auth.json")).unwrap(),
            user.join("auth.json")
        );
        assert!(!home
            .join("config.toml")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(!home.join("missing").exists());
        // Again: idempotent.
        assert_eq!(prepare_state(&home, &layout).unwrap(), vars);
    }

    /// What an attempt's CLI left in its slot is gone at the next reset,
    /// and seeding writes through none of its symlinks; a credential it
    /// refreshed in place is kept; a folder of settings is copied.
    #[test]
    fn a_reset_leaves_only_the_seed() {
        let tmp = tempfile::tempdir().unwrap();
        let user = tmp.path().join("user");
        std::fs::create_dir_all(user.join("agents/deep")).unwrap();
        std::fs::write(user.join("auth.json"), "user login").unwrap();
        std::fs::write(user.join("settings.json"), "user settings").unwrap();
        std::fs::write(user.join("agents/deep/a.md"), "agent").unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("target"), "untouched").unwrap();
        symlink(&outside, user.join("agents/loop")).unwrap();
        let layout = StateLayout {
            vars: vec![("TOOL_HOME", "")],
            files: vec![],
            seeds: vec![
                Seed::link(user.join("auth.json"), "auth.json"),
                Seed::copy(user.join("settings.json"), "conf/settings.json"),
                Seed::copy(user.join("agents"), "agents"),
            ],
            tunes: vec![],
        };
        let slot = tmp.path().join("homes/slot-1");
        let home = slot.join("tool");
        prepare_state(&home, &layout).unwrap();
        assert_eq!(read(&home.join("agents/deep/a.md")), "agent");
        assert!(
            !home.join("agents/loop").exists(),
            "a folder link is not followed"
        );

        // What the agent leaves: a file, symlinks where seeds go and one
        // beside its home, settings of its own.
        std::fs::write(home.join("planted"), "x").unwrap();
        std::fs::remove_dir_all(home.join("conf")).unwrap();
        symlink(&outside, home.join("conf")).unwrap();
        std::fs::remove_dir_all(home.join("agents")).unwrap();
        symlink(outside.join("target"), home.join("agents")).unwrap();
        symlink(&outside, slot.join("other")).unwrap();
        prepare_state(&home, &layout).unwrap();
        assert_eq!(
            std::fs::read_dir(&slot).unwrap().count(),
            1,
            "only the home"
        );
        assert!(!home.join("planted").exists());
        assert_eq!(read(&home.join("conf/settings.json")), "user settings");
        assert_eq!(read(&home.join("agents/deep/a.md")), "agent");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
        assert_eq!(read(&outside.join("target")), "untouched");

        // The CLI renamed a refreshed login over its link: kept, as a file.
        std::fs::remove_file(home.join("auth.json")).unwrap();
        std::fs::write(home.join("auth.json"), "refreshed").unwrap();
        let later = std::time::SystemTime::now() + Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(home.join("auth.json"))
            .unwrap()
            .set_modified(later)
            .unwrap();
        prepare_state(&home, &layout).unwrap();
        assert_eq!(read(&home.join("auth.json")), "refreshed");
        // An older file there is not the CLI's refresh: linked anew.
        std::fs::remove_file(home.join("auth.json")).unwrap();
        std::fs::write(home.join("auth.json"), "stale").unwrap();
        let earlier = std::time::SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(home.join("auth.json"))
            .unwrap()
            .set_modified(earlier)
            .unwrap();
        prepare_state(&home, &layout).unwrap();
        assert!(home
            .join("auth.json")
            .symlink_metadata()
            .unwrap()
            .is_symlink());
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn user_dir_prefers_the_variable() {
        let env = |name: &str| match name {
            "HOME" => Some("/home/u".to_string()),
            "CODEX_HOME" => Some("/elsewhere".to_string()),
            _ => None,
        };
        assert_eq!(
            user_dir(&env, "CODEX_HOME", ".codex"),
            PathBuf::from("/elsewhere")
        );
        assert_eq!(
            user_dir(&env, "CLAUDE_CONFIG_DIR", ".claude"),
            PathBuf::from("/home/u/.claude")
        );
    }
}
