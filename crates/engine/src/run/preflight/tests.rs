//! Preflight's own checks, without a repository.
use super::gates::no_gate_hint;
use super::scope::check_overlap;
use super::*;
use planwright_plan::model::{Format, ScopeEntry, ScopeOp, Ticket};
use planwright_plan::overlap::Overlap;
use std::collections::{HashMap, HashSet};

#[test]
fn the_no_gate_hint_names_the_projects_own_test_command() {
    let dir = tempfile::tempdir().unwrap();
    let generic = no_gate_hint(dir.path());
    assert!(
        !generic.contains("cargo") && !generic.contains("npm"),
        "{generic}"
    );
    std::fs::write(dir.path().join("pyproject.toml"), "").unwrap();
    let python = no_gate_hint(dir.path());
    assert!(
        python.contains(&format!("`{} \"pytest\"`", planwright_plan::Flag::Gate)),
        "{python}"
    );
    assert!(!python.contains("cargo"), "{python}");
    std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
    assert_eq!(
        no_gate_hint(dir.path()),
        format!("add `[gates] run = [[\"cargo\", \"test\"]]` to planwright.toml or pass `{} \"cargo test\"`", planwright_plan::Flag::Gate)
    );
}

/// A gate whose program is a relative path the repository lacks
/// (`.venv/bin/python`) is an error, unless `[workspace] setup` runs in
/// the gate checkout first and may make it.
#[test]
fn a_relative_gate_program_may_be_left_to_the_set_up_to_make() {
    let dir = tempfile::tempdir().unwrap();
    let mut plan = Plan::new(Format::Native, vec![Ticket::new("A", "b")]);
    let argv = [".venv/bin/python", "-m", "pytest"]
        .map(String::from)
        .to_vec();
    plan.gates = vec![planwright_plan::model::Gate {
        name: "test".into(),
        argv,
    }];
    let status = |setup: bool| {
        let mut out = Vec::new();
        super::gates::check_gates(dir.path(), &plan, &[], setup, &mut out);
        out.into_iter()
            .map(|c| (c.status.as_str(), c.message))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        status(false),
        [(
            "error",
            "gate program `.venv/bin/python` is not on PATH".to_string()
        )]
    );
    assert_eq!(
        status(true),
        [(
            "ok",
            "gate program `.venv/bin/python` is not in the repository: `[workspace] setup` is to make it".to_string()
        )]
    );
}

fn routed(id: &str, tier: &str, hint: Option<&str>, model: Option<&str>) -> Ticket {
    let mut t = Ticket::new(id, "b");
    t.tier = Some(tier.into());
    t.pool_hint = hint.map(String::from);
    t.model = model.map(String::from);
    t
}

fn routing_checks(
    plan: &Plan,
    agent: &str,
    families: &planwright_config::Families,
) -> Vec<(&'static str, String)> {
    let agent = crate::agent::from_name(agent, None).unwrap();
    let agents = Agents::from(std::sync::Arc::from(agent));
    let routing = planwright_config::Routing::default();
    let lanes = Lanes::of(plan, &routing, families, &agents);
    let mut out = Vec::new();
    check_routing(plan, &routing, families, &lanes, &mut out);
    out.into_iter()
        .map(|c| (c.status.as_str(), c.message))
        .collect()
}

#[test]
fn routing_gives_each_ticket_a_model_of_the_agents_family_and_says_so() {
    let plan = Plan::new(
        Format::Agb,
        vec![
            routed("T1", "mid", Some("claude"), None),
            routed("T2", "mid", Some("gemini"), None),
            routed("T3", "cheap", Some("gemini"), None),
            routed("T4", "mid", None, Some("gemini-3-flash")),
            Ticket::new("T5", "b"),
        ],
    );
    let families = planwright_config::Families::default();
    let seen = routing_checks(&plan, "claude", &families);
    assert_eq!(seen[0], ("ok", "T1 -> claude -> claude-sonnet-4-6".into()));
    assert_eq!(seen[1].0, "warning");
    assert!(
        seen[1]
            .1
            .starts_with("T2 -> claude -> claude-sonnet-4-6: its pool hint `gemini`"),
        "{}",
        seen[1].1
    );
    assert_eq!(seen[2].0, "warning");
    assert!(
        seen[2].1.starts_with("T3 -> claude -> claude-haiku-4-5: "),
        "{}",
        seen[2].1
    );
    assert_eq!(seen[3].0, "warning");
    assert!(
        seen[3].1.contains("model `gemini-3-flash` (family gemini)"),
        "{}",
        seen[3].1
    );
    assert_eq!(
        seen[4],
        ("ok", "T5 -> claude -> the CLI's default model".into())
    );
    let no_cheap = families.clone().with(&std::collections::BTreeMap::from([(
        "claude".to_string(),
        planwright_config::FamilyModels {
            mid: Some("claude-sonnet-4-6".into()),
            ..Default::default()
        },
    )]));
    let seen = routing_checks(&plan, "claude", &no_cheap);
    assert_eq!(seen[2].0, "error");
    assert!(seen[2].1.starts_with("ticket T3: "), "{}", seen[2].1);
    assert!(
        seen[2].1.contains("no claude model of tier `cheap`"),
        "{}",
        seen[2].1
    );
    let any = routing_checks(&plan, "opencode", &families);
    assert!(any.iter().all(|c| c.0 == "ok"), "{any:?}");
    assert_eq!(any[1].1, "T2 -> opencode -> gemini-3.1-pro-low");
}

#[test]
fn a_ticket_no_agent_serves_is_a_routing_error_naming_it() {
    let plan = Plan::new(Format::Agb, vec![routed("O", "mid", Some("gpt-oss"), None)]);
    let families = planwright_config::Families::default();
    let spec = planwright_config::AgentsSpec {
        run: None,
        by_family: vec![(
            "claude".into(),
            planwright_config::AgentSpec {
                name: "claude".into(),
                options: Default::default(),
            },
        )],
    };
    let agents = Agents::build(&spec).unwrap();
    let routing = planwright_config::Routing::default();
    let lanes = Lanes::of(&plan, &routing, &families, &agents);
    let mut out = Vec::new();
    check_routing(&plan, &routing, &families, &lanes, &mut out);
    assert_eq!(out[0].status, crate::model::CheckStatus::Error);
    assert!(
        out[0]
            .message
            .starts_with("ticket O: no agent of `[agents]`"),
        "{}",
        out[0].message
    );
}

fn ticket(id: &str, deps: &[&str], scope: ScopeEntry) -> Ticket {
    Ticket {
        scope: vec![scope],
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        ..Ticket::new(id, "b")
    }
}

#[test]
fn a_glob_an_ancestor_may_create_counts_as_existing() {
    let modify = |p: &str| ScopeEntry {
        pattern: p.into(),
        op: ScopeOp::Modify,
    };
    let plan = Plan::new(
        Format::Native,
        vec![
            ticket("A", &[], ScopeEntry::any("src/*.rs")),
            ticket("B", &["A"], modify("src/**/*.rs")),
            ticket("C", &["A"], modify("docs/*.md")),
        ],
    );
    let mut out = Vec::new();
    check_scope_ops(
        &plan,
        &planwright_plan::graph::TicketGraph::new(&plan),
        &HashSet::new(),
        &HashSet::new(),
        &HashMap::new(),
        &mut out,
    );
    let errors: Vec<&str> = out
        .iter()
        .filter(|c| c.status == crate::model::CheckStatus::Error)
        .map(|c| c.message.as_str())
        .collect();
    assert_eq!(
        errors,
        ["ticket C: `docs/*.md` is declared `modify`/`delete` but matches no file of the base"]
    );
}

/// A glob of an `any` entry that matches no file of the base is likely a
/// typo (`*.tsx` in a `.ts` project): a warning. Not for `create`, which is
/// meant to match nothing yet, nor for what an ancestor may create.
#[test]
fn a_scope_glob_matching_no_file_of_the_base_warns_but_for_create() {
    let entry = |p: &str, op| ScopeEntry {
        pattern: p.into(),
        op,
    };
    let plan = Plan::new(
        Format::Native,
        vec![
            ticket("A", &[], ScopeEntry::any("src/**/*.tsx")),
            ticket("B", &[], ScopeEntry::any("src/*.ts")),
            ticket("C", &[], entry("gen/*.ts", ScopeOp::Create)),
            ticket("D", &["C"], ScopeEntry::any("gen/**")),
            ticket("E", &[], ScopeEntry::any("docs/new.md")),
        ],
    );
    let base: HashSet<String> = ["src/a.ts".to_string()].into();
    let mut out = Vec::new();
    check_scope_ops(
        &plan,
        &planwright_plan::graph::TicketGraph::new(&plan),
        &base,
        &HashSet::new(),
        &HashMap::new(),
        &mut out,
    );
    let said: Vec<(crate::model::CheckStatus, &str)> =
        out.iter().map(|c| (c.status, c.message.as_str())).collect();
    assert_eq!(
        said,
        [(
            crate::model::CheckStatus::Warning,
            "ticket A: the scope glob `src/**/*.tsx` matches no file of the base"
        )]
    );
}

#[test]
fn a_known_forecast_gives_the_checks_a_fresh_one_does_and_skips_merged_tickets() {
    let plan = Plan::new(
        Format::Native,
        vec![
            ticket("A", &[], ScopeEntry::any("src/*.rs")),
            ticket("B", &[], ScopeEntry::any("src/lib.rs")),
            ticket("C", &[], ScopeEntry::any("src/**")),
        ],
    );
    let graph = TicketGraph::new(&plan);
    let messages = |known: Option<&[Overlap]>, outlook: &Outlook| {
        let mut out = Vec::new();
        check_overlap(&plan, &graph, known, outlook, &mut out);
        out.into_iter().map(|c| c.message).collect::<Vec<_>>()
    };
    let forecast = planwright_plan::overlap::forecast(&plan, &graph);
    let fresh = Outlook::default();
    assert_eq!(
        messages(None, &fresh),
        ["3 tickets may run at the same time and may change the same paths (`src/*.rs`, `src/lib.rs`, `src/**`): A, B, C"]
    );
    assert_eq!(messages(Some(&forecast), &fresh), messages(None, &fresh));
    let a_merged = Outlook {
        merged: vec!["A".into()],
        ..Outlook::default()
    };
    let left = messages(Some(&forecast), &a_merged);
    assert_eq!(left, messages(None, &a_merged));
    assert_eq!(
        left,
        ["B and C may run at the same time and both may change `src/*.rs` / `src/lib.rs` / `src/**`"]
    );
}

#[test]
fn unjudged_checks_are_named_as_the_plans_format_names_them() {
    let said = |format: Format, per_ticket: &[usize]| {
        let tickets = (per_ticket.iter().enumerate())
            .map(|(i, &n)| {
                let mut t = Ticket::new(format!("T{i}"), "b");
                t.checks = (0..n).map(|k| format!("check {k}")).collect();
                t
            })
            .collect();
        let plan = Plan::new(format, tickets);
        let review = planwright_config::ReviewSettings::default();
        let check = super::unjudged_checks(&plan, &review).expect("a warning");
        check.message.split(" will").next().unwrap().to_string()
    };
    assert_eq!(said(Format::StandardV1, &[1]), "1 acceptance criterion");
    assert_eq!(said(Format::StandardV1, &[1, 2]), "3 acceptance criteria");
    assert_eq!(said(Format::Codeboost, &[2]), "2 codeboost `check` items");
    assert_eq!(said(Format::Native, &[1]), "1 check");
    assert_eq!(said(Format::Native, &[2]), "2 checks");
}

/// A model routing gives a CLI that the price table does not know is a
/// `prices` warning naming its tickets and the fix; a priced one, or an
/// agent that reports no tokens, is none.
#[test]
fn a_routed_model_without_a_price_is_a_warning() {
    let plan = Plan::new(
        Format::Agb,
        vec![
            routed("T1", "mid", None, Some("gpt-9-mock")),
            routed("T2", "mid", None, Some("gpt-9-mock")),
            routed("T3", "mid", None, Some("gpt-5.4")),
        ],
    );
    let settings = planwright_config::RunSettings::new("plan.json");
    let warnings = |agent: &str, cmd: Option<&str>| {
        let agent = crate::agent::from_name(agent, cmd).unwrap();
        let agents = Agents::from(std::sync::Arc::from(agent));
        let lanes = Lanes::of(&plan, &settings.routing, &settings.families, &agents);
        let mut out = Vec::new();
        prices::check_prices(&plan, &settings, &lanes, &mut out);
        out.into_iter()
            .map(|c| (c.status, c.check, c.message, c.hint))
            .collect::<Vec<_>>()
    };
    let seen = warnings("codex", None);
    assert_eq!(seen.len(), 1, "{seen:?}");
    let (status, check, message, hint) = &seen[0];
    assert_eq!(
        (*status, *check),
        (
            crate::model::CheckStatus::Warning,
            crate::model::CheckName::Prices
        )
    );
    assert!(
        message.starts_with(
            "no price for model `gpt-9-mock` (tickets T1, T2): its attempts' cost is unknown"
        ),
        "{message}"
    );
    assert!(
        hint.as_deref()
            .unwrap_or_default()
            .contains("[prices.gpt-9-mock]"),
        "{hint:?}"
    );
    assert!(
        warnings("cmd", Some("true")).is_empty(),
        "a `cmd` agent reports no tokens"
    );
}
