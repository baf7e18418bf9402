//! The context the coordinator, the worker threads and the merge queue
//! share for one run: read-only, apart from the count of attempts in
//! their own verification and the count of flaky gates.

use super::lanes::Lanes;
use super::settings::RunSettings;
use crate::events::Emitter;
use crate::exec::Executor;
use crate::git::guard::Guard;
use crate::git::identity::commit_message;
use crate::git::refs::Target;
use crate::git::repo::Repo;
use crate::store::Store;
use crate::verify;
use crate::verify::checkout::Checkouts;
use planwright_os::process::Cancel;
use planwright_plan::graph::TicketGraph;
use planwright_plan::model::Ticket;
use planwright_plan::Plan;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

/// Shared, read-only context of the coordinator, worker and merger threads.
pub(super) struct Shared<'a> {
    pub(super) repo: &'a Repo,
    /// What no agent may change in the repository, checked around every
    /// attempt and gate run; the run's own writes go through it.
    pub(super) guard: &'a Guard,
    pub(super) plan: &'a Plan,
    pub(super) settings: &'a RunSettings,
    pub(super) store: Store,
    pub(super) run: String,
    pub(super) target: Target,
    /// The plan's ticket graph, which also knows each ticket's place in
    /// the plan by id.
    pub(super) graph: &'a Arc<TicketGraph>,
    /// Each ticket's digest, in plan order.
    pub(super) digests: Vec<String>,
    pub(super) checkouts: Checkouts,
    pub(super) executor: Arc<dyn Executor>,
    /// Which agent does each ticket, and the family routing keeps it to.
    pub(super) lanes: Lanes,
    pub(super) cancel: &'a Cancel,
    pub(super) run_dir: PathBuf,
    pub(super) emitter: Emitter,
    /// What no ticket may change (see [`verify::RunRails`]).
    pub(super) run_rails: verify::RunRails,
    /// What the earlier merges of each ticket that runs again did.
    pub(super) earlier: HashMap<String, verify::Earlier>,
    /// Attempts past their agent, in their own verification: the merge
    /// queue waits for them to fill a batch.
    pub(super) verifying: std::sync::atomic::AtomicUsize,
    /// Each gate that failed on a candidate and passed when run again on
    /// the same tree, with how many times: the run's summary says them.
    pub(super) flakes: std::sync::Mutex<BTreeMap<String, u32>>,
}

impl Shared<'_> {
    /// The plan's ticket `id`.
    pub(super) fn ticket(&self, id: &str) -> &Ticket {
        let at = self.graph.index_of(id).expect("a ticket of the plan");
        &self.plan.tickets[at]
    }

    /// Gate `gate` failed, then passed on the same tree.
    pub(super) fn flaky(&self, gate: &str) {
        let mut flakes = self.flakes.lock().unwrap_or_else(|e| e.into_inner());
        *flakes.entry(gate.to_string()).or_default() += 1;
    }

    /// The commit message of ticket `id`'s one commit.
    pub(super) fn message(&self, id: &str) -> String {
        let at = self.graph.index_of(id).expect("a ticket of the plan");
        commit_message(&self.plan.tickets[at], &self.digests[at], &self.run)
    }
}
