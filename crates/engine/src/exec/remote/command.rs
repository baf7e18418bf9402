//! Workers started as a command per attempt, the stream its standard input
//! and output: `planwright worker` on this machine (`process`), or on
//! other machines through `ssh` with the user's keys and known hosts.

use super::transport::{EndLink, Link, Lost, Transport};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The lines of a worker's standard error kept for messages.
const STDERR_LINES: usize = 20;

/// `ssh` options every worker connection gets: never a prompt (a password,
/// an unknown host key fails instead), and a dead connection noticed after
/// [`KEEPALIVE_COUNT`] keepalives of `[executor] ssh_keepalive` unanswered.
fn ssh_options(keepalive: Duration) -> Vec<String> {
    let every = keepalive.as_secs().max(1);
    [
        "-o".to_string(),
        "BatchMode=yes".into(),
        "-o".into(),
        format!("ServerAliveInterval={every}"),
        "-o".into(),
        format!("ServerAliveCountMax={KEEPALIVE_COUNT}"),
    ]
    .into()
}

/// Keepalives `ssh` sends unanswered before it ends the session.
const KEEPALIVE_COUNT: u32 = 3;

/// How long a worker whose input was closed has to exit before it is
/// killed.
const END_GRACE: Duration = Duration::from_secs(10);

/// Where workers run, and the command that starts one there.
struct Place {
    name: String,
    argv: Vec<String>,
    /// How to make its worker answer, naming the command that starts it.
    hint: String,
}

/// Workers started by a command, one per attempt; slots go round the
/// places, so consecutive slots land on different machines.
pub struct CommandTransport {
    places: Vec<Place>,
    per_place: usize,
}

impl CommandTransport {
    /// `slots` workers on this machine, each started as `command`.
    pub fn process(command: Vec<String>, slots: usize) -> CommandTransport {
        CommandTransport {
            places: vec![Place {
                name: "process".into(),
                argv: command,
                hint:
                    "check `[executor] command`: it must start `planwright worker` of this version"
                        .into(),
            }],
            per_place: slots.max(1),
        }
    }

    /// `per_host` workers on each of `hosts`, started as `command` there
    /// through the `ssh` command line `ssh`, with keepalives every
    /// `keepalive`.
    pub fn ssh(
        ssh: &[String],
        hosts: &[String],
        command: &[String],
        per_host: usize,
        keepalive: Duration,
    ) -> CommandTransport {
        let remote = command
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ");
        let program = command.first().map_or("planwright", String::as_str);
        let places = hosts
            .iter()
            .map(|host| {
                let mut argv = ssh.to_vec();
                argv.extend(ssh_options(keepalive));
                argv.extend(["--".to_string(), host.clone(), remote.clone()]);
                Place {
                    name: format!("ssh {host}"),
                    argv,
                    hint: format!(
                        "check that `ssh -o BatchMode=yes {host} {program} --version` works with no prompt (your key, the host in known_hosts) and prints this planwright's version; a non-interactive ssh session may not have your shell's PATH, so `[executor] command` can name the program by its full path (`~/` is the home directory there)"
                    ),
                }
            })
            .collect();
        CommandTransport {
            places,
            per_place: per_host.max(1),
        }
    }

    fn of(&self, slot: usize) -> (&Place, usize) {
        let n = self.places.len().max(1);
        (&self.places[slot % n], slot / n)
    }
}

/// `word` as one word of a POSIX shell's command line (`ssh` hands the
/// host's shell one string); a leading `~/` stays outside the quotes, so
/// the host's shell makes it the home directory there.
fn shell_quote(word: &str) -> String {
    if let Some(rest) = word.strip_prefix("~/") {
        return format!("~/{}", shell_quote(rest));
    }
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

impl Transport for CommandTransport {
    fn slots(&self) -> usize {
        self.places.len() * self.per_place
    }

    fn place(&self, slot: usize) -> String {
        self.of(slot).0.name.clone()
    }

    fn unreachable_hint(&self, slot: usize) -> String {
        self.of(slot).0.hint.clone()
    }

    fn connect(&self, slot: usize, _wait: &super::transport::Wait<'_>) -> Result<Link, Lost> {
        let (place, worker_slot) = self.of(slot);
        let lost = |reason: String| Lost {
            place: place.name.clone(),
            reason,
        };
        let (program, args) = place
            .argv
            .split_first()
            .ok_or_else(|| lost("has an empty command".into()))?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| lost(format!("could not be started (`{program}`: {e})")))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(lost("gave no standard streams".into()));
        };
        let said = std::thread::spawn(move || last_lines(stderr));
        Ok(Link {
            from_worker: Box::new(stdout),
            to_worker: Box::new(stdin),
            worker_slot,
            end: Box::new(ChildEnd { child, said }),
        })
    }

    /// A stream of a local process breaks only with a pipe's end, and
    /// `ssh`'s when the session ends while the host's worker goes on (a
    /// connection reset, the `ssh` client killed): a new process, a new
    /// session to the same host, relays to the worker that keeps the
    /// attempt in the same cache.
    fn resumes(&self) -> bool {
        true
    }

    fn reconnect(
        &self,
        slot: usize,
        wait: &super::transport::Wait<'_>,
    ) -> Result<Link, super::transport::NoLink> {
        self.connect(slot, wait)
            .map_err(super::transport::NoLink::Again)
    }
}

/// The last [`STDERR_LINES`] lines a worker wrote on its standard error
/// (all of it is read, so the worker never blocks on a full pipe).
pub(super) fn last_lines(stderr: impl std::io::Read) -> Vec<String> {
    let mut lines = std::collections::VecDeque::new();
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }
    lines.into()
}

struct ChildEnd {
    child: Child,
    said: JoinHandle<Vec<String>>,
}

impl EndLink for ChildEnd {
    /// A worker that does not exit within [`END_GRACE`] of its input
    /// closing is killed: ending a connection never waits on a worker.
    fn end(mut self: Box<Self>, kill: bool) -> String {
        let until = Instant::now() + END_GRACE;
        while !kill && Instant::now() < until {
            match self.child.try_wait() {
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                _ => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.said.join().unwrap_or_default().join("\n")
    }

    /// The process may be the worker that keeps the attempt (`process`):
    /// it is waited for, never killed; it ends by itself.
    fn leave(mut self: Box<Self>) {
        std::thread::spawn(move || {
            let _ = self.child.wait();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_place_says_what_starts_its_worker() {
        let hosts = ["build-1".to_string(), "build-2".to_string()];
        let command = ["~/bin/planwright".to_string(), "worker".to_string()];
        let ssh = ["ssh".to_string()];
        let t = CommandTransport::ssh(&ssh, &hosts, &command, 2, Duration::from_secs(15));
        let hint = t.unreachable_hint(1);
        assert!(
            hint.contains("`ssh -o BatchMode=yes build-2 ~/bin/planwright --version`"),
            "{hint}"
        );
        let t = CommandTransport::process(vec!["planwright".into(), "worker".into()], 3);
        assert!(t.unreachable_hint(2).contains("`[executor] command`"));
    }

    #[test]
    fn a_word_reaches_the_hosts_shell_as_one_word() {
        assert_eq!(shell_quote("planwright"), "planwright");
        assert_eq!(
            shell_quote("/opt/pw bin/planwright"),
            "'/opt/pw bin/planwright'"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(
            shell_quote("~/.cargo/bin/planwright"),
            "~/.cargo/bin/planwright"
        );
        assert_eq!(shell_quote("~/my bin/pw"), "~/'my bin/pw'");
        assert_eq!(shell_quote("~root/pw"), "'~root/pw'");
    }

    #[test]
    fn slots_go_round_the_hosts() {
        let t = CommandTransport::ssh(
            &["ssh".into()],
            &["a".into(), "b".into()],
            &["planwright".into(), "worker".into()],
            2,
            Duration::from_secs(15),
        );
        assert_eq!(t.slots(), 4);
        let places: Vec<String> = (0..4).map(|s| t.place(s)).collect();
        assert_eq!(places, ["ssh a", "ssh b", "ssh a", "ssh b"]);
        assert_eq!(t.of(2).1, 1, "the second slot on host a");
        let argv = &t.of(1).0.argv;
        assert_eq!(argv.first().map(String::as_str), Some("ssh"));
        assert!(argv.contains(&"BatchMode=yes".to_string()), "{argv:?}");
        assert!(
            argv.contains(&"ServerAliveInterval=15".to_string()),
            "{argv:?}"
        );
        assert_eq!(&argv[argv.len() - 3..], ["--", "b", "planwright worker"]);
    }
}
