//! planwright-engine: git, processes, agents, scheduler, merge queue, state store.
#![deny(missing_docs)]

pub mod git;
pub mod process;
