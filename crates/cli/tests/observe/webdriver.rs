//! A minimal WebDriver client (plain HTTP and JSON over std::net) driving
//! headless Chromium through chromedriver: enough to load a page, run a
//! script in it and read its console.
//!
//! Browser tests run when `PLANWRIGHT_BROWSER_TESTS=1` (set by `.ci/run`,
//! which installs Debian's `chromium` and `chromium-driver`); with it set,
//! a missing browser fails the test instead of skipping it.

use serde_json::{json, Value};
use std::io::{BufRead, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};

pub(crate) struct Browser {
    driver: Child,
    port: u16,
    session: String,
    _profile: tempfile::TempDir,
}

/// Whether browser tests were asked for; prints why not otherwise.
pub(crate) fn wanted(test: &str) -> bool {
    let on = std::env::var("PLANWRIGHT_BROWSER_TESTS").is_ok_and(|v| v == "1");
    if !on {
        eprintln!(
            "{test}: not run; set PLANWRIGHT_BROWSER_TESTS=1 (needs chromium and chromedriver)"
        );
    }
    on
}

fn find(program: &str, env: &str) -> String {
    if let Ok(p) = std::env::var(env) {
        return p;
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    });
    match found {
        Some(p) => p.display().to_string(),
        None => panic!(
            "PLANWRIGHT_BROWSER_TESTS=1 but `{program}` is not on PATH: install Debian's chromium and chromium-driver (or set {env})"
        ),
    }
}

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP exchange with chromedriver; the JSON body of its answer.
fn call(port: u16, method: &str, path: &str, body: Option<&Value>) -> Value {
    let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).expect("chromedriver listens");
    let body = body.map_or(String::new(), Value::to_string);
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // chromedriver may keep the connection open: read the head, then
    // exactly Content-Length bytes.
    let mut reader = std::io::BufReader::new(s);
    let mut length = 0;
    loop {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "{method} {path}: no answer"
        );
        if line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{method} {path}: {e}: {}", String::from_utf8_lossy(&body)))
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session.
    pub(crate) fn start() -> Browser {
        let chromium = find("chromium", "CHROMIUM");
        let chromedriver = find("chromedriver", "CHROMEDRIVER");
        let port = free_port();
        let profile = tempfile::tempdir().unwrap();
        // Chromium keeps files in its temporary folder (shared memory, with
        // `--disable-dev-shm-usage`) after it ends: one of the profile's,
        // removed with it, so that the tests leave nothing behind.
        let tmp = profile.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .env("TMPDIR", &tmp)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let mut b = Browser {
            driver,
            port,
            session: String::new(),
            _profile: profile,
        };
        b.wait_ready();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "goog:chromeOptions": {"binary": chromium, "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                format!("--user-data-dir={}", b._profile.path().display())]},
            "goog:loggingPrefs": {"browser": "ALL"}}}});
        let answer = call(port, "POST", "/session", Some(&caps));
        b.session = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_string();
        b
    }

    /// Waits for chromedriver to answer, however loaded the machine.
    fn wait_ready(&self) {
        planwright_testkit::wait_until("chromedriver listens", || {
            TcpStream::connect((Ipv4Addr::LOCALHOST, self.port)).is_ok()
        });
    }

    fn session(&self, method: &str, rest: &str, body: Option<&Value>) -> Value {
        let v = call(
            self.port,
            method,
            &format!("/session/{}{rest}", self.session),
            body,
        );
        if v["value"].get("error").is_some() {
            panic!("{method} {rest}: {}", v["value"]);
        }
        v["value"].clone()
    }

    /// Loads `url` (waits for its load event).
    pub(crate) fn goto(&self, url: &str) {
        self.session("POST", "/url", Some(&json!({"url": url})));
    }

    /// Runs `script` (a function body) in the page; its return value.
    pub(crate) fn eval(&self, script: &str) -> Value {
        self.session(
            "POST",
            "/execute/sync",
            Some(&json!({"script": script, "args": []})),
        )
    }

    /// Runs `script` until it returns true: the wait ends as soon as the
    /// page is as expected, however loaded the machine.
    pub(crate) fn wait_for(&self, what: &str, script: &str) {
        planwright_testkit::wait_until(&format!("the page shows {what}"), || {
            self.eval(script) == Value::Bool(true)
        });
    }

    /// Makes the page's viewport `width` by `height` CSS pixels, as a phone's.
    pub(crate) fn viewport(&self, width: u32, height: u32) {
        let params =
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": true});
        self.session(
            "POST",
            "/goog/cdp/execute",
            Some(&json!({"cmd": "Emulation.setDeviceMetricsOverride", "params": params})),
        );
    }

    /// Saves a PNG of the viewport as `name`.png in the test's target folder
    /// (for a person to look at); its path.
    pub(crate) fn screenshot(&self, name: &str) -> std::path::PathBuf {
        let data = self.session("GET", "/screenshot", None);
        let png = base64(data.as_str().expect("a base64 screenshot"));
        assert!(png.starts_with(b"\x89PNG"), "the screenshot is a PNG");
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        eprintln!("screenshot: {}", path.display());
        path
    }

    /// Console messages of level SEVERE (errors) since the last call.
    pub(crate) fn console_errors(&self) -> Vec<String> {
        let logs = self.session("POST", "/se/log", Some(&json!({"type": "browser"})));
        logs.as_array()
            .expect("a log list")
            .iter()
            .filter(|l| l["level"] == "SEVERE")
            .map(|l| l["message"].to_string())
            .collect()
    }
}

/// Decodes standard base64 (WebDriver's screenshots).
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    digits
        .chunks(4)
        .flat_map(|q| {
            let n = q.iter().fold(0u32, |n, &d| n << 6 | u32::from(d)) << (6 * (4 - q.len()));
            let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            bytes.into_iter().take(q.len() * 6 / 8)
        })
        .collect()
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            call(
                self.port,
                "DELETE",
                &format!("/session/{}", self.session),
                None,
            );
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
