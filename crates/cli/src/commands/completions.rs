//! `planwright completions SHELL`: a completion script for a shell.

use crate::error::{exit, CliResult};
use crate::{Cli, Global};
use clap::CommandFactory;
use clap_complete::Shell;

/// Print a shell completion script, e.g. `planwright completions bash >
/// ~/.local/share/bash-completion/completions/planwright` (see README).
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Runs the command.
pub(crate) fn run(args: Args, _global: &Global) -> CliResult {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "planwright", &mut script);
    crate::out!("{}", String::from_utf8_lossy(&script));
    Ok(exit::OK)
}
