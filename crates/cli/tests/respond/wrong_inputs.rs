//! Part of `respond.rs`: the wrong inputs a user makes with `deliver`,
//! `respond` and `import issues`, each refused with what is wrong and the
//! fix, never a panic nor the token.

use super::*;

/// `args` run with the forge's token (and, for `respond`, the scripted
/// agent): its exit code and all it printed, which never holds the token.
fn said(s: &Setup, args: &[&str]) -> (Option<i32>, String) {
    let out = s.command(args, args[0] == "respond");
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!all.contains(TOKEN), "the token printed: {all}");
    assert!(!all.contains("panicked"), "{all}");
    (out.status.code(), all)
}

const RESPOND: &[&str] = &["respond", "--repo", "repo"];
const DELIVER: &[&str] = &["deliver", "--repo", "repo"];
const IMPORT: &[&str] = &["import", "issues", "--repo", "repo", "--dry-run"];

/// Each of `commands` exits 2 and prints every one of `parts`.
fn refused_with(s: &Setup, commands: &[&[&str]], parts: &[&str]) {
    for args in commands {
        let (code, all) = said(s, args);
        assert_eq!(code, Some(2), "{args:?}: {all}");
        for part in parts {
            assert!(all.contains(part), "{args:?}: no {part:?} in {all}");
        }
    }
}

#[test]
fn wrong_runs_token_variables_forges_and_remotes_are_refused_with_the_fix() {
    let s = Setup::delivered(Api::Github, "");
    refused_with(
        &s,
        &[
            &["respond", "--repo", "repo", "--run", "nope"],
            &["deliver", "--repo", "repo", "--run", "nope"],
        ],
        &["no run `nope`", "hint: omit `--run` for the newest run"],
    );
    // The token in GITHUB_TOKEN, the forge a GitLab.
    let gitlab = format!(
        "[forge]\nkind = \"gitlab\"\napi_url = \"{}\"\n",
        s.forge.api_url()
    );
    write(s.env.root(), "planwright.toml", &gitlab);
    refused_with(
        &s,
        &[RESPOND, DELIVER, IMPORT],
        &[
            "none of `GITLAB_TOKEN` is set",
            "hint: set `GITLAB_TOKEN`",
            "token_env",
        ],
    );
    // No `[forge]`, on a remote that is none of the known forges'.
    write(s.env.root(), "planwright.toml", "");
    refused_with(
        &s,
        &[RESPOND, DELIVER, IMPORT],
        &[
            "so `kind` is needed: write `kind = \"github\"`",
            "hint: see docs/forge.md",
        ],
    );
    // A remote whose repository the forge does not have.
    s.configure("");
    let foreign = "https://example.com/x/y.git";
    git(&s.env.repo(), &["remote", "set-url", "origin", foreign]);
    refused_with(
        &s,
        &[RESPOND, DELIVER, IMPORT],
        &["GitHub has no repository `x/y`", "hint: check `repository`"],
    );
    assert!(s.replies().is_empty(), "no round ran");
}

#[test]
fn respond_on_a_closed_pull_request_says_so_and_answers_nothing() {
    let s = Setup::delivered(Api::Github, "");
    s.forge
        .add_review_comment(REPO, s.pull, "ana", "b.txt", Some(1), "change it");
    s.forge.close_pull(REPO, s.pull);
    let (code, all) = said(&s, RESPOND);
    assert_eq!(code, Some(0), "{all}");
    assert!(all.contains("is closed: nothing more to answer"), "{all}");
    let (code, all) = said(&s, &["respond", "--repo", "repo", "--output", "json"]);
    assert_eq!(code, Some(0), "{all}");
    let line: Value = serde_json::from_str(all.trim()).unwrap();
    assert_eq!(line["outcome"], "ended", "{line}");
    assert!(s.replies().is_empty());
}

#[test]
fn respond_before_a_run_or_its_delivery_says_what_to_do_first() {
    let env = Env::new(&[("README.md", "hello\n")]).with_cli(BIN);
    let forge = FakeForge::start(Api::Github);
    forge.add_repository(REPO);
    let server = GitHttp::start(&env.root().join("server"), TOKEN);
    let bare = server.create(REPO, &env.repo(), "main");
    forge.branches_from(REPO, &bare);
    git(&env.repo(), &["remote", "add", "origin", &server.url(REPO)]);
    let toml = format!(
        "[forge]\nkind = \"github\"\napi_url = \"{}\"\n",
        forge.api_url()
    );
    write(env.root(), "planwright.toml", &toml);
    let scripted = format!("scripted:{}", env.fixtures().display());
    let command = |args: &[&str]| {
        let out = env
            .command()
            .args(args)
            .env("GITHUB_TOKEN", TOKEN)
            .output()
            .unwrap();
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!all.contains(TOKEN) && !all.contains("panicked"), "{all}");
        (out.status.code(), all)
    };
    let respond = ["respond", "--repo", "repo", "--agent", &scripted];
    for args in [&respond[..], DELIVER] {
        let (code, all) = command(args);
        assert_eq!(code, Some(2), "{all}");
        assert!(
            all.contains("no run in") && all.contains("hint: start one with `planwright run"),
            "{all}"
        );
    }
    write(env.root(), "plan.json", &plan("run").to_string());
    env.fixture("A", 1, "a.txt", "a\n");
    env.fixture("B", 1, "b.txt", "b\n");
    let (code, all) = command(&["run", "plan.json", "--repo", "repo", "--agent", &scripted]);
    assert_eq!(code, Some(0), "{all}");
    let (code, all) = command(&respond);
    assert_eq!(code, Some(0), "{all}");
    assert!(
        all.contains("no round on `planwright/")
            && all.contains("no pull request has the head")
            && all.contains("run `planwright deliver` first"),
        "{all}"
    );
    let mut json = respond.to_vec();
    json.extend(["--output", "json"]);
    let (code, all) = command(&json);
    assert_eq!(code, Some(0), "{all}");
    let line: Value = serde_json::from_str(all.trim()).unwrap();
    assert_eq!(line["outcome"], "refused", "{line}");
    assert!(forge.pulls(REPO).is_empty());
    // `--watch` goes on until `deliver` opens the pull request, answers
    // it, and ends when it merges.
    let mut child = env
        .command()
        .args(respond)
        .args(["--watch", "--interval", "1s"])
        .env("GITHUB_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("run `planwright deliver` first"), "{first}");
    let (code, all) = command(DELIVER);
    assert_eq!(code, Some(0), "{all}");
    let line = lines
        .by_ref()
        .map(Result::unwrap)
        .find(|l| !l.contains("deliver` first") && !l.starts_with("waiting"))
        .unwrap();
    assert!(line.contains("nothing new"), "{line}");
    forge.merge(REPO, forge.pulls(REPO)[0].number);
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    assert!(child.wait().unwrap().success(), "{rest:?}");
    assert!(rest.last().unwrap().contains("is merged"), "{rest:?}");
}
