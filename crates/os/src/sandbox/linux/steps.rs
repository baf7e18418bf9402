//! Which step of a confined child's set-up failed. A `pre_exec` hook can
//! hand its parent only an errno (std sends that alone over its own
//! pipe), so "Operation not permitted" would reach the user as if the
//! program could not start. The child writes the failed step's number
//! to a pipe of its own first; the parent, once the spawn has failed,
//! reads it and says which part of the sandbox the kernel refused.

use std::io;
use std::os::fd::OwnedFd;

/// A step of the hook, in the order it runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    ParentDeath = 1,
    Cgroup,
    Namespaces,
    NamespaceLimits,
    Listener,
    View,
    Overlay,
    Environment,
    Fork,
    Proc,
    NoNewPrivs,
    Landlock,
}

/// Every step, each at its number less one.
const ALL: [Step; 12] = [
    Step::ParentDeath,
    Step::Cgroup,
    Step::Namespaces,
    Step::NamespaceLimits,
    Step::Listener,
    Step::View,
    Step::Overlay,
    Step::Environment,
    Step::Fork,
    Step::Proc,
    Step::NoNewPrivs,
    Step::Landlock,
];

impl Step {
    /// What the step does, as the message names what failed: the system
    /// call where one call is the step.
    pub(super) fn name(self) -> &'static str {
        match self {
            Step::ParentDeath => "prctl(PR_SET_PDEATHSIG)",
            Step::Cgroup => "joining the child's cgroup",
            Step::Namespaces => "unshare (the child's user, PID, mount and network namespaces)",
            Step::NamespaceLimits => "setting the child's limits in its namespaces",
            Step::Listener => "making the proxy's listener in the child's network namespace",
            Step::View => "mounting the child's read-only view of the file system",
            Step::Overlay => "mounting the child's overlay",
            Step::Environment => "clearing planwright's environment from the namespace",
            Step::Fork => "fork (the namespace's first process)",
            Step::Proc => "mounting the namespace's /proc",
            Step::NoNewPrivs => "prctl(PR_SET_NO_NEW_PRIVS)",
            Step::Landlock => "landlock_restrict_self",
        }
    }
}

/// The two ends of the pipe: the parent reads, the child writes.
pub(super) fn pipe() -> io::Result<(StepReport, StepWriter)> {
    use rustix::pipe::PipeFlags;
    // Non-blocking: the parent reads it once, after the spawn failed,
    // while its own copy of the writing end (in the hook) is still open.
    let (read, write) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
    Ok((StepReport(read), StepWriter(write)))
}

/// The child's end.
#[derive(Debug)]
pub(super) struct StepWriter(OwnedFd);

impl StepWriter {
    /// In the child: runs `step`, and names it on the pipe when it fails.
    /// One `write` of one byte: nothing allocates.
    pub(super) fn run(&self, step: Step, f: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        let result = f();
        if result.is_err() {
            let _ = rustix::io::write(&self.0, &[step as u8]);
        }
        result
    }
}

/// The parent's end.
#[derive(Debug)]
pub(crate) struct StepReport(OwnedFd);

impl StepReport {
    /// Once the spawn has failed: the step the child named, if it got
    /// that far (an `exec` that fails names none).
    pub(crate) fn failed(&self) -> Option<&'static str> {
        let mut byte = [0u8];
        match rustix::io::read(&self.0, &mut byte) {
            Ok(1) => ALL
                .get(usize::from(byte[0]).wrapping_sub(1))
                .map(|s| s.name()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failed_step_is_read_back_by_its_name_and_success_names_none() {
        let (report, writer) = pipe().unwrap();
        assert!(writer.run(Step::View, || Ok(())).is_ok());
        assert_eq!(report.failed(), None);
        let refused = || Err(io::Error::from_raw_os_error(libc::EPERM));
        let err = writer.run(Step::Landlock, refused).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EPERM));
        assert_eq!(report.failed(), Some("landlock_restrict_self"));
        for (i, step) in ALL.iter().enumerate() {
            assert_eq!(*step as usize, i + 1, "{step:?}");
        }
    }
}
