//! Behaviour of `process::run`: exit codes, output, logs, environment,
//! stdin, timeouts and cancellation (whole process group), clear errors.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use planwright_os::process::{
    find_program, run, run_piped, scrubbed_env, stdin_pipe, Cancel, Exit, Finished, ProcessError,
    Spec, TAIL_BYTES,
};

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn spec(dir: &Path, argv: &[&str]) -> Spec {
    Spec {
        argv: argv.iter().map(|a| a.to_string()).collect(),
        cwd: dir.to_path_buf(),
        env: vec![("PATH".to_string(), PATH.to_string())],
        stdin: None,
        timeout: None,
        grace: Duration::from_millis(200),
        log: None,
        lines: None,
        confine: None,
        log_limit: None,
    }
}

fn sh(dir: &Path, script: &str) -> Spec {
    spec(dir, &["sh", "-c", script])
}

fn run_ok(spec: &Spec) -> Finished {
    run(spec, &Cancel::default()).expect("the child runs")
}

#[test]
fn exit_codes_and_signals_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let ok = run_ok(&sh(dir.path(), "exit 0"));
    assert_eq!(ok.exit, Exit::Code(0));
    assert!(ok.success());

    let failed = run_ok(&sh(dir.path(), "exit 3"));
    assert_eq!(failed.exit, Exit::Code(3));
    assert!(!failed.success());

    let killed = run_ok(&sh(dir.path(), "kill -9 $$"));
    assert_eq!(killed.exit, Exit::Signal(9));
    assert!(!killed.success());
}

#[test]
fn output_goes_to_the_tails_and_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = sh(dir.path(), "echo out; echo err >&2; echo more");
    spec.log = Some(dir.path().join("logs/gate.log"));
    let done = run_ok(&spec);
    assert_eq!(done.stdout_tail, "out\nmore\n");
    for line in ["out\n", "err\n", "more\n"] {
        assert!(done.output_tail.contains(line), "{:?}", done.output_tail);
    }
    let log = std::fs::read_to_string(dir.path().join("logs/gate.log")).unwrap();
    assert_eq!(log.len(), "out\nerr\nmore\n".len());
    assert!(log.contains("err\n") && log.contains("out\n"));

    // A second run appends; nothing is truncated.
    run_ok(&spec);
    let log = std::fs::read_to_string(dir.path().join("logs/gate.log")).unwrap();
    assert_eq!(log.matches("err\n").count(), 2);
}

#[test]
fn large_output_on_both_streams_is_all_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = sh(
        dir.path(),
        "head -c 1500000 /dev/zero | tr '\\0' o; head -c 1500000 /dev/zero | tr '\\0' e >&2; echo end",
    );
    spec.log = Some(dir.path().join("big.log"));
    let done = run_ok(&spec);
    assert!(done.success());
    let log = std::fs::read(dir.path().join("big.log")).unwrap();
    assert_eq!(log.len(), 3_000_004);
    assert_eq!(log.iter().filter(|b| **b == b'o').count(), 1_500_000);
    assert_eq!(log.iter().filter(|b| **b == b'e').count(), 1_500_001);
    assert_eq!(done.stdout_tail.len(), TAIL_BYTES);
    assert!(done.stdout_tail.ends_with("oooend\n"));
    // The streams are read on two threads, so which one ends the combined
    // tail may vary; its size does not.
    assert_eq!(done.output_tail.len(), TAIL_BYTES);
}

#[test]
fn the_environment_is_exactly_the_one_given() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec(dir.path(), &["env"]);
    spec.env.push(("PLANWRIGHT_TEST".into(), "a b=c".into()));
    std::env::set_var("PLANWRIGHT_LEAK_CHECK", "1");
    let done = run_ok(&spec);
    let mut lines: Vec<&str> = done.stdout_tail.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [format!("PATH={PATH}").as_str(), "PLANWRIGHT_TEST=a b=c"]
    );
}

#[test]
fn the_stdin_file_is_fed_and_absent_stdin_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prompt.txt"), "the charter\n").unwrap();
    let mut with = spec(dir.path(), &["cat"]);
    with.stdin = Some(dir.path().join("prompt.txt"));
    assert_eq!(run_ok(&with).stdout_tail, "the charter\n");

    let without = run_ok(&spec(dir.path(), &["cat"]));
    assert_eq!(without.exit, Exit::Code(0));
    assert_eq!(without.stdout_tail, "");
}

/// A piped stdin reaches its end when the caller drops its writing end
/// (the child holds no copy), and once the child is gone a write fails
/// (planwright holds no reading end).
#[test]
fn a_piped_stdin_ends_with_its_writer_and_breaks_with_its_child() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let (stdin, mut to_child) = stdin_pipe().unwrap();
    let writer = std::thread::spawn(move || {
        to_child.write_all(b"one\ntwo\n").unwrap();
    });
    let done = run_piped(&spec(dir.path(), &["cat"]), stdin, &Cancel::default()).unwrap();
    writer.join().unwrap();
    assert_eq!(done.exit, Exit::Code(0));
    assert_eq!(done.stdout_tail, "one\ntwo\n");

    let (stdin, mut to_child) = stdin_pipe().unwrap();
    let done = run_piped(&spec(dir.path(), &["true"]), stdin, &Cancel::default()).unwrap();
    assert_eq!(done.exit, Exit::Code(0));
    let err = to_child.write_all(b"too late\n").unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
}

#[test]
fn the_child_runs_in_the_given_directory() {
    let dir = tempfile::tempdir().unwrap();
    let done = run_ok(&spec(dir.path(), &["pwd"]));
    let expected = dir.path().canonicalize().unwrap();
    assert_eq!(PathBuf::from(done.stdout_tail.trim_end()), expected);
}

/// Whether `pid` is gone: no /proc entry, or a zombie nobody reaped yet
/// (the container's init may not reap).
fn is_dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap().split_whitespace().next();
            matches!(state, Some("Z" | "X"))
        }
    }
}

/// SIGKILL is delivered asynchronously: `run` has sent it when it returns,
/// the process may need a moment to die. Waits for that, with a generous
/// bound so a loaded machine does not fail the test.
fn dies(pid: &str) -> bool {
    for _ in 0..500 {
        if is_dead(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The host's pids of live processes whose command line is `cmdline`.
fn pids_running(cmdline: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == cmdline.as_bytes())
        })
        .filter(|pid| !is_dead(pid))
        .collect()
}

fn grandchild_pid(dir: &Path) -> String {
    let pid = std::fs::read_to_string(dir.join("pid")).unwrap();
    let pid = pid.trim().to_string();
    assert!(!pid.is_empty());
    pid
}

#[test]
fn a_timeout_stops_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = sh(
        dir.path(),
        "sleep 100 & echo $! > pid; echo started; sleep 100",
    );
    spec.timeout = Some(Duration::from_millis(300));
    let done = run_ok(&spec);
    assert_eq!(done.exit, Exit::TimedOut);
    assert!(!done.success());
    assert_eq!(done.stdout_tail, "started\n");
    assert!(dies(&grandchild_pid(dir.path())));
}

#[test]
fn a_child_ignoring_term_is_killed_after_the_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = sh(
        dir.path(),
        "trap '' TERM; echo $$ > pid; while :; do sleep 1; done",
    );
    spec.timeout = Some(Duration::from_millis(200));
    spec.grace = Duration::from_millis(100);
    let done = run_ok(&spec);
    assert_eq!(done.exit, Exit::TimedOut);
    assert!(dies(&grandchild_pid(dir.path())));
}

#[test]
fn cancel_stops_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let spec = sh(dir.path(), "sleep 100 & echo $! > pid; sleep 100");
    let cancel = Cancel::default();
    let trigger = cancel.clone();
    let pid_file = dir.path().join("pid");
    let canceller = std::thread::spawn(move || {
        while !pid_file.exists() {
            std::thread::sleep(Duration::from_millis(10));
        }
        trigger.cancel();
    });
    let done = run(&spec, &cancel).unwrap();
    canceller.join().unwrap();
    assert_eq!(done.exit, Exit::Cancelled);
    assert!(dies(&grandchild_pid(dir.path())));
}

#[test]
fn a_cancelled_flag_means_the_child_never_starts() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = Cancel::default();
    cancel.cancel();
    assert!(cancel.is_cancelled());
    let done = run(&sh(dir.path(), "touch started"), &cancel).unwrap();
    assert_eq!(done.exit, Exit::Cancelled);
    assert!(!dir.path().join("started").exists());
}

#[test]
fn a_grandchild_holding_the_pipes_is_killed_after_the_child_exits() {
    let dir = tempfile::tempdir().unwrap();
    let spec = sh(dir.path(), "sleep 100 & echo $! > pid; echo bye");
    let done = run_ok(&spec);
    assert_eq!(done.exit, Exit::Code(0));
    assert_eq!(done.stdout_tail, "bye\n");
    assert!(dies(&grandchild_pid(dir.path())));
}

#[test]
fn a_background_process_without_the_pipes_is_killed_too() {
    let dir = tempfile::tempdir().unwrap();
    let spec = sh(dir.path(), "sleep 100 >/dev/null 2>&1 & echo $! > pid");
    assert!(run_ok(&spec).success());
    assert!(dies(&grandchild_pid(dir.path())));
}

#[test]
fn a_missing_program_names_the_program_and_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let err = run(
        &spec(dir.path(), &["planwright-no-such-program"]),
        &Cancel::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ProcessError::NotFound { .. }));
    let message = err.to_string();
    assert!(
        message.contains("`planwright-no-such-program`"),
        "{message}"
    );
    assert!(message.contains(PATH), "{message}");
}

#[test]
fn the_program_is_looked_up_in_the_childs_path_not_ours() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec(dir.path(), &["sh", "-c", "exit 0"]);
    spec.env.clear();
    let err = run(&spec, &Cancel::default()).unwrap_err();
    assert!(err.to_string().contains("no PATH"), "{err}");
}

#[test]
fn a_relative_program_path_is_taken_from_the_working_directory() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("gate.sh");
    std::fs::write(&script, "#!/bin/sh\necho gated\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let done = run_ok(&spec(dir.path(), &["./gate.sh"]));
    assert_eq!(done.stdout_tail, "gated\n");

    let err = run(&spec(dir.path(), &["./nope.sh"]), &Cancel::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "program `./nope.sh` not found or not executable"
    );
}

#[test]
fn bad_settings_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let empty = run(&spec(dir.path(), &[]), &Cancel::default()).unwrap_err();
    assert!(matches!(empty, ProcessError::EmptyArgv));

    let cwd = run(
        &spec(&dir.path().join("gone"), &["true"]),
        &Cancel::default(),
    )
    .unwrap_err();
    assert!(cwd.to_string().contains("gone"), "{cwd}");

    let mut stdin = spec(dir.path(), &["cat"]);
    stdin.stdin = Some(dir.path().join("missing-prompt"));
    let err = run(&stdin, &Cancel::default()).unwrap_err();
    assert!(err.to_string().contains("missing-prompt"), "{err}");

    std::fs::write(dir.path().join("file"), "").unwrap();
    let mut log = spec(dir.path(), &["true"]);
    log.log = Some(dir.path().join("file/under-a-file.log"));
    let err = run(&log, &Cancel::default()).unwrap_err();
    assert!(matches!(err, ProcessError::Log { .. }), "{err}");
    assert!(err.to_string().contains("under-a-file.log"), "{err}");
}

#[test]
fn scrubbed_env_keeps_only_the_allowlist_and_the_extras() {
    std::env::set_var("PLANWRIGHT_SECRET_TOKEN", "hunter2");
    std::env::set_var("PLANWRIGHT_EXTRA_ONE", "1");
    std::env::set_var("PLANWRIGHT_PREFIX_A", "a");
    std::env::set_var("PLANWRIGHT_PREFIX_B", "b");
    let env = scrubbed_env(&[
        "PLANWRIGHT_EXTRA_ONE".into(),
        "PLANWRIGHT_PREFIX_*".into(),
        "PATH".into(),
        "PLANWRIGHT_UNSET_VARIABLE".into(),
        "BAD=NAME".into(),
    ]);
    let names: Vec<&str> = env.iter().map(|(n, _)| n.as_str()).collect();
    assert!(!names.contains(&"PLANWRIGHT_SECRET_TOKEN"));
    assert!(!names.contains(&"PLANWRIGHT_UNSET_VARIABLE"));
    assert_eq!(names.iter().filter(|n| **n == "PATH").count(), 1);
    let tail: Vec<(&str, &str)> = env
        .iter()
        .filter(|(n, _)| n.starts_with("PLANWRIGHT_"))
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        tail,
        [
            ("PLANWRIGHT_EXTRA_ONE", "1"),
            ("PLANWRIGHT_PREFIX_A", "a"),
            ("PLANWRIGHT_PREFIX_B", "b")
        ]
    );
    for (name, _) in &env {
        assert!(
            name.starts_with("PLANWRIGHT_")
                || planwright_os::process::ENV_ALLOWLIST.contains(&name.as_str()),
            "{name}"
        );
    }
}

#[test]
fn find_program_finds_sh_on_a_normal_path() {
    let found = find_program("sh", Some(PATH)).expect("sh is installed");
    assert!(found.ends_with("sh"));
    assert_eq!(find_program("planwright-no-such-program", Some(PATH)), None);
}

#[test]
fn a_child_that_closes_its_output_early_is_still_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let spec = sh(
        dir.path(),
        "echo early; exec >&- 2>&-; sleep 0.2; touch finished; exit 4",
    );
    let done = run_ok(&spec);
    assert_eq!(done.exit, Exit::Code(4));
    assert_eq!(done.stdout_tail, "early\n");
    assert!(dir.path().join("finished").exists());
}

#[test]
fn output_that_is_not_utf8_is_kept_in_the_log_and_shown_lossily() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = sh(dir.path(), "printf 'a\\377b'");
    spec.log = Some(dir.path().join("bytes.log"));
    let done = run_ok(&spec);
    assert_eq!(done.stdout_tail, "a\u{fffd}b");
    assert_eq!(
        std::fs::read(dir.path().join("bytes.log")).unwrap(),
        b"a\xffb"
    );
}

#[test]
fn a_log_that_is_a_device_fifo_or_symlink_is_refused_before_the_child_starts() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.log");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let link = dir.path().join("link.log");
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
    for log in [PathBuf::from("/dev/full"), fifo, link] {
        let mut spec = sh(dir.path(), "touch started");
        spec.log = Some(log.clone());
        let err = run(&spec, &Cancel::default()).unwrap_err();
        assert!(matches!(err, ProcessError::Log { .. }), "{err}");
        assert!(err.to_string().contains(&*log.to_string_lossy()), "{err}");
        assert!(!dir.path().join("started").exists(), "{}", log.display());
    }
    assert!(
        !dir.path().join("elsewhere").exists(),
        "the symlink was followed"
    );
}

#[test]
fn stdout_reaches_the_line_sink_line_by_line() {
    use planwright_os::process::LineSink;
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink_seen = seen.clone();
    let mut spec = sh(
        dir.path(),
        "printf 'one\\r\\ntw'; sleep 0.1; printf 'o\\n\\nlast'; echo err >&2",
    );
    spec.lines = Some(LineSink::new(move |l| {
        sink_seen.lock().unwrap().push(l.to_string())
    }));
    run_ok(&spec);
    assert_eq!(*seen.lock().unwrap(), ["one", "two", "", "last"]);
}

#[test]
fn the_log_is_capped_with_a_marker_where_output_was_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("agent.log");
    let mut spec = sh(
        dir.path(),
        "i=0; while [ $i -lt 1000 ]; do echo 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklm; i=$((i+1)); done; echo the-end",
    );
    spec.log = Some(log.clone());
    spec.log_limit = Some(1000);
    let done = run_ok(&spec);
    assert!(done.success());
    assert!(
        done.stdout_tail.ends_with("the-end\n"),
        "the tails see everything"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let (kept, rest) = text.split_at(1000);
    assert!(kept.starts_with("0123456789"), "{kept}");
    assert!(
        rest.starts_with("\n[planwright: the log reached its limit of 1000 bytes; output from here on is dropped]\n"),
        "{rest}"
    );
    // 1000 lines of 96 bytes and `the-end\n`, less the 1000 kept.
    assert!(
        rest.ends_with("[planwright: 95008 more bytes of output were dropped]\n"),
        "{rest}"
    );
    assert!(!text.contains("the-end"));
}

mod confined {
    use super::*;
    use planwright_os::sandbox::{Containment, Mode, Overlay, Policy};

    /// Fails (says why) where Landlock or user namespaces are missing.
    fn enforced() -> Containment {
        Containment::new(Mode::Enforce).unwrap_or_else(|e| panic!("{e}"))
    }

    fn confined(dir: &Path, script: &str, writable: Vec<PathBuf>, network: bool) -> Spec {
        let mut s = sh(dir, script);
        s.confine = Some(enforced().confine(Policy {
            readable: vec![],
            writable,
            network,
            proxy: None,
            overlay: None,
            limits: Default::default(),
        }));
        s
    }

    /// Every path below `dir` with its content (or `/` for a directory).
    fn listing(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            if path.is_dir() {
                out.push(format!("{name}/"));
                out.extend(listing(&path).into_iter().map(|p| format!("{name}/{p}")));
            } else {
                out.push(format!(
                    "{name} {}",
                    std::fs::read_to_string(&path).unwrap_or_default().trim()
                ));
            }
        }
        out.sort();
        out
    }

    /// A child that writes through an overlay sees its writes (and starts
    /// in the overlay whatever its working directory), while the directory
    /// stays as it was for everyone else; nothing else becomes writable,
    /// and the child cannot unmount the overlay to write below it.
    #[test]
    fn a_child_writing_through_an_overlay_leaves_the_directory_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let (lower, layers) = (dir.path().join("checkout"), dir.path().join("layers"));
        for d in [lower.join("sub"), layers.join("upper"), layers.join("work")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(lower.join("kept"), "kept").unwrap();
        std::fs::write(lower.join("changed"), "before").unwrap();
        std::fs::write(lower.join("sub/gone"), "gone").unwrap();
        let before = listing(&lower);
        let mut spec = sh(
            dir.path(),
            "echo after > changed; rm sub/gone; mkdir new; echo n > new/file; \
             echo leak > ../leak || echo denied; test \"$(cat kept)\" = kept && echo read; \
             test \"$(cat changed)\" = after && test ! -e sub/gone && echo seen; \
             umount \"$PWD\" 2>/dev/null || echo mounted; echo under > under",
        );
        spec.confine = Some(enforced().confine(Policy {
            readable: vec![],
            writable: vec![],
            network: false,
            proxy: None,
            overlay: Some(Overlay {
                dir: lower.clone(),
                upper: layers.join("upper"),
                work: layers.join("work"),
            }),
            limits: Default::default(),
        }));
        let done = run_ok(&spec);
        assert!(done.success(), "{done:?}");
        assert_eq!(
            done.stdout_tail.split_whitespace().collect::<Vec<_>>(),
            ["denied", "read", "seen", "mounted"]
        );
        assert_eq!(listing(&lower), before);
        assert!(!dir.path().join("leak").exists());
        assert_eq!(
            std::fs::read_to_string(layers.join("upper/changed")).unwrap(),
            "after\n"
        );
    }

    #[test]
    fn a_confined_child_writes_only_where_it_may() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().join("w");
        std::fs::create_dir_all(&w).unwrap();
        let spec = confined(
            dir.path(),
            "echo ok > w/ok; echo x > /dev/null; echo no > no || echo denied",
            vec![w.clone()],
            true,
        );
        let done = run_ok(&spec);
        assert!(done.success(), "{:?}", done);
        assert!(w.join("ok").is_file());
        assert!(!dir.path().join("no").exists());
        assert!(done.stdout_tail.contains("denied"), "{}", done.stdout_tail);
    }

    #[test]
    fn everything_a_confined_child_started_is_gone_when_it_returns() {
        let dir = tempfile::tempdir().unwrap();
        let spec = confined(
            dir.path(),
            // Its own procfs shows the namespace's pids, not the host's:
            // the daemon is found by its command line instead.
            "setsid sh -c 'exec sleep 1000.713' </dev/null >/dev/null 2>&1 &
             while ! grep -qs '1000[.]713' /proc/[0-9]*/cmdline; do sleep 0.01; done; exit 7",
            vec![dir.path().to_path_buf()],
            true,
        );
        let done = run_ok(&spec);
        assert_eq!(done.exit, Exit::Code(7));
        // No waiting: the PID namespace is gone when `run` returns.
        assert_eq!(pids_running("sleep\x001000.713\x00"), Vec::<String>::new());
    }

    #[test]
    fn a_confined_child_without_network_has_only_loopback() {
        let dir = tempfile::tempdir().unwrap();
        let spec = confined(dir.path(), "cat /proc/net/dev", vec![], false);
        let done = run_ok(&spec);
        let interfaces: Vec<&str> = done
            .stdout_tail
            .lines()
            .filter_map(|l| l.split_once(':').map(|(name, _)| name.trim()))
            .collect();
        assert_eq!(interfaces, ["lo"], "{}", done.stdout_tail);
    }
}

/// A descriptor the parent holds without close-on-exec (as one inherited
/// from a wrapper's `exec 9>>log` would be) is not open in the child: it
/// gets stdin, stdout and stderr only.
#[test]
fn a_child_inherits_no_descriptor_but_its_three() {
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("outside.txt")).unwrap();
    // A number no other descriptor of this test has.
    let outside = rustix::io::fcntl_dupfd_cloexec(&file, 200).unwrap();
    rustix::io::fcntl_setfd(&outside, rustix::io::FdFlags::empty()).unwrap();
    let fd = outside.as_raw_fd();
    let script = format!(
        "(echo leaked >&{fd}) 2>/dev/null; [ -e /proc/self/fd/{fd} ] && echo open; ls /proc/self/fd"
    );
    let done = run_ok(&sh(dir.path(), &script));
    assert!(done.success(), "{done:?}");
    let open: Vec<&str> = done.stdout_tail.split_whitespace().collect();
    // `ls` itself holds one more: the directory it reads.
    assert_eq!(open, ["0", "1", "2", "3"]);
    let written = std::fs::read_to_string(dir.path().join("outside.txt")).unwrap();
    assert_eq!(written, "");
}
