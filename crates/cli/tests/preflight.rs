//! `preflight`, and the same checks in `run` and `run --dry-run`, end to
//! end: every problem named with its fix.

mod common;

use common::*;
use planwright_testkit::{assert_says, git, text, write};

/// `preflight` of the three-ticket plan with everything wrong at once: a
/// dirty checkout, a gate program and an agent program that do not exist,
/// and a `create` of a file the base has.
fn preflight_of_everything_wrong() -> (planwright_testkit::Env, std::process::Output) {
    let env = sh_env();
    write(&env.repo(), "README.md", "dirty\n");
    let plan = SH_PLAN
        .replace("\"test\", \"-f\"", "\"no-such-gate-program\", \"-f\"")
        .replace(
            "a.txt\", \"op\": \"create\"",
            "README.md\", \"op\": \"create\"",
        );
    write(env.root(), "plan.json", &plan);
    let out = env.cmd_agent("preflight", "no-such-agent-program {prompt_file}", &[]);
    (env, out)
}

#[test]
fn preflight_reports_every_problem_with_a_fix() {
    let (env, out) = preflight_of_everything_wrong();
    assert_eq!(out.status.code(), Some(1));
    let s = text(&out.stdout);
    for needle in [
        "error   clean: the working tree has uncommitted changes: `README.md`",
        "error   agent: the agent program `no-such-agent-program` is not on PATH",
        "error   gates: gate program `no-such-gate-program` is not on PATH",
        "error   scope-ops: ticket A: `README.md` is declared `create` but already exists in the base",
        "hint: ",
    ] {
        assert!(s.contains(needle), "{needle} missing:\n{s}");
    }
    // run refuses to start on the same problems.
    let run = env.cmd_agent("run", "no-such-agent-program", &[]);
    assert_eq!(run.status.code(), Some(1));
    assert_says(&run.stderr, "preflight failed");
    assert!(!env.repo().join(".planwright").exists());

    let not_git = env.planwright(&["status", "--repo", "."]);
    assert_eq!(not_git.status.code(), Some(2));
    assert_says(&not_git.stderr, "is not a git repository");
    // No repository to work in is exit 2 for run and preflight too, as the
    // exit-code table says.
    let agent = format!("scripted:{}", env.root().display());
    for command in ["preflight", "run"] {
        let out = env.planwright(&[command, "plan.json", "--repo", ".", "--agent", &agent]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{command}: {}",
            text(&out.stdout)
        );
        assert!(text(&out.stdout).contains("is not a git repository"));
    }
}

/// A git older than `MINIMUM_GIT_VERSION` (a fake one first on `PATH`
/// that says 2.30 and passes every other command to the real git) stops
/// preflight and run with the version found and the version needed.
#[test]
fn an_old_git_fails_preflight_naming_both_versions() {
    use std::os::unix::fs::PermissionsExt;
    let env = sh_env();
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join("git"))
        .find(|git| git.is_file())
        .expect("git on PATH");
    write(
        env.root(),
        "bin/git",
        &format!(
            "#!/bin/sh\nfor a in \"$@\"; do\n  [ \"$a\" = --version ] && {{ echo 'git version 2.30.2'; exit 0; }}\ndone\nexec '{}' \"$@\"\n",
            real.display()
        ),
    );
    let fake = env.root().join("bin/git");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        env.root().join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let agent = format!("scripted:{}", env.fixtures().display());
    let with_old_git = |command: &str| {
        env.command()
            .env("PATH", &path)
            .args([command, "plan.json", "--repo", "repo", "--agent", &agent])
            .args(["--no-gate-probe"])
            .output()
            .unwrap()
    };
    let too_old = "git 2.30.2 is too old: planwright needs git 2.40.0 or newer";
    let out = with_old_git("preflight");
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{s}");
    assert!(s.contains(&format!("error   git: {too_old}")), "{s}");
    assert!(s.contains("hint: install a newer git"), "{s}");
    let run = with_old_git("run");
    assert_eq!(run.status.code(), Some(1));
    let said = format!("{}{}", text(&run.stdout), text(&run.stderr));
    assert!(said.contains(too_old), "{said}");
    assert!(!env.repo().join(".planwright").exists());
    // The git on PATH passes, and preflight says so.
    let s = text(&env.scripted("preflight", &["--no-gate-probe"]).stdout);
    assert!(s.contains("planwright needs 2.40.0 or newer)"), "{s}");
}

#[test]
fn preflight_warns_of_scope_overlap_between_parallel_tickets() {
    let env = sh_env();
    let plan = SH_PLAN.replace(
        "\"b.txt\", \"op\": \"create\"",
        "\"a.txt\", \"op\": \"create\"",
    );
    write(env.root(), "plan.json", &plan);
    let out = env.scripted("preflight", &[]);
    let s = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a warning does not fail preflight: {s}"
    );
    assert!(
        s.contains("warning overlap: A and B may run at the same time and both may change `a.txt`"),
        "{s}"
    );
    assert!(
        !s.contains("A, C") && !s.contains("A and C"),
        "C depends on A: {s}"
    );
}

/// Gates from the command line count as the plan's do.
#[test]
fn preflight_warns_of_a_scope_glob_over_a_file_a_gate_runs() {
    let env = sh_env();
    let plan = SH_PLAN.replace("\"b.txt\", \"op\": \"create\"", "\"**\", \"op\": \"any\"");
    write(env.root(), "plan.json", &plan);
    let preflight = |gate: &str| text(&env.scripted("preflight", &["--gate", gate]).stdout);
    let s = preflight("sh ci/check.sh");
    assert!(
        s.contains("warning gate-files: ticket B's scope `**` covers `ci/check.sh`, which the gate `sh ci/check.sh` runs; a candidate that changes it is rejected (gate_script_tampering)"),
        "{s}"
    );
    assert!(!s.contains("ticket A's scope"), "A's scope is `a.txt`: {s}");
    let s = preflight("true");
    assert!(
        !s.contains("gate-files"),
        "no gate runs a file of the repository: {s}"
    );
}

#[test]
fn run_and_its_dry_run_warn_of_overlapping_scopes_that_preflight_found() {
    let env = sh_env();
    let plan = SH_PLAN.replace(
        r#""pattern": "b.txt", "op": "create""#,
        r#""pattern": "*.txt", "op": "create""#,
    );
    write(env.root(), "plan.json", &plan);
    let out = env.scripted("run", &["--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning: overlap:"))
        .collect();
    assert_eq!(
        warnings,
        // One group: B may run with A and with C.
        ["warning: overlap: 3 tickets may run at the same time and may change the same paths (`a.txt`, `*.txt`, `c.txt`): A, B, C"],
        "{stderr}"
    );
}

#[test]
fn dry_run_quotes_gates_as_a_shell_needs() {
    let env = sh_env();
    let out = env.scripted("run", &["--dry-run", "--gate", "test -n 'a b'"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_says(&out.stdout, "`test -n 'a b'`");
}

#[test]
fn dry_run_fails_exactly_when_run_would() {
    let env = sh_env();
    // A gate program that does not exist fails preflight, dry run or not.
    let missing = ["--gate", "no-such-gate-program-xyz"];
    let dry = env.scripted("run", &[&["--dry-run"][..], &missing[..]].concat());
    let real = env.scripted("run", &missing);
    assert_eq!(dry.status.code(), Some(1), "{}", text(&dry.stdout));
    assert_eq!(real.status.code(), dry.status.code());
    for out in [&dry, &real] {
        assert_says(
            &out.stdout,
            "gate program `no-such-gate-program-xyz` is not on PATH",
        );
    }
    // So does an uncommitted change to a tracked file.
    write(&env.repo(), "README.md", "edited\n");
    let dry = env.scripted("run", &["--dry-run"]);
    assert_eq!(dry.status.code(), Some(1), "{}", text(&dry.stdout));
    assert!(text(&dry.stdout).contains("uncommitted changes"));
    assert_eq!(git(&env.repo(), &["log", "--format=%s", "main"]), "base");
}

#[test]
fn preflight_failures_snapshot() {
    let (env, out) = preflight_of_everything_wrong();
    assert_eq!(out.status.code(), Some(1));
    let base = git(&env.repo(), &["rev-parse", "main"]);
    let stdout = text(&out.stdout)
        .replace(&env.root().display().to_string(), "[ROOT]")
        .replace(&base[..10], "[BASE]")
        .lines()
        // The limits line (and its hint) says what this machine's cgroups
        // allow; `limits.rs` checks it.
        .filter(|l| !l.contains(" limits: each agent") && !l.contains("hint: a limit reached"))
        // The sandbox line names the kernel's Landlock ABI.
        .map(|l| match l.find("run confined: ") {
            Some(i) => format!("{}[SANDBOX]", &l[..i + "run confined: ".len()]),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    insta::assert_snapshot!("preflight_failed", stdout);
}

#[test]
fn a_repository_whose_config_runs_programs_is_refused_with_exit_3() {
    let env = sh_env();
    git(&env.repo(), &["config", "filter.evil.clean", "touch ran"]);
    let out = env.scripted("run", &["--gate", "true"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(said.contains("filter.evil.clean"), "{said}");
    assert!(said.contains("allow_config"), "{said}");
    // preflight refuses it the same way, as its help says.
    let out = env.scripted("preflight", &["--gate", "true"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    let help = text(&env.planwright(&["preflight", "--help"]).stdout);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("3 when the repository's git config runs programs"),
        "{help}"
    );
    write(
        env.root(),
        "planwright.toml",
        "[git]\nallow_config = [\"filter.evil.clean\"]\n",
    );
    let out = env.scripted("run", &["--gate", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}
