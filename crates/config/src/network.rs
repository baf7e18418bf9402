//! `[sandbox] agent_network`, `allow` and `hosts`: how agents and set-ups
//! reach the network, and the syntax of an allow entry.

use serde::{Deserialize, Serialize};
use std::fmt;

/// `[sandbox] agent_network`: how agents and set-ups reach the network.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentNetwork {
    /// Only through planwright's proxy, to the allowed hosts.
    #[default]
    Proxy,
    /// The host's network, as planwright's own.
    Open,
    /// Loopback alone.
    None,
}

/// One allow entry, `host:port` or `*.domain:port` (every name below
/// `domain`, not `domain` itself). An IPv6 address is written in
/// brackets (`[2001:db8::1]:443`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HostPort {
    /// The host (or domain) in lower case, without `*.` or brackets.
    pub host: String,
    /// Whether the entry is `*.domain`.
    pub subdomains: bool,
    /// The port.
    pub port: u16,
}

impl HostPort {
    /// Parses an allow entry; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<HostPort, String> {
        let bad = |why: &str| {
            format!("allow entry `{text}` {why} (write `host:port` or `*.domain:port`, such as `api.example.com:443`)")
        };
        let (host, port) = text.rsplit_once(':').ok_or_else(|| bad("names no port"))?;
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| bad("has no port from 1 to 65535"))?;
        let (host, subdomains) = match host.strip_prefix("*.") {
            Some(domain) => (domain, true),
            None => (host, false),
        };
        let host = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            Some(v6) if !subdomains && v6.parse::<std::net::Ipv6Addr>().is_ok() => v6,
            Some(_) => return Err(bad("has a bad IPv6 address")),
            None => {
                let name_ok = !host.is_empty()
                    && !host.starts_with('.')
                    && !host.ends_with('.')
                    && host
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-.".contains(&b));
                if !name_ok {
                    return Err(bad("has a bad host"));
                }
                host
            }
        };
        Ok(HostPort {
            host: host.to_ascii_lowercase(),
            subdomains,
            port,
        })
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let wild = if self.subdomains { "*." } else { "" };
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{wild}{}:{}", self.host, self.port)
        }
    }
}

impl TryFrom<String> for HostPort {
    type Error = String;
    fn try_from(text: String) -> Result<HostPort, String> {
        HostPort::parse(&text)
    }
}

impl From<HostPort> for String {
    fn from(entry: HostPort) -> String {
        entry.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_entries_parse_and_print_back() {
        for text in [
            "api.example.com:443",
            "*.example.com:443",
            "10.0.0.7:8080",
            "[::1]:80",
        ] {
            assert_eq!(HostPort::parse(text).unwrap().to_string(), text);
        }
        let wild = HostPort::parse("*.Example.COM:8443").unwrap();
        assert_eq!(
            (wild.host.as_str(), wild.subdomains, wild.port),
            ("example.com", true, 8443)
        );
        for bad in [
            "example.com",
            "example.com:0",
            "example.com:x",
            ":443",
            "*.:443",
            "a b:443",
            "*.[::1]:443",
            "::1:443",
            "[x]:443",
            "a/b:443",
            ".a:443",
        ] {
            assert!(HostPort::parse(bad).is_err(), "{bad}");
        }
    }
}
