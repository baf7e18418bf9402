//! Preflight's look at how the user set up an agent's CLI, for what would
//! make every attempt fail whatever the ticket: a model gateway at a
//! loopback address, which planwright's proxy refuses (the agent's
//! loopback is its own network namespace's), and a key variable the CLI's
//! configuration names but the agent is not given.

/// The variables that point a CLI at another endpoint than its provider's.
pub(crate) const BASE_URLS: &[&str] = &[
    "ANTHROPIC_BASE_URL",
    "GOOGLE_GEMINI_BASE_URL",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "COPILOT_PROVIDER_BASE_URL",
];

/// Something in the set-up that fails every attempt: what, and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupProblem {
    /// What is wrong, naming where it is set.
    pub message: String,
    /// The line that fixes it.
    pub hint: String,
}

/// The host of `url` (`http://127.0.0.1:8080/v1` -> `127.0.0.1`,
/// `http://[::1]:80` -> `::1`).
fn host(url: &str) -> Option<&str> {
    let rest = url.trim().split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split_once(']').map(|(h, _)| h);
    }
    Some(authority.split(':').next().unwrap_or(authority))
}

/// Whether `url` names a loopback address (`127.0.0.0/8`, `::1`,
/// `localhost`), or the unspecified one, which reaches the same.
pub fn is_loopback_url(url: &str) -> bool {
    let Some(host) = host(url) else {
        return false;
    };
    let host = host.to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback() || ip.is_unspecified(),
        Err(_) => false,
    }
}

/// The problem of each gateway (`(where, url)`) at a loopback address,
/// when the agent reaches the network through planwright's proxy.
pub fn loopback_gateways(gateways: &[(String, String)], proxied: bool) -> Vec<SetupProblem> {
    if !proxied {
        return Vec::new();
    }
    gateways
        .iter()
        .filter(|(_, url)| is_loopback_url(url))
        .map(|(place, url)| {
            let port = host(url)
                .and_then(|h| url.split(h).nth(1))
                .and_then(|rest| rest.trim_start_matches(']').strip_prefix(':'))
                .and_then(|rest| rest.split(['/', '?', '#']).next())
                .unwrap_or("PORT");
            SetupProblem {
                message: format!(
                    "{place} points the agent at `{url}`, a loopback address: inside the agent's sandbox loopback is its own, and planwright's proxy refuses it"
                ),
                hint: format!(
                    "give the gateway a name in planwright.toml, `[sandbox] hosts = {{ \"model-gateway.test\" = \"127.0.0.1:{port}\" }}`, and use `http://model-gateway.test:{port}` as the URL"
                ),
            }
        })
        .collect()
}

/// The problem of each key variable (`(where, name)`) the CLI's
/// configuration names that the agent is not given (`passed` says which
/// names it is).
pub fn missing_keys(keys: &[(String, String)], passed: &dyn Fn(&str) -> bool) -> Vec<SetupProblem> {
    keys.iter()
        .filter(|(_, name)| !passed(name))
        .map(|(place, name)| SetupProblem {
            message: format!(
                "{place} names the key variable `{name}`, which the agent is not given (its environment is an allowlist)"
            ),
            hint: format!("add it to planwright.toml: `[agent] env = [\"{name}\"]`"),
        })
        .collect()
}

/// Every problem of an agent that passes `allowed` names of planwright's
/// environment: the gateways of that environment and of the CLI's files
/// (`gateways`), and the key variables the CLI's files name (`keys`).
pub fn problems(
    allowed: &[String],
    gateways: Vec<(String, String)>,
    keys: &[(String, String)],
    proxied: bool,
) -> Vec<SetupProblem> {
    let mut all: Vec<(String, String)> = BASE_URLS
        .iter()
        .filter(|name| passes(allowed, name))
        .filter_map(|name| Some((format!("`{name}`"), std::env::var(name).ok()?)))
        .collect();
    all.extend(gateways);
    let mut found = loopback_gateways(&all, proxied);
    found.extend(missing_keys(keys, &|name| passes(allowed, name)));
    found
}

/// Whether `name` is among `allowed` (`NAME`, or `PREFIX_*`).
pub fn passes(allowed: &[String], name: &str) -> bool {
    allowed.iter().any(|a| match a.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => a == name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_urls_are_found_with_their_port() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434",
            "http://[::1]:9000/",
            "https://user:pw@127.0.0.2/x",
            "http://0.0.0.0:80",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "https://api.anthropic.com",
            "http://mock-model.test:4000",
            "nonsense",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
        let got = loopback_gateways(
            &[(
                "`ANTHROPIC_BASE_URL`".into(),
                "http://127.0.0.1:8080/v1".into(),
            )],
            true,
        );
        assert_eq!(got.len(), 1);
        assert!(got[0].hint.contains("\"127.0.0.1:8080\""), "{:?}", got[0]);
        assert!(
            got[0].hint.contains("http://model-gateway.test:8080"),
            "{:?}",
            got[0]
        );
        let open = loopback_gateways(&[("x".into(), "http://127.0.0.1:1".into())], false);
        assert!(
            open.is_empty(),
            "an open network reaches the host's loopback"
        );
    }

    #[test]
    fn a_key_not_passed_is_named_with_its_env_line() {
        let allowed = vec!["OPENAI_*".to_string(), "CODEX_*".to_string()];
        let passed = |n: &str| passes(&allowed, n);
        let keys = [
            ("`~/.codex/config.toml`".to_string(), "MOCK_KEY".to_string()),
            (
                "`~/.codex/config.toml`".to_string(),
                "OPENAI_API_KEY".to_string(),
            ),
        ];
        let got = missing_keys(&keys, &passed);
        assert_eq!(got.len(), 1);
        assert!(got[0].message.contains("`MOCK_KEY`"));
        assert_eq!(
            got[0].hint,
            "add it to planwright.toml: `[agent] env = [\"MOCK_KEY\"]`"
        );
    }
}
