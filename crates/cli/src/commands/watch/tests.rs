use super::*;
use planwright_engine::RunRow;

const PLAN: &str = r#"{"planwright": 1, "source_format": "native", "base": "main",
  "gates": [{"name": "t", "argv": ["true"]}],
  "tickets": [
    {"id": "A", "title": "parser", "body": "b", "scope": [{"pattern": "a", "op": "any"}]},
    {"id": "B", "title": "lexer <fast>", "body": "b", "scope": [{"pattern": "b", "op": "any"}]},
    {"id": "C", "title": "cli", "body": "b", "scope": [{"pattern": "c", "op": "any"}], "depends_on": ["A", "B"]},
    {"id": "D", "title": "docs", "body": "b", "scope": [{"pattern": "d", "op": "any"}]}
  ]}"#;

const EVENTS: &str = r#"{"event":"run_started","run":"r1","base":"main","ticket_count":3,"continued":false,"at":"2026-11-29T22:00:00Z"}
{"event":"attempt_started","ticket":"A","attempt":1,"base_commit":"0123456789","at":"2026-11-29T22:00:01Z"}
{"event":"attempt_started","ticket":"B","attempt":1,"base_commit":"0123456789","at":"2026-11-29T22:00:01Z"}
{"event":"attempt_started","ticket":"D","attempt":1,"base_commit":"0123456789","at":"2026-11-29T22:00:02Z"}
{"event":"merging","ticket":"D","at":"2026-11-29T22:00:14Z"}
{"event":"merged","ticket":"D","commit":"abcdef0123456789","at":"2026-11-29T22:00:15Z"}
{"event":"phase","ticket":"A","attempt":1,"phase":"gates","at":"2026-11-29T22:00:20Z"}
{"event":"agent_reported","ticket":"B","attempt":1,"outcome":"finished","usage":{"input_tokens":1200,"output_tokens":300,"cache_read_tokens":0,"cache_write_tokens":0},"cost_usd":0.05,"at":"2026-11-29T22:00:29Z"}
{"event":"attempt_rejected","ticket":"B","attempt":1,"retrying":true,"at":"2026-11-29T22:00:30Z","failure":{"kind":"scope_violation","message":"modifies `README.md`, which is outside the ticket's scope","evidence":"README.md\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12"}}
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
    let tickets: Vec<(String, String)> = [
        ("A", "parser"),
        ("B", "lexer <fast>"),
        ("C", "cli"),
        ("D", "docs"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    let mut view = RunView::new(&run, &tickets);
    let plan = planwright_plan::validate_text("plan.json", PLAN.into(), &Default::default());
    view.set_plan(&plan.plan.expect("the test plan is valid"));
    let files = RunFiles {
        dir: dir.to_path_buf(),
        events: dir.join("events.jsonl"),
        lock: None,
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

/// Draws `app` at `width` x `height` and compares every row with `expected`.
#[track_caller]
fn assert_frame(app: &App, width: u16, height: u16, expected: &str) {
    let frame = draw::to_text(app, width, height, now());
    assert!(frame == expected, "the frame differs; it is:\n{frame}");
}

fn press(app: &mut App, code: KeyCode) {
    assert!(app.key(code, KeyModifiers::NONE), "{code:?} quits");
}

const LIST: &str = "\
planwright run r1 (running) onto main
1 merged 0 failed 0 blocked 2 running 1 pending · 1500 tokens · $0.05 · claude paused (rate limited)
┌ tickets ─────────────────────────────────────────────────┐┌ slots ───────────────────────────────┐
│  wave 1                                                  ││slot 1: A #1 gates 44.0s              │
│› ● A  running gates  #1  44.0s      parser               ││slot 2: B #2 agent 14.0s              │
│  ● B  running agent  #2  44.0s  ✗1  lexer <fast>         ││slot 3: idle                          │
│  ● D  merged         #1  12.0s      docs                 │└──────────────────────────────────────┘
│  wave 2                                                  │┌ A log ───────────────────────────────┐
│  ● C  pending                       cli                  ││reading the spec                      │
│                                                          ││writing src/parser.rs                 │
│                                                          ││done                                  │
│                                                          ││                                      │
│                                                          ││                                      │
│                                                          ││                                      │
│                                                          ││                                      │
│                                                          ││                                      │
│                                                          ││                                      │
│                                                          ││                                      │
│                                                          ││                                      │
└──────────────────────────────────────────────────────────┘└──────────────────────────────────────┘
↑/k up · ↓/j down · PgUp page up · PgDn/Space page down · Home/g first · End/G last · Enter/e open
q/Esc/^C quit
";

#[test]
fn the_list_shows_titles_times_rejections_slots_the_log_and_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    assert_frame(&app, 100, 22, LIST);
}

const EVIDENCE_TOP: &str = "\
planwright run r1 (running) onto main
1 merged 0 failed 0 blocked 2 running 1 pending · 1500 token
┌ B evidence: lexer <fast> ───────────────────── 1-7 of 16 ┐
│B: lexer <fast>                                           │
│attempt 1 rejected (29.0s): scope_violation: modifies     │
│`README.md`, which is outside the ticket's scope          │
│  README.md                                               │
│  line 2                                                  │
│  line 3                                                  │
│  line 4                                                  │
└──────────────────────────────────────────────────────────┘
↑/k up · ↓/j down · PgUp page up · PgDn/Space page down
Home/g top · End/G bottom · Tab/e evidence/log
Esc/Backspace back · q/^C quit
";
const EVIDENCE_DOWN: &str = "\
planwright run r1 (running) onto main
1 merged 0 failed 0 blocked 2 running 1 pending · 1500 token
┌ B evidence: lexer <fast> ───────────────────── 3-9 of 16 ┐
│`README.md`, which is outside the ticket's scope          │
│  README.md                                               │
│  line 2                                                  │
│  line 3                                                  │
│  line 4                                                  │
│  line 5                                                  │
│  line 6                                                  │
└──────────────────────────────────────────────────────────┘
↑/k up · ↓/j down · PgUp page up · PgDn/Space page down
Home/g top · End/G bottom · Tab/e evidence/log
Esc/Backspace back · q/^C quit
";
const EVIDENCE_BOTTOM: &str = "\
planwright run r1 (running) onto main
1 merged 0 failed 0 blocked 2 running 1 pending · 1500 token
┌ B evidence: lexer <fast> ─────────────────── 10-16 of 16 ┐
│  line 7                                                  │
│  line 8                                                  │
│  line 9                                                  │
│  line 10                                                 │
│  line 11                                                 │
│  line 12                                                 │
│attempt 2 running (14.0s)                                 │
└──────────────────────────────────────────────────────────┘
↑/k up · ↓/j down · PgUp page up · PgDn/Space page down
Home/g top · End/G bottom · Tab/e evidence/log
Esc/Backspace back · q/^C quit
";

#[test]
fn the_ticket_screen_scrolls_long_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert_frame(&app, 60, 14, EVIDENCE_TOP);
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Down);
    assert_frame(&app, 60, 14, EVIDENCE_DOWN);
    press(&mut app, KeyCode::Char('k'));
    press(&mut app, KeyCode::Up);
    assert_frame(&app, 60, 14, EVIDENCE_TOP);
    press(&mut app, KeyCode::PageDown);
    press(&mut app, KeyCode::PageDown);
    assert_frame(&app, 60, 14, EVIDENCE_BOTTOM);
    press(&mut app, KeyCode::Home);
    assert_frame(&app, 60, 14, EVIDENCE_TOP);
    press(&mut app, KeyCode::Char('G'));
    assert_frame(&app, 60, 14, EVIDENCE_BOTTOM);
    press(&mut app, KeyCode::PageUp);
    press(&mut app, KeyCode::PageUp);
    assert_frame(&app, 60, 14, EVIDENCE_TOP);
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Char('g'));
    assert_frame(&app, 60, 14, EVIDENCE_TOP);
}

const LOG_END: &str = "\
planwright run r1 (running) onto main
1 merged 0 failed 0 blocked 2 running 1 pending · 1500 token
┌ A log: parser ────────────────────────────── 24-30 of 30 ┐
│step 24                                                   │
│step 25                                                   │
│step 26                                                   │
│step 27                                                   │
│step 28                                                   │
│step 29                                                   │
│step 30                                                   │
└──────────────────────────────────────────────────────────┘
↑/k up · ↓/j down · PgUp page up · PgDn/Space page down
Home/g top · End/G bottom · Tab/e evidence/log
Esc/Backspace back · q/^C quit
";
const LOG_UP: &str = "\
planwright run r1 (running) onto main
1 merged 0 failed 0 blocked 2 running 1 pending · 1500 token
┌ A log: parser ────────────────────────────── 23-29 of 30 ┐
│step 23                                                   │
│step 24                                                   │
│step 25                                                   │
│step 26                                                   │
│step 27                                                   │
│step 28                                                   │
│step 29                                                   │
└──────────────────────────────────────────────────────────┘
↑/k up · ↓/j down · PgUp page up · PgDn/Space page down
Home/g top · End/G bottom · Tab/e evidence/log
Esc/Backspace back · q/^C quit
";
const LOG_KEPT: &str = "\
planwright run r1 (running) onto main
1 merged 0 failed 0 blocked 2 running 1 pending · 1500 token
┌ A log: parser ────────────────────────────── 23-29 of 31 ┐
│step 23                                                   │
│step 24                                                   │
│step 25                                                   │
│step 26                                                   │
│step 27                                                   │
│step 28                                                   │
│step 29                                                   │
└──────────────────────────────────────────────────────────┘
↑/k up · ↓/j down · PgUp page up · PgDn/Space page down
Home/g top · End/G bottom · Tab/e evidence/log
Esc/Backspace back · q/^C quit
";
const LOG_GROWN: &str = "\
planwright run r1 (running) onto main
1 merged 0 failed 0 blocked 2 running 1 pending · 1500 token
┌ A log: parser ────────────────────────────── 25-31 of 31 ┐
│step 25                                                   │
│step 26                                                   │
│step 27                                                   │
│step 28                                                   │
│step 29                                                   │
│step 30                                                   │
│step 31                                                   │
└──────────────────────────────────────────────────────────┘
↑/k up · ↓/j down · PgUp page up · PgDn/Space page down
Home/g top · End/G bottom · Tab/e evidence/log
Esc/Backspace back · q/^C quit
";

#[test]
fn the_ticket_screen_follows_a_growing_log_until_it_is_scrolled() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    let log = dir.path().join("A/attempt-1.agent.log");
    let lines: String = (1..=30).map(|n| format!("step {n}\n")).collect();
    std::fs::write(&log, lines).unwrap();
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Tab);
    assert_frame(&app, 60, 14, LOG_END);
    press(&mut app, KeyCode::Up);
    assert_frame(&app, 60, 14, LOG_UP);
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    writeln!(f, "step 31").unwrap();
    app.refresh().unwrap();
    // Scrolled up, it stays where it is; at the end, it follows.
    assert_frame(&app, 60, 14, LOG_KEPT);
    press(&mut app, KeyCode::End);
    assert_frame(&app, 60, 14, LOG_GROWN);
    press(&mut app, KeyCode::Char('e'));
    assert_frame(&app, 60, 14, EVIDENCE_A);
    press(&mut app, KeyCode::Backspace);
    assert!(draw::to_text(&app, 100, 22, now()).contains("› ● A"));
}

const EVIDENCE_A: &str = "\
planwright run r1 (running) onto main
1 merged 0 failed 0 blocked 2 running 1 pending · 1500 token
┌ A evidence: parser ──────────────────────────── 1-2 of 2 ┐
│A: parser                                                 │
│attempt 1 running (44.0s)                                 │
│                                                          │
│                                                          │
│                                                          │
│                                                          │
│                                                          │
└──────────────────────────────────────────────────────────┘
↑/k up · ↓/j down · PgUp page up · PgDn/Space page down
Home/g top · End/G bottom · Tab/e evidence/log
Esc/Backspace back · q/^C quit
";

#[test]
fn keys_outside_a_screens_table_do_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    for screen in ["list", "ticket"] {
        if screen == "ticket" {
            press(&mut app, KeyCode::Enter);
        }
        let before = draw::to_text(&app, 100, 22, now());
        for code in [
            KeyCode::Char('x'),
            KeyCode::Left,
            KeyCode::Char('c'),
            KeyCode::F(1),
        ] {
            press(&mut app, code);
            assert_eq!(
                draw::to_text(&app, 100, 22, now()),
                before,
                "{screen}: {code:?}"
            );
        }
    }
}

#[test]
fn q_and_ctrl_c_quit_every_screen_and_esc_quits_only_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    assert!(!app.key(KeyCode::Char('q'), KeyModifiers::NONE));
    assert!(!app.key(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(!app.key(KeyCode::Esc, KeyModifiers::NONE));
    press(&mut app, KeyCode::Enter);
    assert!(!app.key(KeyCode::Char('q'), KeyModifiers::NONE));
    assert!(!app.key(KeyCode::Char('c'), KeyModifiers::CONTROL));
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::List);
}

#[test]
fn the_list_pages_and_jumps() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    draw::to_text(&app, 100, 22, now());
    press(&mut app, KeyCode::PageDown);
    assert_eq!(app.selected_ticket().unwrap().id, "C");
    press(&mut app, KeyCode::PageUp);
    assert_eq!(app.selected_ticket().unwrap().id, "A");
    press(&mut app, KeyCode::Char('G'));
    assert_eq!(app.selected_ticket().unwrap().id, "C");
    press(&mut app, KeyCode::Char('g'));
    assert_eq!(app.selected_ticket().unwrap().id, "A");
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Char('k'));
    assert_eq!(app.selected_ticket().unwrap().id, "D");
}

#[test]
fn what_agents_wrote_cannot_move_the_cursor() {
    assert_eq!(
        printable("\u{1b}[1;31mred\u{1b}[0m\tx\u{7}\u{202e}y\r"),
        "red    xy"
    );
}

const ACTIVITY: &str = "\
planwright run r1 (running) onto main
1 merged 0 failed 0 blocked 2 running 1 pending · 1500 token
┌ D evidence: docs ────────────────────────────── 1-6 of 6 ┐
│D: docs                                                   │
│merged as abcdef0123456789                                │
│attempt 1 merged (12.0s)                                  │
│  · plan write the docs (in_progress)                     │
│  · tool_call Write docs.md (completed)                   │
│  · message wrote it                                      │
│                                                          │
└──────────────────────────────────────────────────────────┘
↑/k up · ↓/j down · PgUp page up · PgDn/Space page down
Home/g top · End/G bottom · Tab/e evidence/log
Esc/Backspace back · q/^C quit
";

/// What the agent did is listed under its attempt, and what it wrote
/// cannot move the cursor there either.
#[test]
fn the_ticket_screen_lists_the_agents_activity() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    let mut app = app(dir.path());
    let activity = [
        r#"{"event":"agent_activity","ticket":"D","attempt":1,"kind":"plan","text":"write the docs (in_progress)"}"#,
        r#"{"event":"agent_activity","ticket":"D","attempt":1,"kind":"tool_call","text":"Write docs.md","status":"completed"}"#,
        r#"{"event":"agent_activity","ticket":"D","attempt":1,"kind":"message","text":"\u001b[2Jwrote it"}"#,
    ];
    let mut text = std::fs::read_to_string(&events).unwrap();
    text.push_str(&(activity.join("\n") + "\n"));
    std::fs::write(&events, text).unwrap();
    app.refresh().unwrap();
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert_frame(&app, 60, 14, ACTIVITY);
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

const GONE: &str = "\
planwright run r1 (interrupted) onto main
1 merged 0 failed 0 blocked 2 interrupted 1 pending · 1500 tokens · $0.05 · claude paused (rate limi
┌ tickets ─────────────────────────────────────────────────┐┌ slots ───────────────────────────────┐
│  wave 1                                                  ││slot 1: idle                          │
│› ● A  interrupted  #1  39.0s      parser                 ││slot 2: idle                          │
│  ● B  interrupted  #2  39.0s  ✗1  lexer <fast>           ││slot 3: idle                          │
│  ● D  merged       #1  12.0s      docs                   │└──────────────────────────────────────┘
│  wave 2                                                  │┌ A log ───────────────────────────────┐
│  ● C  pending                     cli                    ││reading the spec                      │
│                                                          ││writing src/parser.rs                 │
│                                                          ││done                                  │
└──────────────────────────────────────────────────────────┘└──────────────────────────────────────┘
↑/k up · ↓/j down · PgUp page up · PgDn/Space page down · Home/g first · End/G last · Enter/e open
q/Esc/^C quit
";

#[test]
fn a_run_whose_process_is_gone_shows_its_tickets_interrupted_and_its_slots_idle() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    app.view.process_gone();
    assert_frame(&app, 100, 14, GONE);
}

/// A slot whose attempt runs on a worker names the worker's machine.
#[test]
fn a_slot_on_a_worker_names_its_machine() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    let started = r#"{"event":"attempt_started","ticket":"C","attempt":1,"base_commit":"0123456789","at":"2026-11-29T22:00:41Z","place":{"executor":"ssh","worker":"ssh b1","slot":3}}"#;
    let mut events = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
    events.push_str(started);
    events.push('\n');
    std::fs::write(dir.path().join("events.jsonl"), events).unwrap();
    app.refresh().unwrap();
    let frame = draw::to_text(&app, 120, 22, now());
    assert!(frame.contains("C #1 starting 4.0s on ssh b1"), "{frame}");
}
