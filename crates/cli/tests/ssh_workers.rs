//! `[executor] kind = "ssh"` against a real OpenSSH server: two hosts (one
//! `sshd` on 127.0.0.2, one on 127.0.0.3, keys and known hosts made here),
//! a plan whose tickets land from both, and one host cut off in the middle
//! of an attempt. With `PLANWRIGHT_SSH_TESTS=1` (set by `.ci/run`, which
//! installs openssh-server) a missing `sshd` fails the test; without it the
//! test is skipped.

use planwright_testkit::{gate, git, text, ticket, write, Env};
use serde_json::json;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");
const SSHD: &str = "/usr/sbin/sshd";

/// Whether the test runs: `sshd` is there, or the tier asks for it.
fn wanted() -> bool {
    let required = std::env::var("PLANWRIGHT_SSH_TESTS").is_ok_and(|v| v == "1");
    let there = Path::new(SSHD).is_file();
    assert!(
        there || !required,
        "PLANWRIGHT_SSH_TESTS=1 but {SSHD} is missing (apt-get install openssh-server)"
    );
    if !there {
        eprintln!("skipped: no {SSHD}");
    }
    there
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("runs");
    assert!(out.status.success(), "{cmd:?}: {}", text(&out.stderr));
}

/// One `sshd` listening on `addr:port`, its workers' cache in `cache`.
struct Host {
    addr: &'static str,
    sshd: Child,
    cache: PathBuf,
}

impl Host {
    fn start(dir: &Path, addr: &'static str, port: u16, client_key: &Path) -> Host {
        let own = dir.join(addr);
        std::fs::create_dir_all(&own).unwrap();
        let host_key = own.join("host_key");
        run(Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(&host_key));
        let cache = own.join("cache");
        let config = format!(
            "ListenAddress {addr}:{port}\nHostKey {}\nAuthorizedKeysFile {}\nPidFile none\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nSetEnv XDG_CACHE_HOME={}\nLogLevel ERROR\n",
            host_key.display(),
            client_key.with_extension("pub").display(),
            cache.display(),
        );
        let config_path = own.join("sshd_config");
        std::fs::write(&config_path, config).unwrap();
        let sshd = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&config_path)
            .stderr(Stdio::null())
            .spawn()
            .expect("sshd starts");
        Host { addr, sshd, cache }
    }

    /// This host's line in known_hosts.
    fn known(&self, port: u16) -> String {
        let key =
            std::fs::read_to_string(self.cache.parent().unwrap().join("host_key.pub")).unwrap();
        let mut words = key.split_whitespace();
        let (kind, body) = (words.next().unwrap(), words.next().unwrap());
        format!("[{}]:{port} {kind} {body}\n", self.addr)
    }

    /// Kills the listener and every session it started: the host is gone.
    fn cut(&mut self) {
        for pid in descendants(self.sshd.id()) {
            let _ = (Command::new("kill").args(["-9", &pid.to_string()]))
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.sshd.kill();
        let _ = self.sshd.wait();
    }

    fn wait_listening(&self, port: u16) {
        planwright_testkit::wait_until(&format!("sshd on {} listens", self.addr), || {
            std::net::TcpStream::connect((self.addr, port)).is_ok()
        });
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.cut();
    }
}

/// The processes below `pid`, parents first: the sessions die before
/// the workers and agents in them can say anything more.
fn descendants(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The parent is the second field after the command's `)`.
        let after = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
        if let Some(ppid) = after.split_whitespace().nth(1).and_then(|s| s.parse().ok()) {
            parents.push((p, ppid));
        }
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let of = found[i];
        found.extend(parents.iter().filter(|(_, pp)| *pp == of).map(|(p, _)| *p));
        i += 1;
    }
    found.remove(0);
    found
}

/// A port free on both addresses.
fn free_port() -> u16 {
    loop {
        let l = TcpListener::bind("127.0.0.2:0").unwrap();
        let port = l.local_addr().unwrap().port();
        if TcpListener::bind(("127.0.0.3", port)).is_ok() {
            return port;
        }
    }
}

/// Two `sshd` hosts, their keys and known hosts, for one test.
struct Hosts {
    hosts: [Host; 2],
    ssh: Vec<String>,
}

impl Hosts {
    fn start(root: &Path) -> Hosts {
        // sshd wants its privilege separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        let dir = root.join("ssh");
        std::fs::create_dir_all(&dir).unwrap();
        let key = dir.join("id_ed25519");
        run(Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(&key));
        let port = free_port();
        let hosts = [
            Host::start(&dir, "127.0.0.2", port, &key),
            Host::start(&dir, "127.0.0.3", port, &key),
        ];
        let known = dir.join("known_hosts");
        let lines: String = hosts.iter().map(|h| h.known(port)).collect();
        std::fs::write(&known, lines).unwrap();
        for h in &hosts {
            h.wait_listening(port);
        }
        let ssh = [
            "ssh",
            "-F",
            "/dev/null",
            "-p",
            &port.to_string(),
            "-i",
            &key.display().to_string(),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            &format!("UserKnownHostsFile={}", known.display()),
        ]
        .map(String::from)
        .to_vec();
        Hosts { hosts, ssh }
    }

    /// `[executor]` for these hosts, each running this planwright's worker.
    fn settings(&self) -> planwright_config::ExecutorSettings {
        planwright_config::ExecutorSettings::Ssh {
            hosts: self.hosts.iter().map(|h| h.addr.to_string()).collect(),
            slots_per_host: 1,
            ssh: self.ssh.clone(),
            command: vec![BIN.into(), "worker".into()],
            keepalive: std::time::Duration::from_secs(15),
        }
    }
}

#[test]
fn the_ssh_executor_keeps_the_contract() {
    if !wanted() {
        return;
    }
    // The coordinator in this test is the binary's build, as in a run.
    let version = Command::new(BIN).arg("--version").output().unwrap();
    let version = text(&version.stdout);
    planwright_engine::remote::set_version(version.trim().trim_start_matches("planwright "));
    let scratch = tempfile::tempdir().unwrap();
    let hosts = Hosts::start(scratch.path());
    planwright_testkit::contract::executor_contract(&|env: &Env, agents| {
        let plan = planwright_testkit::plan(json!({"gates": gate(&["true"]),
            "tickets": [ticket("T1", json!([planwright_testkit::any("**")]))]}));
        let mut s = planwright_testkit::settings();
        s.jobs = 2;
        s.executor = hosts.settings();
        let session =
            planwright_engine::prepare(&env.repo(), plan, s, Default::default(), &[], &agents)
                .unwrap_or_else(|f| panic!("preflight failed: {:?}", f.checks));
        session.executor(&Default::default()).unwrap()
    });
}

#[test]
fn tickets_land_from_two_ssh_hosts_and_one_cut_off_mid_attempt_loses_nothing() {
    if !wanted() {
        return;
    }
    let env = Env::new(&[("README.md", "base\n")]).with_cli(BIN);
    let Hosts { mut hosts, ssh } = Hosts::start(env.root());
    // A, B and C first (one on each host at once), then D, whose first
    // attempt waits until its host is cut off.
    let mut tickets = planwright_testkit::creating_tickets(&["A", "B", "C"]);
    tickets.push(json!({"id": "D", "title": "ticket D", "body": "do it",
        "depends_on": ["A", "B", "C"], "scope": [{"pattern": "D.txt", "op": "create"}]}));
    let plan = json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": gate(&["true"]), "tickets": tickets});
    write(env.root(), "plan.json", &plan.to_string());
    let ssh = json!(ssh);
    let config = format!(
        "[executor]\nkind = \"ssh\"\nhosts = [\"127.0.0.2\", \"127.0.0.3\"]\nssh_command = {ssh}\ncommand = [{BIN:?}, \"worker\"]\n"
    );
    write(env.root(), "planwright.toml", &config);
    let agent = r#"sh -c 'if [ "$PLANWRIGHT_TICKET$PLANWRIGHT_ATTEMPT" = D2 ] || [ "$PLANWRIGHT_TICKET" != D ]; then echo "$PLANWRIGHT_TICKET" > "$PLANWRIGHT_TICKET.txt"; else touch started.txt; sleep 900; fi'"#;
    let mut child = env
        .command()
        .args([
            "run",
            "plan.json",
            "--repo",
            "repo",
            "--config",
            "planwright.toml",
            "--strikes",
            "1",
            "--agent",
            "cmd",
            "--agent-cmd",
            agent,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // D's first attempt is at work: cut its host off.
    let started = |h: &Host| {
        Command::new("find")
            .arg(&h.cache)
            .args(["-name", "started.txt"])
            .output()
            .is_ok_and(|o| !o.stdout.is_empty())
    };
    let deadline = Instant::now() + planwright_testkit::UNTESTED_LIMIT;
    let cut = loop {
        if let Some(i) = hosts.iter().position(started) {
            break i;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before D started"
        );
        assert!(Instant::now() < deadline, "D's first attempt never started");
        std::thread::sleep(Duration::from_millis(100));
    };
    hosts[cut].cut();
    let out = child.wait_with_output().unwrap();
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    let addr = hosts[cut].addr;
    assert!(
        said.contains(&format!("D: the worker at ssh {addr} failed the attempt")),
        "{said}"
    );
    // Every ticket landed, each once.
    let log = git(&env.repo(), &["log", "--format=%s", "main"]);
    let mut subjects: Vec<&str> = log.lines().collect();
    subjects.sort();
    assert_eq!(
        subjects,
        [
            "A: ticket A",
            "B: ticket B",
            "C: ticket C",
            "D: ticket D",
            "base"
        ]
    );
    // Both hosts ran attempts: each kept a base in its worker's store.
    for h in &hosts {
        let store = h.cache.join("planwright/worker/sha1/store.git");
        let kept = git(&store, &["for-each-ref", "refs/planwright/cache"]);
        assert!(!kept.is_empty(), "no attempt ended on {}", h.addr);
    }
}

/// The `ssh` client of an attempt dies while the host's worker goes on (a
/// reset connection): the worker keeps the attempt, a new `ssh` session
/// to the same host resumes it, and the ticket lands on its first attempt
/// with no worker lost. The agent finishes only once the run said the
/// attempt was resumed.
#[test]
fn an_ssh_session_that_dies_mid_attempt_is_resumed_over_a_new_one() {
    if !wanted() {
        return;
    }
    let env = Env::new(&[("README.md", "base\n")]).with_cli(BIN);
    let Hosts { hosts, ssh } = Hosts::start(env.root());
    let tickets = planwright_testkit::creating_tickets(&["D"]);
    let plan = json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": gate(&["true"]), "tickets": tickets});
    write(env.root(), "plan.json", &plan.to_string());
    let ssh = json!(ssh);
    let config = format!(
        "[executor]\nkind = \"ssh\"\nhosts = [\"127.0.0.2\", \"127.0.0.3\"]\nssh_command = {ssh}\ncommand = [{BIN:?}, \"worker\"]\n"
    );
    write(env.root(), "planwright.toml", &config);
    // It waits for `go` in its workspace (the sandbox shows it nothing of
    // this test's folders).
    let agent = "sh -c 'touch started.txt; while [ ! -e go ]; do sleep 0.1; done; rm -f started.txt go; echo D > D.txt'";
    let mut child = env
        .command()
        .args([
            "run",
            "plan.json",
            "--repo",
            "repo",
            "--config",
            "planwright.toml",
        ])
        .args(["--strikes", "1", "--agent", "cmd", "--agent-cmd", agent])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // What the run says, on either stream, line by line as it comes.
    let (tx, lines) = std::sync::mpsc::channel();
    let read = |from: Box<dyn std::io::Read + Send>, tx: std::sync::mpsc::Sender<String>| {
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(from).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        })
    };
    let readers = [
        read(Box::new(child.stdout.take().unwrap()), tx.clone()),
        read(Box::new(child.stderr.take().unwrap()), tx),
    ];
    let started = |h: &Host| {
        Command::new("find")
            .arg(&h.cache)
            .args(["-name", "started.txt"])
            .output()
            .is_ok_and(|o| !o.stdout.is_empty())
    };
    let deadline = Instant::now() + Duration::from_secs(300);
    while !hosts.iter().any(started) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before D started"
        );
        assert!(Instant::now() < deadline, "D's attempt never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The attempt's `ssh` client, the run's only one now, dies.
    let clients: Vec<u32> = descendants(child.id())
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "ssh")
        })
        .collect();
    assert_eq!(clients.len(), 1, "{clients:?}");
    run(Command::new("kill").args(["-9", &clients[0].to_string()]));
    let mut said = Vec::new();
    loop {
        let line = lines.recv().expect("the run said the attempt was resumed");
        let resumed = line.contains("D: the connection to its worker at ssh 127.0.0.")
            && line.contains("broke (closed the connection); a new one resumed the attempt after");
        said.push(line);
        if resumed {
            break;
        }
    }
    for h in &hosts {
        run(Command::new("find").arg(&h.cache).args([
            "-name",
            "started.txt",
            "-execdir",
            "touch",
            "go",
            ";",
        ]));
    }
    let status = child.wait().unwrap();
    for r in readers {
        r.join().unwrap();
    }
    said.extend(lines.try_iter());
    let said = said.join("\n");
    assert!(status.success(), "{said}");
    assert!(!said.contains("failed the attempt"), "{said}");
    let log = git(&env.repo(), &["log", "--format=%s", "main"]);
    assert_eq!(log.lines().collect::<Vec<_>>(), ["D: ticket D", "base"]);
    let status = env.status_json();
    let attempts = status["tickets"][0]["attempts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(attempts.len(), 1, "{status}");
}
