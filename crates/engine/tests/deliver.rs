//! Delivery end to end below the command line: runs with the scripted
//! agent, pushes to a real git server (`git http-backend` on 127.0.0.1,
//! asking for the token as a forge does), and pull requests through the
//! GitHub client against the testkit's fake forge (the CLI's `deliver`
//! tests cover the three kinds).

use planwright_config::{Config, Env as ConfigEnv, Secret};
use planwright_engine::deliver::{self, AfterMerge, DeliverError, Delivery, PullText};
use planwright_engine::{Repo, Store};
use planwright_plan::Plan;
use planwright_testkit::forge::{Api, FakeForge, TOKEN};
use planwright_testkit::git_http::GitHttp;
use planwright_testkit::{creating_tickets, files_holding, gate, git, plan, run_scripted, Env};
use serde_json::json;

/// A repository whose run of `plan` merged, served by a git server as
/// `acme/app` with the remote `origin`.
struct Setup {
    env: Env,
    server: GitHttp,
    bare: std::path::PathBuf,
    run: String,
    forge: FakeForge,
}

fn setup(plan_json: serde_json::Value, files: &[(&str, &str)]) -> (Setup, Plan) {
    let env = Env::new(&[("README.md", "hello\n")]);
    for (ticket, file) in files {
        env.fixture(ticket, 0, file, &format!("{ticket}\n"));
    }
    let mut plan_json = plan_json;
    plan_json["gates"] = gate(&["true"]);
    let plan = plan(plan_json);
    // The forge has the base branch as it was before the run.
    let server = GitHttp::start(&env.root().join("server"), TOKEN);
    let bare = server.create("acme/app", &env.repo(), "main");
    git(
        &env.repo(),
        &["remote", "add", "origin", &server.url("acme/app")],
    );
    let outcome = run_scripted(&env, &plan);
    let run = outcome.summary.run.clone();
    let forge = FakeForge::start(Api::Github);
    forge.add_repository("acme/app");
    forge.branches_from("acme/app", &bare);
    (
        Setup {
            env,
            server,
            bare,
            run,
            forge,
        },
        plan,
    )
}

impl Setup {
    fn repo(&self) -> Repo {
        Repo::open(&self.env.repo()).unwrap()
    }

    fn delivery(&self, plan: &Plan, toml: &str, token: bool) -> Result<Delivery, DeliverError> {
        let config = Config::parse(&format!(
            "[forge]\nkind = \"github\"\napi_url = \"{}\"\n{toml}",
            self.forge.api_url()
        ))
        .unwrap()
        .config;
        let mut env = ConfigEnv::default();
        if token {
            env.tokens.insert("GITHUB_TOKEN".into(), Secret::new(TOKEN));
        }
        let repo = self.repo();
        let url = deliver::remote_url(&repo, "origin")?;
        let settings = planwright_config::forge::resolve(&config.forge, &url, &env).unwrap();
        let store = Store::open(&self.env.repo().join(".planwright/state.db")).unwrap();
        let run = store.run(&self.run).unwrap().unwrap();
        let tickets = store.tickets(&run.id).unwrap();
        deliver::prepare(&repo, &run, &tickets, plan, settings, url, false)
    }

    fn execute(&self, d: &Delivery) -> Result<deliver::Report, DeliverError> {
        let texts: Vec<PullText> = d
            .pulls
            .iter()
            .map(|p| PullText {
                title: format!("deliver {}", p.head),
                body: format!("body of {}", p.tickets.join(",")),
            })
            .collect();
        let client = planwright_forge::connect(&planwright_forge::Endpoint {
            kind: planwright_forge::ForgeKind::Github,
            api_url: self.forge.api_url(),
            repository: planwright_forge::Repository::parse("acme/app").unwrap(),
            token: planwright_forge::Token::new(TOKEN),
        })
        .unwrap();
        deliver::execute(&self.repo(), d, &texts, client.as_ref())
    }

    fn pulls(&self) -> Vec<planwright_testkit::forge::FakePull> {
        self.forge.pulls("acme/app")
    }

    fn remote_tip(&self, branch: &str) -> Option<String> {
        GitHttp::tip(&self.bare, branch)
    }

    fn tree(&self, commit: &str) -> String {
        git(
            &self.env.repo(),
            &["rev-parse", &format!("{commit}^{{tree}}")],
        )
    }
}

fn chain() -> serde_json::Value {
    let mut tickets = creating_tickets(&["a", "b"]);
    tickets[1]["depends_on"] = json!(["a"]);
    json!({ "tickets": tickets })
}

#[test]
fn the_runs_merge_goes_to_its_own_branch_once_and_the_base_never_moves() {
    let (s, plan) = setup(chain(), &[("a", "a.txt"), ("b", "b.txt")]);
    let base_before = s.remote_tip("main").unwrap();
    let d = s.delivery(&plan, "", true).unwrap();
    assert_eq!(d.pulls.len(), 1);
    let head = format!("planwright/{}", s.run);
    assert_eq!(
        (d.pulls[0].head.as_str(), d.pulls[0].base.as_str()),
        (head.as_str(), "main")
    );
    assert!(!d.draft, "{:?}", d.draft_reasons);
    let report = s.execute(&d).unwrap();
    let pushed = s.remote_tip(&head).expect("the branch was pushed");
    // The run's merged tree: its merges are on `main` once the run ended.
    let merged = git(&s.env.repo(), &["rev-parse", "main"]);
    assert_eq!(s.tree(&pushed), s.tree(&merged));
    assert_eq!(report.pulls[0].pushed, Some("created"));
    assert_eq!(report.pulls[0].state, "open");
    // The push authenticated with the token through the helper.
    assert!(s
        .server
        .requests()
        .iter()
        .any(|r| r.user.as_deref() == Some("x-access-token") && r.method == "POST"));
    // Again: nothing moves, no second pull request.
    let again = s.execute(&s.delivery(&plan, "", true).unwrap()).unwrap();
    assert_eq!(again.pulls[0].pushed, Some("unchanged"));
    assert_eq!(again.pulls[0].number, report.pulls[0].number);
    assert_eq!(s.remote_tip(&head).unwrap(), pushed);
    assert_eq!(s.pulls().len(), 1);
    assert_eq!(s.remote_tip("main").unwrap(), base_before);
    // The lease is kept in planwright's own ref.
    let lease = git(
        &s.env.repo(),
        &["rev-parse", &deliver::pushed_ref("origin", &head)],
    );
    assert_eq!(lease, pushed);
    // The token was given to git for the push only: no file of the
    // repository, its git directory or `.planwright/` holds it.
    let holding = files_holding(&s.env.repo(), TOKEN);
    assert!(holding.is_empty(), "files holding the token: {holding:?}");
}

#[test]
fn a_branch_someone_else_moved_or_a_protected_one_is_refused_and_nothing_is_lost() {
    let (s, plan) = setup(chain(), &[("a", "a.txt"), ("b", "b.txt")]);
    let head = format!("planwright/{}", s.run);
    let local_main = git(&s.env.repo(), &["rev-parse", "main"]);
    let bare = s.bare.display().to_string();
    // A branch planwright never pushed is not overwritten.
    git(
        &s.env.repo(),
        &["push", "-q", &bare, &format!("main~1:refs/heads/{head}")],
    );
    let err = s
        .execute(&s.delivery(&plan, "", true).unwrap())
        .unwrap_err();
    assert!(
        err.to_string().contains("planwright did not push it"),
        "{err}"
    );
    assert!(
        err.hint().unwrap().contains("delete it"),
        "{:?}",
        err.hint()
    );
    assert!(s.pulls().is_empty());
    // Branch protection: the server's hook refuses.
    git(&s.env.repo(), &["push", "-q", "--delete", &bare, &head]);
    GitHttp::protect(&s.bare, &head);
    let err = s
        .execute(&s.delivery(&plan, "", true).unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("branch protection"), "{err}");
    assert!(err.to_string().contains("Protected branch"), "{err}");
    // The run's merges are where they were.
    assert_eq!(git(&s.env.repo(), &["rev-parse", "main"]), local_main);
}

#[test]
fn a_branch_moved_since_planwright_pushed_it_is_not_overwritten() {
    let (s, plan) = setup(chain(), &[("a", "a.txt"), ("b", "b.txt")]);
    let head = format!("planwright/{}", s.run);
    s.execute(&s.delivery(&plan, "", true).unwrap()).unwrap();
    let bare = s.bare.display().to_string();
    git(
        &s.env.repo(),
        &[
            "push",
            "-q",
            "--force",
            &bare,
            &format!("main~1:refs/heads/{head}"),
        ],
    );
    let err = s
        .execute(&s.delivery(&plan, "", true).unwrap())
        .unwrap_err();
    assert!(
        err.to_string().contains("someone else pushed to it"),
        "{err}"
    );
    assert_eq!(
        s.remote_tip(&head),
        Some(git(&s.env.repo(), &["rev-parse", "main~1"]))
    );
}

#[test]
fn without_the_token_the_https_push_is_refused_with_the_credentials_named() {
    let (s, plan) = setup(chain(), &[("a", "a.txt"), ("b", "b.txt")]);
    let d = s.delivery(&plan, "", false).unwrap();
    let err = deliver::token(&d).unwrap_err();
    assert!(
        err.to_string().contains("`GITHUB_TOKEN` or `GH_TOKEN`"),
        "{err}"
    );
    assert!(
        err.hint().unwrap().contains("`repo` scope"),
        "{:?}",
        err.hint()
    );
    let err = s.execute(&d).unwrap_err();
    assert!(err.to_string().contains("refused the credentials"), "{err}");
    let err = deliver::remote_url(&s.repo(), "upstream").unwrap_err();
    assert!(matches!(err, DeliverError::NoRemote { .. }), "{err}");
}

#[test]
fn per_ticket_pull_requests_stack_on_a_single_parent_and_fork_onto_the_base() {
    // a <- b, a <- c, (b, c) <- d.
    let mut tickets = creating_tickets(&["a", "b", "c", "d"]);
    tickets[1]["depends_on"] = json!(["a"]);
    tickets[2]["depends_on"] = json!(["a"]);
    tickets[3]["depends_on"] = json!(["b", "c"]);
    let files = [
        ("a", "a.txt"),
        ("b", "b.txt"),
        ("c", "c.txt"),
        ("d", "d.txt"),
    ];
    let (s, plan) = setup(json!({ "tickets": tickets }), &files);
    let d = s.delivery(&plan, "per = \"ticket\"\n", true).unwrap();
    let branch = |t: &str| format!("planwright/{}/{t}", s.run);
    let bases: Vec<(String, String)> = d
        .pulls
        .iter()
        .map(|p| (p.tickets[0].clone(), p.base.clone()))
        .collect();
    assert_eq!(bases[0], ("a".to_string(), "main".to_string()));
    assert!(bases.contains(&("b".into(), branch("a"))), "{bases:?}");
    assert!(bases.contains(&("c".into(), branch("a"))), "{bases:?}");
    assert_eq!(bases[3], ("d".to_string(), "main".to_string()));
    let report = s.execute(&d).unwrap();
    assert_eq!(report.pulls.len(), 4);
    let store = Store::open(&s.env.repo().join(".planwright/state.db")).unwrap();
    for t in store.tickets(&s.run).unwrap() {
        assert_eq!(s.remote_tip(&branch(&t.id)), t.merge_commit, "{}", t.id);
    }
    // Once a's pull request merged, b's is based on the base.
    s.forge.merge("acme/app", report.pulls[0].number);
    let again = s
        .execute(&s.delivery(&plan, "per = \"ticket\"\n", true).unwrap())
        .unwrap();
    let b = again.pulls.iter().find(|p| p.tickets == ["b"]).unwrap();
    assert_eq!((b.base.as_str(), again.pulls[0].state), ("main", "merged"));
    assert_eq!(s.pulls().len(), 4, "no second pull request");
}

#[test]
fn a_codeboost_issue_that_is_missing_or_a_pull_request_stops_before_any_push() {
    let (s, mut plan) = setup(chain(), &[("a", "a.txt"), ("b", "b.txt")]);
    plan.source_format = planwright_plan::Format::Codeboost;
    plan.metadata
        .insert("summary".into(), json!("Fix the thing"));
    // #1 is a pull request of another branch; #2 does not exist yet.
    s.forge.add_branch("acme/app", "other");
    let other = planwright_forge::NewPullRequest {
        title: "other".into(),
        body: String::new(),
        head: "other".into(),
        base: "main".into(),
        draft: false,
    };
    let client = planwright_forge::connect(&planwright_forge::Endpoint {
        kind: planwright_forge::ForgeKind::Github,
        api_url: s.forge.api_url(),
        repository: planwright_forge::Repository::parse("acme/app").unwrap(),
        token: planwright_forge::Token::new(TOKEN),
    })
    .unwrap();
    let pull = client.open_pull_request(&other).unwrap().number;
    for (n, says) in [(pull, "is a pull request"), (pull + 1, "has no issue")] {
        plan.metadata.insert("issue".into(), json!(n));
        let err = s
            .execute(&s.delivery(&plan, "", true).unwrap())
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("Plan issue does not match the selected issue"),
            "{err}"
        );
        assert!(err.to_string().contains(says), "{err}");
        assert!(err.is_plan_error());
    }
    assert_eq!(
        s.remote_tip(&format!("planwright/{}", s.run)),
        None,
        "nothing pushed"
    );
    let issue = s.forge.add_issue("acme/app", "the thing", "");
    plan.metadata.insert("issue".into(), json!(issue));
    let report = s.execute(&s.delivery(&plan, "", true).unwrap()).unwrap();
    assert_eq!(report.pulls[0].action, deliver::Action::Opened);
}

#[test]
fn the_remaining_scope_is_posted_once_after_the_merge() {
    let (s, mut plan) = setup(chain(), &[("a", "a.txt"), ("b", "b.txt")]);
    let issue = s.forge.add_issue("acme/app", "the whole thing", "");
    plan.source_format = planwright_plan::Format::StandardV1;
    plan.metadata.insert("summary".into(), json!("Part one"));
    plan.metadata.insert("delivery".into(), json!("partial"));
    plan.metadata
        .insert("remaining_scope".into(), json!("@team the rest, closes #9"));
    plan.metadata.insert("ticket_reference".into(), json!({"type": "github_issue", "id": format!("acme/app#{issue}"), "url": format!("https://github.com/acme/app/issues/{issue}")}));
    let d = s.delivery(&plan, "", true).unwrap();
    let first = s.execute(&d).unwrap();
    assert_eq!(first.after_merge, None, "not merged yet");
    s.forge.merge("acme/app", first.pulls[0].number);
    let tip = s.remote_tip(&format!("planwright/{}", s.run));
    let merged = s.execute(&d).unwrap();
    assert_eq!(merged.after_merge, Some(AfterMerge::Posted { issue }));
    assert_eq!(
        (merged.pulls[0].state, merged.pulls[0].pushed),
        ("merged", None)
    );
    let again = s.execute(&d).unwrap();
    assert_eq!(again.after_merge, Some(AfterMerge::AlreadyPosted { issue }));
    let comments = s.forge.comments("acme/app", issue, false);
    assert_eq!(comments.len(), 1);
    assert!(comments[0].body.contains(deliver::REMAINING_SCOPE_MARKER));
    assert!(
        !comments[0].body.contains("@team") && !comments[0].body.contains("#9"),
        "{}",
        comments[0].body
    );
    assert_eq!(
        s.remote_tip(&format!("planwright/{}", s.run)),
        tip,
        "nothing pushed after the merge"
    );
}

#[test]
fn a_failed_ticket_makes_a_draft_and_the_base_branch_is_never_a_target() {
    let mut tickets = creating_tickets(&["a", "b"]);
    tickets[1]["scope"] = json!([{"pattern": "only-this.txt", "op": "create"}]);
    // b writes outside its scope: it fails, a merges.
    let (s, plan) = setup(
        json!({ "tickets": tickets }),
        &[("a", "a.txt"), ("b", "b.txt")],
    );
    let d = s.delivery(&plan, "", true).unwrap();
    assert!(d.draft);
    assert!(
        d.draft_reasons
            .iter()
            .any(|r| r.contains("1 ticket of the plan did not merge")),
        "{:?}",
        d.draft_reasons
    );
    let report = s.execute(&d).unwrap();
    assert!(report.pulls[0].draft && s.pulls()[0].draft);
    let err = s.delivery(&plan, "branch = \"main\"\n", true).unwrap_err();
    assert!(matches!(err, DeliverError::BaseBranch(_)), "{err}");
}

#[test]
fn each_imported_issue_gets_its_pull_requests_link_once() {
    let mut tickets = creating_tickets(&["a", "b"]);
    tickets[1]["depends_on"] = json!(["a"]);
    tickets[0]["metadata"] = json!({"issue": {"number": 7, "repository": "acme/app"}});
    tickets[1]["metadata"] = json!({"issue": {"number": 8, "repository": "other/repo"}});
    let (s, plan) = setup(
        json!({ "tickets": tickets }),
        &[("a", "a.txt"), ("b", "b.txt")],
    );
    s.forge.add_issue("acme/app", "filler", "");
    let seven: Vec<u64> = (0..6)
        .map(|_| s.forge.add_issue("acme/app", "x", ""))
        .collect();
    assert_eq!(seven.last(), Some(&7));
    let d = s.delivery(&plan, "", true).unwrap();
    let report = s.execute(&d).unwrap();
    // Only this repository's issue: another repository's is not commented on.
    assert_eq!(report.linked_issues, [7]);
    let posted = s.forge.comments("acme/app", 7, false);
    assert_eq!(posted.len(), 1);
    assert!(
        posted[0].body.contains(&report.pulls[0].url),
        "{}",
        posted[0].body
    );
    // Again: the marker is there, nothing more is posted.
    let again = s.execute(&s.delivery(&plan, "", true).unwrap()).unwrap();
    assert!(again.linked_issues.is_empty());
    assert_eq!(s.forge.comments("acme/app", 7, false).len(), 1);
}
