//! One call to the Kubernetes API: bounded in time, tried again with
//! back-off while the API server is out of reach for a moment (restarted,
//! a load balancer failing over), and its failure told by what failed: the
//! connection, TLS, the credentials, the Role, or the request itself.

use futures_util::future::{select, Either};
use planwright_os::process::Cancel;
use std::future::Future;
use std::time::Duration;

/// The longest one try of an API call may take.
const API_CALL: Duration = Duration::from_secs(60);

/// The longest one try may take once Ctrl-C was pressed (the grace the
/// executor gives a worker to end), and then no try is repeated: the run
/// is on its way out, and a pod it cannot delete now is deleted by the
/// next run.
const CANCELLED_CALL: Duration = Duration::from_secs(5);

/// The waits before each further try of a call that failed on the way to
/// the API server or with its "unavailable" answers: about 15 s in all,
/// which a restarted kube-apiserver fits in; longer is an outage.
const RETRIES: [Duration; 5] = [
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
];

/// What failed in a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FaultKind {
    /// No answer: the connection failed or broke, or timed out.
    Unreachable,
    /// The TLS handshake failed (the server's certificate, the CA).
    Tls,
    /// 401: the credentials were not accepted.
    Unauthorized,
    /// 403: the account lacks the Role.
    Forbidden,
    /// The API answered with another error.
    Refused,
}

/// A call that failed: what failed, and its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Fault {
    /// What failed.
    pub kind: FaultKind,
    /// What the API or the connection said.
    pub said: String,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.said)
    }
}

impl Fault {
    /// The fault and its fix, for a message about the API server at
    /// `server` and the namespace `namespace`.
    pub(super) fn explained(&self, server: &str, namespace: &str) -> String {
        let said = &self.said;
        match self.kind {
            FaultKind::Unreachable => format!(
                "cannot reach the API server at {server} ({said}); check that the cluster is up and that the kubeconfig's `server` is its address"
            ),
            FaultKind::Tls => format!(
                "TLS with the API server at {server} failed ({said}); check that the kubeconfig's `certificate-authority-data` is the cluster's CA and `server` the name its certificate is for"
            ),
            FaultKind::Unauthorized => format!(
                "the API server at {server} did not accept the coordinator's credentials ({said}); renew the kubeconfig user's token or client certificate (`kubectl auth whoami` shows whether they work)"
            ),
            FaultKind::Forbidden => format!(
                "{said}; give the coordinator's account deploy/kubernetes/role.yaml in `{namespace}`, bound by rolebinding.yaml"
            ),
            FaultKind::Refused => said.clone(),
        }
    }
}

/// Every error of `e`'s chain, joined: the cause of a connection's failure
/// is at its end (`Connection refused`).
fn chain(e: &dyn std::error::Error) -> String {
    let mut words = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !words.contains(&more) {
            words = format!("{words}: {more}");
        }
        source = s.source();
    }
    words
}

/// What failed in `e`, and whether trying again may help.
pub(super) fn fault(e: &kube::Error) -> (Fault, bool) {
    let (kind, said, again) = match e {
        kube::Error::Api(s) => {
            let kind = match s.code {
                401 => FaultKind::Unauthorized,
                403 => FaultKind::Forbidden,
                _ => FaultKind::Refused,
            };
            let again = matches!(s.code, 429 | 500 | 502 | 503 | 504);
            (kind, format!("{} ({})", s.message, s.code), again)
        }
        kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::ReadEvents(_) => {
            let said = chain(e);
            if tls(&said) {
                (FaultKind::Tls, said, false)
            } else {
                (FaultKind::Unreachable, said, true)
            }
        }
        kube::Error::RustlsTls(_) => (FaultKind::Tls, chain(e), false),
        kube::Error::Auth(_) => (FaultKind::Unauthorized, chain(e), false),
        e => (FaultKind::Refused, chain(e), false),
    };
    (Fault { kind, said }, again)
}

/// Whether a connection's failure is TLS's, by its words (the client
/// wraps rustls' errors in its connector's).
fn tls(said: &str) -> bool {
    let said = said.to_ascii_lowercase();
    [
        "certificate",
        "tls",
        "handshake",
        "corrupt message",
        "unknownissuer",
    ]
    .iter()
    .any(|w| said.contains(w))
}

/// `f`'s call on `runtime`, each try bounded, tried again after each of
/// [`RETRIES`] while it fails in a way that waiting may mend, until
/// `cancel` (Ctrl-C) is set: from then on a try is given
/// [`CANCELLED_CALL`] at most, and none follows it.
pub(super) fn call<T, F>(
    runtime: &tokio::runtime::Runtime,
    cancel: &Cancel,
    f: impl Fn() -> F,
) -> Result<T, Fault>
where
    F: Future<Output = Result<T, kube::Error>>,
{
    let mut waits = RETRIES.iter();
    loop {
        let (fault, again) = match try_once(runtime, cancel, &f) {
            Ok(t) => return Ok(t),
            Err(failed) => failed,
        };
        let Some(wait) = waits.next().filter(|_| again && !cancel.is_cancelled()) else {
            return Err(fault);
        };
        let slept = runtime.block_on(async {
            let nap = Box::pin(tokio::time::sleep(*wait));
            matches!(
                select(nap, Box::pin(cancelled(cancel))).await,
                Either::Left(_)
            )
        });
        if !slept {
            return Err(fault);
        }
    }
}

/// `f`'s call on `runtime`, tried once (bounded as each try of [`call`]):
/// for a caller that tries again on its own schedule.
pub(super) fn call_once<T, F>(
    runtime: &tokio::runtime::Runtime,
    cancel: &Cancel,
    f: impl Fn() -> F,
) -> Result<T, Fault>
where
    F: Future<Output = Result<T, kube::Error>>,
{
    try_once(runtime, cancel, &f).map_err(|(fault, _)| fault)
}

/// One bounded try of `f`'s call: its answer, or its fault and whether
/// waiting may mend it (a silent server is not tried again).
fn try_once<T, F>(
    runtime: &tokio::runtime::Runtime,
    cancel: &Cancel,
    f: &impl Fn() -> F,
) -> Result<T, (Fault, bool)>
where
    F: Future<Output = Result<T, kube::Error>>,
{
    match runtime.block_on(bounded(cancel, f())) {
        Ok(t) => Ok(t),
        Err(Try::Failed(e)) => Err(fault(&e)),
        Err(Try::Silent(limit)) => Err((
            Fault {
                kind: FaultKind::Unreachable,
                said: format!("no answer in {} s", limit.as_secs()),
            },
            false,
        )),
    }
}

/// How one try of a call failed.
enum Try {
    /// The API server or the connection said why.
    Failed(kube::Error),
    /// No answer within this long.
    Silent(Duration),
}

/// One try of a call: [`API_CALL`] at most, or [`CANCELLED_CALL`] from
/// Ctrl-C on.
async fn bounded<T>(
    cancel: &Cancel,
    call: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, Try> {
    let limit = if cancel.is_cancelled() {
        CANCELLED_CALL
    } else {
        API_CALL
    };
    let call = Box::pin(tokio::time::timeout(limit, call));
    let cut = Box::pin(async {
        cancelled(cancel).await;
        tokio::time::sleep(CANCELLED_CALL).await;
    });
    match select(call, cut).await {
        Either::Left((Ok(answer), _)) => answer.map_err(Try::Failed),
        Either::Left((Err(_), _)) => Err(Try::Silent(limit)),
        Either::Right(_) => Err(Try::Silent(CANCELLED_CALL)),
    }
}

/// Resolves once `cancel` is set (Ctrl-C), looking every tenth of a second.
pub(super) async fn cancelled(cancel: &Cancel) {
    while !cancel.is_cancelled() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            message: message.into(),
            ..Default::default()
        }))
    }

    /// 401, 403 and a restarting server's 503 are told apart, and only
    /// the 503 is tried again.
    #[test]
    fn an_api_error_says_what_failed() {
        let (f, again) = fault(&status(401, "Unauthorized"));
        assert_eq!((f.kind, again), (FaultKind::Unauthorized, false));
        let m = f.explained("https://k:6443", "ns");
        assert!(m.contains("did not accept the coordinator's credentials (Unauthorized (401))"));
        assert!(!m.contains("role.yaml"), "{m}");
        let (f, again) = fault(&status(403, "pods is forbidden"));
        assert_eq!((f.kind, again), (FaultKind::Forbidden, false));
        assert!(f.explained("s", "ns").contains("role.yaml in `ns`"));
        let (f, again) = fault(&status(503, "the server is shutting down"));
        assert_eq!((f.kind, again), (FaultKind::Refused, true));
    }
}
