//! The run loop. A run belongs to a repository and its base branch: which
//! tickets are merged is read back from git (see [`crate::git::identity`]).
//!
//! [`prepare`] runs every preflight check and is the only way to get a
//! [`Prepared`] session, which is all [`run`] accepts. The coordinator thread
//! schedules ready tickets and starts attempts through an [`crate::exec::Executor`] on
//! worker threads; verified candidates go to one merger thread (merging and
//! re-gating never hold up the coordinator); events go through a channel to
//! the reporter thread. Every transition is written to the state store before
//! its side effect; docs/running.md lists each with its recovery rule.
//!
//! The files form a star: the threads talk through `msg` and share
//! `shared`, which name no other file of the run; the coordinator
//! (`coordinator`, `outcome`) changes a ticket's state only through
//! `ticket::apply`; the merge queue is `merge/`.

mod attempt;
pub(crate) mod budget;
pub(crate) mod charter;
mod coordinator;
pub(crate) mod graph;
pub(crate) mod inputs;
pub(crate) mod lock;
mod merge;
mod msg;
mod outcome;
pub(crate) mod preflight;
mod resume;
mod routing;
pub(crate) mod scheduler;
mod session;
mod settings;
mod shared;
mod summary;
mod ticket;
mod verification;

pub use resume::{outlook, Outlook, Resume};
pub use session::{prepare, run, PreflightFailed, Prepared};
pub use settings::{defaults, RunSettings};
pub use summary::{Held, RunSummary};
