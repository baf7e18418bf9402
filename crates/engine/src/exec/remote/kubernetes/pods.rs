//! The pods of a run through the Kubernetes API: made on a slot's first
//! attempt, reused while their deadline leaves room, the worker started in
//! them through pods/exec, and all of them deleted when the run ends.

use super::api::{call, call_once, cancelled, fault, Fault, FaultKind};
use super::manifest::{pod_manifest, PodShape};
use crate::error::EngineError;
use crate::exec::remote::command::last_lines;
use crate::exec::remote::transport::{EndLink, Link, Lost, NoLink, Transport, Wait};
use futures_util::future::{select, Either};
use futures_util::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, AttachParams, AttachedProcess, DeleteParams, ListParams, PostParams};
use kube::api::{WatchEvent, WatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use planwright_os::process::Cancel;
use std::future::Future;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt, ReadHalf, SimplexStream, WriteHalf};

/// The longest a pod may take to be scheduled, pull its image and start.
const POD_START: Duration = Duration::from_secs(5 * 60);
/// The breath between a pod's watch that ended and the next.
const REWATCH: Duration = Duration::from_secs(1);
/// The longest a finished worker's exec stream takes to close.
const EXEC_END: Duration = Duration::from_secs(30);
/// What each of an exec's streams holds in flight: the client's default
/// (1 KiB) would cut a pack into a websocket message per KiB.
const EXEC_BUFFER: usize = 64 * 1024;
/// Reasons a container waits for that no waiting mends.
const STUCK: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
];

/// Workers in pods, one pod per slot.
pub struct KubernetesTransport {
    inner: Arc<Inner>,
}

struct Inner {
    // Declared first, dropped first: the API client's tasks end before
    // the runtime that runs them.
    pods: Api<Pod>,
    namespace: String,
    /// The API server's address, for messages.
    server: String,
    shape: PodShape,
    live: Mutex<Vec<Option<LivePod>>>,
    /// The pod each slot's next connection uses, once it was named (an
    /// attempt's place is said before it connects).
    next: Mutex<Vec<Option<String>>>,
    /// The pods this invocation made, for their names.
    made: AtomicUsize,
    /// The run's Ctrl-C, given at construction so that it cuts calls
    /// before any attempt connected too: once set, every call is tried
    /// once, briefly.
    cancel: Cancel,
    /// Pods of lost workers that could not be deleted yet (the API was out
    /// of reach): deleted at the next contact, and at the end.
    doomed: Mutex<Vec<String>>,
    closed: std::sync::atomic::AtomicBool,
    runtime: tokio::runtime::Runtime,
}

#[derive(Clone)]
struct LivePod {
    name: String,
    since: Instant,
}

fn settings(why: String) -> EngineError {
    EngineError::Settings(why)
}

impl KubernetesTransport {
    /// The transport of `slots` pods shaped as `shape`, on the cluster of
    /// `kubeconfig` (default: `KUBECONFIG`, `~/.kube/config`, or the
    /// account of the pod planwright runs in), its API calls cut short
    /// once `cancel` (the run's Ctrl-C) is set. The pods an earlier
    /// invocation left are deleted first: one may still be running an
    /// attempt its dead coordinator started.
    pub fn new(
        shape: PodShape,
        slots: usize,
        kubeconfig: Option<&Path>,
        cancel: &Cancel,
    ) -> Result<KubernetesTransport, EngineError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("planwright-kube")
            .enable_all()
            .build()
            .map_err(|e| settings(format!("cannot start the Kubernetes client: {e}")))?;
        let config = runtime.block_on(config(kubeconfig))?;
        let namespace =
            (shape.settings.namespace.clone()).unwrap_or_else(|| config.default_namespace.clone());
        let server = config.cluster_url.to_string();
        let server = server.trim_end_matches('/').to_string();
        let client = {
            let _in = runtime.enter();
            Client::try_from(config).map_err(|e| {
                settings(format!(
                    "cannot make a Kubernetes client from the kubeconfig: {e}"
                ))
            })?
        };
        let inner = Inner {
            pods: Api::namespaced(client, &namespace),
            namespace,
            server,
            shape,
            live: Mutex::new(vec![None; slots.max(1)]),
            next: Mutex::new(vec![None; slots.max(1)]),
            made: AtomicUsize::new(0),
            cancel: cancel.clone(),
            doomed: Mutex::default(),
            closed: Default::default(),
            runtime,
        };
        inner.clear_leftovers()?;
        Ok(KubernetesTransport {
            inner: Arc::new(inner),
        })
    }

    /// The namespace the pods are made in.
    pub fn namespace(&self) -> &str {
        &self.inner.namespace
    }
}

/// The client's configuration, from `kubeconfig` or as kubectl finds it.
async fn config(kubeconfig: Option<&Path>) -> Result<Config, EngineError> {
    let Some(path) = kubeconfig else {
        return Config::infer().await.map_err(|e| {
            settings(format!(
                "no Kubernetes cluster to run pods on ({e}); set `KUBECONFIG` to a kubeconfig whose context is the cluster, or write `~/.kube/config`"
            ))
        });
    };
    let file = Kubeconfig::read_from(path).map_err(|e| {
        settings(format!(
            "cannot read the kubeconfig `{}`: {e}; point it at a kubeconfig file",
            path.display()
        ))
    })?;
    Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
        .await
        .map_err(|e| {
            settings(format!(
                "the kubeconfig `{}` names no usable cluster ({e}); set its `current-context`",
                path.display()
            ))
        })
}

/// What the API said, for a message.
fn said(e: &kube::Error) -> String {
    fault(e).0.said
}

impl Inner {
    /// One API call, bounded and tried again while the API server is out
    /// of reach for a moment.
    fn call<T, F>(&self, f: impl Fn() -> F) -> Result<T, Fault>
    where
        F: Future<Output = Result<T, kube::Error>>,
    {
        call(&self.runtime, &self.cancel, f)
    }

    /// Pod `name`'s worker failed: why.
    fn lost(&self, name: &str, reason: String) -> Lost {
        Lost {
            place: pod_place(&self.namespace, name),
            reason,
        }
    }

    /// The pod `slot`'s next connection uses, named now and kept to: its
    /// live one while the deadline leaves room for an attempt, else a new
    /// one's name.
    fn next_pod(&self, slot: usize) -> String {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(name) = &next[slot] {
            return name.clone();
        }
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner())[slot].clone();
        let name = match live {
            Some(pod) if self.fits(&pod) => pod.name,
            _ => {
                let n = self.made.fetch_add(1, Ordering::SeqCst) + 1;
                self.shape.name(slot, n)
            }
        };
        next[slot] = Some(name.clone());
        name
    }

    /// Whether `pod`'s deadline leaves room for one more attempt.
    fn fits(&self, pod: &LivePod) -> bool {
        match (self.shape.deadline(), self.shape.attempt_time()) {
            (Some(deadline), Some(attempt)) => pod.since.elapsed() + attempt <= deadline,
            _ => true,
        }
    }

    /// The pods of these runs that the API lists.
    fn listed(&self) -> Result<Vec<String>, Fault> {
        let lp = ListParams::default().labels(&self.shape.selector());
        let list = self.call(|| self.pods.list(&lp))?;
        Ok(list
            .items
            .into_iter()
            .filter_map(|p| p.metadata.name)
            .collect())
    }

    fn clear_leftovers(&self) -> Result<(), EngineError> {
        let ns = &self.namespace;
        let names = self.listed().map_err(|e| {
            let why = e.explained(&self.server, ns);
            settings(format!("cannot list pods in the namespace `{ns}`: {why}"))
        })?;
        for name in names {
            self.delete(&name).map_err(|e| {
                let why = e.explained(&self.server, ns);
                settings(format!(
                    "cannot delete the pod `{name}` an earlier run left in `{ns}`: {why}"
                ))
            })?;
        }
        Ok(())
    }

    /// Deletes pod `name`; one already gone is no error.
    fn delete(&self, name: &str) -> Result<(), Fault> {
        self.call(|| async {
            match self.pods.delete(name, &DeleteParams::default()).await {
                Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
                r => r.map(|_| ()),
            }
        })
    }

    /// Deletes the pod of a lost worker, which may still run its attempt,
    /// and forgets it as `slot`'s; one the API cannot delete now is
    /// deleted at the next contact or at the end.
    fn doom(&self, slot: usize, name: &str) {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if live[slot].as_ref().is_some_and(|p| p.name == name) {
            live[slot] = None;
        }
        drop(live);
        if self.delete(name).is_err() {
            self.doomed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(name.into());
        }
    }

    /// Deletes the pods [`Inner::doom`] could not; those the API still
    /// refuses stay for the next time.
    fn settle_doomed(&self) {
        let doomed = std::mem::take(&mut *self.doomed.lock().unwrap_or_else(|e| e.into_inner()));
        let left: Vec<String> = doomed
            .into_iter()
            .filter(|n| self.delete(n).is_err())
            .collect();
        self.doomed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(left);
    }

    /// Pod `name`, [`Inner::next_pod`] of `slot`, Running: the slot's live
    /// one, or a new one replacing it.
    fn pod(&self, slot: usize, name: &str, wait: &Wait<'_>) -> Result<(), String> {
        self.settle_doomed();
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner())[slot].clone();
        if let Some(pod) = live {
            if pod.name == name {
                return Ok(());
            }
            let _ = self.delete(&pod.name);
        }
        self.create(slot, name, wait)?;
        self.set_live(slot, Some(name.to_string()));
        Ok(())
    }

    fn set_live(&self, slot: usize, name: Option<String>) {
        let pod = name.map(|name| LivePod {
            name,
            since: Instant::now(),
        });
        self.live.lock().unwrap_or_else(|e| e.into_inner())[slot] = pod;
    }

    /// Makes `slot`'s pod and waits for it to run, saying what it waits
    /// for; `Err(why)`, its pod deleted, when it does not run, or when
    /// `wait` is cancelled first.
    fn create(&self, slot: usize, name: &str, wait: &Wait<'_>) -> Result<(), String> {
        let manifest = pod_manifest(&self.shape, slot, name);
        let pod: Pod = serde_json::from_value(manifest).map_err(|e| e.to_string())?;
        let post = PostParams::default();
        let made = (self.call(|| self.pods.create(&post, &pod)))
            .map_err(|e| format!("could not have its pod made: {e}"))?;
        let version = made.metadata.resource_version.clone().unwrap_or_default();
        let started = self.runtime.block_on(async {
            let run = Box::pin(tokio::time::timeout(
                POD_START,
                self.running(name, version, wait),
            ));
            match select(run, Box::pin(cancelled(wait.cancel))).await {
                Either::Left((Ok(r), _)) => r,
                Either::Left((Err(_), _)) => Err(format!(
                    "had its pod `{name}` not running after {} s",
                    POD_START.as_secs()
                )),
                Either::Right(_) => Err(format!("had its pod `{name}` cancelled before it ran")),
            }
        });
        if let Err(why) = started {
            let _ = self.delete(name);
            return Err(why);
        }
        Ok(())
    }

    /// Watches pod `name` from `version` until it runs, watching again
    /// when a watch ends or breaks on the way (the API server's timeout, a
    /// restart), and tells `wait` what the pod waits for as that changes.
    async fn running(
        &self,
        name: &str,
        mut version: String,
        wait: &Wait<'_>,
    ) -> Result<(), String> {
        let mut told = String::new();
        loop {
            let wp = WatchParams::default()
                .fields(&format!("metadata.name={name}"))
                .timeout(POD_START.as_secs() as u32);
            let mut events = match self.pods.watch(&wp, &version).await {
                Ok(events) => events.boxed(),
                Err(e) if fault(&e).1 => futures_util::stream::empty().boxed(),
                Err(e) => return Err(format!("could not watch its pod: {}", said(&e))),
            };
            while let Some(event) = events.next().await {
                match event {
                    Ok(WatchEvent::Added(pod) | WatchEvent::Modified(pod)) => {
                        if let Some(done) = started(&pod) {
                            return done.map_err(|why| format!("had its pod `{name}` {why}"));
                        }
                        version = pod.metadata.resource_version.clone().unwrap_or(version);
                        let now = waiting_for(&pod);
                        if !now.is_empty() && now != told {
                            (wait.waiting)(&now);
                            told = now;
                        }
                    }
                    Ok(WatchEvent::Deleted(_)) => {
                        return Err(format!("had its pod `{name}` deleted before it ran"))
                    }
                    Ok(WatchEvent::Bookmark(_)) => {}
                    // An expired version (410) or a broken stream: watch again.
                    Ok(WatchEvent::Error(s)) if s.code == 410 => break,
                    Ok(WatchEvent::Error(s)) => {
                        return Err(format!("could not watch its pod: {}", s.message))
                    }
                    Err(e) if fault(&e).1 => break,
                    Err(e) => return Err(format!("could not watch its pod: {}", said(&e))),
                }
            }
            tokio::time::sleep(REWATCH).await;
        }
    }

    /// What became of pod `name` when its stream broke: `Some(why)` when
    /// the pod is gone or ended, which the slot forgets.
    fn gone(&self, slot: usize, name: &str) -> Option<String> {
        let why = match self.call(|| self.pods.get_opt(name)) {
            Ok(None) => format!("its pod `{name}` was deleted"),
            Ok(Some(pod)) => ended(&pod).map(|why| format!("its pod `{name}` {why}"))?,
            Err(_) => return None,
        };
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if live[slot].as_ref().is_some_and(|p| p.name == name) {
            live[slot] = None;
        }
        Some(why)
    }
}

impl Inner {
    /// Starts the worker in pod `name` of `slot`; `Err(why)` when it cannot.
    fn exec(&self, slot: usize, name: &str) -> Result<AttachedProcess, String> {
        self.attach(name, true).map_err(|e| {
            let why = self.gone(slot, name).unwrap_or(e.said);
            format!("could not start the worker: {why}")
        })
    }

    /// A new exec of the worker's command in pod `name`, tried again as
    /// every call is (`again`), or once.
    fn attach(&self, name: &str, again: bool) -> Result<AttachedProcess, Fault> {
        let ap = AttachParams::default()
            .container("worker")
            .stdin(true)
            .stdout(true)
            .stderr(true)
            .max_stdin_buf_size(EXEC_BUFFER)
            .max_stdout_buf_size(EXEC_BUFFER);
        let command = self.shape.settings.command.clone();
        let exec = || self.pods.exec(name, command.clone(), &ap);
        match again {
            true => self.call(exec),
            false => call_once(&self.runtime, &self.cancel, exec),
        }
    }
}

/// The link of the worker `attached` in pod `name` of `slot`.
fn link(
    inner: &Arc<Inner>,
    slot: usize,
    name: String,
    mut attached: AttachedProcess,
) -> Result<Link, Lost> {
    let (Some(stdin), Some(stdout), Some(stderr), Some(status)) = (
        attached.stdin(),
        attached.stdout(),
        attached.stderr(),
        attached.take_status(),
    ) else {
        attached.abort();
        return Err(inner.lost(&name, "gave no standard streams".into()));
    };
    // The exec's task ends without closing the streams when its
    // connection breaks: `ended` tells the streams it is over.
    let (tell, ended) = tokio::sync::watch::channel(false);
    inner.runtime.spawn(async move {
        let _ = status.await;
        let _ = tell.send(true);
    });
    let bridge = |half| Bridged {
        half,
        ended: ended.clone(),
        runtime: inner.runtime.handle().clone(),
    };
    let err = bridge(stderr);
    let said = std::thread::spawn(move || last_lines(err));
    Ok(Link {
        from_worker: Box::new(bridge(stdout)),
        to_worker: Box::new(PodStdin(Bridged {
            half: stdin,
            ended,
            runtime: inner.runtime.handle().clone(),
        })),
        // Each pod has a cache of its own.
        worker_slot: 0,
        end: Box::new(PodEnd {
            inner: inner.clone(),
            slot,
            name,
            attached,
            said,
        }),
    })
}

/// What a pod that has not started waits for, as the cluster says:
/// `Unschedulable: 0/3 nodes are available: ...`, `ContainerCreating`.
fn waiting_for(pod: &Pod) -> String {
    let Some(status) = pod.status.as_ref() else {
        return String::new();
    };
    let unscheduled = (status.conditions.iter().flatten())
        .find(|c| c.type_ == "PodScheduled" && c.status == "False");
    if let Some(c) = unscheduled {
        let reason = c.reason.as_deref().unwrap_or("not scheduled");
        return format!("{reason}: {}", c.message.as_deref().unwrap_or_default())
            .trim_end_matches([':', ' '])
            .to_string();
    }
    let waiting = (status.container_statuses.iter().flatten())
        .find_map(|c| c.state.as_ref()?.waiting.as_ref());
    match waiting {
        Some(w) => format!(
            "{}: {}",
            w.reason.as_deref().unwrap_or("waiting"),
            w.message.as_deref().unwrap_or_default()
        )
        .trim_end_matches([':', ' '])
        .to_string(),
        None => status.phase.clone().unwrap_or_default(),
    }
}

/// Whether `pod` has started: `Ok` running, `Err(why)` never will; `None`
/// not yet.
fn started(pod: &Pod) -> Option<Result<(), String>> {
    if let Some(why) = ended(pod) {
        return Some(Err(why));
    }
    let status = pod.status.as_ref()?;
    if status.phase.as_deref() == Some("Running") {
        return Some(Ok(()));
    }
    let waiting = (status.container_statuses.iter().flatten())
        .filter_map(|c| c.state.as_ref()?.waiting.as_ref())
        .find(|w| w.reason.as_deref().is_some_and(|r| STUCK.contains(&r)))?;
    Some(Err(format!(
        "cannot start its container: {}: {}",
        waiting.reason.as_deref().unwrap_or_default(),
        waiting.message.as_deref().unwrap_or_default()
    )))
}

/// Why `pod` ended (evicted, past its deadline, deleted), if it did.
fn ended(pod: &Pod) -> Option<String> {
    if pod.metadata.deletion_timestamp.is_some() {
        return Some("is being deleted".into());
    }
    let status = pod.status.as_ref()?;
    let phase = status.phase.as_deref()?;
    if !matches!(phase, "Failed" | "Succeeded") {
        return None;
    }
    let reason = status.reason.as_deref().unwrap_or(phase);
    let message = status.message.as_deref().unwrap_or_default();
    Some(format!("ended ({reason}) {message}").trim_end().to_string())
}

/// Every slot's place is the namespace's: the pods are alike (one image,
/// one spec), so preflight greets one of them for all.
fn place(namespace: &str) -> String {
    format!("kubernetes {namespace}")
}

/// The place of an attempt in pod `name`, as kubectl names a pod:
/// `kubernetes agents/planwright-...`.
fn pod_place(namespace: &str, name: &str) -> String {
    format!("kubernetes {namespace}/{name}")
}

impl Transport for KubernetesTransport {
    fn slots(&self) -> usize {
        self.inner
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    fn place(&self, _slot: usize) -> String {
        place(&self.inner.namespace)
    }

    fn attempt_place(&self, slot: usize) -> String {
        match slot < self.slots() {
            true => pod_place(&self.inner.namespace, &self.inner.next_pod(slot)),
            false => self.place(slot),
        }
    }

    fn unreachable_hint(&self, _slot: usize) -> String {
        "check the image has this planwright version on its PATH, and the coordinator's account may create pods and pods/exec there (deploy/kubernetes/role.yaml; docs/scaling.md#kubernetes)".into()
    }

    fn describe(&self) -> String {
        let class = match &self.inner.shape.settings.runtime_class {
            Some(class) => format!("runtime class {class}"),
            None => "the cluster's default runtime".into(),
        };
        format!("pods in {} ({class})", place(&self.inner.namespace))
    }

    fn connect(&self, slot: usize, wait: &Wait<'_>) -> Result<Link, Lost> {
        let inner = &self.inner;
        if slot >= self.slots() {
            return Err(Lost {
                place: self.place(slot),
                reason: format!("has no slot {slot}"),
            });
        }
        // The pod its attempt's place named; the next connection names
        // its own.
        let name = inner.next_pod(slot);
        inner.next.lock().unwrap_or_else(|e| e.into_inner())[slot] = None;
        let lost = |why| inner.lost(&name, why);
        inner.pod(slot, &name, wait).map_err(lost)?;
        let attached = inner.exec(slot, &name).map_err(lost)?;
        link(inner, slot, name, attached)
    }

    /// A pod's exec stream breaks with the API server (a restart, a load
    /// balancer failing over) while its worker goes on: a new exec into
    /// the same pod relays to it.
    fn resumes(&self) -> bool {
        true
    }

    fn reconnect(&self, slot: usize, _wait: &Wait<'_>) -> Result<Link, NoLink> {
        let inner = &self.inner;
        let live = (inner.live.lock().unwrap_or_else(|e| e.into_inner()))
            .get(slot)
            .cloned()
            .flatten();
        let Some(pod) = live else {
            return Err(NoLink::Gone(Lost {
                place: self.place(slot),
                reason: "closed the connection, and its pod is gone".into(),
            }));
        };
        let name = pod.name;
        // Tried once: the executor tries again on its own schedule, within
        // the time the worker keeps the attempt.
        match inner.attach(&name, false) {
            Ok(attached) => link(inner, slot, name, attached).map_err(NoLink::Again),
            Err(e) if e.kind == FaultKind::Unreachable => {
                Err(NoLink::Again(inner.lost(&name, e.said)))
            }
            Err(e) => Err(match inner.gone(slot, &name) {
                // Why is said by the lost link's end, which looks again.
                Some(_) => NoLink::Gone(inner.lost(&name, "closed the connection".into())),
                None => NoLink::Again(inner.lost(&name, e.said)),
            }),
        }
    }

    fn close(&self) {
        let inner = &self.inner;
        if inner.closed.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let mut names: Vec<String> = (inner.live.lock().unwrap_or_else(|e| e.into_inner()))
            .iter_mut()
            .filter_map(|p| p.take().map(|p| p.name))
            .collect();
        // A pod made while its slot's attempt was cut short is listed too.
        names.extend(std::mem::take(
            &mut *inner.doomed.lock().unwrap_or_else(|e| e.into_inner()),
        ));
        for name in inner.listed().unwrap_or_default() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        // Side by side: after Ctrl-C each has a few seconds at most.
        std::thread::scope(|s| {
            for name in &names {
                s.spawn(|| inner.delete(name));
            }
        });
    }
}

impl Drop for KubernetesTransport {
    /// A transport dropped without `close` (preflight's greeting) leaves
    /// no pod behind either.
    fn drop(&mut self) {
        self.close();
    }
}

/// One of an exec's streams, read or written as a blocking stream, which
/// ends once the exec has ended.
struct Bridged<T> {
    half: T,
    ended: tokio::sync::watch::Receiver<bool>,
    runtime: tokio::runtime::Handle,
}

/// `io`, unless the exec ends first: then `io` once more if it is ready at
/// once (what the exec wrote before it ended), else `gone`.
fn race<R>(
    runtime: &tokio::runtime::Handle,
    ended: &mut tokio::sync::watch::Receiver<bool>,
    io: impl Future<Output = R>,
    gone: R,
) -> R {
    runtime.block_on(async {
        let io = Box::pin(io);
        let over = Box::pin(ended.wait_for(|e| *e));
        match select(io, over).await {
            Either::Left((r, _)) => r,
            Either::Right((_, io)) => io.now_or_never().unwrap_or(gone),
        }
    })
}

fn broken() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the exec ended")
}

impl Read for Bridged<ReadHalf<SimplexStream>> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Bridged {
            half,
            ended,
            runtime,
        } = self;
        race(runtime, ended, half.read(buf), Ok(0))
    }
}

impl Write for Bridged<WriteHalf<SimplexStream>> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Bridged {
            half,
            ended,
            runtime,
        } = self;
        race(runtime, ended, half.write(buf), Err(broken()))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let Bridged {
            half,
            ended,
            runtime,
        } = self;
        race(runtime, ended, half.flush(), Err(broken()))
    }
}

/// The worker's standard input; dropping it ends the input, as closing a
/// pipe would (dropping the half alone would not).
struct PodStdin(Bridged<WriteHalf<SimplexStream>>);

impl Write for PodStdin {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl Drop for PodStdin {
    fn drop(&mut self) {
        let Bridged {
            half,
            ended,
            runtime,
        } = &mut self.0;
        let _ = race(runtime, ended, half.shutdown(), Err(broken()));
    }
}

struct PodEnd {
    inner: Arc<Inner>,
    slot: usize,
    name: String,
    attached: AttachedProcess,
    said: std::thread::JoinHandle<Vec<String>>,
}

impl EndLink for PodEnd {
    fn end(self: Box<Self>, kill: bool) -> String {
        let PodEnd {
            inner,
            slot,
            name,
            attached,
            said,
        } = *self;
        if kill {
            attached.abort();
        } else {
            let _ = inner
                .runtime
                .block_on(async { tokio::time::timeout(EXEC_END, attached.join()).await });
        }
        let mut lines = said.join().unwrap_or_default();
        if kill {
            lines.extend(inner.gone(slot, &name));
            // The worker was lost: what it ran may still run in its pod.
            inner.doom(slot, &name);
        }
        lines.join("\n")
    }

    /// The exec broke and a new one into the same pod took its place: the
    /// pod and its worker stay.
    fn leave(self: Box<Self>) {
        self.attached.abort();
    }
}
