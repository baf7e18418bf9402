//! The `copy` and `setup` checks: what `[workspace]` brings into every
//! slot, tried against the user's checkout and the base commit.

use super::{failed, ok_if_quiet, Check, CheckName};
use crate::exec::workspace::{WorkspaceSettings, Workspaces};
use crate::exec::LocalExecutor;
use crate::git::repo::Repo;
use crate::model::Verdict;
use crate::verify::checkout::Checkouts;
use planwright_config::ContainSettings;
use planwright_os::process::Cancel;
use planwright_plan::Plan;

/// The gate checkout preflight tries the set-up and the gates in: the
/// first slot's, which the run's first ticket then finds made (and set
/// up), so that it is not written whole twice. Preflight holds the run
/// lock meanwhile: no run uses it at the same time.
pub(super) fn trial() -> String {
    LocalExecutor::slot(0)
}

/// Runs `trial` (a try of the set-up or the gates in the [`trial`]
/// checkout) while, when `local` (the run's attempts run on this
/// machine), the first slot's workspace is made beside it if it never was
/// (see [`Workspaces::warm`]): the run's first ticket would otherwise pay
/// for writing every file of the tree before its agent starts. Under the
/// run lock, as both write what a run owns.
pub(super) fn beside_first_workspace<T>(
    repo: &Repo,
    local: bool,
    base: &str,
    trial: impl FnOnce() -> T,
) -> T {
    std::thread::scope(|scope| {
        let warming =
            local.then(|| scope.spawn(|| Workspaces::warm(repo, &LocalExecutor::slot(0), base)));
        let out = trial();
        // The first attempt prepares its workspace whatever this left.
        if let Some(warming) = warming {
            let _ = warming.join();
        }
        out
    })
}

/// `[workspace] setup`: run once on the base commit, confined and with its
/// caches as in a gate checkout of a run (a result kept from the last try
/// on the same key is reused). One that fails there would fail every
/// ticket, so it is an error naming what the tool said, not a strike.
pub(super) fn check_setup(
    repo: &Repo,
    plan: &Plan,
    workspace: &WorkspaceSettings,
    contain: &ContainSettings,
    local: bool,
    out: &mut Vec<Check>,
) {
    if workspace.setup.is_empty() || failed(out) {
        return;
    }
    let Ok(Some(base)) = repo.branch_tip(&plan.base) else {
        return;
    };
    let short = &base[..base.len().min(10)];
    let Ok(containment) = crate::contain::containment(contain.mode) else {
        return;
    };
    // planwright's own git and checkouts are a run's: none may be going on.
    let _lock = match crate::run::lock::RunLock::acquire(repo) {
        Ok(lock) => lock,
        Err(e) => {
            out.push(Check::warning(
                CheckName::Setup,
                format!("the set-up was not tried on the base commit {short}: {e}"),
                "run preflight again when that run has ended",
            ));
            return;
        }
    };
    let ready = repo
        .ensure_excluded()
        .and_then(|()| repo.ensure_own_git(&contain.allow_config));
    if let Err(e) = ready {
        out.push(Check::error(
            CheckName::Setup,
            format!("cannot try the set-up on the base commit {short}: {e}"),
            "check that `.planwright/` in the repository is writable",
        ));
        return;
    }
    let checkouts = Checkouts::new(repo.clone(), workspace.clone(), containment, contain);
    let log = repo.state_dir().join("preflight-setup.log");
    let _ = std::fs::remove_file(&log);
    let hint = format!(
        "make `[workspace] setup` in `planwright.toml` work on the base branch `{}` \
         (the whole log is {})",
        plan.base,
        log.display()
    );
    let tried = beside_first_workspace(repo, local, &base, || {
        checkouts.try_setup(&trial(), &base, &log, &Cancel::default())
    });
    match tried {
        Ok(None) => out.push(Check::ok(
            CheckName::Setup,
            format!("the set-up runs on the base commit {short}"),
        )),
        Ok(Some(Verdict::Fail(f))) => out.push(Check::error(
            CheckName::Setup,
            format!(
                "on the base commit {short}, {}:\n{}",
                f.message,
                f.evidence.trim_end()
            ),
            hint,
        )),
        Ok(Some(_)) => out.push(Check::error(
            CheckName::Setup,
            "the set-up's trial was interrupted",
            "run preflight again",
        )),
        Err(e) => out.push(Check::error(
            CheckName::Setup,
            format!("cannot try the set-up on the base commit {short}: {e}"),
            e.hint().map_or(hint, str::to_string),
        )),
    }
}

/// `[workspace] copy`: each file must be in the user's checkout (a file, or
/// a symlink that stays inside the repository) and not tracked, as each
/// workspace already has the commit's version of a tracked file.
pub(super) fn check_copy(repo: &Repo, copy: &[String], out: &mut Vec<Check>) {
    let before = out.len();
    for rel in copy {
        if let Err(e) = crate::exec::files::copy_source(repo.root(), rel) {
            out.push(Check::error(
                CheckName::Copy,
                e.to_string(),
                "`[workspace] copy` names files of your checkout that git ignores, such as `.env`",
            ));
            continue;
        }
        if repo.tracks(rel).unwrap_or(false) {
            out.push(Check::error(
                CheckName::Copy,
                format!(
                    "`[workspace] copy` in `planwright.toml` names `{rel}`, which git tracks: \
                     every workspace already has the commit's version"
                ),
                format!("remove `{rel}` from `[workspace] copy`, or untrack and ignore it"),
            ));
        }
    }
    if !copy.is_empty() {
        ok_if_quiet(
            out,
            before,
            CheckName::Copy,
            "every `[workspace] copy` file is in the checkout",
        );
    }
}
