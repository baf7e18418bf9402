//! planwright: validate, convert and run structured plans for AI coding agents.
//!
//! This crate only parses arguments and prints; the work happens in
//! `planwright-plan`, `planwright-engine` and (reading runs) `planwright-view`.

mod commands;
mod deprecated;
mod error;
mod examples;
mod out;
mod progress;
mod render;
mod sarif;
mod settings;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use error::{exit, CliError, CliResult};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Validate, convert and run structured plans for AI coding agents.
#[derive(Parser, Debug)]
#[command(name = "planwright", version = env!("PLANWRIGHT_VERSION"), about, long_about = None, propagate_version = true)]
pub struct Cli {
    // Under their own heading, so a command's help lists its own options first.
    #[command(flatten, next_help_heading = "Global options")]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Options every command takes (see `docs/cli.md`).
#[derive(clap::Args, Debug, Clone)]
pub struct Global {
    /// How results are printed: `human` for people, `json` for programs, `sarif` (validate only) for code scanning, `json-lines` (validate only) one object per file as each is checked.
    #[arg(long, global = true, hide_short_help = true, value_enum, default_value_t = Output::Human, value_name = "STYLE")]
    pub output: Output,
    /// The configuration file (default: `planwright.toml` beside the plan, for commands that read one, else in the current directory, else at the root of the repository the plan runs on, as the base commit holds it); it must exist.
    #[arg(long, global = true, hide_short_help = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print only errors and the command's result: no warnings, progress or summaries.
    #[arg(
        short,
        long,
        global = true,
        hide_short_help = true,
        conflicts_with = "verbose"
    )]
    pub quiet: bool,
    /// Print more: which configuration and plan format were used, every run phase, whole failure evidence.
    #[arg(short, long, global = true, hide_short_help = true)]
    pub verbose: bool,
    /// When to use colour: `auto` (a terminal, unless `NO_COLOR` is set or `CLICOLOR_FORCE` forces it), `always`, `never`.
    #[arg(long, global = true, hide_short_help = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,
}

impl Global {
    /// Colour on standard output.
    pub fn color(&self) -> bool {
        self.color_when(std::io::stdout().is_terminal())
    }

    /// Colour on standard error.
    pub fn color_stderr(&self) -> bool {
        self.color_when(std::io::stderr().is_terminal())
    }

    /// `--color`, then `NO_COLOR` (any non-empty value turns colour off),
    /// then `CLICOLOR_FORCE` (any value but `0` turns it on), then whether
    /// the stream is a terminal: the order of no-color.org and bixense.com/clicolors.
    fn color_when(&self, terminal: bool) -> bool {
        let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        match self.color {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto if set("NO_COLOR").is_some() => false,
            ColorWhen::Auto if set("CLICOLOR_FORCE").is_some_and(|v| v != "0") => true,
            ColorWhen::Auto => terminal,
        }
    }

    /// A `note:` line on stderr, with `--verbose` only.
    pub fn note(&self, message: impl std::fmt::Display) {
        if self.verbose {
            eprintln!("note: {message}");
        }
    }

    /// A `warning:` line on stderr, unless `--quiet`.
    pub fn warn(&self, message: impl std::fmt::Display) {
        if !self.quiet {
            eprintln!("warning: {message}");
        }
    }

    /// Fails unless `--output` is human or JSON: `sarif` and `json-lines`
    /// are for `validate`.
    pub fn human_or_json(&self, command: &str) -> Result<(), CliError> {
        let name = match self.output {
            Output::Sarif => "sarif",
            Output::JsonLines => "json-lines",
            Output::Human | Output::Json => return Ok(()),
        };
        Err(CliError::usage(format!(
            "`--output {name}` applies to `validate` only, not `{command}`"
        ))
        .hint("use `--output human` or `--output json`"))
    }
}

/// Output style.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Text for people.
    Human,
    /// JSON for programs.
    Json,
    /// SARIF 2.1.0 for code scanning (`validate` only).
    Sarif,
    /// JSON lines (`validate` only): one object per file, printed as soon
    /// as that file is checked.
    JsonLines,
}

/// When to use colour.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set; `CLICOLOR_FORCE` forces it.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

#[derive(Subcommand, Debug)]
enum Command {
    Init(commands::init::Args),
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
    Deliver(commands::deliver::Args),
    Respond(commands::respond::Args),
    Import(commands::import::Args),
    Watch(commands::watch::Args),
    Serve(commands::serve::Args),
    Demo(commands::demo::Args),
    Replay(commands::replay::Args),
    Completions(commands::completions::Args),
    Man(commands::man::Args),
    Draft(commands::draft::Args),
    Worker(commands::worker::Args),
}

/// The flags `run -h` shows: those people use first. `--help` shows all.
const RUN_SHORT: [&str; 10] = [
    "repo",
    "agent",
    "agent_cmd",
    "gate",
    "base",
    "jobs",
    "strikes",
    "dry_run",
    "rerun",
    "continue_run",
];

/// The command line, with `run -h` cut to [`RUN_SHORT`] (and the plan)
/// and a pointer to `--help`, and every command's examples; every `-h`
/// leaves out the global flags.
fn command() -> clap::Command {
    examples::add(Cli::command()).mut_subcommand("run", |run| {
        let hidden: Vec<String> = (run.get_arguments())
            .filter(|a| !a.is_positional() && !a.is_global_set())
            .map(|a| a.get_id().to_string())
            .filter(|id| !RUN_SHORT.contains(&id.as_str()) && id != "help")
            .collect();
        let run = hidden
            .iter()
            .fold(run, |run, id| run.mut_arg(id, |a| a.hide_short_help(true)));
        run.after_help("more: `planwright run --help` lists every flag, with examples")
    })
}

fn main() {
    // Before any thread or child: nothing planwright inherited (a make
    // jobserver's pipe, `exec 9>>log` in a wrapper) reaches an agent, a
    // gate or a worker.
    planwright_engine::process::seal_inherited();
    planwright_plan::flag::set_spelling(error::flag);
    // Workers and coordinators of different builds refuse each other.
    planwright_engine::remote::set_version(env!("PLANWRIGHT_VERSION"));
    let args = deprecated::rewrite(std::env::args_os().collect());
    let parsed = (command().try_get_matches_from(&args.args))
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
            // `--help | head` must not panic either.
            let _ = e.print();
            std::process::exit(code);
        }
    };
    for warning in &args.warnings {
        cli.global.warn(warning);
    }
    let result = config_exists(&cli.global).and_then(|()| dispatch(cli.command, &cli.global));
    let code = match result {
        Ok(code) => code,
        Err(e) => report_error(&e, &cli.global),
    };
    std::process::exit(code);
}

/// `--config` naming a missing or invalid file is an error (exit 2) for
/// every command, also those that read no configuration, so a typo is
/// never silently ignored.
fn config_exists(global: &Global) -> Result<(), CliError> {
    match &global.config {
        Some(path) if !path.is_file() => Err(CliError::usage(format!(
            "`--config {}`: no such file",
            path.display()
        ))
        .hint("name an existing planwright.toml, or leave out `--config`")),
        Some(path) => settings::check_config(path),
        None => Ok(()),
    }
}

fn dispatch(command: Command, global: &Global) -> CliResult {
    if !matches!(command, Command::Validate(_)) {
        global.human_or_json(command_name(&command))?;
    }
    match command {
        Command::Init(args) => commands::init::run(args, global),
        Command::Validate(args) => commands::validate::run(args, global),
        Command::Convert(args) => commands::convert::run(args, global),
        Command::Schema(args) => commands::schema::run(args, global),
        Command::Sweep(args) => commands::sweep::run(args, global),
        Command::Show(args) => commands::show::run(args, global),
        Command::Graph(args) => commands::graph::run(args, global),
        Command::Preflight(args) => commands::preflight::run(args, global),
        Command::Run(args) => commands::run::run(args, global),
        Command::Status(args) => commands::status::run(args, global),
        Command::Report(args) => commands::report::run(args, global),
        Command::Deliver(args) => commands::deliver::run(args, global),
        Command::Respond(args) => commands::respond::run(args, global),
        Command::Import(args) => commands::import::run(args, global),
        Command::Demo(args) => commands::demo::run(args, global),
        Command::Replay(args) => commands::replay::run(args, global),
        Command::Completions(args) => commands::completions::run(args, global),
        Command::Man(args) => commands::man::run(args, global),
        Command::Draft(args) => commands::draft::run(args, global),
        Command::Watch(args) => commands::watch::run(args, global),
        Command::Serve(args) => commands::serve::run(args, global),
        Command::Worker(args) => commands::worker::run(args, global),
    }
}

fn command_name(command: &Command) -> &'static str {
    match command {
        Command::Init(_) => "init",
        Command::Validate(_) => "validate",
        Command::Convert(_) => "convert",
        Command::Schema(_) => "schema",
        Command::Sweep(_) => "sweep",
        Command::Show(_) => "show",
        Command::Graph(_) => "graph",
        Command::Preflight(_) => "preflight",
        Command::Run(_) => "run",
        Command::Status(_) => "status",
        Command::Report(_) => "report",
        Command::Deliver(_) => "deliver",
        Command::Respond(_) => "respond",
        Command::Import(_) => "import",
        Command::Demo(_) => "demo",
        Command::Replay(_) => "replay",
        Command::Completions(_) => "completions",
        Command::Man(_) => "man",
        Command::Draft(_) => "draft",
        Command::Watch(_) => "watch",
        Command::Serve(_) => "serve",
        Command::Worker(_) => "worker",
    }
}

fn report_error(e: &CliError, global: &Global) -> i32 {
    if global.output == Output::Json && !e.printed_json {
        let json = serde_json::json!({"error": e.message, "hint": e.hint, "exit_code": e.code});
        crate::outln!("{json}");
    } else {
        eprintln!("{}", e.render(global.color_stderr()));
    }
    e.code
}
