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
//! child started" possible.

use crate::sandbox::{Confine, SandboxError};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How many bytes of output [`Finished::stdout_tail`] and
/// [`Finished::output_tail`] keep (at most; a UTF-8 character cut at the
/// start is dropped).
pub const TAIL_BYTES: usize = 4096;

/// How long the output pipes may stay open after the child exited before the
/// rest of its process group (a grandchild still holding them) is killed.
pub const LEAK_WAIT: Duration = Duration::from_millis(500);

/// After the group was killed, how long to wait for the pipes to close. A
/// process that left the group (`setsid`) can hold them forever; its output
/// after this point is not collected.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// The default cap of an agent's log per attempt (`[agent] log_limit_mib`).
pub const AGENT_LOG_LIMIT: u64 = 64 * 1024 * 1024;

/// The environment variables [`scrubbed_env`] keeps. Nothing that usually
/// carries a secret: locale, terminal, identity, temporary directory and the
/// search path. `SHELL` is kept because agent CLIs use it to pick the shell
/// they run their own commands in; planwright itself never uses a shell.
pub const ENV_ALLOWLIST: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR",
    "TZ",
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
    /// JSON), the last line even without its newline.
    pub lines: Option<LineSink>,
    /// The sandbox and namespaces the child runs in; `None` runs it
    /// unconfined in its own process group (trusted children only).
    pub confine: Option<Confine>,
    /// At most this many bytes go to [`Spec::log`]; past it a marker line
    /// says where output was dropped, and the total dropped is noted at the
    /// end. The tails and the line sink still see everything.
    pub log_limit: Option<u64>,
}

/// A callback for each line of a child's stdout, called on the thread that
/// runs the child.
#[derive(Clone)]
pub struct LineSink(pub Arc<dyn Fn(&str) + Send + Sync>);

impl LineSink {
    /// A sink calling `f`.
    pub fn new(f: impl Fn(&str) + Send + Sync + 'static) -> LineSink {
        LineSink(Arc::new(f))
    }
}

impl std::fmt::Debug for LineSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineSink")
    }
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
}

impl Finished {
    /// Whether the child exited with code 0.
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }
}

/// A flag that stops a running child (and its group) from another thread.
/// Clones share the flag. It comes with a pipe that becomes readable when
/// the flag is set, so a waiting [`run`] wakes at once instead of looking
/// at the flag on a timer.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<CancelInner>);

struct CancelInner {
    flag: AtomicBool,
    /// Read and write ends; `None` if the pipe could not be made.
    wake: Option<(OwnedFd, OwnedFd)>,
    /// Called once on cancel, for waiters that sleep on something other
    /// than the pipe (the coordinator, on its channel).
    listeners: std::sync::Mutex<Vec<Box<dyn Fn() + Send + Sync>>>,
}

impl std::fmt::Debug for CancelInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelInner")
            .field("flag", &self.flag)
            .finish_non_exhaustive()
    }
}

impl Default for CancelInner {
    fn default() -> Self {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 returns.
        let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) };
        // SAFETY: on success both descriptors are new and ours.
        let wake = (rc == 0)
            .then(|| unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) });
        CancelInner {
            flag: AtomicBool::new(false),
            wake,
            listeners: Default::default(),
        }
    }
}

impl Cancel {
    /// Asks every [`run`] using this flag to stop its child.
    pub fn cancel(&self) {
        if !self.0.flag.swap(true, Ordering::SeqCst) {
            if let Some((_, w)) = &self.0.wake {
                // Never read: the pipe stays readable for every waiter.
                // SAFETY: a one-byte write from a valid buffer.
                unsafe { libc::write(w.as_raw_fd(), b"x".as_ptr().cast(), 1) };
            }
            for wake in self.listeners().iter() {
                wake();
            }
        }
    }

    /// Calls `wake` when [`Cancel::cancel`] is called (at once if it was).
    pub fn on_cancel(&self, wake: impl Fn() + Send + Sync + 'static) {
        let mut listeners = self.listeners();
        // Under the lock, so a cancel in between cannot miss it.
        if self.is_cancelled() {
            drop(listeners);
            wake();
        } else {
            listeners.push(Box::new(wake));
        }
    }

    fn listeners(&self) -> std::sync::MutexGuard<'_, Vec<Box<dyn Fn() + Send + Sync>>> {
        self.0.listeners.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.flag.load(Ordering::SeqCst)
    }

    /// The descriptor that becomes readable on cancel.
    fn wake_fd(&self) -> Option<libc::c_int> {
        self.0.wake.as_ref().map(|(r, _)| r.as_raw_fd())
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
    // SAFETY: a signal to this process; no memory is involved.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
}

/// Runs `spec` to the end and reports how it ended. Returns when the child
/// has exited and its output pipes are closed (or, past [`LEAK_WAIT`], the
/// rest of its group was killed). Whatever is left in the child's process
/// group afterwards is killed too; a confined child (see [`Spec::confine`])
/// is the shim of a PID namespace, so its exit already means that every
/// process it started is gone.
pub fn run(spec: &Spec, cancel: &Cancel) -> Result<Finished, ProcessError> {
    let program_name = spec.argv.first().ok_or(ProcessError::EmptyArgv)?;
    let (program, stdin, log) = prepare(program_name, spec)?;
    if cancel.is_cancelled() {
        return Ok(Finished {
            exit: Exit::Cancelled,
            stdout_tail: String::new(),
            stderr_tail: String::new(),
            output_tail: String::new(),
            duration: Duration::ZERO,
        });
    }

    let start = Instant::now();
    let mut cmd = command(spec, &program, program_name);
    if let Some(confine) = &spec.confine {
        let mut hook = confine.hook()?;
        // SAFETY: `Hook::enter` makes only async-signal-safe system calls
        // on data prepared before the fork.
        unsafe { cmd.pre_exec(move || hook.enter()) };
    }
    let child = cmd
        .stdin(stdin)
        .spawn()
        .map_err(|source| ProcessError::Spawn {
            program: program_name.clone(),
            source,
        })?;
    let mut group = Group::new(child);
    let lost = |source| ProcessError::Wait {
        program: program_name.clone(),
        source,
    };
    let mut pipes = group.pipes().map_err(lost)?;
    let mut out = Collected::new(log, spec.lines.clone(), spec.log_limit);

    let stopped = supervise(&group, spec, cancel, start, &mut pipes, &mut out).map_err(lost)?;
    out.finish();
    // Background processes that closed their output are still running.
    group.signal(libc::SIGKILL);
    let status = group.reap().map_err(lost)?;
    let duration = start.elapsed();

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
    // SAFETY: `setsid` is async-signal-safe and touches no memory.
    unsafe { cmd.pre_exec(new_session) };
    cmd
}

/// In the forked child: a session of its own, so it has no controlling
/// terminal (a child that keeps planwright's could push keystrokes into
/// the user's shell with TIOCSTI, or draw on the terminal), and a process
/// group of its own, so a timeout or cancel reaches everything it started.
fn new_session() -> io::Result<()> {
    // SAFETY: plain system call in the single-threaded forked child.
    if unsafe { libc::setsid() } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn exit_of(status: ExitStatus) -> Exit {
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => Exit::Code(-1),
    }
}

/// The child's stdout and stderr, non-blocking, until each reaches its end.
struct Pipes {
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
}

impl Pipes {
    fn open(&self) -> bool {
        self.stdout.is_some() || self.stderr.is_some()
    }
}

/// What the supervising loop waits for next.
struct Watch {
    exited: bool,
    stopping: Option<(Exit, Instant)>,
    killed: bool,
    /// Once the child exited: when to stop waiting for its pipes to close,
    /// and whether the group was already killed for holding them.
    leak: Option<(Instant, bool)>,
}

/// Waits for the child to exit and its pipes to close, taking its output,
/// and stops its group on timeout or cancel. Sleeps in `poll` on the
/// pipes, the child's pidfd and the cancel flag's pipe, so it wakes for
/// exactly those (and the deadlines). Returns the reason it was stopped,
/// if it was.
fn supervise(
    group: &Group,
    spec: &Spec,
    cancel: &Cancel,
    start: Instant,
    pipes: &mut Pipes,
    out: &mut Collected,
) -> io::Result<Option<Exit>> {
    let deadline = spec.timeout.map(|t| start + t);
    let mut w = Watch {
        exited: false,
        stopping: None,
        killed: false,
        leak: None,
    };
    loop {
        if w.exited && !pipes.open() {
            return Ok(w.stopping.map(|(reason, _)| reason));
        }
        let wake = next_wake(&w, deadline, spec.grace);
        wait_ready(group, cancel, pipes, &w, wake)?;
        read_ready(pipes, out);
        if !w.exited && group.has_exited() {
            w.exited = true;
            w.leak = Some((Instant::now() + LEAK_WAIT, false));
        }
        let now = Instant::now();
        match (w.exited, w.stopping) {
            (false, None) => {
                let reason = if cancel.is_cancelled() {
                    Some(Exit::Cancelled)
                } else if deadline.is_some_and(|d| now >= d) {
                    Some(Exit::TimedOut)
                } else {
                    None
                };
                if let Some(reason) = reason {
                    group.signal(libc::SIGTERM);
                    w.stopping = Some((reason, now));
                }
            }
            (false, Some((_, since))) if !w.killed && now >= since + spec.grace => {
                group.signal(libc::SIGKILL);
                w.killed = true;
            }
            _ => {}
        }
        match w.leak {
            // A grandchild still holds the pipes: kill the group, then give
            // the pipes a last moment to close.
            Some((at, false)) if now >= at => {
                group.signal(libc::SIGKILL);
                w.leak = Some((now + CLOSE_WAIT, true));
            }
            // A process that left the group (`setsid`) can hold them
            // for ever; its output after this point is not collected.
            Some((at, true)) if now >= at => return Ok(w.stopping.map(|(r, _)| r)),
            _ => {}
        }
    }
}

/// The next instant something must happen without any file descriptor
/// becoming ready.
fn next_wake(w: &Watch, deadline: Option<Instant>, grace: Duration) -> Option<Instant> {
    let mut wake: Option<Instant> = None;
    let mut at = |t: Instant| wake = Some(wake.map_or(t, |w: Instant| w.min(t)));
    if !w.exited {
        match w.stopping {
            None => {
                if let Some(d) = deadline {
                    at(d);
                }
            }
            Some((_, since)) if !w.killed => at(since + grace),
            Some(_) => {}
        }
    }
    if let Some((t, _)) = w.leak {
        at(t);
    }
    wake
}

/// Sleeps until a pipe, the pidfd or the cancel pipe is ready, or `wake`.
fn wait_ready(
    group: &Group,
    cancel: &Cancel,
    pipes: &Pipes,
    w: &Watch,
    wake: Option<Instant>,
) -> io::Result<()> {
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(4);
    let mut watch = |fd: libc::c_int| {
        fds.push(libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
    };
    if let Some(p) = &pipes.stdout {
        watch(p.as_raw_fd());
    }
    if let Some(p) = &pipes.stderr {
        watch(p.as_raw_fd());
    }
    let mut fallback = false;
    if !w.exited {
        match &group.pidfd {
            Some(fd) => watch(fd.as_raw_fd()),
            None => fallback = true,
        }
        match (w.stopping, cancel.wake_fd()) {
            (None, Some(fd)) => watch(fd),
            (None, None) => fallback = true,
            _ => {}
        }
    }
    let mut timeout = wake.map(|t| t.saturating_duration_since(Instant::now()));
    if fallback {
        // No pidfd (an old kernel) or no cancel pipe: look again now and then.
        timeout = Some(timeout.map_or(FALLBACK_POLL, |t| t.min(FALLBACK_POLL)));
    }
    let ms = timeout.map_or(-1, |t| {
        // Round up, so a deadline is not polled for in a busy loop.
        libc::c_int::try_from(t.as_micros().div_ceil(1000)).unwrap_or(libc::c_int::MAX)
    });
    // SAFETY: `fds` is a valid array of pollfd of the given length.
    let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// How often a child is looked at when the kernel has no pidfd for it.
const FALLBACK_POLL: Duration = Duration::from_millis(50);

/// Takes what the pipes have (bounded per call, so a chatty child cannot
/// starve the checks), and closes a pipe at its end.
fn read_ready(pipes: &mut Pipes, out: &mut Collected) {
    let mut buf = vec![0u8; 64 * 1024];
    if let Some(p) = &mut pipes.stdout {
        if !drain_pipe(p, Stream::Stdout, &mut buf, out) {
            pipes.stdout = None;
        }
    }
    if let Some(p) = &mut pipes.stderr {
        if !drain_pipe(p, Stream::Stderr, &mut buf, out) {
            pipes.stderr = None;
        }
    }
}

/// Reads what is there now; false when the pipe reached its end.
fn drain_pipe(pipe: &mut impl Read, stream: Stream, buf: &mut [u8], out: &mut Collected) -> bool {
    for _ in 0..READS_PER_WAKE {
        match pipe.read(buf) {
            Ok(0) => return false,
            Ok(n) => out.take(stream, &buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(_) => return false,
        }
    }
    true
}

/// Reads per pipe per wake-up, 64 KiB each.
const READS_PER_WAKE: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

/// A started child that is the leader of its own process group. Dropping
/// it before [`Group::reap`] kills the group, so an early return or a panic
/// leaves nothing running.
struct Group {
    child: Child,
    pgid: libc::pid_t,
    /// Readable when the child exits (Linux 5.3 and later).
    pidfd: Option<OwnedFd>,
    reaped: bool,
}

impl Group {
    fn new(child: Child) -> Group {
        let pgid = child.id() as libc::pid_t;
        Group {
            child,
            pgid,
            pidfd: pidfd_open(pgid),
            reaped: false,
        }
    }

    fn pipes(&mut self) -> io::Result<Pipes> {
        let pipes = Pipes {
            stdout: self.child.stdout.take(),
            stderr: self.child.stderr.take(),
        };
        if let Some(p) = &pipes.stdout {
            set_nonblocking(p.as_raw_fd())?;
        }
        if let Some(p) = &pipes.stderr {
            set_nonblocking(p.as_raw_fd())?;
        }
        Ok(pipes)
    }

    /// Whether the leader exited, without reaping it: while it is a zombie
    /// its pid (the group id) cannot be reused, so signalling the group
    /// cannot reach an unrelated process.
    fn has_exited(&self) -> bool {
        loop {
            // SAFETY: siginfo_t is plain data; waitid fills it or leaves it zeroed.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
            // SAFETY: `info` is a valid, writable siginfo_t.
            let rc =
                unsafe { libc::waitid(libc::P_PID, self.pgid as libc::id_t, &mut info, flags) };
            if rc == 0 {
                return siginfo_pid(&info) != 0;
            }
            if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                // Nothing left to wait for; `reap` reports the details.
                return true;
            }
        }
    }

    /// Sends `signal` to every process in the group. Failure means the group
    /// is already gone.
    fn signal(&self, signal: libc::c_int) {
        // SAFETY: plain syscall; the group id is the unreaped leader's pid.
        unsafe {
            libc::killpg(self.pgid, signal);
        }
    }

    fn reap(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait()?;
        self.reaped = true;
        Ok(status)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.reaped {
            self.signal(libc::SIGKILL);
            let _ = self.child.wait();
        }
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn pidfd_open(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: plain system call; a non-negative result is a new fd we own.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = libc::c_int::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: the kernel just gave us this descriptor.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn pidfd_open(_pid: libc::pid_t) -> Option<OwnedFd> {
    None
}

fn set_nonblocking(fd: libc::c_int) -> io::Result<()> {
    // SAFETY: plain fcntl calls on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn siginfo_pid(info: &libc::siginfo_t) -> libc::pid_t {
    // SAFETY: waitid with WEXITED fills the child fields of the union.
    unsafe { info.si_pid() }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn siginfo_pid(info: &libc::siginfo_t) -> libc::pid_t {
    info.si_pid
}

/// Where output goes: the log (everything, up to its limit), two tails
/// and the line sink.
struct Collected {
    log: Option<File>,
    log_error: Option<io::Error>,
    /// Bytes the log may still take; `None` is unlimited.
    log_room: Option<u64>,
    log_limit: Option<u64>,
    /// Bytes left out of the log once it was full.
    dropped: u64,
    stdout: Tail,
    stderr: Tail,
    all: Tail,
    lines: Option<LineSink>,
    /// Stdout after its last newline, not yet given to the sink.
    partial: Vec<u8>,
}

impl Collected {
    fn new(log: Option<File>, lines: Option<LineSink>, limit: Option<u64>) -> Collected {
        Collected {
            log,
            log_error: None,
            log_room: limit,
            log_limit: limit,
            dropped: 0,
            stdout: Tail::default(),
            stderr: Tail::default(),
            all: Tail::default(),
            lines,
            partial: Vec::new(),
        }
    }

    fn feed_lines(&mut self, bytes: &[u8]) {
        let Some(sink) = &self.lines else { return };
        self.partial.extend_from_slice(bytes);
        let Some(end) = self.partial.iter().rposition(|b| *b == b'\n') else {
            return;
        };
        let complete: Vec<u8> = self.partial.drain(..=end).collect();
        for line in complete[..end].split(|b| *b == b'\n') {
            (sink.0)(String::from_utf8_lossy(line).trim_end_matches('\r'));
        }
    }

    /// The last line without its newline, and how much the log dropped.
    fn finish(&mut self) {
        if let Some(sink) = &self.lines {
            if !self.partial.is_empty() {
                (sink.0)(String::from_utf8_lossy(&self.partial).trim_end_matches('\r'));
                self.partial.clear();
            }
        }
        if self.dropped > 0 {
            let note = format!(
                "\n[planwright: {} more bytes of output were dropped]\n",
                self.dropped
            );
            self.write_log(note.as_bytes());
        }
    }

    fn take(&mut self, stream: Stream, bytes: &[u8]) {
        self.log_capped(bytes);
        match stream {
            Stream::Stdout => {
                self.stdout.push(bytes);
                self.feed_lines(bytes);
            }
            Stream::Stderr => self.stderr.push(bytes),
        }
        self.all.push(bytes);
    }

    /// Writes what fits under the limit; at the limit, a marker line.
    fn log_capped(&mut self, bytes: &[u8]) {
        let Some(room) = self.log_room else {
            self.write_log(bytes);
            return;
        };
        let fits = usize::try_from(room).unwrap_or(usize::MAX).min(bytes.len());
        self.write_log(&bytes[..fits]);
        self.log_room = Some(room - fits as u64);
        if fits < bytes.len() {
            if self.dropped == 0 {
                let marker = format!(
                    "\n[planwright: the log reached its limit of {} bytes; output from here on is dropped]\n",
                    self.log_limit.unwrap_or_default()
                );
                self.write_log(marker.as_bytes());
            }
            self.dropped += (bytes.len() - fits) as u64;
        }
    }

    fn write_log(&mut self, bytes: &[u8]) {
        if let Some(log) = &mut self.log {
            if let Err(e) = log.write_all(bytes) {
                // Keep running the child to its end; the error is reported then.
                self.log_error = Some(e);
                self.log = None;
            }
        }
    }
}

/// The last [`TAIL_BYTES`] of a stream.
#[derive(Default)]
struct Tail(Vec<u8>);

impl Tail {
    fn push(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
        // Trim in batches so a stream of small chunks does not shift the
        // buffer every time.
        if self.0.len() > 2 * TAIL_BYTES {
            let cut = self.0.len() - TAIL_BYTES;
            self.0.drain(..cut);
        }
    }

    fn text(&self) -> String {
        let mut bytes = &self.0[self.0.len().saturating_sub(TAIL_BYTES)..];
        // Drop a character cut in half at the start.
        let partial = bytes
            .iter()
            .take(3)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count();
        if self.0.len() > TAIL_BYTES {
            bytes = &bytes[partial..];
        }
        String::from_utf8_lossy(bytes).into_owned()
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
    fn tail_keeps_the_end_and_drops_a_cut_character() {
        let mut tail = Tail::default();
        tail.push(b"x");
        for _ in 0..3000 {
            tail.push("€".as_bytes());
        }
        // 4096 = 3 * 1365 + 1: the window starts on the last byte of a `€`.
        let text = tail.text();
        assert!(text.chars().all(|c| c == '€'), "{text:?}");
        assert_eq!(text.len(), TAIL_BYTES - 1);
    }

    #[test]
    fn tail_of_short_output_is_all_of_it() {
        let mut tail = Tail::default();
        tail.push(b"hello\n");
        assert_eq!(tail.text(), "hello\n");
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
