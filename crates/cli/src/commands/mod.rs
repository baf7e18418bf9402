//! One module per command, each with its clap `Args` and one `run` function.

pub(crate) mod completions;
pub(crate) mod convert;
pub(crate) mod deliver;
pub(crate) mod demo;
pub(crate) mod draft;
pub(crate) mod graph;
pub(crate) mod import;
pub(crate) mod init;
pub(crate) mod man;
pub(crate) mod observe;
pub(crate) mod preflight;
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod respond;
pub(crate) mod run;
pub(crate) mod schema;
pub(crate) mod serve;
pub(crate) mod show;
pub(crate) mod status;
pub(crate) mod sweep;
pub(crate) mod validate;
pub(crate) mod watch;
pub(crate) mod worker;

use crate::error::{exit, CliError};
use crate::settings::{self, CONFIG_FILE};
use crate::{render, Global, Output};
use planwright_config::{Config, ConfigSource, ValidationFlags};
use planwright_plan::doc::Syntax;
use planwright_plan::report::FileReport;
use planwright_plan::{validate_text, Format, Plan};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How a command that reads one plan reads it.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct PlanArgs {
    /// The plan file: JSON, YAML when the name ends in `.yaml` or `.yml`, a Spec Kit tasks.md when it ends in `.md`; `-` reads standard input.
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// Flags that change how a plan is read.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct ReadArgs {
    /// Read the plan as this format instead of detecting it (agb, codeboost, standard_v1, native, taskmaster, autoclaude, speckit).
    #[arg(long, value_name = "FORMAT", value_parser = settings::parse_format)]
    pub format: Option<Format>,
    /// The syntax of the plan text, `json` or `yaml` (default: by the file name's extension; for `-`, YAML unless the text starts with `{`).
    #[arg(long, value_enum, value_name = "SYNTAX")]
    pub input_format: Option<InputFormat>,
    /// agb: allow gate commands other than `npm test` / `npm run <script>` (also AGB_STRICT_GATES=0).
    #[arg(long)]
    pub no_strict_gates: bool,
    /// codeboost: the issue the plan must be for.
    #[arg(long, value_name = "N")]
    pub issue: Option<u64>,
    /// taskmaster: the tag of a tagged tasks.json to read (default: `master`, else the first tag).
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
    /// standard_v1: coerce a bare string into its object where the schema allows it (a warning each).
    #[arg(long)]
    pub coerce: bool,
    /// standard_v1: the implement stage's file cap, for the cap checks (overrides `[standard_v1] max_files_changed`).
    #[arg(long, value_name = "N")]
    pub max_files_changed: Option<u32>,
    /// standard_v1: the planner's prompt rendered a calibration hint, so the plan must carry
    /// `raw_predicted_runtime_minutes` (also `[standard_v1] calibration_hint = true`).
    #[arg(long)]
    pub calibration_hint: bool,
}

impl ReadArgs {
    /// The flags validation resolves with the configuration; taken apart
    /// without `..`, so a new flag must say whether it is one.
    pub(crate) fn validation_flags(&self) -> ValidationFlags {
        let ReadArgs {
            format,
            input_format: _,
            no_strict_gates,
            issue,
            tag,
            coerce,
            max_files_changed,
            calibration_hint,
        } = self;
        ValidationFlags {
            format: *format,
            no_strict_gates: *no_strict_gates,
            issue: *issue,
            coerce: *coerce,
            max_files_changed: *max_files_changed,
            calibration_hint: *calibration_hint,
            tag: tag.clone(),
        }
    }
}

/// The surface syntax of a plan.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputFormat {
    /// JSON (RFC 8259).
    Json,
    /// YAML 1.2, in the JSON data model.
    Yaml,
}

/// The name standard input goes by in messages.
pub(crate) const STDIN_NAME: &str = "<stdin>";

/// `validate`'s repository tree: codeboost plans' file operations are
/// checked against it.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct TreeArgs {
    /// codeboost: check the plan's file operations against this repository's tree.
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// codeboost: the revision of `--repo` whose tree is checked.
    #[arg(long, value_name = "REV", default_value = "HEAD", requires = "repo")]
    pub rev: String,
}

/// Writes a command's document to `path`, or to standard output.
pub(crate) fn write_output(path: Option<&Path>, text: &str) -> Result<(), CliError> {
    match path {
        Some(path) => {
            std::fs::write(path, text).map_err(|e| CliError::write(&path.display().to_string(), &e))
        }
        None => {
            crate::out!("{text}");
            Ok(())
        }
    }
}

/// Whether `path` means standard input.
pub(crate) fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

/// The name of `path` in messages.
pub(crate) fn display_name(path: &Path) -> String {
    if is_stdin(path) {
        STDIN_NAME.to_string()
    } else {
        path.display().to_string()
    }
}

/// Reads a file (`-`: standard input), mapping I/O failures to exit 2.
pub(crate) fn read_file(path: &Path) -> Result<String, CliError> {
    let name = display_name(path);
    let bytes = if is_stdin(path) {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
            .map_err(|e| CliError::io(&name, &e))?;
        bytes
    } else {
        std::fs::read(path).map_err(|e| CliError::io(&name, &e))?
    };
    String::from_utf8(bytes).map_err(|e| {
        CliError::usage(format!(
            "`{name}` is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The syntax to parse a plan in: `--input-format`, else for standard input
/// JSON when the text starts with `{` and YAML otherwise, else None (by the
/// file name).
fn syntax(path: &Path, text: &str, flag: Option<InputFormat>) -> Option<Syntax> {
    match flag {
        Some(InputFormat::Json) => Some(Syntax::Json),
        Some(InputFormat::Yaml) => Some(Syntax::Yaml),
        None if is_stdin(path) && text.trim_start().starts_with('{') => Some(Syntax::Json),
        None if is_stdin(path) => Some(Syntax::Yaml),
        None => None,
    }
}

/// How many overlapping pairs of tickets `--verbose` shows behind the
/// groups: enough to see the shape, few enough to read.
const VERBOSE_OVERLAP_PAIRS: usize = 50;

/// One plan file validated, with the configuration it was validated under.
pub(crate) struct Checked {
    /// What validation says.
    pub report: FileReport,
    /// The configuration in force: the one a run of the plan would read.
    pub config: Config,
    /// Where it was read; `None` for the defaults.
    pub source: Option<ConfigSource>,
}

/// Validates one plan file with the flags and the configuration a run of
/// it would read: `--config`, else `planwright.toml` beside the plan or in
/// the current directory, else the repository root's as the plan's base
/// branch holds it. `repo` is `--repo` and `base` is `--base` where the
/// command has them.
pub(crate) fn check_file(
    path: &Path,
    read: &ReadArgs,
    tree: Option<&TreeArgs>,
    repo: Option<&Path>,
    base: Option<&str>,
    global: &Global,
) -> Result<Checked, CliError> {
    let text = read_file(path)?;
    // Standard input has no folder to find a planwright.toml beside.
    let beside = Some(path).filter(|p| !is_stdin(p));
    let (config, found) = settings::load_config(global, beside)?;
    let mut checked = Checked {
        report: validate_with(path, text, read, tree, &config, global)?,
        config,
        source: found.map(ConfigSource::File),
    };
    // The root's file is found from where the plan runs, which only the
    // plan says; a plan invalid without that file still says where.
    if let Some(target) = checked.report.target() {
        let dir = plan_repo_dir(repo, path, target.repo.as_deref());
        // The base a run would merge into, as far as it is known before
        // the root's file is read (whose own `[run] base` cannot move it).
        let base = (base.map(String::from))
            .or_else(|| checked.config.run.base.clone())
            .or(target.base)
            .or_else(|| planwright_engine::current_branch(&dir));
        let (config, source) = settings::load_run_config(global, path, &dir, base.as_deref())?;
        if source != checked.source {
            // The report holds the text: it moves to the second reading.
            let text = std::mem::take(&mut checked.report.text);
            checked.report = validate_with(path, text, read, tree, &config, global)?;
            checked.config = config;
            checked.source = source;
        }
    }
    global.note(match &checked.source {
        Some(ConfigSource::File(c)) => format!("configuration `{}`", c.display()),
        Some(ConfigSource::Base { commit }) => format!(
            "configuration `{CONFIG_FILE}` of the base commit {}",
            &commit[..commit.len().min(12)]
        ),
        None => "no planwright.toml found; using the defaults".to_string(),
    });
    let report = &checked.report;
    if let Some(format) = report.format {
        let how = if read.format.is_some() {
            "as asked"
        } else {
            "detected"
        };
        global.note(format!(
            "`{}` read in the {format} format ({how})",
            report.file
        ));
    }
    Ok(checked)
}

/// Validates the plan `text` read from `path` under `config`.
fn validate_with(
    path: &Path,
    text: String,
    read: &ReadArgs,
    tree: Option<&TreeArgs>,
    config: &Config,
    global: &Global,
) -> Result<FileReport, CliError> {
    let mut options = settings::options(read.validation_flags(), config);
    options.syntax = syntax(path, &text, read.input_format);
    if let Some((repo, rev)) = tree.and_then(|t| Some((t.repo.as_ref()?, &t.rev))) {
        if !repo.is_dir() {
            return Err(CliError::usage(format!(
                "`--repo {}` is not a directory",
                repo.display()
            )));
        }
        options.repo_files = Some(tree_files(repo, rev)?);
    }
    if global.verbose {
        options.overlap_pairs = VERBOSE_OVERLAP_PAIRS;
    }
    if !is_stdin(path) {
        options.current_tag = taskmaster_current_tag(path);
    }
    Ok(validate_text(&display_name(path), text, &options))
}

/// The tag Taskmaster reads for a tasks.json at `path` when none is named,
/// found as Taskmaster finds it: in the nearest folder above the file that
/// holds `.taskmaster/` (stopping at a `.git`), `state.json`'s
/// `currentTag`, else `config.json`'s `global.defaultTag`. A file that is
/// missing or not JSON is passed over, as Taskmaster passes it over.
fn taskmaster_current_tag(path: &Path) -> Option<planwright_plan::formats::CurrentTag> {
    let absolute = std::path::absolute(path).ok()?;
    for dir in absolute.ancestors().skip(1) {
        let home = dir.join(".taskmaster");
        if home.is_dir() {
            let read = |name: &str, pointer: &str| {
                let file = home.join(name);
                let text = std::fs::read_to_string(&file).ok()?;
                let value: serde_json::Value = serde_json::from_str(&text).ok()?;
                let tag = value.pointer(pointer)?.as_str().filter(|t| !t.is_empty())?;
                let shown = std::env::current_dir()
                    .ok()
                    .and_then(|cwd| file.strip_prefix(cwd).ok().map(Path::to_path_buf))
                    .unwrap_or(file);
                Some(planwright_plan::formats::CurrentTag {
                    tag: tag.to_string(),
                    from: shown.display().to_string(),
                })
            };
            return read("state.json", "/currentTag")
                .or_else(|| read("config.json", "/global/defaultTag"));
        }
        if dir.join(".git").exists() {
            return None;
        }
    }
    None
}

/// The repository a plan runs on: `--repo` if given, else the plan's
/// `repo` (relative to the plan's folder), else the current directory.
pub(crate) fn plan_repo_dir(
    repo: Option<&Path>,
    plan_path: &Path,
    plan_repo: Option<&str>,
) -> PathBuf {
    if let Some(dir) = repo {
        return dir.to_path_buf();
    }
    match plan_repo {
        Some(r) if Path::new(r).is_absolute() => PathBuf::from(r),
        Some(r) => plan_path.parent().unwrap_or(Path::new(".")).join(r),
        None => PathBuf::from("."),
    }
}

/// The trees read so far, by (repository, revision) as given: `validate
/// --repo` of many plans naming one repository lists its tree once, not one
/// `git ls-tree -r` per plan. A failure is not kept (the next plan retries).
type Trees = HashMap<(PathBuf, String), Arc<BTreeSet<String>>>;
static TREES: Mutex<Option<Trees>> = Mutex::new(None);

/// The files of `repo` at `rev`, read once per process.
fn tree_files(repo: &Path, rev: &str) -> Result<Arc<BTreeSet<String>>, CliError> {
    let key = (repo.to_path_buf(), rev.to_string());
    // A poisoned lock only means another thread panicked while reading; the map is still whole.
    let mut trees = TREES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(files) = trees.get_or_insert_with(HashMap::new).get(&key) {
        return Ok(files.clone());
    }
    let files = planwright_engine::tracked_files(repo, rev).map_err(|e| {
        CliError::usage(format!(
            "cannot list the files of `{}` at `{}`: {e}",
            repo.display(),
            rev
        ))
        .hint("`--repo` must be a git repository and `--rev` a revision in it")
    })?;
    let files = Arc::new(files.into_iter().collect::<BTreeSet<String>>());
    trees
        .get_or_insert_with(HashMap::new)
        .insert(key, files.clone());
    Ok(files)
}

/// A valid plan with the configuration its run reads.
pub(crate) struct Loaded {
    /// The plan.
    pub plan: Plan,
    /// What validation said of it (its warnings).
    pub report: FileReport,
    /// The configuration in force (see [`check_file`]).
    pub config: Config,
    /// Where it was read; `None` for the defaults.
    pub source: Option<ConfigSource>,
}

/// Reads a plan that must be valid: an invalid one prints its diagnostics
/// (to stderr for people, stdout for JSON) and ends the command with exit 1.
/// The plan is moved out of the report it comes with. `repo` is `--repo`
/// and `base` is `--base` where the command has them.
pub(crate) fn load_plan(
    args: &PlanArgs,
    repo: Option<&Path>,
    base: Option<&str>,
    global: &Global,
) -> Result<Loaded, CliError> {
    let Checked {
        mut report,
        config,
        source,
    } = check_file(&args.plan, &args.read, None, repo, base, global)?;
    match report.plan.take() {
        Some(plan) => Ok(Loaded {
            plan,
            report,
            config,
            source,
        }),
        None => {
            let error = CliError::with_code(
                exit::INVALID,
                format!("`{}` is not a valid plan", report.file),
            )
            // The diagnostics are printed just before this error.
            .hint(format!(
                "fix what is reported above; `planwright validate {}` checks the file again",
                report.file
            ));
            if global.output == Output::Json {
                crate::outln!(
                    "{}",
                    serde_json::to_string_pretty(&[&report]).expect("reports serialize")
                );
                return Err(error.after_json());
            }
            eprint!(
                "{}",
                render::file_report(&report, global, global.color_stderr())
            );
            Err(error)
        }
    }
}
