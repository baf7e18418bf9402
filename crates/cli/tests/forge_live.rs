//! The opt-in live tier of `deliver` (docs/forge.md#live-forge-tests): a
//! real run delivered to a scratch repository on a real forge. Never run
//! by default (`#[ignore]`); run with
//! `PLANWRIGHT_FORGE_TESTS=github|gitlab|forgejo`, a token and the scratch
//! repository in the environment, and `-- --ignored`. It fails, never
//! skips, when any of them is missing.

use planwright_testkit::{git, text, write, Env};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// A variable the tier needs, or a failure naming it.
fn needed(name: &str, why: &str) -> String {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v,
        _ => {
            panic!("the live forge tier needs `{name}` ({why}); see docs/forge.md#live-forge-tests")
        }
    }
}

#[test]
#[ignore = "the live forge tier: set PLANWRIGHT_FORGE_TESTS, see docs/forge.md"]
fn a_run_is_delivered_to_a_real_forge_once() {
    let kind = needed("PLANWRIGHT_FORGE_TESTS", "`github`, `gitlab` or `forgejo`");
    assert!(
        ["github", "gitlab", "forgejo"].contains(&kind.as_str()),
        "PLANWRIGHT_FORGE_TESTS is `{kind}`: write `github`, `gitlab` or `forgejo`"
    );
    let token = needed(
        "PLANWRIGHT_FORGE_TOKEN",
        "a token of the scratch repository",
    );
    let repository = needed(
        "PLANWRIGHT_FORGE_REPOSITORY",
        "the scratch repository, `owner/name`",
    );
    let host = match kind.as_str() {
        "github" => "github.com",
        "gitlab" => "gitlab.com",
        _ => "codeberg.org",
    };
    let remote = std::env::var("PLANWRIGHT_FORGE_REMOTE")
        .unwrap_or_else(|_| format!("https://{host}/{repository}.git"));
    let api = std::env::var("PLANWRIGHT_FORGE_API_URL").ok();

    let env = Env::new(&[]).with_cli(BIN);
    let repo = env.repo();
    // The scratch repository's default branch, fetched with the token.
    let helper = "credential.helper=!f() { echo username=x-access-token; echo \"password=$PLANWRIGHT_FORGE_TOKEN\"; }; f";
    let fetched = std::process::Command::new("git")
        .current_dir(&repo)
        .args([
            "-c",
            helper,
            "fetch",
            "-q",
            &remote,
            "HEAD:refs/remotes/live/base",
        ])
        .env("PLANWRIGHT_FORGE_TOKEN", &token)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(fetched.success(), "fetching `{remote}` failed");
    git(&repo, &["checkout", "-q", "-B", "main", "live/base"]);
    git(&repo, &["remote", "add", "origin", &remote]);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let file = format!("planwright-live/{stamp}.txt");
    env.fixture("live", 0, &file, "delivered by the live tier\n");
    write(
        env.root(),
        "plan.json",
        &serde_json::json!({"planwright": 1, "source_format": "native", "base": "main",
            "tickets": [{"id": "live", "title": "Live delivery test", "body": "add the file",
                "scope": [{"pattern": file, "op": "create"}]}]})
        .to_string(),
    );
    let mut toml = format!("[forge]\nkind = \"{kind}\"\nrepository = \"{repository}\"\ntoken_env = \"PLANWRIGHT_FORGE_TOKEN\"\n");
    if let Some(api) = api {
        toml.push_str(&format!("api_url = \"{api}\"\n"));
    }
    write(env.root(), "planwright.toml", &toml);
    let run = env.scripted("run", &[]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let deliver = |args: &[&str]| -> Value {
        let out = env
            .command()
            .args(["deliver", "--repo", "repo", "--output", "json"])
            .args(args)
            .env("PLANWRIGHT_FORGE_TOKEN", &token)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let first = deliver(&[]);
    let pr = &first["pull_requests"][0];
    assert_eq!(
        (pr["state"].as_str(), pr["action"].as_str()),
        (Some("open"), Some("opened")),
        "{first}"
    );
    let again = deliver(&[]);
    assert_eq!(
        again["pull_requests"][0]["number"], pr["number"],
        "no second pull request"
    );
    assert_eq!(again["pull_requests"][0]["pushed"], "unchanged");
}
