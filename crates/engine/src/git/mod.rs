//! Git, always through one hardened command builder: the repository, its
//! refs and trees, commit identity, gate integrity and merges.

mod command;
pub mod identity;
pub mod integrity;
pub mod merge;
pub mod repo;

pub use command::*;
