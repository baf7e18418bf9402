//! What a confined child cannot reach outside its sandbox: sockets,
//! signals. These tests need Landlock (ABI 6 for the scopes) and
//! unprivileged user namespaces, and fail (not skip) without them.

use planwright_os::process::{run, Cancel, Finished, Spec};
use planwright_os::sandbox::{Containment, Mode, Policy};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Fails (says why) where Landlock or user namespaces are missing.
fn enforced() -> Containment {
    Containment::new(Mode::Enforce).unwrap_or_else(|e| panic!("{e}"))
}

/// `sh -c script` in `dir`, confined to write `writable` only.
fn confined(dir: &Path, script: &str, writable: Vec<PathBuf>, network: bool) -> Finished {
    let spec = Spec {
        argv: ["sh", "-c", script].map(String::from).to_vec(),
        cwd: dir.to_path_buf(),
        env: vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())],
        stdin: None,
        timeout: None,
        grace: Duration::from_millis(200),
        log: None,
        lines: None,
        confine: Some(enforced().confine(Policy {
            readable: vec![],
            writable,
            network,
            proxy: None,
            overlay: None,
            limits: Default::default(),
        })),
        log_limit: None,
    };
    let done = run(&spec, &Cancel::default()).expect("the child runs");
    assert!(done.success(), "{done:?}");
    done
}

/// A python script in `dir` that connects to the unix socket of each
/// argument (`@name` is abstract) and prints `reached` or `refused`.
fn connector(dir: &Path) -> PathBuf {
    let path = dir.join("connect.py");
    std::fs::write(
        &path,
        "import socket, sys\n\
         for a in sys.argv[1:]:\n\
         \x20   s = socket.socket(socket.AF_UNIX)\n\
         \x20   try:\n\
         \x20       s.connect('\\0' + a[1:] if a.startswith('@') else a)\n\
         \x20       print('reached')\n\
         \x20   except OSError:\n\
         \x20       print('refused')\n",
    )
    .unwrap();
    path
}

fn abstract_listener(name: &str) -> UnixListener {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name).unwrap();
    UnixListener::bind_addr(&addr).unwrap()
}

/// With the network (as agents have it), the abstract socket namespace is
/// the host's: Landlock's scope is what keeps a child from sockets made
/// outside, while it still reaches one it made itself.
#[test]
fn a_confined_child_reaches_no_abstract_socket_made_outside() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("planwright-test-{}", std::process::id());
    let _outside = abstract_listener(&name);
    let script = connector(dir.path());
    let own = "import socket, subprocess, sys\n\
               l = socket.socket(socket.AF_UNIX); l.bind('\\0' + sys.argv[1] + '-own'); l.listen()\n\
               subprocess.run(['python3', sys.argv[2], '@' + sys.argv[1] + '-own'])\n";
    std::fs::write(dir.path().join("own.py"), own).unwrap();
    let done = confined(
        dir.path(),
        &format!(
            "python3 {} @{name}; python3 own.py {name} {}",
            script.display(),
            script.display()
        ),
        vec![dir.path().to_path_buf()],
        true,
    );
    assert_eq!(
        done.stdout_tail.split_whitespace().collect::<Vec<_>>(),
        ["refused", "reached"]
    );
}

/// A child signals what it started, never a process outside.
#[test]
fn a_confined_child_signals_its_own_descendants_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut outside = std::process::Command::new("sleep")
        .arg("1000")
        .spawn()
        .unwrap();
    let done = confined(
        dir.path(),
        &format!(
            "kill -TERM {} 2>/dev/null || echo outside-denied; \
             sleep 1000 & kill -TERM $!; wait $!; echo own-ended $?",
            outside.id()
        ),
        vec![dir.path().to_path_buf()],
        true,
    );
    assert_eq!(
        done.stdout_tail.split_whitespace().collect::<Vec<_>>(),
        ["outside-denied", "own-ended", "143"]
    );
    assert!(
        outside.try_wait().unwrap().is_none(),
        "the outside process was signalled"
    );
    outside.kill().unwrap();
    outside.wait().unwrap();
}

/// The run record says which scopes are on.
#[test]
fn the_containment_names_its_scopes() {
    let described = enforced().describe();
    assert!(
        described.contains("scoped signals and abstract sockets"),
        "{described}"
    );
}

/// A pathname socket outside the writable areas, in a directory below
/// `/tmp` that is not the child's, does not exist for it; one in its
/// writable area (also below `/tmp`) is reached, and files there are seen
/// and written.
#[test]
fn a_confined_child_sees_no_socket_outside_its_writable_areas() {
    let outside = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w");
    std::fs::create_dir(&w).unwrap();
    std::fs::write(w.join("seen"), "seen").unwrap();
    let _out = UnixListener::bind(outside.path().join("s")).unwrap();
    let _ins = UnixListener::bind(w.join("s")).unwrap();
    let script = connector(&w);
    let done = confined(
        dir.path(),
        &format!(
            "python3 {} {} {}; test -e {} || echo gone; cat w/seen; echo more >> w/seen",
            script.display(),
            outside.path().join("s").display(),
            w.join("s").display(),
            outside.path().display(),
        ),
        vec![w.clone()],
        true,
    );
    assert_eq!(
        done.stdout_tail.split_whitespace().collect::<Vec<_>>(),
        ["refused", "reached", "gone", "seen"]
    );
    assert_eq!(
        std::fs::read_to_string(w.join("seen")).unwrap(),
        "seenmore\n"
    );
}

/// A temporary directory that no child's view hides: `/var/tmp` is
/// neither `/tmp` nor below `/run` (the build's own folder may lie below
/// `/tmp`, as in a CI clone there).
fn not_hidden() -> tempfile::TempDir {
    tempfile::tempdir_in("/var/tmp").expect("/var/tmp is writable")
}

/// chmod, utimes and extended attributes: `EROFS` outside the writable
/// areas (in a directory below `/tmp` bound back read-only as the child's
/// working directory, and in one that is not hidden at all), allowed inside.
#[test]
fn a_confined_child_changes_no_metadata_outside_its_writable_areas() {
    let dir = tempfile::tempdir().unwrap();
    let visible = not_hidden();
    let w = dir.path().join("w");
    std::fs::create_dir(&w).unwrap();
    let files = [dir.path().join("f"), visible.path().join("f"), w.join("f")];
    for f in &files {
        std::fs::write(f, "x").unwrap();
    }
    std::fs::write(
        w.join("meta.py"),
        "import errno, os, sys\n\
         for f in sys.argv[1:]:\n\
         \x20   for name, op in [('chmod', lambda: os.chmod(f, 0)), ('utime', lambda: os.utime(f, (0, 0))),\n\
         \x20                    ('xattr', lambda: os.setxattr(f, 'user.planwright', b'1'))]:\n\
         \x20       try:\n\
         \x20           op(); print(name, 'ok')\n\
         \x20       except OSError as e:\n\
         \x20           print(name, errno.errorcode[e.errno])\n",
    )
    .unwrap();
    let args: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let done = confined(
        dir.path(),
        &format!("python3 w/meta.py {}", args.join(" ")),
        vec![w.clone()],
        false,
    );
    let lines: Vec<&str> = done.stdout_tail.lines().collect();
    let denied = ["chmod EROFS", "utime EROFS", "xattr EROFS"];
    assert_eq!(lines[..3], denied, "{}", done.stdout_tail);
    assert_eq!(lines[3..6], denied, "{}", done.stdout_tail);
    assert_eq!(lines[6..], ["chmod ok", "utime ok", "xattr ok"]);
    use std::os::unix::fs::PermissionsExt;
    for f in &files[..2] {
        assert_eq!(
            std::fs::metadata(f).unwrap().permissions().mode() & 0o777,
            0o644
        );
    }
}

/// The child cannot take its view apart: unmounting a hidden directory's
/// tmpfs, remounting the tree writable, or clearing its read-only flag
/// (`mount_setattr`) all fail, so what was hidden stays hidden.
#[test]
fn a_confined_child_cannot_undo_its_view() {
    let outside = tempfile::tempdir().unwrap();
    let visible = not_hidden();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(visible.path().join("f"), "x").unwrap();
    std::fs::write(
        dir.path().join("undo.py"),
        "import ctypes\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         attr = (ctypes.c_uint64 * 4)(0, 1, 0, 0)\n\
         rc = libc.syscall(442, -100, b'/', 0x8000, ctypes.byref(attr), 32)\n\
         print('setattr', 'ok' if rc == 0 else 'denied')\n",
    )
    .unwrap();
    let done = confined(
        dir.path(),
        &format!(
            "umount -l /tmp 2>/dev/null && echo umount-ok || echo umount-denied; \
             mount -o remount,bind,rw / 2>/dev/null && echo remount-ok || echo remount-denied; \
             python3 undo.py; test -e {} && echo outside-seen; \
             chmod 600 {} 2>/dev/null && echo chmod-ok || echo chmod-denied",
            outside.path().display(),
            visible.path().join("f").display(),
        ),
        vec![],
        false,
    );
    assert_eq!(
        done.stdout_tail.split_whitespace().collect::<Vec<_>>(),
        [
            "umount-denied",
            "remount-denied",
            "setattr",
            "denied",
            "chmod-denied"
        ]
    );
}

/// A confined child sees the processes of its own attempt only (a procfs
/// of its PID namespace), and none of them shows planwright's
/// environment: not the namespace's init, which is a fork of planwright.
#[test]
fn a_confined_child_sees_no_other_process_and_no_environment_of_planwright() {
    // Cargo puts this in the test binary's environment at its start.
    assert_eq!(std::env::var("CARGO_PKG_NAME").unwrap(), "planwright-os");
    let dir = not_hidden();
    let mut marker = std::process::Command::new("sleep")
        .arg("4242.5")
        .spawn()
        .unwrap();
    let script = "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done > seen.txt; \
                  cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' >> seen.txt; \
                  ls -d /proc/[0-9]* | wc -l > count.txt";
    confined(dir.path(), script, vec![dir.path().to_path_buf()], false);
    marker.kill().unwrap();
    let _ = marker.wait();
    let seen = std::fs::read_to_string(dir.path().join("seen.txt")).unwrap();
    assert!(
        !seen.contains("4242.5"),
        "another process is visible:\n{seen}"
    );
    assert!(
        !seen.contains("CARGO_PKG_NAME=planwright-os"),
        "planwright's environment is visible:\n{seen}"
    );
    let count: u32 = std::fs::read_to_string(dir.path().join("count.txt"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The init, the shell and what it runs: a handful, never the machine's.
    assert!(count <= 6, "{count} processes visible:\n{seen}");
}
