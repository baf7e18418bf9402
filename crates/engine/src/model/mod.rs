//! The engine's vocabulary as types: failures and their kinds, the
//! ticket state machine, and the phases of an attempt.

pub mod check;
pub mod counterfactual;
pub mod failure;
pub mod phase;
pub mod report;
pub mod ticket;

pub use check::{Check, CheckName, CheckStatus};
pub use counterfactual::CounterfactualOutcome;
pub use failure::{Failure, FailureKind, Verdict};
pub use phase::Phase;
pub use ticket::{transition, IllegalTransition, Place, RunStatus, Step, TicketState};
