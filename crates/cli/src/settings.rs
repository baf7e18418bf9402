//! Turning flags, environment and `planwright.toml` into validator options.

use crate::error::CliError;
use planwright_plan::config::Config;
use planwright_plan::{Format, Options};
use std::path::{Path, PathBuf};

/// The configuration file name looked for next to the plan, then in the
/// current directory.
pub const CONFIG_FILE: &str = "planwright.toml";

/// Finds and parses the configuration for a plan at `plan_path`: `--config`
/// if given, else `planwright.toml` in the plan's directory, else in the
/// current directory, else the defaults.
pub fn load_config(
    explicit: Option<&Path>,
    plan_path: Option<&Path>,
) -> Result<(Config, Option<PathBuf>), CliError> {
    let candidates: Vec<PathBuf> = match explicit {
        Some(p) => vec![p.to_path_buf()],
        None => {
            let beside = plan_path
                .and_then(Path::parent)
                .map(|d| {
                    if d.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        d
                    }
                })
                .map(|d| d.join(CONFIG_FILE));
            beside
                .into_iter()
                .chain([PathBuf::from(CONFIG_FILE)])
                .collect()
        }
    };
    for path in candidates {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let config = Config::parse(&text).map_err(|e| {
                    CliError::usage(format!(
                        "invalid configuration `{}`: {}",
                        path.display(),
                        e.message.trim_end()
                    ))
                    .hint("see docs/configuration.md for every key")
                })?;
                return Ok((config, Some(path)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && explicit.is_none() => continue,
            Err(e) => return Err(CliError::io(&path.display().to_string(), &e)),
        }
    }
    Ok((Config::default(), None))
}

/// Parses `--format`.
pub fn parse_format(name: &str) -> Result<Format, String> {
    Format::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        let mut message = format!(
            "unknown format '{name}' (expected one of {})",
            names.join(", ")
        );
        if matches!(name, "dot" | "mermaid") {
            // `graph --format dot` is what one tries first.
            message.push_str(&format!(
                "; `--format` names the plan's format, the picture language is `graph --to {name}`"
            ));
        }
        message
    })
}

/// Strict agb gates unless `--no-strict-gates` or `AGB_STRICT_GATES=0`.
pub fn strict_gates(no_strict_flag: bool) -> bool {
    !no_strict_flag && std::env::var("AGB_STRICT_GATES").map_or(true, |v| v != "0")
}

/// Options shared by every command that reads a plan.
pub fn options(format: Option<Format>, no_strict_gates: bool, config: Config) -> Options {
    Options {
        format,
        strict_gates: strict_gates(no_strict_gates),
        config,
        ..Options::default()
    }
}
