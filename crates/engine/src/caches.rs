//! Package-manager caches of a run's directories: npm, pnpm, yarn, pip,
//! uv, cargo and go each get their own variables pointing into a cache
//! planwright keeps per directory, so no sandboxed process needs the
//! user's `~/.npm`, `~/.cache/pip` or `~/.cargo` (which it may not write)
//! and none writes them.
//!
//! A slot's agent and the set-up in its workspace share
//! `.planwright/caches/agents/<slot>`, which the agent may write. The
//! set-up of a gate checkout writes `.planwright/caches/checkouts/<name>`,
//! out of every agent's reach; the gates there read it and write nothing
//! in it (what a tool must write as it runs, such as go's build cache,
//! goes to a fresh directory in the gate's `TMPDIR`), so no candidate
//! changes what the next set-up installs from.
//!
//! A variable already in the environment a process gets (one the user
//! names in `[workspace] env`, `[agent] env` or a gate's `env`) keeps the
//! user's value: that is the way out of planwright's caches.

use crate::error::EngineError;
use crate::git::repo::Repo;
use planwright_os::beneath::Dir;
use std::path::{Path, PathBuf};

/// How a gate, which must not change the set-up's caches, gets a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AtGate {
    /// The gate checkout's cache, read-only: what the set-up installed from.
    Read,
    /// A fresh directory in the gate's `TMPDIR`: the tool writes it as it
    /// runs and keeps nothing the set-up needs there.
    Fresh,
}

/// A package manager's variable and the directory below a cache it names.
struct Var {
    name: &'static str,
    dir: &'static str,
    at_gate: AtGate,
}

const fn var(name: &'static str, dir: &'static str, at_gate: AtGate) -> Var {
    Var { name, dir, at_gate }
}

/// Every variable planwright sets, by package manager (the table in
/// docs/configuration.md). npm keeps its logs in its cache; pnpm keeps its
/// store in `$PNPM_HOME/store` (its `npm_config_store_dir` would make every
/// npm 11 command warn of an unknown setting) and, where it may not write
/// its metadata cache and state in the home, goes on without them; yarn 1
/// reads the cache folder, yarn 2+ also the global folder; cargo's home is
/// seeded with the user's cargo configuration (see [`Caches::prepare`]).
/// `XDG_CACHE_HOME` is left alone: agent CLIs keep costly caches there.
const VARS: &[Var] = &[
    var("npm_config_cache", "npm", AtGate::Read),
    var("PNPM_HOME", "pnpm", AtGate::Read),
    var("YARN_CACHE_FOLDER", "yarn", AtGate::Read),
    var("YARN_GLOBAL_FOLDER", "yarn-global", AtGate::Read),
    var("PIP_CACHE_DIR", "pip", AtGate::Read),
    var("UV_CACHE_DIR", "uv", AtGate::Fresh),
    var("CARGO_HOME", "cargo", AtGate::Read),
    var("GOPATH", "go", AtGate::Read),
    var("GOMODCACHE", "go/pkg/mod", AtGate::Read),
    var("GOCACHE", "go-build", AtGate::Fresh),
];

/// The cargo configuration files copied from the user's cargo home
/// (never `credentials.toml`: registry tokens stay withheld).
const CARGO_CONFIG: &[&str] = &["config.toml", "config"];

/// The package-manager caches of one directory (a slot's workspace or a
/// gate checkout).
#[derive(Debug, Clone)]
pub struct Caches {
    root: PathBuf,
}

impl Caches {
    /// Where every agent's caches live: agents may write below it.
    pub fn agents_root(repo: &Repo) -> PathBuf {
        repo.state_dir().join("caches").join("agents")
    }

    /// The caches of slot `slot`'s agent and set-up.
    pub fn agent(repo: &Repo, slot: &str) -> Caches {
        Caches {
            root: Self::agents_root(repo).join(slot),
        }
    }

    /// The caches of gate checkout `name`'s set-up, which its gates read.
    pub fn checkout(repo: &Repo, name: &str) -> Caches {
        Caches {
            root: repo.state_dir().join("caches").join("checkouts").join(name),
        }
    }

    /// The directory a sandbox lets the set-up (and a slot's agent) write.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Makes the caches' directory and gives cargo's home the user's cargo
    /// configuration as it is now. The directory may be an agent's to
    /// write, so nothing in it is followed.
    pub fn prepare(&self) -> Result<(), EngineError> {
        std::fs::create_dir_all(&self.root).map_err(|e| EngineError::io(&self.root, e))?;
        match user_cargo_home() {
            Some(home) => self.seed_cargo(&home),
            None => Ok(()),
        }
    }

    /// Copies the cargo configuration of `home` into cargo's home here
    /// (and removes a copy of a file `home` no longer has).
    fn seed_cargo(&self, home: &Path) -> Result<(), EngineError> {
        let dir = Dir::open(&self.root)?.create_dirs(Path::new("cargo"))?;
        for file in CARGO_CONFIG {
            let rel = Path::new(file);
            match std::fs::read(home.join(file)) {
                Ok(bytes) => dir.write(rel, &bytes)?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if dir.entry(rel)?.is_some() {
                        dir.remove(rel)?;
                    }
                }
                Err(e) => return Err(EngineError::io(home.join(file), e)),
            }
        }
        Ok(())
    }

    /// Adds to `env` each variable pointing a package manager into these
    /// caches, unless `env` already has it.
    pub fn add_to(&self, env: &mut Vec<(String, String)>) {
        for v in VARS {
            add(env, v.name, &self.root.join(v.dir));
        }
    }

    /// As [`Caches::add_to`] for a gate with `tmp` for its `TMPDIR`:
    /// what the tool must write as it runs goes below `tmp`.
    pub fn add_for_gate(&self, env: &mut Vec<(String, String)>, tmp: &Path) {
        for v in VARS {
            let dir = match v.at_gate {
                AtGate::Read => self.root.join(v.dir),
                AtGate::Fresh => tmp.join("caches").join(v.dir),
            };
            add(env, v.name, &dir);
        }
    }
}

/// Whether planwright sets `name` for a package manager.
pub(crate) fn is_cache_var(name: &str) -> bool {
    VARS.iter().any(|v| v.name == name)
}

fn add(env: &mut Vec<(String, String)>, name: &str, dir: &Path) {
    if !env.iter().any(|(k, _)| k == name) {
        env.push((name.to_string(), dir.display().to_string()));
    }
}

/// The user's cargo home: `CARGO_HOME`, else `~/.cargo`.
fn user_cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_variable_keeps_the_users_value_and_gates_write_only_below_tmp() {
        let caches = Caches {
            root: PathBuf::from("/state/caches/checkouts/merge"),
        };
        let mut env = vec![("PIP_CACHE_DIR".to_string(), "/mine".to_string())];
        caches.add_for_gate(&mut env, Path::new("/state/tmp/gate-merge"));
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("PIP_CACHE_DIR"), Some("/mine"));
        assert_eq!(
            get("npm_config_cache"),
            Some("/state/caches/checkouts/merge/npm")
        );
        assert_eq!(
            get("GOCACHE"),
            Some("/state/tmp/gate-merge/caches/go-build")
        );
        assert_eq!(env.len(), VARS.len());
        assert!(is_cache_var("CARGO_HOME") && !is_cache_var("HOME"));
    }

    #[test]
    fn cargo_gets_the_users_config_but_never_through_a_planted_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("config.toml"), "[net]\nretry = 5\n").unwrap();
        std::fs::write(home.join("credentials.toml"), "token = \"secret\"\n").unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let caches = Caches {
            root: tmp.path().join("slot-1"),
        };
        std::fs::create_dir_all(caches.root()).unwrap();
        // What an agent that may write its caches could leave there.
        std::os::unix::fs::symlink(&elsewhere, caches.root().join("cargo")).unwrap();
        caches.seed_cargo(&home).unwrap();
        let cargo = caches.root().join("cargo");
        assert!(!cargo.is_symlink());
        assert_eq!(
            std::fs::read_to_string(cargo.join("config.toml")).unwrap(),
            "[net]\nretry = 5\n"
        );
        assert!(!cargo.join("credentials.toml").exists());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
}
