//! `planwright deliver` and `run --deliver` end to end, for each forge
//! kind: a run with the scripted agent, pushes to a real git server (`git
//! http-backend` on 127.0.0.1) and pull requests on the testkit's stateful
//! fake forges; and each error, with its cause and its fix.
#![forbid(unsafe_code)]

use planwright_testkit::forge::{Api, FakeForge, TOKEN};
use planwright_testkit::git_http::GitHttp;
use planwright_testkit::{git, text, write, Env};
use serde_json::{json, Value};
use std::process::Output;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

struct Setup {
    env: Env,
    bare: std::path::PathBuf,
    forge: FakeForge,
    server: GitHttp,
}

fn kind_name(api: Api) -> &'static str {
    match api {
        Api::Github => "github",
        Api::Gitlab => "gitlab",
        Api::Forgejo => "forgejo",
    }
}

fn token_var(api: Api) -> &'static str {
    match api {
        Api::Github => "GITHUB_TOKEN",
        Api::Gitlab => "GITLAB_TOKEN",
        Api::Forgejo => "FORGEJO_TOKEN",
    }
}

/// A repository served as `acme/app` (remote `origin`) by a git server,
/// a fake forge of `api` that reads its branches, `plan` at the root and
/// a `planwright.toml` beside it with `[forge]` and `extra`.
fn setup(api: Api, plan: &Value, extra: &str) -> Setup {
    let env = Env::new(&[("README.md", "hello\n")]).with_cli(BIN);
    let server = GitHttp::start(&env.root().join("server"), TOKEN);
    let bare = server.create("acme/app", &env.repo(), "main");
    git(
        &env.repo(),
        &["remote", "add", "origin", &server.url("acme/app")],
    );
    let forge = FakeForge::start(api);
    forge.add_repository("acme/app");
    forge.branches_from("acme/app", &bare);
    write(env.root(), "plan.json", &plan.to_string());
    let toml = format!(
        "[forge]\nkind = \"{}\"\napi_url = \"{}\"\n{extra}",
        kind_name(api),
        forge.api_url()
    );
    write(env.root(), "planwright.toml", &toml);
    Setup {
        env,
        bare,
        forge,
        server,
    }
}

impl Setup {
    fn run(&self, extra: &[&str]) -> Output {
        let agent = format!("scripted:{}", self.env.fixtures().display());
        let mut args = vec!["run", "plan.json", "--repo", "repo", "--agent", &agent];
        args.extend_from_slice(extra);
        self.env
            .command()
            .args(&args)
            .env(token_var(self.forge.api()), TOKEN)
            .output()
            .unwrap()
    }

    fn deliver(&self, args: &[&str], token: Option<&str>) -> Output {
        let mut cmd = self.env.command();
        cmd.args(["deliver", "--repo", "repo"]).args(args);
        if let Some(t) = token {
            cmd.env(token_var(self.forge.api()), t);
        }
        cmd.output().unwrap()
    }

    fn deliver_json(&self) -> Value {
        let out = self.deliver(&["--output", "json"], Some(TOKEN));
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

/// A codeboost plan for issue `issue`: two items, the second after the first.
fn codeboost(issue: u64) -> Value {
    let item = |id: &str, path: &str, deps: Vec<&str>| {
        json!({"id": id, "title": format!("Add {path}"), "intent": "add the file",
            "files": [{"path": path, "kind": "add", "renamed_from": null, "change": "new"}],
            "acceptance": [{"type": "cmd", "text": "true"}], "depends_on": deps})
    };
    json!({"schema_version": 1, "issue": issue, "revision": 1,
        "summary": "Add two files @someone\nand more",
        "items": [item("P1", "one.txt", vec![]), item("P2", "two.txt", vec!["P1"])],
        "questions": []})
}

/// A partial standard_v1 plan for `acme/app#issue`.
fn standard_v1(issue: u64) -> Value {
    json!({"plan_version": "standard_v1",
        "ticket_reference": {"type": "github_issue", "id": format!("acme/app#{issue}"),
            "url": format!("https://forge.example/acme/app/issues/{issue}")},
        "generated_by": {"agent": "a", "model": "m", "timestamp": "2026-12-07T00:00:00Z"},
        "summary": "First half of the change",
        "scope": {"files": [{"path": "half.txt", "operation": "create"}]},
        "approach": [{"step": 1, "description": "add half.txt"}],
        "verification": {"test_strategy": "true", "rollback_plan": "revert"},
        "predicted_runtime_minutes": 5, "predicted_runtime_confidence": "high",
        "delivery": "partial", "remaining_scope": "The second half, for @ops: closes #99"})
}

fn codeboost_setup(api: Api) -> (Setup, u64) {
    let env_plan = codeboost(1);
    let s = setup(api, &env_plan, "[commands]\nallow = [[\"true\"]]\n");
    let issue = s.forge.add_issue("acme/app", "Add two files", "");
    write(s.env.root(), "plan.json", &codeboost(issue).to_string());
    s.env.fixture("P1", 0, "one.txt", "one\n");
    s.env.fixture("P2", 0, "two.txt", "two\n");
    (s, issue)
}

#[test]
fn a_codeboost_plan_is_delivered_to_each_forge_once() {
    for api in [Api::Github, Api::Gitlab, Api::Forgejo] {
        let (s, issue) = codeboost_setup(api);
        let run = s.run(&[]);
        assert!(run.status.success(), "{api:?}: {}", text(&run.stderr));
        let first = s.deliver_json();
        let pr = &first["pull_requests"][0];
        assert_eq!(pr["state"], "open", "{api:?}: {first}");
        assert_eq!(
            (pr["action"].as_str(), pr["draft"].as_bool()),
            (Some("opened"), Some(false))
        );
        let head = pr["head"].as_str().unwrap().to_string();
        assert!(head.starts_with("planwright/"), "{head}");
        assert_eq!(pr["base"], "main");
        // The pushed branch holds the run's merged tree; the base did not move.
        let tip = GitHttp::tip(&s.bare, &head).unwrap();
        let tree = |c: &str| git(&s.env.repo(), &["rev-parse", &format!("{c}^{{tree}}")]);
        assert_eq!(tree(&tip), tree("main"), "{api:?}");
        assert_ne!(
            GitHttp::tip(&s.bare, "main").unwrap(),
            git(&s.env.repo(), &["rev-parse", "main"])
        );
        let pulls = s.forge.pulls("acme/app");
        assert_eq!(pulls.len(), 1, "{api:?}");
        assert!(
            pulls[0].body.contains(&format!("Closes #{issue}")),
            "{api:?}: {}",
            pulls[0].body
        );
        assert!(
            pulls[0].title.starts_with("Add two files @\u{200b}someone"),
            "{}",
            pulls[0].title
        );
        assert!(
            pulls[0]
                .body
                .contains("| `P1` Add one.txt | merged | 1 | 1/1 passed |"),
            "{}",
            pulls[0].body
        );
        // Again: no second pull request, nothing pushed anew.
        let again = s.deliver_json();
        assert_eq!(again["pull_requests"][0]["number"], pr["number"], "{api:?}");
        assert_eq!(again["pull_requests"][0]["pushed"], "unchanged");
        assert_eq!(s.forge.pulls("acme/app").len(), 1);
        assert_eq!(GitHttp::tip(&s.bare, &head).unwrap(), tip);
    }
}

#[test]
fn a_partial_standard_v1_delivery_refers_to_its_issue_and_posts_the_rest_once_merged() {
    for api in [Api::Github, Api::Gitlab, Api::Forgejo] {
        let s = setup(api, &standard_v1(1), "[gates]\nrun = [[\"true\"]]\n");
        let issue = s.forge.add_issue("acme/app", "The whole change", "");
        write(s.env.root(), "plan.json", &standard_v1(issue).to_string());
        s.env
            .fixture(&format!("acme/app#{issue}"), 0, "half.txt", "half\n");
        let run = s.run(&[]);
        assert!(run.status.success(), "{api:?}: {}", text(&run.stderr));
        let first = s.deliver_json();
        let number = first["pull_requests"][0]["number"].as_u64().unwrap();
        let body = &s.forge.pulls("acme/app")[0].body;
        assert!(
            body.contains(&format!("Refs #{issue}")) && !body.contains("Closes"),
            "{api:?}: {body}"
        );
        assert!(body.starts_with("First half of the change"), "{body}");
        assert_eq!(first["after_merge"], Value::Null);
        s.forge.merge("acme/app", number);
        let merged = s.deliver_json();
        assert_eq!(
            merged["pull_requests"][0]["state"], "merged",
            "{api:?}: {merged}"
        );
        assert_eq!(
            merged["after_merge"],
            json!({"comment": "posted", "issue": issue})
        );
        let again = s.deliver_json();
        assert_eq!(
            again["after_merge"],
            json!({"comment": "already_posted", "issue": issue})
        );
        let comments = s.forge.comments("acme/app", issue, false);
        assert_eq!(comments.len(), 1, "{api:?}");
        assert!(
            comments[0].body.contains("The second half"),
            "{}",
            comments[0].body
        );
        assert!(!comments[0].body.contains("@ops") && !comments[0].body.contains("#99"));
    }
}

#[test]
fn run_deliver_delivers_as_the_run_ends_and_a_failed_ticket_makes_a_draft() {
    // P2 writes a file outside its scope: it fails; P1 merges.
    let (s, _) = codeboost_setup(Api::Forgejo);
    s.env.fixture("P2", 0, "elsewhere.txt", "no\n");
    let out = s.run(&["--deliver", "--output", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pr = &summary["delivery"]["pull_requests"][0];
    assert_eq!(
        (pr["state"].as_str(), pr["draft"].as_bool()),
        (Some("open"), Some(true)),
        "{summary}"
    );
    let body = &s.forge.pulls("acme/app")[0].body;
    assert!(
        body.contains("**Not delivered**") && body.contains("- `P2`: failed"),
        "{body}"
    );
    assert!(
        body.contains("Opened as a draft: 1 ticket of the plan did not merge"),
        "{body}"
    );
}

#[test]
fn a_dry_run_pushes_and_sends_nothing_and_needs_no_token() {
    let (s, issue) = codeboost_setup(Api::Github);
    assert!(s.run(&[]).status.success());
    let out = s.deliver(&["--dry-run"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(
        printed.contains("dry run: nothing pushed or sent to github `acme/app`"),
        "{printed}"
    );
    assert!(printed.contains(&format!("Closes #{issue}")), "{printed}");
    assert!(s.forge.requests().is_empty());
    assert!(s.forge.pulls("acme/app").is_empty());
    let branches = git(
        &s.env.repo(),
        &["ls-remote", "--heads", &s.bare.display().to_string()],
    );
    assert_eq!(branches.lines().count(), 1, "only main: {branches}");
}

/// `deliver`'s exit code and its error, after a run that merged.
fn refused(s: &Setup, token: Option<&str>) -> (Option<i32>, String) {
    let out = s.deliver(&[], token);
    (out.status.code(), text(&out.stderr))
}

#[test]
fn each_error_names_its_cause_and_its_fix() {
    let (s, _) = codeboost_setup(Api::Github);
    assert!(s.run(&[]).status.success());
    let (code, err) = refused(&s, None);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("none of `GITHUB_TOKEN` or `GH_TOKEN` is set") && err.contains("`repo` scope"),
        "{err}"
    );
    let (code, err) = refused(&s, Some("wrong-token"));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("401") && err.contains("`repo` scope"), "{err}");
    // A codeboost plan whose issue is not one of the repository's.
    write(s.env.root(), "plan.json", &codeboost(77).to_string());
    let (code, err) = refused(&s, Some(TOKEN));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("Plan issue does not match the selected issue"),
        "{err}"
    );
    let toml = |extra: &str| {
        let base = format!(
            "[commands]\nallow = [[\"true\"]]\n[forge]\nkind = \"github\"\napi_url = \"{}\"\n",
            s.forge.api_url()
        );
        write(s.env.root(), "planwright.toml", &format!("{base}{extra}"));
    };
    let (_, issue) = (0, s.forge.add_issue("acme/app", "x", ""));
    write(s.env.root(), "plan.json", &codeboost(issue).to_string());
    toml("repository = \"acme/nope\"\n");
    let (code, err) = refused(&s, Some(TOKEN));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("acme/nope") && err.contains("hint:"), "{err}");
    toml("remote = \"upstream\"\n");
    let (code, err) = refused(&s, Some(TOKEN));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("no remote `upstream`") && err.contains("git remote add upstream"),
        "{err}"
    );
    toml("branch = \"main\"\n");
    let (_, err) = refused(&s, Some(TOKEN));
    assert!(err.contains("planwright never pushes to it"), "{err}");
    toml("");
    s.forge.fail_next(
        1,
        planwright_testkit::forge::Fault::TooManyRequests { retry_after: 3600 },
    );
    let (code, err) = refused(&s, Some(TOKEN));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("rate limiting") && err.contains("wait for the limit to reset"),
        "{err}"
    );
    // Nothing was lost: the next try delivers.
    let (code, err) = refused(&s, Some(TOKEN));
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn a_bad_forge_section_is_refused_on_its_line() {
    let (s, _) = codeboost_setup(Api::Gitlab);
    assert!(s.run(&[]).status.success());
    write(
        s.env.root(),
        "planwright.toml",
        "[forge]\nkind = \"gitlab\"\napi_url = \"http://gitlab.example.com/api/v4\"\n",
    );
    let (code, err) = refused(&s, Some(TOKEN));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("line 3") && err.contains("use `https`"),
        "{err}"
    );
}

fn executable(path: &std::path::Path, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, script).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `deliver` with the user's global git config read from `HOME/.gitconfig`
/// (the hermetic environment otherwise points git at `/dev/null`).
fn deliver_with_user_config(s: &Setup, gitconfig: &str) -> Output {
    write(&s.env.root().join("home"), ".gitconfig", gitconfig);
    s.env
        .command()
        .args(["deliver", "--repo", "repo", "--output", "json"])
        .env_remove("GIT_CONFIG_GLOBAL")
        .env(token_var(s.forge.api()), TOKEN)
        .output()
        .unwrap()
}

#[test]
fn the_users_insteadof_reroutes_the_push() {
    let (s, _) = codeboost_setup(Api::Github);
    assert!(s.run(&[]).status.success());
    // The remote names a host that does not exist; the user's config
    // sends it to the git server, as a user's `insteadOf` shortcut does.
    let served = s.server.url("acme/app");
    let base = served.trim_end_matches("acme/app.git");
    let fake = "https://forge.invalid/acme/app.git";
    git(&s.env.repo(), &["remote", "set-url", "origin", fake]);
    // Whatever else the global config names must not run: a hook, an
    // fsmonitor, a credential helper of the user's.
    let tattle = s.env.root().join("tattle");
    let told = s.env.root().join("told");
    executable(
        &tattle,
        &format!("#!/bin/sh\necho \"$1\" >> '{}'\n", told.display()),
    );
    let hooks = s.env.root().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    executable(
        &hooks.join("pre-push"),
        &format!("#!/bin/sh\nexec '{}' hook\n", tattle.display()),
    );
    let config = format!(
        "[url \"{base}\"]\n\tinsteadOf = https://forge.invalid/\n[core]\n\thooksPath = {}\n\tfsmonitor = {t} fsmonitor\n[credential]\n\thelper = !{t} credential\n",
        hooks.display(),
        t = tattle.display()
    );
    let out = deliver_with_user_config(&s, &config);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !told.exists(),
        "{}",
        std::fs::read_to_string(&told).unwrap()
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let head = report["pull_requests"][0]["head"].as_str().unwrap();
    assert_eq!(report["pull_requests"][0]["pushed"], "created");
    assert!(GitHttp::tip(&s.bare, head).is_some(), "{report}");
}

#[test]
fn the_users_ssh_command_carries_an_ssh_push() {
    let (s, _) = codeboost_setup(Api::Forgejo);
    assert!(s.run(&[]).status.success());
    // An ssh remote whose "ssh" is the user's `core.sshCommand`: a script
    // that records it ran and serves the push from the bare repository,
    // as sshd would run `git-receive-pack` on the forge.
    let record = s.env.root().join("ssh-used");
    let script = s.env.root().join("fake-ssh");
    executable(
        &script,
        &format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nfor last; do :; done\nexec sh -c \"$last\"\n",
            record.display()
        ),
    );
    let url = format!("ssh://git@forge.invalid{}", s.bare.display());
    git(&s.env.repo(), &["remote", "set-url", "origin", &url]);
    let toml = format!(
        "[commands]\nallow = [[\"true\"]]\n[forge]\nkind = \"forgejo\"\napi_url = \"{}\"\nrepository = \"acme/app\"\n",
        s.forge.api_url()
    );
    write(s.env.root(), "planwright.toml", &toml);
    let config = format!(
        "[core]\n\tsshCommand = {}\n[ssh]\n\tvariant = simple\n",
        script.display()
    );
    let out = deliver_with_user_config(&s, &config);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let used = std::fs::read_to_string(&record).expect("the user's ssh command ran");
    assert!(
        used.contains("git@forge.invalid") && used.contains("git-receive-pack"),
        "{used}"
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let head = report["pull_requests"][0]["head"].as_str().unwrap();
    assert!(GitHttp::tip(&s.bare, head).is_some(), "{report}");
}

#[test]
fn a_push_the_git_server_fails_is_tried_again_within_bounds_and_said() {
    let (s, _) = codeboost_setup(Api::Gitlab);
    assert!(s.run(&[]).status.success());
    // Bounded: a server that fails every try fails the push, after 4.
    s.server.fail_next(4, 503);
    let (code, err) = refused(&s, Some(TOKEN));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("failed or could not be reached, on every try")
            && err.contains("the remote answered HTTP 503, 4 tries")
            && err.contains("run `planwright deliver` again"),
        "{err}"
    );
    let failed = |s: &Setup| {
        s.server
            .requests()
            .iter()
            .filter(|r| r.status == 503)
            .count()
    };
    assert_eq!(failed(&s), 4);
    s.server.fail_next(1, 503);
    let out = s.deliver(&[], Some(TOKEN));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("try 1 of pushing `planwright/")
            && said.contains("failed (the remote answered HTTP 503); tried again"),
        "{said}"
    );
    let head = &s.forge.pulls("acme/app")[0].head;
    assert!(GitHttp::tip(&s.bare, head).is_some());
    assert_eq!(failed(&s), 5);
}

#[test]
fn a_pull_request_the_forge_refuses_names_the_field_and_the_fix() {
    for api in [Api::Github, Api::Gitlab] {
        let (s, _) = codeboost_setup(api);
        // The run's base, `dev`, is not on the forge: opening into it is
        // refused (422).
        git(&s.env.repo(), &["branch", "dev", "main"]);
        let run = s.run(&["--base", "dev"]);
        assert!(run.status.success(), "{}", text(&run.stderr));
        let (code, err) = refused(&s, Some(TOKEN));
        assert_eq!(code, Some(2), "{api:?}: {err}");
        assert!(
            err.contains("opening the pull request from `planwright/")
                && err.contains("into `dev`")
                && err.contains("(422)"),
            "{api:?}: {err}"
        );
        assert!(
            err.contains("is pushed; fix what the forge names")
                && err.contains("push `dev` to the remote"),
            "{api:?}: {err}"
        );
        let named = if api == Api::Github {
            "base: invalid"
        } else {
            "dev"
        };
        assert!(err.contains(named), "{api:?}: {err}");
        // Nothing is lost: with the base pushed, the next `deliver` opens it.
        let base = git(&s.env.repo(), &["rev-parse", "main"]);
        git(
            &s.bare,
            &["--git-dir=.", "update-ref", "refs/heads/dev", &base],
        );
        let again = s.deliver_json();
        assert_eq!(again["pull_requests"][0]["action"], "opened", "{again}");
        assert_eq!(again["pull_requests"][0]["pushed"], "unchanged");
    }
}

#[test]
fn the_forge_out_of_reach_loses_nothing() {
    let (s, _) = codeboost_setup(Api::Github);
    assert!(s.run(&[]).status.success());
    // The forge goes down after the push: opening the pull request gets no
    // answer (a request that creates is never sent twice).
    s.forge
        .fail_request("POST", "/pulls", planwright_testkit::forge::Fault::HangUp);
    let (code, err) = refused(&s, Some(TOKEN));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("could not reach GitHub") && err.contains("check the network"),
        "{err}"
    );
    assert!(s.forge.pulls("acme/app").is_empty());
    let again = s.deliver_json();
    assert_eq!(again["pull_requests"][0]["action"], "opened", "{again}");
    assert_eq!(again["pull_requests"][0]["pushed"], "unchanged");
    // A forge whose port is closed: said, with its URL, before any push.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let toml = format!(
        "[commands]\nallow = [[\"true\"]]\n[forge]\nkind = \"github\"\napi_url = \"{url}\"\nbranch = \"planwright/other\"\n"
    );
    write(s.env.root(), "planwright.toml", &toml);
    let (code, err) = refused(&s, Some(TOKEN));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!("could not reach GitHub at `{url}` (tries: 4)")),
        "{err}"
    );
    assert_eq!(GitHttp::tip(&s.bare, "planwright/other"), None);
}

/// `[respond.labels]` of the label tests.
const LABELS: &str =
    "[respond.labels]\nrunning = \"planwright:running\"\nfailed = \"planwright:failed\"\n";

#[test]
fn imported_issues_are_labelled_while_their_tickets_run_and_fail_and_cleared_when_delivered() {
    for api in [Api::Github, Api::Gitlab, Api::Forgejo] {
        let s = setup(api, &json!({}), LABELS);
        let one = s.forge.add_issue("acme/app", "Add one", "Files: one.txt");
        let two = s.forge.add_issue("acme/app", "Add two", "Files: two.txt");
        // Left by an earlier run: taken off as the ticket runs again.
        s.forge
            .label("acme/app", one, &["planwright:failed", "bug"]);
        let import = s
            .env
            .command()
            .args(["import", "issues", "--repo", "repo", "-o", "plan.json"])
            .env(token_var(api), TOKEN)
            .output()
            .unwrap();
        assert!(import.status.success(), "{}", text(&import.stderr));
        s.env
            .fixture(&format!("issue-{one}"), 0, "one.txt", "one\n");
        // Outside its scope: the ticket fails.
        s.env
            .fixture(&format!("issue-{two}"), 0, "elsewhere.txt", "no\n");
        let run = s.run(&["--gate", "true"]);
        assert_eq!(run.status.code(), Some(1), "{api:?}: {}", text(&run.stderr));
        assert!(
            !text(&run.stderr).contains("warning: could not"),
            "{}",
            text(&run.stderr)
        );
        let labels = |n| s.forge.labels("acme/app", n);
        let said = format!("{api:?}: {}{}", text(&run.stdout), text(&run.stderr));
        assert_eq!(labels(one), ["bug"], "{said}");
        assert_eq!(labels(two), ["planwright:failed"], "{said}");
        // `running` was put on both while they ran (Forgejo by the
        // label's id: two's issue got running and then failed).
        let requests = s.forge.requests();
        let put = |n: u64| {
            let on = format!("/issues/{n}");
            requests
                .iter()
                .filter(|r| r.method != "GET" && r.method != "DELETE" && r.path.contains(&on))
                .filter(|r| {
                    api == Api::Forgejo || r.body.to_string().contains("planwright:running")
                })
                .count()
        };
        let least = if api == Api::Forgejo { 2 } else { 1 };
        assert!(put(one) >= 1 && put(two) >= least, "{api:?}: {requests:?}");
        // A delivered ticket's issue loses both labels.
        s.forge
            .label("acme/app", one, &["planwright:running", "bug"]);
        let out = s.deliver(&[], Some(TOKEN));
        assert!(out.status.success(), "{api:?}: {}", text(&out.stderr));
        assert_eq!(labels(one), ["bug"], "{api:?}");
        assert_eq!(labels(two), ["planwright:failed"], "{api:?}");
    }
}

#[test]
fn a_label_that_is_not_a_label_name_is_refused_on_its_line() {
    let (s, _) = codeboost_setup(Api::Github);
    let toml = format!(
        "[forge]\nkind = \"github\"\napi_url = \"{}\"\n[respond.labels]\nrunning = \"a,b\"\n",
        s.forge.api_url()
    );
    write(s.env.root(), "planwright.toml", &toml);
    let out = s.run(&[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("line 5") && err.contains("without a comma"),
        "{err}"
    );
}
