//! The crash tests' hook, compiled only with the `crash-hook` feature (the
//! CLI's tests turn it on; a release build has no such code): with
//! `PLANWRIGHT_TEST_ABORT_AT=N` the process kills itself (SIGKILL) at the
//! Nth transition point. Each transition has two points, just before and
//! just after it is written, so both "written, side effect not done" and
//! "side effect done, next transition not written" are reached.

/// The hook's environment variable.
#[cfg(feature = "crash-hook")]
const ABORT_ENV: &str = "PLANWRIGHT_TEST_ABORT_AT";

#[cfg(feature = "crash-hook")]
pub(super) struct AbortHook {
    at: Option<u64>,
    seen: std::sync::atomic::AtomicU64,
}

#[cfg(feature = "crash-hook")]
impl AbortHook {
    pub(super) fn from_env() -> AbortHook {
        AbortHook {
            at: std::env::var(ABORT_ENV).ok().and_then(|v| v.parse().ok()),
            seen: std::sync::atomic::AtomicU64::new(0),
        }
    }

    pub(super) fn point(&self) {
        let n = (self.seen).fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        if self.at == Some(n) {
            planwright_os::process::kill_self();
        }
    }
}

#[cfg(not(feature = "crash-hook"))]
pub(super) struct AbortHook;

#[cfg(not(feature = "crash-hook"))]
impl AbortHook {
    pub(super) fn from_env() -> AbortHook {
        AbortHook
    }

    pub(super) fn point(&self) {}
}
