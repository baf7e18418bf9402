//! The CLI half of the one live forge tier (docs/forge.md#the-live-tier):
//! a real run delivered to a scratch repository on a real forge, when
//! `PLANWRIGHT_FORGE_TESTS` names it (the variables are read by
//! `planwright_testkit::forge::live`, as for the forge crate's half).
//! Off, it says so in one line; on, a missing variable fails it.
#![forbid(unsafe_code)]

use planwright_testkit::forge::live::Live;
use planwright_testkit::{git, text, write, Env};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

#[test]
fn a_run_is_delivered_to_a_real_forge_once() {
    let Some(live) = Live::from_env("a_run_is_delivered_to_a_real_forge_once") else {
        return;
    };
    let (kind, token, repository, remote) =
        (&live.kind, &live.token, &live.repository, &live.remote);
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
            remote,
            "HEAD:refs/remotes/live/base",
        ])
        .env("PLANWRIGHT_FORGE_TOKEN", token)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(fetched.success(), "fetching `{remote}` failed");
    git(&repo, &["checkout", "-q", "-B", "main", "live/base"]);
    git(&repo, &["remote", "add", "origin", remote]);
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
    toml.push_str(&format!("api_url = \"{}\"\n", live.api_url));
    write(env.root(), "planwright.toml", &toml);
    let run = env.scripted("run", &[]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let deliver = |args: &[&str]| -> Value {
        let out = env
            .command()
            .args(["deliver", "--repo", "repo", "--output", "json"])
            .args(args)
            .env("PLANWRIGHT_FORGE_TOKEN", token)
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
