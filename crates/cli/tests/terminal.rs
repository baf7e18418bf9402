//! planwright lends no terminal: run under a pseudo-terminal (as a user
//! runs it), an agent and a gate that try to push keystrokes into the
//! terminal's input (TIOCSTI) or draw on it reach neither. The check is
//! on what the terminal received, so it holds on kernels that refuse
//! TIOCSTI outright (`legacy_tiocsti = 0`) too.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
}

/// A pseudo-terminal: its master, and its slave.
fn pty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two descriptors; the other arguments may be null.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both were just opened and are owned by nothing else.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// Bytes waiting in the terminal's input queue.
fn queued(slave: &OwnedFd) -> i32 {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int.
    let r = unsafe { libc::ioctl(slave.as_raw_fd(), libc::FIONREAD, &mut n) };
    assert_eq!(r, 0);
    n
}

#[test]
fn agents_and_gates_reach_neither_the_terminals_input_nor_its_screen() {
    let have_python = Command::new("python3").arg("-c").arg("1").status();
    assert!(
        have_python.is_ok_and(|s| s.success()),
        "this test's hostile agent is a python3 script"
    );
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    std::fs::write(repo.join("hostile.py"), HOSTILE).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "base"]);
    let agent = tmp.path().join("agent.sh");
    std::fs::write(&agent, "cd \"$1\"\npython3 hostile.py\necho b > a.txt\n").unwrap();
    let plan = r#"{"planwright": 1, "source_format": "native", "base": "main",
      "gates": [{"name": "hostile", "argv": ["python3", "hostile.py"]}],
      "tickets": [{"id": "A", "title": "a", "body": "b",
                   "scope": [{"pattern": "a.txt", "op": "any"}]}]}"#;
    std::fs::write(tmp.path().join("plan.json"), plan).unwrap();

    let (master, slave) = pty();
    let stdio = || Stdio::from(slave.try_clone().unwrap());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planwright"));
    cmd.args(["run", "plan.json", "--repo", "repo", "--agent", "cmd"])
        .arg("--agent-cmd")
        .arg(format!("sh {} {{worktree}}", agent.display()))
        .current_dir(tmp.path())
        .env("NO_COLOR", "1")
        .stdin(stdio())
        .stdout(stdio())
        .stderr(stdio());
    // SAFETY: setsid and ioctl are async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            // The pseudo-terminal becomes planwright's controlling terminal.
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
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
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "planwright did not finish");
        std::thread::sleep(Duration::from_millis(50));
    };
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
