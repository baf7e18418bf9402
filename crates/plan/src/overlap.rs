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
pub fn forecast(plan: &Plan, graph: &TicketGraph) -> Vec<Overlap> {
    forecast_counted(plan, graph, &mut 0)
}

/// [`forecast`], adding to `work` the tickets, dependencies and pairs of
/// tickets it looked at (what its tests hold linear in the plan's size).
fn forecast_counted(plan: &Plan, order: &TicketGraph, work: &mut u64) -> Vec<Overlap> {
    let distinct = Distinct::new(plan);
    let (cluster, shared) = distinct.clusters();
    let mut found: Vec<(usize, Vec<usize>)> = Vec::new();
    for (root, tickets) in shared {
        let mut meets = distinct.meeting(&tickets, &cluster, root);
        let place = |t: usize| tickets.binary_search(&t).unwrap_or_default();
        // Tickets of two runs never run at the same time: pairs are only
        // looked for within a run.
        for run in order.series(&tickets, work) {
            if run.len() < 2 {
                continue;
            }
            let mut meets_run = |a: usize, b: usize| meets(place(a), place(b));
            let groups = concurrent_groups(order, &run, &mut meets_run, work);
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
pub fn pairs(
    plan: &Plan,
    order: &TicketGraph,
    groups: &[Overlap],
    limit: usize,
) -> Vec<OverlapPair> {
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

/// The distinct patterns of a plan, the tickets that name each, and the
/// patterns each ticket names. Held as flat lists of `u32` indices rather
/// than a list and a map per pattern: at 100,000 tickets the per-pattern
/// lists and the text map were most of the forecast's memory (issue 53).
struct Distinct {
    globs: Vec<Glob>,
    /// Plan indices of the tickets naming pattern `p`, ascending, once
    /// each: `users[user_start[p]..user_start[p + 1]]`.
    users: Vec<u32>,
    user_start: Vec<u32>,
    /// The pattern of each of ticket `t`'s [`sides`], in order:
    /// `named[named_start[t]..named_start[t + 1]]`.
    named: Vec<u32>,
    named_start: Vec<u32>,
}

impl Distinct {
    fn new(plan: &Plan) -> Self {
        let mut id: HashMap<&str, u32> = HashMap::new();
        let mut globs = Vec::new();
        let mut named = Vec::new();
        let mut named_start = Vec::with_capacity(plan.tickets.len() + 1);
        named_start.push(0);
        for ticket in &plan.tickets {
            for text in sides(ticket) {
                let next = globs.len() as u32;
                let p = *id.entry(text).or_insert(next);
                if p == next {
                    globs.push(Glob::parse(text));
                }
                named.push(p);
            }
            named_start.push(named.len() as u32);
        }
        drop(id);
        let mut d = Distinct {
            globs,
            users: Vec::new(),
            user_start: Vec::new(),
            named,
            named_start,
        };
        d.index_users();
        d
    }

    /// Fills `users` from `named` (a counting sort: tickets come in plan
    /// order, so each pattern's list is ascending).
    fn index_users(&mut self) {
        let n = self.globs.len();
        let tickets = self.named_start.len() - 1;
        // The last ticket counted for each pattern: a ticket naming a
        // pattern twice is its user once.
        let mut last = vec![u32::MAX; n];
        let mut start = vec![0u32; n + 1];
        for t in 0..tickets {
            for &p in self.named_of(t) {
                if std::mem::replace(&mut last[p as usize], t as u32) != t as u32 {
                    start[p as usize + 1] += 1;
                }
            }
        }
        for p in 0..n {
            start[p + 1] += start[p];
        }
        let mut users = vec![0u32; start[n] as usize];
        let mut fill = start.clone();
        last.fill(u32::MAX);
        for t in 0..tickets {
            for k in self.named_start[t]..self.named_start[t + 1] {
                let p = self.named[k as usize] as usize;
                if std::mem::replace(&mut last[p], t as u32) != t as u32 {
                    users[fill[p] as usize] = t as u32;
                    fill[p] += 1;
                }
            }
        }
        self.users = users;
        self.user_start = start;
    }

    /// The pattern of each side of ticket `t`, in [`sides`] order.
    fn named_of(&self, t: usize) -> &[u32] {
        &self.named[self.named_start[t] as usize..self.named_start[t + 1] as usize]
    }

    /// The tickets naming pattern `p`, ascending.
    fn users_of(&self, p: usize) -> &[u32] {
        &self.users[self.user_start[p] as usize..self.user_start[p + 1] as usize]
    }

    /// The cluster of every pattern (patterns that intersect, directly or
    /// through others, share one), and the tickets naming any pattern of
    /// each cluster that two or more tickets name.
    fn clusters(&self) -> (Vec<usize>, Vec<(usize, Vec<usize>)>) {
        let n = self.globs.len();
        let mut sets = UnionFind::new(n);
        candidate_pairs(&self.globs, |p, q| {
            if sets.find(p) != sets.find(q) && self.globs[p].intersects(&self.globs[q]) {
                sets.union(p, q);
            }
        });
        let cluster: Vec<usize> = (0..n).map(|p| sets.find(p)).collect();
        drop(sets);
        // The patterns cluster by cluster: only a cluster of several
        // patterns, or of one that several tickets name, can be shared,
        // so no list is made for the (usually many) others.
        let mut by_cluster: Vec<u32> = (0..n as u32).collect();
        by_cluster.sort_unstable_by_key(|&p| (cluster[p as usize], p));
        let mut shared: Vec<(usize, Vec<usize>)> = Vec::new();
        for members in by_cluster.chunk_by(|&p, &q| cluster[p as usize] == cluster[q as usize]) {
            if let [only] = members {
                if self.users_of(*only as usize).len() < 2 {
                    continue;
                }
            }
            let mut list: Vec<usize> = (members.iter())
                .flat_map(|&p| self.users_of(p as usize))
                .map(|&t| t as usize)
                .collect();
            list.sort_unstable();
            list.dedup();
            if list.len() > 1 {
                shared.push((cluster[members[0] as usize], list));
            }
        }
        shared.sort_unstable();
        (cluster, shared)
    }

    /// Whether two of `tickets` (by their place in it) name patterns of
    /// `cluster` that intersect: patterns join a cluster through others
    /// (`x.py` and `y.py` through `**`), which says nothing of two tickets
    /// that name only `x.py` and `y.py`. Answers per pattern pair are kept.
    fn meeting<'s>(
        &'s self,
        tickets: &[usize],
        cluster: &[usize],
        root: usize,
    ) -> impl FnMut(usize, usize) -> bool + 's {
        let named: Vec<Vec<usize>> = (tickets.iter())
            .map(|&t| {
                let mut ps: Vec<usize> = (self.named_of(t).iter())
                    .map(|&p| p as usize)
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
        let mut seen = vec![false; self.globs.len()];
        let mut out = Vec::new();
        for &t in tickets {
            for (text, &p) in sides(&plan.tickets[t]).zip(self.named_of(t)) {
                let p = p as usize;
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
/// prefix-related, each once: globs of one prefix with each other, and each
/// glob with those whose prefix is a strict prefix of its own. The globs
/// are sorted by prefix (segment by segment), so that each prefix's globs
/// are one run found by binary search: no tree of prefixes is built.
fn candidate_pairs(globs: &[Glob], mut f: impl FnMut(usize, usize)) {
    let mut order: Vec<u32> = (0..globs.len() as u32).collect();
    // Stable: the globs of one prefix stay in index order.
    order.sort_by(|&p, &q| globs[p as usize].prefix().cmp(globs[q as usize].prefix()));
    let prefix_of = |k: usize| globs[order[k] as usize].prefix();
    let mut k = 0;
    while k < order.len() {
        let end = k + order[k..].partition_point(|&q| globs[q as usize].prefix().eq(prefix_of(k)));
        for i in k..end {
            for j in i + 1..end {
                f(order[i] as usize, order[j] as usize);
            }
        }
        k = end;
    }
    for &p in &order {
        let prefix: Vec<&[Tok]> = globs[p as usize].prefix().collect();
        for depth in 0..prefix.len() {
            let above = &prefix[..depth];
            let first = order.partition_point(|&q| {
                globs[q as usize]
                    .prefix()
                    .cmp(above.iter().copied())
                    .is_lt()
            });
            for &q in &order[first..] {
                if !globs[q as usize].prefix().eq(above.iter().copied()) {
                    break;
                }
                f(q as usize, p as usize);
            }
        }
    }
}

/// One character position of a segment pattern, or (in a [`Glob`]'s flat
/// list) a separator; four bytes, as a `char`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tok {
    Lit(char),
    /// `?` or a class: any one character.
    One,
    /// Any characters within the segment.
    Star,
    /// A segment that is `**`: zero or more whole segments.
    Globstar,
    /// Between two segments.
    Slash,
    /// Between two alternatives.
    Or,
}

const _: () = assert!(std::mem::size_of::<Tok>() == 4);

/// One segment of a glob, while parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    /// Zero or more whole segments.
    Globstar,
    /// Exactly one segment matching these tokens.
    Part(Vec<Tok>),
}

impl Seg {
    fn is_literal(&self) -> bool {
        match self {
            Seg::Part(toks) => toks.iter().all(|t| matches!(t, Tok::Lit(_))),
            Seg::Globstar => false,
        }
    }
}

/// More than this many in-segment `**` in one pattern: the pattern is read
/// as "anything below its literal prefix" instead of expanding every reading.
const MAX_MIXED: usize = 4;

/// A parsed scope pattern: the set of paths it may match, as alternatives.
///
/// Held as one flat list of tokens (alternatives split by [`Tok::Or`],
/// segments by [`Tok::Slash`], a `**` segment as [`Tok::Globstar`]): a
/// plan of 100,000 tickets holds one per distinct pattern, and a list per
/// alternative, segment and prefix segment took five times the room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    toks: Box<[Tok]>,
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
        let mixed = segs.iter().filter(|(_, m)| *m).count();
        let alternatives = if mixed > MAX_MIXED {
            let mut anything: Vec<Seg> = (segs.iter())
                .map_while(|(s, _)| s.is_literal().then(|| s.clone()))
                .collect();
            anything.push(Seg::Globstar);
            vec![anything]
        } else if mixed == 0 {
            // The common case has one reading: no copy of the segments.
            vec![segs.into_iter().map(|(seg, _)| seg).collect()]
        } else {
            expand(&segs)
        };
        let mut toks = Vec::new();
        for (k, alt) in alternatives.iter().enumerate() {
            if k > 0 {
                toks.push(Tok::Or);
            }
            for (i, seg) in alt.iter().enumerate() {
                if i > 0 {
                    toks.push(Tok::Slash);
                }
                match seg {
                    Seg::Globstar => toks.push(Tok::Globstar),
                    Seg::Part(part) => toks.extend_from_slice(part),
                }
            }
        }
        Glob {
            toks: toks.into_boxed_slice(),
        }
    }

    /// The readings, each a list of segments.
    fn alternatives(&self) -> impl Iterator<Item = Vec<&[Tok]>> {
        self.toks.split(|t| *t == Tok::Or).map(|alt| match alt {
            // No segment (the pattern was empty): every segment is non-empty.
            [] => Vec::new(),
            _ => alt.split(|t| *t == Tok::Slash).collect(),
        })
    }

    /// The literal directory prefix: the segments before the first
    /// wildcard, the same in every reading.
    fn prefix(&self) -> impl Iterator<Item = &[Tok]> + Clone {
        let first = self.toks.split(|t| *t == Tok::Or).next().unwrap_or(&[]);
        first
            .split(|t| *t == Tok::Slash)
            .take_while(|seg| !seg.is_empty() && seg.iter().all(|t| matches!(t, Tok::Lit(_))))
    }

    /// Whether some path matches both globs.
    pub fn intersects(&self, other: &Glob) -> bool {
        let related = self.prefix().zip(other.prefix()).all(|(a, b)| a == b);
        related && {
            let theirs: Vec<Vec<&[Tok]>> = other.alternatives().collect();
            self.alternatives()
                .any(|a| theirs.iter().any(|b| segs_intersect(&a, b)))
        }
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
fn segs_intersect(a: &[&[Tok]], b: &[&[Tok]]) -> bool {
    let globstar = |s: Option<&&[Tok]>| s.map(|s| *s == [Tok::Globstar]);
    let (m, n) = (a.len(), b.len());
    let mut ok = vec![vec![false; n + 1]; m + 1];
    for i in (0..=m).rev() {
        for j in (0..=n).rev() {
            ok[i][j] = match (globstar(a.get(i)), globstar(b.get(j))) {
                (None, None) => true,
                (Some(true), _) if ok[i + 1][j] => true,
                (_, Some(true)) if ok[i][j + 1] => true,
                // A globstar takes one segment that the other side's part matches.
                (Some(true), Some(false)) => ok[i][j + 1],
                (Some(false), Some(true)) => ok[i + 1][j],
                (Some(false), Some(false)) => ok[i + 1][j + 1] && part_intersect(a[i], b[j]),
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
mod tests;

#[cfg(test)]
#[path = "overlap_work.rs"]
mod work;
