//! Opening, finding, updating and reading pull requests, issues and comments.

use super::*;

#[test]
fn a_pull_request_is_opened_found_updated_and_seen_merged() {
    for api in APIS {
        let s = setup(api);
        assert_eq!(s.forge.login().unwrap(), BOT, "{api:?}");
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
        if api == Api::Github {
            assert_eq!(
                err.to_string(),
                "GitHub refused the request (422): Validation Failed; A pull request already exists for acme:planwright/run-1."
            );
        }

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

#[test]
fn a_gitlab_project_in_a_subgroup_is_named_by_its_encoded_path() {
    let s = setup(Api::Gitlab);
    s.fake.add_repository("group/sub/app");
    s.fake.add_branch("group/sub/app", HEAD);
    let app = s.other("group/sub/app", TOKEN);
    assert_eq!(app.repository_info().unwrap().full_name, "group/sub/app");
    let pull = app.open_pull_request(&s.new_pull(HEAD, false)).unwrap();
    assert_eq!(
        app.find_pull_request(HEAD).unwrap().unwrap().number,
        pull.number
    );
    let paths: Vec<String> = s.fake.requests().into_iter().map(|r| r.path).collect();
    assert!(
        paths
            .iter()
            .all(|p| p.starts_with("/api/v4/projects/group%2Fsub%2Fapp")),
        "{paths:?}"
    );
    assert!(
        paths
            .iter()
            .any(|p| p.contains("source_branch=planwright%2Frun-1")),
        "{paths:?}"
    );
}
