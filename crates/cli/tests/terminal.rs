//! planwright lends no terminal: run under a pseudo-terminal (as a user
//! runs it), an agent and a gate that try to push keystrokes into the
//! terminal's input (TIOCSTI) or draw on it reach neither. The check is
//! on what the terminal received, so it holds on kernels that refuse
//! TIOCSTI outright (`legacy_tiocsti = 0`) too.

use planwright_testkit::Env;
use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// What a hostile agent or gate does to every terminal it can find: its
/// controlling one, its standard streams, and each `/dev/pts` device.
const HOSTILE: &str = r#"
import fcntl, glob, os, termios
def push(fd):
    try:
        for c in b"echo INJECTED\n":
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
    except OSError:
        pass
def draw(fd):
    try:
        os.write(fd, b"\x1b[2J DREW-ON-THE-TERMINAL all merged\n")
    except OSError:
        pass
for path in ["/dev/tty"] + glob.glob("/dev/pts/[0-9]*"):
    for flags in (os.O_RDWR, os.O_RDONLY, os.O_WRONLY):
        try:
            fd = os.open(path, flags | os.O_NOCTTY)
        except OSError:
            continue
        push(fd)
        draw(fd)
        os.close(fd)
for fd in (0, 1, 2):
    push(fd)
"#;

/// A pseudo-terminal: its master, and its slave.
fn pty() -> (OwnedFd, OwnedFd) {
    use rustix::fs::{Mode, OFlags};
    use rustix::pty::OpenptFlags;
    let master = rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("openpt");
    rustix::pty::grantpt(&master).expect("grantpt");
    rustix::pty::unlockpt(&master).expect("unlockpt");
    let name = rustix::pty::ptsname(&master, Vec::new()).expect("ptsname");
    let flags = OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC;
    let slave = rustix::fs::open(name.as_c_str(), flags, Mode::empty()).expect("open the slave");
    (master, slave)
}

/// Bytes waiting in the terminal's input queue.
fn queued(slave: &OwnedFd) -> u64 {
    rustix::io::ioctl_fionread(slave).expect("FIONREAD")
}

#[test]
fn agents_and_gates_reach_neither_the_terminals_input_nor_its_screen() {
    on_a_terminal(Some("xterm"));
}

#[test]
fn a_terminal_of_no_type_gets_plain_lines_and_the_summary() {
    on_a_terminal(None);
}

/// A run on a pseudo-terminal whose type is `term`, with a hostile agent
/// and gate: planwright's own output is seen, and theirs never.
fn on_a_terminal(term: Option<&str>) {
    let have_python = Command::new("python3").arg("-c").arg("1").status();
    assert!(
        have_python.is_ok_and(|s| s.success()),
        "this test's hostile agent is a python3 script"
    );
    let have_setsid = Command::new("setsid").arg("--version").output();
    assert!(
        have_setsid.is_ok_and(|o| o.status.success()),
        "this test gives planwright its terminal with util-linux's `setsid --ctty`"
    );
    let env = Env::new(&[("a.txt", "a\n"), ("hostile.py", HOSTILE)]).with_cli(BIN);
    let agent = env.root().join("agent.sh");
    std::fs::write(&agent, "cd \"$1\"\npython3 hostile.py\necho b > a.txt\n").unwrap();
    let plan = r#"{"planwright": 1, "source_format": "native", "base": "main",
      "gates": [{"name": "hostile", "argv": ["python3", "hostile.py"]}],
      "tickets": [{"id": "A", "title": "a", "body": "b",
                   "scope": [{"pattern": "a.txt", "op": "any"}]}]}"#;
    std::fs::write(env.root().join("plan.json"), plan).unwrap();

    let (master, slave) = pty();
    let stdio = || Stdio::from(slave.try_clone().unwrap());
    // The pseudo-terminal becomes planwright's controlling terminal: a
    // session of its own (setsid execs planwright in place, as the child
    // is no group leader) with its standard input's terminal.
    let mut cmd = Command::new("setsid");
    env.cli().hermetic(&mut cmd);
    // A terminal without a type (TERM unset or `dumb`) cannot be drawn on:
    // planwright prints plain lines there instead.
    if let Some(term) = term {
        cmd.env("TERM", term);
    }
    cmd.arg("--ctty")
        .arg(env.cli().bin())
        .args(["run", "plan.json", "--repo", "repo", "--agent", "cmd"])
        // The hostile gate is the run's, not preflight's trial of it.
        .arg("--no-gate-probe")
        .arg("--agent-cmd")
        .arg(format!("sh {} {{worktree}}", agent.display()))
        .current_dir(env.root())
        .stdin(stdio())
        .stdout(stdio())
        .stderr(stdio());
    let mut child = cmd.spawn().unwrap();
    let reader = std::thread::spawn({
        let mut master = File::from(master.try_clone().unwrap());
        move || {
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            // Ends when the test closes its end of the slave (EIO).
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
            }
            seen
        }
    });
    let mut status = None;
    planwright_testkit::wait_until("planwright finishes", || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let status = status.unwrap();
    let waiting = queued(&slave);
    drop(slave);
    drop(cmd);
    let seen = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert_eq!(status.code(), Some(0), "the ticket merges: {seen}");
    assert!(seen.contains("merged"), "planwright's own output: {seen}");
    assert_eq!(waiting, 0, "bytes were pushed into the terminal's input");
    assert!(
        !seen.contains("INJECTED"),
        "keystrokes reached the terminal: {seen}"
    );
    assert!(
        !seen.contains("DREW-ON"),
        "the agent drew on the terminal: {seen}"
    );
}
