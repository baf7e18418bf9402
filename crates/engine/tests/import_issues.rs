//! `import issues` against the fake forges of the three kinds: each link
//! form, a closed blocker, an open blocker outside the selection, a cycle,
//! scope and checks from the body, and the issue kept in each ticket.

use planwright_engine::issues::{import, ImportError, Imported, Selection};
use planwright_testkit::forge::{Api, FakeForge, Link, TOKEN};

const REPO: &str = "acme/app";

fn fake(api: Api) -> FakeForge {
    let forge = FakeForge::start(api);
    forge.add_repository(REPO);
    forge
}

fn client(forge: &FakeForge) -> Box<dyn planwright_forge::Forge> {
    let kind = match forge.api() {
        Api::Github => planwright_forge::ForgeKind::Github,
        Api::Gitlab => planwright_forge::ForgeKind::Gitlab,
        Api::Forgejo => planwright_forge::ForgeKind::Forgejo,
    };
    planwright_forge::connect(&planwright_forge::Endpoint {
        kind,
        api_url: forge.api_url(),
        repository: planwright_forge::Repository::parse(REPO).unwrap(),
        token: planwright_forge::Token::new(TOKEN),
    })
    .unwrap()
}

fn labelled(label: &str) -> Selection {
    Selection {
        labels: vec![label.into()],
        ..Selection::default()
    }
}

fn run(forge: &FakeForge, selection: &Selection) -> Result<Imported, ImportError> {
    import(client(forge).as_ref(), selection, "main")
}

fn deps(imported: &Imported, id: &str) -> Vec<String> {
    imported.plan.ticket(id).unwrap().depends_on.clone()
}

const APIS: [Api; 3] = [Api::Github, Api::Gitlab, Api::Forgejo];

#[test]
fn body_lines_in_each_form_make_edges_on_each_forge() {
    for api in APIS {
        let forge = fake(api);
        let a = forge.add_issue(REPO, "A", "First.\n- [ ] parses `src/a.rs`");
        let b = forge.add_issue(
            REPO,
            "B",
            &format!("Depends on #{a}\nFiles:\n- src/b.rs\n- docs/b.md"),
        );
        let c = forge.add_issue(REPO, "C", &format!("blocked BY #{a}, #{b}"));
        let d = forge.add_issue(REPO, "D", &format!("**Requires:** #{c}"));
        for n in [a, b, c, d] {
            forge.label(REPO, n, &["pw"]);
        }
        let got = run(&forge, &labelled("pw")).unwrap();
        let ids: Vec<&str> = got.plan.tickets.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                format!("issue-{a}"),
                format!("issue-{b}"),
                format!("issue-{c}"),
                format!("issue-{d}")
            ],
            "{api:?}"
        );
        assert_eq!(deps(&got, &format!("issue-{b}")), [format!("issue-{a}")]);
        assert_eq!(
            deps(&got, &format!("issue-{c}")),
            [format!("issue-{a}"), format!("issue-{b}")]
        );
        assert_eq!(deps(&got, &format!("issue-{d}")), [format!("issue-{c}")]);
        let ta = got.plan.ticket(&format!("issue-{a}")).unwrap();
        assert_eq!(ta.checks, ["parses `src/a.rs`"]);
        assert_eq!(
            ta.scope
                .iter()
                .map(|s| s.pattern.as_str())
                .collect::<Vec<_>>(),
            ["src/a.rs"]
        );
        assert_eq!(ta.metadata["issue"]["number"], a);
        assert_eq!(ta.metadata["issue"]["repository"], REPO);
        let tb = got.plan.ticket(&format!("issue-{b}")).unwrap();
        assert_eq!(
            tb.scope
                .iter()
                .map(|s| s.pattern.as_str())
                .collect::<Vec<_>>(),
            ["src/b.rs", "docs/b.md"]
        );
        assert!(got.decisions.iter().any(|x| x.issue == c
            && x.text == format!("`blocked BY #{a}, #{b}` → issue-{c} depends on issue-{b}")));
    }
}

#[test]
fn the_forges_own_blocking_links_make_edges() {
    for api in APIS {
        let forge = fake(api);
        let a = forge.add_issue(REPO, "A", "a");
        let b = forge.add_issue(REPO, "B", "b");
        forge.link(REPO, a, b, Link::Blocks);
        let got = run(&forge, &Selection::default()).unwrap();
        assert_eq!(
            deps(&got, &format!("issue-{b}")),
            [format!("issue-{a}")],
            "{api:?}"
        );
        assert!(deps(&got, &format!("issue-{a}")).is_empty(), "{api:?}");
        assert!(got
            .decisions
            .iter()
            .any(|x| x.issue == b && x.text.contains("the forge's link")));
    }
}

#[test]
fn a_github_sub_issue_blocks_its_parent() {
    let forge = fake(Api::Github);
    let parent = forge.add_issue(REPO, "Epic", "all of it");
    let child = forge.add_issue(REPO, "Part", "a part");
    forge.link(REPO, parent, child, Link::Parent);
    let got = run(&forge, &Selection::default()).unwrap();
    assert_eq!(
        deps(&got, &format!("issue-{parent}")),
        [format!("issue-{child}")]
    );
}

#[test]
fn a_closed_blocker_is_satisfied() {
    for api in APIS {
        let forge = fake(api);
        let done = forge.add_issue(REPO, "Done", "done");
        let linked = forge.add_issue(REPO, "Linked done", "done too");
        let b = forge.add_issue(REPO, "B", &format!("Depends on #{done}"));
        forge.link(REPO, linked, b, Link::Blocks);
        forge.close_issue(REPO, done);
        forge.close_issue(REPO, linked);
        let got = run(&forge, &Selection::default()).unwrap();
        assert_eq!(got.plan.tickets.len(), 1, "{api:?}");
        assert!(deps(&got, &format!("issue-{b}")).is_empty());
        assert!(
            got.decisions
                .iter()
                .any(|x| x.text.contains("is closed: satisfied")),
            "{api:?}"
        );
    }
}

#[test]
fn an_open_blocker_outside_the_selection_is_an_error_naming_it() {
    for api in APIS {
        let forge = fake(api);
        let other = forge.add_issue(REPO, "Other", "not labelled");
        let b = forge.add_issue(REPO, "B", &format!("Requires #{other}"));
        forge.label(REPO, b, &["pw"]);
        let e = run(&forge, &labelled("pw")).unwrap_err();
        assert!(
            matches!(&e, ImportError::OutsideBlocker { issue, blocker, .. } if *issue == b && *blocker == format!("#{other}")),
            "{api:?}: {e}"
        );
        assert!(e.to_string().contains(&format!("Requires #{other}")), "{e}");
        // Through a link too.
        let forge = fake(api);
        let other = forge.add_issue(REPO, "Other", "x");
        let b = forge.add_issue(REPO, "B", "y");
        forge.link(REPO, other, b, Link::Blocks);
        let e = run(
            &forge,
            &Selection {
                numbers: vec![b],
                ..Selection::default()
            },
        )
        .unwrap_err();
        assert!(
            e.to_string().contains(&format!("blocked by #{other}")),
            "{api:?}: {e}"
        );
    }
}

#[test]
fn a_cycle_between_issues_is_an_error_naming_it() {
    for api in APIS {
        let forge = fake(api);
        let a = forge.add_issue(REPO, "A", "Depends on #3");
        let b = forge.add_issue(REPO, "B", &format!("Depends on #{a}"));
        let c = forge.add_issue(REPO, "C", &format!("Depends on #{b}"));
        assert_eq!(c, 3);
        let e = run(&forge, &Selection::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the issues block one another in a cycle: #1 is blocked by #3 is blocked by #2 is blocked by #1",
            "{api:?}"
        );
    }
}

#[test]
fn named_issues_must_be_open_issues() {
    let forge = fake(Api::Github);
    let a = forge.add_issue(REPO, "A", "a");
    forge.close_issue(REPO, a);
    let e = run(
        &forge,
        &Selection {
            numbers: vec![a],
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.to_string(), format!("issue #{a}: it is closed"));
    let e = run(
        &forge,
        &Selection {
            numbers: vec![99],
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "issue #99: the repository has no such issue");
    let e = run(&forge, &labelled("none")).unwrap_err();
    assert!(matches!(e, ImportError::NothingSelected { .. }), "{e}");
}
