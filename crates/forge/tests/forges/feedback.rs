//! The pull-request loop's reads and writes: issues by label and
//! milestone, labels, permissions, reviews, review comments and checks.

use super::*;
use planwright_forge::{IssueQuery, Permission};

fn numbers(issues: &[planwright_forge::Issue]) -> Vec<u64> {
    let mut n: Vec<u64> = issues.iter().map(|i| i.number).collect();
    n.sort_unstable();
    n
}

#[test]
fn open_issues_are_listed_by_label_and_milestone_on_every_page() {
    for api in APIS {
        let s = setup(api);
        s.fake.set_page_size(2);
        let both = s.fake.add_issue(REPO, "Both labels", "");
        let one = s.fake.add_issue(REPO, "One label", "");
        let none = s.fake.add_issue(REPO, "No label", "");
        let closed = s.fake.add_issue(REPO, "Closed", "");
        s.fake.label(REPO, both, &["planwright", "ready"]);
        s.fake.label(REPO, one, &["planwright"]);
        s.fake.label(REPO, closed, &["planwright"]);
        s.fake.close_issue(REPO, closed);
        s.fake.set_milestone(REPO, both, "v1");
        s.fake.add_milestone(REPO, "v2");
        // A pull request is no issue here, whatever the forge lists.
        s.forge.open_pull_request(&s.new_pull(HEAD, false)).unwrap();

        let all = s.forge.issues(&IssueQuery::default()).unwrap();
        assert_eq!(numbers(&all), [both, one, none], "{api:?}");
        let query = |labels: &[&str], milestone: Option<&str>| IssueQuery {
            labels: labels.iter().map(|l| l.to_string()).collect(),
            milestone: milestone.map(str::to_string),
        };
        let labelled = s.forge.issues(&query(&["planwright"], None)).unwrap();
        assert_eq!(numbers(&labelled), [both, one], "{api:?}");
        assert!(labelled
            .iter()
            .all(|i| i.labels.contains(&"planwright".to_string())));
        let two = s
            .forge
            .issues(&query(&["planwright", "ready"], None))
            .unwrap();
        assert_eq!(numbers(&two), [both], "{api:?}");
        let v1 = s.forge.issues(&query(&[], Some("v1"))).unwrap();
        assert_eq!(numbers(&v1), [both], "{api:?}");
        assert!(s.forge.issues(&query(&[], Some("v2"))).unwrap().is_empty());

        if api == Api::Gitlab {
            // A group's milestone holds its projects' issues too.
            s.fake.add_group_milestone("acme", "Q3");
            s.fake.set_milestone(REPO, one, "Q3");
            let q3 = s.forge.issues(&query(&[], Some("Q3"))).unwrap();
            assert_eq!(numbers(&q3), [one]);
        }
        let err = s.forge.issues(&query(&[], Some("v9"))).unwrap_err();
        let ForgeError::NotFound { what, .. } = &err else {
            panic!("{api:?}: {err:?}");
        };
        assert_eq!(what, "milestone `v9`");
    }
}

#[test]
fn labels_are_put_on_and_taken_off() {
    for api in APIS {
        let s = setup(api);
        let n = s.fake.add_issue(REPO, "Labelled", "");
        s.fake.label(REPO, n, &["bug"]);
        let running = ["planwright:running".to_string()];
        s.forge.add_labels(n, &running).unwrap();
        assert_eq!(
            s.fake.labels(REPO, n),
            ["bug", "planwright:running"],
            "{api:?}"
        );
        // Again: nothing doubles.
        s.forge.add_labels(n, &running).unwrap();
        assert_eq!(s.fake.labels(REPO, n).len(), 2, "{api:?}");

        s.forge.remove_label(n, "planwright:running").unwrap();
        assert_eq!(s.fake.labels(REPO, n), ["bug"], "{api:?}");
        s.forge.remove_label(n, "planwright:running").unwrap();
        s.forge.remove_label(n, "never-made").unwrap();
        assert_eq!(s.fake.labels(REPO, n), ["bug"], "{api:?}");

        let err = s.forge.add_labels(99, &running).unwrap_err();
        assert!(
            matches!(err, ForgeError::NotFound { .. }),
            "{api:?}: {err:?}"
        );
        if api == Api::Forgejo {
            let made = s
                .fake
                .requests()
                .into_iter()
                .filter(|r| r.method == "POST" && r.path.ends_with("/labels"));
            assert_eq!(
                made.filter(|r| r.body["name"] == "planwright:running")
                    .count(),
                1
            );
        }
    }
}

#[test]
fn a_users_permission_is_read_in_each_forges_terms() {
    for api in APIS {
        let s = setup(api);
        for (login, role) in [
            ("alice", "write"),
            ("bob", "read"),
            ("carol", "admin"),
            ("dave", "maintain"),
        ] {
            s.fake.add_collaborator(REPO, login, role);
        }
        assert_eq!(
            s.forge.permission("alice").unwrap(),
            Permission::Write,
            "{api:?}"
        );
        assert_eq!(
            s.forge.permission("bob").unwrap(),
            Permission::Read,
            "{api:?}"
        );
        assert_eq!(
            s.forge.permission("carol").unwrap(),
            Permission::Admin,
            "{api:?}"
        );
        // GitLab's maintainer administers; GitHub's maintain is `write`.
        let maintain = if api == Api::Gitlab {
            Permission::Admin
        } else {
            Permission::Write
        };
        assert_eq!(s.forge.permission("dave").unwrap(), maintain, "{api:?}");
        assert_eq!(
            s.forge.permission("eve").unwrap(),
            Permission::None,
            "{api:?}"
        );
        assert!(Permission::Write > Permission::Read);
    }
}

#[test]
fn reviews_and_comments_on_files_and_lines_are_read() {
    use planwright_forge::ReviewState;
    use planwright_testkit::forge::Verdict;
    for api in APIS {
        let s = setup(api);
        let pull = s
            .forge
            .open_pull_request(&s.new_pull(HEAD, false))
            .unwrap()
            .number;
        s.fake
            .add_review(REPO, pull, "alice", Verdict::Approve, "LGTM");
        s.fake
            .add_review(REPO, pull, "bob", Verdict::RequestChanges, "Fix the loop");
        s.fake
            .add_review_comment(REPO, pull, "carol", "src/lib.rs", Some(12), "Off by one");
        s.fake
            .add_review_comment(REPO, pull, "carol", "README.md", None, "A typo somewhere");
        // A comment in the conversation is no review comment.
        s.fake.add_comment(REPO, pull, true, "dave", "Thanks!");

        let reviews = s.forge.reviews(pull).unwrap();
        let seen: Vec<(&str, ReviewState)> = reviews
            .iter()
            .map(|r| (r.author.as_str(), r.state))
            .collect();
        if api == Api::Gitlab {
            // GitLab's reviews are its approvals.
            assert_eq!(seen, [("alice", ReviewState::Approved)]);
        } else {
            assert_eq!(
                seen[..2],
                [
                    ("alice", ReviewState::Approved),
                    ("bob", ReviewState::ChangesRequested)
                ],
                "{api:?}"
            );
            assert_eq!(reviews[1].body, "Fix the loop");
            assert!(seen[2..]
                .iter()
                .all(|(a, st)| *a == "carol" && *st == ReviewState::Commented));
        }

        let comments = s.forge.review_comments(pull).unwrap();
        let seen: Vec<(&str, &str, Option<u64>, &str)> = comments
            .iter()
            .map(|c| (c.author.as_str(), c.path.as_str(), c.line, c.body.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("carol", "src/lib.rs", Some(12), "Off by one"),
                ("carol", "README.md", None, "A typo somewhere")
            ],
            "{api:?}"
        );
        let err = s.forge.review_comments(77).unwrap_err();
        assert!(
            matches!(err, ForgeError::NotFound { .. }),
            "{api:?}: {err:?}"
        );
    }
}

#[test]
fn checks_of_the_head_are_read_the_latest_of_each_name_with_the_failures_log_tail() {
    use planwright_forge::CheckState;
    use planwright_testkit::forge::Outcome;
    for api in APIS {
        let s = setup(api);
        let pull = s
            .forge
            .open_pull_request(&s.new_pull(HEAD, false))
            .unwrap()
            .number;
        assert!(s.forge.checks(pull).unwrap().is_empty(), "{api:?}");
        let log: String = (1..=60).map(|i| format!("test {i} ... FAILED\n")).collect();
        s.fake.add_check(
            REPO,
            pull,
            "build",
            Outcome::Failure,
            "compile",
            "error[E0308]",
        );
        s.fake
            .add_check(REPO, pull, "test", Outcome::Failure, "cargo test", &log);
        s.fake
            .add_check(REPO, pull, "lint", Outcome::Pending, "clippy", "");
        s.fake
            .add_check(REPO, pull, "build", Outcome::Success, "compile", "");
        s.fake
            .add_status(REPO, pull, "ci/deploy", Outcome::Failure, "preview failed");
        s.fake
            .add_status(REPO, pull, "ci/deploy", Outcome::Success, "preview ready");

        let mut checks = s.forge.checks(pull).unwrap();
        checks.sort_by(|a, b| a.name.cmp(&b.name));
        let seen: Vec<(&str, CheckState)> =
            checks.iter().map(|c| (c.name.as_str(), c.state)).collect();
        assert_eq!(
            seen,
            [
                ("build", CheckState::Success),
                ("ci/deploy", CheckState::Success),
                ("lint", CheckState::Pending),
                ("test", CheckState::Failure)
            ],
            "{api:?}: the build ran again and passed; the deploy status was set again"
        );
        assert_eq!(checks[1].summary, "preview ready", "{api:?}");
        let test = &checks[3];
        match api {
            // Forgejo's statuses carry no log.
            Api::Forgejo => assert_eq!(test.log_tail, None),
            _ => {
                let tail = test.log_tail.as_deref().unwrap();
                assert!(
                    tail.starts_with("test 11 ") && tail.ends_with("test 60 ... FAILED"),
                    "{api:?}: {tail}"
                );
            }
        }
        assert!(test.url.is_some(), "{api:?}");
        assert!(
            test.summary.contains("cargo test") || test.summary.contains("test"),
            "{api:?}: {}",
            test.summary
        );
    }
}

#[test]
fn issue_links_are_read_in_each_forges_kinds() {
    use planwright_forge::{IssueState, LinkKind};
    use planwright_testkit::forge::Link;
    for api in APIS {
        let s = setup(api);
        let [a, b, c, d] =
            ["blocker", "blocked", "parent", "related"].map(|t| s.fake.add_issue(REPO, t, ""));
        s.fake.link(REPO, a, b, Link::Blocks);
        s.fake.link(REPO, c, b, Link::Parent);
        s.fake.link(REPO, d, b, Link::Relates);
        s.fake.close_issue(REPO, a);

        let links = s.forge.issue_links(b).unwrap();
        let seen: Vec<(LinkKind, u64)> = links.iter().map(|l| (l.kind, l.number)).collect();
        let expected: Vec<(LinkKind, u64)> = match api {
            Api::Github => vec![(LinkKind::BlockedBy, a), (LinkKind::Parent, c)],
            Api::Gitlab => vec![(LinkKind::BlockedBy, a), (LinkKind::Related, d)],
            Api::Forgejo => vec![(LinkKind::BlockedBy, a)],
        };
        assert_eq!(seen, expected, "{api:?}");
        assert_eq!(links[0].state, IssueState::Closed, "{api:?}");
        assert!(links.iter().all(|l| l.repository.is_none()), "{api:?}");

        let from_a: Vec<(LinkKind, u64)> = s
            .forge
            .issue_links(a)
            .unwrap()
            .iter()
            .map(|l| (l.kind, l.number))
            .collect();
        assert_eq!(from_a, [(LinkKind::Blocks, b)], "{api:?}");
        if api == Api::Github {
            let children = s.forge.issue_links(c).unwrap();
            assert_eq!((children[0].kind, children[0].number), (LinkKind::Child, b));
        }
        let err = s.forge.issue_links(99).unwrap_err();
        assert!(
            matches!(err, ForgeError::NotFound { .. }),
            "{api:?}: {err:?}"
        );
    }
}
