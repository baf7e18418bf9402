//! Just enough of an HTTP/1.1 server's reading for the test servers on
//! loopback (the mock model provider, the fake forges): one request at a
//! time from a kept-alive connection, its body by length or in chunks,
//! reads that time out now and then so a stopped server lets go.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};

/// A request as it arrived.
#[derive(Debug, Clone)]
pub(crate) struct Incoming {
    pub method: String,
    /// The path with its query, as sent.
    pub target: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Incoming {
    /// A header's value, by its lower-case name.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The next request on a connection; `None` when it closed or the server
/// stopped.
pub(crate) fn read_request(
    reader: &mut BufReader<TcpStream>,
    stop: &AtomicBool,
) -> Option<Incoming> {
    let mut head = Vec::new();
    loop {
        let line = read_line(reader, stop)?;
        if line == "\r\n" || line == "\n" {
            if !head.is_empty() {
                break;
            }
        } else {
            head.push(line);
        }
    }
    let mut first = head.first()?.split_whitespace();
    let (method, target) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = head[1..]
        .iter()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        read_chunked(reader, stop)?
    } else {
        read_exact(reader, length, stop)?
    };
    Some(Incoming {
        method,
        target,
        headers,
        body,
    })
}

/// A read that timed out, while the server still runs: try again.
pub(crate) fn again(e: &std::io::Error, stop: &AtomicBool) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    ) && !stop.load(Ordering::SeqCst)
}

fn read_line(reader: &mut BufReader<TcpStream>, stop: &AtomicBool) -> Option<String> {
    let mut line = String::new();
    loop {
        match reader.read_line(&mut line) {
            Ok(0) => return None,
            Ok(_) if line.ends_with('\n') => return Some(line),
            Ok(_) => {}
            Err(e) if again(&e, stop) => {}
            Err(_) => return None,
        }
    }
}

fn read_exact(reader: &mut BufReader<TcpStream>, n: usize, stop: &AtomicBool) -> Option<Vec<u8>> {
    let mut buf = vec![0; n];
    let mut got = 0;
    while got < n {
        match reader.read(&mut buf[got..]) {
            Ok(0) => return None,
            Ok(k) => got += k,
            Err(e) if again(&e, stop) => {}
            Err(_) => return None,
        }
    }
    Some(buf)
}

fn read_chunked(reader: &mut BufReader<TcpStream>, stop: &AtomicBool) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let size_line = read_line(reader, stop)?;
        let size = usize::from_str_radix(size_line.trim().split(';').next()?, 16).ok()?;
        let chunk = read_exact(reader, size + 2, stop)?;
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}
