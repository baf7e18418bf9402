//! How agents and set-ups reach the network (`[sandbox] agent_network`):
//! through planwright's proxy ([`planwright_os::proxy`]) to the hosts their
//! adapter needs, the package registries (set-ups) and `[sandbox] allow`,
//! plus the names `[sandbox] hosts` maps; or the host's network; or
//! loopback alone. Gates are not here: they keep loopback alone (or the
//! host's network with `[sandbox] gate_network`).

use planwright_config::{AgentNetwork, ContainSettings, HostPort};
use planwright_os::proxy::{Allow, Rules};
use planwright_os::sandbox::Policy;
use std::net::SocketAddr;
use std::sync::Arc;

/// The package registries a set-up reaches through the proxy by default
/// (npm, Yarn, PyPI, crates.io, the Go module proxy and checksum database,
/// RubyGems, Maven Central), as of December 2026.
pub(crate) const SETUP_HOSTS: &[&str] = &[
    "registry.npmjs.org:443",
    "registry.yarnpkg.com:443",
    "repo.yarnpkg.com:443",
    "pypi.org:443",
    "files.pythonhosted.org:443",
    "crates.io:443",
    "index.crates.io:443",
    "static.crates.io:443",
    "proxy.golang.org:443",
    "sum.golang.org:443",
    "rubygems.org:443",
    "index.rubygems.org:443",
    "repo.maven.apache.org:443",
    "repo1.maven.org:443",
];

/// `[sandbox] agent_network`, `allow` and `hosts`, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Network {
    mode: AgentNetwork,
    allow: Vec<HostPort>,
    hosts: Vec<(String, SocketAddr)>,
}

impl Network {
    /// What `[sandbox]` says.
    pub fn new(contain: &ContainSettings) -> Network {
        Network {
            mode: contain.agent_network,
            allow: contain.allow.clone(),
            hosts: contain.hosts.clone(),
        }
    }

    /// Sets how a child with the default allow entries `defaults` (an
    /// adapter's hosts, or [`SETUP_HOSTS`]) reaches the network.
    pub fn apply(&self, policy: &mut Policy, defaults: &[&str]) {
        policy.network = self.mode == AgentNetwork::Open;
        policy.proxy = (self.mode == AgentNetwork::Proxy).then(|| Arc::new(self.rules(defaults)));
    }

    fn rules(&self, defaults: &[&str]) -> Rules {
        let defaults = defaults.iter().filter_map(|d| HostPort::parse(d).ok());
        let mut allow: Vec<Allow> = Vec::new();
        for entry in defaults.chain(self.allow.iter().cloned()) {
            let entry = Allow {
                host: entry.host,
                subdomains: entry.subdomains,
                port: entry.port,
            };
            if !allow.contains(&entry) {
                allow.push(entry);
            }
        }
        Rules {
            allow,
            hosts: self.hosts.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_host_parses() {
        let lists = crate::agent::ADAPTERS
            .iter()
            .map(|a| (a.name, a.hosts))
            .chain([("set-up", SETUP_HOSTS)]);
        for (name, hosts) in lists {
            for host in hosts {
                assert!(HostPort::parse(host).is_ok(), "{name}: {host}");
            }
        }
    }

    #[test]
    fn the_mode_decides_network_and_proxy() {
        let mut contain = ContainSettings {
            allow: vec![HostPort::parse("*.example.com:443").unwrap()],
            ..ContainSettings::default()
        };
        let mut policy = Policy::default();
        Network::new(&contain).apply(&mut policy, &["api.example.org:443", "api.example.org:443"]);
        let rules = policy.proxy.clone().unwrap();
        assert!(!policy.network);
        assert_eq!(rules.allow.len(), 2);
        assert!(rules.allow[1].subdomains);
        contain.agent_network = AgentNetwork::Open;
        Network::new(&contain).apply(&mut policy, &[]);
        assert!(policy.network && policy.proxy.is_none());
        contain.agent_network = AgentNetwork::None;
        Network::new(&contain).apply(&mut policy, &[]);
        assert!(!policy.network && policy.proxy.is_none());
    }
}
