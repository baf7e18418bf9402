//! Git, always through one hardened command builder: the repository, the
//! integrity guard, commit identity, gate-script integrity, and the refs
//! and targets of merges.

mod command;
pub mod objects;
pub mod guard;
pub mod identity;
pub mod integrity;
pub mod refs;
pub mod repo;
pub mod tree;
pub mod version;

pub use command::*;
