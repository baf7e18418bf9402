//! Git, always through one hardened command builder, and every git
//! command line of the workspace built here as a typed operation: the
//! repository, trees, objects and refs, the work trees planwright owns,
//! packs between a coordinator and its workers, the forge's remote, the
//! integrity guard (held by the session), commit identity, gate-script
//! integrity, and the history a replay reads and applies.

pub(crate) mod apply;
mod command;
pub(crate) mod guard;
pub(crate) mod history;
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
