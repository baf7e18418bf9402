//! Every error class, the retries and waits, and the token kept secret.

use super::*;

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
        let title = match api {
            Api::Github => "GitHub",
            Api::Gitlab => "GitLab",
            Api::Forgejo => "Forgejo",
        };
        assert!(
            err.to_string()
                .starts_with(&format!("{title} refused the token (401): ")),
            "{err}"
        );
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
fn an_answer_that_is_not_the_apis_shape_is_an_error_naming_the_request() {
    for api in APIS {
        let s = setup(api);
        s.fake.fail_next(1, Fault::Malformed);
        let err = s.forge.repository_info().unwrap_err();
        let ForgeError::Response { method, path, .. } = &err else {
            panic!("{api:?}: {err:?}");
        };
        assert_eq!(method, "GET");
        assert!(path.contains("acme"), "{api:?}: {path}");
        assert!(err.to_string().contains("cannot read"), "{err}");
        assert!(s.slept().is_empty(), "{api:?}: not retried");
    }
}

#[test]
fn a_page_link_to_another_host_is_not_followed() {
    for api in APIS {
        let s = setup(api);
        let n = s.fake.add_issue(REPO, "Linked", "");
        s.fake.fail_next(1, Fault::ForeignLink);
        let err = s.forge.comments(CommentOn::Issue(n)).unwrap_err();
        let ForgeError::Response { message, .. } = &err else {
            panic!("{api:?}: {err:?}");
        };
        assert!(message.contains("forge.invalid"), "{api:?}: {message}");
        assert_eq!(s.fake.requests().len(), 1, "{api:?}");
    }
}
