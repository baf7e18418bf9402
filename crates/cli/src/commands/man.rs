//! `planwright man`: the manual pages, in roff.

use crate::error::{exit, CliError, CliResult};
use crate::Global;
use std::path::{Path, PathBuf};

/// Print the manual page (roff), e.g. `planwright man > planwright.1` or
/// `planwright man | man -l -`; `--command NAME` for one command's page;
/// `--all DIR` writes `planwright.1` and one `planwright-NAME.1` per command into DIR.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// One command's page (`planwright-NAME(1)`) instead of the main page.
    #[arg(long, value_name = "NAME", conflicts_with = "all")]
    pub command: Option<String>,
    /// Write every page into this folder (created if missing): `planwright.1` and `planwright-NAME.1` for each command.
    #[arg(long, value_name = "DIR")]
    pub all: Option<PathBuf>,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let mut cli = crate::command();
    cli.build();
    if let Some(dir) = &args.all {
        return write_all(cli, dir, global);
    }
    let page = match &args.command {
        None => cli,
        Some(name) => subcommand_page(&cli, name)?,
    };
    crate::out!("{}", String::from_utf8_lossy(&render(page)?));
    Ok(exit::OK)
}

/// The page `planwright-NAME(1)` of the command `name`.
fn subcommand_page(cli: &clap::Command, name: &str) -> Result<clap::Command, CliError> {
    let found = cli.find_subcommand(name).cloned().ok_or_else(|| {
        let names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
        CliError::usage(format!("no command `{name}`"))
            .hint(format!("the commands are {}", names.join(", ")))
    })?;
    Ok(found.name(format!("planwright-{name}")))
}

/// Writes the main page and one page per command into `dir`.
fn write_all(cli: clap::Command, dir: &Path, global: &Global) -> CliResult {
    std::fs::create_dir_all(dir).map_err(|e| CliError::write(&dir.display().to_string(), &e))?;
    let names: Vec<String> = cli
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|n| n != "help")
        .collect();
    let mut pages = vec![("planwright".to_string(), cli.clone())];
    for name in &names {
        pages.push((format!("planwright-{name}"), subcommand_page(&cli, name)?));
    }
    for (name, page) in pages {
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, render(page)?)
            .map_err(|e| CliError::write(&path.display().to_string(), &e))?;
        global.note(format!("wrote `{}`", path.display()));
    }
    Ok(exit::OK)
}

fn render(page: clap::Command) -> Result<Vec<u8>, CliError> {
    let mut roff = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut roff)
        .map_err(|e| CliError::usage(format!("cannot render the manual page: {e}")))?;
    Ok(roff)
}
