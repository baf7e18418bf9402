//! Which branch a run merges into, and where that was said: `--base` or
//! `[run] base`, else the plan's own `base` where its format has one, else
//! the branch the repository's checkout is on. Never a fixed name.

use super::{Check, CheckName};
use crate::git::repo::Repo;
use planwright_config::{BaseSource, ChosenBase};
use planwright_plan::Plan;
use std::path::Path;

/// The branch the repository in `dir` has checked out, if it is a
/// repository and its `HEAD` is on a branch.
pub fn current_branch(dir: &Path) -> Option<String> {
    Repo::open(dir).ok()?.checked_out_branch().ok().flatten()
}

/// Sets `plan.base` to the branch its run merges into (see the module) and
/// says where it came from. `Err`: there is none to use (the checkout's
/// `HEAD` is detached), as the `base` check to report. A folder that is not
/// a repository keeps the plan's base: the `repo` check reports it.
pub(crate) fn settle(
    dir: &Path,
    plan: &mut Plan,
    chosen: Option<&ChosenBase>,
) -> Result<BaseSource, Check> {
    if let Some(c) = chosen {
        plan.base = c.name.clone();
        return Ok(c.source);
    }
    if plan.source_format.names_base() {
        return Ok(BaseSource::Plan);
    }
    let Ok(repo) = Repo::open(dir) else {
        return Ok(BaseSource::Plan);
    };
    match repo.checked_out_branch() {
        Ok(Some(branch)) => {
            plan.base = branch;
            Ok(BaseSource::CurrentBranch)
        }
        _ => Err(Check::error(
            CheckName::Base,
            format!(
                "a {} plan names no base branch, and the repository's `HEAD` is on no branch to use instead",
                plan.source_format
            ),
            format!(
                "name the branch to merge into with `{} BRANCH` or `[run] base` in planwright.toml, or check one out",
                planwright_plan::Flag::Base
            ),
        )),
    }
}

/// How preflight names where the base came from.
pub(crate) fn said(source: BaseSource) -> String {
    match source {
        BaseSource::Flag => format!("from `{}`", planwright_plan::Flag::Base),
        BaseSource::File => "from `[run] base`".into(),
        BaseSource::Plan => "the plan's `base`".into(),
        BaseSource::CurrentBranch => format!(
            "the repository's current branch; `{} BRANCH` or `[run] base` names another",
            planwright_plan::Flag::Base
        ),
    }
}

/// What to do when the base branch does not exist.
pub(crate) fn missing_hint(base: &str, source: BaseSource) -> String {
    let elsewhere = format!(
        "name an existing branch with `{} BRANCH` or `[run] base` in planwright.toml",
        planwright_plan::Flag::Base
    );
    match source {
        BaseSource::Plan => format!(
            "create it (`git branch {base} HEAD`), change the plan's `base`, or {elsewhere}"
        ),
        _ => format!("create it (`git branch {base} HEAD`), or {elsewhere}"),
    }
}
