//! The engine's vocabulary as types: failures and their kinds, the
//! ticket state machine, and the phases of an attempt.

pub(crate) mod attempt;
pub(crate) mod check;
pub(crate) mod counterfactual;
pub(crate) mod failure;
pub(crate) mod phase;
pub(crate) mod report;
pub(crate) mod ticket;

pub use attempt::{RebuildReason, StartsFrom};
pub use check::{Check, CheckName, CheckStatus};
pub use counterfactual::CounterfactualOutcome;
pub(crate) use failure::Verdict;
pub use failure::{Failure, FailureKind};
pub use phase::Phase;
pub use report::AgentOutcomeKind;
pub(crate) use ticket::Place;
pub use ticket::{transition, IllegalTransition, RunStatus, Step, TicketState};
