//! What every child of planwright inherits: its stdin, stdout and stderr
//! and no other descriptor (not one the binary itself inherited, as
//! `exec 9>>file; planwright run ...` gives it), no environment of
//! planwright's (`GITHUB_TOKEN` in its own environment stays there), and
//! no sight of processes outside its attempt. Checked from inside the
//! agent, the gate, the reviewer, and the agent of a worker started the
//! same way. These tests need Landlock and user namespaces.

use planwright_testkit::{git, text, write, Env};
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// The value of planwright's token; no child may see it anywhere.
const SECRET: &str = "planwright-secret-value";

/// Prints what the child can reach that it must not: descriptor 9 (and
/// writes to it), planwright's environment in any process it sees, and
/// the test's marker process. The patterns are written so that the
/// probe's own command lines do not match them.
const PROBE: &str = "(echo leaked >&9) 2>/dev/null\n\
    if [ -e /proc/self/fd/9 ]; then echo 'descriptor 9 is open'; fi\n\
    grep -l 'planwright-secret-valu[e]' /proc/[0-9]*/environ 2>/dev/null\n\
    grep -l '424[2].5' /proc/[0-9]*/cmdline 2>/dev/null\n\
    true\n";

/// An environment with the three probing scripts and a plan of one ticket
/// whose gate probes; the agent writes what it found to `a.txt`.
fn probing_env() -> Env {
    let env = Env::new_in(Path::new("/var/tmp"), &[("README.md", "hi\n")]).with_cli(BIN);
    let root = env.root();
    write(root, "probe.sh", PROBE);
    let probe = root.join("probe.sh").display().to_string();
    write(
        root,
        "agent.sh",
        &format!("{{ sh {probe}; echo clean; }} > \"$1/a.txt\"\n"),
    );
    write(
        root,
        "gate.sh",
        &format!("found=$(sh {probe}); [ -z \"$found\" ] || {{ echo \"$found\"; exit 1; }}\n"),
    );
    write(
        root,
        "reviewer.sh",
        &format!(
            "found=$(sh {probe} | tr '\\n' ' ')\n\
             if [ -z \"$found\" ]; then v=ship; else v=block; fi\n\
             printf '{{\"verdict\": \"%s\", \"summary\": \"probe found: %s\", \"findings\": [], \"checks\": []}}' \
             \"$v\" \"$found\" > \"$PLANWRIGHT_VERDICT_FILE\"\n"
        ),
    );
    let gate = root.join("gate.sh").display().to_string();
    let plan = serde_json::json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "probe", "argv": ["sh", gate]}],
        "tickets": [{"id": "A", "title": "a", "body": "make a",
            "scope": [{"pattern": "a.txt", "op": "create"}]}]});
    write(root, "plan.json", &plan.to_string());
    env
}

/// `planwright run` started as `exec 9>>outside.txt; exec planwright ...`,
/// with the token in its environment and a marker process running.
fn run_holding_descriptor_9(env: &Env, config: &str) -> Output {
    write(env.root(), "planwright.toml", config);
    let agent = format!("sh {} {{worktree}}", env.root().join("agent.sh").display());
    let mut marker = Command::new("sleep").arg("4242.5").spawn().unwrap();
    let mut cmd = Command::new("sh");
    env.cli().hermetic(&mut cmd);
    let out = cmd
        .current_dir(env.root())
        .env("GITHUB_TOKEN", SECRET)
        .env("PLANWRIGHT_SECRET", SECRET)
        .args(["-c", "exec 9>>\"$0\"; exec \"$@\"", "outside.txt", BIN])
        .args(["run", "plan.json", "--repo", "repo", "--config"])
        .args(["planwright.toml", "--agent", "cmd", "--agent-cmd", &agent])
        // The gate under test is the run's, not preflight's trial of it.
        .arg("--no-gate-probe")
        .output()
        .unwrap();
    marker.kill().unwrap();
    let _ = marker.wait();
    out
}

fn assert_nothing_reached(env: &Env, out: &Output) {
    let said = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}\n{}", logs(&env.repo()));
    let outside = std::fs::read_to_string(env.root().join("outside.txt")).unwrap();
    assert_eq!(outside, "", "a child wrote through descriptor 9");
    assert_eq!(git(&env.repo(), &["show", "main:a.txt"]), "clean");
}

/// Every log of the run, to say why it failed.
fn logs(repo: &Path) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg("for f in $(find .planwright/runs -name '*.log'); do echo \"== $f\"; cat \"$f\"; done")
        .current_dir(repo)
        .output()
        .unwrap();
    text(&out.stdout)
}

const REVIEWED: &str = "[review]\nagent = \"cmd\"\n";

#[test]
fn agent_gate_and_reviewer_inherit_nothing_of_planwright() {
    let env = probing_env();
    let reviewer = env.root().join("reviewer.sh").display().to_string();
    let config = format!("{REVIEWED}cmd = \"sh {reviewer}\"\n");
    let out = run_holding_descriptor_9(&env, &config);
    assert_nothing_reached(&env, &out);
    let events = std::fs::read_dir(env.repo().join(".planwright/runs"))
        .unwrap()
        .map(|run| std::fs::read_to_string(run.unwrap().path().join("events.jsonl")).unwrap())
        .collect::<String>();
    assert!(events.contains("\"verdict\":\"ship\""), "{events}");
}

/// A worker started as `exec 9>>outside.txt; exec planwright worker` by
/// the executor's command: its agent does not get descriptor 9 either.
#[test]
fn a_workers_agent_inherits_nothing_of_the_worker() {
    let env = probing_env();
    let cache = env.root().join("cache").display().to_string();
    let outside = env.root().join("outside.txt").display().to_string();
    let command = [
        "sh",
        "-c",
        "exec 9>>\"$0\"; exec \"$@\"",
        &outside,
        BIN,
        "worker",
        "--cache",
        &cache,
    ];
    let words: Vec<String> = command.iter().map(|w| format!("{w:?}")).collect();
    let config = format!(
        "[executor]\nkind = \"process\"\ncommand = [{}]\n",
        words.join(", ")
    );
    let out = run_holding_descriptor_9(&env, &config);
    assert_nothing_reached(&env, &out);
}

/// `refuse.py NR PROGRAM ARGS...` runs PROGRAM under a seccomp filter that
/// fails system call NR with `EPERM` (as a container's profile can),
/// inherited by everything it starts.
const REFUSE: &str = r#"import ctypes, os, struct, sys
nr = int(sys.argv[1])
def op(code, k, jt=0, jf=0): return struct.pack("HBBI", code, jt, jf, k)
prog = op(0x20, 0) + op(0x15, nr, 0, 1) + op(0x06, 0x00050000 | 1) + op(0x06, 0x7FFF0000)
buf = ctypes.create_string_buffer(prog)
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fprog = Fprog(len(prog) // 8, ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
    sys.exit("seccomp: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[2], sys.argv[2:])
"#;

/// `landlock_restrict_self`: one number on every architecture (the system
/// call tables agree from 424 on).
const LANDLOCK_RESTRICT_SELF: &str = "446";

/// A kernel whose Landlock passes every check at start but refuses
/// `landlock_restrict_self` to the children: the user learns which step
/// of the sandbox failed and what to do, once, from preflight's trial of
/// the gates and, without it, from the agent's start (not "cannot start
/// `sh`", which reads as if the program were missing).
#[test]
fn a_sandbox_the_kernel_refuses_to_apply_names_the_step_and_the_fix_once() {
    let env = probing_env();
    write(env.root(), "refuse.py", REFUSE);
    let refused = |extra: &[&str]| {
        let mut cmd = Command::new("python3");
        env.cli().hermetic(&mut cmd);
        cmd.current_dir(env.root())
            .args(["refuse.py", LANDLOCK_RESTRICT_SELF, BIN, "run", "plan.json"])
            .args(["--repo", "repo", "--agent", "cmd", "--agent-cmd", "true"])
            .args(extra)
            .output()
            .unwrap()
    };
    let step = "landlock_restrict_self failed: Operation not permitted";
    let hint = "a seccomp filter, a container's security profile";
    for (extra, exit, place) in [
        (
            &[][..],
            1,
            "gate-probe: cannot try the gates on the base commit",
        ),
        (
            &["--no-gate-probe"][..],
            2,
            "error: the sandbox could not be applied to `true`",
        ),
    ] {
        let out = refused(extra);
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(exit), "{said}");
        assert_eq!(said.matches(step).count(), 1, "{said}");
        assert_eq!(said.matches(hint).count(), 1, "{said}");
        assert!(
            said.contains(place) && said.contains("`[sandbox] mode"),
            "{said}"
        );
        assert!(!said.contains("cannot start"), "{said}");
    }
}
