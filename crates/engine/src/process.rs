//! TEMPORARY stand-in with the API of the shared process runner; replaced when
//! the `procs` work is merged. Not the real implementation.
#![allow(missing_docs)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Spec {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub stdin: Option<PathBuf>,
    pub timeout: Option<Duration>,
    pub grace: Duration,
    pub log: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
    Cancelled,
}

#[derive(Debug, Clone)]
pub struct Finished {
    pub exit: Exit,
    pub stdout_tail: String,
    pub output_tail: String,
    pub duration: Duration,
}

impl Finished {
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
}

#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Self {
        Cancel::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst)
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

pub fn scrubbed_env(extra: &[String]) -> Vec<(String, String)> {
    let keep = ["PATH", "HOME", "LANG", "TMPDIR", "USER"];
    std::env::vars()
        .filter(|(k, _)| keep.contains(&k.as_str()) || extra.contains(k))
        .collect()
}

pub fn find_program(name: &str, path_env: Option<&str>) -> Option<PathBuf> {
    if name.contains('/') {
        return Path::new(name).is_file().then(|| PathBuf::from(name));
    }
    let path = path_env.map(String::from).or_else(|| std::env::var("PATH").ok())?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

pub fn run(spec: &Spec, cancel: &Cancel) -> Result<Finished, ProcessError> {
    use std::os::unix::process::CommandExt;
    let start = Instant::now();
    let mut cmd = Command::new(&spec.argv[0]);
    cmd.args(&spec.argv[1..])
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().cloned())
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match &spec.stdin {
        Some(p) => cmd.stdin(std::fs::File::open(p).map_err(|e| ProcessError::Spawn {
            program: spec.argv[0].clone(),
            source: e,
        })?),
        None => cmd.stdin(Stdio::null()),
    };
    let mut child = cmd.spawn().map_err(|e| ProcessError::Spawn {
        program: spec.argv[0].clone(),
        source: e,
    })?;
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let t2 = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let mut exit = None;
    while exit.is_none() {
        if let Ok(Some(st)) = child.try_wait() {
            exit = Some(match st.code() {
                Some(c) => Exit::Code(c),
                None => Exit::Signal(9),
            });
            break;
        }
        if cancel.is_cancelled() {
            let _ = child.kill();
            let _ = child.wait();
            exit = Some(Exit::Cancelled);
        } else if spec.timeout.is_some_and(|t| start.elapsed() > t) {
            let _ = child.kill();
            let _ = child.wait();
            exit = Some(Exit::TimedOut);
        } else {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let o = t1.join().unwrap_or_default();
    let e = t2.join().unwrap_or_default();
    let stdout = String::from_utf8_lossy(&o).into_owned();
    let all = format!("{stdout}{}", String::from_utf8_lossy(&e));
    if let Some(log) = &spec.log {
        let _ = std::fs::write(log, &all);
    }
    Ok(Finished {
        exit: exit.unwrap(),
        stdout_tail: stdout,
        output_tail: all,
        duration: start.elapsed(),
    })
}
