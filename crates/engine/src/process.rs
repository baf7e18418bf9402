//! Running a trusted child (a gate or an agent) the way a test runner does:
//! an argv and never a shell, exactly the environment it is given, its own
//! process group, both output streams read at once so a chatty child cannot
//! deadlock, a timeout and a cancel flag that stop the whole group (TERM,
//! a grace period, then KILL), and every byte of output appended to a log.
//!
//! Unix only: process groups and signals are what make "stop everything the
//! child started" possible.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::Arc;
use std::thread;
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

/// How often the child, the clock and the cancel flag are looked at.
const POLL: Duration = Duration::from_millis(20);

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
/// Clones share the flag.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// Asks every [`run`] using this flag to stop its child.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
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
    /// Waiting for the child or starting a reader thread failed.
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

/// Runs `spec` to the end and reports how it ended. Returns when the child
/// has exited and its output pipes are closed (or, past [`LEAK_WAIT`], the
/// rest of its group was killed). Whatever is left in the child's process
/// group afterwards is killed too: a gate or agent leaves nothing running.
pub fn run(spec: &Spec, cancel: &Cancel) -> Result<Finished, ProcessError> {
    let program_name = spec.argv.first().ok_or(ProcessError::EmptyArgv)?;
    let (program, stdin, log) = prepare(program_name, spec)?;
    if cancel.is_cancelled() {
        return Ok(Finished {
            exit: Exit::Cancelled,
            stdout_tail: String::new(),
            output_tail: String::new(),
            duration: Duration::ZERO,
        });
    }

    let start = Instant::now();
    let child = command(spec, &program, program_name)
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
    let rx = group.read_output().map_err(lost)?;
    let mut out = Collected::new(log, spec.lines.clone());

    let stopped = supervise(&group, spec, cancel, start, &rx, &mut out);
    drain(&group, &rx, &mut out);
    out.flush_line();
    let status = group.reap().map_err(lost)?;
    let duration = start.elapsed();

    if let Some(source) = out.log_error {
        let path = spec.log.clone().unwrap_or_default();
        return Err(ProcessError::Log { path, source });
    }
    Ok(Finished {
        exit: stopped.unwrap_or_else(|| exit_of(status)),
        stdout_tail: out.stdout.text(),
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
        OpenOptions::new().create(true).append(true).open(path)
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
        .stderr(Stdio::piped())
        // Its own group, so a timeout or cancel reaches everything it started.
        .process_group(0);
    cmd
}

fn exit_of(status: ExitStatus) -> Exit {
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => Exit::Code(-1),
    }
}

/// Waits for the child to exit, stopping its group on timeout or cancel.
/// Returns the reason it was stopped, if it was.
fn supervise(
    group: &Group,
    spec: &Spec,
    cancel: &Cancel,
    start: Instant,
    rx: &Receiver<Chunk>,
    out: &mut Collected,
) -> Option<Exit> {
    let deadline = spec.timeout.map(|t| start + t);
    let mut stopping: Option<(Exit, Instant)> = None;
    let mut killed = false;
    loop {
        pump(rx, out);
        if group.has_exited() {
            return stopping.map(|(reason, _)| reason);
        }
        match stopping {
            None => {
                let reason = if cancel.is_cancelled() {
                    Some(Exit::Cancelled)
                } else if deadline.is_some_and(|d| Instant::now() >= d) {
                    Some(Exit::TimedOut)
                } else {
                    None
                };
                if let Some(reason) = reason {
                    group.signal(libc::SIGTERM);
                    stopping = Some((reason, Instant::now()));
                }
            }
            Some((_, since)) if !killed && since.elapsed() >= spec.grace => {
                group.signal(libc::SIGKILL);
                killed = true;
            }
            Some(_) => {}
        }
    }
}

/// Reads what is left after the child exited, bounded: a grandchild that
/// keeps the pipes open past [`LEAK_WAIT`] is killed with the group.
fn drain(group: &Group, rx: &Receiver<Chunk>, out: &mut Collected) {
    if !pump_until_closed(rx, out, LEAK_WAIT) {
        group.signal(libc::SIGKILL);
        pump_until_closed(rx, out, CLOSE_WAIT);
    }
    // Background processes that closed their output are still running.
    group.signal(libc::SIGKILL);
}

/// Takes output for up to one poll interval. A bounded number of chunks per
/// call, so a chatty child cannot starve the checks in between.
fn pump(rx: &Receiver<Chunk>, out: &mut Collected) {
    match rx.recv_timeout(POLL) {
        Ok(chunk) => {
            out.take(chunk);
            for _ in 0..CHANNEL_CHUNKS {
                match rx.try_recv() {
                    Ok(chunk) => out.take(chunk),
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
                }
            }
        }
        Err(RecvTimeoutError::Timeout) => {}
        // Both pipes are closed but the child still runs.
        Err(RecvTimeoutError::Disconnected) => thread::sleep(POLL),
    }
}

/// Takes output until both pipes are closed (true) or `limit` passed (false).
fn pump_until_closed(rx: &Receiver<Chunk>, out: &mut Collected, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => out.take(chunk),
            Err(RecvTimeoutError::Disconnected) => return true,
            Err(RecvTimeoutError::Timeout) => return false,
        }
    }
}

/// Chunks in flight between the reader threads and the collector. Bounded,
/// so a child that writes faster than the log takes it waits on its pipe.
const CHANNEL_CHUNKS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

type Chunk = (Stream, Vec<u8>);

/// A started child that is the leader of its own process group. Dropping
/// it before [`Group::reap`] kills the group, so an early return or a panic
/// leaves nothing running.
struct Group {
    child: Child,
    pgid: libc::pid_t,
    reaped: bool,
}

impl Group {
    fn new(child: Child) -> Group {
        let pgid = child.id() as libc::pid_t;
        Group {
            child,
            pgid,
            reaped: false,
        }
    }

    fn read_output(&mut self) -> io::Result<Receiver<Chunk>> {
        let (tx, rx) = mpsc::sync_channel(CHANNEL_CHUNKS);
        if let Some(pipe) = self.child.stdout.take() {
            spawn_reader(pipe, Stream::Stdout, tx.clone())?;
        }
        if let Some(pipe) = self.child.stderr.take() {
            spawn_reader(pipe, Stream::Stderr, tx)?;
        }
        Ok(rx)
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
fn siginfo_pid(info: &libc::siginfo_t) -> libc::pid_t {
    // SAFETY: waitid with WEXITED fills the child fields of the union.
    unsafe { info.si_pid() }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn siginfo_pid(info: &libc::siginfo_t) -> libc::pid_t {
    info.si_pid
}

fn spawn_reader(
    mut pipe: impl Read + Send + 'static,
    stream: Stream,
    tx: SyncSender<Chunk>,
) -> io::Result<()> {
    let name = format!("planwright-std{}", ["out", "err"][stream as usize]);
    thread::Builder::new().name(name).spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    if tx.send((stream, buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    })?;
    Ok(())
}

/// Where output goes: the log (everything), two tails and the line sink.
struct Collected {
    log: Option<File>,
    log_error: Option<io::Error>,
    stdout: Tail,
    all: Tail,
    lines: Option<LineSink>,
    /// Stdout after its last newline, not yet given to the sink.
    partial: Vec<u8>,
}

impl Collected {
    fn new(log: Option<File>, lines: Option<LineSink>) -> Collected {
        Collected {
            log,
            log_error: None,
            stdout: Tail::default(),
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

    fn flush_line(&mut self) {
        if let Some(sink) = &self.lines {
            if !self.partial.is_empty() {
                (sink.0)(String::from_utf8_lossy(&self.partial).trim_end_matches('\r'));
                self.partial.clear();
            }
        }
    }

    fn take(&mut self, (stream, bytes): Chunk) {
        if let Some(log) = &mut self.log {
            if let Err(e) = log.write_all(&bytes) {
                // Keep running the child to its end; the error is reported then.
                self.log_error = Some(e);
                self.log = None;
            }
        }
        if stream == Stream::Stdout {
            self.stdout.push(&bytes);
            self.feed_lines(&bytes);
        }
        self.all.push(&bytes);
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
