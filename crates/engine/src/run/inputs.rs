//! The files that decide a run: its plan and its `planwright.toml`. Each is
//! read once as the run starts, and its blob id recorded in the state
//! store; a file that lies in the repository becomes a rail of every ticket
//! ([`RunRails`]), so no agent can rewrite what judges it, and a continued
//! run says which of them changed since the run last started, and by which
//! of its merges.

use crate::error::EngineError;
use crate::git::objects;
use crate::git::repo::Repo;
use crate::verify::RunRails;
use planwright_config::{ConfigSource, CONFIG_FILE};
use std::path::{Path, PathBuf};

/// One deciding file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunInput {
    /// What it is to the run: `plan` or `configuration`.
    pub role: &'static str,
    /// Its path as the user gave it, for messages.
    pub shown: String,
    /// Its path in the repository, when it lies there.
    pub in_repo: Option<String>,
    /// The blob id of its content.
    pub blob: String,
}

/// Reads the plan at `plan` and the configuration from `config` (when there
/// is one) once, for their blob ids and their place in `repo`. A plan on
/// standard input, or one a library caller made in memory (its path names
/// no file), has no file to protect or compare.
pub(crate) fn read(
    repo: &Repo,
    plan: &str,
    config: Option<&ConfigSource>,
) -> Result<Vec<RunInput>, EngineError> {
    let mut inputs = Vec::new();
    if plan != "-" {
        if let Some(input) = from_disk(repo, "plan", Path::new(plan))? {
            inputs.push(input);
        }
    }
    match config {
        Some(ConfigSource::File(path)) => inputs.extend(from_disk(repo, "configuration", path)?),
        Some(ConfigSource::Base { commit }) => inputs.push(RunInput {
            role: "configuration",
            shown: format!("{CONFIG_FILE} of the base commit {}", short(commit)),
            in_repo: Some(CONFIG_FILE.to_string()),
            blob: objects::object_id(repo, &format!("{commit}:{CONFIG_FILE}"))?,
        }),
        None => {}
    }
    Ok(inputs)
}

/// The file at `path` as the run input `role`; a plan that is no file is
/// none (a configuration that vanished is an error).
fn from_disk(
    repo: &Repo,
    role: &'static str,
    path: &Path,
) -> Result<Option<RunInput>, EngineError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && role == "plan" => return Ok(None),
        Err(e) => return Err(EngineError::io(path, e)),
    };
    let blob = objects::hash_bytes(repo, bytes)?;
    Ok(Some(RunInput {
        role,
        shown: path.display().to_string(),
        in_repo: in_repo(repo.root(), path),
        blob,
    }))
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// `planwright.toml` at the root of the repository in `dir`, as the tip of
/// the branch `base` holds it. The working tree's copy is never read: it
/// may differ from what the run's tickets start from.
pub fn root_config(dir: &Path, base: &str) -> Result<RootConfig, EngineError> {
    let repo = Repo::open(dir)?;
    let at_base = match repo.branch_tip(base)? {
        Some(commit) => repo
            .file_at(&commit, CONFIG_FILE)?
            .map(|text| (ConfigSource::Base { commit }, text)),
        None => None,
    };
    Ok(RootConfig {
        in_tree: repo.root().join(CONFIG_FILE),
        at_base,
    })
}

/// The repository root's `planwright.toml`.
#[derive(Debug, Clone)]
pub struct RootConfig {
    /// Where the working tree has it (which is never what is read).
    pub in_tree: PathBuf,
    /// The base commit's file, for the run's record, and its text; `None`
    /// when the base commit has none.
    pub at_base: Option<(ConfigSource, String)>,
}

/// `path` relative to the working tree at `root`, when it lies inside.
fn in_repo(root: &Path, path: &Path) -> Option<String> {
    let real = path.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    let rel = real.strip_prefix(root).ok()?;
    let parts: Vec<&str> = rel.iter().map(|c| c.to_str()).collect::<Option<_>>()?;
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The rails the inputs make: each one in the repository is "the plan" or
/// "the configuration" of the run.
pub(crate) fn rails(inputs: &[RunInput], allow_change: bool) -> RunRails {
    let role = |r: &str| match r {
        "plan" => "the plan",
        _ => "the configuration",
    };
    RunRails {
        decisive: (inputs.iter())
            .filter_map(|i| Some((i.in_repo.clone()?, role(i.role))))
            .collect(),
        allow_change,
    }
}

/// How the inputs are kept in the state store: a line per file.
pub(crate) fn record(inputs: &[RunInput]) -> String {
    inputs
        .iter()
        .map(|i| format!("{}\t{}\t{}\n", i.role, i.blob, i.shown))
        .collect()
}

/// The inputs whose content differs from what `recorded` (a
/// [`record`]) says, with the blob recorded before.
pub(crate) fn changed<'i>(recorded: &str, inputs: &'i [RunInput]) -> Vec<(&'i RunInput, String)> {
    let before = |role: &str| {
        recorded
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .find(|(r, _)| *r == role)
            .and_then(|(_, rest)| rest.split('\t').next())
            .map(str::to_string)
    };
    inputs
        .iter()
        .filter_map(|i| before(i.role).filter(|b| *b != i.blob).map(|b| (i, b)))
        .collect()
}

/// The merges among `merged` (ticket, merge commit) that changed `path`.
pub(crate) fn merged_by(
    repo: &Repo,
    path: &str,
    merged: &[(String, String)],
) -> Result<Vec<String>, EngineError> {
    let mut by = Vec::new();
    for (ticket, commit) in merged {
        if objects::merge_changed(repo, commit, path)? {
            by.push(ticket.clone());
        }
    }
    Ok(by)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(role: &'static str, blob: &str) -> RunInput {
        RunInput {
            role,
            shown: format!("{role}-file"),
            in_repo: Some(format!("{role}-file")),
            blob: blob.into(),
        }
    }

    #[test]
    fn a_change_is_found_against_what_was_recorded() {
        let then = [input("plan", "aaa"), input("configuration", "bbb")];
        let recorded = record(&then);
        assert!(changed(&recorded, &then).is_empty());
        let now = [input("plan", "aaa"), input("configuration", "ccc")];
        let found = changed(&recorded, &now);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].0.role, found[0].1.as_str()),
            ("configuration", "bbb")
        );
        // A file the run did not have before is no change of it.
        assert!(changed("plan\taaa\tp\n", &now).is_empty());
    }

    #[test]
    fn inputs_in_the_repository_become_rails() {
        let mut outside = input("configuration", "x");
        outside.in_repo = None;
        let rails = rails(&[input("plan", "p"), outside], false);
        assert_eq!(rails.decisive, vec![("plan-file".to_string(), "the plan")]);
    }
}
