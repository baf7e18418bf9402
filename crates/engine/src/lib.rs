//! planwright-engine: git, agents, scheduler, merge queue, state store (processes and the sandbox are planwright-os).
#![deny(missing_docs)]
// Every system call that needs `unsafe` is in planwright-os.
#![forbid(unsafe_code)]

pub mod agent;
pub mod beyond_gates;
pub mod budget;
pub mod charter;
pub mod checkout;
pub mod clock;
pub mod counterfactual;
pub mod demo;
pub mod draft;
pub mod error;
pub mod events;
pub mod executor;
pub mod failure;
pub mod gates;
pub mod git;
pub mod identity;
pub mod integrity;
pub mod lock;
pub mod merge;
pub mod pools;
pub mod preflight;
pub mod repo;
pub mod review;
pub mod run;
pub mod run_inputs;
pub mod scheduler;
pub mod setup;
pub mod state;
pub mod verify;
pub mod workspace;

pub use error::EngineError;
pub use failure::{Failure, FailureKind};
/// Processes, the sandbox and file operations where agents write live in
/// planwright-os; they keep their paths here.
pub use planwright_os::{beneath, process, sandbox};
