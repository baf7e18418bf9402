//! The `planwright` binary run as a user would, but in an environment of the
//! test's making, as jj's `TestEnvironment` runs `jj`: the variables are
//! cleared, then set to a home inside a temporary folder, no global or
//! system git configuration and no colour (unless [`Cli::color_auto`]).
//! Nothing of the person running the tests (`PLANWRIGHT_*`,
//! `AGB_STRICT_GATES`, `CLICOLOR_FORCE`, `TERM`, their git identity)
//! reaches the binary; a test that wants a variable sets it on the
//! [`Command`] it gets, where it reads.
//!
//! The binary's path is `env!("CARGO_BIN_EXE_planwright")`, which only the
//! cli crate's tests know, so they pass it in.

use crate::Env;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Variables the binary keeps from the test's environment: where its
/// programs (git, sh, node, python3) are found.
const KEPT: &[&str] = &["PATH"];

/// The `planwright` binary and the home it runs with.
pub struct Cli {
    bin: PathBuf,
    home: PathBuf,
    no_color: bool,
    // Holds the home of a `Cli` that is not part of an `Env`.
    _tmp: Option<tempfile::TempDir>,
}

impl Cli {
    /// `bin` with a home of its own in a new temporary folder.
    pub fn new(bin: impl Into<PathBuf>) -> Cli {
        let tmp = tempfile::tempdir().unwrap();
        let mut cli = Cli::with_home(bin, &tmp.path().join("home"));
        cli._tmp = Some(tmp);
        cli
    }

    /// `bin` with `home` (created here) as its home.
    pub fn with_home(bin: impl Into<PathBuf>, home: &Path) -> Cli {
        std::fs::create_dir_all(home).unwrap();
        Cli {
            bin: bin.into(),
            home: home.to_path_buf(),
            no_color: true,
            _tmp: None,
        }
    }

    /// Leaves `NO_COLOR` unset, for tests of how the binary chooses colour.
    pub fn color_auto(mut self) -> Cli {
        self.no_color = false;
        self
    }

    pub fn bin(&self) -> &Path {
        &self.bin
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Gives `cmd` (the binary, or a program that runs it) the hermetic
    /// environment.
    pub fn hermetic<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        cmd.env_clear();
        for name in KEPT {
            if let Some(value) = std::env::var_os(name) {
                cmd.env(name, value);
            }
        }
        // A temporary folder of its own, removed with the home: what the
        // binary leaves there on purpose (a failed draft's logs) or by a
        // kill mid-run never piles up in the machine's.
        let tmp = self.home.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        cmd.env("HOME", &self.home)
            .env("TMPDIR", tmp)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1");
        if self.no_color {
            cmd.env("NO_COLOR", "1");
        }
        cmd
    }

    /// The binary, to run in `dir`, in the hermetic environment.
    pub fn command(&self, dir: &Path) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.current_dir(dir);
        self.hermetic(&mut cmd);
        cmd
    }

    /// `planwright ARGS` in `dir`, to its end.
    pub fn run(&self, dir: &Path, args: &[&str]) -> Output {
        self.command(dir)
            .args(args)
            .output()
            .expect("planwright runs")
    }
}

impl Env {
    /// This environment for the CLI's tests: [`Env::planwright`] runs
    /// `bin` in the environment's root, with its home in `home/` there.
    pub fn with_cli(mut self, bin: impl Into<PathBuf>) -> Env {
        self.cli = Some(Cli::with_home(bin, &self.root().join("home")));
        self
    }

    /// The binary given to [`Env::with_cli`].
    pub fn cli(&self) -> &Cli {
        self.cli.as_ref().expect("an Env made `with_cli`")
    }

    /// `planwright ARGS` in the environment's root, to its end.
    pub fn planwright(&self, args: &[&str]) -> Output {
        self.cli().run(self.root(), args)
    }

    /// The binary, to run in the environment's root.
    pub fn command(&self) -> Command {
        self.cli().command(self.root())
    }

    /// `COMMAND plan.json --repo repo --agent AGENT EXTRA...` (see
    /// [`plan_args`]), to its end.
    pub fn with_agent(&self, command: &str, agent: &str, extra: &[&str]) -> Output {
        self.planwright(&[&plan_args(command, agent)[..], extra].concat())
    }

    /// [`Env::with_agent`] with the scripted agent of the environment's
    /// fixtures (`scripted:FIXTURES`).
    pub fn scripted(&self, command: &str, extra: &[&str]) -> Output {
        let agent = format!("scripted:{}", self.fixtures().display());
        self.with_agent(command, &agent, extra)
    }

    /// [`Env::with_agent`] with the `cmd` agent running `agent_cmd`
    /// (`--agent cmd --agent-cmd AGENT_CMD`).
    pub fn cmd_agent(&self, command: &str, agent_cmd: &str, extra: &[&str]) -> Output {
        self.with_agent(
            command,
            "cmd",
            &[&["--agent-cmd", agent_cmd][..], extra].concat(),
        )
    }

    /// `status --output json` of the run in `repo`.
    pub fn status_json(&self) -> serde_json::Value {
        let out = self.planwright(&["status", "--repo", "repo", "--output", "json"]);
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

/// `COMMAND plan.json --repo repo --agent AGENT`: the arguments that run
/// (or check) the plan in an [`Env`]'s root on its repository with AGENT;
/// more may follow.
pub fn plan_args<'a>(command: &'a str, agent: &'a str) -> [&'a str; 6] {
    [command, "plan.json", "--repo", "repo", "--agent", agent]
}

/// What `bin --version` says after `planwright `: the build a worker
/// started from `bin` names at `hello`.
pub fn build_of(bin: &str) -> String {
    let out = std::process::Command::new(bin)
        .arg("--version")
        .output()
        .unwrap();
    let said = text(&out.stdout);
    said.trim().trim_start_matches("planwright ").to_string()
}

/// Bytes a program printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Fails the test unless `out` ended with exit code `code`, showing what
/// it printed.
#[track_caller]
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Fails the test unless `printed` (what a program wrote to its standard
/// output or error) contains `needle`, showing it.
#[track_caller]
pub fn assert_says(printed: &[u8], needle: &str) {
    let printed = text(printed);
    assert!(printed.contains(needle), "{needle:?} is not in:\n{printed}");
}

/// Whether `program --version` runs and succeeds.
pub fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `env` in place of the binary prints what it was given.
    fn given(cli: &Cli) -> Vec<String> {
        let out = cli.run(Path::new("."), &[]);
        assert!(out.status.success());
        let mut names: Vec<String> = text(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('=').map(|(name, _)| name.to_string()))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_binary_gets_only_the_variables_set_for_it() {
        let cli = Cli::new("env");
        let names = given(&cli);
        let expected = [
            "GIT_CONFIG_GLOBAL",
            "GIT_CONFIG_NOSYSTEM",
            "HOME",
            "NO_COLOR",
            "TMPDIR",
        ];
        let mut expected: Vec<String> = expected.map(String::from).to_vec();
        if std::env::var_os("PATH").is_some() {
            expected.push("PATH".to_string());
            expected.sort();
        }
        assert_eq!(names, expected);
        let home = format!("HOME={}\n", cli.home().display());
        assert!(text(&cli.run(Path::new("."), &[]).stdout).contains(&home));
        assert!(cli.home().is_dir());
        assert!(!given(&Cli::new("env").color_auto()).contains(&"NO_COLOR".to_string()));
    }

    #[test]
    fn an_envs_binary_lives_in_its_root() {
        let env = Env::new(&[("a.txt", "a\n")]).with_cli("env");
        assert_eq!(env.cli().home(), env.root().join("home"));
        let out = text(&env.planwright(&[]).stdout);
        assert!(out.contains(&format!("HOME={}\n", env.root().join("home").display())));
    }
}
