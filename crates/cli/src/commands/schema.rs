//! `planwright schema FORMAT [--reference]` and `planwright schema --diff OLD NEW`:
//! a format's JSON Schema, its Markdown field reference, or the shape delta
//! between two schema files.

use super::read_file;
use crate::error::{exit, CliError, CliResult};
use crate::{settings, Global};
use planwright_plan::{formats, schema_doc, Format};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Print the JSON Schema of a plan format, its field reference, or the
/// shape delta between two schema versions.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The format (codeboost, standard_v1, native; agb has no published schema); not with `--diff`.
    #[arg(value_name = "FORMAT", value_parser = settings::parse_format, required_unless_present = "diff", conflicts_with = "diff")]
    pub format: Option<Format>,
    /// Print the Markdown field reference generated from the schema instead of the schema.
    #[arg(long, conflicts_with = "diff")]
    pub reference: bool,
    /// Print Markdown tables of the shape changes (type, requiredness, enum members, default) from OLD to NEW.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"])]
    pub diff: Option<Vec<PathBuf>>,
}

/// Runs the command.
pub(crate) fn run(args: Args, _global: &Global) -> CliResult {
    if let Some(paths) = &args.diff {
        let (old, new) = (read_schema(&paths[0])?, read_schema(&paths[1])?);
        crate::out!("{}", schema_doc::diff(&old, &new));
        return Ok(exit::OK);
    }
    let format = args
        .format
        .ok_or_else(|| CliError::usage("name a format, or pass `--diff OLD NEW`"))?;
    let schema = formats::schema(format).ok_or_else(|| {
        let have: Vec<&str> = Format::ALL
            .into_iter()
            .filter(|f| formats::schema(*f).is_some())
            .map(Format::name)
            .collect();
        CliError::usage(format!("no JSON Schema for {format} yet"))
            .hint(format!("schemas exist for {}", have.join(", ")))
    })?;
    if args.reference {
        crate::out!("{}", schema_doc::reference(&schema, format.name()));
    } else {
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&schema).expect("schemas serialize")
        );
    }
    Ok(exit::OK)
}

fn read_schema(path: &Path) -> Result<Value, CliError> {
    let text = read_file(path)?;
    serde_json::from_str(&text).map_err(|e| {
        CliError::usage(format!("`{}` is not JSON: {e}", path.display(),))
            .hint("`--diff` compares two JSON Schema files")
    })
}
