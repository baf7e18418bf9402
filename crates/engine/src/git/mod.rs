//! Git, always through one hardened command builder: the repository, the
//! integrity guard, commit identity, gate-script integrity, the refs and
//! targets of merges, and the history a replay reads.

pub(crate) mod apply;
mod command;
pub(crate) mod guard;
pub(crate) mod history;
pub(crate) mod identity;
pub(crate) mod integrity;
pub(crate) mod objects;
pub(crate) mod refs;
pub(crate) mod repo;
pub(crate) mod tree;
pub(crate) mod version;

pub use command::*;
