//! The opt-in live tier: the client of one real forge, on a scratch
//! repository. Never run by default. Set
//!
//! - `PLANWRIGHT_FORGE_TESTS` to `github`, `gitlab` or `forgejo`;
//! - `PLANWRIGHT_FORGE_TOKEN` to a token with the scopes `deliver` needs;
//! - `PLANWRIGHT_FORGE_REPOSITORY` to the scratch repository (`owner/name`);
//! - `PLANWRIGHT_FORGE_BRANCH` to a branch pushed there (not its default);
//! - `PLANWRIGHT_FORGE_API_URL` when the forge is not github.com,
//!   gitlab.com or codeberg.org.
//!
//! It opens (or reuses) a draft pull request of that branch, turns it
//! ready and back, rewrites its body, comments on it and reads it all
//! back; the pull request stays open for the next run. When the variable
//! names a forge and anything else is missing, the test fails: it never
//! skips silently.

use super::*;

fn required(name: &str) -> String {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!("PLANWRIGHT_FORGE_TESTS is set but {name} is not: set it (see crates/forge/tests/forges/live.rs)"),
    }
}

#[test]
fn the_client_works_against_a_real_forge() {
    let Ok(kind) = std::env::var("PLANWRIGHT_FORGE_TESTS") else {
        eprintln!("live forge test: not run; set PLANWRIGHT_FORGE_TESTS=github|gitlab|forgejo");
        return;
    };
    let kind: ForgeKind = kind
        .parse()
        .unwrap_or_else(|e| panic!("PLANWRIGHT_FORGE_TESTS: {e}"));
    let default_api = match kind {
        ForgeKind::Github => "https://api.github.com",
        ForgeKind::Gitlab => "https://gitlab.com/api/v4",
        ForgeKind::Forgejo => "https://codeberg.org/api/v1",
    };
    let endpoint = Endpoint {
        kind,
        api_url: std::env::var("PLANWRIGHT_FORGE_API_URL").unwrap_or_else(|_| default_api.into()),
        repository: Repository::parse(&required("PLANWRIGHT_FORGE_REPOSITORY")).unwrap(),
        token: Token::new(required("PLANWRIGHT_FORGE_TOKEN")),
    };
    let branch = required("PLANWRIGHT_FORGE_BRANCH");
    let forge = connect(&endpoint).unwrap();
    let info = forge.repository_info().unwrap();
    assert_ne!(
        info.default_branch, branch,
        "PLANWRIGHT_FORGE_BRANCH must not be the default branch"
    );

    let pull = match forge.find_pull_request(&branch).unwrap() {
        Some(p) if p.state == PullState::Open => p,
        _ => forge
            .open_pull_request(&NewPullRequest {
                title: "planwright live test".into(),
                body: "Opened by planwright's live forge test.".into(),
                head: branch.clone(),
                base: info.default_branch.clone(),
                draft: true,
            })
            .unwrap(),
    };
    let set = |draft: bool, body: &str| PullRequestUpdate {
        draft: Some(draft),
        body: Some(body.into()),
        ..PullRequestUpdate::default()
    };
    let ready = forge
        .update_pull_request(pull.number, &set(false, "Ready."))
        .unwrap();
    assert!(!ready.draft && ready.body == "Ready.", "{ready:?}");
    let draft = forge
        .update_pull_request(pull.number, &set(true, "Draft again."))
        .unwrap();
    assert!(draft.draft && draft.body == "Draft again.", "{draft:?}");
    assert_eq!(
        forge.find_pull_request(&branch).unwrap().unwrap().number,
        pull.number
    );

    let marker = format!("<!-- planwright-live {} -->", std::process::id());
    forge
        .post_comment(CommentOn::PullRequest(pull.number), &marker)
        .unwrap();
    let comments = forge.comments(CommentOn::PullRequest(pull.number)).unwrap();
    assert!(comments.iter().any(|c| c.body == marker), "{comments:?}");

    forge.reviews(pull.number).unwrap();
    forge.review_comments(pull.number).unwrap();
    forge.checks(pull.number).unwrap();
    let refused = Endpoint {
        token: Token::new("not-a-token"),
        ..endpoint.clone()
    };
    let err = connect(&refused).unwrap().repository_info().unwrap_err();
    assert!(
        matches!(
            err,
            ForgeError::Unauthorized { .. } | ForgeError::RepositoryNotFound { .. }
        ),
        "{err:?}"
    );
}
