//! `planwright init`: a commented `planwright.toml` for the project found
//! at the repository's root, and a small native plan to edit.

use crate::error::{exit, CliError, CliResult};
use crate::Global;
use planwright_plan::project;
use std::path::{Path, PathBuf};

/// Write a commented planwright.toml for the project in DIR (its set-up and
/// gates filled in from the files found there) and a small native plan to
/// edit. Refuses to overwrite either.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The repository to set up: its root gets the two files.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// Where to write the plan, relative to DIR.
    #[arg(long, value_name = "FILE", default_value = "plan.json")]
    pub plan: PathBuf,
}

/// What `init` found at the root.
struct Found {
    /// The file that marks the project and its kind (`Cargo.toml`, `Rust`).
    marker: Option<(&'static str, &'static str)>,
    /// Its lock file and the set-up line that installs what it pins.
    lock: Option<(&'static str, String)>,
    /// How its tests run.
    test: Option<Vec<String>>,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let dir = &args.repo;
    if !dir.is_dir() {
        return Err(
            CliError::usage(format!("`--repo {}` is not a directory", dir.display()))
                .hint("pass the repository's folder with `--repo DIR`"),
        );
    }
    let has = |f: &str| dir.join(f).is_file();
    let marker = project::marker(has);
    let lock = project::lock_file(has);
    let test = match marker {
        Some((_, "Python")) => Some(python_tests(dir, lock)),
        _ => project::test_command(has),
    };
    let found = Found {
        marker,
        lock: lock.zip(project::setup_line(has)),
        test,
    };
    let config = dir.join("planwright.toml");
    let plan = dir.join(&args.plan);
    for path in [&config, &plan] {
        if path.exists() {
            return Err(CliError::usage(format!(
                "`{}` exists already; `init` never overwrites a file",
                path.display()
            ))
            .hint("edit it, or move it away and run `planwright init` again"));
        }
    }
    write(&config, &config_text(&found))?;
    if let Some(parent) = plan.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| CliError::write(&parent.display().to_string(), &e))?;
    }
    let base = planwright_engine::current_branch(dir).unwrap_or_else(|| "main".into());
    // A glob matching nothing is a preflight warning unless it creates.
    let op = if dir.join("src").is_dir() {
        "any"
    } else {
        "create"
    };
    write(&plan, &plan_text(&base, found.test.as_deref(), op))?;
    if !global.quiet {
        say(&found, &config, &plan, &next_args(dir, &args.plan));
    }
    Ok(exit::OK)
}

/// Lock files whose `[workspace] setup` installs the project's
/// dependencies into `.venv` at its root (`python3 -m venv .venv` and pip;
/// `uv sync`): its tests run with that interpreter, which sees them.
const INTO_VENV: [&str; 2] = ["requirements.txt", "uv.lock"];

/// How the tests of the Python project at `dir`, whose lock file is
/// `lock`, run: pytest where the project names it, else the standard
/// library's `unittest` (it finds the same `test*.py` files and needs
/// nothing installed: a gate of `pytest` where pytest is not would fail
/// every ticket with "not found"); with the interpreter of the `.venv`
/// the set-up makes, where it makes one (a `pytest` on `PATH` would be
/// another's, or none, and would not see the installed dependencies).
fn python_tests(dir: &Path, lock: Option<&str>) -> Vec<String> {
    let venv = lock.is_some_and(|l| INTO_VENV.contains(&l));
    let argv: &[&str] = match (names_pytest(dir), venv) {
        (true, true) => &[".venv/bin/python", "-m", "pytest"],
        (true, false) => &["pytest"],
        (false, true) => &[".venv/bin/python", "-m", "unittest"],
        (false, false) => &["python3", "-m", "unittest"],
    };
    argv.iter().map(|w| w.to_string()).collect()
}

/// Files at a Python project's root that name its test runner when it is
/// pytest: its configuration and its dependency lists.
const PYTHON_CONFIG: [&str; 5] = [
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "setup.py",
    "Pipfile",
];

/// Whether the Python project at `dir` uses pytest: a `pytest.ini` or
/// `conftest.py` at its root, or `pytest` named in its configuration or a
/// `requirements*.txt` there.
fn names_pytest(dir: &Path) -> bool {
    if ["pytest.ini", "conftest.py"]
        .iter()
        .any(|f| dir.join(f).is_file())
    {
        return true;
    }
    let requirements = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("requirements") && name.ends_with(".txt")
        });
    let files = PYTHON_CONFIG
        .iter()
        .map(|f| dir.join(f))
        .chain(requirements.map(|e| e.path()));
    files
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .any(|text| text.contains("pytest"))
}

fn write(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text).map_err(|e| CliError::write(&path.display().to_string(), &e))
}

/// What was found and written, and what to do next.
fn say(found: &Found, config: &Path, plan: &Path, next: &(String, String)) {
    match found.marker {
        Some((file, kind)) => crate::outln!("found a {kind} project (`{file}`)"),
        None => crate::outln!(
            "found no project file (Cargo.toml, go.mod, package.json, pyproject.toml, ...)"
        ),
    }
    match &found.lock {
        Some((lock, line)) => crate::outln!("found `{lock}`: [workspace] {line}"),
        None => crate::outln!("found no lock file: no [workspace] setup"),
    }
    match &found.test {
        Some(argv) => crate::outln!("gate: `{}`", argv.join(" ")),
        None => crate::outln!("gate: none found; replace the plan's `PROGRAM` placeholder"),
    }
    crate::outln!("wrote `{}` and `{}`", config.display(), plan.display());
    crate::outln!(
        "next: commit `planwright.toml` (a run reads it from the base branch), describe your first ticket in `{}`, then `planwright preflight {1}` and `planwright run {1}`",
        next.0, next.1
    );
}

/// The plan's path from the folder `init` ran in, and the arguments that
/// check and run it from there (`--repo DIR` unless DIR is that folder).
fn next_args(dir: &Path, plan: &Path) -> (String, String) {
    if dir == Path::new(".") {
        let plan = plan.display().to_string();
        return (plan.clone(), plan);
    }
    let plan = dir.join(plan).display().to_string();
    let args = format!("{plan} --repo {}", dir.display());
    (plan, args)
}

/// The commented configuration for what was found.
fn config_text(found: &Found) -> String {
    let kind = match found.marker {
        Some((file, kind)) => format!("a {kind} project (found `{file}`)"),
        None => "a project of no kind planwright knows".to_string(),
    };
    let setup = match &found.lock {
        Some((lock, line)) => format!(
            "# Gates run in a fresh checkout without the project's dependencies;\n\
             # this installs what `{lock}` pins, there and in each agent's workspace.\n\
             {line}\n"
        ),
        None => "# Gates run in a fresh checkout without the project's dependencies:\n\
                 # the command that installs them, if it needs any.\n\
                 # setup = [[\"PROGRAM\", \"ARGUMENT\"]]\n"
            .to_string(),
    };
    let gates = match &found.test {
        Some(argv) => format!(
            "# run = [{}]\n",
            planwright_plan::formats::codeboost::toml_argv(argv)
        ),
        None => "# run = [[\"PROGRAM\", \"ARGUMENT\"]]\n".to_string(),
    };
    format!(
        "# planwright.toml for {kind}, written by `planwright init`.\n\
         # Every key: docs/configuration.md.\n\
         \n\
         [workspace]\n\
         {setup}\
         \n\
         [gates]\n\
         # What must pass on a ticket's change before it merges, for every plan\n\
         # (each an argv, or one line split as a shell would). The plan `init`\n\
         # wrote names its own; a plan of a format without gates (codeboost,\n\
         # Taskmaster, Spec Kit, ...) needs this line.\n\
         {gates}"
    )
}

/// A native plan of one ticket on `base`, gated by `test` (else by a
/// placeholder to replace), to edit (docs/formats/native.md).
fn plan_text(base: &str, test: Option<&[String]>, op: &str) -> String {
    let argv = match test {
        Some(argv) => serde_json::to_string(argv).expect("strings serialize"),
        None => r#"["PROGRAM", "ARGUMENT"]"#.to_string(),
    };
    let base = serde_json::to_string(base).expect("strings serialize");
    (PLAN.replace("BASE", &base).replace("ARGV", &argv)).replace("OP", op)
}

/// [`plan_text`]'s template.
const PLAN: &str = r#"{
  "planwright": 1,
  "source_format": "native",
  "base": BASE,
  "gates": [{"name": "test", "argv": ARGV}],
  "tickets": [
    {
      "id": "first",
      "title": "the first change",
      "body": "Describe the change for the agent: what to do, where, and how to know it is done.",
      "scope": [{"pattern": "src/**", "op": "OP"}]
    }
  ]
}
"#;
