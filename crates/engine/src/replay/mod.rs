//! `planwright replay`: a stretch of a repository's real history turned
//! into a plan and run through the same engine run as `run`, in a scratch
//! clone so the user's repository is only read. Each first-parent commit
//! (merges skipped) is a ticket, done by the `replay:DIR` agent
//! ([`crate::agent::replay`]), which applies the commit's change with a
//! three-way merge. [`figures`] reads the run back into the published
//! figures.

pub mod figures;
pub mod plan;

use crate::agent::replay::{ReplayTicket, ReplayWork, WORK_FILE};
use crate::error::EngineError;
use crate::git::history::{self, RangeError};
use crate::git::repo::Repo;
use plan::Step;
pub use plan::{AgentTime, Deps};
use planwright_plan::Flag;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The branch of the scratch repository the replay's tickets merge into.
pub const BRANCH: &str = "replay";

/// What a replay replays, and how.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The commits: `A..B` (first parent, merges skipped).
    pub range: String,
    /// How tickets wait for each other.
    pub deps: Deps,
    /// How long the agent works on each commit.
    pub agent_time: AgentTime,
    /// Tokens the agent reports per changed line.
    pub tokens_per_line: u64,
    /// The model those tokens are priced as.
    pub model: String,
    /// The gates, as argvs (none: the configuration's).
    pub gates: Vec<Vec<String>>,
}

/// One commit of the range, as the replay runs it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReplayCommit {
    /// Its ticket.
    pub ticket: String,
    /// The commit.
    pub commit: String,
    /// Lines added plus removed.
    pub lines: u64,
    /// The tickets it waits for.
    pub depends_on: Vec<String>,
}

/// What [`prepare`] made.
#[derive(Debug, Clone)]
pub struct PreparedReplay {
    /// The scratch repository the run works in, on [`BRANCH`].
    pub repo: PathBuf,
    /// The plan file.
    pub plan: PathBuf,
    /// The replay agent's folder (`--agent replay:DIR`).
    pub agent_dir: PathBuf,
    /// The range's base commit.
    pub base: String,
    /// The range's last commit (merges included).
    pub last: String,
    /// The commits replayed, in order.
    pub commits: Vec<ReplayCommit>,
    /// Merge commits skipped.
    pub merges_skipped: usize,
    /// Commits that changed nothing, skipped.
    pub empty_skipped: usize,
}

/// The range's commits read from `source` (only read), the scratch clone
/// made in `dir/repo` at the range's base, the plan written to
/// `dir/plan.json` and the agent's folder to `dir/agent`.
pub fn prepare(
    source: &Path,
    dir: &Path,
    opts: &ReplayOptions,
) -> Result<PreparedReplay, EngineError> {
    let src = Repo::open(source)?;
    let dirty = src.changed_files()?;
    if !dirty.is_empty() {
        return Err(EngineError::repo(
            format!(
                "`{}` has uncommitted changes ({})",
                source.display(),
                dirty.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
            ),
            "commit or stash them first: replay reads only commits, and a replay of work that is not committed would not be what you see",
        ));
    }
    let range = read_range(&src, &opts.range)?;
    let agent_dir = dir.join("agent");
    std::fs::create_dir_all(&agent_dir).map_err(|e| EngineError::io(&agent_dir, e))?;
    let scratch = dir.join("repo");
    let repo = history::scratch_clone(&src, &scratch, BRANCH, &range.base)?;
    let base_files: HashSet<String> = history::files_at(&repo, &range.base)?.into_iter().collect();
    let plan_path = dir.join("plan.json");
    let plan = plan::plan_json(&range.steps, opts.deps, BRANCH, &base_files, &opts.gates);
    write(
        &plan_path,
        &serde_json::to_vec_pretty(&plan).expect("a plan serializes"),
    )?;
    let commits = write_agent(&src, &agent_dir, &range.steps, opts)?;
    Ok(PreparedReplay {
        repo: scratch,
        plan: plan_path,
        agent_dir,
        base: range.base,
        last: range.last,
        commits,
        merges_skipped: range.merges_skipped,
        empty_skipped: range.empty_skipped,
    })
}

/// What a range holds.
struct Range {
    steps: Vec<Step>,
    base: String,
    last: String,
    merges_skipped: usize,
    empty_skipped: usize,
}

/// The commits of `range` to replay, with what each changed; an error
/// naming the fix when there are none.
fn read_range(src: &Repo, range: &str) -> Result<Range, EngineError> {
    let (commits, base) = history::first_parent(src, range).map_err(|e| range_error(range, e))?;
    let last = history::commit_of(src, range_tip(range))
        .map_err(|e| range_error(range, RangeError::Unresolved(e.to_string())))?;
    let walked = commits.len();
    let mut steps = Vec::new();
    for c in commits {
        let changes = history::changes(src, &c.parent, &c.id)?;
        if changes.is_empty() {
            continue;
        }
        let ticket = plan::ticket_id(steps.len() + 1, &c.id);
        steps.push(Step {
            ticket,
            commit: c,
            changes,
        });
    }
    let merges_skipped = history::first_parent_count(src, range)?.saturating_sub(walked);
    let empty_skipped = walked - steps.len();
    if steps.is_empty() {
        return Err(EngineError::repo(
            format!(
                "the range `{range}` holds no commit to replay (merges skipped: {merges_skipped}, commits that change nothing: {empty_skipped})"
            ),
            format!(
                "name a range with commits of their own, e.g. `{} HEAD~50..HEAD`",
                Flag::Commits
            ),
        ));
    }
    Ok(Range {
        steps,
        base,
        last,
        merges_skipped,
        empty_skipped,
    })
}

/// The agent's folder: each step's patch and `replay.json`; the commits
/// as the replay runs them.
fn write_agent(
    src: &Repo,
    agent_dir: &Path,
    steps: &[Step],
    opts: &ReplayOptions,
) -> Result<Vec<ReplayCommit>, EngineError> {
    let waits = plan::dependencies(steps, opts.deps);
    let mut work = ReplayWork {
        model: opts.model.clone(),
        tickets: Default::default(),
    };
    let mut out = Vec::new();
    for (s, on) in steps.iter().zip(waits) {
        let lines = history::changed_lines(src, &s.commit.parent, &s.commit.id)?;
        let patch = format!("{}.patch", s.ticket);
        write(
            &agent_dir.join(&patch),
            &history::commit_patch(src, &s.commit.parent, &s.commit.id)?,
        )?;
        work.tickets.insert(
            s.ticket.clone(),
            ReplayTicket {
                commit: s.commit.id.clone(),
                patch,
                lines,
                agent_ms: opts.agent_time.of(lines).as_millis() as u64,
                tokens: lines * opts.tokens_per_line,
            },
        );
        out.push(ReplayCommit {
            ticket: s.ticket.clone(),
            commit: s.commit.id.clone(),
            lines,
            depends_on: on.iter().map(|&j| steps[j].ticket.clone()).collect(),
        });
    }
    let text = serde_json::to_vec_pretty(&work).expect("replay work serializes");
    write(&agent_dir.join(WORK_FILE), &text)?;
    Ok(out)
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), EngineError> {
    std::fs::write(path, bytes).map_err(|e| EngineError::io(path, e))
}

/// The commit a range ends at: what follows its last `..`, else itself.
fn range_tip(range: &str) -> &str {
    match range.rsplit_once("..") {
        Some((_, tip)) if !tip.is_empty() => tip.trim_start_matches('.'),
        Some(_) => "HEAD",
        None => range,
    }
}

fn range_error(range: &str, e: RangeError) -> EngineError {
    let hint = format!(
        "name commits of this repository's history, oldest first: `{} BASE..TIP`, e.g. `HEAD~50..HEAD` or `v1.2.0..main`",
        Flag::Commits
    );
    let message = match e {
        RangeError::Unresolved(why) => {
            format!("the range `{range}` does not resolve: {why}")
        }
        RangeError::Empty => format!("the range `{range}` names no commit"),
        RangeError::Root(c) => format!(
            "the range `{range}` reaches the root commit {c}, which has no parent to replay it on"
        ),
    };
    EngineError::repo(message, hint)
}
