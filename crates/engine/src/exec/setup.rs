//! The project's set-up step (`[workspace] setup`, such as `npm ci`), shared
//! by the agents' workspaces and the gate checkouts: its key, its stamp and
//! how it runs.
//!
//! The key is the set-up commands plus the blob of each
//! `[workspace] setup_inputs` file at the commit a directory was reset to;
//! a directory whose stamp (kept under `.planwright/index`, out of every
//! agent's and gate's reach) holds the same key keeps its set-up's result,
//! and any other runs the set-up again.

use crate::caches::Caches;
use crate::error::EngineError;
use crate::git::objects;
use crate::git::repo::Repo;
use crate::model::failure::{Failure, FailureKind};
use crate::model::Verdict;
use planwright_config::WorkspaceSettings;
use planwright_os::process::{self, Cancel, Spec};
use planwright_os::sandbox::Confine;
use planwright_plan::gate_integrity;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// Where a set-up runs: its directory, its private `TMPDIR`, its
/// package-manager caches and its sandbox (which may write all three).
pub(crate) struct Room<'a> {
    pub dir: &'a Path,
    pub tmp: &'a Path,
    pub caches: &'a Caches,
    pub confine: &'a Confine,
}

/// The set-up of a run's directories.
#[derive(Debug, Clone)]
pub(crate) struct Setup {
    repo: Repo,
    settings: WorkspaceSettings,
}

impl Setup {
    /// The set-up `settings` say, for directories of `repo`.
    pub(crate) fn new(repo: Repo, settings: WorkspaceSettings) -> Setup {
        Setup { repo, settings }
    }

    /// A set-up's environment, by allowlist like an agent's: the base set
    /// ([`crate::agent::BASE_ENV`]) and `[workspace] env`, never `GIT_*`
    /// (it would point git at the user's repository), with the private
    /// `TMPDIR` and the package managers pointed at `caches` (a variable
    /// `[workspace] env` names keeps the user's value). Registry tokens and
    /// the like are withheld unless named.
    fn env(&self, tmp: &Path, caches: &Caches) -> Vec<(String, String)> {
        let names: Vec<String> = crate::agent::BASE_ENV
            .iter()
            .map(|n| n.to_string())
            .chain(self.settings.env.iter().cloned())
            .collect();
        let mut env = process::scrubbed_env(&names);
        env.retain(|(k, _)| !k.starts_with("GIT_") && k != "TMPDIR");
        env.push(("TMPDIR".into(), tmp.display().to_string()));
        caches.add_to(&mut env);
        env
    }

    /// Whether there is anything to run.
    pub(crate) fn is_empty(&self) -> bool {
        self.settings.setup.is_empty()
    }

    /// The set-up commands and the blob of each input at `commit` (an
    /// input the commit lacks keys as empty, so adding it changes the key):
    /// the declared ones and those the commands read whatever is declared
    /// ([`Setup::inputs`]).
    pub(crate) fn key(&self, commit: &str) -> Result<String, EngineError> {
        let mut key = format!("{:?}", self.settings.setup);
        for input in self.inputs() {
            let spec = format!("{commit}:{input}");
            let blob = objects::lookup(&self.repo, &spec)?.unwrap_or_default();
            let _ = write!(key, " {input}={blob}");
        }
        Ok(key)
    }

    /// `[workspace] setup_inputs`, then the files the commands run or read
    /// as they install: each command's own script (`sh scripts/setup.sh`),
    /// and for a package manager `package.json` (its lifecycle scripts run)
    /// and the rc files. A result is kept only for the same content of all
    /// of them, so no candidate's change to them rides on another's result.
    pub(crate) fn inputs(&self) -> Vec<String> {
        let mut inputs = self.settings.setup_inputs.clone();
        for argv in &self.settings.setup {
            inputs.extend(gate_integrity::program_files(argv));
            if gate_integrity::package_manager(argv) {
                inputs.push("package.json".to_string());
                inputs.extend(gate_integrity::RC_FILES.iter().map(|f| f.to_string()));
            }
        }
        let mut seen = std::collections::HashSet::new();
        inputs.retain(|i| seen.insert(i.clone()));
        inputs
    }

    /// Runs the set-up commands in `room`, logging to `log`; `Some`
    /// verdict when one failed (or the run was interrupted). `place` says
    /// where for the failure's message.
    pub(crate) fn run(
        &self,
        room: &Room,
        log: &Path,
        place: &str,
        cancel: &Cancel,
    ) -> Result<Option<Verdict>, EngineError> {
        let dir = room.dir;
        let env = self.env(room.tmp, room.caches);
        if !self.settings.setup.is_empty() {
            let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
            crate::log::append(log, &format!("environment: {}\n", names.join(", ")))?;
        }
        for argv in &self.settings.setup {
            let command = argv.join(" ");
            crate::log::append(
                log,
                &format!("$ {command}   (set-up in {})\n", dir.display()),
            )?;
            let env = env.clone();
            let spec = Spec {
                argv: argv.clone(),
                cwd: dir.to_path_buf(),
                env,
                stdin: None,
                timeout: self.settings.setup_timeout,
                grace: Duration::from_secs(5),
                log: Some(log.to_path_buf()),
                lines: None,
                confine: Some(room.confine.clone()),
                log_limit: None,
            };
            let done = match process::run(&spec, cancel) {
                Ok(done) => done,
                Err(e) => {
                    let e = crate::error::sandbox_stops(e)?;
                    return Err(EngineError::Settings(format!("set-up `{command}`: {e}")));
                }
            };
            if let Some(hit) = done.limit.filter(|_| done.exit != process::Exit::Cancelled) {
                let who = format!("the set-up `{command}` {place}");
                let f = crate::contain::limit_failure(&who, hit);
                return Ok(Some(Verdict::Fail(f.with_evidence(done.output_tail))));
            }
            match done.exit {
                process::Exit::Code(0) => {}
                process::Exit::Cancelled => return Ok(Some(Verdict::Cancelled)),
                other => {
                    return Ok(Some(Verdict::Fail(
                        Failure::new(
                            FailureKind::GateFailure,
                            format!("the set-up `{command}` failed {place}: {other}"),
                        )
                        .with_evidence(done.output_tail),
                    )))
                }
            }
        }
        Ok(None)
    }
}

/// The stamp saved at `path`, if any.
pub(crate) fn read_stamp(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Forgets the stamp at `path` (before a set-up that may fail half-way).
pub(crate) fn clear_stamp(path: &Path) -> Result<(), EngineError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(EngineError::io(path, e)),
        _ => Ok(()),
    }
}

/// Saves `stamp` at `path`.
pub(crate) fn write_stamp(path: &Path, stamp: &str) -> Result<(), EngineError> {
    crate::exec::files::create_parent(path)?;
    std::fs::write(path, stamp).map_err(|e| EngineError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::testing::{git, init};

    fn commit(root: &Path, package_json: &str) -> String {
        std::fs::write(root.join("package.json"), package_json).unwrap();
        std::fs::write(root.join("package-lock.json"), "{}\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "c"]);
        git(root, &["rev-parse", "HEAD"])
    }

    #[test]
    fn an_install_keys_on_package_json_whatever_the_declared_inputs() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        init(root);
        let base = commit(root, r#"{"scripts": {"postinstall": "node setup.js"}}"#);
        let poisoned = commit(root, r#"{"scripts": {"postinstall": "node evil.js"}}"#);
        let repo = Repo::open(root).unwrap();
        let setup = |argv: &[&str]| {
            Setup::new(
                repo.clone(),
                WorkspaceSettings {
                    setup: vec![argv.iter().map(|s| s.to_string()).collect()],
                    setup_inputs: vec!["package-lock.json".into()],
                    pristine: false,
                    setup_timeout: None,
                    copy: vec![],
                    env: vec![],
                },
            )
        };
        let npm = setup(&["npm", "ci"]);
        assert!(npm.inputs().contains(&"package.json".to_string()));
        assert_ne!(npm.key(&base).unwrap(), npm.key(&poisoned).unwrap());
        let script = setup(&["sh", "scripts/setup.sh"]);
        assert_eq!(script.inputs(), ["package-lock.json", "scripts/setup.sh"]);
        assert_eq!(script.key(&base).unwrap(), script.key(&poisoned).unwrap());
    }

    #[test]
    fn a_set_up_gets_the_base_set_and_what_workspace_env_names_only() {
        std::env::set_var("SETUP_TEST_WITHHELD_TOKEN", "secret");
        std::env::set_var("SETUP_TEST_NAMED_TOKEN", "named");
        // git ignores a `GIT_*` name it does not know; other tests run git.
        std::env::set_var("GIT_SETUP_TEST_NAMED", "1");
        let tmp = tempfile::tempdir().unwrap();
        init(tmp.path());
        let settings = WorkspaceSettings {
            env: vec!["SETUP_TEST_NAMED_*".into(), "GIT_SETUP_TEST_NAMED".into()],
            ..WorkspaceSettings::default()
        };
        let setup = Setup::new(Repo::open(tmp.path()).unwrap(), settings);
        let caches = Caches::checkout(&setup.repo, "merge");
        let env = setup.env(Path::new("/private/tmp"), &caches);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert!(names.contains(&"SETUP_TEST_NAMED_TOKEN"), "{names:?}");
        assert!(!names.contains(&"SETUP_TEST_WITHHELD_TOKEN"), "{names:?}");
        assert!(
            !names.contains(&"GIT_SETUP_TEST_NAMED"),
            "never GIT_*, even named"
        );
        let tmpdirs: Vec<_> = env.iter().filter(|(k, _)| k == "TMPDIR").collect();
        assert_eq!(tmpdirs.len(), 1);
        assert_eq!(tmpdirs[0].1, "/private/tmp");
        let npm: Vec<_> = env
            .iter()
            .filter(|(k, _)| k == "npm_config_cache")
            .collect();
        assert_eq!(npm.len(), 1);
        assert_eq!(Path::new(&npm[0].1), caches.root().join("npm"));
    }
}
