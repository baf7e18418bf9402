//! Agents, set-ups and reviewers reach the network through planwright's
//! proxy: a loopback server mapped by name through `[sandbox] hosts`,
//! never another loopback server (not at its address, not through the
//! proxy), and each refusal is in the attempt's agent log, the set-up's
//! log or the review's log. With `agent_network = "none"` they reach
//! nothing.

use planwright_config::{AgentNetwork, ReviewSettings};
use planwright_engine::agent::{self, AgentOptions, AgentSpec};
use planwright_testkit::{any, gate, git, plan, run_with, settings, ticket, Env};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};

/// A loopback HTTP server that answers every request with `body`.
fn server(body: &'static str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let mut head = [0u8; 4096];
            let _ = conn.read(&mut head);
            let answer = format!(
                "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let _ = conn.write_all(answer.as_bytes());
        }
    });
    at
}

/// Tries the mapped name, the other server directly and through the
/// proxy: one line each, what came back (or nothing) and curl's code.
fn probe_script(other: SocketAddr) -> String {
    let curl = |args: String| {
        format!("out=$(curl -sSf {args} 2>/dev/null); printf 'got=%s rc=%s\\n' \"$out\" $?")
    };
    [
        curl("http://allowed.test/".into()),
        curl(format!("--noproxy '*' http://{other}/")),
        // Past `NO_PROXY` (the child's own loopback), to the proxy.
        curl(format!("--noproxy '' http://{other}/")),
    ]
    .join("\n")
}

/// Every file called `name` under `dir`.
fn find(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(find(&path, name));
        } else if path.ends_with(name) {
            found.push(path);
        }
    }
    found
}

fn read_all(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// A run whose set-up and agent both probe; the agent's probe is merged
/// as `probe.txt`. Returns it, the agent's log and the set-up's log.
fn probing_run(network: AgentNetwork) -> (String, String, String) {
    let allowed = server("allowed");
    let other = server("other");
    let env = Env::new(&[("README.md", "hi\n")]);
    let probe = env.tmp.path().join("probe.sh");
    std::fs::write(&probe, probe_script(other)).unwrap();
    let agent_script = env.tmp.path().join("agent.sh");
    std::fs::write(
        &agent_script,
        format!("cd \"$1\" && sh {} > probe.txt\n", probe.display()),
    )
    .unwrap();
    let opts = AgentOptions {
        cmd: Some(format!("sh {} {{workspace}}", agent_script.display())),
        ..AgentOptions::default()
    };
    let agent = agent::from_options("cmd", &opts).unwrap();
    let mut s = settings();
    s.jobs = 1;
    s.contain.agent_network = network;
    s.contain.hosts = vec![("allowed.test".into(), allowed)];
    // The script is an argument of its own: a child's view of `/tmp` holds
    // the directories of the files its arguments name, not those of paths
    // inside a shell string.
    s.workspace.setup = vec![vec![
        "sh".into(),
        "-c".into(),
        "echo set-up probe; sh \"$1\"".into(),
        "sh".into(),
        probe.display().to_string(),
    ]];
    let plan = plan(json!({
        "gates": gate(&["test", "-f", "probe.txt"]),
        "tickets": [ticket("A", json!([any("probe.txt")]))],
    }));
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    let runs = env.repo().join(".planwright/runs");
    (
        git(&env.repo(), &["show", "main:probe.txt"]),
        read_all(&find(&runs, "attempt-1.agent.log")),
        read_all(&find(&runs, "ticket.log")),
    )
}

/// The probe's lines (the set-up's are among the rest of its log).
fn probe_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(" rc="))
        .map(String::from)
        .collect()
}

/// How many times the probe ran in `text`, each time seeing `expected`.
fn probes_seeing(text: &str, expected: &[&str]) -> usize {
    let lines = probe_lines(text);
    assert!(!lines.is_empty(), "{text}");
    for probe in lines.chunks(expected.len()) {
        assert_eq!(probe, expected, "{text}");
    }
    lines.len() / expected.len()
}

#[test]
fn agents_and_set_ups_reach_a_mapped_name_through_the_proxy_and_nothing_else() {
    let (probe, agent_log, setup_log) = probing_run(AgentNetwork::Proxy);
    // Direct: host loopback is not in the child's network namespace (7);
    // through the proxy: refused (22, the proxy's 403).
    let expected = ["got=allowed rc=0", "got= rc=7", "got= rc=22"];
    assert_eq!(probes_seeing(&probe, &expected), 1);
    // In the workspace, and in the gate checkout.
    let setups = probes_seeing(&setup_log, &expected);
    for (log, runs) in [(&agent_log, 1), (&setup_log, setups)] {
        let proxied = "network: through planwright's proxy at 127.0.0.1:3128";
        assert_eq!(log.matches(proxied).count(), runs, "{log}");
        let refused = log
            .lines()
            .filter(|l| l.starts_with("proxy: refused 127.0.0.1:"));
        assert!(
            refused
                .clone()
                .all(|l| l.ends_with(": not in the allowlist")),
            "{log}"
        );
        assert_eq!(refused.count(), runs, "{log}");
    }
}

#[test]
fn with_agent_network_none_agents_and_set_ups_reach_nothing() {
    let (probe, agent_log, setup_log) = probing_run(AgentNetwork::None);
    // No name resolves (6), and nothing listens at the proxy's address or
    // the other server's (7).
    let expected = ["got= rc=6", "got= rc=7", "got= rc=7"];
    assert_eq!(probes_seeing(&probe, &expected), 1);
    probes_seeing(&setup_log, &expected);
    assert!(!agent_log.contains("proxy"), "{agent_log}");
    assert!(!setup_log.contains("proxy"), "{setup_log}");
}

/// The reviewer's network is an agent's: through the proxy, it reaches the
/// server `[sandbox] hosts` names and is refused the other, at its address
/// and through the proxy; the refusal is in the review's log, with what
/// the reviewer saw. It ships, and the ticket merges.
#[test]
fn a_reviewer_reaches_a_mapped_name_through_the_proxy_and_nothing_else() {
    let allowed = server("allowed");
    let other = server("other");
    let env = Env::new(&[("README.md", "hi\n")]);
    env.fixture("A", 0, "a.txt", "a\n");
    let ship = r#"{"verdict": "ship", "summary": "fine", "findings": [], "checks": []}"#;
    let reviewer = env.tmp.path().join("reviewer.sh");
    std::fs::write(
        &reviewer,
        format!(
            "{}\ncat > \"$PLANWRIGHT_VERDICT_FILE\" <<'EOF'\n{ship}\nEOF\n",
            probe_script(other)
        ),
    )
    .unwrap();
    let mut s = settings();
    s.jobs = 1;
    s.contain.hosts = vec![("allowed.test".into(), allowed)];
    s.beyond = ReviewSettings {
        reviewer: Some(AgentSpec::cmd(format!("sh {}", reviewer.display()))),
        ..Default::default()
    };
    let plan = plan(json!({
        "gates": gate(&["test", "-f", "a.txt"]),
        "tickets": [ticket("A", json!([any("a.txt")]))],
    }));
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    let runs = env.repo().join(".planwright/runs");
    let log = read_all(&find(&runs, "attempt-1.review-1.1.log"));
    let expected = ["got=allowed rc=0", "got= rc=7", "got= rc=22"];
    assert_eq!(probes_seeing(&log, &expected), 1);
    let proxied = "network: through planwright's proxy at 127.0.0.1:3128";
    assert_eq!(log.matches(proxied).count(), 1, "{log}");
    let refused = format!("proxy: refused {other}: not in the allowlist");
    assert_eq!(log.lines().filter(|l| *l == refused).count(), 1, "{log}");
}
