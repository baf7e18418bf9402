//! A Kubernetes API server on loopback, enough of it for the kubernetes
//! transport: pods listed, made, watched to Running, got, deleted, and
//! exec'd into over the websocket of `v5.channel.k8s.io`, where
//! `planwright worker` runs in this process, a cache per pod. It records
//! every request, so a test can assert them in order.

use planwright_engine::remote::{serve, WorkerOptions};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tungstenite::protocol::{Role, WebSocket};
use tungstenite::Message;

pub(crate) const NAMESPACE: &str = "agents";

/// What the API server holds and does.
#[derive(Default)]
pub(crate) struct State {
    pub pods: BTreeMap<String, Value>,
    pub requests: Vec<String>,
    version: u64,
    /// Answer 403 to every request, as an account without the Role.
    pub forbid: bool,
    /// Answer 401 to every request, as to credentials that expired.
    pub unauthorized: bool,
    /// Connections to drop unanswered, as a restarting API server does.
    pub down: usize,
    /// Pods whose image cannot be pulled.
    pub bad_image: bool,
    /// Pods the scheduler cannot place, and why.
    pub unschedulable: Option<String>,
    /// Called as a connection is dropped (a test's Ctrl-C at that moment).
    pub on_dropped: Option<Box<dyn Fn() + Send>>,
    /// `down` drops only pods/exec connections; other calls are answered.
    pub exec_down: bool,
}

/// How a pod goes in the middle of an attempt.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Cut {
    /// The kubelet evicts it: it stays, `Failed` and `Evicted`.
    Evict,
    /// Someone deletes it: it is gone.
    Delete,
    /// Only the exec stream breaks (a load balancer, a proxy): the pod
    /// and its worker stay, and the API server answers as before.
    Break,
    /// The API server restarts: the exec stream breaks, the pod stays,
    /// and the next three connections are dropped unanswered.
    Blip,
    /// As `Blip`, but every connection is dropped until a test sets
    /// `down` back to 0.
    Outage,
    /// As `Outage`, but only pods/exec connections are dropped.
    ExecOutage,
}

pub(crate) struct MockApi {
    pub port: u16,
    pub state: Arc<Mutex<State>>,
    /// Cut the next exec once its attempt has started, as its pod is
    /// evicted or deleted.
    pub cut_next: Arc<Mutex<Option<Cut>>>,
    cache: PathBuf,
}

impl MockApi {
    /// A server whose workers keep their caches under `cache`.
    pub(crate) fn start(cache: PathBuf) -> MockApi {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let api = MockApi {
            port,
            state: Arc::default(),
            cut_next: Arc::default(),
            cache,
        };
        let (state, cut, cache) = (api.state.clone(), api.cut_next.clone(), api.cache.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let conn = Conn {
                    state: state.clone(),
                    cut: cut.clone(),
                    cache: cache.clone(),
                };
                std::thread::spawn(move || conn.serve(stream));
            }
        });
        api
    }

    /// A kubeconfig for this server, written to `path`.
    pub(crate) fn kubeconfig(&self, path: &std::path::Path) {
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: mock\n  cluster:\n    server: http://127.0.0.1:{}\n\
             contexts:\n- name: mock\n  context:\n    cluster: mock\n    user: mock\n    namespace: {NAMESPACE}\n\
             current-context: mock\nusers:\n- name: mock\n  user: {{}}\n",
            self.port
        );
        std::fs::write(path, text).unwrap();
    }

    /// The requests so far, each `verb name`.
    pub(crate) fn requests(&self) -> Vec<String> {
        self.state.lock().unwrap().requests.clone()
    }

    /// A pod left by an earlier run, as the API would list it.
    pub(crate) fn leave(&self, name: &str, labels: Value) {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels, "resourceVersion": "1"},
            "spec": {"containers": [{"name": "worker", "image": "old"}]},
            "status": {"phase": "Running"}});
        self.state.lock().unwrap().pods.insert(name.into(), pod);
    }
}

struct Request {
    method: String,
    path: String,
    query: String,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

fn read_request(r: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut words = line.split_whitespace();
    let method = words.next()?.to_string();
    let target = words.next()?.to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
    }
    assert!(!headers.contains_key("transfer-encoding"), "{headers:?}");
    let len: usize = headers
        .get("content-length")
        .map_or(0, |l| l.parse().unwrap());
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    Some(Request {
        method,
        path: path.to_string(),
        query: query.to_string(),
        headers,
        body,
    })
}

fn query(q: &str, key: &str) -> Option<String> {
    q.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| {
            v.replace("%3D", "=")
                .replace("%2C", ",")
                .replace("%2F", "/")
        })
    })
}

fn respond(s: &mut TcpStream, code: u16, body: &Value) {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {code} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
}

fn status(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code})
}

fn labelled(pod: &Value, selector: &str) -> bool {
    selector.split(',').all(|kv| {
        let (k, v) = kv.split_once('=').unwrap();
        pod["metadata"]["labels"][k] == v
    })
}

struct Conn {
    state: Arc<Mutex<State>>,
    cut: Arc<Mutex<Option<Cut>>>,
    cache: PathBuf,
}

impl Conn {
    fn serve(self, stream: TcpStream) {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut out = stream;
        while let Some(req) = read_request(&mut reader) {
            {
                let mut st = self.state.lock().unwrap();
                let exec = req.headers.get("upgrade").is_some_and(|u| u == "websocket");
                if st.down > 0 && (exec || !st.exec_down) {
                    st.down -= 1;
                    st.requests.push("dropped".into());
                    if let Some(hook) = &st.on_dropped {
                        hook();
                    }
                    return;
                }
            }
            if req.headers.get("upgrade").is_some_and(|u| u == "websocket") {
                return self.exec(req, out);
            }
            let (code, body) = self.answer(&req);
            respond(&mut out, code, &body);
        }
    }

    fn record(&self, what: String) {
        self.state.lock().unwrap().requests.push(what);
    }

    fn answer(&self, req: &Request) -> (u16, Value) {
        let base = format!("/api/v1/namespaces/{NAMESPACE}/pods");
        let name = req
            .path
            .strip_prefix(&format!("{base}/"))
            .map(str::to_string);
        if self.state.lock().unwrap().forbid {
            self.record(format!("{} forbidden", req.method));
            let m = "pods is forbidden: User \"coordinator\" cannot list resource \"pods\"";
            return (403, status(403, "Forbidden", m));
        }
        if self.state.lock().unwrap().unauthorized {
            self.record(format!("{} unauthorized", req.method));
            return (401, status(401, "Unauthorized", "Unauthorized"));
        }
        match (req.method.as_str(), name) {
            ("GET", None) if query(&req.query, "watch").as_deref() == Some("true") => {
                self.watch(req)
            }
            ("GET", None) => self.list(req),
            ("POST", None) => self.create(req),
            ("GET", Some(name)) => self.get(&name),
            ("DELETE", Some(name)) => self.delete(&name),
            _ => panic!("the mock has no answer to {} {}", req.method, req.path),
        }
    }

    fn list(&self, req: &Request) -> (u16, Value) {
        self.record("list".into());
        let selector = query(&req.query, "labelSelector").unwrap_or_default();
        let st = self.state.lock().unwrap();
        let items: Vec<Value> = (st.pods.values())
            .filter(|p| labelled(p, &selector))
            .cloned()
            .collect();
        let list = json!({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": items});
        (200, list)
    }

    fn create(&self, req: &Request) -> (u16, Value) {
        let mut pod: Value = serde_json::from_slice(&req.body).unwrap();
        let mut st = self.state.lock().unwrap();
        st.version += 1;
        // planwright names its pods itself.
        let name = pod["metadata"]["name"].as_str().unwrap().to_string();
        if st.pods.contains_key(&name) {
            st.requests.push(format!("create {name} again"));
            let m = format!("pods \"{name}\" already exists");
            return (409, status(409, "AlreadyExists", &m));
        }
        pod["metadata"]["name"] = name.clone().into();
        pod["metadata"]["resourceVersion"] = st.version.to_string().into();
        pod["status"] = json!({"phase": "Pending"});
        st.pods.insert(name.clone(), pod.clone());
        st.requests.push(format!("create {name}"));
        (201, pod)
    }

    fn watch(&self, req: &Request) -> (u16, Value) {
        let field = query(&req.query, "fieldSelector").unwrap();
        let name = field.strip_prefix("metadata.name=").unwrap().to_string();
        let mut st = self.state.lock().unwrap();
        st.requests.push(format!("watch {name}"));
        let bad = st.bad_image;
        let unschedulable = st.unschedulable.clone();
        let pod = st.pods.get_mut(&name).unwrap();
        pod["status"] = if let Some(why) = unschedulable {
            json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                "reason": "Unschedulable", "message": why}]})
        } else if bad {
            json!({"phase": "Pending", "containerStatuses": [{"name": "worker", "ready": false,
                "restartCount": 0, "image": "i", "imageID": "",
                "state": {"waiting": {"reason": "ErrImagePull", "message": "pull access denied for i"}}}]})
        } else {
            json!({"phase": "Running"})
        };
        // One event and the end of the watch, which kube reads as lines.
        (200, json!({"type": "MODIFIED", "object": pod.clone()}))
    }

    fn get(&self, name: &str) -> (u16, Value) {
        let st = &mut *self.state.lock().unwrap();
        st.requests.push(format!("get {name}"));
        match st.pods.get(name) {
            Some(pod) => (200, pod.clone()),
            None => (
                404,
                status(404, "NotFound", &format!("pods \"{name}\" not found")),
            ),
        }
    }

    fn delete(&self, name: &str) -> (u16, Value) {
        let st = &mut *self.state.lock().unwrap();
        st.requests.push(format!("delete {name}"));
        match st.pods.remove(name) {
            Some(pod) => (200, pod),
            None => (
                404,
                status(404, "NotFound", &format!("pods \"{name}\" not found")),
            ),
        }
    }
}

/// The worker's standard input: what the coordinator sent on channel 0.
struct FromSocket(Receiver<Vec<u8>>, Vec<u8>);

impl Read for FromSocket {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.1.is_empty() {
            match self.0.recv() {
                Ok(bytes) => self.1 = bytes,
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.1.len());
        buf[..n].copy_from_slice(&self.1[..n]);
        self.1.drain(..n);
        Ok(n)
    }
}

/// The worker's standard output, sent on channel 1.
struct ToSocket(Sender<Vec<u8>>);

impl Write for ToSocket {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let sent = self.0.send(buf.to_vec());
        sent.map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn waiting(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(e)
        if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
}

impl Conn {
    fn exec(self, req: Request, mut out: TcpStream) {
        let base = format!("/api/v1/namespaces/{NAMESPACE}/pods/");
        let name = req
            .path
            .strip_prefix(&base)
            .and_then(|p| p.strip_suffix("/exec"));
        let name = name.unwrap().to_string();
        self.record(format!("exec {name}"));
        let running = self
            .state
            .lock()
            .unwrap()
            .pods
            .get(&name)
            .map(|p| p["status"]["phase"] == "Running");
        if running != Some(true) {
            let body = status(404, "NotFound", &format!("pods \"{name}\" not found"));
            return respond(&mut out, 404, &body);
        }
        assert_eq!(query(&req.query, "container").as_deref(), Some("worker"));
        let key = &req.headers["sec-websocket-key"];
        let head = format!(
            "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\
             sec-websocket-accept: {}\r\nsec-websocket-protocol: v5.channel.k8s.io\r\n\r\n",
            tungstenite::handshake::derive_accept_key(key.as_bytes())
        );
        out.write_all(head.as_bytes()).unwrap();
        let (to_worker, input) = channel();
        let (output, from_worker) = channel();
        let options = WorkerOptions {
            cache: self.cache.join(&name),
            unsandboxed: false,
        };
        std::thread::spawn(move || {
            let _ = serve(
                FromSocket(input, Vec::new()),
                Box::new(ToSocket(output)),
                &options,
            );
        });
        // Polls both ways: a websocket is read and written on one thread.
        out.set_read_timeout(Some(Duration::from_millis(10)))
            .unwrap();
        let ws = WebSocket::from_raw_socket(out, Role::Server, None);
        let cut = self.cut.lock().unwrap().take().map(|how| (name, how));
        self.relay(ws, to_worker, from_worker, cut);
    }

    /// Relays between the coordinator and the worker until the worker ends,
    /// or, with `cut`, until the attempt has started: then the pod goes
    /// and the connection with it.
    fn relay(
        &self,
        mut ws: WebSocket<TcpStream>,
        to_worker: Sender<Vec<u8>>,
        from_worker: Receiver<Vec<u8>>,
        cut: Option<(String, Cut)>,
    ) {
        let mut stdin = Some(to_worker);
        let (mut heard, mut attempt) = (false, false);
        loop {
            match ws.read() {
                Ok(Message::Binary(b)) if b.first() == Some(&0) => {
                    attempt |= heard;
                    if let Some(tx) = &stdin {
                        let _ = tx.send(b[1..].to_vec());
                    }
                }
                Ok(Message::Binary(b)) if b[..] == [255, 0] => stdin = None,
                Ok(Message::Close(_)) => return,
                Ok(_) => {}
                Err(e) if waiting(&e) => {}
                Err(_) => return,
            }
            loop {
                match from_worker.try_recv() {
                    Ok(bytes) => {
                        if let (Some((name, how)), true) = (&cut, attempt) {
                            return self.gone(name, *how);
                        }
                        heard = true;
                        let frame = [&[1u8][..], &bytes].concat();
                        ws.send(Message::binary(frame)).unwrap();
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return finish(ws),
                }
            }
        }
    }

    fn gone(&self, name: &str, how: Cut) {
        let mut st = self.state.lock().unwrap();
        if how == Cut::Break {
            st.requests.push(format!("break {name}"));
            return;
        }
        if how == Cut::Blip {
            st.requests.push(format!("blip {name}"));
            st.down = 3;
            return;
        }
        if how == Cut::Outage || how == Cut::ExecOutage {
            st.requests.push(format!("outage {name}"));
            st.down = usize::MAX;
            st.exec_down = how == Cut::ExecOutage;
            return;
        }
        if how == Cut::Delete {
            st.requests.push(format!("deleted {name}"));
            st.pods.remove(name);
            return;
        }
        st.requests.push(format!("evict {name}"));
        let pod = st.pods.get_mut(name).unwrap();
        pod["status"] = json!({"phase": "Failed", "reason": "Evicted",
            "message": "The node was low on resource: memory."});
    }
}

/// The worker ended: its status on channel 3, and the websocket closed.
fn finish(mut ws: WebSocket<TcpStream>) {
    let done = json!({"metadata": {}, "status": "Success"}).to_string();
    let frame = [&[3u8][..], done.as_bytes()].concat();
    let _ = ws.send(Message::binary(frame));
    let _ = ws.close(None);
    loop {
        match ws.read() {
            Err(e) if waiting(&e) => {}
            Err(_) => return,
            Ok(_) => {}
        }
    }
}
