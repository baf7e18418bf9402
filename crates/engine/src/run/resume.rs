//! The resume rules: which run an invocation continues, and each ticket's
//! stored state brought in line with what git says landed.

use super::settings::RunSettings;
use crate::clock;
use crate::error::EngineError;
use crate::git::identity::{standing, ticket_digest, Ledger, Standing};
use crate::git::refs::{self, Target};
use crate::git::repo::Repo;
use crate::model::Step;
use crate::store::{RunRow, RunStatus, Store, TicketRow, TicketState};
use crate::verify::Earlier;
use planwright_plan::Plan;
use std::collections::{HashMap, HashSet};

/// How this invocation treats what earlier ones did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resume {
    /// Start a new run: only its own merges count as merged.
    pub new_run: bool,
    /// Merged tickets to run again (`--rerun ID`).
    pub rerun: Vec<String>,
    /// Run again every ticket merged from an older definition.
    pub rerun_changed: bool,
}

/// What an invocation would do with each ticket, read without changing
/// anything (nothing is created when the repository has no state store).
#[derive(Debug, Clone, Default)]
pub struct Outlook {
    /// The run that would be continued.
    pub run: Option<String>,
    /// Tickets merged from their current definition: skipped.
    pub merged: Vec<String>,
    /// Tickets merged from an older definition and not asked to run again: skipped.
    pub changed: Vec<String>,
    /// Merged tickets that run again (`--rerun`, `--rerun-changed`).
    pub rerun: Vec<String>,
    /// What the earlier merges of each ticket that runs again did (asked
    /// now, or by an earlier invocation of the run), by ticket: its scope
    /// operations are judged against the base as it was before them.
    pub earlier: HashMap<String, Earlier>,
}

impl Outlook {
    /// `ticket` runs again: what each of its merges in `ledger` did.
    fn again(
        &mut self,
        repo: &Repo,
        ledger: &Ledger,
        ticket: &str,
        run: Option<&str>,
    ) -> Result<(), EngineError> {
        let mut earlier = Earlier::default();
        for landed in ledger.landed(ticket, run) {
            earlier.add(Earlier::of_merge(repo, &landed.commit)?);
        }
        self.earlier.insert(ticket.to_string(), earlier);
        Ok(())
    }

    /// The tickets that will not run.
    pub fn skipped(&self) -> HashSet<String> {
        self.merged.iter().chain(&self.changed).cloned().collect()
    }
}

/// Reads what `resume` would do with each ticket of `plan` on `repo`.
pub fn outlook(repo: &Repo, plan: &Plan, resume: &Resume) -> Result<Outlook, EngineError> {
    let db = repo.state_dir().join("state.db");
    let store = if db.is_file() {
        Some(Store::open(&db)?)
    } else {
        None
    };
    let run = match (&store, resume.new_run) {
        (Some(s), false) => s.run_for_base(&plan.base)?,
        _ => None,
    };
    let reruns = match (&store, &run) {
        (Some(s), Some(r)) => s.reruns(&r.id)?,
        _ => HashMap::new(),
    };
    let held = match (&run, resume.new_run) {
        (Some(r), _) => Some(r.id.clone()),
        (None, false) => held_run(repo, &plan.base)?,
        (None, true) => None,
    };
    let mut refs = vec![format!("refs/heads/{}", plan.base)];
    if let Some(id) = &held {
        refs = Target::new(&plan.base, id).refs();
    }
    let ledger = Ledger::read(repo, &refs)?;
    let own = run.as_ref().filter(|r| r.fresh).map(|r| r.id.as_str());
    let mut out = Outlook {
        run: run.as_ref().map(|r| r.id.clone()),
        ..Outlook::default()
    };
    if resume.new_run {
        return Ok(out);
    }
    for t in &plan.tickets {
        let rerun_of = reruns.get(&t.id).map(String::as_str);
        let st = standing(&ledger, &t.id, || ticket_digest(t), own, rerun_of);
        let asked = resume.rerun.contains(&t.id);
        match st {
            Standing::Open if rerun_of.is_some() => out.again(repo, &ledger, &t.id, own)?,
            Standing::Open => {}
            Standing::Merged(_) if asked => {
                out.rerun.push(t.id.clone());
                out.again(repo, &ledger, &t.id, own)?;
            }
            Standing::Changed(_) if asked || resume.rerun_changed => {
                out.rerun.push(t.id.clone());
                out.again(repo, &ledger, &t.id, own)?;
            }
            Standing::Merged(_) => out.merged.push(t.id.clone()),
            Standing::Changed(_) => out.changed.push(t.id.clone()),
        }
    }
    Ok(out)
}

/// A run found or recorded by [`open_run`].
pub(super) struct Opened {
    pub(super) run: RunRow,
    /// Whether an earlier invocation started it.
    pub(super) continued: bool,
    /// Its tickets the plan no longer has, forgotten.
    pub(super) removed: Vec<String>,
}

/// Finds the run to continue (the newest on this base branch, unless
/// `--new-run`) or records a new one, then settles every ticket against
/// what git says landed.
pub(super) fn open_run(
    store: &Store,
    repo: &Repo,
    plan: &Plan,
    digests: &[String],
    settings: &RunSettings,
    resume: &Resume,
) -> Result<Opened, EngineError> {
    let existing = match resume.new_run {
        true => None,
        false => store.run_for_base(&plan.base)?,
    };
    let (run, continued) = match existing {
        Some(run) => (run, true),
        None => (new_run(store, repo, plan, settings, resume.new_run)?, false),
    };
    store.resume_run(&run.id, &settings.plan_path)?;
    let synced = store.sync_tickets(
        &run.id,
        plan.tickets
            .iter()
            .zip(digests)
            .map(|(t, d)| (t.id.as_str(), t.title.as_str(), d.as_str())),
    )?;
    let target = Target::new(&plan.base, &run.id);
    let ledger = Ledger::read(repo, &target.refs())?;
    let own = run.fresh.then_some(run.id.as_str());
    for row in synced.rows {
        let digest = || row.digest.clone().unwrap_or_default();
        let st = standing(&ledger, &row.id, digest, own, row.rerun_of.as_deref());
        let asked = resume.rerun.contains(&row.id)
            || (resume.rerun_changed && matches!(st, Standing::Changed(_)));
        match st {
            Standing::Merged(c) | Standing::Changed(c) if asked => {
                store.request_rerun(&run.id, &row.id, &c)?;
                let row = store.ticket(&run.id, &row.id)?.expect("the ticket exists");
                settle(store, repo, &run.id, &row, Standing::Open)?;
            }
            st => settle(store, repo, &run.id, &row, st)?,
        }
    }
    sweep_candidates(store, repo, &run.id)?;
    Ok(Opened {
        run,
        continued,
        removed: synced.removed,
    })
}

/// Deletes the candidate refs of tickets that are no longer open (left by
/// a stop between `merged` being written and the ref being deleted).
pub(super) fn sweep_candidates(store: &Store, repo: &Repo, run: &str) -> Result<(), EngineError> {
    let prefix = refs::candidate_ref("");
    let refs = repo
        .git()
        .args(["for-each-ref", "--format=%(refname)", &prefix])
        .text()?;
    if refs.is_empty() {
        return Ok(());
    }
    let open: HashSet<String> = store
        .tickets(run)?
        .into_iter()
        .filter(|t| !matches!(t.state, TicketState::Merged | TicketState::Changed))
        .map(|t| t.id)
        .collect();
    for name in refs.lines() {
        let id = name.strip_prefix(&prefix).unwrap_or(name);
        if !open.contains(id) {
            refs::delete_ref(repo, name)?;
        }
    }
    Ok(())
}

pub(super) fn new_run(
    store: &Store,
    repo: &Repo,
    plan: &Plan,
    settings: &RunSettings,
    fresh: bool,
) -> Result<RunRow, EngineError> {
    // A run whose store was lost may still hold merges on its branch: it
    // is adopted, so its merges count and new work builds on them.
    let adopted = match fresh {
        true => None,
        false => held_run(repo, &plan.base)?,
    };
    let id = match adopted {
        Some(id) => id,
        None => unused_run_id(store)?,
    };
    let row = RunRow {
        id,
        plan_path: settings.plan_path.clone(),
        base: plan.base.clone(),
        started_at: clock::now(),
        finished_at: None,
        status: RunStatus::Running,
        fresh,
    };
    store.create_run(&row)?;
    Ok(row)
}

/// A run id from the clock that no run has yet.
pub(super) fn unused_run_id(store: &Store) -> Result<String, EngineError> {
    let mut n = 0;
    loop {
        let id = clock::run_id(n);
        if store.run(&id)?.is_none() {
            return Ok(id);
        }
        n += 1;
    }
}

/// The run whose branch `planwright/run/<id>` holds merges not yet on
/// `base` (the newest, if several).
pub(super) fn held_run(repo: &Repo, base: &str) -> Result<Option<String>, EngineError> {
    let text = repo
        .git()
        .args([
            "for-each-ref",
            "--sort=-committerdate",
            "--format=%(refname:strip=4)",
            "refs/heads/planwright/run/",
        ])
        .text()?;
    let tip = repo.base_tip(base)?;
    for id in text.lines().filter(|l| !l.is_empty()) {
        let held = format!("refs/heads/{}", refs::held_branch(id));
        let descends = repo
            .git()
            .args(["merge-base", "--is-ancestor", &tip, &held])
            .succeeds()?;
        if descends {
            return Ok(Some(id.to_string()));
        }
    }
    Ok(None)
}

/// The recovery rules: a ticket's stored state is brought in line with
/// what git says (`st`), so an invocation stopped anywhere continues right.
pub(super) fn settle(
    store: &Store,
    repo: &Repo,
    run: &str,
    row: &TicketRow,
    st: Standing,
) -> Result<(), EngineError> {
    use TicketState as S;
    match st {
        Standing::Merged(c) => {
            if row.state != S::Merged || row.merge_commit.as_deref() != Some(&c) {
                store.landed(run, &row.id, Step::Landed, &c)?;
                refs::delete_ref(repo, &refs::candidate_ref(&row.id))?;
            }
        }
        Standing::Changed(c) => {
            if row.state != S::Changed {
                store.landed(run, &row.id, Step::LandedChanged, &c)?;
            }
        }
        Standing::Open => match row.state {
            S::Pending => {}
            S::Verified | S::Merging if candidate_usable(repo, row)? => {
                if row.state != S::Verified {
                    store.set_state(run, &row.id, Step::Reverify)?;
                }
            }
            S::Running => store.end_attempt_without_verdict(
                run,
                &row.id,
                row.attempt_count,
                "interrupted",
                &clock::now(),
            )?,
            _ => store.set_state(run, &row.id, Step::Reopen)?,
        },
    }
    Ok(())
}

/// Whether a verified candidate can still be merged: it exists and was
/// built from the ticket's current definition.
pub(super) fn candidate_usable(repo: &Repo, row: &TicketRow) -> Result<bool, EngineError> {
    let (Some(candidate), Some(_), Some(digest)) = (&row.candidate, &row.verified_on, &row.digest)
    else {
        return Ok(false);
    };
    let format = format!(
        "--format=%(trailers:key={},valueonly)",
        crate::git::identity::DIGEST_TRAILER
    );
    let out = repo
        .git()
        .args(["log", "-1", &format, candidate, "--"])
        .raw()?;
    Ok(out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == digest)
}
