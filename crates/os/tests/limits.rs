//! A confined child's process and memory limits: a fork loop and an
//! allocation past them end with the limit named, and the child's cgroup
//! is gone afterwards. These need a cgroup planwright can make (root on
//! cgroup v1, or a delegated cgroup v2) besides what `confine.rs` needs,
//! and fail (not skip) without.

use planwright_os::process::{run, Cancel, Finished, Spec};
use planwright_os::sandbox::{mechanism, Containment, LimitHit, Limits, Mechanism, Mode, Policy};
use std::path::Path;
use std::time::Duration;

fn enforced() -> Containment {
    Containment::new(Mode::Enforce).unwrap_or_else(|e| panic!("{e}"))
}

/// Fails saying why where no cgroup sees a child's hits.
fn cgroups() -> &'static Mechanism {
    let mechanism = mechanism();
    assert!(
        mechanism.reports_hits(),
        "these tests need a cgroup planwright can make (root on cgroup v1, or a delegated cgroup v2); here: {}",
        mechanism.describe()
    );
    mechanism
}

/// One test's child at a time, so that what is left behind is its.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `sh -c script` in `dir`, confined, with `limits`; and the cgroups of
/// this process left once it ended.
fn limited(dir: &Path, script: &str, limits: Limits) -> (Finished, Vec<String>) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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
            writable: vec![dir.to_path_buf()],
            limits,
            ..Policy::default()
        })),
        log_limit: None,
    };
    let done = run(&spec, &Cancel::default()).expect("the child runs");
    (done, left_behind(mechanism()))
}

/// The cgroups this process made that are still there.
fn left_behind(mechanism: &Mechanism) -> Vec<String> {
    let parents = match mechanism {
        Mechanism::CgroupV2 { parent } => vec![parent.clone()],
        Mechanism::CgroupV1 { pids, memory, .. } => pids.iter().chain(memory).cloned().collect(),
        _ => vec![],
    };
    let mine = format!("planwright-{}-{}-", pid_namespace(), std::process::id());
    parents
        .iter()
        .flat_map(|p| std::fs::read_dir(p).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&mine))
        .collect()
}

fn pid_namespace() -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self/ns/pid").unwrap().ino()
}

#[test]
fn a_fork_loop_stops_at_the_process_limit_and_says_so() {
    cgroups();
    let dir = tempfile::tempdir().unwrap();
    // Without a limit this starts 300 sleepers and exits 0 (the PID
    // namespace ends them); with one, a fork fails and `sh` gives up.
    let script = "i=0; while [ $i -lt 300 ]; do sleep 1000 & i=$((i+1)); done";
    let limits = Limits {
        pids: Some(32),
        memory: None,
    };
    let (done, left) = limited(dir.path(), script, limits);
    assert_eq!(done.limit, Some(LimitHit::Pids(32)), "{done:?}");
    assert!(!done.success(), "{done:?}");
    assert_eq!(
        done.limit.unwrap().to_string(),
        "it reached its limit of 32 processes and threads"
    );
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn an_allocation_past_the_memory_limit_is_killed_and_says_so() {
    cgroups();
    let dir = tempfile::tempdir().unwrap();
    // Doubles a string up to 256 MiB: far past the 32 MiB allowed.
    let script =
        "awk 'BEGIN { s = \"x\"; while (length(s) < 268435456) s = s s; print length(s) }'";
    let limits = Limits {
        pids: None,
        memory: Some(32 << 20),
    };
    let (done, left) = limited(dir.path(), script, limits);
    assert_eq!(done.limit, Some(LimitHit::Memory(32 << 20)), "{done:?}");
    assert!(!done.success(), "{done:?}");
    assert_eq!(
        done.limit.unwrap().to_string(),
        "it ran out of its 32 MiB of memory"
    );
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_child_within_its_limits_hits_none_and_leaves_no_cgroup() {
    cgroups();
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        pids: Some(64),
        memory: Some(256 << 20),
    };
    // Its own cgroup, not planwright's: it sees itself in a child cgroup.
    let (done, left) = limited(dir.path(), "grep -c planwright- /proc/self/cgroup", limits);
    assert!(done.success(), "{done:?}");
    assert_eq!(done.limit, None);
    assert_ne!(done.stdout_tail.trim(), "0", "{done:?}");
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_cgroup_left_by_a_planwright_that_is_gone_is_removed_at_the_next_probe() {
    // A process probes once: this test has a child of its own (this
    // test alone, in a new process) probe after it made the stale cgroup.
    if std::env::var_os("PLANWRIGHT_PROBE_CHILD").is_some() {
        cgroups();
        return;
    }
    let mechanism = cgroups();
    let parent = match mechanism {
        Mechanism::CgroupV2 { parent } => parent.clone(),
        Mechanism::CgroupV1 { pids: Some(p), .. } => p.clone(),
        Mechanism::CgroupV1 {
            memory: Some(m), ..
        } => m.clone(),
        _ => unreachable!("cgroups() checked"),
    };
    // A pid no process has: above the kernel's largest.
    let max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let stale = parent.join(format!("planwright-{}-{}-0", pid_namespace(), max + 1));
    std::fs::create_dir(&stale).unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_cgroup_left_by_a_planwright_that_is_gone_is_removed_at_the_next_probe",
        ])
        .env("PLANWRIGHT_PROBE_CHILD", "1")
        .status()
        .unwrap();
    assert!(status.success());
    let left = stale.exists();
    let _ = std::fs::remove_dir(&stale);
    assert!(!left, "{} is still there", stale.display());
}
