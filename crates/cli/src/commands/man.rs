//! `planwright man`: the manual page, in roff.

use crate::error::{exit, CliError, CliResult};
use crate::{Cli, Global};
use clap::CommandFactory;

/// Print the manual page (roff), e.g. `planwright man > planwright.1` or
/// `planwright man | man -l -`; `--command NAME` for one command's page.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// One command's page (`planwright-NAME(1)`) instead of the main page.
    #[arg(long, value_name = "NAME")]
    pub command: Option<String>,
}

/// Runs the command.
pub fn run(args: Args, _global: &Global) -> CliResult {
    let mut cli = Cli::command();
    cli.build();
    let page = match &args.command {
        None => cli,
        Some(name) => {
            let names: Vec<String> = cli
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let found = cli.find_subcommand(name).cloned().ok_or_else(|| {
                CliError::usage(format!("no command `{name}`"))
                    .hint(format!("the commands are {}", names.join(", ")))
            })?;
            found.name(format!("planwright-{name}"))
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut roff)
        .map_err(|e| CliError::usage(format!("cannot render the manual page: {e}")))?;
    crate::out!("{}", String::from_utf8_lossy(&roff));
    Ok(exit::OK)
}
