//! Old flag spellings, still accepted for one release with a warning: each
//! is rewritten to its new spelling before clap sees the arguments, so the
//! commands know only the new flags (see `docs/cli.md`).

use std::ffi::OsString;

/// The arguments with old spellings replaced, and one warning per replacement.
pub(crate) struct Rewritten {
    /// What clap parses.
    pub args: Vec<OsString>,
    /// What to print on stderr (unless `--quiet`).
    pub warnings: Vec<String>,
}

/// `(command, old flag, new flag)`.
const RENAMED: &[(&str, &str, &str)] = &[
    // `--format` names the plan's format in every other command.
    ("report", "--format", "--to"),
    ("graph", "--as", "--to"),
];

/// Global flags that take a value, so that their value is not taken for the command's name.
const GLOBAL_WITH_VALUE: &[&str] = &["--output", "--config", "--color"];

/// Rewrites `args` (the program name first).
pub(crate) fn rewrite(mut args: Vec<OsString>) -> Rewritten {
    let mut warnings = Vec::new();
    let Some(at) = command_position(&args) else {
        return Rewritten { args, warnings };
    };
    let command = args[at].to_string_lossy().into_owned();
    for arg in args.iter_mut().skip(at + 1) {
        let Some(text) = arg.to_str() else { continue };
        if text == "--" {
            break;
        }
        let (flag, value) = match text.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (text, None),
        };
        let Some((_, old, new)) = RENAMED
            .iter()
            .find(|(c, old, _)| *c == command && *old == flag)
        else {
            continue;
        };
        warnings.push(format!(
            "`{command} {old}` is deprecated and will be removed in the next release; use `{command} {new}`"
        ));
        *arg = match value {
            Some(v) => format!("{new}={v}").into(),
            None => (*new).into(),
        };
    }
    Rewritten { args, warnings }
}

/// Where the command's name is: the first argument that is neither a flag
/// nor the value of a global flag.
fn command_position(args: &[OsString]) -> Option<usize> {
    let mut i = 1;
    while i < args.len() {
        let text = args[i].to_str()?;
        if GLOBAL_WITH_VALUE.contains(&text) {
            i += 2;
        } else if text.starts_with('-') {
            i += 1;
        } else {
            return Some(i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> (Vec<String>, Vec<String>) {
        let args = args.iter().map(OsString::from).collect();
        let r = rewrite(args);
        let args = r
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        (args, r.warnings)
    }

    #[test]
    fn report_format_becomes_to_with_a_warning() {
        let (args, warnings) = run(&["pw", "--output", "json", "report", "--format=html"]);
        assert_eq!(args, ["pw", "--output", "json", "report", "--to=html"]);
        assert_eq!(
            warnings,
            ["`report --format` is deprecated and will be removed in the next release; use `report --to`"]
        );
    }

    #[test]
    fn the_same_flag_of_another_command_is_left_alone() {
        let (args, warnings) = run(&["pw", "validate", "--format", "agb", "report"]);
        assert_eq!(args, ["pw", "validate", "--format", "agb", "report"]);
        assert!(warnings.is_empty());
        let (args, _) = run(&["pw", "graph", "p.json", "--", "--as"]);
        assert_eq!(args[4], "--as");
    }
}
