//! A real git server for push tests: bare repositories behind
//! `git http-backend`, served over HTTP/1.1 on 127.0.0.1 by a small server
//! the test starts. It asks for Basic authentication with one token (as a
//! forge asks a credential helper), records every request, and lets a
//! test refuse pushes as branch protection does (a `pre-receive` hook) or
//! fail the next requests with a status of its choosing (a server in
//! trouble, [`GitHttp::fail_next`]).
//!
//! Each request is one connection (`Connection: close`): git's HTTP client
//! copes, and the server stays simple.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// One request the server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitRequest {
    /// `GET` or `POST`.
    pub method: String,
    /// The path and query, as sent.
    pub target: String,
    /// The user of a valid `Authorization` header, if one was sent.
    pub user: Option<String>,
    /// The status answered.
    pub status: u16,
}

/// The server; it stops when dropped.
pub struct GitHttp {
    root: PathBuf,
    port: u16,
    token: String,
    requests: Arc<Mutex<Vec<GitRequest>>>,
    /// The statuses the next requests get instead of an answer.
    faults: Arc<Mutex<Vec<u16>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl GitHttp {
    /// Serves the bare repositories under `root` (`root/owner/name.git`),
    /// accepting any user with the password `token`.
    pub fn start(root: &Path, token: &str) -> GitHttp {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let faults = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (root, token, requests, faults, stop) = (
                root.to_path_buf(),
                token.to_string(),
                requests.clone(),
                faults.clone(),
                stop.clone(),
            );
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let fault = {
                        let mut faults = faults.lock().unwrap();
                        (!faults.is_empty()).then(|| faults.remove(0))
                    };
                    let (root, token, requests) = (root.clone(), token.clone(), requests.clone());
                    std::thread::spawn(move || {
                        let answer = match fault {
                            Some(status) => refuse(&stream, status),
                            None => serve(&stream, &root, &token),
                        };
                        // Recorded before it is answered: a client that has
                        // its answer finds its request in `requests`.
                        if let Some((record, reply)) = answer {
                            requests.lock().unwrap().push(record);
                            let _ = (&stream).write_all(&reply);
                        }
                    });
                }
            })
        };
        GitHttp {
            root: root.to_path_buf(),
            port,
            token: token.to_string(),
            requests,
            faults,
            stop,
            thread: Some(thread),
        }
    }

    /// Makes the bare repository `owner/name` with the history of `from`'s
    /// branch `branch` pushed to it; returns its git directory.
    pub fn create(&self, repository: &str, from: &Path, branch: &str) -> PathBuf {
        let dir = self.root.join(format!("{repository}.git"));
        std::fs::create_dir_all(&dir).unwrap();
        crate::git(&dir, &["init", "-q", "--bare"]);
        crate::git(
            from,
            &[
                "push",
                "-q",
                &dir.display().to_string(),
                &format!("{branch}:{branch}"),
            ],
        );
        dir
    }

    /// The URL of `owner/name` (`http://127.0.0.1:PORT/owner/name.git`).
    pub fn url(&self, repository: &str) -> String {
        format!("http://127.0.0.1:{}/{repository}.git", self.port)
    }

    /// The token the server accepts.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Every request answered so far.
    pub fn requests(&self) -> Vec<GitRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// The next `times` requests are answered `status` (such as 503) and
    /// nothing else, as a server in trouble answers.
    pub fn fail_next(&self, times: usize, status: u16) {
        *self.faults.lock().unwrap() = vec![status; times];
    }

    /// Refuses every push to `refs/heads/BRANCH` of the repository at
    /// `git_dir`, as a forge's branch protection does.
    pub fn protect(git_dir: &Path, branch: &str) {
        let hook = git_dir.join("hooks/pre-receive");
        std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
        std::fs::write(
            &hook,
            format!(
                "#!/bin/sh\nwhile read old new ref; do\n  if [ \"$ref\" = \"refs/heads/{branch}\" ]; then\n    echo \"GH006: Protected branch update failed for $ref.\" >&2\n    exit 1\n  fi\ndone\n"
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The commit `refs/heads/BRANCH` points at in `git_dir`, if it exists.
    pub fn tip(git_dir: &Path, branch: &str) -> Option<String> {
        let out = Command::new("git")
            .arg(format!("--git-dir={}", git_dir.display()))
            .args(["rev-parse", "--verify", "--quiet"])
            .arg(format!("refs/heads/{branch}"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }
}

impl Drop for GitHttp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A request as read off the wire.
struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut words = line.split_whitespace();
    let (method, target) = (words.next()?.to_string(), words.next()?.to_string());
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let mut req = Request {
        method,
        target,
        headers,
        body: Vec::new(),
    };
    if let Some(n) = req
        .header("Content-Length")
        .and_then(|n| n.parse::<usize>().ok())
    {
        req.body.resize(n, 0);
        reader.read_exact(&mut req.body).ok()?;
    } else if req
        .header("Transfer-Encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            req.body.extend_from_slice(&chunk[..n]);
        }
    }
    Some(req)
}

/// The user of a Basic `Authorization` header whose password is `token`.
fn authorized(req: &Request, token: &str) -> Option<String> {
    let encoded = req.header("Authorization")?.strip_prefix("Basic ")?;
    let decoded = String::from_utf8(base64_decode(encoded.trim())?).ok()?;
    let (user, password) = decoded.split_once(':')?;
    (password == token).then(|| user.to_string())
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for b in text.bytes().filter(|b| *b != b'=') {
        let v = ALPHABET.iter().position(|a| *a == b)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// A request as recorded, and the bytes that answer it.
type Answer = (GitRequest, Vec<u8>);

/// Reads a request; its answer is `status` with an empty body.
fn refuse(stream: &TcpStream, status: u16) -> Option<Answer> {
    let req = read_request(stream)?;
    let reply =
        format!("HTTP/1.1 {status} Trouble\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    let record = GitRequest {
        method: req.method,
        target: req.target,
        user: None,
        status,
    };
    Some((record, reply.into_bytes()))
}

/// Reads a request; its answer is `git http-backend`'s, or 401 without
/// the token.
fn serve(stream: &TcpStream, root: &Path, token: &str) -> Option<Answer> {
    let req = read_request(stream)?;
    let user = authorized(&req, token);
    let mut record = GitRequest {
        method: req.method.clone(),
        target: req.target.clone(),
        user: user.clone(),
        status: 401,
    };
    let Some(user) = user else {
        let reply = b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"git\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        return Some((record, reply.to_vec()));
    };
    let (path, query) = req.target.split_once('?').unwrap_or((&req.target, ""));
    let mut cgi = Command::new("git");
    cgi.arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("REQUEST_METHOD", &req.method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("REMOTE_USER", &user)
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("CONTENT_LENGTH", req.body.len().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in &req.headers {
        let name = k.to_ascii_uppercase().replace('-', "_");
        match name.as_str() {
            "CONTENT_TYPE" => cgi.env("CONTENT_TYPE", v),
            "AUTHORIZATION" | "CONTENT_LENGTH" | "TRANSFER_ENCODING" => continue,
            _ => cgi.env(format!("HTTP_{name}"), v),
        };
    }
    let mut child = cgi.spawn().ok()?;
    let mut stdin = child.stdin.take()?;
    let body = req.body;
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&body);
    });
    let out = child.wait_with_output().ok()?;
    let _ = feeder.join();
    let split = out.stdout.windows(4).position(|w| w == b"\r\n\r\n");
    let (head, body) = match split {
        Some(i) => (&out.stdout[..i], &out.stdout[i + 4..]),
        None => {
            let i = out.stdout.windows(2).position(|w| w == b"\n\n")?;
            (&out.stdout[..i], &out.stdout[i + 2..])
        }
    };
    let head = String::from_utf8_lossy(head);
    let mut status = "200 OK".to_string();
    let mut response = Vec::new();
    for line in head.lines() {
        match line.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("Status") => status = v.trim().to_string(),
            Some(_) => response.extend_from_slice(format!("{line}\r\n").as_bytes()),
            None => {}
        }
    }
    record.status = status.split(' ').next()?.parse().ok()?;
    let mut reply = format!("HTTP/1.1 {status}\r\n").into_bytes();
    reply.extend_from_slice(&response);
    reply.extend_from_slice(
        format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    reply.extend_from_slice(body);
    Some((record, reply))
}
