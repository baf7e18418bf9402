use super::http::{log_name_ok, percent_decode};
use super::*;
use planwright_engine::RunRow;
use std::io::{Read, Write};

fn serve_fixture(dir: &std::path::Path) -> (Arc<Server>, u16) {
    let run = RunRow {
        id: "r1".into(),
        plan_path: "plan.json".into(),
        base: "main".into(),
        started_at: "2026-11-29T22:00:00Z".into(),
        finished_at: None,
        status: planwright_engine::RunStatus::Running,
        fresh: false,
    };
    let view = RunView::new(&run, &[("A".into(), "a".into())]);
    std::fs::create_dir_all(dir.join("A")).unwrap();
    std::fs::write(dir.join("A/ticket.log"), "gate output\n").unwrap();
    std::fs::write(dir.join("secret.txt"), "no\n").unwrap();
    let files = RunFiles {
        dir: dir.to_path_buf(),
        events: dir.join("events.jsonl"),
        lock: None,
    };
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = Arc::new(server(view, files, "t0ken".into(), port));
    let s = Arc::clone(&server);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let s = Arc::clone(&s);
            std::thread::spawn(move || http::handle(&s, stream));
        }
    });
    (server, port)
}

fn get(port: u16, target: &str) -> String {
    get_as(port, target, &format!("127.0.0.1:{port}"))
}

fn get_as(port: u16, target: &str, host: &str) -> String {
    let mut s = std::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// DNS rebinding: a page of `evil.example` whose name now resolves to
/// 127.0.0.1 sends its own name as `Host`; with the right token it is
/// still refused. The names of the listening address are served.
#[test]
fn a_request_for_another_host_is_forbidden_even_with_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, port) = serve_fixture(dir.path());
    let target = "/?token=t0ken";
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_string(),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        format!("127.0.0.2:{port}"),
    ] {
        let r = get_as(port, target, &host);
        assert!(r.starts_with("HTTP/1.1 403 "), "{host}: {r}");
    }
    let mut s = std::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\n\r\n").unwrap();
    let mut no_host = String::new();
    s.read_to_string(&mut no_host).unwrap();
    assert!(no_host.starts_with("HTTP/1.1 403 "), "{no_host}");
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        let r = get_as(port, target, &host);
        assert!(r.starts_with("HTTP/1.1 200 "), "{host}: {r}");
    }
}

#[test]
fn requests_without_the_token_are_forbidden() {
    let dir = tempfile::tempdir().unwrap();
    let (_, port) = serve_fixture(dir.path());
    for target in [
        "/",
        "/?token=wrong",
        "/?token=t0ke",
        "/events",
        "/logs/A/ticket.log",
        "/?x=t0ken",
    ] {
        assert!(get(port, target).starts_with("HTTP/1.1 403 "), "{target}");
    }
    let ok = get(port, "/?token=t0ken");
    assert!(ok.starts_with("HTTP/1.1 200 OK"), "{ok}");
    assert!(ok.contains("const PLANWRIGHT_EVENTS = \"events?token=t0ken\""));
    assert!(ok.contains("Referrer-Policy: no-referrer"));
}

#[test]
fn logs_are_served_by_name_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let (_, port) = serve_fixture(dir.path());
    let log = get(port, "/logs/A/ticket.log?token=t0ken");
    assert!(
        log.starts_with("HTTP/1.1 200 ") && log.ends_with("gate output\n"),
        "{log}"
    );
    for target in [
        "/logs/A/../secret.txt",
        "/logs/%2E%2E/secret.txt",
        "/logs/B/ticket.log",
        "/logs/A/secret.txt",
        "/nope",
    ] {
        let r = get(port, &format!("{target}?token=t0ken"));
        assert!(r.starts_with("HTTP/1.1 404 "), "{target}: {r}");
    }
}

#[test]
fn the_event_stream_sends_the_report_then_each_change() {
    let dir = tempfile::tempdir().unwrap();
    let (server, port) = serve_fixture(dir.path());
    let mut s = std::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
    write!(
        s,
        "GET /events?token=t0ken HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )
    .unwrap();
    let mut reader = std::io::BufReader::new(s);
    let first = read_event(&mut reader);
    assert!(first.contains("data: <header>"), "{first}");
    let tail = Tail::new(dir.path().join("events.jsonl"));
    std::fs::write(
        dir.path().join("events.jsonl"),
        "{\"event\":\"merged\",\"ticket\":\"A\",\"commit\":\"abc\"}\n",
    )
    .unwrap();
    let follower = Arc::clone(&server);
    std::thread::spawn(move || follow(&follower, tail, Duration::from_millis(10)));
    let second = read_event(&mut reader);
    assert!(
        second.contains("data-count=\"merged\"><dt>merged</dt><dd>1</dd>"),
        "{second}"
    );
}

/// The next `report` event of an event stream (headers skipped).
fn read_event(reader: &mut impl std::io::BufRead) -> String {
    let mut event = String::new();
    loop {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the stream ended");
        if line == "\n" && event.contains("event: report") {
            return event;
        }
        if line.starts_with("event: ") {
            event.clear();
        }
        event.push_str(&line);
    }
}

#[test]
fn log_names_and_escapes() {
    for ok in ["ticket.log", "attempt-1.agent.log", "attempt-12.prompt.md"] {
        assert!(log_name_ok(ok), "{ok}");
    }
    for bad in [
        "attempt-.agent.log",
        "attempt-1.agent.log.x",
        "../x",
        "state.db",
    ] {
        assert!(!log_name_ok(bad), "{bad}");
    }
    assert_eq!(percent_decode("B%2F1").as_deref(), None);
    assert_eq!(percent_decode("a%20b").as_deref(), Some("a b"));
    assert_eq!(percent_decode("%2e%2e").as_deref(), None);
    assert_eq!(percent_decode("%zz"), None);
}
