//! Attempts on other machines: the worker protocol, the transports that
//! carry it, `planwright worker`, and the executor that drives workers
//! (docs/scaling.md).

mod cache;
mod command;
mod executor;
pub mod kubernetes;
pub mod protocol;
mod transport;
mod worker;

pub use command::CommandTransport;
pub use executor::RemoteExecutor;
pub use kubernetes::kubernetes;
pub use transport::{EndLink, Link, Lost, Transport};
pub use worker::{serve, WorkerOptions, VERSION};
