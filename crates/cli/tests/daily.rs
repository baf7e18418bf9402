//! The daily loop of a new user: any base branch, retries an agent can
//! read, one run per plan, reruns that stay merged (docs/running.md).

use planwright_testkit::{assert_says, git, text, write, Env, STANDARD_V1_README};
use serde_json::Value;
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// `files` committed in `repo/` on the branch `master` (as many projects
/// are), the binary run in the root.
fn on_master(files: &[(&str, &str)]) -> Env {
    Env::new(files).with_cli(BIN).on_master()
}

/// A plan of another tool, from the plan crate's fixtures.
fn foreign_fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../plan/tests/data/foreign")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// `COMMAND PLAN --repo repo --agent scripted:... EXTRA...` in `env`.
fn scripted(env: &Env, command: &str, plan: &str, extra: &[&str]) -> std::process::Output {
    let agent = format!("scripted:{}", env.fixtures().display());
    let mut args = vec![command, plan, "--repo", "repo", "--agent", &agent];
    args.extend_from_slice(extra);
    env.planwright(&args)
}

fn summary(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)))
}

const CODEBOOST: &str = r#"{
  "schema_version": 1, "issue": 7, "revision": 1, "summary": "one step", "questions": [],
  "items": [
    {"id": "P1", "title": "add a", "intent": "Create a.txt.",
     "files": [{"path": "a.txt", "kind": "add", "renamed_from": null, "change": "new"}],
     "acceptance": [{"type": "cmd", "text": "test -f a.txt"}], "depends_on": []}
  ]
}"#;

const BASE_FILES: [(&str, &str); 3] = [
    ("README.md", "hi\n"),
    ("src/__init__.py", "\n"),
    ("src/existing.py", "\n"),
];

#[test]
fn plans_of_five_formats_run_on_a_repository_whose_branch_is_master() {
    // Each case: the plan file, its text, the fixtures, the tickets merged.
    type Case = (&'static str, String, Vec<(&'static str, &'static str)>);
    let cases: Vec<Case> = vec![
        ("plan.json", CODEBOOST.into(), vec![("P1", "a.txt")]),
        (
            "plan.json",
            STANDARD_V1_README.into(),
            vec![("W-1", "README.md")],
        ),
        (
            "tasks.json",
            foreign_fixture("taskmaster.tasks.json"),
            vec![("2", "src/greet.py"), ("3", "README.md")],
        ),
        (
            "implementation_plan.json",
            foreign_fixture("autoclaude.implementation_plan.json"),
            vec![
                ("subtask-1-1", "src/greet.py"),
                ("subtask-1-2", "src/__init__.py"),
                ("subtask-2-1", "README.md"),
                ("subtask-2-2", "notes.txt"),
            ],
        ),
        (
            "tasks.md",
            foreign_fixture("speckit.tasks.md"),
            vec![
                ("T002", "config/greeting.toml"),
                ("T003", "tests/test_greeting.py"),
                ("T004", "src/models/greeter.py"),
                ("T005", "src/models/name.py"),
                ("T006", "src/services/greeting.py"),
                ("T007", "docs/greeting.md"),
                ("T008", "NOTES.md"),
            ],
        ),
    ];
    for (file, plan, fixtures) in cases {
        let env = on_master(&BASE_FILES);
        write(env.root(), file, &plan);
        write(
            env.root(),
            "planwright.toml",
            "[commands]\nallow = [[\"test\", \"-f\", \"a.txt\"]]\n",
        );
        for (id, path) in &fixtures {
            env.fixture(id, 0, path, &format!("{id}\n"));
        }
        let gate = ["--gate", "test -f README.md"];
        let pre = scripted(&env, "preflight", file, &gate);
        let said = text(&pre.stdout);
        assert_eq!(pre.status.code(), Some(0), "{file}: {said}");
        assert!(
            said.contains("ok      base: base branch `master` (the repository's current branch;"),
            "{file}: {said}"
        );
        let out = scripted(&env, "run", file, &["--output", "json", gate[0], gate[1]]);
        let s = summary(&out);
        let mut merged: Vec<&str> = (s["merged"].as_array().unwrap().iter())
            .map(|v| v.as_str().unwrap())
            .collect();
        merged.sort();
        let mut want: Vec<&str> = fixtures.iter().map(|(id, _)| *id).collect();
        want.sort();
        assert_eq!(merged, want, "{file}: {s}");
        let (id, path) = fixtures[0];
        let landed = git(&env.repo(), &["show", &format!("master:{path}")]);
        assert_eq!(landed, id, "{file}");
    }
}

#[test]
fn base_names_the_branch_over_run_base_and_a_missing_one_names_the_flag() {
    let env = on_master(&BASE_FILES);
    git(&env.repo(), &["branch", "develop"]);
    write(env.root(), "plan.json", STANDARD_V1_README);
    env.fixture("W-1", 0, "README.md", "hello\n");
    // The gate fails on the base by design: the ticket makes it pass.
    let gate = ["--gate", "grep -q hello README.md", "--allow-red-base"];
    // `[run] base` names a branch that does not exist: the hint says how
    // to name another.
    write(env.root(), "planwright.toml", "[run]\nbase = \"trunk\"\n");
    let out = scripted(&env, "preflight", "plan.json", &gate);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("error   base: the base branch `trunk` (from `[run] base`) does not exist"),
        "{said}"
    );
    assert!(said.contains("`--base BRANCH` or `[run] base`"), "{said}");
    // `--base` wins over the file.
    let out = scripted(
        &env,
        "run",
        "plan.json",
        &[
            "--base", "develop", gate[0], gate[1], gate[2], "--output", "json",
        ],
    );
    assert_eq!(summary(&out)["merged"], serde_json::json!(["W-1"]));
    assert_eq!(git(&env.repo(), &["show", "develop:README.md"]), "hello");
    assert_eq!(git(&env.repo(), &["show", "master:README.md"]), "hi");
    // A name git refuses is a usage error naming the flag.
    let out = scripted(&env, "preflight", "plan.json", &["--base", "a..b"]);
    assert_eq!(out.status.code(), Some(2));
    assert_says(&out.stderr, "`--base` `a..b` is not a valid branch name");
}

#[test]
fn a_plan_that_names_its_base_keeps_it_and_a_detached_head_asks_for_one() {
    let env = on_master(&BASE_FILES);
    // An agb plan's own `base` (agb itself defaults to `main`).
    let agb = r#"{"repo": "repo", "base": "master", "gate": {"test": "test -f README.md"},
      "tickets": [{"id": "T1", "title": "t", "body": "Create a.txt.", "scope": ["a.txt"]}]}"#;
    write(env.root(), "plan.json", agb);
    let out = scripted(&env, "preflight", "plan.json", &["--no-strict-gates"]);
    let said = text(&out.stdout);
    assert!(
        said.contains("ok      base: base branch `master` (the plan's `base`)"),
        "{said}{}",
        text(&out.stderr)
    );
    // A format without a base on a detached HEAD: nothing to guess.
    write(env.root(), "plan.json", STANDARD_V1_README);
    git(&env.repo(), &["checkout", "-q", "--detach"]);
    let out = scripted(&env, "preflight", "plan.json", &["--gate", "true"]);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("error   base: a standard_v1 plan names no base branch, and the repository's `HEAD` is on no branch"),
        "{said}"
    );
    assert!(said.contains("`--base BRANCH`"), "{said}");
}

/// Attempt 1 leaves a change inside the scope with everything planwright
/// rejects beside it; attempt 2 reports what its workspace shows.
const RETRYING_AGENT: &str = r#"cd "$1"
if [ "$2" = 1 ]; then
  echo one > a.txt
  echo stray > stray.txt
  echo changed > rail.txt
  echo 'exit 0' > check.sh
  ln -s ../../../../outside link
  exit 0
fi
echo "HEAD $(git rev-parse HEAD)"
echo "STATUS"
git status --porcelain
echo "DIFF"
git diff
for f in stray.txt link; do
  if [ -e "$f" ] || [ -L "$f" ]; then echo "LEFT $f"; fi
done
echo "RAIL $(cat rail.txt)"
echo "CHECK $(cat check.sh)"
git checkout -- a.txt
echo "RESTORED $(cat a.txt)"
echo two > a.txt
"#;

#[test]
fn a_retry_shows_the_earlier_change_uncommitted_on_the_base_without_what_was_rejected() {
    let check = "grep -q two a.txt\n";
    let env = on_master(&[
        ("a.txt", "base\n"),
        ("rail.txt", "rail\n"),
        ("check.sh", check),
    ]);
    let plan = serde_json::json!({
        "planwright": 1, "source_format": "native", "base": "master",
        "gates": [{"name": "check", "argv": ["sh", "check.sh"]}],
        "tickets": [{"id": "T1", "title": "t", "body": "Change a.txt.",
                     "scope": [{"pattern": "a.txt", "op": "modify"}], "rails": ["rail.txt"]}]
    });
    write(env.root(), "plan.json", &plan.to_string());
    write(env.root(), "agent.sh", RETRYING_AGENT);
    let agent_cmd = format!(
        "sh {} {{workspace}} {{attempt}}",
        env.root().join("agent.sh").display()
    );
    let out = env.cmd_agent("run", &agent_cmd, &["--output", "json", "--allow-red-base"]);
    let s = summary(&out);
    assert_eq!(s["merged"], serde_json::json!(["T1"]), "{s}");
    let base = git(&env.repo(), &["rev-parse", "master~1"]);
    let log = env.run_file("T1/attempt-2.agent.log");
    assert!(log.contains(&format!("HEAD {base}")), "{log}");
    let status = log
        .split("STATUS\n")
        .nth(1)
        .unwrap()
        .split("DIFF\n")
        .next()
        .unwrap();
    assert_eq!(status.trim(), "M a.txt", "{log}");
    assert!(log.contains("-base\n+one"), "{log}");
    assert!(!log.contains("LEFT"), "{log}");
    assert!(log.contains("RAIL rail\n"), "{log}");
    assert!(log.contains("CHECK grep -q two a.txt\n"), "{log}");
    assert!(log.contains("RESTORED base\n"), "{log}");
    let prompt = env.run_file("T1/attempt-2.prompt.md");
    let short = &base[..12];
    assert!(
        prompt.contains(&format!(
            "as uncommitted changes on the base commit `{short}`"
        )),
        "{prompt}"
    );
    assert!(
        prompt.contains(&format!("`git diff {short}` shows it whole")),
        "{prompt}"
    );
    for dropped in ["check.sh", "link", "rail.txt", "stray.txt"] {
        assert!(
            prompt.contains(&format!("\n- `{dropped}`: ")),
            "{dropped}: {prompt}"
        );
    }
    assert_eq!(git(&env.repo(), &["show", "master:a.txt"]), "two");
}

/// A native plan on `master` of one ticket creating `<id>.txt`.
fn one_ticket(id: &str) -> String {
    serde_json::json!({
        "planwright": 1, "source_format": "native", "base": "master",
        "gates": [{"name": "true", "argv": ["true"]}],
        "tickets": [{"id": id, "title": id, "body": "Create it.",
                     "scope": [{"pattern": format!("{id}.txt"), "op": "create"}]}]
    })
    .to_string()
}

#[test]
fn a_second_plan_starts_its_own_run_unless_continue_says_otherwise() {
    let env = on_master(&BASE_FILES);
    write(env.root(), "first.json", &one_ticket("P1"));
    write(env.root(), "second.json", &one_ticket("Q1"));
    env.fixture("P1", 0, "P1.txt", "p\n");
    env.fixture("Q1", 0, "Q1.txt", "q\n");
    let first = summary(&scripted(&env, "run", "first.json", &["--output", "json"]));
    let first_run = first["run"].as_str().unwrap().to_string();
    assert_eq!(first["merged"], serde_json::json!(["P1"]), "{first}");
    // The dry run of the other plan says what will happen.
    let dry = scripted(&env, "run", "second.json", &["--dry-run"]);
    let said = text(&dry.stdout);
    assert!(
        said.contains(&format!("starts a new run on `master`: run {first_run} there is of another plan (`first.json`); `--continue` continues it instead")),
        "{said}"
    );
    let second = scripted(&env, "run", "second.json", &["--output", "json"]);
    let second = summary(&second);
    assert_eq!(second["merged"], serde_json::json!(["Q1"]), "{second}");
    assert_ne!(second["run"], first["run"], "{second}");
    // The first run keeps its ticket; the first plan continues its own run.
    let status = env.planwright(&[
        "status", "--repo", "repo", "--run", &first_run, "--output", "json",
    ]);
    assert_says(&status.stdout, "\"P1\"");
    let dry = scripted(&env, "run", "first.json", &["--dry-run"]);
    assert_says(
        &dry.stdout,
        &format!("continues run {first_run} on `master`"),
    );
    // `--continue` takes up the newest run whatever its plan.
    write(env.root(), "third.json", &one_ticket("R1"));
    let dry = scripted(&env, "run", "third.json", &["--dry-run", "--continue"]);
    let second_run = second["run"].as_str().unwrap();
    assert_says(
        &dry.stdout,
        &format!("continues run {second_run} on `master`"),
    );
}

/// A native plan on `master` of tickets each creating `<id>.txt`.
fn tickets_creating(ids: &[&str]) -> String {
    let tickets: Vec<Value> = (ids.iter())
        .map(|id| {
            serde_json::json!({"id": id, "title": id, "body": "Create it.",
                "scope": [{"pattern": format!("{id}.txt"), "op": "create"}]})
        })
        .collect();
    serde_json::json!({
        "planwright": 1, "source_format": "native", "base": "master",
        "gates": [{"name": "true", "argv": ["true"]}], "tickets": tickets
    })
    .to_string()
}

#[test]
fn a_ticket_removed_from_the_plan_keeps_its_history_in_every_view_until_it_comes_back() {
    let env = on_master(&BASE_FILES);
    write(env.root(), "plan.json", &tickets_creating(&["P1", "P2"]));
    env.fixture("P1", 0, "P1.txt", "p\n");
    env.fixture("P2", 0, "P2.txt", "q\n");
    env.fixture("P3", 0, "P3.txt", "r\n");
    let first = summary(&scripted(&env, "run", "plan.json", &["--output", "json"]));
    assert_eq!(first["merged"], serde_json::json!(["P1", "P2"]), "{first}");
    // The same plan file, edited: P1 out, P3 in.
    write(env.root(), "plan.json", &tickets_creating(&["P2", "P3"]));
    let second = scripted(&env, "run", "plan.json", &[]);
    let said = text(&second.stderr) + &text(&second.stdout);
    assert!(
        said.contains("P1: no longer in the plan; kept in the run's views as removed"),
        "{said}"
    );
    let status = |extra: &[&str]| {
        let mut args = vec!["status", "--repo", "repo"];
        args.extend_from_slice(extra);
        env.planwright(&args)
    };
    let json = summary(&status(&["--output", "json"]));
    assert_eq!(json["run"]["id"], first["run"], "{json}");
    let ticket = |json: &Value, id: &str| -> Value {
        let all = json["tickets"].as_array().unwrap();
        all.iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} in {json}"))
    };
    let p1 = ticket(&json, "P1");
    assert_eq!(
        (&p1["removed"], &p1["state"]),
        (&Value::Bool(true), &Value::from("merged")),
        "{p1}"
    );
    assert_eq!(p1["attempts"].as_array().unwrap().len(), 1, "{p1}");
    assert_eq!(ticket(&json, "P3")["removed"], false);
    assert_eq!(
        (&json["run"]["removed_count"], &json["run"]["merged_count"]),
        (&Value::from(1), &Value::from(2)),
        "{json}"
    );
    let shown = text(&status(&[]).stdout);
    assert!(shown.contains("2 tickets: 2 merged, 0 failed, 0 blocked, 0 running, 0 pending; 1 removed from the plan"), "{shown}");
    let (plan_part, removed_part) = shown
        .split_once("removed from the plan (kept")
        .expect("a heading");
    assert!(!plan_part.contains("\nP1 "), "{shown}");
    assert!(
        removed_part
            .lines()
            .any(|l| l.starts_with("P1 ") && l.contains("merged")),
        "{shown}"
    );
    let md = text(
        &env.planwright(&["report", "--repo", "repo", "--to", "md"])
            .stdout,
    );
    assert!(
        md.contains("| P1 | P1 | merged (removed from the plan) | 1 |"),
        "{md}"
    );
    let html = text(
        &env.planwright(&["report", "--repo", "repo", "--to", "html"])
            .stdout,
    );
    assert!(
        html.contains("<span class=\"badge st-removed\">removed</span>"),
        "{html}"
    );
    let watch = ["watch", "--repo", "repo", "--once", "100x30"];
    let frame = text(&env.planwright(&watch).stdout);
    let (_, after) = frame
        .split_once("removed from the plan")
        .expect("watch's heading");
    let row = after
        .lines()
        .find(|l| l.contains("P1"))
        .unwrap_or_else(|| panic!("{frame}"));
    assert!(row.contains("removed"), "{frame}");
    // Back in the plan: no longer removed, still merged, not run again.
    write(
        env.root(),
        "plan.json",
        &tickets_creating(&["P1", "P2", "P3"]),
    );
    let third = summary(&scripted(&env, "run", "plan.json", &["--output", "json"]));
    assert_eq!(third["run"], first["run"], "{third}");
    let json = summary(&status(&["--output", "json"]));
    let p1 = ticket(&json, "P1");
    assert_eq!(
        (&p1["removed"], &p1["state"]),
        (&Value::Bool(false), &Value::from("merged")),
        "{p1}"
    );
    assert_eq!(
        p1["attempts"].as_array().unwrap().len(),
        1,
        "not run again: {p1}"
    );
    assert_eq!(json["run"]["removed_count"], 0, "{json}");
}

#[test]
fn a_rerun_that_changes_nothing_stays_merged() {
    let env = on_master(&BASE_FILES);
    write(env.root(), "plan.json", &one_ticket("P1"));
    env.fixture("P1", 0, "P1.txt", "p\n");
    let first = summary(&scripted(&env, "run", "plan.json", &["--output", "json"]));
    assert_eq!(first["merged"], serde_json::json!(["P1"]), "{first}");
    let merged = git(&env.repo(), &["rev-parse", "master"]);
    // The scripted agent writes the same file again: nothing changes.
    let again = scripted(&env, "run", "plan.json", &["--rerun", "P1"]);
    let said = text(&again.stdout);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{said}{}",
        text(&again.stderr)
    );
    assert!(
        said.contains(&format!(
            "P1: nothing to change; stays merged as {}",
            &merged[..10]
        )),
        "{said}"
    );
    assert!(!said.contains("empty_diff"), "{said}");
    assert!(said.contains("1 merged, 0 failed"), "{said}");
    let status = env.status_json();
    assert_eq!(status["tickets"][0]["state"], "merged", "{status}");
    assert_eq!(
        status["tickets"][0]["attempts"][1]["phase"], "unchanged",
        "{status}"
    );
    assert_eq!(status["counts"]["failed"], 0, "{status}");
    assert_eq!(git(&env.repo(), &["rev-parse", "master"]), merged);
    // Its merge counts again: the next run skips it.
    let third = summary(&scripted(&env, "run", "plan.json", &["--output", "json"]));
    assert_eq!(third["merged"], serde_json::json!(["P1"]), "{third}");
    assert_eq!(third["failed"], serde_json::json!({}), "{third}");
    assert_eq!(git(&env.repo(), &["rev-parse", "master"]), merged);
}

#[test]
fn a_gate_naming_a_script_or_target_that_is_not_there_is_an_error_with_did_you_mean() {
    let env = on_master(&[
        ("README.md", "hi\n"),
        (
            "package.json",
            "{\"scripts\": {\"test\": \"node --test\", \"lint\": \"true\"}}\n",
        ),
        ("Makefile", "check:\n\ttrue\n"),
    ]);
    write(env.root(), "plan.json", STANDARD_V1_README);
    for (gate, said) in [
        (
            "npm run tset",
            "the gate `npm run tset` cannot run: `tset` is not a script of `package.json` on the base",
        ),
        ("npm run test", ""),
        ("make chekc", "the gate `make chekc` cannot run: `chekc` is not a target of `Makefile` on the base"),
        ("make check", ""),
    ] {
        let out = scripted(&env, "preflight", "plan.json", &["--gate", gate]);
        let stdout = text(&out.stdout);
        if said.is_empty() {
            assert!(!stdout.contains("cannot run"), "{gate}: {stdout}");
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{gate}: {stdout}");
        assert!(stdout.contains(&format!("error   gates: {said}")), "{gate}: {stdout}");
        let fixed = gate.replace("tset", "test").replace("chekc", "check");
        assert!(
            stdout.contains(&format!("hint: did you mean `{fixed}`?")),
            "{gate}: {stdout}"
        );
    }
}

const NODE_PROJECT: [(&str, &str); 4] = [
    ("README.md", "hi\n"),
    (".gitignore", "node_modules/\n"),
    (
        "package.json",
        "{\"scripts\": {\"test\": \"node -e \\\"require('dep')\\\"\"}}\n",
    ),
    (
        "package-lock.json",
        "{\"lockfileVersion\": 3, \"packages\": {}}\n",
    ),
];

#[test]
fn preflight_runs_the_gates_on_the_base_and_names_the_set_up_a_lock_file_needs() {
    let env = on_master(&NODE_PROJECT);
    // The user's own checkout has the dependency installed: a gate that
    // found it by walking up would pass where a fresh clone fails.
    let dep = "node_modules/dep/index.js";
    write(&env.repo(), dep, "module.exports = 1\n");
    env.fixture("W-1", 0, "README.md", "hello\n");
    write(env.root(), "plan.json", STANDARD_V1_README);
    let gate = ["--gate", "npm test"];
    let out = scripted(&env, "preflight", "plan.json", &gate);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    // The checkout is in the user's cache, not below the repository.
    assert!(!env.repo().join(".planwright/checkouts").exists());
    let cache = env.root().join("home/.cache/planwright/checkouts");
    let held: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(held.len() == 1 && held[0].starts_with("repo-"), "{held:?}");
    let probed = cache.join(&held[0]).join("slot-1/package.json");
    assert!(probed.is_file(), "{}", probed.display());
    assert!(
        said.contains("error   gate-probe: on the base commit "),
        "{said}"
    );
    assert!(said.contains("Cannot find module 'dep'"), "{said}");
    assert!(
        said.contains("add `setup = [[\"npm\", \"ci\"]]` to `[workspace]` in planwright.toml"),
        "{said}"
    );
    assert!(
        said.contains("warning setup: there is no `[workspace] setup`"),
        "{said}"
    );
    // Allowed, it is a warning; skipped, it is not tried.
    let out = scripted(
        &env,
        "preflight",
        "plan.json",
        &["--gate", "npm test", "--allow-red-base"],
    );
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("warning gate-probe: on the base commit "),
        "{said}"
    );
    let out = scripted(
        &env,
        "preflight",
        "plan.json",
        &["--gate", "npm test", "--no-gate-probe"],
    );
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(!said.contains("gate-probe"), "{said}");
    // A run's gate finds no more than the probe did.
    let out = scripted(
        &env,
        "run",
        "plan.json",
        &[
            "--gate",
            "npm test",
            "--no-gate-probe",
            "--strikes",
            "1",
            "--output",
            "json",
        ],
    );
    let run = summary(&out);
    assert_eq!(run["failed"]["W-1"]["kind"], "gate_failure", "{run}");
    // `validate` says it too.
    let npm_ci = "add `setup = [[\"npm\", \"ci\"]]` to `[workspace]`";
    let validate = |env: &Env| env.planwright(&["validate", "plan.json", "--repo", "repo"]);
    let out = validate(&env);
    assert_eq!(out.status.code(), Some(0));
    assert_says(&out.stdout, npm_ci);
    assert!(text(&out.stdout).contains("warning[plan.setup.missing]"));
    // A set-up that installs what the gate needs makes the base green.
    let setup = "[workspace]\nsetup = [[\"sh\", \"-c\", \"mkdir -p node_modules/dep && echo 'module.exports = 1' > node_modules/dep/index.js\"]]\n";
    write(env.root(), "planwright.toml", setup);
    let out = scripted(&env, "preflight", "plan.json", &gate);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("ok      gate-probe: `npm test` pass on the base commit "),
        "{said}"
    );
    assert!(!text(&validate(&env).stdout).contains("setup"));
    // And the run's gate passes: the ticket failed above merges now.
    let out = scripted(
        &env,
        "run",
        "plan.json",
        &["--gate", "npm test", "--output", "json"],
    );
    let run = summary(&out);
    assert_eq!(run["merged"], serde_json::json!(["W-1"]), "{run}");
}

/// The scripted agent's folder may be relative to where planwright starts:
/// its `patch` applies in the workspace all the same.
#[test]
fn the_scripted_agents_patch_applies_from_a_relative_folder() {
    let env = on_master(&BASE_FILES);
    let patch = "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-hi\n+hello\n";
    write(&env.fixture_dir("W-1", 0), "patch", patch);
    write(env.root(), "plan.json", STANDARD_V1_README);
    let fixtures = env.fixtures();
    let relative = fixtures.strip_prefix(env.root()).unwrap();
    let agent = format!("scripted:{}", relative.display());
    let out = env.with_agent("run", &agent, &["--gate", "true"]);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", text(&out.stderr));
    assert_eq!(git(&env.repo(), &["show", "master:README.md"]), "hello");
}

/// `run -h` shows the flags people use first and points at `--help`,
/// which shows every flag and two examples.
#[test]
fn run_short_help_shows_the_first_flags_and_long_help_all() {
    let env = on_master(&BASE_FILES);
    let short = text(&env.planwright(&["run", "-h"]).stdout);
    for flag in [
        "--repo",
        "--agent",
        "--gate",
        "--base",
        "--dry-run",
        "--continue",
    ] {
        assert!(short.contains(flag), "{flag}: {short}");
    }
    for flag in ["--heartbeat", "--coerce", "--output", "--color"] {
        assert!(!short.contains(flag), "{flag}: {short}");
    }
    assert!(short.contains("more: `planwright run --help`"), "{short}");
    let long = text(&env.planwright(&["run", "--help"]).stdout);
    for flag in [
        "--heartbeat",
        "--coerce",
        "--output",
        "--color",
        "Examples:",
    ] {
        assert!(long.contains(flag), "{flag}: {long}");
    }
    assert!(!long.contains("more: `planwright run --help`"), "{long}");
}

/// `status` colours each ticket's state with `--color always` (over
/// `NO_COLOR`, which the test's environment sets), and not by default.
#[test]
fn status_colours_states_as_color_says() {
    let env = on_master(&BASE_FILES);
    env.fixture("W-1", 0, "README.md", "hello\n");
    write(env.root(), "plan.json", STANDARD_V1_README);
    let out = scripted(&env, "run", "plan.json", &["--gate", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let status = |extra: &[&str]| {
        let args = [&["status", "--repo", "repo"][..], extra].concat();
        text(&env.planwright(&args).stdout)
    };
    assert!(status(&["--color", "always"]).contains("\x1b[32mmerged"));
    let plain = status(&[]);
    assert!(
        plain.contains("merged") && !plain.contains('\x1b'),
        "{plain}"
    );
}

/// `run` colours its lines and its end summary as `status` colours states:
/// with `--color always`, with `auto` when `CLICOLOR_FORCE` says so, never
/// with `NO_COLOR` (which the test's environment sets) or when piped.
#[test]
fn run_colours_its_lines_and_summary_as_color_says() {
    let env = on_master(&BASE_FILES);
    write(env.root(), "plan.json", &tickets_creating(&["P1", "P2"]));
    env.fixture("P1", 0, "P1.txt", "p\n");
    // P2's agent writes outside its scope: it fails.
    for n in 0..3 {
        env.fixture("P2", n, "README.md", "out of scope\n");
    }
    let always = scripted(&env, "run", "plan.json", &["--color", "always"]);
    let said = text(&always.stdout);
    assert!(said.contains("\x1b[32mP1: merged as "), "{said}");
    assert!(said.contains("\x1b[33mP2: attempt 1 rejected: "), "{said}");
    assert!(said.contains("\x1b[31mP2: FAILED: "), "{said}");
    assert!(said.contains("\x1b[31mfailed:\x1b[0m P2: "), "{said}");
    // Piped, with `NO_COLOR` set: plain.
    let plain = text(&scripted(&env, "run", "plan.json", &[]).stdout);
    assert!(
        plain.contains("P2: FAILED: ") && !plain.contains('\x1b'),
        "{plain}"
    );
    // `auto`, no `NO_COLOR`, piped: plain; `CLICOLOR_FORCE` turns it on.
    let agent = format!("scripted:{}", env.fixtures().display());
    let auto = |force: Option<&str>| {
        let mut cmd = env.command();
        cmd.env_remove("NO_COLOR");
        if let Some(v) = force {
            cmd.env("CLICOLOR_FORCE", v);
        }
        let args = ["run", "plan.json", "--repo", "repo", "--agent", &agent];
        text(&cmd.args(args).output().unwrap().stdout)
    };
    let piped = auto(None);
    assert!(
        piped.contains("P2: FAILED: ") && !piped.contains('\x1b'),
        "{piped}"
    );
    let forced = auto(Some("1"));
    assert!(
        forced.contains("\x1b[32mP1: merged by an earlier run"),
        "{forced}"
    );
    assert!(forced.contains("\x1b[31mfailed:\x1b[0m P2: "), "{forced}");
}

/// The commands whose examples need no agent, run, forge or network: they
/// run as written in a Node project that `planwright init` set up.
const OFFLINE: [&str; 8] = [
    "init",
    "validate",
    "convert",
    "schema",
    "show",
    "graph",
    "completions",
    "man",
];

/// Every example of these commands' `--help` runs and exits 0, but those
/// naming a file or folder the project lacks (`../app`, `tasks.json`).
/// (That every command has examples the parser takes is a unit test of
/// the binary's `examples` module.)
#[test]
fn the_offline_examples_of_every_help_run() {
    let env = on_master(&[("package.json", r#"{"scripts": {"test": "node -e 0"}}"#)]);
    let mut ran = Vec::new();
    for command in OFFLINE {
        let help = text(&env.planwright(&[command, "--help"]).stdout);
        let (_, examples) = help
            .split_once("Examples:")
            .unwrap_or_else(|| panic!("{help}"));
        for line in examples.lines() {
            let line = line.split("  #").next().unwrap().trim();
            let Some(args) = line.strip_prefix("planwright ") else {
                continue;
            };
            if ["../app", "tasks.json"].iter().any(|f| args.contains(f)) {
                continue;
            }
            let args: Vec<&str> = args.split(' ').collect();
            let out = env.cli().run(&env.repo(), &args);
            assert_eq!(out.status.code(), Some(0), "{line}: {}", text(&out.stderr));
            ran.push(line.to_string());
        }
    }
    assert!(ran.len() >= 12, "{ran:?}");
    assert!(env.repo().join("plan.dot").is_file() && env.repo().join("man1").is_dir());
}
