//! Attempts on other machines: the worker protocol, the transports that
//! carry it, `planwright worker`, and the executor that drives workers
//! (docs/scaling.md).

mod cache;
mod checks;
mod command;
mod executor;
mod hello;
mod intake;
mod journal;
pub mod kubernetes;
pub mod protocol;
mod reconnect;
mod resume;
mod transport;
mod wire;
mod worker;

pub(crate) use checks::check_workers;
pub use command::CommandTransport;
pub use executor::RemoteExecutor;
pub use hello::{greet, hello, places, Greeting};
pub use kubernetes::kubernetes;
pub use transport::{EndLink, Link, Lost, NoLink, Transport, Wait};
pub use worker::{serve, set_version, version, WorkerOptions, VERSION};

use planwright_config::ExecutorSettings;
use std::path::Path;
use std::sync::Arc;

/// The transport `[executor]` names, with `slots` slots, for the
/// repository whose state directory is `state_dir`; `None` for `local`.
/// The default `process` worker is this program's own `worker`, its cache
/// in `state_dir`. `cancel` is the run's Ctrl-C, which the transport
/// answers to from now on, before any attempt connects.
pub fn transport(
    executor: &ExecutorSettings,
    state_dir: &Path,
    slots: usize,
    cancel: &planwright_os::process::Cancel,
) -> Result<Option<Arc<dyn Transport>>, crate::EngineError> {
    let transport = match executor {
        ExecutorSettings::Local => return Ok(None),
        ExecutorSettings::Process { command } if command.is_empty() => {
            let program = std::env::current_exe()
                .map_err(|e| crate::EngineError::io("planwright's own program", e))?;
            let cache = state_dir.join("worker");
            let argv = [
                program.as_os_str(),
                "worker".as_ref(),
                "--cache".as_ref(),
                cache.as_os_str(),
            ];
            let argv = argv.iter().map(|a| a.to_string_lossy().into_owned());
            CommandTransport::process(argv.collect(), slots)
        }
        ExecutorSettings::Process { command } => CommandTransport::process(command.clone(), slots),
        ExecutorSettings::Ssh {
            hosts,
            slots_per_host,
            ssh,
            command,
            keepalive,
        } => CommandTransport::ssh(ssh, hosts, command, *slots_per_host, *keepalive),
        ExecutorSettings::Kubernetes(k) => {
            return kubernetes(k, state_dir, slots, cancel).map(Some)
        }
    };
    Ok(Some(Arc::new(transport)))
}
