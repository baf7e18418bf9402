//! `planwright worker`: runs attempts for a coordinator over standard input
//! and output (docs/scaling.md). A run starts it (`[executor] kind` of
//! `"process"`, `"ssh"` or `"kubernetes"`); people rarely do.

use crate::error::{exit, CliError, CliResult};
use crate::Global;
use planwright_engine::remote::{serve, WorkerOptions};
use planwright_engine::EngineError;
use std::path::PathBuf;

/// Run attempts for a coordinator, speaking the worker protocol on
/// standard input and output (a run with `[executor] kind` of `"process"`,
/// `"ssh"` or `"kubernetes"` starts it; see docs/scaling.md).
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The worker's cache: the object store and the slots' repositories
    /// and workspaces [default: $XDG_CACHE_HOME/planwright/worker, else
    /// ~/.cache/planwright/worker].
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Run agents unconfined when the coordinator has `[sandbox] mode =
    /// "off"` (without it such attempts are refused).
    #[arg(long)]
    pub unsandboxed: bool,
}

/// Runs the command.
pub(crate) fn run(args: Args, _global: &Global) -> CliResult {
    let cache = match args.cache {
        Some(dir) => dir,
        None => default_cache().ok_or_else(|| {
            CliError::usage("neither XDG_CACHE_HOME nor HOME is set").hint("pass `--cache DIR`")
        })?,
    };
    std::fs::create_dir_all(&cache).map_err(|e| {
        CliError::usage(format!(
            "cannot create the cache `{}`: {e}",
            cache.display()
        ))
        .hint("pass a writable `--cache DIR`")
    })?;
    let options = WorkerOptions {
        cache,
        unsandboxed: args.unsandboxed,
    };
    serve(std::io::stdin(), Box::new(std::io::stdout()), &options).map_err(|e| match e {
        EngineError::Wire(_) => crate::commands::run::engine_error(e).hint(
            "`planwright worker` talks to a run on its standard input and output; a run with `[executor] kind` of `\"process\"`, `\"ssh\"` or `\"kubernetes\"` starts it (docs/scaling.md)",
        ),
        e => crate::commands::run::engine_error(e),
    })?;
    Ok(exit::OK)
}

fn default_cache() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty());
    let base = match xdg {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".cache"),
    };
    Some(base.join("planwright").join("worker"))
}
