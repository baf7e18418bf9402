//! Attempts on other machines: the worker protocol and the transports that
//! carry it (docs/scaling.md). The executor over them is still to come.

pub mod protocol;
mod transport;

pub use transport::{EndLink, Link, Lost, Transport};
