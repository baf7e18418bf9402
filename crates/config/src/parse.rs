//! Reading the text of a `planwright.toml`: the TOML itself, sections
//! under their former names, and the checks a value needs beyond its type.

use crate::file::{Config, Workspace};
use serde::Deserialize;
use std::borrow::Cow;
use toml::de::{DeTable, Deserializer};
use toml::Spanned;

/// Sections that were renamed: (former name, name). The former name is
/// still read, with a [`Deprecation`]; both at once is an error.
pub const RENAMED: &[(&str, &str)] = &[("worktree", "workspace")];

/// A configuration file, and what in it is spelled the old way.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The configuration.
    pub config: Config,
    /// Sections written under a former name, in the order of [`RENAMED`].
    pub deprecations: Vec<Deprecation>,
}

/// A section written under its former name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecation {
    /// The name as written (`worktree`).
    pub old: &'static str,
    /// The name to write instead (`workspace`).
    pub new: &'static str,
    /// The line (1-based) where the old name is.
    pub line: usize,
}

/// Why a configuration file was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not TOML, or not the schema: the parser's message, which shows the
    /// line and column.
    #[error("{0}")]
    Toml(String),
    /// A path that must name a file of the repository does not.
    #[error(
        "`[{section}] {key}` entry `{path}` {why}: name a file by its path \
         relative to the repository root, such as `.env` or `config/local.toml`"
    )]
    OutsideRepository {
        /// The section as written (`workspace`, or its former name).
        section: &'static str,
        /// The key (`copy`, `setup_inputs`).
        key: &'static str,
        /// The entry.
        path: String,
        /// What is wrong with it ("is absolute").
        why: &'static str,
    },
    /// A section is written under its name and under a former name.
    #[error(
        "`[{new}]` (line {new_line}) and `[{old}]` (line {old_line}), its former name, \
         are one section: keep `[{new}]` only"
    )]
    Renamed {
        /// The former name.
        old: &'static str,
        /// The name.
        new: &'static str,
        /// Where the former name is.
        old_line: usize,
        /// Where the name is.
        new_line: usize,
    },
}

impl Config {
    /// Parses the text of a `planwright.toml`.
    pub fn parse(text: &str) -> Result<Parsed, ConfigError> {
        let toml_error = |mut e: toml::de::Error| {
            e.set_input(Some(text));
            ConfigError::Toml(e.to_string())
        };
        let mut root = DeTable::parse(text).map_err(toml_error)?;
        let mut deprecations = Vec::new();
        for &(old, new) in RENAMED {
            if let Some(d) = rename(root.get_mut(), old, new, text)? {
                deprecations.push(d);
            }
        }
        let config = Config::deserialize(Deserializer::from(root)).map_err(toml_error)?;
        let workspace = deprecations
            .iter()
            .find(|d| d.new == "workspace")
            .map_or("workspace", |d| d.old);
        check_workspace(&config.workspace, workspace)?;
        Ok(Parsed {
            config,
            deprecations,
        })
    }
}

/// Moves top-level `old` to `new`, keeping the spans the parser's messages
/// point into.
fn rename(
    root: &mut DeTable<'_>,
    old: &'static str,
    new: &'static str,
    text: &str,
) -> Result<Option<Deprecation>, ConfigError> {
    let Some((key, value)) = root.remove_entry(old) else {
        return Ok(None);
    };
    let old_line = line_of(text, key.span().start);
    if let Some((existing, _)) = root.get_key_value(new) {
        return Err(ConfigError::Renamed {
            old,
            new,
            old_line,
            new_line: line_of(text, existing.span().start),
        });
    }
    root.insert(Spanned::new(key.span(), Cow::Borrowed(new)), value);
    Ok(Some(Deprecation {
        old,
        new,
        line: old_line,
    }))
}

/// The 1-based line of byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// Rejects a `copy` or `setup_inputs` path that is absolute, empty or
/// climbs with `..`: both name files inside the repository. `section` is
/// the name the file used, so the message quotes what the user wrote.
fn check_workspace(w: &Workspace, section: &'static str) -> Result<(), ConfigError> {
    let keys = [("copy", &w.copy), ("setup_inputs", &w.setup_inputs)];
    for (key, paths) in keys {
        for path in paths.iter() {
            if let Some(why) = outside_repo(path) {
                return Err(ConfigError::OutsideRepository {
                    section,
                    key,
                    path: path.clone(),
                    why,
                });
            }
        }
    }
    Ok(())
}

/// Why `path` does not name a place inside the repository, if it does not.
fn outside_repo(path: &str) -> Option<&'static str> {
    use std::path::{Component, Path};
    if path.trim().is_empty() {
        return Some("is empty");
    }
    let p = Path::new(path);
    if p.is_absolute() || path.starts_with('~') {
        return Some("is absolute");
    }
    if p.components().any(|c| c == Component::ParentDir) {
        return Some("climbs out with `..`");
    }
    if !p.components().any(|c| matches!(c, Component::Normal(_))) {
        return Some("names the repository itself");
    }
    if p.components()
        .any(|c| c.as_os_str() == ".git" || c.as_os_str() == ".planwright")
    {
        return Some("is inside `.git` or `.planwright`");
    }
    None
}
