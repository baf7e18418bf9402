//! The engine's vocabulary as types: failures and their kinds.

pub mod failure;

pub use failure::{Failure, FailureKind};
