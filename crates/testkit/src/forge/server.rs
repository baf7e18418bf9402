//! A plain HTTP/1.1 server on loopback for the fake forges: a thread that
//! accepts, a thread per connection (clients keep connections alive), and
//! one handler that answers every request.

use serde_json::Value;
use std::io::{BufReader, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub(crate) use crate::http::{read_request, Incoming};

impl Incoming {
    /// The path without its query.
    pub(crate) fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    /// A query parameter, percent-decoded.
    pub(crate) fn query(&self, key: &str) -> Option<String> {
        let query = self.target.split_once('?')?.1;
        query
            .split('&')
            .filter_map(|p| p.split_once('=').or(Some((p, ""))))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| decode(v))
    }

    /// The body as JSON (`Null` when there is none or it is not JSON).
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// Percent-decodes (and reads `+` as a space, as query strings do).
pub(crate) fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An answer: status, headers, and a JSON body (or none).
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
    /// A plain-text body instead (a job's log).
    pub text: Option<String>,
    /// Close the connection without answering (a network failure).
    pub hang_up: bool,
}

impl Outgoing {
    pub(crate) fn json(status: u16, body: Value) -> Outgoing {
        Outgoing {
            status,
            headers: Vec::new(),
            body: Some(body),
            text: None,
            hang_up: false,
        }
    }

    pub(crate) fn text(status: u16, text: &str) -> Outgoing {
        Outgoing {
            status,
            headers: Vec::new(),
            body: None,
            text: Some(text.to_string()),
            hang_up: false,
        }
    }

    pub(crate) fn empty(status: u16) -> Outgoing {
        Outgoing {
            status,
            headers: Vec::new(),
            body: None,
            text: None,
            hang_up: false,
        }
    }

    pub(crate) fn header(mut self, name: &str, value: impl Into<String>) -> Outgoing {
        self.headers.push((name.to_string(), value.into()));
        self
    }

    fn write(&self, out: &mut TcpStream) -> std::io::Result<()> {
        let body = match (&self.body, &self.text) {
            (Some(v), _) => v.to_string(),
            (None, Some(t)) => t.clone(),
            (None, None) => String::new(),
        };
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        for (k, v) in &self.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if self.body.is_some() {
            head.push_str("content-type: application/json; charset=utf-8\r\n");
        } else if self.text.is_some() {
            head.push_str("content-type: text/plain; charset=utf-8\r\n");
        }
        head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
        // One write: a head and a body sent apart would wait on the
        // client's delayed acknowledgement.
        head.push_str(&body);
        out.write_all(head.as_bytes())?;
        out.flush()
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        410 => "Gone",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

/// What answers the requests.
pub(crate) type Handler = Arc<dyn Fn(&Incoming) -> Outgoing + Send + Sync>;

/// The running server; stops when dropped.
pub(crate) struct Server {
    pub port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    pub(super) fn start(handler: Handler) -> Server {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind loopback");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let port = listener.local_addr().expect("local address").port();
        let stop = Arc::new(AtomicBool::new(false));
        let st = stop.clone();
        let thread = std::thread::spawn(move || accept(listener, handler, st));
        Server {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn accept(listener: TcpListener, handler: Handler, stop: Arc<AtomicBool>) {
    let mut workers = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let (h, st) = (handler.clone(), stop.clone());
                workers.push(std::thread::spawn(move || serve(stream, &h, &st)));
            }
            // The listener polls so that a stopped server lets go.
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    for w in workers {
        let _ = w.join();
    }
}

fn serve(stream: TcpStream, handler: &Handler, stop: &AtomicBool) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_nodelay(true);
    // Reads time out now and then so that a stopped server lets go.
    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
    let Ok(clone) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(clone);
    let mut out = stream;
    while let Some(request) = read_request(&mut reader, stop) {
        // A fault in the fake is a 500 that says so, not a dropped
        // connection the client would retry.
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(&request)))
            .unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic");
                let message = format!("the fake forge failed: {what}");
                Outgoing::json(500, serde_json::json!({ "message": message }))
            });
        if answer.hang_up || answer.write(&mut out).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn queries_are_decoded() {
        assert_eq!(super::decode("o%3Ab%2Fc+d"), "o:b/c d");
        assert_eq!(super::decode("100%"), "100%");
    }
}
