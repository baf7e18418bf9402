//! The glob test's answers, and the forecast's groups on small plans.

use super::*;
use crate::model::{Format, Plan, ScopeEntry, Ticket};

fn meet(a: &str, b: &str) -> bool {
    let (x, y) = (Glob::parse(a), Glob::parse(b));
    let forward = x.intersects(&y);
    assert_eq!(forward, y.intersects(&x), "symmetry for {a} / {b}");
    forward
}

#[test]
fn globs_that_share_a_path() {
    for (a, b) in [
        ("src/**", "src/a/b.rs"),
        ("src/**", "src"),
        ("a/*/c", "a/b/*"),
        ("**/*.rs", "src/lib.rs"),
        ("**/*.rs", "*.rs"),
        ("src/*.rs", "src/?ib.rs"),
        ("src/a*b", "src/*ab"),
        ("docs/**/index.md", "docs/index.md"),
        ("a/**/b/**/c", "a/b/c"),
        ("lib/math.mjs", "lib/math.mjs"),
        ("src/", "src/deep/x"),
        ("a/**.md", "a/b/c.md"),
        ("a/**.md", "a/c.md"),
        ("src/[ab].rs", "src/x.rs"),
        ("src/{a,b}.rs", "src/c.rs"),
        ("x*y/z", "xay/*"),
        ("src/{a/b,c}.rs", "src/a/b.rs"),
        ("src/{a/b,c}.rs", "src/c.rs"),
        ("a/x*b**c", "a/xb/q/zc"),
        ("./src/x.rs", "src/x.rs"),
    ] {
        assert!(meet(a, b), "{a} and {b} should overlap");
    }
}

#[test]
fn globs_that_share_no_path() {
    for (a, b) in [
        ("*.md", "*.rs"),
        ("src/**", "tests/**"),
        ("src/*.rs", "src/a/b.rs"),
        ("a/*/c", "a/b/d"),
        ("src/a?.rs", "src/a.rs"),
        ("lib/math.mjs", "lib/stats.mjs"),
        ("**/*.md", "src/lib.rs"),
        ("a/b*", "a/c*"),
        ("src/*.rs", "src/*.md"),
        ("a/**.md", "a/b.rs"),
        ("*.md", "docs/readme.md"),
        ("src", "src/a.rs"),
    ] {
        assert!(!meet(a, b), "{a} and {b} should not overlap");
    }
}

#[test]
fn prefix_is_literal_directories() {
    let prefix = |pattern: &str| -> Vec<String> {
        let text = |seg: &[Tok]| -> String {
            (seg.iter())
                .map(|t| match t {
                    Tok::Lit(c) => *c,
                    _ => unreachable!("a literal prefix"),
                })
                .collect()
        };
        Glob::parse(pattern).prefix().map(text).collect()
    };
    assert_eq!(prefix("src/parser/*.rs"), ["src", "parser"]);
    assert_eq!(prefix("src/x.rs"), ["src", "x.rs"]);
    assert_eq!(prefix("src/a**b/c"), ["src"], "the same in every reading");
    assert!(prefix("**/x").is_empty());
    assert!(prefix("").is_empty());
}

fn ticket(id: &str, deps: &[&str], scope: &[&str]) -> Ticket {
    Ticket {
        scope: scope.iter().map(|s| ScopeEntry::any(*s)).collect(),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        ..Ticket::new(id, "b")
    }
}

fn plan(tickets: Vec<Ticket>) -> Plan {
    Plan::new(Format::Native, tickets)
}

/// The forecast of `p`, with its graph made here.
fn forecast(p: &Plan) -> Vec<Overlap> {
    super::forecast(p, &TicketGraph::new(p))
}

fn pair_list(p: &Plan, limit: usize) -> Vec<(String, String, [String; 2])> {
    pairs(p, &TicketGraph::new(p), &forecast(p), limit)
        .into_iter()
        .map(|o| (o.a, o.b, o.patterns))
        .collect()
}

#[test]
fn ordered_tickets_never_overlap() {
    let p = plan(vec![
        ticket("A", &[], &["src/**"]),
        ticket("B", &["A"], &["src/x.rs"]),
        ticket("C", &["B"], &["src/y.rs"]),
        ticket("D", &[], &["docs/*.md", "src/x.rs"]),
    ]);
    let found = forecast(&p);
    assert_eq!(found.len(), 1);
    // C may run with D, but `src/y.rs` is not `src/x.rs`.
    assert_eq!(found[0].tickets, ["A", "B", "D"]);
    assert_eq!(found[0].patterns, ["src/**", "src/x.rs"]);
    let s = |x: &str| x.to_string();
    assert_eq!(
        pair_list(&p, 10),
        [
            (s("A"), s("D"), [s("src/**"), s("src/x.rs")]),
            (s("B"), s("D"), [s("src/x.rs"), s("src/x.rs")]),
        ]
    );
    assert_eq!(pair_list(&p, 1).len(), 1, "the cap holds");
    let chain = plan(vec![
        ticket("A", &[], &["src/**"]),
        ticket("B", &["A"], &["src/**"]),
        ticket("C", &["B"], &["src/**"]),
    ]);
    assert!(forecast(&chain).is_empty());
}

#[test]
fn one_group_per_connected_set_not_one_warning_per_pair() {
    let mut tickets: Vec<Ticket> = (0..300)
        .map(|i| ticket(&format!("T{i}"), &[], &["src/**"]))
        .collect();
    tickets.push(ticket("D", &[], &["docs/a.md"]));
    tickets.push(ticket("E", &[], &["docs/*.md"]));
    tickets.push(ticket("F", &["E"], &["docs/b.md"]));
    let found = forecast(&plan(tickets));
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].tickets.len(), 300);
    assert_eq!(found[0].patterns, ["src/**"]);
    // F may run with D, but `docs/b.md` is not `docs/a.md`.
    assert_eq!(found[1].tickets, ["D", "E"]);
    assert_eq!(found[1].patterns, ["docs/a.md", "docs/*.md"]);
}

#[test]
fn tickets_whose_patterns_meet_only_through_a_third_do_not_overlap() {
    let found = forecast(&plan(vec![
        ticket("A", &[], &["x.py"]),
        ticket("B", &[], &["y.py"]),
        ticket("C", &["A", "B"], &["**"]),
    ]));
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn both_sides_of_a_rename_count() {
    let mut p = plan(vec![
        ticket("A", &[], &["src/new.rs"]),
        ticket("B", &[], &["src/old.rs"]),
    ]);
    assert!(forecast(&p).is_empty());
    p.tickets[0].scope[0].op = ScopeOp::Rename {
        from: "src/old.rs".into(),
    };
    let found = forecast(&p);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].patterns, ["src/old.rs"]);
    assert_eq!(pair_list(&p, 5)[0].2, ["src/old.rs", "src/old.rs"]);
}

#[test]
fn first_entries_in_scope_order_are_reported() {
    let p = plan(vec![
        ticket("A", &[], &["a.txt", "src/*.rs", "src/**"]),
        ticket("B", &[], &["src/lib.rs", "src/main.rs"]),
    ]);
    assert_eq!(pair_list(&p, 5)[0].2, ["src/*.rs", "src/lib.rs"]);
    assert_eq!(
        forecast(&p)[0].patterns,
        ["src/*.rs", "src/**", "src/lib.rs", "src/main.rs"]
    );
}

/// A plain backtracking matcher for the language without classes,
/// braces or in-segment `**`: the reference the DP must agree with.
fn matches(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => {
            matches(rest, path) || (!path.is_empty() && matches(pattern, &path[1..]))
        }
        Some((seg, rest)) => {
            !path.is_empty()
                && seg_matches(seg.as_bytes(), path[0].as_bytes())
                && matches(rest, &path[1..])
        }
    }
}

fn seg_matches(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|k| seg_matches(rest, &s[k..])),
        Some((b'?', rest)) => !s.is_empty() && seg_matches(rest, &s[1..]),
        Some((c, rest)) => s.first() == Some(c) && seg_matches(rest, &s[1..]),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// Sound: a path that matches both patterns means they intersect.
    #[test]
    fn a_shared_path_is_always_found(
        a in proptest::collection::vec(proptest::sample::select(SEGS.to_vec()), 1..4),
        b in proptest::collection::vec(proptest::sample::select(SEGS.to_vec()), 1..4),
        path in proptest::collection::vec(proptest::sample::select(NAMES.to_vec()), 1..5),
    ) {
        if matches(&a, &path) && matches(&b, &path) {
            proptest::prop_assert!(
                Glob::parse(&a.join("/")).intersects(&Glob::parse(&b.join("/"))),
                "{} and {} both match {}", a.join("/"), b.join("/"), path.join("/")
            );
        }
    }

    /// Exact for literal paths: a glob meets a path exactly when it matches it.
    #[test]
    fn a_path_meets_a_glob_when_it_matches(
        a in proptest::collection::vec(proptest::sample::select(SEGS.to_vec()), 1..4),
        path in proptest::collection::vec(proptest::sample::select(NAMES.to_vec()), 1..5),
    ) {
        let meets = Glob::parse(&a.join("/")).intersects(&Glob::parse(&path.join("/")));
        proptest::prop_assert_eq!(meets, matches(&a, &path));
    }
}

/// Every pair of globs whose literal prefixes are prefix-related, each
/// once: what [`candidate_pairs`] must give, by looking at every pair.
fn related_pairs(globs: &[Glob]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for p in 0..globs.len() {
        for q in p + 1..globs.len() {
            let (a, b): (Vec<&[Tok]>, Vec<&[Tok]>) =
                (globs[p].prefix().collect(), globs[q].prefix().collect());
            if a.starts_with(&b) || b.starts_with(&a) {
                out.push((p, q));
            }
        }
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

    /// The candidate pairs, found by sorting prefixes, are exactly the
    /// prefix-related pairs, each once.
    #[test]
    fn candidate_pairs_are_the_prefix_related_pairs(
        patterns in proptest::collection::vec(
            proptest::collection::vec(proptest::sample::select(SEGS.to_vec()), 0..4), 0..24),
    ) {
        let globs: Vec<Glob> = patterns.iter().map(|p| Glob::parse(&p.join("/"))).collect();
        let mut found = Vec::new();
        candidate_pairs(&globs, |p, q| found.push((p.min(q), p.max(q))));
        found.sort_unstable();
        proptest::prop_assert_eq!(found, related_pairs(&globs));
    }
}

const SEGS: [&str; 10] = ["**", "*", "a", "b", "a*", "*b", "?", "a?", "ab", "*a*"];
const NAMES: [&str; 6] = ["a", "b", "ab", "ba", "aa", "abb"];
