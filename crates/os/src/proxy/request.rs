//! The one request a proxy connection starts with: `CONNECT host:port`,
//! or a plain HTTP request with an absolute URI (`GET http://host/path`).

/// The most a request's head may take (request line and headers).
pub(super) const MAX_HEAD: usize = 16 * 1024;

/// A parsed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Request {
    /// The host, as the client wrote it (brackets kept off an IPv6 address).
    pub host: String,
    /// The port (80 when a plain request's URI names none).
    pub port: u16,
    /// For a plain request, its head rewritten for the origin server: the
    /// path alone on the request line, no `Proxy-*` headers and
    /// `Connection: close` (so every request comes through the proxy
    /// again). `None` for `CONNECT`, whose tunnel carries what follows.
    pub forward: Option<Vec<u8>>,
}

/// Where the head ends (after its blank line), once `buf` holds it.
pub(super) fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Parses the head `head` (up to and including its blank line); the
/// error is said to the client.
pub(super) fn parse(head: &[u8]) -> Result<Request, String> {
    let text = std::str::from_utf8(head).map_err(|_| "the request is not text")?;
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("the request line is not `METHOD TARGET VERSION`".into());
    };
    if !version.starts_with("HTTP/1.") {
        return Err(format!("unsupported version `{version}`"));
    }
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(format!("bad method `{method}`"));
    }
    if method == "CONNECT" {
        let (host, port) = authority(target, None)?;
        return Ok(Request {
            host,
            port,
            forward: None,
        });
    }
    let rest = target
        .strip_prefix("http://")
        .ok_or("a plain request needs an absolute `http://` URI (use CONNECT for https)")?;
    let (auth, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    let (host, port) = authority(auth, Some(80))?;
    let mut forward = format!("{method} {path} {version}\r\n");
    for line in lines.take_while(|l| !l.is_empty()) {
        let name = line
            .split(':')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if name.starts_with("proxy-") || name == "connection" || name == "keep-alive" {
            continue;
        }
        forward.push_str(line);
        forward.push_str("\r\n");
    }
    forward.push_str("Connection: close\r\n\r\n");
    Ok(Request {
        host,
        port,
        forward: Some(forward.into_bytes()),
    })
}

/// `host:port` (or `[v6]:port`); without a port, `default` if any.
fn authority(text: &str, default: Option<u16>) -> Result<(String, u16), String> {
    let bad = || format!("bad host `{text}`");
    if text.contains('@') {
        return Err("credentials in the URI are not passed on".into());
    }
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(bad)?;
        (host, after.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b));
    if !host_ok {
        return Err(bad());
    }
    let port = match (port, default) {
        (Some(p), _) => p.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(bad)?,
        (None, Some(d)) => d,
        (None, None) => return Err(format!("`{text}` names no port")),
    };
    Ok((host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_plain_requests_parse() {
        let r = parse(b"CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(
            (r.host.as_str(), r.port, r.forward),
            ("api.example.com", 443, None)
        );
        let r = parse(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("::1", 8443));
        let r = parse(
            b"GET http://svc.test:8080/a?b=1 HTTP/1.1\r\nHost: svc.test:8080\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n",
        )
        .unwrap();
        assert_eq!((r.host.as_str(), r.port), ("svc.test", 8080));
        assert_eq!(
            String::from_utf8(r.forward.unwrap()).unwrap(),
            "GET /a?b=1 HTTP/1.1\r\nHost: svc.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let r = parse(b"GET http://svc.test?q HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!(r.port, 80);
        assert!(r.forward.unwrap().starts_with(b"GET /?q HTTP/1.0\r\n"));
    }

    #[test]
    fn malformed_requests_are_refused_with_a_reason() {
        let bad: &[&[u8]] = &[
            b"",
            b"\r\n\r\n",
            b"GET\r\n\r\n",
            b"GET / HTTP/1.1\r\n\r\n",
            b"GET https://x/ HTTP/1.1\r\n\r\n",
            b"GET http://user:pw@x/ HTTP/1.1\r\n\r\n",
            b"CONNECT x HTTP/1.1\r\n\r\n",
            b"CONNECT x:0 HTTP/1.1\r\n\r\n",
            b"CONNECT x:99999 HTTP/1.1\r\n\r\n",
            b"CONNECT :443 HTTP/1.1\r\n\r\n",
            b"CONNECT [::1 HTTP/1.1\r\n\r\n",
            b"CONNECT a b:443 HTTP/1.1\r\n\r\n",
            b"CONNECT x/y:443 HTTP/1.1\r\n\r\n",
            b"CONNECT x:443 HTTP/2\r\n\r\n",
            b"connect x:443 HTTP/1.1\r\n\r\n",
            b"\xff\xfe CONNECT x:443 HTTP/1.1\r\n\r\n",
        ];
        for head in bad {
            assert!(parse(head).is_err(), "{:?}", String::from_utf8_lossy(head));
        }
    }

    #[test]
    fn the_head_ends_at_its_blank_line() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nbody"), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n"), None);
    }
}
