//! The client half of the one live forge tier (docs/forge.md#the-live-tier):
//! the client of one real forge, on a scratch repository, when
//! `PLANWRIGHT_FORGE_TESTS` names it (the variables are read by
//! `planwright_testkit::forge::live`, as for the CLI's half, `forge_live.rs`).
//!
//! It opens (or reuses) a draft pull request of `PLANWRIGHT_FORGE_BRANCH`,
//! turns it ready and back, rewrites its body, comments on it and reads it
//! all back; the pull request stays open for the next run.

use super::*;
use planwright_testkit::forge::live::Live;

#[test]
fn the_client_works_against_a_real_forge() {
    let Some(live) = Live::from_env("the_client_works_against_a_real_forge") else {
        return;
    };
    let kind: ForgeKind = live.kind.parse().unwrap();
    let endpoint = Endpoint {
        kind,
        api_url: live.api_url.clone(),
        repository: Repository::parse(&live.repository).unwrap(),
        token: Token::new(live.token.clone()),
    };
    let branch = live.branch.clone();
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
