//! Running a child (a gate or an agent) the way a test runner does: an argv
//! and never a shell, exactly the environment it is given, its own process
//! group (and, when confined, its own namespaces and sandbox, see
//! [`crate::sandbox`]), both output streams read at once so a chatty child
//! cannot deadlock, a timeout and a cancel flag that stop the whole group
//! (TERM, a grace period, then KILL), and its output appended to a log (up
//! to a limit). One thread waits in `poll` on the pipes, the child's pidfd
//! and the cancel flag: nothing is polled on a timer.
//!
//! Unix only: process groups and signals are what make "stop everything the
//! child started" possible. The pidfd is Linux's; elsewhere the child is
//! looked at now and then instead.

mod cancel;
mod collect;
pub(crate) mod descriptors;
mod lines;
mod supervise;

pub use cancel::{Cancel, Listening};
pub use descriptors::seal_inherited;
pub use lines::{Line, LineSink, LINE_LIMIT};
pub use supervise::LEAK_WAIT;

use crate::sandbox::{Confine, SandboxError};
use collect::Collected;
use rustix::process::Signal;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use supervise::{supervise, Group};

/// How many bytes of output [`Finished::stdout_tail`] and
/// [`Finished::output_tail`] keep (at most; a UTF-8 character cut at the
/// start is dropped).
pub const TAIL_BYTES: usize = 4096;

/// The default cap of an agent's log per attempt (`[agent] log_limit_mib`).
pub const AGENT_LOG_LIMIT: u64 = 64 * 1024 * 1024;

/// The environment variables [`scrubbed_env`] keeps. Nothing that usually
/// carries a secret: locale, terminal, identity, temporary directory and the
/// search path. `SHELL` is kept because agent CLIs use it to pick the shell
/// they run their own commands in; planwright itself never uses a shell.
/// `RUSTUP_HOME` is where the toolchains that rustup's `cargo` on `PATH`
/// runs are (the Rust images set it): without it, rustup looks in
/// `~/.rustup` and finds no toolchain.
pub const ENV_ALLOWLIST: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TMPDIR",
    "TZ",
    "RUSTUP_HOME",
];

/// What to run and how.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Program and arguments. The program is looked up in the `PATH` of
    /// `env` (not planwright's own), or taken as a path if it contains `/`
    /// (relative to `cwd`). Never run through a shell.
    pub argv: Vec<String>,
    /// Working directory of the child.
    pub cwd: PathBuf,
    /// The complete environment of the child; nothing is inherited.
    pub env: Vec<(String, String)>,
    /// A file fed to the child as stdin; `None` gives it `/dev/null`.
    pub stdin: Option<PathBuf>,
    /// Wall-clock limit; `None` waits for ever (cancel still works).
    pub timeout: Option<Duration>,
    /// Time between SIGTERM and SIGKILL when the child is stopped.
    pub grace: Duration,
    /// A file that receives stdout and stderr, interleaved as received.
    /// Opened for appending and never truncated.
    pub log: Option<PathBuf>,
    /// Receives stdout line by line as it arrives (an agent's streamed
    /// JSON), the last line even without its newline, each cut at the
    /// sink's limit; what it notes goes to the log within `log_limit`.
    pub lines: Option<LineSink>,
    /// The sandbox and namespaces the child runs in; `None` runs it
    /// unconfined in its own process group (trusted children only).
    pub confine: Option<Confine>,
    /// At most this many bytes go to [`Spec::log`]; past it a marker line
    /// says where output was dropped, and the total dropped is noted at the
    /// end. The tails and the line sink still see everything (the sink up
    /// to its line limit).
    pub log_limit: Option<u64>,
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal it did not ask for ended it.
    Signal(i32),
    /// It ran past [`Spec::timeout`] and was stopped.
    TimedOut,
    /// [`Cancel::cancel`] was called and it was stopped (or never started).
    Cancelled,
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(code) => write!(f, "exit code {code}"),
            Exit::Signal(signal) => write!(f, "killed by signal {signal}"),
            Exit::TimedOut => f.write_str("timed out"),
            Exit::Cancelled => f.write_str("cancelled"),
        }
    }
}

/// The result of a child that ran (whether or not it succeeded).
#[derive(Debug, Clone)]
pub struct Finished {
    /// How it ended.
    pub exit: Exit,
    /// The last [`TAIL_BYTES`] of stdout alone (where agents print their answer).
    pub stdout_tail: String,
    /// The last [`TAIL_BYTES`] of stderr alone (where programs say why
    /// they failed).
    pub stderr_tail: String,
    /// The last [`TAIL_BYTES`] of stdout and stderr interleaved, as received.
    pub output_tail: String,
    /// Wall-clock time from start to the end of its output.
    pub duration: Duration,
    /// The limit of its [`crate::sandbox::Limits`] it hit, where the
    /// mechanism sees it ([`crate::sandbox::Mechanism::reports_hits`]).
    pub limit: Option<crate::sandbox::LimitHit>,
}

impl Finished {
    /// Whether the child exited with code 0.
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }
}

/// Why a child could not be run. A child that ran and failed is not an
/// error: it is a [`Finished`] with its [`Exit`].
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The argv was empty.
    #[error("no program to run: the command is empty")]
    EmptyArgv,
    /// The program is not on the child's PATH, or the path given is not an
    /// executable file.
    #[error("program `{program}` not found {}", where_looked(.path, .program))]
    NotFound {
        /// The program as given in the argv.
        program: String,
        /// The PATH searched, or `None` when the program was a path or the
        /// environment had no PATH.
        path: Option<String>,
    },
    /// The working directory is missing or not a directory.
    #[error("working directory `{}` does not exist or is not a directory", .0.display())]
    Cwd(PathBuf),
    /// The stdin file could not be opened.
    #[error("cannot open stdin file `{}`: {source}", path.display())]
    Stdin {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The pipe for a child's stdin could not be made.
    #[error("cannot make a pipe for a child's stdin: {0}")]
    Pipe(io::Error),
    /// The log file could not be opened or written.
    #[error("cannot write log `{}`: {source}", path.display())]
    Log {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The operating system refused to start the program.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program as given in the argv.
        program: String,
        /// Why (permission denied, not an executable format, ...).
        source: io::Error,
    },
    /// The child's sandbox could not be prepared.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// Waiting for the child or reading its output failed.
    #[error("lost track of `{program}`: {source}")]
    Wait {
        /// The program as given in the argv.
        program: String,
        /// Why.
        source: io::Error,
    },
}

fn where_looked(path: &Option<String>, program: &str) -> String {
    match path {
        Some(path) => format!("in PATH `{path}`"),
        None if program.contains('/') => "or not executable".to_string(),
        None => "(the environment has no PATH)".to_string(),
    }
}

/// planwright's own environment, for children that inherit it whole (the
/// agent, worktree setup). `std::env::vars` would panic on a variable that
/// is not UTF-8; those are left out instead, since [`Spec::env`] is UTF-8.
pub fn inherited_env() -> Vec<(String, String)> {
    unicode_vars(std::env::vars_os())
}

fn unicode_vars(
    vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<(String, String)> {
    vars.filter_map(|(n, v)| Some((n.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// From planwright's own environment, the variables of [`ENV_ALLOWLIST`]
/// plus the names in `extra`, in that order, each once. A name in `extra`
/// ending in `*` keeps every variable starting with what precedes it
/// (`ANTHROPIC_*`). Unset variables and values that are not UTF-8 are left
/// out.
pub fn scrubbed_env(extra: &[String]) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = Vec::new();
    let mut keep = |name: &str, value: String| {
        if !env.iter().any(|(n, _)| n == name) {
            env.push((name.to_string(), value));
        }
    };
    let names = ENV_ALLOWLIST
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str));
    for name in names {
        if let Some(prefix) = name.strip_suffix('*') {
            let mut matching: Vec<(String, String)> = inherited_env();
            matching.retain(|(n, _)| n.starts_with(prefix));
            matching.sort();
            for (n, v) in matching {
                keep(&n, v);
            }
        } else if valid_name(name) {
            if let Some(value) = std::env::var_os(name).and_then(|v| v.into_string().ok()) {
                keep(name, value);
            }
        }
    }
    env
}

/// `std::env::var_os` may panic on these.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

/// This process's file mode creation mask, which the children it starts
/// (git writing a checkout, say) inherit: read, not set (setting it to
/// read it would race with other threads creating files). `0o022` where
/// the system does not say.
pub fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

/// Where `name` would be found, like `which`: a name containing `/` is
/// checked as a path; otherwise each directory of `path_env` is searched in
/// order for an executable file. Empty PATH entries (meaning "the current
/// directory") are skipped. `None` means there is no PATH, so only paths
/// can be found.
pub fn find_program(name: &str, path_env: Option<&str>) -> Option<PathBuf> {
    search(name, path_env, None)
}

/// [`find_program`], with relative paths and PATH entries taken from `base`
/// (the child's working directory), as the child would see them.
fn search(name: &str, path_env: Option<&str>, base: Option<&Path>) -> Option<PathBuf> {
    let rooted = |p: PathBuf| match base {
        Some(base) => base.join(p),
        None => p,
    };
    if name.is_empty() {
        return None;
    }
    if name.contains('/') {
        let path = rooted(PathBuf::from(name));
        return is_executable(&path).then_some(path);
    }
    path_env?
        .split(':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| rooted(Path::new(dir).join(name)))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Ends this process at once with SIGKILL, as a crash would: no destructor
/// runs and nothing is flushed (for tests that stop a run at a given step).
pub fn kill_self() {
    let _ = rustix::process::kill_process(rustix::process::getpid(), Signal::KILL);
}

/// Runs `spec` to the end and reports how it ended. Returns when the child
/// has exited and its output pipes are closed (or, past [`LEAK_WAIT`], the
/// rest of its group was killed). Whatever is left in the child's process
/// group afterwards is killed too; a confined child (see [`Spec::confine`])
/// is the shim of a PID namespace, so its exit already means that every
/// process it started is gone.
pub fn run(spec: &Spec, cancel: &Cancel) -> Result<Finished, ProcessError> {
    run_with(spec, cancel, None)
}

/// The reading end of a pipe made by [`stdin_pipe`], for [`run_piped`].
#[derive(Debug)]
pub struct PipedStdin(OwnedFd);

/// A pipe for the stdin of a child that a caller keeps talking to while it
/// runs: the reading end for [`run_piped`], and the writing end, which the
/// child does not inherit (both are closed on exec; the reading end becomes
/// the child's descriptor 0). Once the caller drops the writing end the
/// child reads the end of its input; once the child is gone a write fails
/// instead of blocking.
pub fn stdin_pipe() -> Result<(PipedStdin, File), ProcessError> {
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| ProcessError::Pipe(e.into()))?;
    Ok((PipedStdin(read), File::from(write)))
}

/// [`run`], the child's stdin being `stdin` (in place of [`Spec::stdin`]),
/// which this process no longer holds once the child has started.
pub fn run_piped(
    spec: &Spec,
    stdin: PipedStdin,
    cancel: &Cancel,
) -> Result<Finished, ProcessError> {
    run_with(spec, cancel, Some(Stdio::from(stdin.0)))
}

fn run_with(spec: &Spec, cancel: &Cancel, piped: Option<Stdio>) -> Result<Finished, ProcessError> {
    let program_name = spec.argv.first().ok_or(ProcessError::EmptyArgv)?;
    let (program, stdin, log) = prepare(program_name, spec)?;
    let stdin = piped.unwrap_or(stdin);
    if cancel.is_cancelled() {
        return Ok(Finished {
            exit: Exit::Cancelled,
            stdout_tail: String::new(),
            stderr_tail: String::new(),
            output_tail: String::new(),
            duration: Duration::ZERO,
            limit: None,
        });
    }

    let start = Instant::now();
    let mut cmd = command(spec, &program, program_name);
    let applied = match &spec.confine {
        Some(confine) => Some(confine.apply(&mut cmd)?),
        None => None,
    };
    // Dropped on an early return: its cgroup is removed.
    let child = cmd.stdin(stdin).spawn().map_err(|source| {
        let program = program_name.clone();
        match applied.as_ref().and_then(|a| a.refused_step()) {
            Some(step) => SandboxError::Refused {
                program,
                step,
                source,
            }
            .into(),
            None => ProcessError::Spawn { program, source },
        }
    })?;
    let (pending, watch) = applied.map_or((None, None), |a| (a.proxy, a.watch));
    // The command holds planwright's copy of the child's stdin: a reader
    // left here would keep a piped stdin open after the child is gone.
    drop(cmd);
    let mut group = Group::new(child);
    // Stops when dropped, whichever way this returns.
    let _proxy = match pending.map(|p| p.start(spec.log.clone())).transpose() {
        Ok(proxy) => proxy,
        Err(e) => {
            group.signal(Signal::KILL);
            let _ = group.reap();
            return Err(e.into());
        }
    };
    let lost = |source| ProcessError::Wait {
        program: program_name.clone(),
        source,
    };
    let mut pipes = group.pipes().map_err(lost)?;
    let mut out = Collected::new(log, spec.lines.clone(), spec.log_limit);

    let stopped = supervise(&group, spec, cancel, start, &mut pipes, &mut out).map_err(lost)?;
    out.finish();
    // Background processes that closed their output are still running.
    group.signal(Signal::KILL);
    let status = group.reap().map_err(lost)?;
    let duration = start.elapsed();
    let limit = watch.and_then(|w| w.close());

    if let Some(source) = out.log_error {
        let path = spec.log.clone().unwrap_or_default();
        return Err(ProcessError::Log { path, source });
    }
    Ok(Finished {
        exit: stopped.unwrap_or_else(|| exit_of(status)),
        stdout_tail: out.stdout.text(),
        stderr_tail: out.stderr.text(),
        output_tail: out.all.text(),
        duration,
        limit,
    })
}

/// Everything that can fail before the child starts: its program, stdin
/// and log.
fn prepare(program: &str, spec: &Spec) -> Result<(PathBuf, Stdio, Option<File>), ProcessError> {
    if !spec.cwd.is_dir() {
        return Err(ProcessError::Cwd(spec.cwd.clone()));
    }
    let program = resolve(program, spec)?;
    let stdin = match &spec.stdin {
        Some(path) => Stdio::from(File::open(path).map_err(|source| ProcessError::Stdin {
            path: path.clone(),
            source,
        })?),
        None => Stdio::null(),
    };
    let log = spec.log.as_deref().map(open_log).transpose()?;
    Ok((program, stdin, log))
}

fn resolve(program: &str, spec: &Spec) -> Result<PathBuf, ProcessError> {
    let path_env = spec
        .env
        .iter()
        .rev()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.as_str());
    search(program, path_env, Some(&spec.cwd)).ok_or_else(|| ProcessError::NotFound {
        program: program.to_string(),
        path: path_env
            .filter(|_| !program.contains('/'))
            .map(str::to_string),
    })
}

fn open_log(path: &Path) -> Result<File, ProcessError> {
    let open = || {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        crate::beneath::append(path).map_err(io::Error::other)
    };
    open().map_err(|source| ProcessError::Log {
        path: path.to_path_buf(),
        source,
    })
}

fn command(spec: &Spec, program: &Path, argv0: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.arg0(argv0)
        .args(&spec.argv[1..])
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: `pre_exec` is unsafe because its closure runs in the forked
    // child of a multi-threaded parent; `in_child` makes two system calls
    // that allocate nothing and take no lock. (std has no safe `setsid`.)
    unsafe { cmd.pre_exec(in_child) };
    cmd
}

/// In the forked child, before anything else: a session of its own, so it
/// has no controlling terminal (a child that keeps planwright's could push
/// keystrokes into the user's shell with TIOCSTI, or draw on the
/// terminal), and a process group of its own, so a timeout or cancel
/// reaches everything it started; and no descriptor but its stdin, stdout
/// and stderr survives its exec (see [`descriptors`]). A sandbox's own
/// step runs after this one and hands what it needs over before exec.
fn in_child() -> io::Result<()> {
    rustix::process::setsid()?;
    descriptors::cloexec_from(descriptors::FIRST_EXTRA)
}

fn exit_of(status: ExitStatus) -> Exit {
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => Exit::Code(-1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_that_are_not_unicode_are_left_out() {
        use std::ffi::OsString;
        use std::os::unix::ffi::OsStringExt;
        let vars = [
            (OsString::from("A"), OsString::from("1")),
            (OsString::from("B"), OsString::from_vec(vec![0xff])),
            (OsString::from_vec(vec![0xfe]), OsString::from("2")),
        ];
        assert_eq!(
            unicode_vars(vars.into_iter()),
            [("A".to_string(), "1".to_string())]
        );
    }

    #[test]
    fn exit_display_reads_well() {
        assert_eq!(Exit::Code(2).to_string(), "exit code 2");
        assert_eq!(Exit::Signal(9).to_string(), "killed by signal 9");
        assert_eq!(Exit::TimedOut.to_string(), "timed out");
    }

    #[test]
    fn find_program_searches_path_in_order_and_skips_non_executables() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("tool"), "not executable").unwrap();
        std::fs::write(b.join("tool"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(b.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!("{}::{}", a.display(), b.display());
        assert_eq!(find_program("tool", Some(&path)), Some(b.join("tool")));
        assert_eq!(find_program("tool", None), None);
        assert_eq!(find_program("missing", Some(&path)), None);
        let direct = b.join("tool");
        assert_eq!(find_program(direct.to_str().unwrap(), None), Some(direct));
    }
}
