//! The three clients against the three fake forges of `planwright-testkit`:
//! every operation, pagination, every error class, draft toggling, and
//! the token kept out of URLs and `Debug`.
#![forbid(unsafe_code)]

use planwright_forge::{
    connect, connect_with, CommentOn, Endpoint, Forge, ForgeError, ForgeKind, IssueState,
    NewPullRequest, Options, PullRequestUpdate, PullState, Repository, RetryPolicy, Timer, Token,
};
use planwright_testkit::forge::{Api, FakeForge, Fault, BOT, TOKEN};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const REPO: &str = "acme/widgets";
const HEAD: &str = "planwright/run-1";

/// A timer that records the waits it is asked for and returns at once.
struct Waits {
    slept: Mutex<Vec<Duration>>,
    now: SystemTime,
}

impl Timer for Waits {
    fn sleep(&self, duration: Duration) {
        self.slept.lock().unwrap().push(duration);
    }
    fn now(&self) -> SystemTime {
        self.now
    }
}

/// The fixed "now" of every test's timer.
const NOW: u64 = 1_800_000_000;

/// The client is dropped first: its kept-alive connections close, so the
/// fake's threads end at once.
struct Setup {
    forge: Box<dyn Forge>,
    fake: FakeForge,
    waits: Arc<Waits>,
    kind: ForgeKind,
}

impl Setup {
    fn slept(&self) -> Vec<Duration> {
        self.waits.slept.lock().unwrap().clone()
    }

    fn new_pull(&self, head: &str, draft: bool) -> NewPullRequest {
        NewPullRequest {
            title: format!("Deliver {head}"),
            body: "What was verified.".into(),
            head: head.into(),
            base: "main".into(),
            draft,
        }
    }

    /// A client of the same fake with another token or repository.
    fn other(&self, repository: &str, token: &str) -> Box<dyn Forge> {
        client(&self.fake, self.kind, repository, token, self.waits.clone())
    }
}

fn kind_of(api: Api) -> ForgeKind {
    match api {
        Api::Github => ForgeKind::Github,
        Api::Gitlab => ForgeKind::Gitlab,
        Api::Forgejo => ForgeKind::Forgejo,
    }
}

fn client(
    fake: &FakeForge,
    kind: ForgeKind,
    repository: &str,
    token: &str,
    waits: Arc<Waits>,
) -> Box<dyn Forge> {
    let endpoint = Endpoint {
        kind,
        api_url: fake.api_url(),
        repository: Repository::parse(repository).unwrap(),
        token: Token::new(token),
    };
    let options = Options {
        retry: RetryPolicy {
            attempts: 3,
            backoff: Duration::from_secs(1),
            max_wait: Duration::from_secs(60),
        },
        timer: waits,
        timeout: Duration::from_secs(20),
    };
    connect_with(&endpoint, options).unwrap()
}

fn setup(api: Api) -> Setup {
    let fake = FakeForge::start(api);
    fake.add_repository(REPO);
    fake.add_branch(REPO, HEAD);
    let waits = Arc::new(Waits {
        slept: Mutex::new(Vec::new()),
        now: UNIX_EPOCH + Duration::from_secs(NOW),
    });
    let kind = kind_of(api);
    let forge = client(&fake, kind, REPO, TOKEN, waits.clone());
    Setup {
        forge,
        fake,
        waits,
        kind,
    }
}

const APIS: [Api; 3] = [Api::Github, Api::Gitlab, Api::Forgejo];

#[test]
fn a_pull_request_is_opened_found_updated_and_seen_merged() {
    for api in APIS {
        let s = setup(api);
        let info = s.forge.repository_info().unwrap();
        assert_eq!(
            (info.full_name.as_str(), info.default_branch.as_str()),
            (REPO, "main")
        );
        assert_eq!(s.forge.find_pull_request(HEAD).unwrap(), None, "{api:?}");

        let opened = s.forge.open_pull_request(&s.new_pull(HEAD, false)).unwrap();
        assert_eq!(opened.number, 1, "{api:?}");
        assert_eq!((opened.head.as_str(), opened.base.as_str()), (HEAD, "main"));
        assert_eq!((opened.state, opened.draft), (PullState::Open, false));
        assert_eq!(opened.title, format!("Deliver {HEAD}"));
        assert!(opened.url.contains('1'), "{}", opened.url);
        assert_eq!(
            s.forge.find_pull_request(HEAD).unwrap(),
            Some(opened.clone())
        );
        assert_eq!(s.forge.find_pull_request("planwright/other").unwrap(), None);

        let update = PullRequestUpdate {
            body: Some("Two tickets merged.".into()),
            ..PullRequestUpdate::default()
        };
        let updated = s.forge.update_pull_request(1, &update).unwrap();
        assert_eq!(updated.body, "Two tickets merged.", "{api:?}");
        assert_eq!(updated.title, opened.title, "{api:?}");
        assert_eq!(s.fake.pulls(REPO)[0].body, "Two tickets merged.");

        s.fake.add_branch(REPO, "planwright/parent");
        let rebased = PullRequestUpdate {
            base: Some("planwright/parent".into()),
            ..PullRequestUpdate::default()
        };
        assert_eq!(
            s.forge.update_pull_request(1, &rebased).unwrap().base,
            "planwright/parent"
        );

        s.fake.merge(REPO, 1);
        let merged = s.forge.pull_request(1).unwrap();
        assert_eq!(merged.state, PullState::Merged, "{api:?}");
        assert_eq!(
            s.forge.find_pull_request(HEAD).unwrap().unwrap().state,
            PullState::Merged
        );
    }
}

#[test]
fn a_second_pull_request_for_the_same_head_is_refused_and_the_open_one_found() {
    for api in APIS {
        let s = setup(api);
        s.forge.open_pull_request(&s.new_pull(HEAD, false)).unwrap();
        let err = s
            .forge
            .open_pull_request(&s.new_pull(HEAD, false))
            .unwrap_err();
        let ForgeError::Validation {
            status, message, ..
        } = &err
        else {
            panic!("{api:?}: {err:?}");
        };
        // GitHub says 422; GitLab and Forgejo say 409 (a conflict).
        let expected = if api == Api::Github { 422 } else { 409 };
        assert_eq!(*status, expected, "{api:?}");
        assert!(
            message.to_lowercase().contains("already exists"),
            "{api:?}: {message}"
        );
        assert_eq!(s.fake.pulls(REPO).len(), 1);

        // Closed, then opened anew: the open one is the one found.
        s.fake.close_pull(REPO, 1);
        assert_eq!(
            s.forge.find_pull_request(HEAD).unwrap().unwrap().state,
            PullState::Closed
        );
        let again = s.forge.open_pull_request(&s.new_pull(HEAD, false)).unwrap();
        let found = s.forge.find_pull_request(HEAD).unwrap().unwrap();
        assert_eq!(
            (found.number, found.state),
            (again.number, PullState::Open),
            "{api:?}"
        );
    }
}

#[test]
fn a_head_branch_the_forge_does_not_have_is_refused() {
    for api in APIS {
        let s = setup(api);
        let err = s
            .forge
            .open_pull_request(&s.new_pull("planwright/never-pushed", false))
            .unwrap_err();
        match (api, &err) {
            (
                Api::Github,
                ForgeError::Validation {
                    status: 422,
                    message,
                    ..
                },
            ) => {
                assert!(message.contains("head: invalid"), "{message}")
            }
            (
                Api::Gitlab,
                ForgeError::Validation {
                    status: 422,
                    message,
                    ..
                },
            ) => {
                assert!(message.contains("does not exist"), "{message}")
            }
            // Forgejo answers 404 for a branch it does not have.
            (Api::Forgejo, ForgeError::NotFound { what, .. }) => {
                assert!(what.contains("planwright/never-pushed"), "{what}")
            }
            _ => panic!("{api:?}: {err:?}"),
        }
        assert!(s.fake.pulls(REPO).is_empty());
    }
}

#[test]
fn a_branch_in_a_bare_repository_counts_as_pushed() {
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("remote.git");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    planwright_testkit::git(
        dir.path(),
        &["init", "--bare", "-q", bare.to_str().unwrap()],
    );
    planwright_testkit::git(&work, &["init", "-q"]);
    planwright_testkit::write(&work, "a.txt", "a\n");
    planwright_testkit::git(&work, &["add", "."]);
    planwright_testkit::git(&work, &["commit", "-qm", "a"]);
    planwright_testkit::git(
        &work,
        &[
            "push",
            "-q",
            bare.to_str().unwrap(),
            "HEAD:refs/heads/planwright/pushed",
        ],
    );
    for api in APIS {
        let s = setup(api);
        s.fake.branches_from(REPO, &bare);
        let pull = s
            .forge
            .open_pull_request(&s.new_pull("planwright/pushed", false))
            .unwrap();
        assert_eq!(pull.head, "planwright/pushed", "{api:?}");
    }
}

#[test]
fn draft_state_toggles_both_ways() {
    for api in APIS {
        let s = setup(api);
        let opened = s.forge.open_pull_request(&s.new_pull(HEAD, true)).unwrap();
        assert!(opened.draft, "{api:?}");
        assert_eq!(
            opened.title,
            format!("Deliver {HEAD}"),
            "{api:?}: the prefix is not the title"
        );
        assert!(s.fake.pulls(REPO)[0].draft, "{api:?}");

        let ready = PullRequestUpdate {
            draft: Some(false),
            ..PullRequestUpdate::default()
        };
        let now = s.forge.update_pull_request(1, &ready).unwrap();
        assert!(!now.draft, "{api:?}");
        assert_eq!(now.title, format!("Deliver {HEAD}"), "{api:?}");
        assert!(!s.fake.pulls(REPO)[0].draft, "{api:?}");

        let back = PullRequestUpdate {
            draft: Some(true),
            body: Some("A ticket failed.".into()),
            ..PullRequestUpdate::default()
        };
        let now = s.forge.update_pull_request(1, &back).unwrap();
        assert!(
            now.draft && now.body == "A ticket failed.",
            "{api:?}: {now:?}"
        );
        assert!(s.fake.pulls(REPO)[0].draft, "{api:?}");
        assert_eq!(
            s.forge.pull_request(1).unwrap().title,
            format!("Deliver {HEAD}")
        );

        // Asking for the state it is in changes nothing.
        let same = PullRequestUpdate {
            draft: Some(true),
            ..PullRequestUpdate::default()
        };
        assert!(s.forge.update_pull_request(1, &same).unwrap().draft);
        assert!(s.fake.pulls(REPO)[0].draft);

        let requests = s.fake.requests();
        match api {
            Api::Github => {
                let graphql: Vec<_> = requests.iter().filter(|r| r.path == "/graphql").collect();
                assert_eq!(
                    graphql.len(),
                    2,
                    "one mutation each way, none when unchanged"
                );
                let query = |i: usize| graphql[i].body["query"].as_str().unwrap().to_string();
                assert!(query(0).contains("markPullRequestReadyForReview"));
                assert!(query(1).contains("convertPullRequestToDraft"));
                assert!(requests
                    .iter()
                    .filter(|r| r.method == "PATCH")
                    .all(|r| r.body.get("draft").is_none()));
            }
            Api::Gitlab => assert!(s.fake.pulls(REPO)[0].title.starts_with("Draft: ")),
            Api::Forgejo => assert!(s.fake.pulls(REPO)[0].title.starts_with("WIP: ")),
        }
    }
}

#[test]
fn issues_are_read_told_from_pull_requests_and_missing_ones_are_none() {
    for api in APIS {
        let s = setup(api);
        let n = s.fake.add_issue(REPO, "Widgets wobble", "They do.");
        let issue = s.forge.issue(n).unwrap().unwrap();
        assert_eq!(
            (issue.number, issue.title.as_str(), issue.body.as_str()),
            (n, "Widgets wobble", "They do.")
        );
        assert_eq!(
            (issue.state, issue.is_pull_request),
            (IssueState::Open, false),
            "{api:?}"
        );
        assert_eq!(s.forge.issue(99).unwrap(), None, "{api:?}");

        s.fake.close_issue(REPO, n);
        assert_eq!(s.forge.issue(n).unwrap().unwrap().state, IssueState::Closed);

        let pull = s.forge.open_pull_request(&s.new_pull(HEAD, false)).unwrap();
        let as_issue = s.forge.issue(pull.number).unwrap();
        match api {
            // GitLab numbers merge requests apart: #1 is the issue.
            Api::Gitlab => assert!(!as_issue.unwrap().is_pull_request),
            _ => assert!(as_issue.unwrap().is_pull_request, "{api:?}"),
        }
    }
}

#[test]
fn comments_are_posted_and_every_page_is_read() {
    for api in APIS {
        let s = setup(api);
        s.fake.set_page_size(2);
        let n = s.fake.add_issue(REPO, "Remaining scope", "");
        s.fake.add_comment(REPO, n, false, "someone", "First!");
        for i in 0..4 {
            let posted = s
                .forge
                .post_comment(CommentOn::Issue(n), &format!("note {i}"))
                .unwrap();
            assert_eq!(
                (posted.author.as_str(), posted.body.as_str()),
                (BOT, format!("note {i}").as_str())
            );
        }
        let comments = s.forge.comments(CommentOn::Issue(n)).unwrap();
        let bodies: Vec<&str> = comments.iter().map(|c| c.body.as_str()).collect();
        assert_eq!(
            bodies,
            ["First!", "note 0", "note 1", "note 2", "note 3"],
            "{api:?}"
        );
        assert_eq!(comments[0].author, "someone");
        assert_eq!(s.fake.comments(REPO, n, false).len(), 5);
        let pages = s
            .fake
            .requests()
            .into_iter()
            .filter(|r| {
                r.method == "GET" && r.path.contains("/comments") || r.path.contains("/notes?")
            })
            .filter(|r| r.method == "GET")
            .count();
        // Forgejo's comment listing is one unpaged answer; the others page.
        let expected = if api == Api::Forgejo { 1 } else { 3 };
        assert_eq!(pages, expected, "{api:?}");
    }
}

#[test]
fn pull_request_listings_are_read_to_the_last_page() {
    for api in APIS {
        let s = setup(api);
        s.fake.set_page_size(2);
        for i in 0..5 {
            let head = format!("planwright/t{i}");
            s.fake.add_branch(REPO, &head);
            s.forge
                .open_pull_request(&s.new_pull(&head, false))
                .unwrap();
        }
        // The oldest is on the last page when the forge does not filter.
        let found = s.forge.find_pull_request("planwright/t0").unwrap().unwrap();
        assert_eq!(found.number, 1, "{api:?}");
        let listing = s
            .fake
            .requests()
            .into_iter()
            .filter(|r| r.method == "GET")
            .count();
        // Forgejo has no head filter: three pages of two.
        let expected = if api == Api::Forgejo { 3 } else { 1 };
        assert_eq!(listing, expected, "{api:?}");
    }
}

#[test]
fn pull_request_comments_go_to_its_conversation_and_system_notes_are_not_comments() {
    for api in APIS {
        let s = setup(api);
        let pull = s.forge.open_pull_request(&s.new_pull(HEAD, false)).unwrap();
        s.forge
            .post_comment(
                CommentOn::PullRequest(pull.number),
                "Round 1: nothing changed.",
            )
            .unwrap();
        let update = PullRequestUpdate {
            body: Some("new body".into()),
            ..PullRequestUpdate::default()
        };
        s.forge.update_pull_request(pull.number, &update).unwrap();
        let comments = s
            .forge
            .comments(CommentOn::PullRequest(pull.number))
            .unwrap();
        assert_eq!(comments.len(), 1, "{api:?}: {comments:?}");
        assert_eq!(comments[0].body, "Round 1: nothing changed.");
        if api == Api::Gitlab {
            let kept = s.fake.comments(REPO, pull.number, true);
            assert!(
                kept.iter().any(|c| c.system),
                "the fake keeps a system note"
            );
            let paths: Vec<String> = s.fake.requests().into_iter().map(|r| r.path).collect();
            assert!(
                paths.iter().any(|p| p.contains("/merge_requests/1/notes")),
                "{paths:?}"
            );
        }
    }
}

#[test]
fn a_missing_repository_and_a_missing_thing_are_told_apart() {
    for api in APIS {
        let s = setup(api);
        let gone = s.other("acme/nowhere", TOKEN);
        let err = gone.repository_info().unwrap_err();
        assert!(
            matches!(err, ForgeError::RepositoryNotFound { .. }),
            "{api:?}: {err:?}"
        );
        assert!(err.to_string().contains("acme/nowhere"), "{err}");
        assert!(err.hint().unwrap().contains("repository"));
        let err = gone.pull_request(1).unwrap_err();
        assert!(
            matches!(err, ForgeError::RepositoryNotFound { .. }),
            "{api:?}: {err:?}"
        );
        let err = gone.issue(1).unwrap_err();
        assert!(
            matches!(err, ForgeError::RepositoryNotFound { .. }),
            "{api:?}: {err:?}"
        );

        let err = s.forge.pull_request(42).unwrap_err();
        let ForgeError::NotFound { what, .. } = &err else {
            panic!("{api:?}: {err:?}");
        };
        let noun = if api == Api::Gitlab {
            "merge request 42"
        } else {
            "pull request 42"
        };
        assert_eq!(what, noun);
        let err = s.forge.post_comment(CommentOn::Issue(42), "x").unwrap_err();
        assert!(
            matches!(err, ForgeError::NotFound { .. }),
            "{api:?}: {err:?}"
        );
    }
}

#[test]
fn a_refused_token_names_the_scopes_the_forge_needs() {
    for api in APIS {
        let s = setup(api);
        let err = s
            .other(REPO, "not-the-token")
            .repository_info()
            .unwrap_err();
        let ForgeError::Unauthorized { status: 401, .. } = err else {
            panic!("{api:?}: {err:?}");
        };
        let hint = err.hint().unwrap();
        let scope = match api {
            Api::Github => "`repo`",
            Api::Gitlab => "`api`",
            Api::Forgejo => "`write:repository`",
        };
        assert!(hint.contains(scope), "{hint}");

        s.fake.fail_next(1, Fault::Forbidden);
        let err = s
            .forge
            .open_pull_request(&s.new_pull(HEAD, false))
            .unwrap_err();
        assert!(
            matches!(err, ForgeError::Unauthorized { status: 403, .. }),
            "{api:?}: {err:?}"
        );
        assert!(s.slept().is_empty(), "a refusal is not waited on");
    }
}

#[test]
fn a_rate_limit_is_waited_out_as_the_forge_says() {
    for api in APIS {
        let s = setup(api);
        s.fake
            .fail_next(2, Fault::TooManyRequests { retry_after: 7 });
        s.forge.repository_info().unwrap();
        assert_eq!(s.slept(), [Duration::from_secs(7); 2], "{api:?}");

        s.fake.fail_next(1, Fault::RateLimitReset { at: NOW + 30 });
        s.forge.repository_info().unwrap();
        assert_eq!(
            s.slept()[2],
            Duration::from_secs(30),
            "{api:?}: waits until the reset"
        );
    }
    let s = setup(Api::Github);
    s.fake
        .fail_next(1, Fault::SecondaryRateLimit { retry_after: 5 });
    s.forge.open_pull_request(&s.new_pull(HEAD, false)).unwrap();
    assert_eq!(
        s.slept(),
        [Duration::from_secs(5)],
        "a POST is sent again after a rate limit"
    );
    assert_eq!(s.fake.pulls(REPO).len(), 1);
}

#[test]
fn a_rate_limit_longer_than_the_bound_fails_at_once_and_one_that_lasts_fails_after_the_tries() {
    for api in APIS {
        let s = setup(api);
        s.fake
            .fail_next(1, Fault::TooManyRequests { retry_after: 3600 });
        let err = s.forge.repository_info().unwrap_err();
        let ForgeError::RateLimited { retry_after, .. } = &err else {
            panic!("{api:?}: {err:?}");
        };
        assert_eq!(*retry_after, Some(Duration::from_secs(3600)));
        assert!(err.to_string().contains("3600s"), "{err}");
        assert!(s.slept().is_empty(), "{api:?}");

        s.fake
            .fail_next(5, Fault::TooManyRequests { retry_after: 2 });
        let err = s.forge.repository_info().unwrap_err();
        assert!(
            matches!(err, ForgeError::RateLimited { .. }),
            "{api:?}: {err:?}"
        );
        assert_eq!(s.slept().len(), 2, "{api:?}: three tries, two waits");
    }
}

#[test]
fn server_errors_are_retried_with_backoff_but_a_post_is_never_sent_twice() {
    for api in APIS {
        let s = setup(api);
        s.fake.fail_next(2, Fault::ServerError);
        s.forge.repository_info().unwrap();
        assert_eq!(
            s.slept(),
            [Duration::from_secs(1), Duration::from_secs(2)],
            "{api:?}"
        );

        s.fake.fail_next(5, Fault::ServerError);
        let err = s.forge.find_pull_request(HEAD).unwrap_err();
        assert!(
            matches!(
                err,
                ForgeError::Server {
                    status: 500,
                    attempts: 3,
                    ..
                }
            ),
            "{api:?}: {err:?}"
        );

        let before = s.fake.requests().len();
        s.fake.fail_next(1, Fault::ServerError);
        let err = s
            .forge
            .post_comment(CommentOn::Issue(1), "once")
            .unwrap_err();
        assert!(
            matches!(err, ForgeError::Server { attempts: 1, .. }),
            "{api:?}: {err:?}"
        );
        assert_eq!(
            s.fake.requests().len(),
            before + 1,
            "{api:?}: the POST went once"
        );
        assert!(err.hint().is_some());
    }
}

#[test]
fn a_dropped_connection_is_retried_and_an_unreachable_forge_fails_after_the_tries() {
    for api in APIS {
        let s = setup(api);
        s.fake.fail_next(2, Fault::HangUp);
        assert_eq!(
            s.forge.repository_info().unwrap().full_name,
            REPO,
            "{api:?}"
        );
        assert_eq!(s.slept().len(), 2, "{api:?}");
    }
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let waits = Arc::new(Waits {
        slept: Mutex::new(Vec::new()),
        now: SystemTime::now(),
    });
    let endpoint = Endpoint {
        kind: ForgeKind::Gitlab,
        api_url: format!("http://127.0.0.1:{port}/api/v4"),
        repository: Repository::parse(REPO).unwrap(),
        token: Token::new(TOKEN),
    };
    let options = Options {
        timer: waits.clone(),
        ..Options::default()
    };
    let err = connect_with(&endpoint, options)
        .unwrap()
        .repository_info()
        .unwrap_err();
    let ForgeError::Network { attempts, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*attempts, RetryPolicy::default().attempts);
    assert_eq!(waits.slept.lock().unwrap().len(), 3);
    assert!(err.hint().unwrap().contains("network"));
}

#[test]
fn the_token_travels_only_in_the_authorization_header_and_no_debug_shows_it() {
    for api in APIS {
        let s = setup(api);
        s.forge.open_pull_request(&s.new_pull(HEAD, true)).unwrap();
        let draft = PullRequestUpdate {
            draft: Some(false),
            ..PullRequestUpdate::default()
        };
        s.forge.update_pull_request(1, &draft).unwrap();
        s.forge
            .post_comment(CommentOn::PullRequest(1), "hi")
            .unwrap();
        s.forge.comments(CommentOn::PullRequest(1)).unwrap();
        s.forge.find_pull_request(HEAD).unwrap();
        let requests = s.fake.requests();
        assert!(requests.len() >= 5);
        for r in &requests {
            assert!(r.authorized, "{api:?}: {} {}", r.method, r.path);
            assert!(!r.path.contains(TOKEN), "{api:?}: the token in {}", r.path);
            let scheme = if api == Api::Forgejo {
                "token <redacted>"
            } else {
                "Bearer <redacted>"
            };
            assert_eq!(r.header("authorization"), Some(scheme));
            assert_eq!(r.header("private-token"), None);
        }
        assert!(!format!("{:?}", s.forge).contains(TOKEN), "{api:?}");
        assert!(!format!("{:#?}", s.forge).contains(TOKEN), "{api:?}");
        if api == Api::Github {
            let accept = requests[0].header("accept").unwrap();
            assert_eq!(accept, "application/vnd.github+json");
        }
    }
    let endpoint = Endpoint {
        kind: ForgeKind::Github,
        api_url: "https://api.github.com".into(),
        repository: Repository::parse(REPO).unwrap(),
        token: Token::new(TOKEN),
    };
    assert!(!format!("{endpoint:?}").contains(TOKEN));
    assert_eq!(endpoint.token.secret(), TOKEN);
}

#[test]
fn plain_http_is_refused_for_any_host_but_loopback() {
    let endpoint = |url: &str| Endpoint {
        kind: ForgeKind::Forgejo,
        api_url: url.into(),
        repository: Repository::parse(REPO).unwrap(),
        token: Token::new(TOKEN),
    };
    let err = connect(&endpoint("http://git.example.com/api/v1")).unwrap_err();
    assert!(matches!(err, ForgeError::ApiUrl { .. }), "{err:?}");
    assert!(err.to_string().contains("loopback"), "{err}");
    assert!(connect(&endpoint("https://git.example.com/api/v1")).is_ok());
    assert!(connect(&endpoint("http://127.0.0.1:3000/api/v1")).is_ok());
}

#[test]
fn repositories_and_kinds_parse_as_the_config_names_them() {
    assert_eq!(
        Repository::parse("group/sub/name").unwrap().owner(),
        "group/sub"
    );
    assert_eq!(Repository::parse("o/n.git").unwrap().name(), "n.git");
    for bad in ["name", "o/", "/n", "o/../n", "o/n m"] {
        assert!(Repository::parse(bad).is_err(), "{bad}");
    }
    assert_eq!("gitea".parse::<ForgeKind>().unwrap(), ForgeKind::Forgejo);
    assert!("bitbucket"
        .parse::<ForgeKind>()
        .unwrap_err()
        .contains("`forgejo`"));
    assert_eq!(
        ForgeKind::of_public_host("GitLab.com"),
        Some((ForgeKind::Gitlab, "https://gitlab.com/api/v4"))
    );
    assert_eq!(ForgeKind::of_public_host("git.example.com"), None);
}
