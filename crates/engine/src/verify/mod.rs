//! What planwright checks of a candidate where the agent cannot reach:
//! scope and rails, gates in planwright's own checkouts, counterfactuals and
//! review.

pub(crate) mod beyond_gates;
pub(crate) mod carry;
pub(crate) mod checkout;
pub mod counterfactual;
pub(crate) mod gates;
pub(crate) mod review;
mod scope;

pub use gates::{ticket_gates, GateRoom};
pub use review::{review, ReviewInput, ReviewOutcome, ReviewSpend};
pub use scope::*;
