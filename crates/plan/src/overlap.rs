//! The scope-overlap forecast: pairs of tickets that may run at the same time
//! and may change the same path.
//!
//! Two tickets overlap when neither depends on the other, directly or
//! transitively, and some path matches a scope pattern of each (both paths
//! of a rename count). The glob
//! test is sound: when it says "no overlap", no path matches both patterns
//! under the scope glob language below; it may say "overlap" for a pair
//! that only a contrived path satisfies, never the other way round.
//!
//! The scope glob language, per `/`-separated segment:
//!
//! - `**` as a whole segment: zero or more whole segments;
//! - `*`: any characters within one segment; `?`: one character;
//! - `[...]` (a class): read as "any one character", whatever the class says;
//! - `{...}` (alternatives): read as `*`, or as a `**` when an alternative
//!   holds a `/`;
//! - `\c`: read as `*`, so that a matcher that escapes and one that does not
//!   are both covered;
//! - `**` inside a longer segment (`a/**.md`, which agb's pathspecs allow):
//!   read as both `*` and "`*`, then any segments, then `*`", which covers
//!   matchers that keep it in the segment and matchers that let it cross;
//! - anything else is a literal character; empty and `.` segments are
//!   skipped; a trailing `/` means everything below (see
//!   [`crate::scope::normalize`], which the engine's matcher shares).
//!
//! A pattern without wildcards names exactly one path, as in every format's
//! scope: files, not directories (write `src/` or `src/**` for a directory).
//!
//! Scale: patterns are indexed in a trie by their literal directory prefix
//! (the segments before the first wildcard), and only patterns whose
//! prefixes are equal or one a prefix of the other are compared. Whether two
//! tickets are ordered is answered from ancestor bitsets computed one block
//! of 4,096 tickets at a time, so memory stays at 512 bytes per ticket.

use crate::model::{Plan, ScopeOp};
use serde::Serialize;
use std::collections::HashMap;

/// Two tickets that may run at the same time and may change the same path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overlap {
    /// The earlier of the two tickets in plan order.
    pub a: String,
    /// The later one.
    pub b: String,
    /// The first pair of intersecting patterns in scope order: `a`'s, then `b`'s.
    pub patterns: [String; 2],
    /// Plan index of `a`.
    #[serde(skip)]
    pub a_index: usize,
    /// Plan index of `b`.
    #[serde(skip)]
    pub b_index: usize,
}

/// Every overlapping pair of tickets, ordered by the plan index of `a`, then of `b`.
pub fn forecast(plan: &Plan) -> Vec<Overlap> {
    let patterns: Vec<Indexed> = plan
        .tickets
        .iter()
        .enumerate()
        .flat_map(|(t, ticket)| {
            ticket.scope.iter().enumerate().flat_map(move |(k, s)| {
                // A rename changes both of its paths.
                let from = match &s.op {
                    ScopeOp::Rename { from } => Some(from.as_str()),
                    _ => None,
                };
                std::iter::once(s.pattern.as_str())
                    .chain(from)
                    .enumerate()
                    .map(move |(side, text)| Indexed {
                        ticket: t,
                        order: (k, side),
                        text,
                        glob: Glob::parse(text),
                    })
            })
        })
        .collect();
    // Ticket pair -> the first (in scope order) pair of patterns that intersect.
    let mut found: HashMap<(usize, usize), (usize, usize)> = HashMap::new();
    candidate_pairs(&patterns, |p, q| {
        let (x, y) = (&patterns[p], &patterns[q]);
        if x.ticket == y.ticket {
            return;
        }
        let (p, q) = if x.ticket < y.ticket { (p, q) } else { (q, p) };
        let (x, y) = (&patterns[p], &patterns[q]);
        let key = (x.ticket, y.ticket);
        let earlier = |old: &(usize, usize)| {
            (patterns[old.0].order, patterns[old.1].order) <= (x.order, y.order)
        };
        if found.get(&key).is_some_and(earlier) {
            return;
        }
        if x.glob.intersects(&y.glob) {
            found.insert(key, (p, q));
        }
    });
    let mut pairs: Vec<(usize, usize)> = found.keys().copied().collect();
    pairs.sort_unstable();
    let order = crate::analysis::Order::new(plan);
    let concurrent = order.unordered(&pairs);
    pairs
        .into_iter()
        .zip(concurrent)
        .filter(|(_, c)| *c)
        .map(|((a, b), _)| {
            let (p, q) = found[&(a, b)];
            Overlap {
                a: plan.tickets[a].id.clone(),
                b: plan.tickets[b].id.clone(),
                patterns: [patterns[p].text.to_string(), patterns[q].text.to_string()],
                a_index: a,
                b_index: b,
            }
        })
        .collect()
}

struct Indexed<'a> {
    ticket: usize,
    /// Scope entry, then 0 for its pattern or 1 for the `from` of a rename.
    order: (usize, usize),
    text: &'a str,
    glob: Glob,
}

/// Calls `f` with every pair of pattern indices whose literal prefixes are
/// prefix-related, each once: patterns at one trie node with each other, and
/// each pattern with those at the strict ancestors of its node. Pairs are
/// not collected: with a file every ticket names there are many.
fn candidate_pairs(patterns: &[Indexed], mut f: impl FnMut(usize, usize)) {
    struct Node {
        parent: Option<usize>,
        entries: Vec<usize>,
    }
    let mut nodes = vec![Node {
        parent: None,
        entries: Vec::new(),
    }];
    let mut children: HashMap<(usize, &str), usize> = HashMap::new();
    let mut at = Vec::with_capacity(patterns.len());
    for (p, x) in patterns.iter().enumerate() {
        let mut node = 0;
        for seg in x.glob.prefix() {
            node = *children.entry((node, seg)).or_insert_with(|| {
                nodes.push(Node {
                    parent: Some(node),
                    entries: Vec::new(),
                });
                nodes.len() - 1
            });
        }
        nodes[node].entries.push(p);
        at.push(node);
    }
    for node in &nodes {
        for (i, &p) in node.entries.iter().enumerate() {
            for &q in &node.entries[i + 1..] {
                f(p, q);
            }
        }
    }
    for (p, &node) in at.iter().enumerate() {
        let mut up = nodes[node].parent;
        while let Some(a) = up {
            for &q in &nodes[a].entries {
                f(q, p);
            }
            up = nodes[a].parent;
        }
    }
}

/// One character position of a segment pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Lit(char),
    /// `?` or a class: any one character.
    One,
    /// Any characters within the segment.
    Star,
}

/// One segment of a glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    /// Zero or more whole segments.
    Globstar,
    /// Exactly one segment matching these tokens.
    Part(Vec<Tok>),
}

impl Seg {
    fn literal(&self) -> Option<String> {
        match self {
            Seg::Part(toks) => toks
                .iter()
                .map(|t| match t {
                    Tok::Lit(c) => Some(*c),
                    _ => None,
                })
                .collect(),
            Seg::Globstar => None,
        }
    }
}

/// More than this many in-segment `**` in one pattern: the pattern is read
/// as "anything below its literal prefix" instead of expanding every reading.
const MAX_MIXED: usize = 4;

/// A parsed scope pattern: the set of paths it may match, as alternatives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    prefix: Vec<String>,
    alternatives: Vec<Vec<Seg>>,
}

impl Glob {
    /// Parses a scope pattern. Never fails: what the language does not know
    /// is read conservatively (see the module documentation).
    pub fn parse(pattern: &str) -> Glob {
        let pattern = slashed_braces_as_globstar(&crate::scope::normalize(pattern));
        // (segment, has an in-segment `**`); a brace group may leave an empty segment.
        let segs: Vec<(Seg, bool)> = pattern
            .split('/')
            .filter(|raw| !raw.is_empty())
            .map(parse_segment)
            .collect();
        let prefix: Vec<String> = segs.iter().map_while(|(s, _)| s.literal()).collect();
        let mixed = segs.iter().filter(|(_, m)| *m).count();
        let alternatives = if mixed > MAX_MIXED {
            let mut anything: Vec<Seg> = prefix.iter().map(|s| lit_seg(s)).collect();
            anything.push(Seg::Globstar);
            vec![anything]
        } else if mixed == 0 {
            // The common case has one reading: no copy of the segments.
            vec![segs.into_iter().map(|(seg, _)| seg).collect()]
        } else {
            expand(&segs)
        };
        Glob {
            prefix,
            alternatives,
        }
    }

    /// The literal directory prefix: the segments before the first wildcard.
    pub fn prefix(&self) -> impl Iterator<Item = &str> {
        self.prefix.iter().map(String::as_str)
    }

    /// Whether some path matches both globs.
    pub fn intersects(&self, other: &Glob) -> bool {
        let related = self.prefix.iter().zip(&other.prefix).all(|(a, b)| a == b);
        related
            && self
                .alternatives
                .iter()
                .any(|a| other.alternatives.iter().any(|b| segs_intersect(a, b)))
    }
}

/// Replaces each `{...}` group that holds a `/` by `**`, whose readings
/// cover every alternative (see [`expand`]).
fn slashed_braces_as_globstar(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        let Some(len) = rest[open..].find('}') else {
            break;
        };
        let group = &rest[open..open + len + 1];
        out.push_str(&rest[..open]);
        out.push_str(if group.contains('/') { "**" } else { group });
        rest = &rest[open + len + 1..];
    }
    out.push_str(rest);
    out
}

fn lit_seg(s: &str) -> Seg {
    Seg::Part(s.chars().map(Tok::Lit).collect())
}

/// Every reading of a pattern with in-segment `**`: kept in the segment
/// (as `*`), or crossing segments (`pre*` / `**` / `*suf`).
fn expand(segs: &[(Seg, bool)]) -> Vec<Vec<Seg>> {
    let mut out: Vec<Vec<Seg>> = vec![Vec::new()];
    for (seg, mixed) in segs {
        if !mixed {
            out.iter_mut().for_each(|alt| alt.push(seg.clone()));
            continue;
        }
        let Seg::Part(toks) = seg else {
            continue;
        };
        let (first, last) = crossing_ends(toks);
        let mut next = Vec::with_capacity(out.len() * 2);
        for alt in out {
            let mut inside = alt.clone();
            inside.push(seg.clone());
            next.push(inside);
            let mut cross = alt;
            cross.extend([
                Seg::Part(first.clone()),
                Seg::Globstar,
                Seg::Part(last.clone()),
            ]);
            next.push(cross);
        }
        out = next;
    }
    out
}

/// The two ends of a segment with a `**` that crosses segments: what comes
/// before its first star, then a star; a star, then what follows its last.
/// Wider than the exact crossing reading, never narrower.
fn crossing_ends(toks: &[Tok]) -> (Vec<Tok>, Vec<Tok>) {
    let first = toks.iter().position(|t| *t == Tok::Star).unwrap_or(0);
    let last = toks
        .iter()
        .rposition(|t| *t == Tok::Star)
        .map_or(0, |i| i + 1);
    let mut before = toks[..first].to_vec();
    before.push(Tok::Star);
    let mut after = vec![Tok::Star];
    after.extend_from_slice(&toks[last..]);
    (before, after)
}

/// Parses one non-empty segment; the flag says it holds a `**` inside a
/// longer segment (or alternatives with a `/`) and so may cross segments.
fn parse_segment(raw: &str) -> (Seg, bool) {
    if raw == "**" {
        return (Seg::Globstar, false);
    }
    let chars: Vec<char> = raw.chars().collect();
    let mut toks = Vec::new();
    let mut mixed = false;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => {
                if chars.get(i + 1) == Some(&'*') {
                    mixed = true;
                }
                while chars.get(i) == Some(&'*') {
                    i += 1;
                }
                push_star(&mut toks);
                continue;
            }
            '?' => toks.push(Tok::One),
            '\\' => {
                i += 1;
                push_star(&mut toks);
            }
            '[' => match chars[i + 1..].iter().skip(1).position(|&c| c == ']') {
                // A class ends at the first `]` after its first character.
                Some(end) => {
                    i += end + 2;
                    toks.push(Tok::One);
                }
                None => toks.push(Tok::Lit('[')),
            },
            '{' => match chars[i..].iter().position(|&c| c == '}') {
                Some(end) => {
                    i += end;
                    push_star(&mut toks);
                }
                None => toks.push(Tok::Lit('{')),
            },
            c => toks.push(Tok::Lit(c)),
        }
        i += 1;
    }
    (Seg::Part(toks), mixed)
}

fn push_star(toks: &mut Vec<Tok>) {
    if toks.last() != Some(&Tok::Star) {
        toks.push(Tok::Star);
    }
}

/// Whether some sequence of segments matches both: a DP over positions
/// `(i, j)` where `ok[i][j]` says `a[i..]` and `b[j..]` have a common match.
fn segs_intersect(a: &[Seg], b: &[Seg]) -> bool {
    let (m, n) = (a.len(), b.len());
    let mut ok = vec![vec![false; n + 1]; m + 1];
    for i in (0..=m).rev() {
        for j in (0..=n).rev() {
            ok[i][j] = match (a.get(i), b.get(j)) {
                (None, None) => true,
                (Some(Seg::Globstar), _) if ok[i + 1][j] => true,
                (_, Some(Seg::Globstar)) if ok[i][j + 1] => true,
                // A globstar takes one segment that the other side's part matches.
                (Some(Seg::Globstar), Some(Seg::Part(_))) => ok[i][j + 1],
                (Some(Seg::Part(_)), Some(Seg::Globstar)) => ok[i + 1][j],
                (Some(Seg::Part(x)), Some(Seg::Part(y))) => {
                    ok[i + 1][j + 1] && part_intersect(x, y)
                }
                _ => false,
            };
        }
    }
    ok[0][0]
}

/// Whether some non-empty segment name matches both token lists.
fn part_intersect(a: &[Tok], b: &[Tok]) -> bool {
    let (m, n) = (a.len(), b.len());
    let mut ok = vec![vec![false; n + 1]; m + 1];
    for i in (0..=m).rev() {
        for j in (0..=n).rev() {
            ok[i][j] = match (a.get(i), b.get(j)) {
                (None, None) => true,
                (Some(Tok::Star), y) => ok[i + 1][j] || (y.is_some() && ok[i][j + 1]),
                (x, Some(Tok::Star)) => ok[i][j + 1] || (x.is_some() && ok[i + 1][j]),
                (Some(x), Some(y)) => ok[i + 1][j + 1] && chars_meet(*x, *y),
                _ => false,
            };
        }
    }
    // Both all-star lists share "x" too, so emptiness is never the only witness.
    ok[0][0]
}

fn chars_meet(a: Tok, b: Tok) -> bool {
    match (a, b) {
        (Tok::Lit(x), Tok::Lit(y)) => x == y,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
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
        let g = Glob::parse("src/parser/*.rs");
        assert_eq!(g.prefix().collect::<Vec<_>>(), ["src", "parser"]);
        let g = Glob::parse("src/x.rs");
        assert_eq!(g.prefix().collect::<Vec<_>>(), ["src", "x.rs"]);
        assert_eq!(Glob::parse("**/x").prefix().count(), 0);
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

    #[test]
    fn ordered_tickets_never_overlap() {
        let p = plan(vec![
            ticket("A", &[], &["src/**"]),
            ticket("B", &["A"], &["src/x.rs"]),
            ticket("C", &["B"], &["src/y.rs"]),
            ticket("D", &[], &["docs/*.md", "src/x.rs"]),
        ]);
        let found = forecast(&p);
        let pairs: Vec<(&str, &str, [&str; 2])> = found
            .iter()
            .map(|o| {
                (
                    o.a.as_str(),
                    o.b.as_str(),
                    [o.patterns[0].as_str(), o.patterns[1].as_str()],
                )
            })
            .collect();
        assert_eq!(
            pairs,
            [
                ("A", "D", ["src/**", "src/x.rs"]),
                ("B", "D", ["src/x.rs", "src/x.rs"]),
            ]
        );
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
        assert_eq!(found[0].patterns, ["src/old.rs", "src/old.rs"]);
    }

    #[test]
    fn first_entries_in_scope_order_are_reported() {
        let p = plan(vec![
            ticket("A", &[], &["a.txt", "src/*.rs", "src/**"]),
            ticket("B", &[], &["src/lib.rs", "src/main.rs"]),
        ]);
        let found = forecast(&p);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].patterns, ["src/*.rs", "src/lib.rs"]);
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

    const SEGS: [&str; 10] = ["**", "*", "a", "b", "a*", "*b", "?", "a?", "ab", "*a*"];
    const NAMES: [&str; 6] = ["a", "b", "ab", "ba", "aa", "abb"];
}
