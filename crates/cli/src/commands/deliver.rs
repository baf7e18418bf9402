//! `planwright deliver --repo DIR`: push what a run merged and open or
//! update its pull request(s). The work is the engine's
//! (`planwright_engine::deliver`) and the body the view's; this reads the
//! run, the plan and `[forge]`, and prints.

use super::observe::RunArgs;
use super::{load_plan, Loaded, PlanArgs, ReadArgs};
use crate::error::{exit, CliError, CliResult};
use crate::{settings, Global, Output};
use planwright_config::forge::{self, ForgeSettings};
use planwright_config::{Config, Secret};
use planwright_engine::deliver::{self, DeliverError, Delivery, PullText, Report};
use planwright_engine::Repo;
use planwright_plan::Plan;
use planwright_view::RunReport;
use std::path::{Path, PathBuf};

/// Push what a run merged to planwright's own branch(es) on the forge's
/// remote and open or update its pull request(s) on GitHub, GitLab or
/// Forgejo/Gitea (`[forge]` in planwright.toml; docs/forge.md).
///
/// Only merges the run made and verified are pushed, with
/// `--force-with-lease` against what planwright last pushed there, never to
/// the base branch. Running it again pushes new merges and updates the
/// pull request; it never opens a second one for the same branch. Once the
/// pull request has merged, a partial standard_v1 delivery's
/// `remaining_scope` is posted on its issue, once.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub run: RunArgs,
    /// Print what would be pushed and sent (branches, commits, titles and
    /// bodies), and push or send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Open or keep the pull request(s) as drafts (also `[forge] draft`;
    /// a run with a ticket that did not merge is always delivered as a draft).
    #[arg(long)]
    pub draft: bool,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let repo = super::observe::open_repo(&args.run.repo)?;
    let report = super::status::load(&args.run.repo, args.run.id.as_deref())?;
    let Loaded { plan, config, .. } = run_plan(&report, &repo, global)?;
    let options = Options {
        dry_run: args.dry_run,
        draft: args.draft,
    };
    let delivered = deliver_run(&repo, &report, &plan, &config, options)?;
    print(&delivered, global)?;
    Ok(exit::OK)
}

/// `deliver`'s own flags, for `run --deliver` too.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    /// `--dry-run`.
    pub dry_run: bool,
    /// `--draft`.
    pub draft: bool,
}

/// What a delivery did, or would do.
pub(crate) struct Delivered {
    delivery: Delivery,
    texts: Vec<PullText>,
    report: Option<Report>,
}

/// The plan run `report` was started with, read again from where it was
/// given (relative paths from the current folder, else the repository's).
pub(crate) fn run_plan(
    report: &RunReport,
    repo: &Repo,
    global: &Global,
) -> Result<Loaded, CliError> {
    let given = PathBuf::from(&report.run.plan_path);
    let path = [given.clone(), repo.root().join(&given)]
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| {
            CliError::usage(format!(
                "cannot read the plan `{}` that run `{}` was started with",
                given.display(),
                report.run.id
            ))
            .hint("run `planwright deliver` from the folder `planwright run` was run in, or restore the plan file")
        })?;
    let args = PlanArgs {
        plan: path,
        read: ReadArgs {
            format: None,
            input_format: None,
            no_strict_gates: false,
            issue: None,
            tag: None,
            coerce: false,
            max_files_changed: None,
            calibration_hint: false,
        },
    };
    // The run's own base, where the repository's planwright.toml is read.
    load_plan(&args, Some(repo.root()), Some(&report.run.base), global)
}

/// Delivers run `report` of `plan` with `config`'s `[forge]`: prepares,
/// renders the pull requests, and (unless a dry run) carries it out.
pub(crate) fn deliver_run(
    repo: &Repo,
    report: &RunReport,
    plan: &Plan,
    config: &Config,
    options: Options,
) -> Result<Delivered, CliError> {
    let (settings, url) = forge_settings(repo, config)?;
    let rows = super::status::plan_rows(report);
    let mut delivery =
        deliver::prepare(repo, &report.run, &rows, plan, settings, url, options.draft)
            .map_err(deliver_error)?;
    delivery.labels = config.respond.labels.clone();
    let texts: Vec<PullText> = delivery
        .pulls
        .iter()
        .map(|p| planwright_view::pull_request_text(report, &delivery, p))
        .collect();
    if options.dry_run {
        return Ok(Delivered {
            delivery,
            texts,
            report: None,
        });
    }
    let forge = deliver::connect(&delivery).map_err(deliver_error)?;
    let done = deliver::execute(repo, &delivery, &texts, forge.as_ref()).map_err(deliver_error)?;
    Ok(Delivered {
        delivery,
        texts,
        report: Some(done),
    })
}

/// `[forge]` resolved against the remote it names (and that remote's URL),
/// with the token read from this process's environment (the only place
/// it is read).
pub(crate) fn forge_settings(
    repo: &Repo,
    config: &Config,
) -> Result<(ForgeSettings, String), CliError> {
    let remote = config.forge.remote.as_deref().unwrap_or("origin");
    let url = deliver::remote_url(repo, remote).map_err(deliver_error)?;
    let mut env = settings::env();
    for name in forge::token_variables(&config.forge) {
        if let Ok(value) = std::env::var(&name) {
            env.tokens.insert(name, Secret::new(value));
        }
    }
    let settings = forge::resolve(&config.forge, &url, &env).map_err(settings::settings_error)?;
    Ok((settings, url))
}

/// A delivery's failure as the command line says it.
pub(crate) fn deliver_error(e: DeliverError) -> CliError {
    let code = if e.is_plan_error() {
        exit::INVALID
    } else {
        exit::USAGE
    };
    let hint = e.hint();
    let error = CliError::with_code(code, e.to_string());
    match hint {
        Some(h) => error.hint(h),
        None => error,
    }
}

/// The JSON of a delivery: `{"run", "dry_run", "pull_requests": [...]}`.
pub(crate) fn json(d: &Delivered) -> serde_json::Value {
    let pulls: Vec<serde_json::Value> = match &d.report {
        Some(r) => r.pulls.iter().map(|p| serde_json::json!(p)).collect(),
        None => d
            .delivery
            .pulls
            .iter()
            .zip(&d.texts)
            .map(|(p, t)| {
                serde_json::json!({
                    "head": p.head, "base": p.base, "commit": p.commit,
                    "draft": d.delivery.draft, "tickets": p.tickets,
                    "title": t.title, "body": t.body,
                })
            })
            .collect(),
    };
    serde_json::json!({
        "run": d.delivery.run.id,
        "dry_run": d.report.is_none(),
        "forge": d.delivery.settings.kind.name(),
        "repository": d.delivery.settings.repository,
        "pull_requests": pulls,
        "after_merge": d.report.as_ref().and_then(|r| r.after_merge.clone()),
        "linked_issues": d.report.as_ref().map(|r| r.linked_issues.clone()),
        "warnings": d.report.as_ref().map(|r| r.warnings.clone()),
    })
}

fn print(d: &Delivered, global: &Global) -> Result<(), CliError> {
    if global.output == Output::Json {
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&json(d)).expect("deliveries serialize")
        );
        return Ok(());
    }
    print_human(d);
    Ok(())
}

/// The lines people read.
pub(crate) fn print_human(d: &Delivered) {
    let s = &d.delivery.settings;
    let Some(report) = &d.report else {
        crate::outln!(
            "dry run: nothing pushed or sent to {} `{}` (remote `{}`)",
            s.kind.name(),
            s.repository,
            s.remote
        );
        for (p, t) in d.delivery.pulls.iter().zip(&d.texts) {
            crate::outln!(
                "\nwould push {} to `{}` and open or update a {}pull request into `{}`:",
                short(&p.commit),
                p.head,
                if d.delivery.draft { "draft " } else { "" },
                p.base
            );
            crate::outln!("title: {}\n\n{}", t.title, t.body);
        }
        return;
    };
    for p in &report.pulls {
        let draft = if p.draft { ", draft" } else { "" };
        let pushed = p.pushed.map_or(String::new(), |how| {
            format!(", {} pushed ({how})", short(&p.commit))
        });
        for (i, why) in p.push_retried.iter().enumerate() {
            crate::outln!(
                "try {} of pushing `{}` failed ({why}); tried again",
                i + 1,
                p.head
            );
        }
        crate::outln!(
            "{} #{} {} ({}{draft}{pushed}): `{}` into `{}`",
            serde_json::to_value(p.action)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            p.number,
            p.url,
            p.state,
            p.head,
            p.base
        );
    }
    for issue in &report.linked_issues {
        crate::outln!("posted the pull request's link on issue #{issue}");
    }
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    if let Some(a) = &report.after_merge {
        let line = match a {
            deliver::AfterMerge::Posted { issue } => {
                format!("posted the remaining scope on issue #{issue}")
            }
            deliver::AfterMerge::AlreadyPosted { issue } => {
                format!("the remaining scope is already on issue #{issue}")
            }
            deliver::AfterMerge::OtherRepository { issue } => {
                format!("the remaining scope is not posted: issue {issue} is in another repository")
            }
        };
        crate::outln!("{line}");
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// The repository folder `run --deliver` delivers from.
pub(crate) fn repo_of(dir: &Path) -> Result<Repo, CliError> {
    super::observe::open_repo(dir)
}
