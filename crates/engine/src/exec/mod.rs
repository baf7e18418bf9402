//! Where an attempt runs: the `Executor` trait, the local executor, the
//! slots' workspaces and their set-up.

pub mod disk;
mod executor;
mod names;
pub mod network;
pub mod remote;
pub mod setup;
pub mod workspace;

pub use executor::*;
