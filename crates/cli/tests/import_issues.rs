//! `planwright import issues` end to end: from the fake GitHub's labelled
//! issues to a plan, run with the scripted agent, and delivered (dry run)
//! with one `Closes #N` per ticket's issue.

use planwright_testkit::forge::{Api, FakeForge, TOKEN};
use planwright_testkit::{git, text, Env};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// A repository with a GitHub remote, `[forge]` pointing at a fake GitHub
/// holding issues #1 (`a.txt`, a task) and #2 (`b.txt`, depends on #1),
/// both labelled `pw`, and #3 (open, unlabelled).
fn setup(per: &str) -> (Env, FakeForge) {
    let env = Env::new(&[("README.md", "hello\n")]).with_cli(BIN);
    git(
        &env.repo(),
        &["remote", "add", "origin", "https://github.com/acme/app.git"],
    );
    let forge = FakeForge::start(Api::Github);
    forge.add_repository("acme/app");
    let a = forge.add_issue("acme/app", "Add a", "Create `a.txt`.\n\n- [ ] a.txt says a");
    let b = forge.add_issue("acme/app", "Add b", "Depends on #1\n\nFiles: b.txt");
    forge.add_issue("acme/app", "Later", "not yet");
    forge.label("acme/app", a, &["pw"]);
    forge.label("acme/app", b, &["pw"]);
    std::fs::write(
        env.root().join("planwright.toml"),
        format!(
            "[forge]\nkind = \"github\"\napi_url = \"{}\"\nper = \"{per}\"\n",
            forge.api_url()
        ),
    )
    .unwrap();
    (env, forge)
}

fn import(env: &Env, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["import", "issues", "--repo", "repo"];
    args.extend_from_slice(extra);
    env.command()
        .args(&args)
        .env("GITHUB_TOKEN", TOKEN)
        .output()
        .unwrap()
}

#[test]
fn dry_run_prints_the_plan_and_which_line_made_which_edge_and_writes_nothing() {
    let (env, _forge) = setup("run");
    let out = import(&env, &["--label", "pw", "--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("\"id\": \"issue-2\""), "{stdout}");
    assert!(
        stdout.contains("#2: `Depends on #1` → issue-2 depends on issue-1"),
        "{stdout}"
    );
    assert!(
        stdout.contains("#1: check: a.txt says a (from the task list)"),
        "{stdout}"
    );
    assert!(!env.root().join("plan.json").exists());
}

#[test]
fn an_open_blocker_outside_the_selection_stops_the_import_naming_it() {
    let (env, forge) = setup("run");
    let c = forge.add_issue("acme/app", "C", "Blocked by #3");
    forge.label("acme/app", c, &["pw"]);
    let out = import(&env, &["--label", "pw", "-o", "plan.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "issue #4 is blocked by #3, which is open and not imported (the line `Blocked by #3`)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("import #3 too"), "{stderr}");
    assert!(!env.root().join("plan.json").exists());
}

#[test]
fn each_delivered_ticket_closes_its_issue() {
    for per in ["ticket", "run"] {
        let (env, _forge) = setup(per);
        let out = import(&env, &["--label", "pw", "-o", "plan.json"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        env.fixture("issue-1", 0, "a.txt", "a\n");
        env.fixture("issue-2", 0, "b.txt", "b\n");
        let run = env.scripted("run", &["--gate", "true"]);
        assert_eq!(
            run.status.code(),
            Some(0),
            "{}{}",
            text(&run.stdout),
            text(&run.stderr)
        );
        let out = env.planwright(&["deliver", "--repo", "repo", "--dry-run", "--output", "json"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let bodies: Vec<&str> = json["pull_requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["body"].as_str().unwrap())
            .collect();
        if per == "ticket" {
            assert_eq!(bodies.len(), 2);
            assert!(
                bodies[0].contains("Closes #1\n") && !bodies[0].contains("Closes #2"),
                "{}",
                bodies[0]
            );
            assert!(
                bodies[1].contains("Closes #2\n") && !bodies[1].contains("Closes #1"),
                "{}",
                bodies[1]
            );
        } else {
            assert_eq!(bodies.len(), 1);
            assert!(
                bodies[0].contains("Closes #1\nCloses #2\n"),
                "{}",
                bodies[0]
            );
        }
    }
}

#[test]
fn the_help_example_takes_two_issues_of_a_milestone_into_a_plan_file() {
    let (env, forge) = setup("run");
    forge.set_milestone("acme/app", 1, "v2");
    forge.set_milestone("acme/app", 2, "v2");
    // As in `import issues --help`: `--milestone v2 --issue 12 14 -o plan.json`.
    let out = import(
        &env,
        &["--milestone", "v2", "--issue", "1", "2", "-o", "plan.json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.root().join("plan.json")).unwrap())
            .unwrap();
    let ids: Vec<&str> = plan["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["issue-1", "issue-2"], "{plan}");
    // An issue outside the milestone is refused, naming why.
    let out = import(&env, &["--milestone", "v2", "--issue", "3", "--dry-run"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains("#3") && err.contains("does not carry the labels or milestone asked for"),
        "{err}"
    );
}
