//! A confined child reaches the network only through planwright's proxy:
//! a name mapped to a loopback server, never another loopback server
//! (directly or through the proxy), and each refusal is in its log.

use planwright_os::process::{run, Cancel, Spec};
use planwright_os::proxy::{Allow, Rules};
use planwright_os::sandbox::{Containment, Mode, Policy};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

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

/// Runs `script` under `sh` in `dir`, confined, with `proxy` rules (or
/// loopback alone); its output and its log.
fn confined(dir: &Path, script: &str, proxy: Option<Rules>) -> (String, String) {
    let containment = Containment::new(Mode::Enforce).unwrap_or_else(|e| panic!("{e}"));
    assert!(containment.isolates_network());
    let log = dir.join("agent.log");
    let spec = Spec {
        argv: vec!["sh".into(), "-c".into(), script.into()],
        cwd: dir.to_path_buf(),
        env: vec![
            ("PATH".to_string(), PATH.to_string()),
            ("NO_PROXY".to_string(), "*".to_string()),
        ],
        stdin: None,
        timeout: None,
        grace: Duration::from_millis(200),
        log: Some(log.clone()),
        lines: None,
        confine: Some(containment.confine(Policy {
            writable: vec![dir.to_path_buf()],
            readable: Vec::new(),
            network: false,
            proxy: proxy.map(Arc::new),
            overlay: None,
            limits: Default::default(),
        })),
        log_limit: None,
    };
    let done = run(&spec, &Cancel::default()).expect("the child runs");
    assert!(done.success(), "{done:?}");
    (done.stdout_tail, std::fs::read_to_string(&log).unwrap())
}

fn curl(args: &str) -> String {
    format!("curl -sS {args}; echo \" rc=$?\";")
}

#[test]
fn a_mapped_name_is_reached_through_the_proxy_and_nothing_else() {
    let allowed = server("allowed");
    let other = server("other");
    let dir = tempfile::tempdir().unwrap();
    let rules = Rules {
        allow: vec![],
        hosts: vec![("allowed.test".into(), allowed)],
    };
    let script = [
        curl("http://allowed.test/"),
        curl("--proxytunnel http://allowed.test/"),
        curl(&format!("--noproxy '*' http://{other}/")),
        // Past `NO_PROXY` (the namespace's own loopback), to the proxy.
        curl(&format!("--noproxy '' -f http://{other}/")),
        curl(&format!("--noproxy '' --proxytunnel http://{other}/")),
        // Its own loopback directly: nothing listens there.
        curl(&format!("http://{other}/")),
        "echo \"proxy=$HTTPS_PROXY no_proxy=${NO_PROXY-unset}\"".to_string(),
    ]
    .concat();
    let (out, log) = confined(dir.path(), &script, Some(rules));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "allowed rc=0", "{out}");
    assert_eq!(lines[1], "allowed rc=0", "{out}");
    // Host loopback is not there: the namespace has its own.
    assert!(lines[2].ends_with(" rc=7"), "{out}");
    assert!(lines[3].ends_with(" rc=22"), "{out}");
    assert!(lines[4].ends_with(" rc=56"), "{out}");
    assert!(lines[5].ends_with(" rc=7"), "{out}");
    assert_eq!(
        lines.last().copied(),
        Some("proxy=http://127.0.0.1:3128 no_proxy=localhost,127.0.0.1,::1")
    );
    assert!(!out.contains("other"), "{out}");
    let refused = format!("proxy: refused {other}: not in the allowlist\n");
    assert_eq!(log.matches(&refused).count(), 2, "{log}");
    assert!(log.contains("hosts: allowed.test = 127.0.0.1:"), "{log}");
}

#[test]
fn a_loopback_address_allowed_by_address_is_reached_directly_and_no_other() {
    let registry = server("registry");
    let other = server("other");
    let dir = tempfile::tempdir().unwrap();
    let rules = Rules {
        allow: vec![Allow {
            host: registry.ip().to_string(),
            subdomains: false,
            port: registry.port(),
        }],
        hosts: vec![],
    };
    let script = [
        // As a package manager does: loopback is in NO_PROXY, so it
        // connects to the address itself, in its own namespace.
        curl(&format!("http://{registry}/")),
        curl(&format!("--noproxy '' http://{registry}/")),
        curl(&format!("http://{other}/")),
    ]
    .concat();
    let (out, log) = confined(dir.path(), &script, Some(rules));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "registry rc=0", "{out}");
    assert_eq!(lines[1], "registry rc=0", "{out}");
    assert!(lines[2].ends_with(" rc=7"), "{out}");
    assert!(log.contains(&format!("allow: {registry}")), "{log}");
}

#[test]
fn without_a_proxy_a_confined_child_reaches_nothing() {
    let allowed = server("allowed");
    let dir = tempfile::tempdir().unwrap();
    let script = [
        curl(&format!("http://{allowed}/")),
        curl("http://127.0.0.1:3128/"),
    ]
    .concat();
    let (out, log) = confined(dir.path(), &script, None);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines.iter().all(|l| l.ends_with(" rc=7")), "{out}");
    assert!(!log.contains("proxy"), "{log}");
}

#[test]
fn without_a_network_namespace_the_proxy_listens_on_host_loopback() {
    let allowed = server("allowed");
    let other = server("other");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("agent.log");
    let script = [
        curl("http://allowed.test/"),
        curl(&format!("-f http://{other}/")),
        "echo \"proxy=$HTTP_PROXY\";".to_string(),
        // The host's loopback is not the child's own: no exceptions.
        "echo \"no_proxy=${NO_PROXY-unset}\"".to_string(),
    ]
    .concat();
    let rules = Rules {
        allow: vec![],
        hosts: vec![("allowed.test".into(), allowed)],
    };
    let containment = Containment::none();
    assert!(!containment.isolates_network());
    let spec = Spec {
        argv: vec!["sh".into(), "-c".into(), script],
        cwd: dir.path().to_path_buf(),
        env: vec![("PATH".to_string(), PATH.to_string())],
        stdin: None,
        timeout: None,
        grace: Duration::from_millis(200),
        log: Some(log.clone()),
        lines: None,
        confine: Some(containment.confine(Policy {
            proxy: Some(Arc::new(rules)),
            ..Policy::default()
        })),
        log_limit: None,
    };
    let done = run(&spec, &Cancel::default()).expect("the child runs");
    let lines: Vec<&str> = done.stdout_tail.lines().collect();
    assert_eq!(lines[..2], ["allowed rc=0", " rc=22"], "{lines:?}");
    let proxy = lines[2].strip_prefix("proxy=http://127.0.0.1:").unwrap();
    assert_ne!(proxy, "3128", "a free port of the host's");
    assert_eq!(lines[3], "no_proxy=unset");
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains(&format!("proxy: refused {other}: not in the allowlist")),
        "{log}"
    );
}
