//! `planwright schema FORMAT`: the JSON Schema of a plan format.

use crate::error::{exit, CliError, CliResult};
use crate::{settings, Global};
use planwright_plan::formats::{codeboost, native};
use planwright_plan::Format;

/// Print the JSON Schema of a plan format.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The format (agb, codeboost, standard_v1, native).
    #[arg(value_name = "FORMAT", value_parser = settings::parse_format)]
    pub format: Format,
}

/// Runs the command.
pub fn run(args: Args, _global: &Global) -> CliResult {
    let schema = match args.format {
        Format::Native => native::schema(),
        Format::Codeboost => codeboost::schema(),
        other => {
            return Err(CliError::usage(format!("no JSON Schema for {other} yet"))
                .hint("try `planwright schema native`"))
        }
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&schema).expect("schemas serialize")
    );
    Ok(exit::OK)
}
