//! Just enough HTTP/1.1 for `serve`: GET only, one request per connection,
//! the `Host` and the token checked before anything else is looked at.

use super::Server;
use planwright_view::html_page;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A request line and headers larger than this are refused.
const MAX_HEAD: usize = 16 * 1024;

/// How often an idle event stream gets a comment, so a dead browser is
/// noticed and proxies keep the connection.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Serves one connection.
pub(super) fn handle(server: &Server, stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Ok(read) = stream.try_clone() else { return };
    let mut out = stream;
    let Some(head) = read_head(BufReader::new(read)) else {
        let _ = respond(&mut out, 400, "text/plain", b"bad request\n");
        return;
    };
    let (method, target) = (head.method, head.target);
    if !host_ok(head.host.as_deref(), server.port) {
        let _ = respond(
            &mut out,
            403,
            "text/plain",
            b"forbidden: open the URL that `planwright serve` printed (127.0.0.1)\n",
        );
        return;
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    if !token_ok(query, &server.token) {
        let _ = respond(
            &mut out,
            403,
            "text/plain",
            b"forbidden: open the URL that `planwright serve` printed\n",
        );
        return;
    }
    if method != "GET" {
        let _ = respond(&mut out, 405, "text/plain", b"read-only\n");
        return;
    }
    let _ = match path {
        "/" => {
            let page = html_page(&server.current().view, &server.options());
            respond(&mut out, 200, "text/html; charset=utf-8", page.as_bytes())
        }
        "/events" => events(server, &mut out),
        p if p.starts_with("/logs/") => log(server, &mut out, &p["/logs/".len()..]),
        _ => respond(&mut out, 404, "text/plain", b"not found\n"),
    };
}

/// What `serve` reads of a request.
struct Head {
    method: String,
    target: String,
    /// The `Host` header's value, if there was one.
    host: Option<String>,
}

/// The request's line and `Host`; None when it is malformed.
fn read_head(mut reader: impl BufRead) -> Option<Head> {
    let mut first = String::new();
    let mut total = reader.read_line(&mut first).ok()?;
    let mut parts = first.split_whitespace();
    let (method, target) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut host = None;
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).ok()?;
        total += n;
        if n == 0 || total > MAX_HEAD {
            return None;
        }
        if line == "\r\n" || line == "\n" {
            return Some(Head {
                method,
                target,
                host,
            });
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("host") {
                host = Some(value.trim().to_string());
            }
        }
    }
}

/// Whether `host` names the address `serve` listens on: 127.0.0.1 or
/// `localhost`, with its port. Any other name reached it through DNS
/// rebinding (or a proxy), and is refused.
fn host_ok(host: Option<&str>, port: u16) -> bool {
    let Some((name, given)) = host.and_then(|h| h.rsplit_once(':')) else {
        return false;
    };
    let name_ok = name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost");
    name_ok && given == port.to_string()
}

/// Whether the query has `token=<token>`, compared without an early exit.
fn token_ok(query: &str, token: &str) -> bool {
    query.split('&').any(|kv| {
        let Some(given) = kv.strip_prefix("token=") else {
            return false;
        };
        given.len() == token.len()
            && given
                .bytes()
                .zip(token.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    })
}

fn respond(out: &mut TcpStream, code: u16, kind: &str, body: &[u8]) -> std::io::Result<()> {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        _ => "Method Not Allowed",
    };
    write!(
        out,
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n",
        body.len(),
        SECURITY_HEADERS
    )?;
    out.write_all(body)?;
    out.flush()
}

/// No referrer (the URL holds the token), nothing loaded from elsewhere.
const SECURITY_HEADERS: &str = "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n\
X-Content-Type-Options: nosniff\r\nContent-Security-Policy: default-src 'none'; \
style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:\r\n";

/// The event stream: the current rendering at once, then each new one.
fn events(server: &Server, out: &mut TcpStream) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n{SECURITY_HEADERS}Connection: close\r\n\r\n"
    )?;
    let mut current = server.current();
    loop {
        send(out, &current.body)?;
        loop {
            match server.wait_newer(current.version, KEEP_ALIVE) {
                Some(next) => {
                    current = next;
                    break;
                }
                None => {
                    out.write_all(b": keep-alive\n\n")?;
                    out.flush()?;
                }
            }
        }
    }
}

/// One `report` event; each line of the body is one `data:` line.
fn send(out: &mut TcpStream, body: &str) -> std::io::Result<()> {
    let mut msg = String::with_capacity(body.len() + 64);
    msg.push_str("event: report\n");
    for line in body.split('\n') {
        msg.push_str("data: ");
        msg.push_str(line.trim_end_matches('\r'));
        msg.push('\n');
    }
    msg.push('\n');
    out.write_all(msg.as_bytes())?;
    out.flush()
}

/// A ticket's log: `/logs/<ticket>/<file>` where the ticket is one of the
/// run's and the file one of the names the engine writes, so no request
/// reaches another file.
fn log(server: &Server, out: &mut TcpStream, rest: &str) -> std::io::Result<()> {
    let view = server.current().view;
    let found = rest.split_once('/').and_then(|(ticket, file)| {
        let ticket = percent_decode(ticket)?;
        view.ticket(&ticket)?;
        log_name_ok(file).then(|| server.files.dir.join(&ticket).join(file))
    });
    match found.and_then(|p| std::fs::read(p).ok()) {
        Some(bytes) => respond(out, 200, "text/plain; charset=utf-8", &bytes),
        None => respond(out, 404, "text/plain", b"no such log\n"),
    }
}

/// `ticket.log`, `attempt-<n>.agent.log` or `attempt-<n>.prompt.md`.
pub(super) fn log_name_ok(file: &str) -> bool {
    if file == "ticket.log" {
        return true;
    }
    let Some(rest) = file.strip_prefix("attempt-") else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && matches!(&rest[digits..], ".agent.log" | ".prompt.md")
}

/// Decodes `%XX` escapes; None for a malformed one or a path separator
/// (ticket ids may hold any character, but never reach outside the run).
pub(super) fn percent_decode(s: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(s.len());
    let mut it = s.bytes();
    while let Some(b) = it.next() {
        if b == b'%' {
            let hex = [it.next()?, it.next()?];
            bytes.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
        } else {
            bytes.push(b);
        }
    }
    let text = String::from_utf8(bytes).ok()?;
    (!text.contains('/') && !text.contains('\\') && text != ".." && text != ".").then_some(text)
}
