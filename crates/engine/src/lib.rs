//! planwright-engine: git, agents, scheduler, merge queue, state store (processes and the sandbox are planwright-os).
#![deny(missing_docs)]
// Every system call that needs `unsafe` is in planwright-os.
#![forbid(unsafe_code)]

pub mod agent;
pub mod clock;
pub mod demo;
pub mod draft;
pub mod error;
pub mod events;
pub mod exec;
pub mod git;
pub mod model;
pub mod run;
pub mod store;
pub mod verify;

pub use error::EngineError;
pub use model::{Failure, FailureKind};
/// Processes, the sandbox and file operations where agents write live in
/// planwright-os; they keep their paths here.
pub use planwright_os::{beneath, process, sandbox};
