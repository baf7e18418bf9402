//! Delivery end to end below the command line: runs with the scripted
//! agent, pushes to a real git server (`git http-backend` on 127.0.0.1,
//! asking for the token as a forge does), and a forge kept in memory that
//! records what it was asked (the HTTP clients and their fakes are
//! planwright-forge's and the testkit's, tested there and by the CLI's
//! `deliver` tests).
#![forbid(unsafe_code)]

use planwright_config::{Config, Env as ConfigEnv, Secret};
use planwright_engine::deliver::{self, AfterMerge, DeliverError, Delivery, PullText};
use planwright_engine::{Repo, Store};
use planwright_forge::{
    Comment, CommentOn, Forge, ForgeError, ForgeKind, Issue, IssueState, NewPullRequest,
    PullRequest, PullRequestUpdate, PullState, Repository, RepositoryInfo,
};
use planwright_plan::Plan;
use planwright_testkit::git_http::GitHttp;
use planwright_testkit::{creating_tickets, git, plan, run_scripted, Env};
use serde_json::json;
use std::sync::Mutex;

const TOKEN: &str = "s3cret-token";

/// A forge in memory: pull requests, issues and comments, and every call.
#[derive(Debug)]
struct MemoryForge {
    repository: Repository,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    pulls: Vec<PullRequest>,
    issues: Vec<Issue>,
    comments: Vec<(CommentOn, Comment)>,
    calls: Vec<String>,
}

impl MemoryForge {
    fn new() -> MemoryForge {
        MemoryForge {
            repository: Repository::parse("acme/app").unwrap(),
            state: Mutex::new(State::default()),
        }
    }

    fn issue(self, number: u64, is_pull_request: bool) -> MemoryForge {
        self.state.lock().unwrap().issues.push(Issue {
            number,
            url: format!("https://forge/acme/app/issues/{number}"),
            title: "an issue".into(),
            body: String::new(),
            state: IssueState::Open,
            is_pull_request,
            labels: vec![],
        });
        self
    }

    fn merge_all(&self) {
        for p in &mut self.state.lock().unwrap().pulls {
            p.state = PullState::Merged;
        }
    }

    fn pulls(&self) -> Vec<PullRequest> {
        self.state.lock().unwrap().pulls.clone()
    }

    fn calls(&self) -> Vec<String> {
        self.state.lock().unwrap().calls.clone()
    }
}

impl Forge for MemoryForge {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Github
    }
    fn repository(&self) -> &Repository {
        &self.repository
    }
    fn repository_info(&self) -> Result<RepositoryInfo, ForgeError> {
        Ok(RepositoryInfo {
            full_name: "acme/app".into(),
            url: "https://forge/acme/app".into(),
            default_branch: "main".into(),
        })
    }
    fn find_pull_request(&self, head: &str) -> Result<Option<PullRequest>, ForgeError> {
        let mut s = self.state.lock().unwrap();
        s.calls.push(format!("find {head}"));
        Ok(s.pulls.iter().rev().find(|p| p.head == head).cloned())
    }
    fn open_pull_request(&self, new: &NewPullRequest) -> Result<PullRequest, ForgeError> {
        let mut s = self.state.lock().unwrap();
        s.calls.push(format!("open {} -> {}", new.head, new.base));
        let number = 100 + s.pulls.len() as u64;
        let pr = PullRequest {
            number,
            url: format!("https://forge/acme/app/pull/{number}"),
            title: new.title.clone(),
            body: new.body.clone(),
            head: new.head.clone(),
            base: new.base.clone(),
            state: PullState::Open,
            draft: new.draft,
            head_sha: None,
        };
        s.pulls.push(pr.clone());
        Ok(pr)
    }
    fn update_pull_request(
        &self,
        number: u64,
        update: &PullRequestUpdate,
    ) -> Result<PullRequest, ForgeError> {
        let mut s = self.state.lock().unwrap();
        s.calls.push(format!("update {number}"));
        let pr = s.pulls.iter_mut().find(|p| p.number == number).unwrap();
        if let Some(t) = &update.title {
            pr.title = t.clone();
        }
        if let Some(b) = &update.body {
            pr.body = b.clone();
        }
        if let Some(b) = &update.base {
            pr.base = b.clone();
        }
        if let Some(d) = update.draft {
            pr.draft = d;
        }
        Ok(pr.clone())
    }
    fn pull_request(&self, number: u64) -> Result<PullRequest, ForgeError> {
        let s = self.state.lock().unwrap();
        Ok(s.pulls.iter().find(|p| p.number == number).unwrap().clone())
    }
    fn issue(&self, number: u64) -> Result<Option<Issue>, ForgeError> {
        let mut s = self.state.lock().unwrap();
        s.calls.push(format!("issue {number}"));
        Ok(s.issues.iter().find(|i| i.number == number).cloned())
    }
    fn post_comment(&self, on: CommentOn, body: &str) -> Result<Comment, ForgeError> {
        let mut s = self.state.lock().unwrap();
        s.calls.push(format!("comment {on:?}"));
        let c = Comment {
            id: s.comments.len() as u64 + 1,
            author: "planwright".into(),
            body: body.into(),
            created_at: "2026-12-07T00:00:00Z".into(),
            url: None,
        };
        s.comments.push((on, c.clone()));
        Ok(c)
    }
    fn comments(&self, on: CommentOn) -> Result<Vec<Comment>, ForgeError> {
        let s = self.state.lock().unwrap();
        Ok(s.comments
            .iter()
            .filter(|(o, _)| *o == on)
            .map(|(_, c)| c.clone())
            .collect())
    }
}

/// A repository whose run of `plan` merged, served by a git server as
/// `acme/app` with the remote `origin`.
struct Setup {
    env: Env,
    server: GitHttp,
    bare: std::path::PathBuf,
    run: String,
}

fn setup(plan_json: serde_json::Value, files: &[(&str, &str)]) -> (Setup, Plan) {
    let env = Env::new(&[("README.md", "hello\n")]);
    for (ticket, file) in files {
        env.fixture(ticket, 0, file, &format!("{ticket}\n"));
    }
    let plan = plan(plan_json);
    // The forge has the base branch as it was before the run.
    let server = GitHttp::start(&env.root().join("server"), TOKEN);
    let bare = server.create("acme/app", &env.repo(), "main");
    git(&env.repo(), &["remote", "add", "origin", &server.url("acme/app")]);
    let outcome = run_scripted(&env, &plan);
    let run = outcome.summary.run.clone();
    (
        Setup {
            env,
            server,
            bare,
            run,
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
            "[forge]\nkind = \"github\"\napi_url = \"http://127.0.0.1:9/api\"\n{toml}"
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

    fn execute(&self, d: &Delivery, forge: &MemoryForge) -> Result<deliver::Report, DeliverError> {
        let texts: Vec<PullText> = d
            .pulls
            .iter()
            .map(|p| PullText {
                title: format!("deliver {}", p.head),
                body: format!("body of {}", p.tickets.join(",")),
            })
            .collect();
        deliver::execute(&self.repo(), d, &texts, forge)
    }

    fn remote_tip(&self, branch: &str) -> Option<String> {
        GitHttp::tip(&self.bare, branch)
    }

    fn tree(&self, commit: &str) -> String {
        git(&self.env.repo(), &["rev-parse", &format!("{commit}^{{tree}}")])
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
    assert_eq!((d.pulls[0].head.as_str(), d.pulls[0].base.as_str()), (head.as_str(), "main"));
    assert!(!d.draft, "{:?}", d.draft_reasons);
    let forge = MemoryForge::new();
    let report = s.execute(&d, &forge).unwrap();
    let pushed = s.remote_tip(&head).expect("the branch was pushed");
    // The run's merged tree: its merges are on `main` once the run ended.
    let merged = git(&s.env.repo(), &["rev-parse", "main"]);
    assert_eq!(s.tree(&pushed), s.tree(&merged));
    assert_eq!(report.pulls[0].pushed, Some("created"));
    assert_eq!(report.pulls[0].state, "open");
    // The push authenticated with the token through the helper.
    assert!(s.server.requests().iter().any(|r| r.user.as_deref() == Some("x-access-token") && r.method == "POST"));
    // Again: nothing moves, no second pull request.
    let again = s.execute(&s.delivery(&plan, "", true).unwrap(), &forge).unwrap();
    assert_eq!(again.pulls[0].pushed, Some("unchanged"));
    assert_eq!(s.remote_tip(&head).unwrap(), pushed);
    assert_eq!(forge.pulls().len(), 1);
    assert_eq!(s.remote_tip("main").unwrap(), base_before);
    // The lease is kept in planwright's own ref.
    let lease = git(&s.env.repo(), &["rev-parse", &deliver::pushed_ref("origin", &head)]);
    assert_eq!(lease, pushed);
}

#[test]
fn a_branch_someone_else_moved_or_a_protected_one_is_refused_and_nothing_is_lost() {
    let (s, plan) = setup(chain(), &[("a", "a.txt"), ("b", "b.txt")]);
    let forge = MemoryForge::new();
    let head = format!("planwright/{}", s.run);
    let local_main = git(&s.env.repo(), &["rev-parse", "main"]);
    // A branch planwright never pushed is not overwritten.
    git(&s.env.repo(), &["push", "-q", &s.bare.display().to_string(), &format!("main:refs/heads/{head}")]);
    let err = s.execute(&s.delivery(&plan, "", true).unwrap(), &forge).unwrap_err();
    assert!(err.to_string().contains("planwright did not push it"), "{err}");
    assert!(err.hint().unwrap().contains("delete it"), "{:?}", err.hint());
    assert!(forge.pulls().is_empty());
    // Branch protection: the server's hook refuses.
    git(&s.env.repo(), &["push", "-q", "--delete", &s.bare.display().to_string(), &head]);
    GitHttp::protect(&s.bare, &head);
    let err = s.execute(&s.delivery(&plan, "", true).unwrap(), &forge).unwrap_err();
    assert!(err.to_string().contains("branch protection"), "{err}");
    assert!(err.to_string().contains("Protected branch"), "{err}");
    // The run's merges are where they were.
    assert_eq!(git(&s.env.repo(), &["rev-parse", "main"]), local_main);
}

#[test]
fn without_the_token_the_https_push_is_refused_with_the_credentials_named() {
    let (s, plan) = setup(chain(), &[("a", "a.txt"), ("b", "b.txt")]);
    let d = s.delivery(&plan, "", false).unwrap();
    let err = deliver::token(&d).unwrap_err();
    assert!(err.to_string().contains("`GITHUB_TOKEN` or `GH_TOKEN`"), "{err}");
    assert!(err.hint().unwrap().contains("`repo` scope"), "{:?}", err.hint());
    let err = s.execute(&d, &MemoryForge::new()).unwrap_err();
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
    let files = [("a", "a.txt"), ("b", "b.txt"), ("c", "c.txt"), ("d", "d.txt")];
    let (s, plan) = setup(json!({ "tickets": tickets }), &files);
    let d = s.delivery(&plan, "per = \"ticket\"\n", true).unwrap();
    let branch = |t: &str| format!("planwright/{}/{t}", s.run);
    let bases: Vec<(String, String)> = d.pulls.iter().map(|p| (p.tickets[0].clone(), p.base.clone())).collect();
    assert_eq!(bases[0], ("a".to_string(), "main".to_string()));
    assert!(bases.contains(&("b".into(), branch("a"))), "{bases:?}");
    assert!(bases.contains(&("c".into(), branch("a"))), "{bases:?}");
    assert_eq!(bases[3], ("d".to_string(), "main".to_string()));
    let forge = MemoryForge::new();
    let report = s.execute(&d, &forge).unwrap();
    assert_eq!(report.pulls.len(), 4);
    let store = Store::open(&s.env.repo().join(".planwright/state.db")).unwrap();
    for t in store.tickets(&s.run).unwrap() {
        assert_eq!(s.remote_tip(&branch(&t.id)), t.merge_commit, "{}", t.id);
    }
    // Once a's pull request merged, b's is based on the base.
    let a = forge.pulls()[0].number;
    forge.state.lock().unwrap().pulls.iter_mut().find(|p| p.number == a).unwrap().state = PullState::Merged;
    let again = s.execute(&s.delivery(&plan, "per = \"ticket\"\n", true).unwrap(), &forge).unwrap();
    let b = again.pulls.iter().find(|p| p.tickets == ["b"]).unwrap();
    assert_eq!((b.base.as_str(), again.pulls[0].state), ("main", "merged"));
    assert_eq!(forge.pulls().len(), 4, "no second pull request");
}

#[test]
fn a_codeboost_issue_that_is_missing_or_a_pull_request_stops_before_any_push() {
    let (s, mut plan) = setup(chain(), &[("a", "a.txt"), ("b", "b.txt")]);
    plan.source_format = planwright_plan::Format::Codeboost;
    plan.metadata.insert("issue".into(), json!(7));
    plan.metadata.insert("summary".into(), json!("Fix the thing"));
    let d = s.delivery(&plan, "", true).unwrap();
    for forge in [MemoryForge::new(), MemoryForge::new().issue(7, true)] {
        let err = s.execute(&d, &forge).unwrap_err();
        assert!(err.to_string().starts_with("Plan issue does not match the selected issue"), "{err}");
        assert!(err.is_plan_error());
        assert!(forge.pulls().is_empty());
    }
    assert_eq!(s.remote_tip(&format!("planwright/{}", s.run)), None, "nothing pushed");
    let forge = MemoryForge::new().issue(7, false);
    s.execute(&d, &forge).unwrap();
    assert_eq!(forge.calls()[0], "issue 7");
}

#[test]
fn the_remaining_scope_is_posted_once_after_the_merge() {
    let (s, mut plan) = setup(chain(), &[("a", "a.txt"), ("b", "b.txt")]);
    plan.source_format = planwright_plan::Format::StandardV1;
    plan.metadata.insert("summary".into(), json!("Part one"));
    plan.metadata.insert("delivery".into(), json!("partial"));
    plan.metadata.insert("remaining_scope".into(), json!("@team the rest, closes #9"));
    plan.metadata.insert("ticket_reference".into(), json!({"type": "github_issue", "id": "acme/app#3", "url": "https://github.com/acme/app/issues/3"}));
    let forge = MemoryForge::new();
    let d = s.delivery(&plan, "", true).unwrap();
    assert_eq!(s.execute(&d, &forge).unwrap().after_merge, None, "not merged yet");
    forge.merge_all();
    let tip = s.remote_tip(&format!("planwright/{}", s.run));
    let first = s.execute(&d, &forge).unwrap();
    assert_eq!(first.after_merge, Some(AfterMerge::Posted { issue: 3 }));
    assert_eq!((first.pulls[0].state, first.pulls[0].pushed), ("merged", None));
    let second = s.execute(&d, &forge).unwrap();
    assert_eq!(second.after_merge, Some(AfterMerge::AlreadyPosted { issue: 3 }));
    let comments = forge.comments(CommentOn::Issue(3)).unwrap();
    assert_eq!(comments.len(), 1);
    assert!(comments[0].body.contains(deliver::REMAINING_SCOPE_MARKER));
    assert!(!comments[0].body.contains("@team") && !comments[0].body.contains("#9"), "{}", comments[0].body);
    assert_eq!(s.remote_tip(&format!("planwright/{}", s.run)), tip, "nothing pushed after the merge");
}

#[test]
fn a_failed_ticket_makes_a_draft_and_the_base_branch_is_never_a_target() {
    let mut tickets = creating_tickets(&["a", "b"]);
    tickets[1]["scope"] = json!([{"pattern": "only-this.txt", "op": "create"}]);
    // b writes outside its scope: it fails, a merges.
    let (s, plan) = setup(json!({ "tickets": tickets }), &[("a", "a.txt"), ("b", "b.txt")]);
    let d = s.delivery(&plan, "", true).unwrap();
    assert!(d.draft);
    assert!(d.draft_reasons.iter().any(|r| r.contains("1 ticket of the plan did not merge")), "{:?}", d.draft_reasons);
    let report = s.execute(&d, &MemoryForge::new()).unwrap();
    assert!(report.pulls[0].draft);
    let err = s.delivery(&plan, "branch = \"main\"\n", true).unwrap_err();
    assert!(matches!(err, DeliverError::BaseBranch(_)), "{err}");
}
