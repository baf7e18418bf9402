//! Git, always through one hardened command builder: the repository, the
//! integrity guard, commit identity, gate-script integrity, and the refs
//! and targets of merges.

mod command;
pub(crate) mod guard;
pub(crate) mod identity;
pub(crate) mod integrity;
pub(crate) mod objects;
pub(crate) mod refs;
pub(crate) mod remote;
pub(crate) mod repo;
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod transfer;
pub(crate) mod tree;
pub(crate) mod version;
pub(crate) mod worktree;

pub use command::*;
