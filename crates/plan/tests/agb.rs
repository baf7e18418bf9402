//! Every agb rule: a plan breaking it is rejected with the right code and pointer.

use planwright_plan::routing::{Model, Routing};
use planwright_plan::{validate_text, Format, Options, Severity};
use serde_json::{json, Value};

fn example() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/agb/plan.example.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn findings_with(plan: &Value, options: &Options) -> Vec<(String, String, Severity)> {
    let text = serde_json::to_string_pretty(plan).unwrap();
    let report = validate_text("plan.json", text, options);
    report
        .diagnostics
        .into_iter()
        .map(|l| {
            (
                l.diagnostic.code,
                l.diagnostic.pointer,
                l.diagnostic.severity,
            )
        })
        .collect()
}

fn errors(plan: &Value) -> Vec<(String, String)> {
    findings_with(plan, &Options::default())
        .into_iter()
        .filter(|(_, _, s)| *s == Severity::Error)
        .map(|(c, p, _)| (c, p))
        .collect()
}

/// Applies `edit` to the example plan and expects exactly `want` as errors.
fn rejects(edit: impl FnOnce(&mut Value), want: &[(&str, &str)]) {
    let mut plan = example();
    edit(&mut plan);
    let got = errors(&plan);
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(c, p)| (c.to_string(), p.to_string()))
        .collect();
    assert_eq!(got, want, "plan: {plan:#}");
}

#[test]
fn the_seed_example_is_valid() {
    let plan = example();
    assert_eq!(findings_with(&plan, &Options::default()), vec![]);
    let report = validate_text("p.json", plan.to_string(), &Options::default());
    let ir = report.plan.unwrap();
    assert_eq!(ir.source_format, Format::Agb);
    assert_eq!(ir.ticket("T3").unwrap().depends_on, ["T1"]);
    assert_eq!(ir.ticket("T3").unwrap().rails, ["lib/math.mjs"]);
    assert_eq!(ir.gates[0].argv, ["npm", "test"]);
}

#[test]
fn plan_level_rules() {
    rejects(
        |p| drop(p.as_object_mut().unwrap().remove("repo")),
        &[("agb.plan.repo", "/repo")],
    );
    rejects(|p| p["repo"] = json!("  "), &[("agb.plan.repo", "/repo")]);
    rejects(
        |p| p["adlcBin"] = json!("/usr/bin/adlc"),
        &[("agb.plan.adlc-bin", "/adlcBin")],
    );
    rejects(|p| p["gate"] = json!({}), &[("agb.gate.missing", "/gate")]);
    rejects(
        |p| drop(p.as_object_mut().unwrap().remove("gate")),
        &[("agb.gate.missing", "/gate")],
    );
    rejects(
        |p| p["gate"]["test"] = json!(5),
        &[("agb.gate.type", "/gate/test")],
    );
    rejects(
        |p| p["gate"] = json!({"build": "make", "test": "npm run test:unit"}),
        &[("agb.gate.strict", "/gate/build")],
    );
    rejects(
        |p| p["tickets"] = json!([]),
        &[("agb.plan.tickets", "/tickets")],
    );
    rejects(
        |p| p["tickets"] = json!({}),
        &[("agb.plan.tickets", "/tickets")],
    );
}

#[test]
fn our_additions_at_plan_level() {
    rejects(|p| p["base"] = json!("a..b"), &[("agb.plan.base", "/base")]);
    rejects(|p| p["base"] = json!(3), &[("agb.plan.base", "/base")]);
    rejects(
        |p| p["caps"] = json!({"claude": 0, "gemini-pro": 2}),
        &[("agb.plan.caps", "/caps/claude")],
    );
    rejects(
        |p| p["caps"] = json!({"claude": 1.5}),
        &[("agb.plan.caps", "/caps/claude")],
    );
    rejects(|p| p["caps"] = json!([]), &[("agb.plan.caps", "/caps")]);
    rejects(
        |p| p["prosecution"] = json!({"dryPasses": 0}),
        &[("agb.plan.dry-passes", "/prosecution/dryPasses")],
    );
    rejects(
        |p| p["prosecution"] = json!({"dryPasses": "2"}),
        &[("agb.plan.dry-passes", "/prosecution/dryPasses")],
    );
    rejects(
        |p| p["prosecution"] = json!(true),
        &[("agb.plan.prosecution", "/prosecution")],
    );
}

#[test]
fn strict_gates_can_be_turned_off() {
    let mut plan = example();
    plan["gate"] = json!({"test": "cargo test --workspace"});
    let lax = Options {
        strict_gates: false,
        ..Options::default()
    };
    assert_eq!(findings_with(&plan, &lax), vec![]);
    let report = validate_text("p.json", plan.to_string(), &lax);
    assert_eq!(
        report.plan.unwrap().gates[0].argv,
        ["cargo", "test", "--workspace"]
    );
    plan["gate"] = json!({"test": "cargo 'test"});
    let got: Vec<String> = findings_with(&plan, &lax)
        .into_iter()
        .map(|f| f.0)
        .collect();
    assert_eq!(got, ["agb.gate.syntax"]);
}

#[test]
fn id_rules() {
    rejects(
        |p| p["tickets"][1]["id"] = json!("T1"),
        &[("agb.ticket.duplicate-id", "/tickets/1/id")],
    );
    rejects(
        |p| p["tickets"][1]["id"] = json!("t1"),
        &[("agb.ticket.case-collision", "/tickets/1/id")],
    );
    rejects(
        |p| p["tickets"][1]["id"] = json!("-x"),
        &[("agb.ticket.id", "/tickets/1/id")],
    );
    rejects(
        |p| p["tickets"][1]["id"] = json!(7),
        &[("agb.ticket.id", "/tickets/1/id")],
    );
    let huge = "x".repeat(70_000);
    for bad in ["a..b", "x.lock", "x.", huge.as_str()] {
        rejects(
            |p| p["tickets"][1]["id"] = json!(bad),
            &[("agb.ticket.id-ref", "/tickets/1/id")],
        );
    }
}

#[test]
fn edge_rules() {
    rejects(
        |p| p["tickets"][0]["edges"][0]["to"] = json!("T9"),
        &[("agb.edge.unknown-target", "/tickets/0/edges/0/to")],
    );
    rejects(
        |p| p["tickets"][0]["edges"][0]["to"] = json!("T1"),
        &[("agb.edge.self", "/tickets/0/edges/0/to")],
    );
    rejects(
        |p| p["tickets"][0]["edges"][0]["to"] = json!(" "),
        &[("agb.edge.to", "/tickets/0/edges/0/to")],
    );
    rejects(
        |p| p["tickets"][0]["edges"][0] = json!({}),
        &[("agb.edge.to", "/tickets/0/edges/0/to")],
    );
    rejects(
        |p| p["tickets"][0]["edges"] = json!("T3"),
        &[("agb.ticket.edges", "/tickets/0/edges")],
    );
}

#[test]
fn a_cycle_is_reported_once_with_its_ids() {
    let mut plan = example();
    plan["tickets"][2]["edges"] = json!([{"to": "T2"}]);
    plan["tickets"][1]["edges"] = json!([{"to": "T1"}]);
    let report = validate_text("p.json", plan.to_string(), &Options::default());
    let cycles: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.code == "agb.dag.cycle")
        .collect();
    assert_eq!(cycles.len(), 1);
    // The former code names the same diagnostic.
    assert!(cycles[0].diagnostic.is("agb.graph.cycle") && cycles[0].diagnostic.is("agb.dag.cycle"));
    assert!(!cycles[0].diagnostic.is("native.dag.cycle"));
    assert_eq!(cycles[0].diagnostic.pointer, "/tickets/0");
    assert!(
        cycles[0]
            .diagnostic
            .message
            .starts_with("ticket graph has a cycle: T1 -> ")
            && cycles[0].diagnostic.message.ends_with(" -> T1")
            && cycles[0].diagnostic.message.matches(" -> ").count() == 3,
        "{}",
        cycles[0].diagnostic.message
    );
}

#[test]
fn ticket_field_rules() {
    rejects(
        |p| p["tickets"][0]["body"] = json!("   "),
        &[("agb.ticket.body", "/tickets/0/body")],
    );
    rejects(
        |p| drop(p["tickets"][0].as_object_mut().unwrap().remove("body")),
        &[("agb.ticket.body", "/tickets/0/body")],
    );
    rejects(
        |p| p["tickets"][0]["scope"] = json!([]),
        &[("agb.ticket.scope", "/tickets/0/scope")],
    );
    rejects(
        |p| p["tickets"][0]["scope"] = json!("lib/"),
        &[("agb.ticket.scope", "/tickets/0/scope")],
    );
    rejects(
        |p| p["tickets"][0]["title"] = json!(1),
        &[("agb.ticket.title", "/tickets/0/title")],
    );
    rejects(
        |p| p["tickets"][2]["rails"] = json!("lib"),
        &[("agb.ticket.rails", "/tickets/2/rails")],
    );
    rejects(
        |p| p["tickets"][0]["tier"] = json!("huge"),
        &[("agb.ticket.tier", "/tickets/0/tier")],
    );
    rejects(
        |p| p["tickets"][0]["pool_hint"] = json!("openai"),
        &[("agb.ticket.pool-hint", "/tickets/0/pool_hint")],
    );
    rejects(
        |p| p["tickets"][0] = json!("T1"),
        &[("agb.ticket.type", "/tickets/0")],
    );
}

#[test]
fn pathspec_rules_apply_to_scope_and_rails() {
    let cases = [
        ("*", "agb.pathspec.too-broad"),
        ("/abs", "agb.pathspec.absolute"),
        ("C:/x", "agb.pathspec.absolute"),
        ("a/../b", "agb.pathspec.bad-segment"),
        ("a//b", "agb.pathspec.bad-segment"),
        ("a b", "agb.pathspec.charset"),
    ];
    for (spec, code) in cases {
        rejects(
            |p| p["tickets"][0]["scope"][1] = json!(spec),
            &[(code, "/tickets/0/scope/1")],
        );
        rejects(
            |p| p["tickets"][2]["rails"][0] = json!(spec),
            &[(code, "/tickets/2/rails/0")],
        );
    }
    rejects(
        |p| p["tickets"][0]["scope"][1] = json!(3),
        &[("agb.pathspec.type", "/tickets/0/scope/1")],
    );
    let mut plan = example();
    plan["tickets"][0]["scope"][1] = json!("test/");
    let report = validate_text("p.json", plan.to_string(), &Options::default());
    assert_eq!(report.plan.unwrap().tickets[0].scope[1].pattern, "test/**");
}

#[test]
fn model_candidates_follow_the_routing_table() {
    rejects(
        |p| p["tickets"][0]["pool_hint"] = json!("claude"),
        &[("agb.ticket.no-candidates", "/tickets/0/pool_hint")],
    );
    rejects(
        |p| p["tickets"][1]["pool_hint"] = json!("gpt-oss"),
        &[("agb.ticket.no-candidates", "/tickets/1/pool_hint")],
    );
    // A table that gives cheap tickets a Claude model accepts the same plan.
    let mut plan = example();
    plan["tickets"][0]["pool_hint"] = json!("claude");
    let model = |name: &str, family: &str, tiers: &[&str], pool: &str| Model {
        name: name.into(),
        family: family.into(),
        tiers: tiers.iter().map(|t| t.to_string()).collect(),
        pool: pool.into(),
    };
    let routing = Routing {
        models: vec![
            model("claude-haiku", "claude", &["cheap", "mid"], "claude"),
            model("gemini-flash", "gemini", &["cheap"], "gemini-flash"),
        ],
        ..Routing::default()
    };
    let options = Options {
        routing,
        ..Options::default()
    };
    let got: Vec<String> = findings_with(&plan, &options)
        .into_iter()
        .map(|f| f.0)
        .collect();
    assert_eq!(got, Vec::<String>::new());
}

#[test]
fn unknown_fields_and_duplicate_keys_are_warnings() {
    let mut plan = example();
    plan["tickets"][0]["depends_on"] = json!(["T2"]);
    let got = findings_with(&plan, &Options::default());
    assert_eq!(
        got,
        [(
            "agb.field.unknown".to_string(),
            "/tickets/0/depends_on".to_string(),
            Severity::Warning
        )]
    );
    let text = r#"{"repo": "/r", "repo": "/s", "gate": {"test": "npm test"}, "tickets": [{"id": "A", "title": "a", "body": "b", "scope": ["a"]}]}"#;
    let report = validate_text("p.json", text.into(), &Options::default());
    assert!(report.valid);
    assert_eq!(report.plan.unwrap().repo.as_deref(), Some("/s"));
    assert_eq!(
        report.diagnostics[0].diagnostic.code,
        "agb.json.duplicate-key"
    );
}

#[test]
fn adlc_ticket_rules_title_duration_and_the_archive_key() {
    let title = &[("agb.ticket.title", "/tickets/0/title")];
    rejects(
        |p| drop(p["tickets"][0].as_object_mut().unwrap().remove("title")),
        title,
    );
    rejects(|p| p["tickets"][0]["title"] = json!(""), title);
    rejects(|p| p["tickets"][0]["title"] = json!(7), title);
    rejects(|p| p["tickets"][0]["title"] = json!(null), title);
    let duration = &[("agb.ticket.duration", "/tickets/1/duration")];
    for bad in [json!(0), json!(-1), json!("2"), json!(null), json!([1])] {
        rejects(|p| p["tickets"][1]["duration"] = bad, duration);
    }
    rejects(
        |p| p["tickets"][2]["_adlcArchive"] = json!({"version": 1}),
        &[("agb.ticket.reserved", "/tickets/2/_adlcArchive")],
    );
    // adlc checks the length, not the content: a blank title passes.
    let mut plan = example();
    plan["tickets"][0]["title"] = json!(" ");
    plan["tickets"][1]["duration"] = json!(2.5);
    assert_eq!(findings_with(&plan, &Options::default()), vec![]);
}

#[test]
fn a_duration_survives_conversion_back_to_agb() {
    let mut plan = example();
    plan["tickets"][1]["duration"] = json!(2.5);
    let report = validate_text("p.json", plan.to_string(), &Options::default());
    let mut warnings = Vec::new();
    let back = planwright_plan::formats::emit(&report.plan.unwrap(), Format::Agb, &mut warnings);
    assert_eq!(back["tickets"][1]["duration"], json!(2.5));
    assert_eq!(warnings, vec![]);
}

#[test]
fn every_problem_is_reported_in_one_run() {
    let mut plan = example();
    plan["gate"] = json!({});
    plan["tickets"][0]["body"] = json!("");
    plan["tickets"][1]["scope"] = json!([]);
    plan["tickets"][2]["tier"] = json!("x");
    assert_eq!(errors(&plan).len(), 4);
}

#[test]
fn edges_become_dependencies_each_list_at_its_size() {
    let mut plan = example();
    let ticket = |id: &str, to: &[&str]| {
        let edges: Vec<Value> = to.iter().map(|t| json!({"to": t})).collect();
        json!({"id": id, "title": id, "body": "b", "scope": [format!("src/{id}.js")], "edges": edges})
    };
    // A repeated edge is one dependency; a repeated id names its first ticket.
    plan["tickets"] = json!([
        ticket("A", &["C", "B", "C"]),
        ticket("B", &["C"]),
        ticket("C", &[]),
        ticket("D", &["B", "Z"])
    ]);
    let text = serde_json::to_string(&plan).unwrap();
    let report = validate_text("plan.json", text, &Options::default());
    let unknown: Vec<_> = (report.diagnostics.iter())
        .map(|l| (l.diagnostic.code.as_str(), l.diagnostic.pointer.as_str()))
        .filter(|(c, _)| c.starts_with("agb.edge"))
        .collect();
    assert_eq!(
        unknown,
        [("agb.edge.unknown-target", "/tickets/3/edges/1/to")]
    );
    plan["tickets"].as_array_mut().unwrap().pop();
    let text = serde_json::to_string(&plan).unwrap();
    let report = validate_text("plan.json", text, &Options::default());
    let plan = report.plan.expect("valid");
    let deps: Vec<(&str, &[String], usize)> = (plan.tickets.iter())
        .map(|t| (t.id.as_str(), &t.depends_on[..], t.depends_on.capacity()))
        .collect();
    let none: &[String] = &[];
    assert_eq!(
        deps,
        [
            ("A", none, 0),
            ("B", &["A".to_string()][..], 1),
            ("C", &["A".to_string(), "B".to_string()][..], 3),
        ],
        "room for each edge naming the ticket (grown by pushes, a list had room for four)"
    );
}
