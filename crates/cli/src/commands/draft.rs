//! `planwright draft --from SPEC.md --format FORMAT --agent NAME`: an agent
//! writes a plan, planwright validates it and sends the findings back, until
//! the plan is valid or the rounds run out.

use super::read_file;
use super::run::{agent_from, cancel_on_signals, engine_error, parse_duration};
use crate::error::{exit, CliError, CliResult};
use crate::{render, settings, Global, Output};
use planwright_config::ValidationFlags;
use planwright_engine::{draft, DraftEvent, DraftInput};
use planwright_plan::Format;
use std::path::PathBuf;
use std::time::Duration;

/// Have an agent write a plan from a spec, validated in a loop.
///
/// Each round the agent gets the spec, the format's schema, the
/// repository's file list and the previous round's findings, and writes
/// `plan.json` in a scratch folder. Only a valid plan is written. Exit 0
/// with a valid plan, 1 when the rounds ran out (the last findings are
/// printed), 2 on usage errors.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The spec to plan from (Markdown or text).
    #[arg(long, value_name = "SPEC")]
    pub from: PathBuf,
    /// The format of the plan to write (agb, codeboost, standard_v1, native).
    #[arg(long, value_name = "FORMAT", value_parser = settings::parse_format)]
    pub format: Format,
    /// The agent: a name (`cmd`, ...) or `scripted:DIR` (default: `[agent] name`).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// The `cmd` agent's command (placeholders `{workspace}`, `{prompt_file}`).
    #[arg(long, value_name = "COMMAND")]
    pub agent_cmd: Option<String>,
    /// The model to ask the agent for.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The repository the plan is for: its files are listed for the agent and
    /// the plan's scope operations are checked against them.
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// The revision of `--repo` whose files count.
    #[arg(long, value_name = "REV", default_value = "HEAD", requires = "repo")]
    pub rev: String,
    /// Rounds of write, validate, correct at most.
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// The agent's time limit per round: `90s`, `30m`, `2h`.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "30m")]
    pub agent_timeout: Duration,
    /// Write the plan to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let spec = read_file(&args.from)?;
    let (config, _) = settings::load_config(global, None)?;
    let agent = agent_from(args.agent.as_deref(), args.agent_cmd.as_deref(), &config)?;
    if let Some(problem) = agent.unusable() {
        return Err(CliError::usage(problem));
    }
    let repo_files = match &args.repo {
        Some(repo) => Some(
            planwright_engine::tracked_files(repo, &args.rev).map_err(|e| {
                CliError::usage(format!(
                    "cannot list the files of `{}` at `{}`: {e}",
                    repo.display(),
                    args.rev
                ))
                .hint("`--repo` must be a git repository and `--rev` a revision in it")
            })?,
        ),
        None => None,
    };
    let flags = ValidationFlags {
        format: Some(args.format),
        ..ValidationFlags::default()
    };
    let mut options = settings::options(flags, &config);
    options.repo_files = repo_files
        .as_ref()
        .map(|f| std::sync::Arc::new(f.iter().cloned().collect()));
    let scratch = tempfile::Builder::new()
        .prefix("planwright-draft-")
        .tempdir()
        .map_err(|e| CliError::io("a temporary folder", &e))?;
    let input = DraftInput {
        spec,
        format: args.format,
        options,
        repo_files,
        rounds: args.rounds,
        dir: scratch.path().to_path_buf(),
        timeout: Some(args.agent_timeout),
        model: args.model.clone(),
    };
    let human = global.output == Output::Human && !global.quiet;
    let mut progress = |e: DraftEvent| match e {
        DraftEvent::Asked { round } if human => eprintln!("round {round}: asking the agent"),
        DraftEvent::Checked { round, errors } if human => match errors {
            0 => eprintln!("round {round}: the plan is valid"),
            n => eprintln!("round {round}: {}", render::count(n, "error")),
        },
        _ => {}
    };
    let cancel = cancel_on_signals();
    let drafted = draft(&input, agent.as_ref(), &mut progress, &cancel).map_err(engine_error)?;
    let Some(text) = drafted.plan else {
        // Keep the prompts and agent logs: they are what the user looks at next.
        let kept = scratch.keep();
        match &drafted.report {
            Some(report) => {
                eprint!(
                    "{}",
                    render::file_report(report, global, global.color_stderr())
                );
                for problem in &drafted.repo_problems {
                    eprintln!("error: {problem}");
                }
            }
            None => eprint!("{}", drafted.findings),
        }
        return Err(CliError::with_code(
            exit::INVALID,
            format!(
                "no valid plan after {}",
                render::count(drafted.rounds as usize, "round")
            ),
        )
        .hint(format!(
            "the prompts and agent logs are in `{}`; sharpen the spec or allow more `--rounds`",
            kept.display()
        )));
    };
    match &args.output_file {
        Some(out) => {
            std::fs::write(out, &text)
                .map_err(|e| CliError::write(&out.display().to_string(), &e))?;
            if human {
                eprintln!(
                    "wrote `{}` ({})",
                    out.display(),
                    render::count(drafted.rounds as usize, "round")
                );
            }
        }
        None => crate::out!("{text}"),
    }
    Ok(exit::OK)
}
