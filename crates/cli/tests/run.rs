//! `preflight`, `run`, `status`, `report` and `demo` end to end, on
//! temporary repositories with the scripted and `cmd` agents.

use planwright_testkit::{git, have, text, write, Cli, Env};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// This file's environments: `files` committed in `repo/`, the binary
/// run in the root.
fn env_with(files: &[(&str, &str)]) -> Env {
    Env::new(files).with_cli(BIN)
}

fn example_plan() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agb/plan.example.json"),
    )
    .unwrap()
}

const MATH: &str = r#"function check(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b)) throw new TypeError('arguments must be finite numbers');
}
export function add(a, b) { check(a, b); return a + b; }
export function multiply(a, b) { check(a, b); return a * b; }
"#;
const MATH_TEST: &str = r#"import { test } from 'node:test';
import assert from 'node:assert/strict';
import { add, multiply } from '../lib/math.mjs';
test('add', () => { assert.equal(add(2, 3), 5); });
test('multiply', () => { assert.equal(multiply(4, 3), 12); });
test('type errors', () => {
  assert.throws(() => add('1', 2), TypeError);
  assert.throws(() => multiply(1, NaN), TypeError);
});
"#;
const STRINGS: &str = r#"export function slugify(input) {
  if (typeof input !== 'string') throw new TypeError('input must be a string');
  return input.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}
"#;
const STRINGS_TEST: &str = r#"import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slugify } from '../lib/strings.mjs';
test('basic phrase', () => { assert.equal(slugify('Hello World'), 'hello-world'); });
test('punctuation collapses', () => { assert.equal(slugify('a -- b!! ü c'), 'a-b-c'); });
test('leading and trailing junk', () => { assert.equal(slugify('  --x--  '), 'x'); });
test('type error', () => { assert.throws(() => slugify(3), TypeError); });
"#;
const STATS: &str = r#"import { add } from './math.mjs';
export function mean(numbers) {
  if (!Array.isArray(numbers)) throw new TypeError('numbers must be an array');
  if (numbers.length === 0) throw new RangeError('numbers must not be empty');
  return numbers.reduce((sum, n) => add(sum, n), 0) / numbers.length;
}
"#;
const STATS_TEST: &str = r#"import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mean } from '../lib/stats.mjs';
test('happy path', () => { assert.equal(mean([1, 2, 3, 4]), 2.5); });
test('single element', () => { assert.equal(mean([7]), 7); });
test('empty array', () => { assert.throws(() => mean([]), RangeError); });
test('bad input', () => {
  assert.throws(() => mean('12'), TypeError);
  assert.throws(() => mean([1, Infinity]), TypeError);
});
"#;

#[test]
fn the_agb_example_plan_merges_all_three_and_npm_test_passes() {
    // The seed's plan gates on `npm test`; .ci/run installs node and npm
    // where they are missing, so their absence is a broken setup, not a skip.
    assert!(
        have("npm") && have("node"),
        "this test runs `npm test` with node's test runner: install node and npm (`apt-get install nodejs npm`, as .ci/run does)"
    );
    let env = env_with(&[("package.json", "{\n  \"name\": \"target\",\n  \"private\": true,\n  \"scripts\": {\"test\": \"node --test\"}\n}\n")]);
    write(env.root(), "plan.json", &example_plan());
    env.fixture("T1", 0, "lib/math.mjs", MATH);
    env.fixture("T1", 0, "test/math.test.mjs", MATH_TEST);
    env.fixture("T2", 0, "lib/strings.mjs", STRINGS);
    env.fixture("T2", 0, "test/strings.test.mjs", STRINGS_TEST);
    env.fixture("T3", 0, "lib/stats.mjs", STATS);
    env.fixture("T3", 0, "test/stats.test.mjs", STATS_TEST);
    let pre = env.planwright(&[
        "preflight",
        "plan.json",
        "--repo",
        "repo",
        "--agent",
        &format!("scripted:{}", env.fixtures().display()),
    ]);
    assert_eq!(pre.status.code(), Some(0), "{}", text(&pre.stdout));
    let out = env.scripted("run", &["--output", "json"]);
    let summary: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{summary}");
    assert_eq!(summary["merged"], serde_json::json!(["T1", "T2", "T3"]));
    assert_eq!(summary["failed"], serde_json::json!({}));
    assert_eq!(summary["blocked"], serde_json::json!([]));
    let run = summary["run"].as_str().unwrap();
    let log = git(&env.repo(), &["log", "--format=%B%x00", "main"]);
    let commits: Vec<&str> = log
        .split('\0')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        commits.len(),
        4,
        "one commit per ticket on top of the base: {commits:?}"
    );
    for c in &commits[..3] {
        assert!(c.contains(&format!("Planwright-Run: {run}")), "{c}");
    }
    for id in ["T1", "T2", "T3"] {
        assert_eq!(
            commits
                .iter()
                .filter(|c| c.contains(&format!("Planwright-Ticket: {id}\n")))
                .count(),
            1
        );
    }
    // npm test passes on the result, in a clean checkout of the new base.
    let check = env.root().join("check");
    git(env.root(), &["clone", "-q", "repo", "check"]);
    let npm = Command::new("npm")
        .arg("test")
        .current_dir(&check)
        .output()
        .unwrap();
    assert!(
        npm.status.success(),
        "{}{}",
        text(&npm.stdout),
        text(&npm.stderr)
    );
    assert!(
        text(&npm.stdout).contains("# pass 11"),
        "{}",
        text(&npm.stdout)
    );
}

const SH_PLAN: &str = r#"{
  "planwright": 1, "source_format": "native", "base": "main",
  "gates": [{"name": "readme", "argv": ["test", "-f", "README.md"]}],
  "tickets": [
    {"id": "A", "title": "a", "body": "make a", "scope": [{"pattern": "a.txt", "op": "create"}]},
    {"id": "B", "title": "b", "body": "make b", "scope": [{"pattern": "b.txt", "op": "create"}]},
    {"id": "C", "title": "c", "body": "make c", "scope": [{"pattern": "c.txt", "op": "create"}], "depends_on": ["A"]}
  ]
}"#;

fn sh_env() -> Env {
    let env = env_with(&[("README.md", "hi\n")]);
    write(env.root(), "plan.json", SH_PLAN);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("B", 0, "b.txt", "b\n");
    env.fixture("C", 0, "c.txt", "c\n");
    env
}

#[test]
fn dry_run_prints_the_order_and_changes_nothing() {
    let env = sh_env();
    let before = git(&env.repo(), &["rev-parse", "main"]);
    // The gate probe works in a gate checkout under `.planwright/`.
    let out = env.scripted("run", &["--dry-run", "--jobs", "1", "--no-gate-probe"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let order: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("batch "))
        .collect();
    assert_eq!(order.len(), 3, "{stdout}");
    // A heads the longest chain; B and C tie and keep plan order.
    assert!(
        order[0].starts_with("1: A")
            && order[1].starts_with("2: B")
            && order[2].starts_with("3: C after A"),
        "{stdout}"
    );
    assert_eq!(git(&env.repo(), &["rev-parse", "main"]), before);
    assert!(!env.repo().join(".planwright").exists());
    assert_eq!(
        git(&env.repo(), &["status", "--porcelain", "--ignored"]),
        ""
    );
    assert_eq!(git(&env.repo(), &["branch", "--list"]), "* main");
    let out = env.scripted("run", &["--dry-run", "--jobs", "2", "--output", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["start_order"].as_array().unwrap().len(), 2, "{json}");
    // The counts' names, and their former ones for one release.
    assert_eq!(
        (&json["job_count"], &json["skipped_count"]),
        (&serde_json::json!(2), &serde_json::json!(0))
    );
    assert_eq!(
        (&json["jobs"], &json["skipped"]),
        (&serde_json::json!(2), &serde_json::json!(0))
    );
}

#[test]
fn rev_is_not_a_run_flag_since_run_works_from_the_base_branch() {
    let env = sh_env();
    let out = env.scripted("run", &["--rev", "main"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unexpected argument '--rev'"),
        "{}",
        text(&out.stderr)
    );
    assert!(!env.repo().join(".planwright").exists());
}

#[test]
fn zero_jobs_or_strikes_is_refused() {
    let env = sh_env();
    for flag in ["--jobs", "--strikes"] {
        let out = env.scripted("run", &[flag, "0", "--dry-run"]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert!(
            text(&out.stderr).contains("0 is not in 1.."),
            "{}",
            text(&out.stderr)
        );
    }
    write(env.root(), "planwright.toml", "[run]\nstrikes = 0\n");
    let out = env.scripted("run", &["--dry-run"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("`[run] strikes = 0`"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn worktree_is_read_as_workspace_and_warned_about_once() {
    let env = sh_env();
    write(
        env.root(),
        "planwright.toml",
        "[run]\njobs = 1\n[worktree]\ncopy = ['.env']\n",
    );
    let out = env.scripted("run", &["--dry-run"]);
    let err = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    let warning = "warning: `[worktree]` in `./planwright.toml` (line 3) is deprecated; rename it to `[workspace]`";
    assert_eq!(err.matches(warning).count(), 1, "{err}");
    let said = format!("{}{err}", text(&out.stdout));
    assert!(
        said.contains("`[workspace] copy` in `planwright.toml` names `.env`"),
        "the copy of the section under its former name is applied: {said}"
    );
    write(
        env.root(),
        "planwright.toml",
        "[run]\njobs = 1\n[workspace]\ncopy = ['.env']\n",
    );
    let out = env.scripted("run", &["--dry-run"]);
    assert!(
        !text(&out.stderr).contains("deprecated"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn commands_that_read_a_run_ask_for_the_repository_it_ran_in() {
    let dir = tempfile::tempdir().unwrap();
    for command in ["status", "report", "watch", "serve"] {
        let out = Cli::new(BIN).run(dir.path(), &[command]);
        assert_eq!(out.status.code(), Some(2), "{command}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("is not a git repository"),
            "{command}: {stderr}"
        );
        assert!(
            stderr.contains("pass `--repo` the repository the run ran in"),
            "{command}: {stderr}"
        );
    }
}

/// Running an edited plan continues the run; a ticket the plan no longer
/// has leaves the run's counts alike in every view, and is listed apart,
/// as removed (docs/running.md).
#[test]
fn a_ticket_removed_from_the_plan_leaves_the_runs_counts_and_is_listed_apart() {
    let env = sh_env();
    let out = env.scripted("run", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let without_b = SH_PLAN
        .lines()
        .filter(|l| !l.contains("\"id\": \"B\""))
        .collect::<Vec<_>>()
        .join("\n");
    write(env.root(), "plan.json", &without_b);
    let out = env.scripted("run", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("B: no longer in the plan; kept in the run's views as removed"),
        "{}",
        text(&out.stdout)
    );
    let s = text(&env.planwright(&["status", "--repo", "repo"]).stdout);
    assert!(s.contains("2 tickets: 2 merged"), "{s}");
    let (plan, removed) = s
        .split_once("removed from the plan (kept")
        .expect("a heading");
    assert!(!plan.lines().any(|l| l.starts_with("B ")), "{s}");
    assert!(removed.lines().any(|l| l.starts_with("B ")), "{s}");
    let json = env.status_json();
    assert_eq!(json["counts"]["merged"], 2);
    assert_eq!(json["run"]["removed_count"], 1);
    let rows = json["tickets"].as_array().unwrap();
    let removed: Vec<&Value> = rows.iter().filter(|t| t["removed"] == true).collect();
    assert_eq!((rows.len(), removed.len()), (3, 1), "{json}");
    assert_eq!(removed[0]["id"], "B");
}

#[test]
fn status_and_report_describe_the_run() {
    let env = sh_env();
    write(
        &env.fixture_dir("B", 0).join("files"),
        "README.md",
        "changed\n",
    );
    let out = env.scripted("run", &["--strikes", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("B: FAILED: scope_violation"), "{stdout}");
    assert!(stdout.contains("A: merged as "), "{stdout}");

    let status = env.planwright(&["status", "--repo", "repo"]);
    let s = text(&status.stdout);
    assert_eq!(status.status.code(), Some(0));
    let row = |id: &str| {
        s.lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{id} missing: {s}"))
            .to_string()
    };
    assert!(row("A").contains("merged"), "{s}");
    assert!(
        row("B").contains("failed") && row("B").contains("scope_violation: modifies `README.md`"),
        "{s}"
    );
    assert!(row("C").contains("merged"), "{s}");

    let json = env.status_json();
    let b = &json["tickets"][1];
    assert_eq!(
        (
            b["id"].as_str(),
            b["state"].as_str(),
            b["attempt_count"].as_u64()
        ),
        (Some("B"), Some("failed"), Some(1))
    );
    assert_eq!(b["failure"]["kind"], "scope_violation");
    let merged_commit = json["tickets"][0]["merge_commit"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(git(&env.repo(), &["log", "--format=%H", "main"]).contains(&merged_commit));

    let md = text(&env.planwright(&["report", "--repo", "repo"]).stdout);
    assert!(md.contains("| B | b | failed | 1 |"), "{md}");
    let html = text(
        &env.planwright(&["report", "--repo", "repo", "--to", "html"])
            .stdout,
    );
    assert!(
        html.contains("<table>") && html.contains("scope_violation"),
        "{html}"
    );
    let json: Value = serde_json::from_slice(
        &env.planwright(&["report", "--repo", "repo", "--to", "json"])
            .stdout,
    )
    .unwrap();
    assert_eq!(json["run"]["status"], "finished");
    let unknown = env.planwright(&["status", "--repo", "repo", "--run", "nope"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        text(&unknown.stderr).contains("omit `--run` for the newest run"),
        "{}",
        text(&unknown.stderr)
    );
    // `--output json` alone asks for the JSON report too.
    let out = env.planwright(&["report", "--repo", "repo", "--output", "json"]);
    let again: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(again, json);
}

/// A fake `claude` that makes its ticket's file and replays Claude Code's
/// stream-json: one API call, then the result with the attempt's usage and
/// its reported cost.
const FAKE_CLAUDE: &str = r#"#!/bin/sh
echo made > "$(echo "$PLANWRIGHT_TICKET" | tr A-Z a-z).txt"
cat > /dev/null
cat <<'EOF'
{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-6"}
{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Making it."}],"usage":{"input_tokens":3,"output_tokens":12,"cache_read_input_tokens":100}}}
{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s-1","total_cost_usd":0.0125,"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":300,"output_tokens":40}}
EOF
"#;

/// A claude CLI that writes its command line into the ticket's file.
const ECHOING_CLAUDE: &str = r#"#!/bin/sh
printf '%s\n' "$*" > "$(echo "$PLANWRIGHT_TICKET" | tr A-Z a-z).txt"
cat > /dev/null
cat <<'EOF'
{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-6"}
{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s-1","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":40}}
EOF
"#;

const ROUTED_PLAN: &str = r#"{
  "planwright": 1, "source_format": "native", "base": "main",
  "gates": [{"name": "readme", "argv": ["test", "-f", "README.md"]}],
  "tickets": [
    {"id": "A", "title": "a", "body": "make a", "scope": [{"pattern": "a.txt", "op": "create"}], "tier": "mid", "pool_hint": "gemini"},
    {"id": "B", "title": "b", "body": "make b", "scope": [{"pattern": "b.txt", "op": "create"}], "tier": "frontier", "pool_hint": "claude"}CHEAP
  ]
}"#;

fn routed_env(cheap: bool) -> Env {
    use std::os::unix::fs::PermissionsExt;
    let env = env_with(&[("README.md", "hi\n")]);
    let c = r#",
    {"id": "C", "title": "c", "body": "make c", "scope": [{"pattern": "c.txt", "op": "create"}], "tier": "cheap", "pool_hint": "gemini"}"#;
    let plan = ROUTED_PLAN.replace("CHEAP", if cheap { c } else { "" });
    write(env.root(), "plan.json", &plan);
    let fake = env.root().join("bin/claude");
    write(env.root(), "bin/claude", ECHOING_CLAUDE);
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = format!("[agent]\nprogram = \"{}\"\n", fake.display());
    write(env.root(), "planwright.toml", &config);
    env
}

#[test]
fn a_claude_run_gives_gemini_hinted_tickets_claudes_model_and_says_so() {
    let env = routed_env(false);
    let args = ["plan.json", "--repo", "repo", "--agent", "claude"];
    let dry = env.planwright(&[&["run", "--dry-run"][..], &args].concat());
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    let stdout = text(&dry.stdout);
    assert!(
        stdout.contains("routes (ticket -> adapter -> model):"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  B -> claude -> claude-sonnet-4-6\n"),
        "{stdout}"
    );
    let stderr = text(&dry.stderr);
    let warning = "routing: A -> claude -> claude-sonnet-4-6: its pool hint `gemini` cannot run on the `claude` CLI";
    assert!(stderr.contains(warning), "{stderr}");
    let out = env.planwright(&[&["run"][..], &args].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for file in ["a.txt", "b.txt"] {
        let argv = git(&env.repo(), &["show", &format!("main:{file}")]);
        assert!(argv.contains("--model claude-sonnet-4-6"), "{file}: {argv}");
        assert!(!argv.contains("gemini"), "{file}: {argv}");
    }
}

/// `preflight` of the routed plan with `--agent claude`.
const CLAUDE_PREFLIGHT: &[&str] = &[
    "preflight",
    "plan.json",
    "--repo",
    "repo",
    "--agent",
    "claude",
];

/// Adds `more` to the end of the set-up's `planwright.toml`.
fn append_config(env: &Env, more: &str) {
    let config = std::fs::read_to_string(env.root().join("planwright.toml")).unwrap();
    write(env.root(), "planwright.toml", &format!("{config}{more}"));
}

/// [`CLAUDE_PREFLIGHT`], which must fail: its stdout.
fn failed_claude_preflight(env: &Env) -> String {
    let out = env.planwright(CLAUDE_PREFLIGHT);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    stdout
}

/// A gateway at a loopback address (here in Claude Code's settings) is
/// refused by the proxy in every attempt: preflight names the `hosts`
/// line; a key variable Codex's config names but the agent is not given
/// is named with its `[agent] env` line.
#[test]
fn preflight_names_a_loopback_gateway_and_a_key_not_passed() {
    let env = routed_env(false);
    let home = env.cli().home().to_path_buf();
    write(
        &home,
        ".claude/settings.json",
        r#"{"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080/v1", "ANTHROPIC_API_KEY": "k"}}"#,
    );
    let stdout = failed_claude_preflight(&env);
    assert!(
        stdout.contains("points the agent at `http://127.0.0.1:8080/v1`, a loopback address"),
        "{stdout}"
    );
    assert!(
        stdout.contains("`[sandbox] hosts = { \"model-gateway.test\" = \"127.0.0.1:8080\" }`"),
        "{stdout}"
    );
    write(
        &home,
        ".codex/config.toml",
        "model_provider = \"mock\"\n[model_providers.mock]\nbase_url = \"http://mock-model.test:9/v1\"\nenv_key = \"MOCK_KEY\"\nwire_api = \"responses\"\n",
    );
    let out = env.planwright(&[
        "preflight",
        "plan.json",
        "--repo",
        "repo",
        "--agent",
        "codex",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("names the key variable `MOCK_KEY`, which the agent is not given"),
        "{stdout}"
    );
    assert!(
        stdout.contains("`[agent] env = [\"MOCK_KEY\"]`"),
        "{stdout}"
    );
}

#[test]
fn preflight_fails_naming_a_ticket_the_agents_family_has_no_model_for() {
    let env = routed_env(true);
    append_config(&env, "[families.claude]\nmid = \"claude-sonnet-4-6\"\n");
    let stdout = failed_claude_preflight(&env);
    let error = "routing: ticket C: the family table has no claude model of tier `cheap`";
    assert!(stdout.contains(error), "{stdout}");
    assert!(
        stdout.contains("routing: B -> claude -> claude-sonnet-4-6"),
        "{stdout}"
    );
}

/// A gemini CLI that writes its command line into the ticket's file and
/// prints Gemini CLI's `json` result.
const ECHOING_GEMINI: &str = r#"#!/bin/sh
printf 'gemini %s\n' "$*" > "$(echo "$PLANWRIGHT_TICKET" | tr A-Z a-z).txt"
cat > /dev/null
cat <<'EOF'
{"session_id": "g1", "response": "Done.", "stats": {"models": {"gemini-3.1-pro-low": {"tokens": {"prompt": 10, "candidates": 5, "cached": 0}}}}}
EOF
"#;

/// `[agents]` sends each ticket to its family's CLI, each with a model of
/// its own family; `--agent` takes precedence and sends all to one.
#[test]
fn agents_send_each_family_to_its_cli_and_the_agent_flag_takes_precedence() {
    use std::os::unix::fs::PermissionsExt;
    let env = routed_env(true);
    write(env.root(), "bin/gemini", ECHOING_GEMINI);
    let gemini = env.root().join("bin/gemini");
    std::fs::set_permissions(&gemini, std::fs::Permissions::from_mode(0o755)).unwrap();
    write(
        env.root(),
        "planwright.toml",
        "[agents]\nclaude = \"claude\"\ngemini = \"gemini\"\n",
    );
    let path = format!(
        "{}:{}",
        env.root().join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let planwright = |args: &[&str]| {
        env.command()
            .env("PATH", &path)
            .args(args)
            .output()
            .unwrap()
    };
    let dry = planwright(&["run", "plan.json", "--repo", "repo", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    let (stdout, stderr) = (text(&dry.stdout), text(&dry.stderr));
    for route in [
        "  A -> gemini -> gemini-3.1-pro-low\n",
        "  B -> claude -> claude-sonnet-4-6\n",
        "  C -> gemini -> gemini-3-flash\n",
    ] {
        assert!(stdout.contains(route), "{route}: {stdout}");
    }
    assert!(
        !stderr.contains("routing:"),
        "every hint is honoured: {stderr}"
    );
    let out = planwright(&["run", "plan.json", "--repo", "repo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let a = git(&env.repo(), &["show", "main:a.txt"]);
    assert!(
        a.starts_with("gemini ") && a.contains("-m gemini-3.1-pro-low") && !a.contains("claude"),
        "{a}"
    );
    let c = git(&env.repo(), &["show", "main:c.txt"]);
    assert!(
        c.contains("-m gemini-3-flash") && !c.contains("claude"),
        "{c}"
    );
    let b = git(&env.repo(), &["show", "main:b.txt"]);
    assert!(
        b.contains("--model claude-sonnet-4-6") && !b.contains("gemini"),
        "{b}"
    );
    let one = planwright(CLAUDE_PREFLIGHT);
    let stdout = text(&one.stdout);
    assert_eq!(one.status.code(), Some(0), "{stdout}");
    let c = "routing: C -> claude -> claude-haiku-4-5: its pool hint `gemini` cannot run on the `claude` CLI";
    assert!(stdout.contains(c), "{stdout}");
}

/// A ticket no `[agents]` entry serves, with no `[agent] name`, fails
/// preflight naming it; an entry of another family's adapter is refused.
#[test]
fn agents_that_leave_a_ticket_without_an_agent_or_mismatch_a_family_are_refused() {
    let env = routed_env(false);
    write(
        env.root(),
        "planwright.toml",
        "[agents]\nclaude = \"claude\"\n",
    );
    let out = env.planwright(&["preflight", "plan.json", "--repo", "repo"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let error = "routing: ticket A: no agent of `[agents]` runs its model family";
    assert!(stdout.contains(error), "{stdout}");
    write(
        env.root(),
        "planwright.toml",
        "[agents]\ngemini = \"claude\"\n",
    );
    let out = env.planwright(&["preflight", "plan.json", "--repo", "repo"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let refused = "`[agents] gemini = \"claude\"`: the `claude` adapter runs only claude models";
    assert!(stderr.contains(refused), "{stderr}");
}

/// The routed plan's set-up with `model` as `[agent] model`.
fn with_agent_model(env: &Env, model: &str) {
    let config = std::fs::read_to_string(env.root().join("planwright.toml")).unwrap();
    let kept: String = config
        .lines()
        .filter(|l| !l.starts_with("model = "))
        .map(|l| format!("{l}\n"))
        .collect();
    let config = kept.replace("[agent]\n", &format!("[agent]\nmodel = \"{model}\"\n"));
    write(env.root(), "planwright.toml", &config);
}

/// `[agent] model` of another family than the agent's stops preflight and
/// the run before any attempt, naming the agent, the tickets and the fix;
/// one of its own family is every ticket's model, as the routes say.
#[test]
fn an_agent_model_of_another_family_is_a_routing_error_and_one_of_its_own_is_every_tickets() {
    let env = routed_env(false);
    with_agent_model(&env, "gemini-2.5-flash");
    let stdout = failed_claude_preflight(&env);
    let error = "routing: agent `claude`: `[agent] model = \"gemini-2.5-flash\"` is a gemini model, and the `claude` CLI runs only claude models (tickets A, B)";
    let hint = "hint: set `[agent] model` to a claude model such as `claude-sonnet-4-6`";
    for said in [error, hint] {
        assert!(stdout.contains(said), "{said}\n{stdout}");
    }
    let args = ["plan.json", "--repo", "repo", "--agent", "claude"];
    let run = env.planwright(&[&["run"][..], &args].concat());
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert!(text(&run.stdout).contains(error), "{}", text(&run.stdout));
    assert!(!env.repo().join(".planwright/runs").exists());

    with_agent_model(&env, "claude-opus-4-6");
    let dry = env.planwright(&[&["run", "--dry-run"][..], &args].concat());
    let stdout = text(&dry.stdout);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    for t in ["A", "B"] {
        let route = format!("  {t} -> claude -> claude-opus-4-6 (`[agent] model`)\n");
        assert!(stdout.contains(&route), "{stdout}");
    }
    let out = env.planwright(&[&["run"][..], &args].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let argv = git(&env.repo(), &["show", "main:a.txt"]);
    assert!(argv.contains("--model claude-opus-4-6"), "{argv}");
}

/// `[review] model` of another family than the reviewer's CLI stops the
/// run before it starts.
#[test]
fn a_review_model_of_another_family_than_its_reviewer_is_refused() {
    let env = routed_env(false);
    append_config(
        &env,
        "[review]\nagent = \"codex\"\nmodel = \"claude-sonnet-4-6\"\n",
    );
    let args = ["run", "plan.json", "--repo", "repo", "--agent", "claude"];
    let out = env.planwright(&args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let refused = "`[review] model = \"claude-sonnet-4-6\"` is a claude model, and the reviewer's CLI runs only gpt models";
    assert!(stderr.contains(refused), "{stderr}");
    assert!(!env.repo().join(".planwright/runs").exists());
}

/// `[agent] model` is every attempt's model, over the routed one: the
/// `cmd` agent's `{model}`, the model stored with the attempt, and the
/// pool a refusal pauses (`claude`, not the routed `gemini-pro`).
#[test]
fn the_agent_model_is_every_attempts_and_its_pools() {
    let env = routed_env(false);
    with_agent_model(&env, "claude-sonnet-4-6");
    append_config(&env, "max_pause = 1\n");
    // Refused once (EX_TEMPFAIL), then it writes the model it was given.
    let template = "sh -c '[ \"$PLANWRIGHT_ATTEMPT\" = 1 ] && exit 75; echo \"$1\" > \"$(echo $PLANWRIGHT_TICKET | tr A-Z a-z).txt\"' sh {model}";
    let agent = ["--agent", "cmd", "--agent-cmd", template, "--jobs", "1"];
    let out = env.planwright(&[&["run", "plan.json", "--repo", "repo"][..], &agent].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for file in ["a.txt", "b.txt"] {
        let shown = git(&env.repo(), &["show", &format!("main:{file}")]);
        assert_eq!(shown.trim(), "claude-sonnet-4-6", "{file}");
    }
    let report = env.planwright(&["report", "--repo", "repo", "--output", "json"]);
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let models: Vec<&Value> = report["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["attempts"].as_array().unwrap())
        .map(|a| &a["model"])
        .collect();
    assert!(
        models.iter().all(|m| *m == "claude-sonnet-4-6"),
        "{models:?}"
    );
    let events = env.run_file("events.jsonl");
    let pools: Vec<Value> = events
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "pool_paused")
        .map(|e| e["pool"].clone())
        .collect();
    assert!(
        !pools.is_empty() && pools.iter().all(|p| p == "claude"),
        "{pools:?}"
    );
}

#[test]
fn usage_and_cost_show_per_attempt_ticket_and_run_everywhere() {
    use std::os::unix::fs::PermissionsExt;
    let env = sh_env();
    let fake = env.root().join("bin/claude");
    write(env.root(), "bin/claude", FAKE_CLAUDE);
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = format!("[agent]\nprogram = \"{}\"\n", fake.display());
    write(env.root(), "planwright.toml", &config);
    let out = env.planwright(&["run", "plan.json", "--repo", "repo", "--agent", "claude"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let attempt = "370 tokens (10 in, 40 out, 300 cache read, 20 cache write)";
    let run_total = "total: 1110 tokens (30 in, 120 out, 900 cache read, 60 cache write), $0.0375";
    let status = text(&env.planwright(&["status", "--repo", "repo"]).stdout);
    assert!(status.contains(run_total), "{status}");
    let row = status.lines().find(|l| l.starts_with("A ")).unwrap();
    assert!(row.contains(" 370 ") && row.contains("$0.0125"), "{status}");

    let md = text(&env.planwright(&["report", "--repo", "repo"]).stdout);
    let line = format!(
        "model claude-sonnet-4-6 · agent finished · {attempt} · $0.0125 (reported) · took "
    );
    assert!(md.contains(run_total) && md.contains(&line), "{md}");
    assert!(
        md.contains("| A | a | merged | 1 | 370 | $0.0125 |"),
        "{md}"
    );
    let html = text(
        &env.planwright(&["report", "--repo", "repo", "--to", "html"])
            .stdout,
    );
    assert!(
        html.contains(attempt) && html.contains("$0.0125 (reported)"),
        "{html}"
    );

    let json: Value = serde_json::from_slice(
        &env.planwright(&["report", "--repo", "repo", "--to", "json"])
            .stdout,
    )
    .unwrap();
    let usage = |n: u64| {
        serde_json::json!({"input_tokens": 10 * n, "output_tokens": 40 * n,
            "cache_read_tokens": 300 * n, "cache_write_tokens": 20 * n})
    };
    let a = &json["tickets"][0];
    let first = &a["attempts"][0];
    assert_eq!(
        (
            &first["agent_outcome"],
            &first["model"],
            &first["cost_source"]
        ),
        (
            &Value::from("finished"),
            &Value::from("claude-sonnet-4-6"),
            &Value::from("reported")
        )
    );
    assert_eq!(
        (&first["usage"], &first["cost_usd"]),
        (&usage(1), &Value::from(0.0125))
    );
    assert!(first["duration_ms"].is_u64(), "{first}");
    assert_eq!(
        (&a["usage"], &a["cost_usd"]),
        (&usage(1), &Value::from(0.0125))
    );
    assert_eq!(json["run"]["usage"], usage(3));
    let cost = json["run"]["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.0375).abs() < 1e-12, "{cost}");

    // The running totals arrived as events while each agent ran, before its report.
    let events = env.run_file("events.jsonl");
    let of_a: Vec<Value> = events
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["ticket"] == "A" && e["event"].as_str().unwrap().starts_with("agent_"))
        .collect();
    let seen: Vec<(&str, u64)> = of_a
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap(),
                e["usage"]["input_tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("agent_usage", 3),
            ("agent_usage", 10),
            ("agent_reported", 10)
        ]
    );
    assert_eq!(of_a[2]["cost_source"], "reported");

    // A pool paused by a rate limit shows in `status`, with when it resumes.
    let log = std::fs::read_dir(env.repo().join(".planwright/runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("events.jsonl");
    let paused = r#"{"event":"pool_paused","ticket":"A","pool":"anthropic","wait_ms":60000,"until":"2026-12-01T15:00:00Z","reason":"429 rate limited"}"#;
    std::fs::write(&log, format!("{events}{paused}\n")).unwrap();
    let status = text(&env.planwright(&["status", "--repo", "repo"]).stdout);
    assert!(
        status.contains(
            "pool `anthropic` paused (429 rate limited); resumes at 2026-12-01T15:00:00Z"
        ),
        "{status}"
    );
    let json = env.status_json();
    assert_eq!(json["paused"]["anthropic"]["until"], "2026-12-01T15:00:00Z");
}

#[test]
fn run_json_names_failed_and_blocked_tickets() {
    let env = sh_env();
    write(
        &env.fixture_dir("A", 0).join("files"),
        "elsewhere.txt",
        "x\n",
    );
    let out = env.scripted("run", &["--strikes", "1", "--output", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["merged"], serde_json::json!(["B"]));
    assert_eq!(summary["failed"]["A"]["kind"], "scope_violation");
    assert!(summary["failed"]["A"]["message"]
        .as_str()
        .unwrap()
        .contains("elsewhere.txt"));
    assert_eq!(summary["blocked"], serde_json::json!(["C"]));
}

#[test]
fn preflight_reports_every_problem_with_a_fix() {
    let env = sh_env();
    write(&env.repo(), "README.md", "dirty\n");
    let plan = SH_PLAN
        .replace("\"test\", \"-f\"", "\"no-such-gate-program\", \"-f\"")
        .replace(
            "a.txt\", \"op\": \"create\"",
            "README.md\", \"op\": \"create\"",
        );
    write(env.root(), "plan.json", &plan);
    let out = env.planwright(&[
        "preflight",
        "plan.json",
        "--repo",
        "repo",
        "--agent",
        "cmd",
        "--agent-cmd",
        "no-such-agent-program {prompt_file}",
    ]);
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
    let run = env.planwright(&[
        "run",
        "plan.json",
        "--repo",
        "repo",
        "--agent",
        "cmd",
        "--agent-cmd",
        "no-such-agent-program",
    ]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        text(&run.stderr).contains("preflight failed"),
        "{}",
        text(&run.stderr)
    );
    assert!(!env.repo().join(".planwright").exists());

    let not_git = env.planwright(&["status", "--repo", "."]);
    assert_eq!(not_git.status.code(), Some(2));
    assert!(
        text(&not_git.stderr).contains("is not a git repository"),
        "{}",
        text(&not_git.stderr)
    );
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
fn gates_from_the_command_line_and_config() {
    let env = sh_env();
    let plan = SH_PLAN.replace(
        "\"gates\": [{\"name\": \"readme\", \"argv\": [\"test\", \"-f\", \"README.md\"]}],",
        "",
    );
    write(env.root(), "plan.json", &plan);
    let no_gate = env.scripted("run", &[]);
    assert_eq!(no_gate.status.code(), Some(1));
    assert!(
        text(&no_gate.stdout).contains("has no gate"),
        "{}",
        text(&no_gate.stdout)
    );
    write(
        env.root(),
        "planwright.toml",
        "[gates]\nrun = [[\"test\", \"-f\", \"README.md\"]]\n",
    );
    let out = env.scripted(
        "run",
        &["--gate", "sh -c 'test -n \"$HOME\"'", "--output", "json"],
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        summary["merged"],
        serde_json::json!(["A", "B", "C"]),
        "{}",
        text(&out.stderr)
    );
    let log = std::fs::read_to_string(
        env.repo()
            .join(".planwright/runs")
            .join(summary["run"].as_str().unwrap())
            .join("A/ticket.log"),
    )
    .unwrap();
    assert!(
        log.contains("$ test -f README.md") && log.contains("$ sh -c 'test -n \"$HOME\"'"),
        "{log}"
    );
}

#[test]
fn an_interrupted_run_continues_without_rerunning_merged_tickets() {
    let env = sh_env();
    // A finishes at once; B waits until it is interrupted.
    let script = env.root().join("agent.sh");
    let mark = env.root().join("second-run");
    // The mark's path is in the script: an agent gets no variable of the
    // test's own environment that `[agent] env` does not name.
    std::fs::write(&script, format!("t=$(echo \"$PLANWRIGHT_TICKET\" | tr A-Z a-z)\nif [ \"$t\" = b ] && [ ! -f '{}' ]; then sleep 60; fi\necho x > \"$t.txt\"\n", mark.display())).unwrap();
    let agent_cmd = format!("sh {}", script.display());
    let child = env
        .command()
        .args([
            "run",
            "plan.json",
            "--repo",
            "repo",
            "--agent",
            "cmd",
            "--agent-cmd",
            &agent_cmd,
            "--jobs",
            "2",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (bounded) until A and C merged, then interrupt like Ctrl-C would.
    let events = env.repo().join(".planwright/runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let merged_c = std::fs::read_dir(&events)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| {
                std::fs::read_to_string(e.path().join("events.jsonl"))
                    .unwrap_or_default()
                    .contains("\"event\":\"merged\",\"ticket\":\"C\"")
            });
        if merged_c == Some(true) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "A and C never merged");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let first = child.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(1), "{}", text(&first.stdout));
    assert!(
        text(&first.stdout).contains("interrupted"),
        "{}",
        text(&first.stdout)
    );
    assert!(!env.repo().join("b.txt").exists());

    std::fs::write(&mark, "").unwrap();
    let second = env
        .command()
        .args([
            "run",
            "plan.json",
            "--repo",
            "repo",
            "--agent",
            "cmd",
            "--agent-cmd",
            &agent_cmd,
        ])
        .output()
        .unwrap();
    let s = text(&second.stdout);
    assert_eq!(second.status.code(), Some(0), "{s}{}", text(&second.stderr));
    assert!(
        s.contains("continuing run")
            && s.contains("A: merged by an earlier run, skipped")
            && s.contains("C: merged by an earlier run, skipped"),
        "{s}"
    );
    assert!(!s.contains("A: attempt"), "{s}");
    assert_eq!(
        git(&env.repo(), &["log", "--format=%s", "main"])
            .lines()
            .count(),
        4
    );
}

#[test]
fn the_plans_repo_is_the_default_target() {
    let env = sh_env();
    let plan = SH_PLAN.replace(
        "\"base\": \"main\",",
        "\"base\": \"main\", \"repo\": \"repo\",",
    );
    write(
        env.root(),
        "plans/plan.json",
        &plan.replace("\"repo\": \"repo\"", "\"repo\": \"../repo\""),
    );
    let agent = format!("scripted:{}", env.fixtures().display());
    let out = env.planwright(&[
        "run",
        "plans/plan.json",
        "--agent",
        &agent,
        "--output",
        "json",
    ]);
    let summary: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    assert_eq!(
        summary["merged"],
        serde_json::json!(["A", "B", "C"]),
        "{summary} {}",
        text(&out.stderr)
    );
    assert!(env.repo().join(".planwright/state.db").is_file());
}

#[test]
fn demo_runs_end_to_end() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Cli::new(BIN)
        .command(Path::new("."))
        .arg("demo")
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{s}{}", text(&out.stderr));
    assert!(
        s.contains("farewell: attempt 1 rejected: scope_violation: modifies `README.md`"),
        "{s}"
    );
    assert!(s.contains("3 merged, 0 failed, 0 blocked"), "{s}");
    assert!(
        s.contains("hello: hello command") && s.contains("what landed on `main`"),
        "{s}"
    );
}

#[test]
fn demo_json_says_where_it_ran() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Cli::new(BIN)
        .command(Path::new("."))
        .args(["demo", "--keep", "--output", "json"])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let repo = PathBuf::from(summary["repo"].as_str().unwrap());
    assert!(repo.join(".git").exists(), "{summary}");
    assert!(PathBuf::from(summary["plan"].as_str().unwrap()).is_file());
    assert_eq!(summary["merged"].as_array().unwrap().len(), 3);
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
    assert!(
        text(&out.stdout).contains("`test -n 'a b'`"),
        "{}",
        text(&out.stdout)
    );
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
        assert!(
            text(&out.stdout).contains("gate program `no-such-gate-program-xyz` is not on PATH"),
            "{}",
            text(&out.stdout)
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
fn a_damaged_state_store_is_named_with_a_way_out() {
    let env = env_with(&[("README.md", "hi\n")]);
    write(&env.repo(), ".planwright/state.db", "not a database\n");
    let out = env.planwright(&["status", "--repo", "repo"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("state store `.planwright/state.db`") && stderr.contains("hint: "),
        "{stderr}"
    );
}

/// Replaces what changes from run to run (run id, times, commits, temporary
/// paths) with fixed names, so that the human output can be a snapshot.
fn redact(text: &str, status: &Value, root: &Path) -> String {
    let mut out = text.replace(&root.display().to_string(), "[ROOT]");
    let mut swap = |from: &str, to: &str| {
        if !from.is_empty() {
            out = out.replace(from, to);
        }
    };
    swap(status["run"]["id"].as_str().unwrap(), "[RUN]");
    for key in ["started_at", "finished_at"] {
        if let Some(t) = status["run"][key].as_str() {
            swap(t, "[TIME]");
        }
    }
    for t in status["tickets"].as_array().unwrap() {
        if let Some(c) = t["merge_commit"].as_str() {
            swap(c, "[COMMIT]");
            swap(&c[..10], "[COMMIT]");
        }
        for a in t["attempts"].as_array().unwrap() {
            let base = a["base_commit"].as_str().unwrap();
            swap(base, "[BASE]");
            swap(&base[..10], "[BASE]");
        }
    }
    // Durations are how long the machine took.
    out.split_inclusive('\n')
        .map(|line| match line.split_once("took ") {
            Some((head, tail)) => {
                let rest = tail.find([' ', '\n']).map_or("", |i| &tail[i..]);
                format!("{head}took [DURATION]{rest}")
            }
            None => line.to_string(),
        })
        .collect()
}

/// A fails its gate with eight lines of output; C, which depends on A, is
/// blocked; B merges.
fn failed_run() -> Env {
    failed_run_and_its_output().0
}

fn failed_run_and_its_output() -> (Env, Output) {
    let env = sh_env();
    let plan = SH_PLAN.replace(
        r#""body": "make a","#,
        r#""body": "make a", "gates": [{"name": "lint", "argv": ["sh", "-c", "for i in 1 2 3 4 5 6 7 8; do echo \"lint: problem $i\"; done; exit 3"]}],"#,
    );
    write(env.root(), "plan.json", &plan);
    let out = env.scripted("run", &["--strikes", "1", "--jobs", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    (env, out)
}

#[test]
fn a_failed_run_ends_with_the_next_step() {
    let (env, out) = failed_run_and_its_output();
    let stdout = text(&out.stdout);
    let next = &stdout[stdout.find("\nnext:\n").expect("a next-step block")..];
    assert!(next.contains("planwright status --repo"), "{next}");
    assert!(next.contains("--rerun ID"), "{next}");
    let log = (next.lines())
        .find_map(|l| l.trim().strip_suffix("   A's whole log"))
        .expect("the log line");
    assert!(log.ends_with("/A/ticket.log"), "{log}");
    assert!(
        std::path::Path::new(log).is_file() || env.root().join(log).is_file(),
        "{log}"
    );
}

#[test]
fn status_and_report_say_why_a_ticket_failed_and_what_blocked_another() {
    let env = failed_run();
    let json_out = env.planwright(&["status", "--repo", "repo", "--output", "json"]);
    let status: Value = serde_json::from_slice(&json_out.stdout).unwrap();
    let a = &status["tickets"][0];
    let log = a["log"].as_str().unwrap();
    assert!(env.repo().join(log).is_file(), "{log}");
    assert_eq!(status["tickets"][2]["blocked_by"], "A");

    let human = env.planwright(&["status", "--repo", "repo"]);
    assert_eq!(human.status.code(), Some(0));
    insta::assert_snapshot!(
        "status_failed",
        redact(&text(&human.stdout), &status, env.root())
    );
    let verbose = text(&env.planwright(&["status", "--repo", "repo", "-v"]).stdout);
    assert!(verbose.contains("lint: problem 8"), "{verbose}");

    let md = env.planwright(&["report", "--repo", "repo", "--to", "md"]);
    insta::assert_snapshot!(
        "report_md_failed",
        redact(&text(&md.stdout), &status, env.root())
    );
    let html = text(
        &env.planwright(&["report", "--repo", "repo", "--to", "html"])
            .stdout,
    );
    for needle in [
        "lint: problem 1",
        log,
        "blocked because <a href=\"#t-A\">A</a> failed",
    ] {
        assert!(html.contains(needle), "{needle}: {html}");
    }
    let json = text(
        &env.planwright(&["report", "--repo", "repo", "--to", "json"])
            .stdout,
    );
    assert!(
        json.contains("\"blocked_by\": \"A\"") && json.contains(log),
        "{json}"
    );
}

#[test]
fn preflight_failures_snapshot() {
    let env = sh_env();
    write(&env.repo(), "README.md", "dirty\n");
    let plan = SH_PLAN
        .replace("\"test\", \"-f\"", "\"no-such-gate-program\", \"-f\"")
        .replace(
            "a.txt\", \"op\": \"create\"",
            "README.md\", \"op\": \"create\"",
        );
    write(env.root(), "plan.json", &plan);
    let out = env.planwright(&[
        "preflight",
        "plan.json",
        "--repo",
        "repo",
        "--agent",
        "cmd",
        "--agent-cmd",
        "no-such-agent-program {prompt_file}",
    ]);
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
    write(
        env.root(),
        "planwright.toml",
        "[git]\nallow_config = [\"filter.evil.clean\"]\n",
    );
    let out = env.scripted("run", &["--gate", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// A fake `claude` that fails when it finds anything an earlier ticket's
/// agent left in its slot home, then leaves a file and, where the seeded
/// settings were, a symlink to `outside`; it makes its ticket's file.
fn leaving_claude(outside: &Path) -> String {
    format!(
        r#"#!/bin/sh
cat > /dev/null
h="$CLAUDE_CONFIG_DIR"
if [ -e "$h/planted" ] || [ -L "$h/settings.json" ] || ! grep -q from-the-user "$h/settings.json"; then
  echo "left over in $h: $(ls -A "$h")" >&2
  exit 3
fi
echo planted > "$h/planted"
rm -f "$h/settings.json"
ln -s '{outside}' "$h/settings.json"
echo made > "$(echo "$PLANWRIGHT_TICKET" | tr A-Z a-z).txt"
echo '{{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s","usage":{{"input_tokens":1,"output_tokens":1}}}}'
"#,
        outside = outside.display()
    )
}

/// Runs the three tickets of [`sh_env`] one after the other in one slot
/// with adapter `agent`, its program the fake CLI `script`: all merge.
fn all_three_merge_with_a_fake(env: &Env, agent: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let fake = env.root().join("bin").join(agent);
    write(env.root(), &format!("bin/{agent}"), script);
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = format!("[agent]\nprogram = \"{}\"\n", fake.display());
    write(env.root(), "planwright.toml", &config);
    let out = env.planwright(&[
        "run",
        "plan.json",
        "--repo",
        "repo",
        "--agent",
        agent,
        "--jobs",
        "1",
        "--strikes",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let status = env.status_json();
    assert_eq!(status["counts"]["merged"], 3, "{status}");
}

#[test]
fn a_slots_cli_home_is_reset_to_its_seed_before_each_ticket() {
    let env = sh_env();
    let outside = env.root().join("outside.json");
    write(env.root(), "outside.json", "untouched\n");
    let user = env.cli().home().join(".claude");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("settings.json"), "{\"from-the-user\": true}\n").unwrap();
    all_three_merge_with_a_fake(&env, "claude", &leaving_claude(&outside));
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "untouched\n",
        "seeding wrote through no symlink"
    );
    assert_eq!(
        std::fs::read_to_string(user.join("settings.json")).unwrap(),
        "{\"from-the-user\": true}\n"
    );
}

/// A fake `claude` that fails unless it reads its linked login (in the
/// home, which its view hides but for that file), fails when it sees
/// `~/.ssh` or reaches a socket `connect.py` names, and makes its file.
const SOCKET_PROBING_CLAUDE: &str = r#"#!/bin/sh
cat > /dev/null
[ "$(cat "$CLAUDE_CONFIG_DIR/.credentials.json")" = "the user's login" ] || { echo "no login" >&2; exit 3; }
[ ! -e "$HOME/.ssh" ] || { echo "sees $(ls -A "$HOME/.ssh")" >&2; exit 4; }
python3 "$CONNECT" || exit 5
echo made > a.txt
echo '{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s","usage":{"input_tokens":1,"output_tokens":1}}'
"#;

/// Pathname sockets in a home outside `/tmp` that no list names: an `ssh`
/// `ControlPath` in `~/.ssh` and an `ssh-agent -a` socket in a folder of
/// the home. The test reaches both; neither the agent (a fake `claude`
/// that still reads its linked login there) nor its gate does, as each
/// fails when a connect succeeds.
#[test]
fn no_socket_in_the_home_is_reached_by_agent_or_gate() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::{UnixListener, UnixStream};
    let env = Env::new_in(Path::new("/var/tmp"), &[("README.md", "hi\n")]).with_cli(BIN);
    let home = env.cli().home().to_path_buf();
    write(&home, ".claude/.credentials.json", "the user's login");
    let sockets = [
        home.join(".ssh/cm-git@example.com:22"),
        home.join("work/agent.sock"),
    ];
    let _listening: Vec<UnixListener> = sockets
        .iter()
        .map(|s| {
            std::fs::create_dir_all(s.parent().unwrap()).unwrap();
            UnixListener::bind(s).unwrap()
        })
        .collect();
    for s in &sockets {
        UnixStream::connect(s).unwrap_or_else(|e| panic!("the test reaches {}: {e}", s.display()));
    }
    let connect = env.root().join("connect.py");
    let list: Vec<String> = sockets
        .iter()
        .map(|s| format!("{:?}", s.display().to_string()))
        .collect();
    write(
        env.root(),
        "connect.py",
        &format!(
            "import socket, sys\n\
             for a in [{}]:\n\
             \x20   try:\n\
             \x20       socket.socket(socket.AF_UNIX).connect(a); sys.exit('reached ' + a)\n\
             \x20   except OSError:\n\
             \x20       pass\n",
            list.join(", ")
        ),
    );
    let c = connect.display().to_string();
    let plan = serde_json::json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "sockets", "argv": ["python3", c]}],
        "tickets": [{"id": "A", "title": "a", "body": "make a",
            "scope": [{"pattern": "a.txt", "op": "create"}]}]});
    write(env.root(), "plan.json", &plan.to_string());
    let fake = env.root().join("bin/claude");
    write(env.root(), "bin/claude", SOCKET_PROBING_CLAUDE);
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = format!(
        "[agent]\nprogram = \"{}\"\nenv = [\"CONNECT\"]\n",
        fake.display()
    );
    write(env.root(), "planwright.toml", &config);
    let out = env
        .command()
        .env("CONNECT", &connect)
        .args([
            "run",
            "plan.json",
            "--repo",
            "repo",
            "--agent",
            "claude",
            "--strikes",
            "1",
            // The gate under test is the run's, not preflight's trial.
            "--no-gate-probe",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(env.status_json()["counts"]["merged"], 1);
}

/// A fake `opencode` that fails unless its cache holds the seed alone (the
/// user's `bin` and `packages`, lent, and nothing an earlier ticket's agent
/// left), fails when it can write to either (through the link, or by
/// replacing a file there), then leaves a file in its cache and a `bin` and
/// `packages` of its own in place of the links; it makes its ticket's file.
const LEAVING_OPENCODE: &str = r#"#!/bin/sh
cat > /dev/null
c="$XDG_CACHE_HOME/opencode"
p="$c/packages/plugin/node_modules/plugin/index.js"
if [ -e "$c/planted" ] || [ ! -L "$c/bin" ] || [ "$(cat "$c/bin/rg")" != "the user's rg" ] \
   || [ ! -L "$c/packages" ] || [ "$(cat "$p")" != "the user's plugin" ]; then
  echo "not the seed in $c: $(ls -A "$c")" >&2
  exit 3
fi
if echo tampered 2>/dev/null > "$c/bin/rg" || touch "$c/bin/new" 2>/dev/null \
   || mv "$c/bin/rg" "$c/bin/old" 2>/dev/null || echo tampered 2>/dev/null > "$p" \
   || mkdir "$c/packages/other" 2>/dev/null; then
  echo "wrote a lent folder" >&2
  exit 4
fi
echo planted > "$c/planted"
rm "$c/bin" && mkdir "$c/bin" && echo mine > "$c/bin/rg" || exit 5
rm "$c/packages" && mkdir "$c/packages" || exit 6
echo made > "$(echo "$PLANWRIGHT_TICKET" | tr A-Z a-z).txt"
echo '{"type":"text","sessionID":"s","part":{"text":"Done."}}'
echo '{"type":"done","sessionID":"s"}'
"#;

/// Where a CLI needs a populated cache to start (opencode's `bin`), or
/// would fetch into it what it lacks (opencode's `packages`), planwright
/// lends every slot its copy of the user's, which no attempt writes; the
/// rest of the slot's cache is reset to its seed before each ticket, and
/// the user's folders are never written.
#[test]
fn opencodes_bin_is_lent_read_only_and_its_cache_is_reset_before_each_ticket() {
    let env = sh_env();
    let user_bin = env.cli().home().join(".cache/opencode/bin");
    write(&user_bin, "rg", "the user's rg");
    let user_packages = env.cli().home().join(".cache/opencode/packages");
    let plugin = "plugin/node_modules/plugin/index.js";
    write(&user_packages, plugin, "the user's plugin");
    all_three_merge_with_a_fake(&env, "opencode", LEAVING_OPENCODE);
    assert_eq!(
        std::fs::read_to_string(user_packages.join(plugin)).unwrap(),
        "the user's plugin"
    );
    assert_eq!(
        std::fs::read_dir(&user_bin).unwrap().count(),
        1,
        "nothing added to the user's folder"
    );
    assert_eq!(
        std::fs::read_to_string(user_bin.join("rg")).unwrap(),
        "the user's rg"
    );
}

/// preflight starts the chosen CLI as an attempt would: confined, in a
/// fresh slot home. Fake CLIs on a `PATH` the test makes fail as the real
/// ones did: an opencode that makes its cache under `$HOME` (outside what
/// it may write), a codex whose own sandbox cannot start.
#[test]
fn preflight_starts_the_cli_confined_and_reports_its_own_words() {
    use std::os::unix::fs::PermissionsExt;
    let env = sh_env();
    let bin = env.root().join("bin");
    let fake = |name: &str, body: &str| {
        write(
            env.root(),
            &format!("bin/{name}"),
            &format!("#!/bin/sh\n{body}"),
        );
        let path = bin.join(name);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    let preflight = |agent: &str| {
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let out = env
            .command()
            .env("PATH", path)
            .args(["preflight", "plan.json", "--repo", "repo", "--agent", agent])
            .output()
            .unwrap();
        (out.status.code(), text(&out.stdout))
    };
    let cache = "mkdir -p \"${XDG_CACHE_HOME:-$HOME/.cache}/opencode\" 2>/dev/null || { echo \"EACCES: permission denied, mkdir '$HOME/.cache'\" >&2; exit 1; }\n";
    fake("opencode", cache);
    let (code, out) = preflight("opencode");
    assert_eq!(code, Some(0), "its cache is in its slot home:\n{out}");
    fake(
        "opencode",
        &cache.replace("${XDG_CACHE_HOME:-$HOME/.cache}", "$HOME/.cache"),
    );
    let (code, out) = preflight("opencode");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("error   agent: agent `opencode` did not start as an attempt would")
            && out.contains("EACCES: permission denied, mkdir '"),
        "{out}"
    );

    fake(
        "codex",
        "if [ \"$1\" = sandbox ]; then echo 'bwrap: Failed to make / slave: Operation not permitted' >&2; exit 1; fi\necho 'codex-cli 0.171.0'\n",
    );
    let (code, out) = preflight("codex");
    assert_eq!(
        code,
        Some(0),
        "inside planwright's sandbox codex uses none:\n{out}"
    );
    write(env.root(), "planwright.toml", "[sandbox]\nmode = \"off\"\n");
    let (code, out) = preflight("codex");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("bwrap: Failed to make / slave"), "{out}");
}

/// `./agent.sh`, typed as at a shell, is the script in the directory
/// `run` was started in, not one the ticket's workspace would have to hold.
#[test]
fn a_relative_agent_program_is_found_where_run_was_started() {
    let env = sh_env();
    write(
        env.root(),
        "agent.sh",
        "#!/bin/sh\nt=$(echo \"$PLANWRIGHT_TICKET\" | tr A-Z a-z)\necho x > \"$t.txt\"\n",
    );
    let script = env.root().join("agent.sh");
    let status = Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .unwrap();
    assert!(status.success());
    let args = [
        "plan.json",
        "--repo",
        "repo",
        "--agent",
        "cmd",
        "--agent-cmd",
        "./agent.sh {prompt_file}",
    ];
    let preflight = env.planwright(&[&["preflight"][..], &args].concat());
    assert_eq!(
        preflight.status.code(),
        Some(0),
        "{}",
        text(&preflight.stdout)
    );
    let out = env.planwright(&[&["run"][..], &args, &["--output", "json"]].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["merged"], serde_json::json!(["A", "B", "C"]));
}

/// While a run holds the lock, `preflight` and `run --dry-run` refuse in
/// `run`'s words and with its exit code; once it is released they pass.
#[test]
fn preflight_and_dry_run_report_a_held_run_lock_as_run_does() {
    let env = sh_env();
    let common = git(
        &env.repo(),
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    );
    let lock = PathBuf::from(common.trim()).join("planwright-run.lock");
    let file = std::fs::File::create(&lock).unwrap();
    std::fs::write(&lock, "4242\n").unwrap();
    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    let words = "another `planwright run` (process 4242) is using this repository";
    for out in [
        env.scripted("run", &[]),
        env.scripted("preflight", &[]),
        env.scripted("run", &["--dry-run"]),
    ] {
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{all}");
        assert!(
            all.contains(words) && all.contains("wait for it to finish"),
            "{all}"
        );
    }
    assert!(!env.repo().join("a.txt").exists());
    drop(file);
    assert_eq!(env.scripted("preflight", &[]).status.code(), Some(0));
    assert_eq!(env.scripted("run", &["--dry-run"]).status.code(), Some(0));
}

/// The `N` of a dry run's "up to N at once".
fn dry_run_jobs(env: &Env, extra: &[&str]) -> String {
    let mut args = vec!["--dry-run"];
    args.extend_from_slice(extra);
    let out = env.scripted("run", &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let at = s.find(" at once").unwrap_or_else(|| panic!("{s}"));
    s[..at].rsplit(' ').next().unwrap().to_string()
}

/// The repository root's `planwright.toml` is read from the base commit,
/// after `--config` and the file beside the plan; it is a rail like the
/// plan-side file, and one that is not committed is said to be unread.
#[test]
fn the_repository_roots_configuration_is_read_from_the_base_commit() {
    let env = env_with(&[
        ("README.md", "hi\n"),
        ("planwright.toml", "[run]\njobs = 3\n"),
    ]);
    write(env.root(), "plan.json", SH_PLAN);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("B", 0, "b.txt", "b\n");
    env.fixture("C", 0, "c.txt", "c\n");
    // The working tree is on another branch whose file says otherwise.
    git(&env.repo(), &["checkout", "-q", "-b", "elsewhere"]);
    write(&env.repo(), "planwright.toml", "[run]\njobs = 5\n");
    git(&env.repo(), &["commit", "-qam", "elsewhere"]);
    assert_eq!(dry_run_jobs(&env, &[]), "3");
    // From inside the repository's root, too.
    let inside = env.cli().run(
        &env.repo(),
        &[
            "run",
            "../plan.json",
            "--repo",
            ".",
            "--agent",
            "scripted:../fixtures",
            "--dry-run",
        ],
    );
    assert!(
        text(&inside.stdout).contains("up to 3 at once"),
        "{}",
        text(&inside.stdout)
    );
    // The plan's own file wins, and `--config` over both.
    write(env.root(), "planwright.toml", "[run]\njobs = 2\n");
    assert_eq!(dry_run_jobs(&env, &[]), "2");
    write(env.root(), "other.toml", "[run]\njobs = 4\n");
    assert_eq!(dry_run_jobs(&env, &["--config", "other.toml"]), "4");
    std::fs::remove_file(env.root().join("planwright.toml")).unwrap();

    // A ticket may not change it: a rail, whatever its scope says.
    git(&env.repo(), &["checkout", "-q", "main"]);
    let plan = SH_PLAN.replace(
        r#"{"pattern": "a.txt", "op": "create"}"#,
        r#"{"pattern": "a.txt", "op": "create"}, {"pattern": "planwright.toml", "op": "modify"}"#,
    );
    write(env.root(), "plan.json", &plan);
    env.fixture("A", 0, "planwright.toml", "[sandbox]\nmode = \"off\"\n");
    let out = env.scripted("run", &["--output", "json"]);
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        summary["failed"]["A"]["kind"], "rail_violation",
        "{summary}"
    );
    assert!(
        summary["failed"]["A"]["message"]
            .as_str()
            .unwrap()
            .contains("planwright.toml"),
        "{summary}"
    );

    // One that is not committed is not read, and the user is told.
    let env = env_with(&[("README.md", "hi\n")]);
    write(env.root(), "plan.json", SH_PLAN);
    write(&env.repo(), "planwright.toml", "[run]\njobs = 3\n");
    let out = env.scripted("run", &["--dry-run", "--jobs", "1"]);
    assert!(
        text(&out.stderr)
            .contains("planwright.toml` is not in the base branch `main`, so it is not read"),
        "{}",
        text(&out.stderr)
    );
}

/// The `Planwright-Ticket-Digest` trailers of `ticket`'s merges on `main`,
/// newest first.
fn merged_digests(env: &Env, ticket: &str) -> Vec<String> {
    let log = git(
        &env.repo(),
        &[
            "log",
            "--format=%(trailers:key=Planwright-Ticket,valueonly,separator=,)%x01%(trailers:key=Planwright-Ticket-Digest,valueonly,separator=,)",
            "main",
        ],
    );
    log.lines()
        .filter_map(|l| l.split_once('\u{1}'))
        .filter(|(t, _)| t.trim() == ticket)
        .map(|(_, d)| d.trim().to_string())
        .collect()
}

/// A ticket that created its file is rerun (asked by id, then because its
/// definition changed): its own earlier `create` does not stop it, and
/// each merge carries the digest of the definition it was made from.
#[test]
fn a_ticket_that_created_a_file_runs_again_and_merges_again() {
    let env = sh_env();
    let first = env.scripted("run", &[]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let digest = merged_digests(&env, "A");
    assert_eq!(digest.len(), 1);

    env.fixture("A", 0, "a.txt", "a again\n");
    let pre = env.scripted("run", &["--rerun", "A", "--dry-run"]);
    assert_eq!(pre.status.code(), Some(0), "{}", text(&pre.stdout));
    let again = env.scripted("run", &["--rerun", "A", "--output", "json"]);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}{}",
        text(&again.stdout),
        text(&again.stderr)
    );
    let summary: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(
        summary["merged"],
        serde_json::json!(["A", "B", "C"]),
        "{summary}"
    );
    assert_eq!(
        std::fs::read_to_string(env.repo().join("a.txt")).unwrap(),
        "a again\n"
    );
    assert_eq!(
        merged_digests(&env, "A"),
        [digest[0].clone(), digest[0].clone()]
    );

    // A changed definition runs again with `--rerun-changed`; its merge
    // carries the new digest, so the next run counts it merged.
    let plan = SH_PLAN.replace("\"make a\"", "\"make a, once more\"");
    write(env.root(), "plan.json", &plan);
    env.fixture("A", 0, "a.txt", "a thrice\n");
    let changed = env.scripted("run", &["--rerun-changed", "--output", "json"]);
    assert_eq!(
        changed.status.code(),
        Some(0),
        "{}{}",
        text(&changed.stdout),
        text(&changed.stderr)
    );
    let digests = merged_digests(&env, "A");
    assert_eq!(digests.len(), 3, "{digests:?}");
    assert_ne!(digests[0], digest[0]);
    let after = env.scripted("run", &["--output", "json"]);
    let summary: Value = serde_json::from_slice(&after.stdout).unwrap();
    assert_eq!(summary["changed"], serde_json::json!([]), "{summary}");
    assert_eq!(merged_digests(&env, "A").len(), 3);
}

#[test]
fn plain_output_says_every_heartbeat_what_each_running_ticket_does() {
    let env = env_with(&[("README.md", "hi\n")]);
    write(
        env.root(),
        "plan.json",
        r#"{"planwright": 1, "source_format": "native", "base": "main",
  "gates": [{"name": "readme", "argv": ["test", "-f", "README.md"]}],
  "tickets": [{"id": "A", "title": "a", "body": "make a", "scope": [{"pattern": "a.txt", "op": "create"}]}]}"#,
    );
    // The agent works until the test has seen a heartbeat (or a minute).
    let go = env.root().join("go");
    let script = env.root().join("agent.sh");
    let body = format!(
        "i=0\nwhile [ ! -f '{}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\necho a > a.txt\n",
        go.display()
    );
    std::fs::write(&script, body).unwrap();
    let agent_cmd = format!("sh {}", script.display());
    let mut child = env
        .command()
        .args(["run", "plan.json", "--repo", "repo", "--agent", "cmd"])
        .args(["--agent-cmd", &agent_cmd, "--heartbeat", "1s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = vec![];
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    for line in std::io::BufRead::lines(stdout) {
        let line = line.unwrap();
        if line.contains(" A still running (attempt 1, ") {
            std::fs::write(&go, "").unwrap();
        }
        lines.push(line);
    }
    let all = lines.join("\n");
    assert_eq!(child.wait().unwrap().code(), Some(0), "{all}");
    let beat = lines
        .iter()
        .position(|l| l.contains(" A still running (attempt 1, agent, "))
        .unwrap_or_else(|| panic!("no heartbeat line:\n{all}"));
    assert!(lines[beat].ends_with("s)"), "{all}");
    let finished = lines
        .iter()
        .position(|l| l.contains(" finished: "))
        .unwrap();
    assert!(beat < finished, "{all}");
    assert!(
        lines[finished..]
            .iter()
            .all(|l| !l.contains("still running")),
        "no heartbeat after the run: {all}"
    );
}
