//! What `status`, `report` and `run --json` say of a run, end to end:
//! counts, usage and cost per attempt, ticket and run, and why a ticket
//! failed or was blocked (snapshots of the human output).

mod common;

use common::*;
use planwright_testkit::{git, text, write, Cli, Env};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

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
