//! planwright's operating-system layer, and the one crate of the workspace
//! that may use `unsafe`: running and supervising children ([`process`]),
//! confining them ([`sandbox`]: Landlock, namespaces, overlays), file
//! operations in directories untrusted processes write ([`beneath`]), file
//! locks ([`lock`]) and the local time zone ([`time`]). Plain system calls
//! go through `rustix` where it has them; what it lacks is called through
//! `libc` here, each block with the reason it is sound.

#![deny(missing_docs)]

pub mod beneath;
pub mod lock;
pub mod process;
pub mod sandbox;
pub mod time;
