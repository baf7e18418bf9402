//! What planwright checks of a candidate where the agent cannot reach:
//! scope and rails, gates in planwright's own checkouts, counterfactuals and
//! review.

pub mod beyond_gates;
pub mod checkout;
pub mod counterfactual;
pub mod gates;
pub mod review;
mod scope;

pub use scope::*;
