//! `status`, `report --format html`, `watch` and `serve` on real runs of
//! the demo plan (engine API, scripted agent): the same counts everywhere,
//! and (with PLANWRIGHT_BROWSER_TESTS=1) the pages drawn in headless
//! Chromium.

mod webdriver;

use planwright_engine::agent;
use planwright_engine::process::Cancel;
use planwright_testkit::{text, Cli};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::sync::Arc;
use webdriver::{wanted, Browser};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

struct Demo {
    tmp: tempfile::TempDir,
    cli: Cli,
}

impl Demo {
    /// The demo plan run to its end with `strikes` attempts per ticket,
    /// after `tweak` edited the plan's text.
    fn run(strikes: u32, tweak: impl FnOnce(String) -> String) -> Demo {
        let tmp = tempfile::tempdir().unwrap();
        let made = planwright_engine::prepare_demo(tmp.path()).unwrap();
        let text = tweak(std::fs::read_to_string(&made.plan).unwrap());
        std::fs::write(&made.plan, &text).unwrap();
        let plan = planwright_plan::validate_text("plan.json", text, &Default::default())
            .plan
            .expect("the demo plan stays valid");
        let agent =
            agent::from_name(&format!("scripted:{}", made.fixtures.display()), None).unwrap();
        let mut settings = made.settings();
        settings.strikes = strikes;
        let session = planwright_engine::prepare(
            &made.repo,
            plan,
            settings,
            Default::default(),
            &[],
            &agent::Agents::from(Arc::<dyn agent::Agent>::from(agent)),
        )
        .unwrap_or_else(|f| panic!("preflight failed: {:?}", f.checks));
        let executor = session.local_executor();
        planwright_engine::run(session, executor, vec![], &Cancel::default()).unwrap();
        let cli = Cli::with_home(BIN, &tmp.path().join("home"));
        Demo { tmp, cli }
    }

    fn root(&self) -> &Path {
        self.tmp.path()
    }

    fn repo(&self) -> PathBuf {
        self.tmp.path().join("repo")
    }

    /// `planwright ARGS` in the root, which must succeed.
    fn planwright(&self, args: &[&str]) -> Output {
        let out = self.cli.run(self.root(), args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// The run's event log.
    fn events(&self) -> PathBuf {
        planwright_testkit::run_dir(&self.repo()).join("events.jsonl")
    }
}

/// `planwright serve` in the background; killed when dropped.
struct Serve {
    child: Child,
    url: String,
    _stdout: BufReader<std::process::ChildStdout>,
}

impl Serve {
    fn start(cli: &Cli, repo: &Path) -> Serve {
        let mut child = cli
            .command(Path::new("."))
            .args(["serve", "--interval", "50", "--repo"])
            .arg(repo)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut first).unwrap();
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://127.0.0.1:"))
            .unwrap_or_else(|| panic!("no URL in {first:?}"))
            .to_string();
        Serve {
            child,
            url,
            _stdout: stdout,
        }
    }

    fn get(&self, path_and_query: &str) -> String {
        let rest = self.url.trim_start_matches("http://");
        let host = rest.split('/').next().unwrap();
        let mut s = std::net::TcpStream::connect(host).unwrap();
        write!(s, "GET {path_and_query} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    fn token(&self) -> &str {
        self.url.split("token=").nth(1).unwrap()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The five counts of an HTML page (`data-count` boxes).
fn html_counts(html: &str) -> [usize; 5] {
    ["merged", "failed", "blocked", "running", "pending"].map(|name| {
        let marker = format!("data-count=\"{name}\"><dt>{name}</dt><dd>");
        let at = html
            .find(&marker)
            .unwrap_or_else(|| panic!("no {name} count"))
            + marker.len();
        html[at..].split('<').next().unwrap().parse().unwrap()
    })
}

/// The numbers before each state name in `text`'s first line naming them all.
fn text_counts(text: &str) -> [usize; 5] {
    let line = text
        .lines()
        .find(|l| l.contains("merged") && l.contains("pending") && l.contains("blocked"))
        .unwrap_or_else(|| panic!("no counts in {text}"));
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == ',')
        .collect();
    ["merged", "failed", "blocked", "running", "pending"].map(|name| {
        let i = words.iter().position(|w| *w == name).unwrap();
        words[i - 1].parse().unwrap()
    })
}

#[test]
fn every_view_shows_the_same_counts() {
    // One strike: farewell's out-of-scope first attempt fails it.
    let demo = Demo::run(1, |p| p);
    let expected = [2, 1, 0, 0, 0];
    let status = text(&demo.planwright(&["status", "--repo", "repo"]).stdout);
    assert_eq!(text_counts(&status), expected, "{status}");
    let json: Value = serde_json::from_str(&text(
        &demo
            .planwright(&["status", "--repo", "repo", "--output", "json"])
            .stdout,
    ))
    .unwrap();
    let stored = |s: &str| {
        json["tickets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["state"] == s)
            .count()
    };
    assert_eq!(
        [stored("merged"), stored("failed"), stored("blocked")],
        [2, 1, 0]
    );
    assert_eq!(json["counts"]["merged"], 2);
    let html = text(
        &demo
            .planwright(&["report", "--repo", "repo", "--format", "html"])
            .stdout,
    );
    assert_eq!(html_counts(&html), expected);
    let frame = text(
        &demo
            .planwright(&["watch", "--repo", "repo", "--once", "120x30"])
            .stdout,
    );
    assert_eq!(text_counts(&frame), expected, "{frame}");
    let serve = Serve::start(&demo.cli, &demo.repo());
    let page = serve.get(&format!("/?token={}", serve.token()));
    assert_eq!(html_counts(&page), expected);
}

#[test]
fn status_and_report_json_count_in_count_fields_and_status_keeps_the_old_names() {
    let demo = Demo::run(1, |p| p);
    let json_of = |args: &[&str]| -> Value {
        serde_json::from_str(&text(&demo.planwright(args).stdout)).unwrap()
    };
    let status = json_of(&["status", "--repo", "repo", "--output", "json"]);
    let report = json_of(&["report", "--repo", "repo", "--to", "json"]);
    let states = ["merged", "failed", "blocked", "running", "pending"];
    for json in [&status, &report] {
        let counts = states.map(|s| json["run"][format!("{s}_count")].as_u64().unwrap());
        assert_eq!(counts, [2, 1, 0, 0, 0], "{json}");
        assert_eq!(json["paused_pools"], serde_json::json!([]), "{json}");
        assert_eq!(json["tickets"], status["tickets"]);
    }
    // The names status wrote before, for one release; the report never had them.
    for s in states {
        assert_eq!(
            status["counts"][s],
            status["run"][format!("{s}_count")],
            "{s}"
        );
    }
    assert_eq!(status["paused"], serde_json::json!({}));
    assert!(report.get("counts").is_none() && report.get("paused").is_none());
}

#[test]
fn watch_without_a_terminal_says_what_to_use_instead() {
    let demo = Demo::run(2, |p| p);
    let out = demo
        .cli
        .command(demo.root())
        .args(["watch", "--repo", "repo"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("takes over a terminal"), "{stderr}");
    assert!(stderr.contains("`watch --once 100x30`"), "{stderr}");
}

#[test]
fn the_html_report_draws_in_chromium() {
    if !wanted("the_html_report_draws_in_chromium") {
        return;
    }
    let hostile = "<script>document.title='owned'</script> greeting";
    let demo = Demo::run(2, |p| {
        p.replace("\"greeting function\"", &format!("{hostile:?}"))
    });
    let html = text(
        &demo
            .planwright(&["report", "--repo", "repo", "--format", "html"])
            .stdout,
    );
    let file = demo.root().join("report.html");
    std::fs::write(&file, &html).unwrap();
    let browser = Browser::start();
    browser.goto(&format!("file://{}", file.display()));
    let facts = browser.eval(
        "const drawn = (sel) => Array.from(document.querySelectorAll(sel)).filter(e => e.getBBox().width > 0).length;
         return {nodes: drawn('svg.dag .node'), edges: drawn('svg.dag .edge'), bars: drawn('svg.gantt .bar'),
                 labels: drawn('svg.gantt .bar text'),
                 scripts: document.scripts.length, fetched: performance.getEntriesByType('resource').length,
                 title: document.title, hostile: document.querySelector('#t-greet summary').textContent,
                 merged: document.querySelector('[data-count=merged] dd').textContent,
                 log: document.querySelector('#t-farewell .links a').getAttribute('href')};",
    );
    assert_eq!(facts["nodes"], 3, "{facts}");
    assert_eq!(facts["edges"], 1, "{facts}");
    assert_eq!(facts["bars"], 4, "{facts}");
    assert_eq!(facts["labels"], 4, "every bar has its label: {facts}");
    assert_eq!(facts["scripts"], 0, "{facts}");
    assert_eq!(facts["fetched"], 0, "{facts}");
    assert_eq!(facts["merged"], "3", "{facts}");
    assert!(
        facts["title"]
            .as_str()
            .unwrap()
            .starts_with("planwright run"),
        "{facts}"
    );
    assert!(
        facts["hostile"].as_str().unwrap().contains(hostile),
        "{facts}"
    );
    let log = demo.root().join(facts["log"].as_str().unwrap());
    assert!(
        log.is_file(),
        "the agent-log link leads to {}",
        log.display()
    );
    browser.screenshot("report-desktop");
    on_a_phone(&browser, "report-phone");
    assert_eq!(browser.console_errors(), Vec::<String>::new());
}

/// The page at 390 CSS pixels wide: nothing wider than the screen but
/// inside a box that scrolls (the DAG, the timeline and the table).
fn on_a_phone(browser: &Browser, screenshot: &str) {
    browser.viewport(390, 844);
    let facts = browser.eval(
        "const box = (sel) => { const e = document.querySelector(sel); return {scroll: e.scrollWidth, client: e.clientWidth}; };
         return {page: document.scrollingElement.scrollWidth, dag: box('#dag .scroll'),
                 table: box('#tickets .scroll')};",
    );
    browser.screenshot(screenshot);
    assert!(facts["page"].as_u64().unwrap() <= 390, "{facts}");
    for part in ["dag", "table"] {
        let client = facts[part]["client"].as_u64().unwrap();
        assert!(client > 0 && client <= 390, "{part}: {facts}");
    }
}

#[test]
fn the_live_page_follows_a_run_in_chromium() {
    if !wanted("the_live_page_follows_a_run_in_chromium") {
        return;
    }
    let demo = Demo::run(2, |p| p);
    // Replay the run's real event log from its first line on.
    let log = demo.events();
    let all = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = all.lines().collect();
    std::fs::write(&log, format!("{}\n", lines[0])).unwrap();
    let serve = Serve::start(&demo.cli, &demo.repo());
    let browser = Browser::start();
    browser.goto(&serve.url);
    let count =
        |name: &str| format!("return document.querySelector('[data-count={name}] dd').textContent");
    assert_eq!(browser.eval(&count("pending")), "3");
    let rejected = lines
        .iter()
        .position(|l| l.contains("attempt_rejected"))
        .unwrap();
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    for line in &lines[1..=rejected] {
        writeln!(file, "{line}").unwrap();
    }
    browser.wait_for(
        "the rejected attempt",
        "return document.querySelector('#t-farewell .failure') !== null",
    );
    let previous =
        browser.eval("return document.querySelector('#tickets td .previous').textContent");
    assert!(
        previous.as_str().unwrap().starts_with("attempt 1 failed: "),
        "{previous}"
    );
    for line in &lines[rejected + 1..] {
        writeln!(file, "{line}").unwrap();
    }
    browser.wait_for(
        "every ticket merged",
        &format!("{} === '3'", count("merged")),
    );
    browser.wait_for(
        "no live badge once the run finished",
        "return document.getElementById('live') === null",
    );
    on_a_phone(&browser, "live-phone");
    let bars = browser.eval("return document.querySelectorAll('svg.gantt .bar').length");
    assert_eq!(bars, 4);
    let updates = browser.eval("return Number(document.body.dataset.updates)");
    assert!(updates.as_u64().unwrap() >= 2, "{updates}");
    assert_eq!(browser.console_errors(), Vec::<String>::new());
    drop(serve);
}

#[test]
fn the_dag_is_drawn_from_the_runs_record_without_the_plan_file() {
    let demo = Demo::run(2, |p| p);
    let edges = |html: &str| html.matches("class=\"edge\"").count();
    let html = |dir: &Path, repo: &Path| {
        let out = demo.cli.run(
            dir,
            &[
                "report",
                "--repo",
                repo.to_str().unwrap(),
                "--format",
                "html",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let before = html(demo.root(), &demo.repo());
    assert!(
        edges(&before) > 0,
        "the demo plan has a dependency: {before}"
    );
    // The plan file gone, and the report asked from inside the repository:
    // a view that re-read the plan by the path typed at `run` would draw
    // every ticket in one wave with no edges.
    for entry in std::fs::read_dir(demo.root()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let after = html(&demo.repo(), Path::new("."));
    assert_eq!(edges(&after), edges(&before));
}

#[test]
fn every_link_of_a_report_written_into_another_folder_leads_to_a_file() {
    // One strike: farewell fails, and hello, after it, is blocked (no log).
    let demo = Demo::run(1, |p| {
        p.replace(
            "\"depends_on\": [\"greet\"]",
            "\"depends_on\": [\"greet\", \"farewell\"]",
        )
    });
    let folder = demo.root().join("out/deeper");
    std::fs::create_dir_all(&folder).unwrap();
    demo.planwright(&[
        "report",
        "--repo",
        "repo",
        "--to",
        "html",
        "-o",
        "out/deeper/report.html",
    ]);
    let html = std::fs::read_to_string(folder.join("report.html")).unwrap();
    assert!(
        html.contains(
            "<summary><span class=\"badge st-blocked\">blocked</span> <strong>hello</strong>"
        ),
        "{html}"
    );
    let hrefs: Vec<&str> = html
        .split(" href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|href| !href.starts_with('#') && !href.starts_with("data:"))
        .collect();
    assert!(
        hrefs.iter().any(|h| h.ends_with("agent.log")),
        "the report links its agent logs: {hrefs:?}"
    );
    for href in hrefs {
        let path = folder.join(href.replace("%20", " "));
        assert!(path.is_file(), "{href} leads to {}", path.display());
    }
}

#[test]
fn every_timeline_label_is_readable_in_chromium() {
    if !wanted("every_timeline_label_is_readable_in_chromium") {
        return;
    }
    // Two sub-second attempts squeezed between two long ones in one slot:
    // no room inside their bars, nor beside them.
    let run = planwright_engine::RunRow::running("r1", "plan.json", "main", "2026-11-30T22:00:00Z");
    let tickets = ["P", "Q", "R"].map(|id| (id.to_string(), id.to_lowercase()));
    let mut view = planwright_view::RunView::new(&run, &tickets);
    let log =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../view/tests/data/timeline-squeezed.jsonl");
    view.fold_text(&std::fs::read_to_string(log).unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("timeline.html");
    std::fs::write(
        &file,
        planwright_view::html_page(&view, &Default::default()),
    )
    .unwrap();
    let browser = Browser::start();
    browser.goto(&format!("file://{}", file.display()));
    // Each bar's label: its text, its box, and whether it is inside its bar.
    let labels = browser.eval(
        "const box = (e) => { const r = e.getBoundingClientRect(); return {l: r.left, r: r.right, t: r.top, b: r.bottom}; };
         const svg = box(document.querySelector('svg.gantt'));
         return {svg, bars: Array.from(document.querySelectorAll('svg.gantt .bar')).map(g => {
             const text = g.querySelector('text'), leader = g.querySelector('.leader');
             return {title: g.querySelector('title').textContent, rect: box(g.querySelector('rect')),
                     leader: leader ? box(leader) : null,
                     text: text ? text.textContent : null, box: text ? box(text) : null,
                     inside: text ? text.classList.contains('inside') : false};
         })};",
    );
    browser.eval("document.getElementById('timeline').scrollIntoView(); return null;");
    browser.screenshot("timeline-squeezed");
    let num = |v: &Value, k: &str| v[k].as_f64().unwrap();
    let apart = |a: &Value, b: &Value| {
        num(a, "r") <= num(b, "l")
            || num(b, "r") <= num(a, "l")
            || num(a, "b") <= num(b, "t")
            || num(b, "b") <= num(a, "t")
    };
    let svg = &labels["svg"];
    let bars = labels["bars"].as_array().unwrap();
    assert_eq!(bars.len(), 4, "{labels}");
    for (i, bar) in bars.iter().enumerate() {
        let name = bar["title"].as_str().unwrap().split(':').next().unwrap();
        let text = bar["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{name} has no label: {labels}"));
        let at = &bar["box"];
        assert!(num(at, "r") - num(at, "l") > 0.0, "{name}: {labels}");
        for side in ["l", "t"] {
            assert!(
                num(at, side) >= num(svg, side),
                "{name} leaves the chart: {labels}"
            );
        }
        for side in ["r", "b"] {
            assert!(
                num(at, side) <= num(svg, side),
                "{name} leaves the chart: {labels}"
            );
        }
        if bar["inside"] == true {
            continue;
        }
        // A label outside its bar is the whole label, and covers no bar
        // and no other label.
        assert_eq!(text, name, "{labels}");
        for (j, other) in bars.iter().enumerate().filter(|(j, _)| *j != i) {
            assert!(apart(at, &other["rect"]), "{name} covers a bar: {labels}");
            if !other["box"].is_null() {
                assert!(
                    apart(at, &other["box"]),
                    "{name} covers label {j}: {labels}"
                );
            }
            if !other["leader"].is_null() {
                assert!(
                    apart(at, &other["leader"]),
                    "a line crosses {name}: {labels}"
                );
            }
        }
    }
    assert!(
        bars.iter().filter(|b| b["inside"] == false).count() >= 2,
        "the squeezed bars are labelled outside: {labels}"
    );
    assert_eq!(browser.console_errors(), Vec::<String>::new());
}
