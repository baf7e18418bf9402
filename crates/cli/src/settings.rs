//! Finding and reading `planwright.toml`, reading the environment, and
//! wording what planwright-config refuses. Which of a flag, the file and a
//! default wins is planwright-config's (`resolve`), never decided here.

use crate::error::CliError;
use crate::Global;
use planwright_config::resolve::{self, ValidationFlags};
use planwright_config::{Config, ConfigError, Deprecation, Env, SettingsError};
use planwright_plan::{Format, Options};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The configuration file name looked for next to the plan, then in the
/// current directory.
pub const CONFIG_FILE: &str = "planwright.toml";

/// Finds and parses the configuration for a plan at `plan_path`: `--config`
/// if given, else `planwright.toml` in the plan's directory, else in the
/// current directory, else the defaults. A section under its former name
/// is read, with a warning.
pub fn load_config(
    global: &Global,
    plan_path: Option<&Path>,
) -> Result<(Config, Option<PathBuf>), CliError> {
    let explicit = global.config.as_deref();
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
                let parsed = Config::parse(&text).map_err(|e| config_error(&path, &e))?;
                for d in &parsed.deprecations {
                    warn_once(global, deprecated(&path, d));
                }
                return Ok((parsed.config, Some(path)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && explicit.is_none() => continue,
            Err(e) => return Err(CliError::io(&path.display().to_string(), &e)),
        }
    }
    Ok((Config::default(), None))
}

fn config_error(path: &Path, e: &ConfigError) -> CliError {
    CliError::usage(format!(
        "invalid configuration `{}`: {}",
        path.display(),
        e.to_string().trim_end()
    ))
    .hint("see docs/configuration.md for every key")
}

fn deprecated(path: &Path, d: &Deprecation) -> String {
    format!(
        "`[{}]` in `{}` (line {}) is deprecated; rename it to `[{}]` (its keys stay the same)",
        d.old,
        path.display(),
        d.line,
        d.new
    )
}

/// One command may read the file more than once (the plan's validation,
/// then the run's settings); its warnings are said once.
fn warn_once(global: &Global, message: String) {
    static SAID: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    // A poisoned lock only means another thread panicked while warning; the set is still whole.
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if said.insert(message.clone()) {
        global.warn(message);
    }
}

/// What settings read of this process's environment and machine.
pub fn env() -> Env {
    Env {
        home: std::env::var_os("HOME").map(PathBuf::from),
        agb_strict_gates: std::env::var("AGB_STRICT_GATES").ok(),
        cores: std::thread::available_parallelism().ok().map(|n| n.get()),
    }
}

/// What planwright-config refuses, with what to do about it in this
/// command line's terms.
pub fn settings_error(e: SettingsError) -> CliError {
    match e {
        SettingsError::Unsplittable(gate) => CliError::usage(format!(
            "cannot split `--gate {gate}` into words (unbalanced quote?)"
        )),
        SettingsError::NoAgent => CliError::usage(e.to_string()).hint(
            "pass `--agent cmd --agent-cmd \"PROGRAM ARGS...\"` or `--agent scripted:DIR`, or set `[agent]` in planwright.toml",
        ),
        SettingsError::OutOfRange { .. } => CliError::usage(e.to_string()),
    }
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

/// Validation options: the flags, the environment and `config`.
pub fn options(flags: ValidationFlags, config: &Config) -> Options {
    resolve::validation(flags, config, &env())
}
