//! planwright's operating-system layer, and the one crate of the workspace
//! that may use `unsafe`: running and supervising children ([`process`]),
//! confining them ([`sandbox`]), the egress proxy of confined children
//! ([`proxy`]), file operations in directories untrusted
//! processes write ([`beneath`]), file locks ([`lock`]) and the local time
//! zone ([`time`]), disk space ([`disk`]), and which paths of a work tree
//! changed ([`inotify`]).
//!
//! Every module has one platform-free face; what only one system has sits
//! behind `#[cfg(target_os)]` inside it (the Linux sandbox in
//! `sandbox/linux/`, `openat2` in `beneath/resolve.rs`, the pidfd in
//! `process/supervise.rs`), with a fallback or a typed "unsupported"
//! elsewhere. Plain system calls go through `rustix`; what it lacks (fork,
//! the Landlock calls, an interface's flags, `close_range`, the local
//! time zone) or marks unsafe (`pre_exec`, `unshare`) is called here, each
//! block with the reason it is sound.

#![deny(missing_docs)]

pub mod beneath;
pub mod disk;
pub mod inotify;
pub mod lock;
pub mod process;
pub mod proxy;
pub mod sandbox;
pub mod time;
