//! `planwright serve --repo DIR`: the HTML report as a live page on
//! 127.0.0.1, updated through server-sent events as the run's event log
//! grows. Read-only and loopback-only; every request must carry the random
//! token of the printed URL (else 403), so another local user or a web
//! page in the browser cannot read the run, and name the address it
//! listens on as its `Host` (else 403), so a page of another site whose
//! name was rebound to 127.0.0.1 (DNS rebinding) is refused even if the
//! token leaked.

mod http;

use super::observe::open_view;
use super::observe::RunArgs;
use crate::error::{exit, CliError, CliResult};
use crate::Global;
use planwright_view::{html_body, read_gate_logs, HtmlOptions, RunFiles, RunView, Tail};
use std::io::Write;
use std::net::{Ipv4Addr, TcpListener};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Serve a run's report as a live page on 127.0.0.1 (read-only): the same
/// page as `report --to html`, updated as the run goes on.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub run: RunArgs,
    /// The port on 127.0.0.1 (default: a free one).
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub port: u16,
    /// How often to look for new events, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub interval: u64,
}

/// The latest rendering, shared by the follower and the connections.
pub(crate) struct Live {
    state: Mutex<Rendered>,
    changed: Condvar,
}

/// One rendering of the report's `<main>`, numbered.
#[derive(Clone)]
pub(crate) struct Rendered {
    /// Bumped on each change.
    pub version: u64,
    /// The view it was drawn from.
    pub view: RunView,
    /// `<main>`'s content.
    pub body: String,
}

/// What every connection needs.
pub(crate) struct Server {
    /// The secret every request must carry.
    pub token: String,
    /// The port on 127.0.0.1, which every request's `Host` must name.
    pub port: u16,
    /// The run's files (for the log links).
    pub files: RunFiles,
    /// The latest rendering.
    pub live: Arc<Live>,
}

impl Server {
    /// The page's link and liveness settings.
    pub(crate) fn options(&self) -> HtmlOptions {
        options(&self.token, &self.files)
    }

    /// The latest rendering.
    pub(crate) fn current(&self) -> Rendered {
        self.live
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Waits until the rendering is newer than `version`, or `timeout`.
    pub(crate) fn wait_newer(&self, version: u64, timeout: Duration) -> Option<Rendered> {
        let guard = self.live.state.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = self
            .live
            .changed
            .wait_timeout_while(guard, timeout, |r| r.version <= version)
            .unwrap_or_else(|e| e.into_inner());
        (guard.version > version).then(|| guard.clone())
    }
}

/// A server for `view` (with `files`), its first rendering done.
pub(crate) fn server(view: RunView, files: RunFiles, token: String, port: u16) -> Server {
    let body = html_body(&view, &options(&token, &files));
    Server {
        token,
        port,
        files,
        live: Arc::new(Live {
            state: Mutex::new(Rendered {
                version: 1,
                view,
                body,
            }),
            changed: Condvar::new(),
        }),
    }
}

/// Links to logs and the event stream carry the token: the page is opened
/// from the printed URL, and nothing else may read the run.
fn options(token: &str, files: &RunFiles) -> HtmlOptions {
    HtmlOptions {
        run_dir: Some(files.dir.clone()),
        log_prefix: "logs/".into(),
        log_suffix: format!("?token={token}"),
        live: Some(format!("events?token={token}")),
    }
}

/// Folds new events every `interval` and publishes a new rendering when
/// there were any. Stops when the log cannot be read.
fn follow(server: &Server, mut tail: Tail, interval: Duration) {
    let mut view = server.current().view;
    loop {
        std::thread::sleep(interval);
        match tail.poll(&mut view) {
            Ok(false) => continue,
            Ok(true) => read_gate_logs(&mut view, &server.files.dir),
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "serve: stopped following the event log: {e}"
                );
                return;
            }
        }
        let body = html_body(&view, &server.options());
        let mut state = server.live.state.lock().unwrap_or_else(|e| e.into_inner());
        *state = Rendered {
            version: state.version + 1,
            view: view.clone(),
            body,
        };
        server.live.changed.notify_all();
    }
}

/// A random token from the operating system's generator (128 bits, hex).
fn token() -> Result<String, CliError> {
    let mut bytes = [0u8; 16];
    let mut f =
        std::fs::File::open("/dev/urandom").map_err(|e| CliError::io("/dev/urandom", &e))?;
    std::io::Read::read_exact(&mut f, &mut bytes).map_err(|e| CliError::io("/dev/urandom", &e))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Runs the command.
pub(crate) fn run(args: Args, _global: &Global) -> CliResult {
    let (mut view, files) = open_view(&args.run.repo, args.run.id.as_deref())?;
    let mut tail = Tail::of(&files);
    tail.poll(&mut view).map_err(super::run::engine_error)?;
    read_gate_logs(&mut view, &files.dir);
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, args.port)).map_err(|e| {
        CliError::usage(format!("cannot listen on 127.0.0.1:{}: {e}", args.port))
            .hint("pick another `--port`, or omit it for a free one")
    })?;
    let port = listener
        .local_addr()
        .map_err(|e| CliError::io("socket", &e))?
        .port();
    let server = Arc::new(server(view, files, token()?, port));
    // Whoever started us may stop reading once it has the URL: a closed
    // stdout must not stop the server.
    let _ = writeln!(
        std::io::stdout(),
        "serving run {} at http://127.0.0.1:{port}/?token={}\nread-only; press Ctrl-C to stop",
        server.current().view.run.id,
        server.token
    );
    let follower = Arc::clone(&server);
    let interval = Duration::from_millis(args.interval.max(50));
    std::thread::spawn(move || follow(&follower, tail, interval));
    for stream in listener.incoming().flatten() {
        let server = Arc::clone(&server);
        std::thread::spawn(move || http::handle(&server, stream));
    }
    Ok(exit::OK)
}

#[cfg(test)]
mod tests;
