//! codeboost documents: generated, converted and read back.

use super::*;

/// Literal paths, none inside another: an item may declare any of them.
const CODEBOOST_PATHS: [&str; 9] = [
    "README.md",
    "src/a.rs",
    "src/b.rs",
    "src/c.rs",
    "lib/x.go",
    "lib/y.go",
    "docs/z.md",
    "ui/w.ts",
    "ui/é.ts",
];

/// A non-empty text of at most `max` characters, sometimes exactly `max`.
fn text_upto(max: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        6 => nonblank(),
        1 => Just("x".repeat(max)),
        1 => Just("é".repeat(max)),
    ]
}

/// Arguments the `cmd` grammar can quote: no backslash, control or format
/// characters, but spaces, quotes and shell characters.
fn cmd_arg() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        proptest::char::range('a', 'z'),
        Just(' '),
        Just('\''),
        Just('"'),
        Just('.'),
        Just('-'),
        Just('é'),
        Just('\u{1F600}'),
        prop::sample::select(command::SHELL_CHARS.to_vec()),
    ];
    prop::collection::vec(c, 0..8).prop_map(|v| v.into_iter().collect())
}

fn cmd_gate() -> impl Strategy<Value = Gate> {
    (word(), prop::collection::vec(cmd_arg(), 0..3)).prop_map(|(p, mut argv)| {
        argv.insert(0, p);
        Gate {
            name: command::quote(&argv),
            argv,
        }
    })
}

/// Distinct paths with an operation each; a rename takes two of them.
fn codeboost_scope() -> impl Strategy<Value = Vec<ScopeEntry>> {
    (
        prop::sample::subsequence(CODEBOOST_PATHS.to_vec(), 1..6).prop_shuffle(),
        prop::collection::vec(0u8..4, 6),
    )
        .prop_map(|(paths, ops)| {
            let mut rest = paths.into_iter();
            let mut out = Vec::new();
            while let Some(path) = rest.next() {
                let op = match ops[out.len()] {
                    0 => ScopeOp::Create,
                    1 => ScopeOp::Modify,
                    2 => ScopeOp::Delete,
                    _ => rest.next().map_or(ScopeOp::Modify, |from| ScopeOp::Rename {
                        from: from.to_string(),
                    }),
                };
                out.push(ScopeEntry {
                    pattern: path.to_string(),
                    op,
                });
            }
            out
        })
}

/// What codeboost can express of an item; `deps` among earlier items.
fn codeboost_ticket(i: usize) -> impl Strategy<Value = Ticket> {
    (
        text_upto(120),
        text_upto(600),
        codeboost_scope(),
        prop::collection::vec(0..i.max(1), 0..3),
        prop::collection::vec(any::<bool>(), 1..6),
        prop::collection::vec(cmd_gate(), 6),
        prop::collection::vec(text_upto(400), 6),
        prop::collection::vec(text_upto(1200), 6),
    )
        .prop_map(
            move |(title, body, scope, deps, kinds, mut gates, mut checks, changes)| {
                let mut depends_on: Vec<String> = Vec::new();
                for d in deps.into_iter().filter(|&d| d < i) {
                    let id = format!("P{}", d + 1);
                    if !depends_on.contains(&id) {
                        depends_on.push(id);
                    }
                }
                let cmds = kinds.iter().filter(|k| **k).count();
                gates.truncate(cmds);
                checks.truncate(kinds.len() - cmds);
                let changes: Map<String, Value> = scope
                    .iter()
                    .zip(changes)
                    .map(|(s, c)| (s.pattern.clone(), Value::from(c)))
                    .collect();
                let mut metadata = Map::new();
                metadata.insert("changes".into(), Value::Object(changes));
                // Recorded exactly when a check comes before a cmd.
                if kinds.windows(2).any(|w| !w[0] && w[1]) {
                    let order = kinds.iter().map(|&k| if k { "cmd" } else { "check" });
                    metadata.insert("acceptance".into(), order.collect());
                }
                Ticket {
                    id: format!("P{}", i + 1),
                    title,
                    body,
                    scope,
                    rails: vec![],
                    depends_on,
                    tier: None,
                    pool_hint: None,
                    model: None,
                    gates,
                    checks,
                    counterfactuals: vec![],
                    estimate_minutes: None,
                    metadata: metadata.into(),
                }
            },
        )
}

/// Both paths of a scope entry.
pub(crate) fn sides(s: &ScopeEntry) -> Vec<&str> {
    match &s.op {
        ScopeOp::Rename { from } => vec![s.pattern.as_str(), from.as_str()],
        _ => vec![s.pattern.as_str()],
    }
}

/// Adds the dependencies codeboost's producer rule asks for: an item that
/// touches a path an earlier item adds, renames or deletes depends on it.
fn obey_producers(tickets: &mut [Ticket]) {
    let mut reach: Vec<BTreeSet<usize>> = Vec::new();
    for n in 0..tickets.len() {
        let mut mine = BTreeSet::new();
        let add = |k: usize, mine: &mut BTreeSet<usize>| {
            mine.insert(k);
            mine.extend(reach[k].iter().copied());
        };
        for d in &tickets[n].depends_on {
            add(d[1..].parse::<usize>().unwrap() - 1, &mut mine);
        }
        let touched: BTreeSet<String> = tickets[n]
            .scope
            .iter()
            .flat_map(sides)
            .map(String::from)
            .collect();
        for k in 0..n {
            let produces = tickets[k]
                .scope
                .iter()
                .filter(|s| s.op != ScopeOp::Modify)
                .flat_map(sides)
                .any(|p| touched.contains(p));
            if produces && !mine.contains(&k) {
                tickets[n].depends_on.push(format!("P{}", k + 1));
                add(k, &mut mine);
            }
        }
        reach.push(mine);
    }
}

/// Everything codeboost can express: P1..Pn, literal paths with their
/// operations, `cmd` gates and checks in any order, and the metadata
/// codeboost keeps.
fn codeboost_plan() -> impl Strategy<Value = Plan> {
    (1usize..8)
        .prop_flat_map(|n| {
            let tickets: Vec<_> = (0..n).map(codeboost_ticket).collect();
            (
                tickets,
                prop_oneof![1u64..1000, Just(9_007_199_254_740_991u64)],
                1u64..50,
                text_upto(600),
                prop::collection::vec(text_upto(400), 0..4),
            )
        })
        .prop_map(|(mut tickets, issue, revision, summary, questions)| {
            obey_producers(&mut tickets);
            let mut metadata = Map::new();
            metadata.insert("issue".into(), issue.into());
            metadata.insert("revision".into(), revision.into());
            metadata.insert("summary".into(), summary.into());
            metadata.insert("questions".into(), questions.into());
            Plan {
                source_format: Format::Native,
                repo: None,
                base: "main".into(),
                gates: vec![],
                tickets,
                caps: BTreeMap::new(),
                review: Review::default(),
                metadata,
            }
        })
}

fn native(mut plan: Plan) -> Plan {
    plan.source_format = Format::Native;
    plan
}

/// The ticket a warning's pointer (`/tickets/<i>/...`) names.
pub(crate) fn ticket_of<'a>(plan: &'a Plan, w: &Diagnostic) -> Option<&'a Ticket> {
    let tokens = planwright_plan::pointer::tokens(&w.pointer)?;
    (tokens.first()? == "tickets")
        .then(|| plan.tickets.get(tokens.get(1)?.parse::<usize>().ok()?))
        .flatten()
}

/// Whether a codeboost conversion warning names something of `plan` that
/// `back` (the plan read back) really lost or changed.
fn codeboost_warning_is_true(plan: &Plan, back: &Plan, w: &Diagnostic) -> bool {
    let t = ticket_of(plan, w);
    let ids: Vec<&str> = plan.tickets.iter().map(|t| t.id.as_str()).collect();
    let position = |id: &str| ids.iter().position(|x| *x == id);
    let meta = |p: &Plan, k: &str| p.metadata.get(k).cloned();
    match w
        .code
        .strip_prefix("convert.codeboost.")
        .unwrap_or_default()
    {
        "repo" => plan.repo.is_some(),
        "base" => plan.base != "main",
        "caps" => !plan.caps.is_empty(),
        "review" => plan.review.dry_passes != 1,
        "plan-gates" => !plan.gates.is_empty(),
        "items" => !(1..=30).contains(&plan.tickets.len()),
        "order" => plan.tickets.iter().enumerate().any(|(i, t)| {
            t.depends_on
                .iter()
                .any(|d| position(d).is_some_and(|k| k > i))
        }),
        "cycle" => !planwright_plan::dag::cycles(plan).is_empty(),
        "ids" => back.tickets.iter().map(|t| t.id.as_str()).ne(ids.clone()),
        "issue" => meta(plan, "issue") != meta(back, "issue"),
        "summary" => meta(plan, "summary") != meta(back, "summary"),
        "command" if t.is_none() => plan.gates.iter().any(|g| !quotable(g)),
        "metadata" if t.is_none() => plan_metadata_dropped(plan),
        code => t.is_some_and(|t| ticket_warning_is_true(plan, t, code)),
    }
}

/// Plan metadata codeboost has no place for: other keys, a revision that
/// is not a positive integer, questions that are not 0 to 10 texts of 1 to
/// 400 characters.
fn plan_metadata_dropped(plan: &Plan) -> bool {
    let m = &plan.metadata;
    let keys = ["issue", "revision", "summary", "questions"];
    let revision = m
        .get("revision")
        .is_some_and(|r| r.as_u64().is_none_or(|r| r == 0));
    let questions = m.get("questions").is_some_and(|q| {
        q.as_array().is_none_or(|q| {
            q.len() > 10
                || q.iter().any(|q| {
                    q.as_str()
                        .is_none_or(|q| !(1..=400).contains(&q.chars().count()))
                })
        })
    });
    m.keys().any(|k| !keys.contains(&k.as_str())) || revision || questions
}

/// Every id is `P<n>` (1 to 999, no leading zero) and unique.
fn codeboost_ids(plan: &Plan) -> bool {
    let ids: BTreeSet<&str> = plan.tickets.iter().map(|t| t.id.as_str()).collect();
    ids.len() == plan.tickets.len()
        && ids.iter().all(|id| {
            id.strip_prefix('P')
                .and_then(|n| n.parse::<u16>().ok().filter(|v| v.to_string() == n))
                .is_some_and(|n| (1..=999).contains(&n))
        })
}

/// The codes of the warnings codeboost must give for `plan`, except
/// `producer` and `glob`, which depend on which files survive.
fn codeboost_must_warn(plan: &Plan) -> BTreeSet<&'static str> {
    let mut must = BTreeSet::new();
    let m = &plan.metadata;
    let plan_level = [
        ("repo", plan.repo.is_some()),
        ("base", plan.base != "main"),
        ("caps", !plan.caps.is_empty()),
        ("review", plan.review.dry_passes != 1),
        ("plan-gates", !plan.gates.is_empty()),
        ("command", plan.gates.iter().any(|g| !quotable(g))),
        ("items", !(1..=30).contains(&plan.tickets.len())),
        (
            "issue",
            m.get("issue")
                .and_then(Value::as_u64)
                .is_none_or(|i| i == 0),
        ),
        (
            "summary",
            m.get("summary")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty),
        ),
        ("metadata", plan_metadata_dropped(plan)),
        ("ids", !codeboost_ids(plan)),
    ];
    must.extend(plan_level.iter().filter(|(_, w)| *w).map(|(c, _)| *c));
    let codes = [
        "title",
        "intent",
        "depends-on",
        "acceptance",
        "scope-op",
        "rails",
        "tier",
        "pool-hint",
        "model",
        "counterfactuals",
        "estimate-minutes",
        "command",
        "check",
        "files",
        "metadata",
    ];
    for t in &plan.tickets {
        must.extend(codes.iter().filter(|c| ticket_warning_is_true(plan, t, c)));
    }
    must
}

/// Whether the `cmd` grammar can say the gate's argv.
fn quotable(g: &Gate) -> bool {
    command::parse(&command::quote(&g.argv)).ok().as_ref() == Some(&g.argv)
}

fn overlaps(a: &str, b: &str) -> bool {
    let inside = |x: &str, y: &str| x.strip_prefix(y).is_some_and(|r| r.starts_with('/'));
    a == b || inside(a, b) || inside(b, a)
}

/// Tickets `t` depends on, directly or not.
fn ancestors<'a>(plan: &'a Plan, t: &'a Ticket) -> BTreeSet<&'a str> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&str> = t.depends_on.iter().map(String::as_str).collect();
    while let Some(id) = todo.pop() {
        if seen.insert(id) {
            todo.extend(
                plan.ticket(id)
                    .into_iter()
                    .flat_map(|u| u.depends_on.iter().map(String::as_str)),
            );
        }
    }
    seen
}

/// Another ticket, not among `t`'s dependencies, creates, deletes or
/// renames a path `t` touches.
fn missing_producer(plan: &Plan, t: &Ticket) -> bool {
    let before = ancestors(plan, t);
    let mine: Vec<&str> = t.scope.iter().flat_map(sides).collect();
    plan.tickets.iter().any(|u| {
        u.id != t.id
            && !before.contains(u.id.as_str())
            && u.scope
                .iter()
                .filter(|s| !matches!(s.op, ScopeOp::Any | ScopeOp::Modify))
                .flat_map(sides)
                .any(|p| mine.contains(&p))
    })
}

/// Two scope entries (or the two paths of one rename) name the same path,
/// or one inside the other.
fn self_overlap(t: &Ticket) -> bool {
    let all: Vec<&str> = t.scope.iter().flat_map(sides).collect();
    (0..all.len()).any(|i| (i + 1..all.len()).any(|k| overlaps(all[i], all[k])))
}

fn ticket_warning_is_true(plan: &Plan, t: &Ticket, code: &str) -> bool {
    match code {
        "title" => t.title.is_empty(),
        "intent" => t.body.chars().count() > 600,
        "depends-on" => t.depends_on.iter().any(|d| plan.ticket(d).is_none()),
        "acceptance" => {
            !plan.gates.iter().chain(&t.gates).any(quotable)
                && t.checks.iter().all(String::is_empty)
        }
        "scope-op" => t.scope.iter().any(|s| s.op == ScopeOp::Any),
        "glob" => t.scope.iter().any(|s| s.pattern.contains(['*', '?', '['])),
        "rails" => !t.rails.is_empty(),
        "tier" => t.tier.is_some(),
        "pool-hint" => t.pool_hint.is_some(),
        "model" => t.model.is_some(),
        "counterfactuals" => !t.counterfactuals.is_empty(),
        "estimate-minutes" => t.estimate_minutes.is_some(),
        "command" => t.gates.iter().any(|g| !quotable(g)),
        "check" => t.checks.iter().any(String::is_empty),
        "files" => self_overlap(t),
        "producer" => missing_producer(plan, t),
        "metadata" => t
            .metadata
            .keys()
            .any(|k| k != "changes" && k != "acceptance"),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn native_to_codeboost_to_native_keeps_what_codeboost_says(plan in codeboost_plan()) {
        let (back, warnings) = through(&plan, Format::Codeboost, &lenient());
        prop_assert!(warnings.is_empty(), "{:?}", warnings);
        prop_assert_eq!(native(back), plan);
    }

    #[test]
    fn codeboost_warns_for_what_it_changes_and_only_that(
        plan in prop_oneof![native_plan(), crowded_plan()]
    ) {
        let (back, warnings) = through(&plan, Format::Codeboost, &lenient());
        for w in &warnings {
            prop_assert!(codeboost_warning_is_true(&plan, &back, w), "{:?}", w);
        }
        let warned: BTreeSet<&str> = warnings
            .iter()
            .filter_map(|w| w.code.strip_prefix("convert.codeboost."))
            .collect();
        let must = codeboost_must_warn(&plan);
        prop_assert!(must.is_subset(&warned), "{:?} not in {:?}", must, warned);
    }
}

// -------------------------------------------------------------- standard_v1
