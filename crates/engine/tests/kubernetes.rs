//! `[executor] kind = "kubernetes"` against a mocked API server on
//! loopback (tests/kubernetes/mock.rs): every request in order, the
//! executor contract, a pod evicted mid-attempt, the pods a dead run left,
//! and the errors of a cluster that cannot work. The real-cluster test at
//! the end runs only with `PLANWRIGHT_TEST_KUBECONFIG`.

#[path = "kubernetes/mock.rs"]
mod mock;

use mock::{Cut, MockApi, NAMESPACE};
use planwright_config::KubernetesSettings;
use planwright_engine::agent::Agents;
use planwright_engine::process::Cancel;
use planwright_engine::remote::kubernetes::{KubernetesTransport, PodShape};
use planwright_engine::remote::protocol::WorkerSettings;
use planwright_engine::remote::{RemoteExecutor, Transport, Wait};
use planwright_engine::{Executor, Repo};
use planwright_testkit::contract::{attempt, executor_contract, input, scripted};
use planwright_testkit::Env;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const RUN: &str = "0123456789abcdef";

fn shape() -> PodShape {
    let settings = KubernetesSettings {
        image: "reg.example/planwright-worker:1".into(),
        namespace: None,
        resources: Vec::new(),
        node_selector: Default::default(),
        runtime_class: None,
        secrets: vec!["model-keys".into()],
        command: vec!["planwright".into(), "worker".into()],
        agent_timeout: Some(Duration::from_secs(60)),
        kubeconfig: None,
        pod_template: None,
    };
    let mut shape = PodShape::new(&settings, RUN.into());
    // Names the tests can write: `planwright-RUN-SLOT-N`.
    shape.token = String::new();
    shape
}

/// A transport of `slots` pods on `api`, its kubeconfig in `dir`.
fn transport(api: &MockApi, dir: &Path, slots: usize) -> Result<KubernetesTransport, String> {
    transport_until(api, dir, slots, &Cancel::default())
}

/// As [`transport`], its calls cut short once `cancel` is set.
fn transport_until(
    api: &MockApi,
    dir: &Path,
    slots: usize,
    cancel: &Cancel,
) -> Result<KubernetesTransport, String> {
    let kubeconfig = dir.join("kubeconfig");
    api.kubeconfig(&kubeconfig);
    KubernetesTransport::new(shape(), slots, Some(&kubeconfig), cancel).map_err(|e| e.to_string())
}

fn executor(env: &Env, agents: Agents, t: KubernetesTransport) -> Arc<dyn Executor> {
    let repo = Repo::open(&env.repo()).unwrap();
    Arc::new(
        RemoteExecutor::new(
            Arc::new(t),
            repo,
            agents,
            WorkerSettings::from(&planwright_testkit::settings()),
        )
        .unwrap(),
    )
}

fn pod(slot: usize, n: usize) -> String {
    format!("planwright-{RUN}-{slot}-{n}")
}

#[test]
fn the_kubernetes_executor_keeps_the_contract() {
    executor_contract(&|env: &Env, agents: Agents| {
        let api = MockApi::start(env.root().join("pods"));
        let t = transport(&api, env.root(), 2).unwrap();
        executor(env, agents, t)
    });
}

#[test]
fn a_pod_is_made_watched_to_running_exec_d_into_reused_and_deleted() {
    let env = Env::new(&[("README.md", "base\n")]);
    env.fixture("T1", 0, "a.txt", "a\n");
    env.fixture("T2", 0, "b.txt", "b\n");
    let api = MockApi::start(env.root().join("pods"));
    let exec = executor(
        &env,
        scripted(&env),
        transport(&api, env.root(), 1).unwrap(),
    );
    for ticket in ["T1", "T2"] {
        let c = attempt(exec.as_ref(), 0, &input(&env, ticket, 1));
        assert!(c.commit.is_some(), "{ticket}: {:?}", c.report);
    }
    drop(exec);
    let p = pod(0, 1);
    assert_eq!(
        api.requests(),
        [
            "list".to_string(),
            format!("create {p}"),
            format!("watch {p}"),
            format!("exec {p}"),
            // The second attempt reuses the pod and its warm cache.
            format!("exec {p}"),
            "list".to_string(),
            format!("delete {p}"),
        ]
    );
    assert!(api.state.lock().unwrap().pods.is_empty());
}

/// An attempt whose pod goes as `how` once it has started, then another
/// on the same slot: what the first lost, and every request, in order.
fn cut_mid_attempt(how: Cut) -> (planwright_engine::remote::Lost, Vec<String>) {
    let env = Env::new(&[("README.md", "base\n")]);
    env.fixture("T1", 0, "a.txt", "a\n");
    let api = MockApi::start(env.root().join("pods"));
    let t = transport(&api, env.root(), 1).unwrap();
    let exec = executor(&env, scripted(&env), t);
    *api.cut_next.lock().unwrap() = Some(how);
    let first = attempt(exec.as_ref(), 0, &input(&env, "T1", 1));
    assert_eq!(first.commit, None);
    let lost = first
        .lost
        .expect("a pod gone loses the attempt, not a strike");
    assert_eq!(lost.place, format!("kubernetes {NAMESPACE}/{}", pod(0, 1)));
    let again = attempt(exec.as_ref(), 0, &input(&env, "T1", 2));
    assert!(again.commit.is_some(), "{:?}", again.report);
    drop(exec);
    (lost, api.requests())
}

/// The requests of [`cut_mid_attempt`]: the first pod made, watched,
/// exec'd into, gone as `gone` says; a new exec into it refused, so it is
/// looked up (gone: no more tries), looked up again by the lost worker's
/// end, and deleted, as a lost worker's pod always is; then a second pod.
fn cut_requests(gone: &str) -> Vec<String> {
    let (p1, p2) = (pod(0, 1), pod(0, 2));
    let mut requests = vec![
        "list".to_string(),
        format!("create {p1}"),
        format!("watch {p1}"),
        format!("exec {p1}"),
        format!("{gone} {p1}"),
        format!("exec {p1}"),
        format!("get {p1}"),
    ];
    requests.extend([
        format!("get {p1}"),
        format!("delete {p1}"),
        format!("create {p2}"),
        format!("watch {p2}"),
        format!("exec {p2}"),
        "list".to_string(),
        format!("delete {p2}"),
    ]);
    requests
}

#[test]
fn a_pod_evicted_mid_attempt_is_a_lost_worker_and_the_next_attempt_gets_a_new_pod() {
    let (lost, requests) = cut_mid_attempt(Cut::Evict);
    let said = format!(
        "its pod `{}` ended (Evicted) The node was low on resource: memory",
        pod(0, 1)
    );
    assert!(lost.reason.contains(&said), "{}", lost.reason);
    assert_eq!(requests, cut_requests("evict"));
}

#[test]
fn a_pod_deleted_mid_attempt_is_a_lost_worker_saying_so() {
    let (lost, requests) = cut_mid_attempt(Cut::Delete);
    let said = format!("its pod `{}` was deleted", pod(0, 1));
    assert!(lost.reason.contains(&said), "{}", lost.reason);
    assert_eq!(requests, cut_requests("deleted"));
}

/// The API server restarts in the middle of an attempt: the exec stream
/// breaks, a new exec into the same pod is tried again until the server
/// answers, and its worker relays to the one that kept the attempt, which
/// goes on and lands; the pod is reused and deleted at the end.
#[test]
fn an_api_server_blip_is_resumed_by_a_new_exec_into_the_same_pod() {
    let env = Env::new(&[("README.md", "base\n")]);
    env.fixture("T1", 0, "a.txt", "a\n");
    let api = MockApi::start(env.root().join("pods"));
    let exec = executor(
        &env,
        scripted(&env),
        transport(&api, env.root(), 1).unwrap(),
    );
    *api.cut_next.lock().unwrap() = Some(Cut::Blip);
    let (input, resumed) = noting_resumptions(input(&env, "T1", 1));
    let c = attempt(exec.as_ref(), 0, &input);
    assert!(c.lost.is_none(), "{:?}", c.lost);
    assert!(c.commit.is_some(), "{:?}", c.report);
    assert_eq!(
        resumed.try_iter().collect::<Vec<_>>(),
        ["closed the connection"]
    );
    drop(exec);
    let p = pod(0, 1);
    assert_eq!(
        api.requests(),
        [
            "list".to_string(),
            format!("create {p}"),
            format!("watch {p}"),
            format!("exec {p}"),
            format!("blip {p}"),
            "dropped".to_string(),
            "dropped".to_string(),
            "dropped".to_string(),
            // The same pod: its worker kept the attempt.
            format!("exec {p}"),
            "list".to_string(),
            format!("delete {p}"),
        ]
    );
    assert!(api.state.lock().unwrap().pods.is_empty());
}

/// `input`, its resumptions told to the receiver returned (how each
/// connection broke).
fn noting_resumptions(
    mut input: planwright_engine::AttemptInput,
) -> (
    planwright_engine::AttemptInput,
    std::sync::mpsc::Receiver<String>,
) {
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    input.resumed_sink = Some(planwright_engine::ResumedSink(Arc::new(
        move |why: &str, _| {
            let _ = tx.lock().unwrap().send(why.to_string());
        },
    )));
    (input, rx)
}

/// Ctrl-C while the calls after a broken exec stream are tried again
/// against an API server that drops every connection: the call that was
/// refused is not tried again, the pod's deletion is tried once, and the
/// attempt ends as cancelled, not lost; the pod goes on the way out.
#[test]
fn ctrl_c_cuts_the_api_calls_tried_again_short() {
    let env = Env::new(&[("README.md", "base\n")]);
    env.fixture("T1", 0, "a.txt", "a\n");
    let api = MockApi::start(env.root().join("pods"));
    let cancel = Cancel::default();
    let exec = executor(
        &env,
        scripted(&env),
        transport_until(&api, env.root(), 1, &cancel).unwrap(),
    );
    *api.cut_next.lock().unwrap() = Some(Cut::Outage);
    // The first call after the break is refused: Ctrl-C then.
    let ctrl_c = cancel.clone();
    api.state.lock().unwrap().on_dropped = Some(Box::new(move || ctrl_c.cancel()));
    let none = |_| Ok(());
    let ended = exec
        .attempt(0, &input(&env, "T1", 1), &none, &cancel)
        .unwrap();
    assert_eq!(
        ended.report.outcome,
        planwright_engine::agent::AgentOutcome::Cancelled
    );
    assert!(ended.lost.is_none(), "{:?}", ended.lost);
    let p = pod(0, 1);
    let mut requests = vec![
        "list".to_string(),
        format!("create {p}"),
        format!("watch {p}"),
        format!("exec {p}"),
        format!("outage {p}"),
        // A new exec into the pod, not tried again; the lost worker's end
        // looking the pod up, and deleting it, each tried once.
        "dropped".to_string(),
        "dropped".to_string(),
        "dropped".to_string(),
    ];
    assert_eq!(api.requests(), requests);
    // The server answers again: the run's end deletes the pod.
    api.state.lock().unwrap().down = 0;
    drop(exec);
    requests.extend(["list".to_string(), format!("delete {p}")]);
    assert_eq!(api.requests(), requests);
    assert!(api.state.lock().unwrap().pods.is_empty());
}

/// Ctrl-C before any attempt connected, the API server out of reach: the
/// transport had the run's Ctrl-C from its construction, so closing lists
/// the pods once instead of trying again for about 15 s.
#[test]
fn ctrl_c_before_any_attempt_cuts_the_closing_calls_short() {
    let dir = tempfile::tempdir().unwrap();
    let api = MockApi::start(dir.path().join("pods"));
    let cancel = Cancel::default();
    let t = transport_until(&api, dir.path(), 1, &cancel).unwrap();
    api.state.lock().unwrap().down = usize::MAX;
    std::thread::scope(|s| {
        let closing = s.spawn(|| t.close());
        // The first call of the close is refused: Ctrl-C then.
        while !api.requests().iter().any(|r| r == "dropped") {
            std::thread::yield_now();
        }
        cancel.cancel();
        closing.join().unwrap();
    });
    // The leftovers' listing at construction, then the close's, not tried again.
    assert_eq!(api.requests(), ["list", "dropped"]);
}

/// A run on one slot whose attempt's exec stream breaks (the API server
/// and the pod stay): a second exec into the same pod resumes the
/// attempt, the run says so (`worker_resumed`, naming the pod), and the
/// ticket lands on its first attempt, no worker lost; no pod is left.
#[test]
fn a_run_goes_on_when_its_exec_stream_breaks_resumed_in_the_same_pod() {
    let env = Env::new(&[("README.md", "base\n")]);
    let api = MockApi::start(env.root().join("pods"));
    let events = run_plan(&env, &api, &["A"], Some(Cut::Break), |s| {
        s.jobs = 1;
        s.strikes = 1;
    });
    let names: Vec<String> = events.iter().map(|e| e.name()).collect();
    assert!(!names.iter().any(|n| n == "worker_lost"), "{names:?}");
    let resumed: Vec<_> = (events.iter())
        .filter_map(|e| match e {
            planwright_engine::Event::WorkerResumed {
                place,
                reason,
                attempt,
                ..
            } => Some((place.clone(), reason.clone(), *attempt)),
            _ => None,
        })
        .collect();
    let requests = api.requests();
    // Preflight's greeting's pod, then the attempt's, exec'd into twice.
    let made: Vec<&str> = (requests.iter())
        .filter_map(|r| r.strip_prefix("create "))
        .collect();
    assert_eq!(made.len(), 2, "{requests:?}");
    let place = format!("kubernetes {NAMESPACE}/{}", made[1]);
    assert_eq!(resumed, [(place, "closed the connection".to_string(), 1)]);
    let execs = (requests.iter())
        .filter(|r| **r == format!("exec {}", made[1]))
        .count();
    assert_eq!(execs, 2, "{requests:?}");
    let deleted = requests.iter().filter(|r| r.starts_with("delete ")).count();
    assert_eq!(deleted, 2, "{requests:?}");
    assert!(api.state.lock().unwrap().pods.is_empty(), "{requests:?}");
}

/// The exec stream breaks and no new exec reaches the pod past
/// `lost_after` (the API server refuses them): no new exec resumes the
/// attempt, so the worker is lost, no strike used (`strikes = 1`), and
/// once execs are answered again the ticket lands on a new pod.
#[test]
fn an_attempt_not_resumed_within_lost_after_is_lost_with_no_strike() {
    let env = Env::new(&[("README.md", "base\n")]);
    let api = MockApi::start(env.root().join("pods"));
    let state = api.state.clone();
    let back = Box::new(OnEvent(Box::new(move |e: &planwright_engine::Event| {
        if e.name() == "worker_lost" {
            state.lock().unwrap().down = 0;
        }
    })));
    let events = run_plan_with(&env, &api, &["A"], Some(Cut::ExecOutage), vec![back], |s| {
        s.jobs = 1;
        s.strikes = 1;
        s.worker_link.heartbeat = Duration::from_millis(100);
        s.worker_link.lost_after = Duration::from_secs(1);
        s.worker_link.lost_backoff = Duration::from_millis(100);
        // Should the slot's next exec come before the reporter lets execs
        // through again, that is one more lost worker, not the run's end.
        s.worker_link.max_lost = Some(100);
    });
    let lost: Vec<String> = (events.iter())
        .filter_map(|e| match e {
            planwright_engine::Event::WorkerLost { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert!(!lost.is_empty(), "{events:?}");
    assert!(
        lost[0].contains("closed the connection, and no new one resumed the attempt within 1s (`[executor] lost_after`"),
        "{}",
        lost[0]
    );
    assert!(!events.iter().any(|e| e.name() == "worker_resumed"));
    assert!(api.state.lock().unwrap().pods.is_empty());
}

/// A reporter that calls a function with each event.
struct OnEvent(Box<dyn FnMut(&planwright_engine::Event) + Send>);

impl planwright_engine::Reporter for OnEvent {
    fn report(&mut self, _at: &str, event: &planwright_engine::Event) {
        (self.0)(event);
    }
}

/// A pod template's fields reach the pods the API is asked for; one that
/// would set what confines agents is refused before any call, naming the
/// file and the field.
#[test]
fn a_pod_template_shapes_the_pods_and_may_not_loosen_them() {
    let env = Env::new(&[("README.md", "base\n")]);
    env.fixture("T1", 0, "a.txt", "a\n");
    let api = MockApi::start(env.root().join("pods"));
    let kubeconfig = env.root().join("kubeconfig");
    api.kubeconfig(&kubeconfig);
    let template = env.root().join("pod.yaml");
    let settings = |template: &Path| KubernetesSettings {
        kubeconfig: Some(kubeconfig.clone()),
        pod_template: Some(template.to_path_buf()),
        ..shape().settings
    };
    std::fs::write(
        &template,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    team: ml\nspec:\n  tolerations:\n  - key: gpu\n    operator: Exists\n  priorityClassName: batch\n",
    )
    .unwrap();
    let t = planwright_engine::remote::kubernetes(
        &settings(&template),
        env.root(),
        1,
        &Cancel::default(),
    )
    .unwrap();
    let never = planwright_engine::process::Cancel::default();
    let link = t
        .connect(0, &Wait::quiet(&never))
        .unwrap_or_else(|l| panic!("{l}"));
    let made = api
        .state
        .lock()
        .unwrap()
        .pods
        .values()
        .next()
        .cloned()
        .unwrap();
    assert_eq!(made["metadata"]["labels"]["team"], "ml", "{made}");
    assert_eq!(made["spec"]["tolerations"][0]["key"], "gpu", "{made}");
    assert_eq!(made["spec"]["priorityClassName"], "batch", "{made}");
    assert_eq!(
        made["spec"]["automountServiceAccountToken"], false,
        "{made}"
    );
    drop(link);
    t.close();
    std::fs::write(&template, "spec:\n  automountServiceAccountToken: true\n").unwrap();
    let before = api.requests().len();
    let e = planwright_engine::remote::kubernetes(
        &settings(&template),
        env.root(),
        1,
        &Cancel::default(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains(&format!(
            "the pod template `{}`: `spec.automountServiceAccountToken` is planwright's to set",
            template.display()
        )),
        "{e}"
    );
    assert_eq!(
        api.requests().len(),
        before,
        "no call with a refused template"
    );
}

/// A pod the cluster cannot schedule: its wait says why (once, though the
/// pod is watched again), and Ctrl-C ends the wait with its pod deleted.
#[test]
fn a_pending_pods_wait_says_why_and_ends_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let api = MockApi::start(dir.path().join("pods"));
    let why = "0/1 nodes are available: 1 Insufficient cpu.";
    api.state.lock().unwrap().unschedulable = Some(why.into());
    let t = transport(&api, dir.path(), 1).unwrap();
    let cancel = planwright_engine::process::Cancel::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let said = move |what: &str| {
        let _ = tx.send(what.to_string());
    };
    let wait = Wait {
        cancel: &cancel,
        waiting: &said,
    };
    let lost = std::thread::scope(|s| {
        let connecting = s.spawn(|| t.connect(0, &wait));
        assert_eq!(rx.recv().unwrap(), format!("Unschedulable: {why}"));
        // Watched again at least once before the cancel.
        while api
            .requests()
            .iter()
            .filter(|r| r.starts_with("watch "))
            .count()
            < 2
        {
            std::thread::yield_now();
        }
        cancel.cancel();
        connecting
            .join()
            .unwrap()
            .err()
            .expect("no worker for a cancelled wait")
    });
    let p = pod(0, 1);
    assert_eq!(
        lost.reason,
        format!("had its pod `{p}` cancelled before it ran")
    );
    assert!(rx.try_recv().is_err(), "told once");
    assert_eq!(api.requests().last(), Some(&format!("delete {p}")));
    assert!(api.state.lock().unwrap().pods.is_empty());
}

#[test]
fn credentials_the_api_server_refuses_are_told_from_a_missing_role() {
    let dir = tempfile::tempdir().unwrap();
    let api = MockApi::start(dir.path().join("pods"));
    api.state.lock().unwrap().unauthorized = true;
    let e = transport(&api, dir.path(), 1).err().unwrap();
    assert!(
        e.contains(&format!(
            "cannot list pods in the namespace `agents`: the API server at http://127.0.0.1:{} did not accept the coordinator's credentials (Unauthorized (401)); renew",
            api.port
        )),
        "{e}"
    );
    assert!(!e.contains("role.yaml"), "{e}");
    assert_eq!(api.requests(), ["GET unauthorized"]);
}

#[test]
fn an_api_server_out_of_reach_is_named_with_its_address() {
    let dir = tempfile::tempdir().unwrap();
    let api = MockApi::start(dir.path().join("pods"));
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let kubeconfig = dir.path().join("kubeconfig");
    api.kubeconfig(&kubeconfig);
    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    let text = text.replace(&format!(":{}", api.port), &format!(":{port}"));
    std::fs::write(&kubeconfig, text).unwrap();
    let e = KubernetesTransport::new(shape(), 1, Some(&kubeconfig), &Cancel::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains(&format!(
            "cannot reach the API server at http://127.0.0.1:{port} ("
        )),
        "{e}"
    );
    assert!(e.contains("check that the cluster is up"), "{e}");
    assert!(!e.contains("role.yaml"), "{e}");
}

#[test]
fn a_resumed_run_deletes_the_pods_an_earlier_one_left_and_no_one_elses() {
    let dir = tempfile::tempdir().unwrap();
    let api = MockApi::start(dir.path().join("pods"));
    let ours = json!({"app.kubernetes.io/managed-by": "planwright", "planwright.dev/run": RUN, "planwright.dev/slot": "0"});
    let theirs = json!({"app.kubernetes.io/managed-by": "planwright", "planwright.dev/run": "another", "planwright.dev/slot": "0"});
    api.leave("left-behind", ours);
    api.leave("another-repos", theirs);
    let t = transport(&api, dir.path(), 2).unwrap();
    assert_eq!(api.requests(), ["list", "delete left-behind"]);
    let left: Vec<String> = api.state.lock().unwrap().pods.keys().cloned().collect();
    assert_eq!(left, ["another-repos"]);
    t.close();
    assert_eq!(api.requests(), ["list", "delete left-behind", "list"]);
}

#[test]
fn an_account_without_the_role_is_refused_before_any_pod_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let api = MockApi::start(dir.path().join("pods"));
    api.state.lock().unwrap().forbid = true;
    let e = transport(&api, dir.path(), 1).err().unwrap();
    assert!(
        e.contains("cannot list pods in the namespace `agents`: pods is forbidden"),
        "{e}"
    );
    assert!(e.contains("deploy/kubernetes/role.yaml"), "{e}");
    assert_eq!(api.requests(), ["GET forbidden"]);
}

#[test]
fn a_missing_kubeconfig_names_the_file_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere");
    let e = KubernetesTransport::new(shape(), 1, Some(&missing), &Cancel::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains(&format!(
            "cannot read the kubeconfig `{}`",
            missing.display()
        )),
        "{e}"
    );
    assert!(e.contains("point it at a kubeconfig file"), "{e}");
}

#[test]
fn an_image_that_cannot_be_pulled_is_a_lost_worker_saying_so_and_its_pod_goes() {
    let dir = tempfile::tempdir().unwrap();
    let api = MockApi::start(dir.path().join("pods"));
    api.state.lock().unwrap().bad_image = true;
    let t = transport(&api, dir.path(), 1).unwrap();
    let never = planwright_engine::process::Cancel::default();
    let lost = t
        .connect(0, &Wait::quiet(&never))
        .err()
        .expect("no worker without its image");
    let p = pod(0, 1);
    assert_eq!(
        lost.reason,
        format!(
            "had its pod `{p}` cannot start its container: ErrImagePull: pull access denied for i"
        )
    );
    assert_eq!(
        api.requests(),
        [
            "list".to_string(),
            format!("create {p}"),
            format!("watch {p}"),
            format!("delete {p}")
        ]
    );
}

/// On a real cluster: `PLANWRIGHT_TEST_KUBECONFIG` names its kubeconfig,
/// `PLANWRIGHT_TEST_KUBE_IMAGE` an image with this planwright. With
/// `PLANWRIGHT_REQUIRE_KUBE=1` and no kubeconfig it fails, never skips.
#[test]
#[ignore = "needs a cluster: PLANWRIGHT_TEST_KUBECONFIG"]
fn the_contract_holds_on_a_real_cluster() {
    let Some(kubeconfig) = std::env::var_os("PLANWRIGHT_TEST_KUBECONFIG") else {
        assert!(
            std::env::var("PLANWRIGHT_REQUIRE_KUBE").as_deref() != Ok("1"),
            "PLANWRIGHT_REQUIRE_KUBE=1 but PLANWRIGHT_TEST_KUBECONFIG is not set"
        );
        eprintln!("skipped: PLANWRIGHT_TEST_KUBECONFIG is not set");
        return;
    };
    let image = std::env::var("PLANWRIGHT_TEST_KUBE_IMAGE")
        .expect("PLANWRIGHT_TEST_KUBE_IMAGE names an image with this planwright");
    executor_contract(&|env: &Env, agents: Agents| {
        let mut shape = shape();
        shape.settings.image = image.clone();
        shape.settings.secrets.clear();
        shape.run_key = planwright_engine::remote::kubernetes::run_key(&env.repo());
        let t =
            KubernetesTransport::new(shape, 2, Some(Path::new(&kubeconfig)), &Cancel::default())
                .unwrap();
        executor(env, agents, t)
    });
}

/// deploy/kubernetes/, as the transport needs it: the Role grants what the
/// transport calls and no more, and the NetworkPolicy selects its pods.
#[test]
fn the_deploy_files_grant_what_the_transport_calls_and_select_its_pods() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/kubernetes");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let role = read("role.yaml");
    let rules: Vec<&str> = role
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("resources:") || l.starts_with("verbs:"))
        .collect();
    assert_eq!(
        rules,
        [
            r#"resources: ["pods"]"#,
            r#"verbs: ["create", "get", "list", "watch", "delete"]"#,
            r#"resources: ["pods/exec"]"#,
            r#"verbs: ["create", "get"]"#,
        ]
    );
    let (key, value) = planwright_engine::remote::kubernetes::MANAGED_BY;
    let policy = read("networkpolicy.yaml");
    assert!(
        policy.contains(&format!("      {key}: {value}\n")),
        "{policy}"
    );
    assert!(policy.contains("policyTypes: [\"Ingress\", \"Egress\"]"));
    // No ingress rules at all: an empty list would be dropped by the API
    // server, and every `kubectl apply` would change the object.
    let rules = policy.lines().map(str::trim_start);
    assert!(
        !rules.clone().any(|l| l.starts_with("ingress:")),
        "{policy}"
    );
}

/// Runs a plan of `ids` (each creating `ID.txt`) through pods of `api`,
/// with settings changed by `tune`; every ticket merges. Its events.
fn run_plan(
    env: &Env,
    api: &MockApi,
    ids: &[&str],
    cut: Option<Cut>,
    tune: impl FnOnce(&mut planwright_engine::RunSettings),
) -> Vec<planwright_engine::Event> {
    run_plan_with(env, api, ids, cut, Vec::new(), tune)
}

/// As [`run_plan`], `reporters` told each event too.
fn run_plan_with(
    env: &Env,
    api: &MockApi,
    ids: &[&str],
    cut: Option<Cut>,
    reporters: Vec<Box<dyn planwright_engine::Reporter>>,
    tune: impl FnOnce(&mut planwright_engine::RunSettings),
) -> Vec<planwright_engine::Event> {
    use planwright_testkit::{gate, plan, settings, ticket};
    let tickets: Vec<_> = ids
        .iter()
        .map(|id| {
            env.fixture(id, 0, &format!("{id}.txt"), &format!("{id}\n"));
            ticket(
                id,
                json!([{"pattern": format!("{id}.txt"), "op": "create"}]),
            )
        })
        .collect();
    let plan = plan(json!({"gates": gate(&["true"]), "tickets": tickets}));
    let kubeconfig = env.root().join("kubeconfig");
    api.kubeconfig(&kubeconfig);
    let mut s = settings();
    s.executor = planwright_config::ExecutorSettings::Kubernetes(KubernetesSettings {
        kubeconfig: Some(kubeconfig),
        ..shape().settings
    });
    tune(&mut s);
    let agents = scripted(env);
    let resume = planwright_engine::Resume::default();
    let session = planwright_engine::prepare(&env.repo(), plan, s, resume, &[], &agents)
        .unwrap_or_else(|f| panic!("preflight failed: {:?}", f.checks));
    let cancel = Cancel::default();
    let exec = session.executor(&cancel).unwrap();
    // After preflight, whose greeting runs no attempt to cut.
    *api.cut_next.lock().unwrap() = cut;
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut reporters = reporters;
    reporters.push(Box::new(planwright_engine::Recorder(seen.clone())));
    let summary = planwright_engine::run(session, exec, reporters, &cancel).unwrap();
    assert!(summary.all_merged(), "{summary:?}");
    let events = seen.lock().unwrap().clone();
    events
}

#[test]
fn a_plan_runs_through_pods_and_the_run_leaves_none() {
    let env = Env::new(&[("README.md", "base\n")]);
    let api = MockApi::start(env.root().join("pods"));
    run_plan(&env, &api, &["A", "B"], None, |_| {});
    let files = planwright_testkit::git(&env.repo(), &["ls-tree", "--name-only", "main"]);
    assert_eq!(
        files.lines().collect::<Vec<_>>(),
        ["A.txt", "B.txt", "README.md"]
    );
    let requests = api.requests();
    let made: Vec<&str> = (requests.iter())
        .filter_map(|r| r.strip_prefix("create "))
        .collect();
    let deleted = requests.iter().filter(|r| r.starts_with("delete ")).count();
    assert!(!made.is_empty() && made.len() == deleted, "{requests:?}");
    assert!(api.state.lock().unwrap().pods.is_empty(), "{requests:?}");
}

/// Each attempt's `attempt_started` and `ticket.log` name the pod it ran
/// in, named before the pod was made, as an ssh attempt names its host.
#[test]
fn an_attempt_names_its_pod() {
    let env = Env::new(&[("README.md", "base\n")]);
    let api = MockApi::start(env.root().join("pods"));
    let events = run_plan(&env, &api, &["A"], None, |s| s.jobs = 1);
    let place = events
        .iter()
        .find_map(|e| match e {
            planwright_engine::Event::AttemptStarted { place, .. } => place.clone(),
            _ => None,
        })
        .expect("an attempt started");
    let requests = api.requests();
    // Preflight's greeting's pod, then the attempt's.
    let made: Vec<&str> = (requests.iter())
        .filter_map(|r| r.strip_prefix("create "))
        .collect();
    assert_eq!(made.len(), 2, "{requests:?}");
    let worker = format!("kubernetes {NAMESPACE}/{}", made[1]);
    assert_eq!(place.executor, "kubernetes");
    assert_eq!(place.worker.as_deref(), Some(worker.as_str()));
    assert_eq!(place.slot, 1);
    let log = std::fs::read_to_string(env.run_dir().join("A/ticket.log")).unwrap();
    assert!(
        log.contains(&format!("-- attempt 1 runs on {worker}, slot 1\n")),
        "{log}"
    );
}
