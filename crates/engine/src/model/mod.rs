//! The engine's vocabulary as types: failures and their kinds, and the
//! ticket state machine.

pub mod failure;
pub mod report;
pub mod ticket;

pub use failure::{Failure, FailureKind, Verdict};
pub use ticket::{transition, IllegalTransition, Place, RunStatus, Step, TicketState};
