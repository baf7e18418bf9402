//! The one place where failures become messages and exit codes.

use planwright_plan::Flag;
use std::fmt;

/// Exit codes, the same for every command (see `docs/diagnostics.md`).
pub(crate) mod exit {
    /// Success; warnings allowed.
    pub(crate) const OK: i32 = 0;
    /// The plan is invalid, or a run finished with failed tickets.
    pub(crate) const INVALID: i32 = 1;
    /// Usage or I/O error.
    pub(crate) const USAGE: i32 = 2;
    /// A run stopped because the repository's integrity could not be trusted.
    pub(crate) const INTEGRITY: i32 = 3;
    /// Stopped by Ctrl-C (`respond --watch` between rounds).
    pub(crate) const INTERRUPTED: i32 = 130;
}

/// A failure that ends the command: what happened, how to fix it, the exit code.
#[derive(Debug)]
pub struct CliError {
    /// One sentence, no trailing period.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
    /// Process exit code.
    pub code: i32,
    /// The command already printed its one JSON document on stdout, so with
    /// `--output json` this error goes to stderr as text, not a second document.
    pub printed_json: bool,
}

impl CliError {
    /// A usage or I/O error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            hint: None,
            code: exit::USAGE,
            printed_json: false,
        }
    }

    /// A failure whose exit code is `code`.
    pub fn with_code(code: i32, message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            hint: None,
            code,
            printed_json: false,
        }
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Marks that stdout already holds the command's JSON document.
    pub fn after_json(mut self) -> Self {
        self.printed_json = true;
        self
    }

    /// Reading `path` failed.
    pub fn io(path: &str, e: &std::io::Error) -> Self {
        CliError::usage(format!("cannot read `{path}`: {}", why(e)))
    }

    /// Writing `path` failed.
    pub fn write(path: &str, e: &std::io::Error) -> Self {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "its folder does not exist".to_string(),
            _ => why(e),
        };
        CliError::usage(format!("cannot write `{path}`: {why}"))
    }
}

/// An I/O failure in words, without the OS error number.
fn why(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::IsADirectory => "it is a directory; name a file".to_string(),
        _ => e.to_string(),
    }
}

impl CliError {
    /// The message for a terminal: `error:` and `hint:` in colour when `color`.
    pub fn render(&self, color: bool) -> String {
        if !color {
            return self.to_string();
        }
        let mut out = format!("\x1b[1;31merror\x1b[0m: {}", self.message);
        if let Some(hint) = &self.hint {
            out.push_str(&format!("\n\x1b[1;36mhint\x1b[0m: {hint}"));
        }
        out
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\nhint: {hint}")?;
        }
        Ok(())
    }
}

/// The result of a command: its exit code, or an error to render.
pub(crate) type CliResult = Result<i32, CliError>;

/// How the command line spells each setting the libraries' messages name
/// (they say [`Flag`], never the flag): installed once, at start.
pub(crate) fn flag(f: Flag) -> &'static str {
    match f {
        Flag::Agent => "--agent",
        Flag::Base => "--base",
        Flag::Cache => "--cache",
        Flag::Jobs => "--jobs",
        Flag::Unsandboxed => "--unsandboxed",
        Flag::AgentCmd => "--agent-cmd",
        Flag::Continue => "--continue",
        Flag::AllowConfigChange => "--allow-config-change",
        Flag::Draft => "--draft",
        Flag::AllowRedBase => "--allow-red-base",
        Flag::NoGateProbe => "--no-gate-probe",
        Flag::CalibrationHint => "--calibration-hint",
        Flag::Coerce => "--coerce",
        Flag::Format => "--format",
        Flag::Commits => "--commits",
        Flag::Gate => "--gate",
        Flag::Issue => "--issue",
        Flag::MaxFilesChanged => "--max-files-changed",
        Flag::NoStrictGates => "--no-strict-gates",
        Flag::Output => "--output",
        Flag::Repo => "--repo",
        Flag::Rerun => "--rerun",
        Flag::RerunChanged => "--rerun-changed",
        Flag::Tag => "--tag",
        Flag::To => "--to",
        Flag::Verbose => "--verbose",
    }
}

#[cfg(test)]
mod flag_tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_flag_a_message_names_is_a_flag_of_some_command() {
        let cli = crate::Cli::command();
        let longs: Vec<String> = cli
            .get_arguments()
            .chain(cli.get_subcommands().flat_map(|c| c.get_arguments()))
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        for f in Flag::ALL {
            assert!(longs.iter().any(|l| l == flag(f)), "{f:?}: {}", flag(f));
        }
    }
}
