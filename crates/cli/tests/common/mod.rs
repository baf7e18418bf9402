//! What the run tests of this crate share (`run.rs`, `preflight.rs`,
//! `agent_homes.rs`): the binary and the scripted three-ticket plan.

use planwright_testkit::{write, Env};

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// This file's environments: `files` committed in `repo/`, the binary
/// run in the root.
pub(crate) fn env_with(files: &[(&str, &str)]) -> Env {
    Env::new(files).with_cli(BIN)
}

pub(crate) const SH_PLAN: &str = r#"{
  "planwright": 1, "source_format": "native", "base": "main",
  "gates": [{"name": "readme", "argv": ["test", "-f", "README.md"]}],
  "tickets": [
    {"id": "A", "title": "a", "body": "make a", "scope": [{"pattern": "a.txt", "op": "create"}]},
    {"id": "B", "title": "b", "body": "make b", "scope": [{"pattern": "b.txt", "op": "create"}]},
    {"id": "C", "title": "c", "body": "make c", "scope": [{"pattern": "c.txt", "op": "create"}], "depends_on": ["A"]}
  ]
}"#;

pub(crate) fn sh_env() -> Env {
    let env = env_with(&[("README.md", "hi\n")]);
    write(env.root(), "plan.json", SH_PLAN);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("B", 0, "b.txt", "b\n");
    env.fixture("C", 0, "c.txt", "c\n");
    env
}
