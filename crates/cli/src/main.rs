//! planwright: validate, convert and run structured plans for AI coding agents.
//!
//! This crate only parses arguments and prints; the work happens in
//! `planwright-plan` and `planwright-engine`.

mod commands;
mod error;
mod progress;
mod render;
mod settings;

use clap::{Parser, Subcommand, ValueEnum};
use error::{exit, CliError};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Validate, convert and run structured plans for AI coding agents.
#[derive(Parser, Debug)]
#[command(name = "planwright", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Options every command takes.
#[derive(clap::Args, Debug, Clone)]
pub struct Global {
    /// Output for people (`human`) or programs (`json`).
    #[arg(long, global = true, value_enum, default_value_t = Output::Human)]
    pub output: Output,
    /// The configuration file (default: `planwright.toml` beside the plan, for commands that read one, else in the current directory).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl Global {
    /// Colour only for a terminal, and never when `NO_COLOR` is set.
    pub fn color(&self) -> bool {
        std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
    }
}

/// Output style.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Text for people.
    Human,
    /// JSON for programs.
    Json,
}

#[derive(Subcommand, Debug)]
enum Command {
    Validate(commands::validate::Args),
    Convert(commands::convert::Args),
    Schema(commands::schema::Args),
    Sweep(commands::sweep::Args),
    Show(commands::show::Args),
    Graph(commands::graph::Args),
    Preflight(commands::preflight::Args),
    Run(commands::run::Args),
    Status(commands::status::Args),
    Report(commands::report::Args),
    Watch(commands::watch::Args),
    Serve(commands::serve::Args),
    Demo(commands::demo::Args),
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let result = match cli.command {
        Command::Validate(args) => commands::validate::run(args, &cli.global),
        Command::Convert(args) => commands::convert::run(args, &cli.global),
        Command::Schema(args) => commands::schema::run(args, &cli.global),
        Command::Sweep(args) => commands::sweep::run(args, &cli.global),
        Command::Show(args) => commands::show::run(args, &cli.global),
        Command::Graph(args) => commands::graph::run(args, &cli.global),
        Command::Preflight(args) => commands::preflight::run(args, &cli.global),
        Command::Run(args) => commands::run::run(args, &cli.global),
        Command::Status(args) => commands::status::run(args, &cli.global),
        Command::Report(args) => commands::report::run(args, &cli.global),
        Command::Watch(args) => commands::watch::run(args, &cli.global),
        Command::Serve(args) => commands::serve::run(args, &cli.global),
        Command::Demo(args) => commands::demo::run(args, &cli.global),
    };
    let code = match result {
        Ok(code) => code,
        Err(e) => report_error(&e, &cli.global),
    };
    std::process::exit(code);
}

fn report_error(e: &CliError, global: &Global) -> i32 {
    if global.output == Output::Json && !e.printed_json {
        let json = serde_json::json!({"error": e.message, "hint": e.hint, "exit_code": e.code});
        println!("{json}");
    } else {
        eprintln!("{e}");
    }
    e.code
}
