//! What the proxy lets through: the allow entries and the name map, and
//! the address ranges a name may never resolve to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// One allow entry: a host (or every subdomain of one) and a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allow {
    /// The host in lower case, without a trailing dot or the `*.` prefix.
    pub host: String,
    /// `*.host`: every name below `host`, not `host` itself.
    pub subdomains: bool,
    /// The port.
    pub port: u16,
}

impl Allow {
    fn matches(&self, host: &str, port: u16) -> bool {
        if port != self.port {
            return false;
        }
        if self.subdomains {
            host.strip_suffix(self.host.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.'))
        } else {
            host == self.host
        }
    }
}

/// The proxy's rules for one child.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// Where the child may connect.
    pub allow: Vec<Allow>,
    /// Names mapped to an address, reached whatever the address is
    /// (`[sandbox] hosts`); the port asked for is not used.
    pub hosts: Vec<(String, SocketAddr)>,
}

/// What the proxy does with one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Connect to the first of these that answers.
    Connect(Vec<SocketAddr>),
    /// Refuse, and say why.
    Refuse(String),
}

impl Rules {
    /// Whether the child may reach `host:port`, and where that is. Names
    /// are resolved here, and an address of a [`restricted`] range is
    /// refused unless the host is that address itself, named by an allow
    /// entry, or a name of [`Rules::hosts`] (so no name, allowed or not,
    /// leads into the host's loopback or private network).
    pub fn decide(&self, host: &str, port: u16) -> Decision {
        let host = normalize(host);
        if let Some((_, addr)) = self.hosts.iter().find(|(name, _)| *name == host) {
            return Decision::Connect(vec![*addr]);
        }
        // An address is allowed only by an entry that names it, never by
        // a wildcard (`*.0.0.1` would otherwise match `127.0.0.1`).
        let ip = host.parse::<IpAddr>().ok();
        let named = |a: &&Allow| a.matches(&host, port) && (ip.is_none() || !a.subdomains);
        if !self.allow.iter().any(|a| named(&a)) {
            return Decision::Refuse("not in the allowlist".into());
        }
        if let Some(ip) = ip {
            return Decision::Connect(vec![SocketAddr::new(ip, port)]);
        }
        let addrs: Vec<SocketAddr> = match (host.as_str(), port).to_socket_addrs() {
            Ok(addrs) => addrs.collect(),
            Err(e) => return Decision::Refuse(format!("cannot resolve the name: {e}")),
        };
        let (open, closed): (Vec<SocketAddr>, Vec<SocketAddr>) = addrs
            .into_iter()
            .partition(|a| restricted(a.ip()).is_none());
        match (open.is_empty(), closed.first()) {
            (false, _) => Decision::Connect(open),
            (true, Some(addr)) => Decision::Refuse(format!(
                "the name resolves to {} ({}); name that address in `[sandbox] allow` or map the name in `[sandbox] hosts`",
                addr.ip(),
                restricted(addr.ip()).unwrap_or("restricted")
            )),
            (true, None) => Decision::Refuse("the name resolves to no address".into()),
        }
    }
}

impl Rules {
    /// The loopback addresses an allow entry names (`127.0.0.1:4873`): a
    /// child whose loopback is its own reaches these on planwright's.
    pub fn loopback(&self) -> Vec<SocketAddr> {
        let named = self.allow.iter().filter(|a| !a.subdomains);
        let addrs = named.filter_map(|a| {
            let ip = normalize(&a.host).parse::<IpAddr>().ok()?;
            ip.is_loopback().then(|| SocketAddr::new(ip, a.port))
        });
        let mut out: Vec<SocketAddr> = Vec::new();
        for addr in addrs {
            if !out.contains(&addr) {
                out.push(addr);
            }
        }
        out
    }
}

/// A host as compared: lower case, no trailing dot, no IPv6 brackets.
fn normalize(host: &str) -> String {
    let host = host.trim_end_matches('.');
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.to_ascii_lowercase()
}

/// The range `ip` is in, when it is one a name may not lead to: the
/// host's own, a private network's, or the cloud's metadata service.
pub fn restricted(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => restricted_v4(ip),
        IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => restricted_v4(v4),
            None => restricted_v6(ip),
        },
    }
}

fn restricted_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) {
        Some("cloud metadata")
    } else if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared address space (CGNAT)")
    } else if a == 0 || ip.is_broadcast() || ip.is_multicast() {
        Some("not a unicast address")
    } else {
        None
    }
}

fn restricted_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        Some("cloud metadata")
    } else if ip.is_loopback() {
        Some("loopback")
    } else if first & 0xfe00 == 0xfc00 {
        Some("private (unique local)")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if ip.is_unspecified() || ip.is_multicast() {
        Some("not a unicast address")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(host: &str, subdomains: bool, port: u16) -> Allow {
        Allow {
            host: host.into(),
            subdomains,
            port,
        }
    }

    #[test]
    fn entries_match_their_host_and_port_only() {
        let exact = allow("api.example.com", false, 443);
        assert!(exact.matches("api.example.com", 443));
        assert!(!exact.matches("api.example.com", 80));
        assert!(!exact.matches("x.api.example.com", 443));
        assert!(!exact.matches("example.com", 443));
        let wild = allow("example.com", true, 443);
        assert!(wild.matches("a.example.com", 443));
        assert!(wild.matches("a.b.example.com", 443));
        assert!(!wild.matches("example.com", 443));
        assert!(!wild.matches("badexample.com", 443));
        assert!(!wild.matches(".example.com", 443));
    }

    #[test]
    fn ranges_a_name_may_not_reach_are_named() {
        let class = |s: &str| restricted(s.parse().unwrap());
        assert_eq!(class("169.254.169.254"), Some("cloud metadata"));
        assert_eq!(class("fd00:ec2::254"), Some("cloud metadata"));
        assert_eq!(class("127.0.0.1"), Some("loopback"));
        assert_eq!(class("::1"), Some("loopback"));
        assert_eq!(class("::ffff:127.0.0.1"), Some("loopback"));
        for private in ["10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1"] {
            assert_eq!(class(private), Some("private"), "{private}");
        }
        assert_eq!(class("fd12::1"), Some("private (unique local)"));
        assert_eq!(class("169.254.1.1"), Some("link-local"));
        assert_eq!(class("fe80::1"), Some("link-local"));
        assert_eq!(class("100.64.0.1"), Some("shared address space (CGNAT)"));
        assert_eq!(class("0.0.0.0"), Some("not a unicast address"));
        for public in ["8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1"] {
            assert_eq!(class(public), None, "{public}");
        }
    }

    #[test]
    fn decisions_follow_the_map_the_allowlist_and_the_ranges() {
        let mapped: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        let rules = Rules {
            allow: vec![
                allow("localhost", false, 80),
                allow("10.0.0.7", false, 8080),
                allow("0.0.1", true, 80),
            ],
            hosts: vec![("gateway.test".into(), mapped)],
        };
        assert_eq!(
            rules.decide("Gateway.Test.", 80),
            Decision::Connect(vec![mapped])
        );
        assert_eq!(
            rules.decide("10.0.0.7", 8080),
            Decision::Connect(vec!["10.0.0.7:8080".parse().unwrap()])
        );
        assert_eq!(
            rules.decide("other.test", 80),
            Decision::Refuse("not in the allowlist".into())
        );
        for (host, port) in [("127.0.0.1", 4000), ("127.0.0.1", 80)] {
            assert_eq!(
                rules.decide(host, port),
                Decision::Refuse("not in the allowlist".into()),
                "{host}:{port}"
            );
        }
        // An allowed name that resolves to loopback is still refused.
        match rules.decide("localhost", 80) {
            Decision::Refuse(why) => assert!(why.contains("loopback"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
