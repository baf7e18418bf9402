//! The `scripted:DIR` agent: applies prepared work per ticket, no model.
//!
//! For ticket ID on attempt N it takes the first existing of
//! `DIR/ID/attempt-N/` and `DIR/ID/`, then: copies its `files/` tree over the
//! workspace (symlinks stay symlinks), deletes the paths listed in its
//! `delete` file (one per line), applies its `patch` file with `git apply`,
//! and, if it has a `blocked` file, gives up with that file's text as reason.
//! A `cost` file (a dollar figure) is reported as what the attempt cost, so
//! that budgets and cost caps can be tested without a model.

use super::{Agent, AgentOutcome, AgentReport, AttemptContext, CostSource};
use crate::error::EngineError;
use crate::git::worktree::WorkTree;
use planwright_os::process::Cancel;
use std::path::{Component, Path, PathBuf};

/// The scripted agent.
pub(crate) struct Scripted {
    dir: PathBuf,
}

impl Scripted {
    /// Fixtures under `dir`.
    pub(crate) fn new(dir: PathBuf) -> Scripted {
        // Its files are read from the workspace (`git apply` runs there): a
        // folder relative to where planwright started must not change
        // meaning.
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        Scripted { dir }
    }

    /// The fixture folder for this attempt.
    pub(crate) fn fixture(&self, ticket: &str, attempt: u32) -> Option<PathBuf> {
        let by_attempt = self.dir.join(ticket).join(format!("attempt-{attempt}"));
        let any = self.dir.join(ticket);
        [by_attempt, any].into_iter().find(|p| p.is_dir())
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> EngineError + '_ {
    move |e| EngineError::io(path, e)
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), EngineError> {
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let kind = entry.file_type().map_err(io(&src))?;
        if kind.is_dir() {
            std::fs::create_dir_all(&dst).map_err(io(&dst))?;
            copy_tree(&src, &dst)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&src).map_err(io(&src))?;
            let _ = std::fs::remove_file(&dst);
            std::os::unix::fs::symlink(&target, &dst).map_err(io(&dst))?;
        } else {
            std::fs::copy(&src, &dst).map_err(io(&dst))?;
        }
    }
    Ok(())
}

fn inside(rel: &str) -> bool {
    Path::new(rel)
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
}

impl Agent for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn unusable(&self) -> Option<String> {
        (!self.dir.is_dir()).then(|| {
            format!(
                "the scripted agent's folder `{}` does not exist",
                self.dir.display()
            )
        })
    }

    fn attempt(&self, ctx: &AttemptContext, _cancel: &Cancel) -> Result<AgentReport, EngineError> {
        let Some(fixture) = self.fixture(&ctx.ticket, ctx.attempt) else {
            return Ok(AgentReport::from(AgentOutcome::Failed(format!(
                "found no fixture for ticket {} in `{}` (expected `{0}/attempt-{}/` or `{0}/`)",
                ctx.ticket,
                self.dir.display(),
                ctx.attempt
            ))));
        };
        let mut log = format!("scripted agent: fixture `{}`\n", fixture.display());
        let files = fixture.join("files");
        if files.is_dir() {
            copy_tree(&files, &ctx.workspace)?;
            log.push_str("copied files/\n");
        }
        let delete = fixture.join("delete");
        if delete.is_file() {
            let list = std::fs::read_to_string(&delete).map_err(io(&delete))?;
            for rel in list.lines().map(str::trim).filter(|l| !l.is_empty()) {
                if !inside(rel) {
                    return Ok(AgentReport::from(AgentOutcome::Failed(format!(
                        "has a `delete` that lists `{rel}`, which leaves the workspace"
                    ))));
                }
                let path = ctx.workspace.join(rel);
                let _ = std::fs::remove_file(&path).or_else(|_| std::fs::remove_dir_all(&path));
                log.push_str(&format!("deleted {rel}\n"));
            }
        }
        let patch = fixture.join("patch");
        if patch.is_file() {
            // As an agent would: with the workspace's own repository.
            let text = std::fs::read(&patch).map_err(io(&patch))?;
            let own = WorkTree::new(&ctx.workspace.join(".git"), &ctx.workspace);
            if let Err(why) = own.apply(&text)? {
                let _ = std::fs::write(&ctx.log, format!("{log}git apply failed:\n{why}"));
                return Ok(AgentReport::from(AgentOutcome::Failed(format!(
                    "could not `git apply` `{}`: {why}",
                    patch.display()
                ))));
            }
            log.push_str("applied patch\n");
        }
        let _ = std::fs::write(&ctx.log, &log);
        let cost = match reported_cost(&fixture.join("cost"))? {
            Ok(cost) => cost,
            Err(why) => return Ok(AgentReport::from(AgentOutcome::Failed(why))),
        };
        let blocked = fixture.join("blocked");
        let mut report = AgentReport::from(if blocked.is_file() {
            let reason = std::fs::read_to_string(&blocked).map_err(io(&blocked))?;
            AgentOutcome::Blocked(reason.trim().to_string())
        } else {
            AgentOutcome::Finished
        });
        report.cost = cost.map(|usd| (usd, CostSource::Reported));
        Ok(report)
    }
}

/// The dollars a fixture's `cost` file says the attempt cost (none without
/// the file), or why its text is no cost.
fn reported_cost(path: &Path) -> Result<Result<Option<f64>, String>, EngineError> {
    if !path.is_file() {
        return Ok(Ok(None));
    }
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    Ok(match text.trim().parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(Some(usd)),
        _ => Err(format!(
            "has a `cost` file `{}` that holds `{}`, not a dollar figure such as `0.25`",
            path.display(),
            text.trim()
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cost_file_is_a_dollar_figure_and_anything_else_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cost");
        assert_eq!(reported_cost(&path).unwrap(), Ok(None));
        std::fs::write(&path, "0.75\n").unwrap();
        assert_eq!(reported_cost(&path).unwrap(), Ok(Some(0.75)));
        std::fs::write(&path, "$1\n").unwrap();
        let why = reported_cost(&path).unwrap().unwrap_err();
        assert!(why.contains("holds `$1`, not a dollar figure"), "{why}");
    }
}
