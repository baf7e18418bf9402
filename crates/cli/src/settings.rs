//! Finding and reading `planwright.toml`, reading the environment, and
//! wording what planwright-config refuses. Which of a flag, the file and a
//! default wins is planwright-config's (`resolve`), never decided here.

use crate::error::CliError;
use crate::Global;
use planwright_config::resolve::{self, ValidationFlags};
use planwright_config::{Config, ConfigError, ConfigSource, Deprecation, Env, SettingsError};
use planwright_plan::{Format, Options};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The configuration file name looked for next to the plan, then in the
/// current directory, then at the root of the repository the plan runs on.
pub use planwright_config::CONFIG_FILE;

/// Finds and parses the configuration for a plan at `plan_path`: `--config`
/// if given, else `planwright.toml` in the plan's directory, else in the
/// current directory, else the defaults. A section under its former name
/// is read, with a warning.
pub fn load_config(
    global: &Global,
    plan_path: Option<&Path>,
) -> Result<(Config, Option<PathBuf>), CliError> {
    for path in candidates(global, plan_path) {
        if let Some(text) = read_candidate(global, &path)? {
            let config = parse(global, &path.display().to_string(), &text)?;
            return Ok((config, Some(path)));
        }
    }
    Ok((Config::default(), None))
}

/// [`load_config`] for a run on the repository in `repo_dir` from the
/// branch `base`: the search goes on to `planwright.toml` at the
/// repository's root, which is read from the base commit wherever the
/// search meets it (beside a plan at the root, in the current directory
/// at the root, or last), never from the working tree.
pub fn load_run_config(
    global: &Global,
    plan_path: &Path,
    repo_dir: &Path,
    base: Option<&str>,
) -> Result<(Config, Option<ConfigSource>), CliError> {
    // A repository that cannot be read, or no branch to read it on, is
    // preflight's to report.
    let root = base.and_then(|b| planwright_engine::root_config(repo_dir, b).ok());
    let base = base.unwrap_or_default();
    let real = |p: &Path| p.canonicalize().ok();
    let root_real = root.as_ref().and_then(|r| real(&r.in_tree));
    let is_root = |p: &Path| root_real.is_some() && real(p) == root_real;
    for path in candidates(global, Some(plan_path)) {
        if global.config.is_none() && is_root(&path) {
            break;
        }
        if let Some(text) = read_candidate(global, &path)? {
            let config = parse(global, &path.display().to_string(), &text)?;
            return Ok((config, Some(ConfigSource::File(path))));
        }
    }
    let Some(root) = root else {
        return Ok((Config::default(), None));
    };
    match root.at_base {
        Some((source, text)) => {
            let shown = format!("{CONFIG_FILE} of branch `{base}`");
            let config = parse(global, &shown, &text)?;
            Ok((config, Some(source)))
        }
        None => {
            if root.in_tree.is_file() {
                warn_once(global, format!(
                    "`{}` is not in the base branch `{base}`, so it is not read (a run reads the repository's `{CONFIG_FILE}` from the base commit); commit it to `{base}` to use it",
                    root.in_tree.display()
                ));
            }
            Ok((Config::default(), None))
        }
    }
}

/// `--config`, else the file beside the plan, then the current directory's.
fn candidates(global: &Global, plan_path: Option<&Path>) -> Vec<PathBuf> {
    if let Some(p) = &global.config {
        return vec![p.clone()];
    }
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

/// The text of a candidate, or `None` when a searched-for one is absent
/// (`--config` must exist).
fn read_candidate(global: &Global, path: &Path) -> Result<Option<String>, CliError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && global.config.is_none() => Ok(None),
        Err(e) => Err(CliError::io(&path.display().to_string(), &e)),
    }
}

/// Fails when the file at `path` is not a valid configuration.
pub fn check_config(path: &Path) -> Result<(), CliError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| CliError::io(&path.display().to_string(), &e))?;
    let shown = path.display().to_string();
    Config::parse(&text).map_err(|e| config_error(&shown, &e))?;
    Ok(())
}

/// Parses the configuration `shown` names; a section under its former
/// name is read, with a warning.
fn parse(global: &Global, shown: &str, text: &str) -> Result<Config, CliError> {
    let parsed = Config::parse(text).map_err(|e| config_error(shown, &e))?;
    for d in &parsed.deprecations {
        warn_once(global, deprecated(shown, d));
    }
    Ok(parsed.config)
}

fn config_error(shown: &str, e: &ConfigError) -> CliError {
    CliError::usage(format!(
        "invalid configuration `{}`: {}",
        shown,
        e.to_string().trim_end()
    ))
    .hint("see docs/configuration.md for every key")
}

fn deprecated(shown: &str, d: &Deprecation) -> String {
    format!(
        "`[{}]` in `{}` (line {}) is deprecated; rename it to `[{}]` (its keys stay the same)",
        d.old, shown, d.line, d.new
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
        cache_home: std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        agb_strict_gates: std::env::var("AGB_STRICT_GATES").ok(),
        cores: std::thread::available_parallelism().ok().map(|n| n.get()),
        // Only `deliver` reads the forge's token (`forge_env`).
        tokens: Default::default(),
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
        SettingsError::Executor(_) => {
            CliError::usage(e.to_string()).hint("see docs/scaling.md")
        }
        SettingsError::BadBase { .. } => CliError::usage(e.to_string())
            .hint("name an existing branch, such as the one `git branch --show-current` prints"),
        SettingsError::Forge(_) => CliError::usage(e.to_string()).hint("see docs/forge.md"),
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
