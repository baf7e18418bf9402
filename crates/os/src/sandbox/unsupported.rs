//! No backend: an operating system planwright has no sandbox for.
//! [`Mode::Enforce`] is refused with [`SandboxError::Unsupported`];
//! [`Mode::Off`] runs children unconfined, each in a process group (and
//! session) of its own, which [`crate::process`] makes everywhere.

use super::{Confine, Mode, SandboxError};
use crate::beneath::{BeneathError, Dir};
use std::io;
use std::path::Path;
use std::process::Command;

pub(super) const HINT: &str = "planwright's sandbox needs Linux for now; set `[sandbox] mode = \"off\"` in planwright.toml to run agents unconfined (see docs/security.md)";

/// Children are never confined here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Backend;

impl Backend {
    pub(super) fn new(mode: Mode) -> Result<Backend, SandboxError> {
        match mode {
            Mode::Off => Ok(Backend),
            Mode::Enforce => Err(SandboxError::Unsupported {
                os: std::env::consts::OS,
            }),
        }
    }

    pub(super) fn none() -> Backend {
        Backend
    }

    pub(super) fn confines_writes(&self) -> bool {
        false
    }

    pub(super) fn ends_descendants(&self) -> bool {
        false
    }

    pub(super) fn overlays(&self) -> bool {
        false
    }

    pub(super) fn describe(&self) -> String {
        "off, process groups".to_string()
    }
}

/// No network namespace here: the face starts a proxy on the host's
/// loopback itself, so there is never a listener to receive.
pub(super) fn apply(
    confine: &Confine,
    _cmd: &mut Command,
) -> Result<super::Prepared, SandboxError> {
    match confine.policy.overlay {
        Some(_) => Err(SandboxError::Setup(format!(
            "planwright has no overlays on {}",
            std::env::consts::OS
        ))),
        None => Ok((None, None, None)),
    }
}

/// No set-up runs in a child here: nothing to report.
#[derive(Debug)]
pub(crate) enum StepReport {}

impl StepReport {
    pub(crate) fn failed(&self) -> Option<&'static str> {
        match *self {}
    }
}

/// No cgroups here: never made.
#[derive(Debug)]
pub(crate) enum Cgroup {}

impl Cgroup {
    pub(crate) fn close(self) -> Option<super::LimitHit> {
        match self {}
    }
}

/// Nothing bounds a child's processes or memory here.
pub(super) fn limits_mechanism() -> &'static super::Mechanism {
    static NONE: std::sync::OnceLock<super::Mechanism> = std::sync::OnceLock::new();
    NONE.get_or_init(|| super::Mechanism::None {
        why: format!("planwright sets no limits on {}", std::env::consts::OS),
    })
}

/// Never called: [`apply`] hands nothing off.
pub(super) fn receive(
    _fd: &std::os::fd::OwnedFd,
    _count: usize,
) -> std::io::Result<Vec<std::net::TcpListener>> {
    Err(std::io::Error::other("no listener is handed off here"))
}

pub(super) fn probe_overlay(_scratch: &Path) -> Result<(), String> {
    Err(format!(
        "planwright has no overlays on {}",
        std::env::consts::OS
    ))
}

/// Never called where [`Backend::overlays`] is false; refuses.
pub(super) fn fold_layer(upper: &Dir, _lower: &Dir) -> Result<(), BeneathError> {
    Err(BeneathError::Io {
        path: upper.path().to_path_buf(),
        source: io::Error::new(io::ErrorKind::Unsupported, "no overlays on this system"),
    })
}
