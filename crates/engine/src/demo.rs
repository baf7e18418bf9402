//! The built-in demo: a small repository and plan in a temporary folder,
//! worked by the scripted agent. Its gate is a shell script run as
//! `sh test.sh` (every machine has `sh`), so it needs no toolchain.
//!
//! It shows two tickets in parallel, a dependency, a rail, and a ticket whose
//! first attempt edits a file outside its scope, is rejected, and passes on
//! the second attempt, which starts from the first one's candidate with the
//! rejection fed back and undoes the stray edit.

use crate::error::EngineError;
use crate::git::refs::commit_all;
use crate::git::repo::Repo;
use crate::git::tree;
use crate::run::RunSettings;
use std::path::{Path, PathBuf};
use std::time::Duration;

const README: &str = "# hello\n\nA tiny shell library, built by planwright's demo.\n";

const TEST_SH: &str = r#"#!/bin/sh
# Runs every test in tests/: each is a shell script that exits non-zero on failure.
set -e
for t in tests/*.sh; do
  [ -e "$t" ] || continue
  sh "$t"
  echo "ok $t"
done
"#;

const PLAN: &str = r#"{
  "planwright": 1,
  "source_format": "native",
  "base": "main",
  "gates": [{"name": "test", "argv": ["sh", "test.sh"]}],
  "tickets": [
    {
      "id": "greet",
      "title": "greeting function",
      "body": "Create lib/greet.sh defining greet NAME, which prints `Hello, NAME!`, and tests/greet.sh testing it.",
      "scope": [{"pattern": "lib/greet.sh", "op": "create"}, {"pattern": "tests/greet.sh", "op": "create"}],
      "rails": ["test.sh"]
    },
    {
      "id": "farewell",
      "title": "farewell function",
      "body": "Create lib/farewell.sh defining farewell NAME, which prints `Goodbye, NAME.`, and tests/farewell.sh testing it.",
      "scope": [{"pattern": "lib/farewell.sh", "op": "create"}, {"pattern": "tests/farewell.sh", "op": "create"}],
      "rails": ["test.sh"]
    },
    {
      "id": "hello",
      "title": "hello command",
      "body": "Create bin/hello.sh, which sources lib/greet.sh and greets its first argument (default: world), and tests/hello.sh. lib/greet.sh exists once the greet ticket merged: use it, never change it.",
      "scope": [{"pattern": "bin/hello.sh", "op": "create"}, {"pattern": "tests/hello.sh", "op": "create"}],
      "rails": ["test.sh", "lib/greet.sh"],
      "depends_on": ["greet"]
    }
  ]
}
"#;

/// Scripted fixtures: (ticket/attempt folder, path in the workspace, content).
const FIXTURES: &[(&str, &str, &str)] = &[
    ("greet", "lib/greet.sh", "greet() {\n  echo \"Hello, $1!\"\n}\n"),
    (
        "greet",
        "tests/greet.sh",
        ". ./lib/greet.sh\n[ \"$(greet World)\" = \"Hello, World!\" ]\n",
    ),
    ("farewell/attempt-1", "lib/farewell.sh", "farewell() {\n  echo \"Goodbye, $1.\"\n}\n"),
    (
        "farewell/attempt-1",
        "tests/farewell.sh",
        ". ./lib/farewell.sh\n[ \"$(farewell Ada)\" = \"Goodbye, Ada.\" ]\n",
    ),
    // The first attempt also "helpfully" edits the README: out of scope.
    ("farewell/attempt-1", "README.md", "# hello\n\nNow with farewells!\n"),
    // The second starts from the first one's candidate and only puts the
    // README back.
    ("farewell/attempt-2", "README.md", README),
    (
        "hello",
        "bin/hello.sh",
        "#!/bin/sh\n. \"$(dirname \"$0\")/../lib/greet.sh\"\ngreet \"${1:-world}\"\n",
    ),
    (
        "hello",
        "tests/hello.sh",
        "[ \"$(sh bin/hello.sh)\" = \"Hello, world!\" ]\n[ \"$(sh bin/hello.sh Bob)\" = \"Hello, Bob!\" ]\n",
    ),
];

/// What `prepare` made.
#[derive(Debug, Clone)]
pub struct Demo {
    /// The target repository.
    pub repo: PathBuf,
    /// The plan file.
    pub plan: PathBuf,
    /// The scripted agent's fixture folder.
    pub fixtures: PathBuf,
}

impl Demo {
    /// What landed on the demo repository's `main`, one line a commit,
    /// newest first.
    pub fn landed(&self) -> Result<String, EngineError> {
        tree::log(&Repo::open(&self.repo)?, "main")
    }

    /// The run settings of the demo: two jobs, two strikes, one-minute
    /// limits (it finishes in about a second).
    pub fn settings(&self) -> RunSettings {
        let minute = Some(Duration::from_secs(60));
        let mut settings = RunSettings::new(self.plan.display().to_string());
        settings.jobs = 2;
        settings.strikes = 2;
        settings.agent_timeout = minute;
        settings.gates.timeout = minute;
        // The demo runs wherever planwright builds: confined where the
        // kernel can, as `[sandbox] mode = "off"` otherwise.
        if planwright_os::sandbox::Containment::new(planwright_os::sandbox::Mode::Enforce).is_err()
        {
            settings.contain.mode = planwright_config::SandboxMode::Off;
        }
        settings
    }
}

fn write(path: &Path, text: &str) -> Result<(), EngineError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| EngineError::io(dir, e))?;
    }
    std::fs::write(path, text).map_err(|e| EngineError::io(path, e))
}

/// Creates the demo repository, plan and fixtures under `dir`.
pub fn prepare(dir: &Path) -> Result<Demo, EngineError> {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).map_err(|e| EngineError::io(&repo, e))?;
    let made = Repo::init(&repo, "main")?;
    write(&repo.join("README.md"), README)?;
    write(&repo.join("test.sh"), TEST_SH)?;
    write(&repo.join("tests/.keep"), "")?;
    commit_all(&made, "demo project: empty, with a test runner")?;
    let plan = dir.join("plan.json");
    write(&plan, PLAN)?;
    let fixtures = dir.join("agent");
    for (folder, path, text) in FIXTURES {
        write(&fixtures.join(folder).join("files").join(path), text)?;
    }
    Ok(Demo {
        repo,
        plan,
        fixtures,
    })
}
