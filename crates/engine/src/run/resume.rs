//! The resume rules: which run an invocation continues, and each ticket's
//! stored state brought in line with what git says landed.

use super::settings::RunSettings;
use crate::clock;
use crate::error::EngineError;
use crate::git::guard::Guard;
use crate::git::identity::{digest_of, standing, ticket_digest, Ledger, Standing};
use crate::git::objects;
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
    /// Continue the newest run on the base branch even when it is of
    /// another plan file (`--continue`).
    pub continue_run: bool,
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
    /// The newest run on the base branch when it is of another plan, so
    /// that a new run starts instead of continuing it (unless `--continue`).
    pub other: Option<RunRow>,
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

/// Reads what `resume` would do with each ticket of `plan` (read from
/// the file `plan_path`) on `repo`.
pub fn outlook(
    repo: &Repo,
    plan: &Plan,
    plan_path: &str,
    resume: &Resume,
) -> Result<Outlook, EngineError> {
    let db = repo.state_dir().join("state.db");
    let store = if db.is_file() {
        Some(Store::open(&db)?)
    } else {
        None
    };
    let chosen = match &store {
        Some(s) => choose_run(s, repo, &plan.base, plan_path, resume)?,
        None => Chosen::default(),
    };
    let (run, other) = (chosen.run, chosen.other);
    // A new run for another plan counts only its own merges.
    let resume = &Resume {
        new_run: resume.new_run || other.is_some(),
        ..resume.clone()
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
        other,
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

/// The run an invocation continues, and the one it does not.
#[derive(Debug, Default)]
pub(super) struct Chosen {
    /// The run to continue.
    pub(super) run: Option<RunRow>,
    /// The newest run on the base, when it is of another plan and no run
    /// of this plan is there: a new run starts beside it.
    pub(super) other: Option<RunRow>,
}

/// The run an invocation of the plan at `plan_path` on `base` continues:
/// none with `--new-run`; the newest on `base` with `--continue`; else the
/// newest on `base` of the same plan file (by its path, or by its content
/// when it moved), where a run recorded before plans were told apart
/// counts as of any plan.
pub(super) fn choose_run(
    store: &Store,
    repo: &Repo,
    base: &str,
    plan_path: &str,
    resume: &Resume,
) -> Result<Chosen, EngineError> {
    if resume.new_run {
        return Ok(Chosen::default());
    }
    let runs = store.runs_for_base(base)?;
    let Some(newest) = runs.first() else {
        return Ok(Chosen::default());
    };
    let (key, blob) = plan_identity(repo, plan_path)?;
    if resume.continue_run || key.is_none() {
        return Ok(Chosen {
            run: Some(newest.clone()),
            other: None,
        });
    }
    for run in &runs {
        let same = match store.plan_key(&run.id)? {
            None => true,
            Some(k) => Some(&k) == key.as_ref() || same_content(store, &run.id, blob.as_deref())?,
        };
        if same {
            return Ok(Chosen {
                run: Some(run.clone()),
                other: None,
            });
        }
    }
    Ok(Chosen {
        run: None,
        other: Some(newest.clone()),
    })
}

/// The plan file's canonical path and blob id; none for standard input or
/// a plan that is no file.
pub(super) fn plan_identity(
    repo: &Repo,
    plan_path: &str,
) -> Result<(Option<String>, Option<String>), EngineError> {
    if plan_path == "-" {
        return Ok((None, None));
    }
    let Ok(real) = std::fs::canonicalize(plan_path) else {
        return Ok((None, None));
    };
    let blob = objects::hash_file(repo, &real)?;
    Ok((Some(real.display().to_string()), Some(blob)))
}

/// Whether run `run` last started from a plan whose content is `blob`.
fn same_content(store: &Store, run: &str, blob: Option<&str>) -> Result<bool, EngineError> {
    let (Some(blob), Some(recorded)) = (blob, store.run_inputs(run)?) else {
        return Ok(false);
    };
    let plan = (recorded.lines()).find_map(|l| l.strip_prefix("plan\t"));
    Ok(plan.and_then(|rest| rest.split('\t').next()) == Some(blob))
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
    guard: &Guard,
    plan: &Plan,
    digests: &[String],
    settings: &RunSettings,
    resume: &Resume,
) -> Result<Opened, EngineError> {
    let chosen = choose_run(store, repo, &plan.base, &settings.plan_path, resume)?;
    // A new run beside another plan's counts only its own merges.
    let fresh = resume.new_run || chosen.other.is_some();
    let (run, continued) = match chosen.run {
        Some(run) => (run, true),
        None => (new_run(store, repo, plan, settings, fresh)?, false),
    };
    store.resume_run(&run.id, &settings.plan_path)?;
    if let (Some(key), _) = plan_identity(repo, &settings.plan_path)? {
        store.set_plan_key(&run.id, &key)?;
    }
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
                settle(store, repo, guard, &run.id, &row, Standing::Open)?;
            }
            st => settle(store, repo, guard, &run.id, &row, st)?,
        }
    }
    sweep_candidates(store, repo, guard, &run.id)?;
    Ok(Opened {
        run,
        continued,
        removed: synced.removed,
    })
}

/// Deletes the candidate refs of tickets that are no longer open (left by
/// a stop between `merged` being written and the ref being deleted).
pub(super) fn sweep_candidates(
    store: &Store,
    repo: &Repo,
    guard: &Guard,
    run: &str,
) -> Result<(), EngineError> {
    let prefix = refs::candidate_ref("");
    let refs = refs::refs_under(repo, &prefix)?;
    if refs.is_empty() {
        return Ok(());
    }
    let open: HashSet<String> = store
        .tickets(run)?
        .into_iter()
        .filter(|t| !matches!(t.state, TicketState::Merged | TicketState::Changed))
        .map(|t| t.id)
        .collect();
    for name in &refs {
        let id = name.strip_prefix(&prefix).unwrap_or(name);
        if !open.contains(id) {
            refs::delete_ref(repo, guard, name)?;
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
        // Only a run the store no longer knows is adopted.
        false => held_run(repo, &plan.base)?.filter(|id| matches!(store.run(id), Ok(None))),
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
    let runs = refs::held_runs(repo)?;
    let tip = repo.base_tip(base)?;
    for id in &runs {
        let held = format!("refs/heads/{}", refs::held_branch(id));
        if objects::is_ancestor(repo, &tip, &held)? {
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
    guard: &Guard,
    run: &str,
    row: &TicketRow,
    st: Standing,
) -> Result<(), EngineError> {
    use TicketState as S;
    match st {
        Standing::Merged(c) => {
            if row.state != S::Merged || row.merge_commit.as_deref() != Some(&c) {
                store.landed(run, &row.id, Step::Landed, &c)?;
                refs::delete_ref(repo, guard, &refs::candidate_ref(&row.id))?;
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
    Ok(digest_of(repo, candidate)?.is_some_and(|d| d == *digest))
}
