//! Agents and set-ups reach the network through planwright's proxy: a
//! loopback server mapped by name through `[sandbox] hosts`, never another
//! loopback server (not at its address, not through the proxy), and each
//! refusal is in the attempt's agent log or the set-up's log. With
//! `agent_network = "none"` they reach nothing.
#![forbid(unsafe_code)]

use planwright_config::AgentNetwork;
use planwright_engine::agent::{self, AgentOptions};
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
            let answer = format!("HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len());
            let _ = conn.write_all(answer.as_bytes());
        }
    });
    at
}

/// Tries the mapped name, the other server directly and through the
/// proxy: one line each, what came back (or nothing) and curl's code.
fn probe_script(other: SocketAddr) -> String {
    let curl = |args: String| format!("printf '%s rc=%s\\n' \"$(curl -sSf {args} 2>/dev/null)\" $?");
    [
        curl("http://allowed.test/".into()),
        curl(format!("--noproxy '*' http://{other}/")),
        curl(format!("http://{other}/")),
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
    paths.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
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
    std::fs::write(&agent_script, format!("cd \"$1\" && sh {} > probe.txt\n", probe.display())).unwrap();
    let opts = AgentOptions {
        cmd: Some(format!("sh {} {{workspace}}", agent_script.display())),
        ..AgentOptions::default()
    };
    let agent = agent::from_options("cmd", &opts).unwrap();
    let mut s = settings();
    s.jobs = 1;
    s.contain.agent_network = network;
    s.contain.hosts = vec![("allowed.test".into(), allowed)];
    let setup = format!("echo set-up probe; sh {}", probe.display());
    s.workspace.setup = vec![vec!["sh".into(), "-c".into(), setup]];
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

/// The probe's lines after `marker` (the set-up's are in its log).
fn probe_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(" rc="))
        .map(String::from)
        .collect()
}

#[test]
fn agents_and_set_ups_reach_a_mapped_name_through_the_proxy_and_nothing_else() {
    let (probe, agent_log, setup_log) = probing_run(AgentNetwork::Proxy);
    // Direct: host loopback is not in the agent's network namespace (7);
    // through the proxy: refused (22, the proxy's 403).
    let expected = ["allowed rc=0", " rc=7", " rc=22"];
    assert_eq!(probe_lines(&probe), expected, "{probe}");
    assert_eq!(probe_lines(&setup_log), expected, "{setup_log}");
    for log in [&agent_log, &setup_log] {
        assert!(log.contains("network: through planwright's proxy at 127.0.0.1:3128"), "{log}");
        assert_eq!(log.matches("proxy: refused 127.0.0.1:").count(), 1, "{log}");
        assert!(log.contains(": not in the allowlist\n"), "{log}");
    }
}

#[test]
fn with_agent_network_none_agents_and_set_ups_reach_nothing() {
    let (probe, agent_log, setup_log) = probing_run(AgentNetwork::None);
    // No proxy: curl cannot connect to it (7), nor to host loopback.
    let expected = [" rc=7", " rc=7", " rc=7"];
    assert_eq!(probe_lines(&probe), expected, "{probe}");
    assert_eq!(probe_lines(&setup_log), expected, "{setup_log}");
    assert!(!agent_log.contains("proxy"), "{agent_log}");
}
