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
        assert!(labelled.iter().all(|i| i.labels.contains(&"planwright".to_string())));
        let two = s.forge.issues(&query(&["planwright", "ready"], None)).unwrap();
        assert_eq!(numbers(&two), [both], "{api:?}");
        let v1 = s.forge.issues(&query(&[], Some("v1"))).unwrap();
        assert_eq!(numbers(&v1), [both], "{api:?}");
        assert!(s.forge.issues(&query(&[], Some("v2"))).unwrap().is_empty());

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
        assert_eq!(s.fake.labels(REPO, n), ["bug", "planwright:running"], "{api:?}");
        // Again: nothing doubles.
        s.forge.add_labels(n, &running).unwrap();
        assert_eq!(s.fake.labels(REPO, n).len(), 2, "{api:?}");

        s.forge.remove_label(n, "planwright:running").unwrap();
        assert_eq!(s.fake.labels(REPO, n), ["bug"], "{api:?}");
        s.forge.remove_label(n, "planwright:running").unwrap();
        s.forge.remove_label(n, "never-made").unwrap();
        assert_eq!(s.fake.labels(REPO, n), ["bug"], "{api:?}");

        let err = s.forge.add_labels(99, &running).unwrap_err();
        assert!(matches!(err, ForgeError::NotFound { .. }), "{api:?}: {err:?}");
        if api == Api::Forgejo {
            let made = s.fake.requests().into_iter().filter(|r| r.method == "POST" && r.path.ends_with("/labels"));
            assert_eq!(made.filter(|r| r.body["name"] == "planwright:running").count(), 1);
        }
    }
}

#[test]
fn a_users_permission_is_read_in_each_forges_terms() {
    for api in APIS {
        let s = setup(api);
        for (login, role) in [("alice", "write"), ("bob", "read"), ("carol", "admin"), ("dave", "maintain")] {
            s.fake.add_collaborator(REPO, login, role);
        }
        assert_eq!(s.forge.permission("alice").unwrap(), Permission::Write, "{api:?}");
        assert_eq!(s.forge.permission("bob").unwrap(), Permission::Read, "{api:?}");
        assert_eq!(s.forge.permission("carol").unwrap(), Permission::Admin, "{api:?}");
        // GitLab's maintainer administers; GitHub's maintain is `write`.
        let maintain = if api == Api::Gitlab { Permission::Admin } else { Permission::Write };
        assert_eq!(s.forge.permission("dave").unwrap(), maintain, "{api:?}");
        assert_eq!(s.forge.permission("eve").unwrap(), Permission::None, "{api:?}");
        assert!(Permission::Write > Permission::Read);
    }
}
