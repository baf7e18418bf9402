//! planwright-engine: git, processes, agents, scheduler, merge queue, state store.
#![deny(missing_docs)]

pub mod agent;
pub mod charter;
pub mod clock;
pub mod demo;
pub mod error;
pub mod events;
pub mod executor;
pub mod failure;
pub mod gates;
pub mod git;
pub mod html;
pub mod integrity;
pub mod lock;
pub mod merge;
pub mod preflight;
pub mod process;
pub mod repo;
pub mod report;
pub mod run;
pub mod scheduler;
pub mod state;
pub mod verify;
pub mod view;
pub mod worktree;

pub use error::EngineError;
pub use failure::{Failure, FailureKind};
