//! What `status`, `report --to html`, `watch` and `serve` share: the
//! run's view, loaded from its event log (see `planwright_view`).

use super::run::engine_error;
use crate::error::CliError;
use planwright_engine::Repo;
use planwright_view::{html_page, HtmlOptions, RunFiles, RunView};
use std::path::{Component, Path, PathBuf};

/// The run a command looks at: the flags `status`, `report`, `watch` and
/// `serve` share.
#[derive(clap::Args, Debug)]
pub(crate) struct RunArgs {
    /// The target git repository.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// The run (default: the newest).
    #[arg(long = "run", value_name = "ID")]
    pub id: Option<String>,
}

/// The repository of `--repo`. The engine's hint when there is none (make
/// one) is for `run`; a command that reads a run needs the one it ran in.
pub(crate) fn open_repo(dir: &Path) -> Result<Repo, CliError> {
    Repo::open(dir).map_err(|e| match e {
        planwright_engine::EngineError::Repo { message, .. } => {
            CliError::usage(message).hint("pass `--repo` the repository the run ran in")
        }
        e => engine_error(e),
    })
}

/// The error for a repository without the asked run.
pub(crate) fn no_run(repo: &Repo, run: Option<&str>) -> CliError {
    let root = repo.root().display();
    match run {
        Some(r) => CliError::usage(format!("no run `{r}` in `{root}`")).hint(format!(
            "omit `--run` for the newest run; the ids are the folders of `{root}/.planwright/runs`"
        )),
        None => CliError::usage(format!("no run in `{root}`"))
            .hint("start one with `planwright run PLAN --repo DIR`"),
    }
}

/// The view of the chosen run with its whole event log folded.
pub(crate) fn load_view(repo: &Path, run: Option<&str>) -> Result<(RunView, RunFiles), CliError> {
    let repo = open_repo(repo)?;
    planwright_view::load_view(&repo, run)
        .map_err(engine_error)?
        .ok_or_else(|| no_run(&repo, run))
}

/// The view of the chosen run before its event log is read (for followers).
pub(crate) fn open_view(repo: &Path, run: Option<&str>) -> Result<(RunView, RunFiles), CliError> {
    let repo = open_repo(repo)?;
    planwright_view::open_view(&repo, run)
        .map_err(engine_error)?
        .ok_or_else(|| no_run(&repo, run))
}

/// The HTML report, its log links relative to the folder of `out` (the
/// current directory, where `> report.html` puts the file, without one).
pub(crate) fn html_report(
    repo: &Path,
    run: Option<&str>,
    out: Option<&Path>,
) -> Result<String, CliError> {
    let (view, files) = load_view(repo, run)?;
    let here = std::env::current_dir().map_err(|e| CliError::io(".", &e))?;
    let folder = out
        .and_then(Path::parent)
        .map_or_else(|| here.clone(), |p| here.join(p));
    let prefix = relative(&folder, &files.dir);
    let opts = HtmlOptions {
        run_dir: Some(files.dir.clone()),
        log_prefix: format!("{}/", prefix.display()),
        ..Default::default()
    };
    Ok(html_page(&view, &opts))
}

/// `target` as seen from the folder `from` (both made absolute first).
pub(crate) fn relative(from: &Path, target: &Path) -> PathBuf {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (from, target) = (abs(from), abs(target));
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = target.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::relative;
    use std::path::Path;

    #[test]
    fn relative_paths() {
        let r = |a: &str, b: &str| relative(Path::new(a), Path::new(b)).display().to_string();
        assert_eq!(
            r("/nonexistent/x", "/nonexistent/x/.planwright/runs/r"),
            ".planwright/runs/r"
        );
        assert_eq!(r("/nonexistent/x/y", "/nonexistent/z/r"), "../../z/r");
        assert_eq!(r("/nonexistent/x", "/nonexistent/x"), ".");
    }
}
