//! Where an attempt runs: the `Executor` trait, the local executor, the
//! slots' workspaces and their set-up.

pub(crate) mod changes;
pub(crate) mod disk;
mod executor;
pub(crate) mod files;
pub(crate) mod names;
pub(crate) mod network;
pub mod remote;
pub(crate) mod setup;
pub(crate) mod workspace;

pub use executor::*;
