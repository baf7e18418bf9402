use super::*;
use planwright_engine::RunRow;

const PLAN: &str = r#"{"planwright": 1, "source_format": "native", "base": "main",
  "gates": [{"name": "t", "argv": ["true"]}],
  "tickets": [
    {"id": "A", "title": "parser", "body": "b", "scope": [{"pattern": "a", "op": "any"}]},
    {"id": "B", "title": "lexer <fast>", "body": "b", "scope": [{"pattern": "b", "op": "any"}]},
    {"id": "C", "title": "cli", "body": "b", "scope": [{"pattern": "c", "op": "any"}], "depends_on": ["A", "B"]}
  ]}"#;

const EVENTS: &str = r#"{"event":"run_started","run":"r1","base":"main","ticket_count":3,"continued":false,"at":"2026-11-29T22:00:00Z"}
{"event":"attempt_started","ticket":"A","attempt":1,"base_commit":"0123456789","at":"2026-11-29T22:00:01Z"}
{"event":"attempt_started","ticket":"B","attempt":1,"base_commit":"0123456789","at":"2026-11-29T22:00:01Z"}
{"event":"phase","ticket":"A","attempt":1,"phase":"gates","at":"2026-11-29T22:00:20Z"}
{"event":"agent_reported","ticket":"B","attempt":1,"outcome":"finished","usage":{"input_tokens":1200,"output_tokens":300,"cache_read_tokens":0,"cache_write_tokens":0},"cost_usd":0.05,"at":"2026-11-29T22:00:29Z"}
{"event":"attempt_rejected","ticket":"B","attempt":1,"retrying":true,"at":"2026-11-29T22:00:30Z","failure":{"kind":"scope_violation","message":"modifies `README.md`, which is outside the ticket's scope","evidence":"README.md"}}
{"event":"attempt_started","ticket":"B","attempt":2,"base_commit":"0123456789","at":"2026-11-29T22:00:31Z"}
{"event":"phase","ticket":"B","attempt":2,"phase":"agent","at":"2026-11-29T22:00:31Z"}
{"event":"pool_paused","ticket":"B","pool":"claude","wait_ms":60000,"reason":"rate limited","at":"2026-11-29T22:00:40Z"}
"#;

fn app(dir: &std::path::Path) -> App {
    let run = RunRow {
        id: "r1".into(),
        plan_path: "plan.json".into(),
        base: "main".into(),
        started_at: "2026-11-29T22:00:00Z".into(),
        finished_at: None,
        status: planwright_engine::RunStatus::Running,
        fresh: false,
    };
    let tickets: Vec<(String, String)> = [("A", "parser"), ("B", "lexer <fast>"), ("C", "cli")]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let mut view = RunView::new(&run, &tickets);
    let plan = planwright_plan::validate_text("plan.json", PLAN.into(), &Default::default());
    view.set_plan(&plan.plan.expect("the test plan is valid"));
    let files = RunFiles {
        dir: dir.to_path_buf(),
        events: dir.join("events.jsonl"),
    };
    std::fs::write(&files.events, EVENTS).unwrap();
    std::fs::create_dir_all(dir.join("A")).unwrap();
    std::fs::write(
        dir.join("A/attempt-1.agent.log"),
        "reading the spec\n\u{1b}[31mwriting src/parser.rs\u{1b}[0m\ndone\n",
    )
    .unwrap();
    let mut app = App::new(view, files);
    app.refresh().unwrap();
    app
}

fn now() -> i64 {
    planwright_view::parse_time("2026-11-29T22:00:45Z").unwrap()
}

#[test]
fn a_running_run_shows_waves_slots_counts_and_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    insta::assert_snapshot!(draw::to_text(&app, 100, 22, now()));
}

#[test]
fn keys_move_the_selection_and_open_the_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    assert!(app.key(KeyCode::Down, KeyModifiers::NONE));
    assert!(app.key(KeyCode::Enter, KeyModifiers::NONE));
    insta::assert_snapshot!(draw::to_text(&app, 100, 22, now()));
    assert!(app.key(KeyCode::Char('G'), KeyModifiers::NONE));
    assert_eq!(app.selected_ticket().unwrap().id, "C");
    assert!(!app.key(KeyCode::Char('q'), KeyModifiers::NONE));
    assert!(!app.key(KeyCode::Char('c'), KeyModifiers::CONTROL));
}

#[test]
fn new_events_are_folded_on_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join("events.jsonl"))
        .unwrap();
    use std::io::Write;
    // A whole line and half of the next: only the whole one counts.
    write!(
        log,
        "{{\"event\":\"merging\",\"ticket\":\"A\"}}\n{{\"event\":\"merged\",\"ti"
    )
    .unwrap();
    app.refresh().unwrap();
    assert_eq!(app.view.ticket("A").unwrap().state, TicketState::Merging);
    writeln!(log, "cket\":\"A\",\"commit\":\"abc\"}}").unwrap();
    app.refresh().unwrap();
    assert_eq!(app.view.ticket("A").unwrap().state, TicketState::Merged);
}

#[test]
fn sizes_parse() {
    assert_eq!(parse_size("100x30"), Ok((100, 30)));
    assert!(parse_size("10x3").is_err());
    assert!(parse_size("wide").is_err());
}
