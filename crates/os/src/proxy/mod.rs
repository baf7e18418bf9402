//! planwright's egress proxy: how a child in a network namespace of its
//! own (loopback alone) reaches the network, by name and only where its
//! [`Rules`] allow.
//!
//! The child's sandbox makes a TCP listener inside the child's namespace
//! (at [`ADDR`]) and hands it to planwright before the program starts (a
//! socket keeps the namespace it was made in); the child's environment
//! points `HTTPS_PROXY`, `HTTP_PROXY` and `ALL_PROXY` at it. The proxy
//! accepts there, reads one request (`CONNECT host:port`, or a plain HTTP
//! request with an absolute `http://` URI), decides ([`Rules::decide`]),
//! connects from planwright's own network and relays bytes. Every refusal
//! is one line in the child's log.
//!
//! It is bounded ([`MAX_CONNECTIONS`] at once, two threads each), answers
//! bad input with an HTTP error rather than a panic, and ends with the
//! child: dropping the [`Proxy`] shuts its listener and every connection.

mod request;
mod rules;

pub use rules::{restricted, Allow, Decision, Rules};

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Where the proxy listens in a child's own network namespace (nothing
/// else listens there before the program starts).
pub const ADDR: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 3128);

/// Connections served at once; one more is refused (and logged).
pub const MAX_CONNECTIONS: usize = 64;

/// How long a client may take to send its request's head.
const HEAD_WAIT: Duration = Duration::from_secs(60);

/// How long connecting to one address of the destination may take.
const CONNECT_WAIT: Duration = Duration::from_secs(15);

/// The variables that point a child's HTTP clients at the proxy.
pub const PROXY_VARS: &[&str] = &[
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
];

/// What a proxied child reaches without the proxy: its own loopback. In
/// its network namespace loopback is its own (never the host's), and a
/// CLI that serves itself there (`opencode acp` calls its own server on
/// `127.0.0.1:4096`) must not be sent to the proxy, which refuses it.
pub const NO_PROXY: &str = "localhost,127.0.0.1,::1";

/// Points `cmd`'s HTTP clients at a proxy at `addr`, except for their
/// loopback ([`NO_PROXY`]) when it is their own (`own_loopback`: a
/// network namespace of theirs); without one, the host's loopback goes
/// through the proxy too, with no exceptions.
pub(crate) fn set_env(cmd: &mut Command, addr: SocketAddr, own_loopback: bool) {
    let url = format!("http://{addr}");
    for name in PROXY_VARS {
        cmd.env(name, &url);
    }
    if own_loopback {
        cmd.env("NO_PROXY", NO_PROXY).env("no_proxy", NO_PROXY);
    } else {
        cmd.env_remove("NO_PROXY").env_remove("no_proxy");
    }
}

/// Where a child in a network namespace of its own listens for
/// planwright: the proxy's address first, then each loopback address the
/// rules allow ([`Rules::loopback`]), which planwright forwards to the
/// same address on its own loopback (a local registry or mirror named in
/// `[sandbox] allow`, reached directly even though [`NO_PROXY`] keeps
/// loopback away from the proxy).
pub fn listen_in_child(rules: &Rules) -> Vec<SocketAddr> {
    let proxy = SocketAddr::V4(ADDR);
    let forwards = rules.loopback().into_iter().filter(|at| *at != proxy);
    std::iter::once(proxy).chain(forwards).collect()
}

/// A running proxy; dropping it stops it.
#[derive(Debug)]
pub struct Proxy {
    listeners: Vec<TcpListener>,
    shared: Arc<Shared>,
    accepts: Vec<JoinHandle<()>>,
}

/// What a listener's connections are.
#[derive(Debug, Clone, Copy)]
enum Route {
    /// Requests to the proxy, decided by the rules.
    Proxy,
    /// Connections relayed as they are to this address.
    Forward(SocketAddr),
}

#[derive(Debug)]
struct Shared {
    rules: Arc<Rules>,
    log: Option<PathBuf>,
    open: Mutex<Open>,
}

/// The connections being served, so a stop can shut them.
#[derive(Debug, Default)]
struct Open {
    stopping: bool,
    next: u64,
    streams: HashMap<u64, Vec<TcpStream>>,
}

impl Proxy {
    /// Serves `listener` under `rules`, and relays each of `forwards` to
    /// its address, noting refusals in `log`.
    pub fn start(
        listener: TcpListener,
        forwards: Vec<(TcpListener, SocketAddr)>,
        rules: Arc<Rules>,
        log: Option<PathBuf>,
    ) -> io::Result<Proxy> {
        let shared = Arc::new(Shared {
            rules,
            log,
            open: Mutex::default(),
        });
        shared.note(&describe(&shared.rules, listener.local_addr()?));
        let mut proxy = Proxy {
            listeners: Vec::new(),
            shared,
            accepts: Vec::new(),
        };
        let routes = std::iter::once((listener, Route::Proxy))
            .chain(forwards.into_iter().map(|(l, to)| (l, Route::Forward(to))));
        for (listener, route) in routes {
            let accepting = listener.try_clone()?;
            proxy.listeners.push(listener);
            let serving = Arc::clone(&proxy.shared);
            let accept = std::thread::Builder::new()
                .name("planwright-proxy".into())
                .spawn(move || accept_loop(&accepting, route, &serving))?;
            proxy.accepts.push(accept);
        }
        Ok(proxy)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let streams = {
            let mut open = self.shared.lock();
            open.stopping = true;
            std::mem::take(&mut open.streams)
        };
        for stream in streams.values().flatten() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        // Wakes the accepts: a listening socket shut for reading fails it.
        for listener in &self.listeners {
            let _ = rustix::net::shutdown(listener, rustix::net::Shutdown::Read);
        }
        for accept in self.accepts.drain(..) {
            let _ = accept.join();
        }
    }
}

fn describe(rules: &Rules, at: SocketAddr) -> String {
    let allow: Vec<String> = rules
        .allow
        .iter()
        .map(|a| {
            format!(
                "{}{}:{}",
                if a.subdomains { "*." } else { "" },
                a.host,
                a.port
            )
        })
        .collect();
    let hosts: Vec<String> = rules
        .hosts
        .iter()
        .map(|(name, addr)| format!("{name} = {addr}"))
        .collect();
    format!(
        "network: through planwright's proxy at {at}; allow: {}; hosts: {}\n",
        or_none(&allow),
        or_none(&hosts)
    )
}

fn or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends `line` to the child's log; a log that cannot be written
    /// loses the line, never the connection.
    fn note(&self, line: &str) {
        if let Some(path) = &self.log {
            if let Ok(mut file) = crate::beneath::append(path) {
                let _ = file.write_all(line.as_bytes());
            }
        }
    }

    /// Registers a connection's client; `None` when stopping or full.
    fn admit(&self, client: &TcpStream) -> Option<u64> {
        let mut open = self.lock();
        if open.stopping || open.streams.len() >= MAX_CONNECTIONS {
            return None;
        }
        let id = open.next;
        open.next += 1;
        open.streams.insert(id, vec![client.try_clone().ok()?]);
        Some(id)
    }

    /// Registers a connection's upstream too; false when stopping.
    fn track(&self, id: u64, upstream: &TcpStream) -> bool {
        let mut open = self.lock();
        match (open.stopping, upstream.try_clone()) {
            (false, Ok(clone)) => {
                open.streams.entry(id).or_default().push(clone);
                true
            }
            _ => false,
        }
    }

    fn release(&self, id: u64) {
        self.lock().streams.remove(&id);
    }
}

fn accept_loop(listener: &TcpListener, route: Route, shared: &Arc<Shared>) {
    loop {
        let client = match listener.accept() {
            Ok((client, _)) => client,
            Err(_) if shared.lock().stopping => return,
            Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                shared.note(&format!("proxy: stopped accepting: {e}\n"));
                return;
            }
        };
        let Some(id) = shared.admit(&client) else {
            if !shared.lock().stopping {
                shared.note(&format!(
                    "proxy: refused a connection: {MAX_CONNECTIONS} are open already\n"
                ));
                let _ = reply(&client, "503 Service Unavailable", "too many connections");
            }
            continue;
        };
        let serving = Arc::clone(shared);
        let spawned = std::thread::Builder::new()
            .name("planwright-proxy-conn".into())
            .spawn(move || {
                match route {
                    Route::Proxy => serve(&client, id, &serving),
                    Route::Forward(to) => forward(&client, id, to, &serving),
                }
                serving.release(id);
            });
        if spawned.is_err() {
            shared.release(id);
        }
    }
}

/// Serves one connection: its request, the decision, the relay.
fn serve(client: &TcpStream, id: u64, shared: &Shared) {
    let Some((head, rest)) = read_head(client) else {
        return;
    };
    let req = match request::parse(&head) {
        Ok(req) => req,
        Err(why) => {
            shared.note(&format!("proxy: refused a malformed request: {why}\n"));
            let _ = reply(client, "400 Bad Request", &why);
            return;
        }
    };
    let target = format!("{}:{}", req.host, req.port);
    let addrs = match shared.rules.decide(&req.host, req.port) {
        Decision::Connect(addrs) => addrs,
        Decision::Refuse(why) => {
            shared.note(&format!("proxy: refused {target}: {why}\n"));
            let _ = reply(client, "403 Forbidden", &format!("refused {target}: {why}"));
            return;
        }
    };
    let upstream = match connect(&addrs) {
        Ok(upstream) => upstream,
        Err(e) => {
            shared.note(&format!("proxy: cannot reach {target}: {e}\n"));
            let _ = reply(
                client,
                "502 Bad Gateway",
                &format!("cannot reach {target}: {e}"),
            );
            return;
        }
    };
    if !shared.track(id, &upstream) {
        return;
    }
    let opened = match &req.forward {
        None => (&*client).write_all(b"HTTP/1.1 200 Connection established\r\n\r\n"),
        Some(head) => (&upstream).write_all(head),
    };
    if opened.is_ok() && (&upstream).write_all(&rest).is_ok() {
        let _ = client.set_read_timeout(None);
        relay(client, &upstream);
    }
}

/// Relays one connection as it is to `to`, an address the rules allow.
fn forward(client: &TcpStream, id: u64, to: SocketAddr, shared: &Shared) {
    match connect(&[to]) {
        Ok(upstream) if shared.track(id, &upstream) => relay(client, &upstream),
        Ok(_) => {}
        Err(e) => shared.note(&format!("proxy: cannot reach {to}: {e}\n")),
    }
}

/// Reads up to the end of the request's head: the head, and what came
/// after it. `None` when the client went away, was too slow, or sent a
/// head too long (answered).
fn read_head(client: &TcpStream) -> Option<(Vec<u8>, Vec<u8>)> {
    client.set_read_timeout(Some(HEAD_WAIT)).ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = request::head_end(&buf) {
            let rest = buf.split_off(end);
            return Some((buf, rest));
        }
        if buf.len() > request::MAX_HEAD {
            let _ = reply(
                client,
                "431 Request Header Fields Too Large",
                "the head is too long",
            );
            return None;
        }
        match (&*client).read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn connect(addrs: &[SocketAddr]) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for addr in addrs {
        match TcpStream::connect_timeout(addr, CONNECT_WAIT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Copies both ways until both ends are done (or the proxy stops).
fn relay(client: &TcpStream, upstream: &TcpStream) {
    let (Ok(down_from), Ok(down_to)) = (upstream.try_clone(), client.try_clone()) else {
        return;
    };
    let down = std::thread::Builder::new()
        .name("planwright-proxy-relay".into())
        .spawn(move || {
            let _ = io::copy(&mut &down_from, &mut &down_to);
            let _ = down_to.shutdown(Shutdown::Write);
        });
    let _ = io::copy(&mut &*client, &mut &*upstream);
    let _ = upstream.shutdown(Shutdown::Write);
    match down {
        Ok(down) => {
            let _ = down.join();
        }
        Err(_) => {
            let _ = upstream.shutdown(Shutdown::Both);
        }
    }
}

fn reply(client: &TcpStream, status: &str, why: &str) -> io::Result<()> {
    let body = format!("planwright proxy: {why}\n");
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    (&*client).write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(proxy_at: SocketAddr, request: &[u8]) -> String {
        let mut conn = TcpStream::connect(proxy_at).unwrap();
        conn.write_all(request).unwrap();
        let mut answer = String::new();
        conn.read_to_string(&mut answer).unwrap();
        answer
    }

    #[test]
    fn a_mapped_name_is_relayed_and_a_refusal_is_logged() {
        let origin = TcpListener::bind("127.0.0.1:0").unwrap();
        let origin_at = origin.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = origin.accept().unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while request::head_end(&head).is_none() {
                conn.read_exact(&mut byte).unwrap();
                head.push(byte[0]);
            }
            conn.write_all(b"HTTP/1.0 200 OK\r\n\r\nhello").unwrap();
            String::from_utf8(head).unwrap()
        });
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("agent.log");
        let rules = Rules {
            allow: vec![],
            hosts: vec![("svc.test".into(), origin_at)],
        };
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        let proxy = Proxy::start(listener, Vec::new(), Arc::new(rules), Some(log.clone())).unwrap();
        let answer = roundtrip(
            at,
            b"GET http://svc.test/x HTTP/1.1\r\nHost: svc.test\r\n\r\n",
        );
        assert!(answer.ends_with("hello"), "{answer}");
        assert!(server.join().unwrap().starts_with("GET /x HTTP/1.1\r\n"));
        let answer = roundtrip(at, b"CONNECT other.test:443 HTTP/1.1\r\n\r\n");
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        let answer = roundtrip(at, b"BREW coffee\r\n\r\n");
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        drop(proxy);
        let logged = std::fs::read_to_string(&log).unwrap();
        assert!(logged.contains("hosts: svc.test = 127.0.0.1:"), "{logged}");
        assert!(
            logged.contains("proxy: refused other.test:443: not in the allowlist\n"),
            "{logged}"
        );
        assert!(
            logged.contains("proxy: refused a malformed request"),
            "{logged}"
        );
    }

    #[test]
    fn dropping_the_proxy_ends_its_open_connections() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        let proxy = Proxy::start(listener, Vec::new(), Arc::default(), None).unwrap();
        // A client that never finishes its request.
        let mut idle = TcpStream::connect(at).unwrap();
        idle.write_all(b"CONNECT x").unwrap();
        drop(proxy);
        let mut rest = Vec::new();
        assert_eq!(idle.read_to_end(&mut rest).unwrap_or(0), 0);
    }
}
