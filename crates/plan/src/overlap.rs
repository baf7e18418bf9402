//! The scope-overlap forecast: groups of tickets that may run at the same
//! time and may change the same path.
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
//! Scale: the forecast reports groups, not pairs, since 2,000 tickets that
//! share one scope are 2 million pairs. Patterns are compared once per
//! distinct text, only where their literal directory prefixes (the segments
//! before the first wildcard) are equal or one a prefix of the other, and
//! intersecting patterns are joined into clusters; within a cluster, tickets
//! are joined into groups by "may run at the same time and name patterns
//! that intersect", asking only about pairs not already in one group. Whether two tickets are ordered is
//! answered from ancestor bitsets computed one block of 4,096 tickets at a
//! time, so memory stays at 512 bytes per ticket, and the groups hold each
//! ticket once per cluster.

use crate::graph::TicketGraph;
use crate::model::{Plan, ScopeOp, Ticket};
use serde::Serialize;
use std::collections::HashMap;

/// A connected group of tickets that may run at the same time and may
/// change the same paths: each may run at the same time as another of the
/// group whose scope has a pattern that intersects one of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overlap {
    /// The tickets, in plan order.
    pub tickets: Vec<String>,
    /// The intersecting patterns of their scopes, in the order the tickets
    /// name them, each once.
    pub patterns: Vec<String>,
    /// Plan index of each ticket.
    #[serde(skip)]
    pub indices: Vec<usize>,
}

/// Two tickets of a group that may run at the same time and may change the
/// same path: the detail behind an [`Overlap`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OverlapPair {
    /// The earlier of the two tickets in plan order.
    pub a: String,
    /// The later one.
    pub b: String,
    /// The first pair of intersecting patterns in scope order: `a`'s, then `b`'s.
    pub patterns: [String; 2],
    /// Plan index of `b`.
    #[serde(skip)]
    pub b_index: usize,
}

/// Every group of overlapping tickets, ordered by the plan index of its
/// first ticket.
pub fn forecast(plan: &Plan) -> Vec<Overlap> {
    forecast_counted(plan, &mut 0)
}

/// [`forecast`], adding to `work` the tickets, dependencies and pairs of
/// tickets it looked at (what its tests hold linear in the plan's size).
fn forecast_counted(plan: &Plan, work: &mut u64) -> Vec<Overlap> {
    let distinct = Distinct::new(plan);
    let order = TicketGraph::new(plan);
    let (cluster, shared) = distinct.clusters();
    let mut found: Vec<(usize, Vec<usize>)> = Vec::new();
    for (root, tickets) in shared {
        let mut meets = distinct.meeting(plan, &tickets, &cluster, root);
        let place = |t: usize| tickets.binary_search(&t).unwrap_or_default();
        // Tickets of two runs never run at the same time: pairs are only
        // looked for within a run.
        for run in order.series(&tickets, work) {
            if run.len() < 2 {
                continue;
            }
            let mut meets_run = |a: usize, b: usize| meets(place(a), place(b));
            let groups = concurrent_groups(&order, &run, &mut meets_run, work);
            found.extend(groups.into_iter().map(|indices| (root, indices)));
        }
    }
    let mut groups: Vec<Overlap> = found
        .into_iter()
        .map(|(root, indices)| Overlap {
            tickets: indices
                .iter()
                .map(|&i| plan.tickets[i].id.clone())
                .collect(),
            patterns: distinct.patterns_of(plan, &indices, &cluster, root),
            indices,
        })
        .collect();
    groups.sort_by(|x, y| x.indices.cmp(&y.indices));
    groups
}

/// The first `limit` overlapping pairs, group by group, in plan order
/// within each: the detail `validate --verbose` shows.
pub fn pairs(plan: &Plan, groups: &[Overlap], limit: usize) -> Vec<OverlapPair> {
    let order = TicketGraph::new(plan);
    let mut out = Vec::new();
    for group in groups {
        for (k, &a) in group.indices.iter().enumerate() {
            if out.len() >= limit {
                return out;
            }
            let row: Vec<(usize, usize)> = group.indices[k + 1..].iter().map(|&b| (a, b)).collect();
            for (&(a, b), concurrent) in row.iter().zip(order.unordered(&row)) {
                if out.len() >= limit {
                    return out;
                }
                let shared = concurrent
                    .then(|| first_shared(&plan.tickets[a], &plan.tickets[b]))
                    .flatten();
                if let Some(patterns) = shared {
                    out.push(OverlapPair {
                        a: plan.tickets[a].id.clone(),
                        b: plan.tickets[b].id.clone(),
                        patterns,
                        b_index: b,
                    });
                }
            }
        }
    }
    out
}

/// The first pair of intersecting patterns, in scope order: `a`'s, then `b`'s.
fn first_shared(a: &Ticket, b: &Ticket) -> Option<[String; 2]> {
    let theirs: Vec<(&str, Glob)> = sides(b).map(|p| (p, Glob::parse(p))).collect();
    sides(a).find_map(|p| {
        let mine = Glob::parse(p);
        theirs
            .iter()
            .find(|(_, g)| mine.intersects(g))
            .map(|(q, _)| [p.to_string(), q.to_string()])
    })
}

/// Every path pattern a ticket may change, in scope order: a rename
/// changes both of its paths.
fn sides(ticket: &Ticket) -> impl Iterator<Item = &str> {
    ticket.scope.iter().flat_map(|s| {
        let from = match &s.op {
            ScopeOp::Rename { from } => Some(from.as_str()),
            _ => None,
        };
        std::iter::once(s.pattern.as_str()).chain(from)
    })
}

/// The distinct pattern texts of a plan and the tickets that name each.
struct Distinct<'a> {
    texts: Vec<&'a str>,
    globs: Vec<Glob>,
    /// Plan indices of the tickets naming each pattern, ascending, once each.
    users: Vec<Vec<usize>>,
    id: HashMap<&'a str, usize>,
}

impl<'a> Distinct<'a> {
    fn new(plan: &'a Plan) -> Self {
        let mut d = Distinct {
            texts: Vec::new(),
            globs: Vec::new(),
            users: Vec::new(),
            id: HashMap::new(),
        };
        for (t, ticket) in plan.tickets.iter().enumerate() {
            for text in sides(ticket) {
                let next = d.texts.len();
                let p = *d.id.entry(text).or_insert(next);
                if p == next {
                    d.texts.push(text);
                    d.globs.push(Glob::parse(text));
                    d.users.push(Vec::new());
                }
                if d.users[p].last() != Some(&t) {
                    d.users[p].push(t);
                }
            }
        }
        d
    }

    /// The cluster of every pattern (patterns that intersect, directly or
    /// through others, share one), and the tickets naming any pattern of
    /// each cluster that two or more tickets name.
    fn clusters(&self) -> (Vec<usize>, Vec<(usize, Vec<usize>)>) {
        let mut sets = UnionFind::new(self.texts.len());
        candidate_pairs(&self.globs, |p, q| {
            if sets.find(p) != sets.find(q) && self.globs[p].intersects(&self.globs[q]) {
                sets.union(p, q);
            }
        });
        let cluster: Vec<usize> = (0..self.texts.len()).map(|p| sets.find(p)).collect();
        let mut tickets: HashMap<usize, Vec<usize>> = HashMap::new();
        for (p, users) in self.users.iter().enumerate() {
            tickets.entry(cluster[p]).or_default().extend(users);
        }
        let mut shared: Vec<(usize, Vec<usize>)> = tickets
            .into_iter()
            .filter_map(|(root, mut list)| {
                list.sort_unstable();
                list.dedup();
                (list.len() > 1).then_some((root, list))
            })
            .collect();
        shared.sort_unstable();
        (cluster, shared)
    }

    /// Whether two of `tickets` (by their place in it) name patterns of
    /// `cluster` that intersect: patterns join a cluster through others
    /// (`x.py` and `y.py` through `**`), which says nothing of two tickets
    /// that name only `x.py` and `y.py`. Answers per pattern pair are kept.
    fn meeting<'s>(
        &'s self,
        plan: &Plan,
        tickets: &[usize],
        cluster: &[usize],
        root: usize,
    ) -> impl FnMut(usize, usize) -> bool + 's {
        let named: Vec<Vec<usize>> = (tickets.iter())
            .map(|&t| {
                let mut ps: Vec<usize> = sides(&plan.tickets[t])
                    .map(|text| self.id[text])
                    .filter(|&p| cluster[p] == root)
                    .collect();
                ps.sort_unstable();
                ps.dedup();
                ps
            })
            .collect();
        let mut known: HashMap<(usize, usize), bool> = HashMap::new();
        move |i, j| {
            named[i].iter().any(|&p| {
                named[j].iter().any(|&q| {
                    p == q
                        || *known
                            .entry((p.min(q), p.max(q)))
                            .or_insert_with(|| self.globs[p].intersects(&self.globs[q]))
                })
            })
        }
    }

    /// The patterns of `cluster` that `tickets` name, in the order they
    /// name them, each once.
    fn patterns_of(
        &self,
        plan: &Plan,
        tickets: &[usize],
        cluster: &[usize],
        root: usize,
    ) -> Vec<String> {
        let mut seen = vec![false; self.texts.len()];
        let mut out = Vec::new();
        for &t in tickets {
            for text in sides(&plan.tickets[t]) {
                let p = self.id[text];
                if cluster[p] == root && !std::mem::replace(&mut seen[p], true) {
                    out.push(text.to_string());
                }
            }
        }
        out
    }
}

/// The groups of `tickets` (plan indices, ascending) joined by "may run at
/// the same time and name patterns that intersect" (`meets`, by plan
/// index), with two or more tickets each. A pair already in one group
/// is never asked about, so tickets that are all concurrent cost about one
/// batch of questions; questions go in batches of [`BATCH`] pairs, which
/// bounds the memory and the passes over the plan.
fn concurrent_groups(
    order: &TicketGraph,
    tickets: &[usize],
    meets: &mut dyn FnMut(usize, usize) -> bool,
    work: &mut u64,
) -> Vec<Vec<usize>> {
    const BATCH: usize = 1 << 16;
    let n = tickets.len();
    let mut sets = UnionFind::new(n);
    let mut separate = n;
    let mut pending: Vec<(usize, usize)> = Vec::new();
    for i in 0..n {
        if separate == 1 {
            break;
        }
        for j in i + 1..n {
            *work += 1;
            if sets.find(i) != sets.find(j) && meets(tickets[i], tickets[j]) {
                pending.push((i, j));
            }
        }
        if pending.len() >= BATCH || i + 1 == n {
            let asked: Vec<(usize, usize)> = pending
                .iter()
                .map(|&(i, j)| (tickets[i], tickets[j]))
                .collect();
            for (&(i, j), concurrent) in pending.iter().zip(order.unordered_counted(&asked, work)) {
                if concurrent && sets.find(i) != sets.find(j) {
                    sets.union(i, j);
                    separate -= 1;
                }
            }
            pending.clear();
        }
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, &t) in tickets.iter().enumerate() {
        groups.entry(sets.find(i)).or_default().push(t);
    }
    groups.into_values().filter(|g| g.len() > 1).collect()
}

/// Disjoint sets over `0..n`, with path halving.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        self.parent[a.max(b)] = a.min(b);
    }
}

/// Calls `f` with every pair of glob indices whose literal prefixes are
/// prefix-related, each once: globs at one trie node with each other, and
/// each glob with those at the strict ancestors of its node.
fn candidate_pairs(globs: &[Glob], mut f: impl FnMut(usize, usize)) {
    struct Node {
        parent: Option<usize>,
        entries: Vec<usize>,
    }
    let mut nodes = vec![Node {
        parent: None,
        entries: Vec::new(),
    }];
    let mut children: HashMap<(usize, &str), usize> = HashMap::new();
    let mut at = Vec::with_capacity(globs.len());
    for (p, glob) in globs.iter().enumerate() {
        let mut node = 0;
        for seg in glob.prefix() {
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

    fn pair_list(p: &Plan, limit: usize) -> Vec<(String, String, [String; 2])> {
        pairs(p, &forecast(p), limit)
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

    const SEGS: [&str; 10] = ["**", "*", "a", "b", "a*", "*b", "?", "a?", "ab", "*a*"];
    const NAMES: [&str; 6] = ["a", "b", "ab", "ba", "aa", "abb"];
}

#[cfg(test)]
#[path = "overlap_work.rs"]
mod work;
