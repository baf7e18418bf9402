//! The pod of a slot, as the API receives it: what it may touch is decided
//! here, once, and the unit tests below hold every field of it.

use planwright_config::kubernetes::POD_CACHE;
use planwright_config::KubernetesSettings;
use serde_json::{json, Map, Value};
use std::time::Duration;

pub use super::labels::{MANAGED_BY, RUN_LABEL, SLOT_LABEL};

/// What a pod's deadline gives beyond one attempt's agent time: the
/// set-up, the objects sent both ways, the worker's start, and a window in
/// which a quick attempt leaves the pod to the slot's next one.
const POD_SLACK: Duration = Duration::from_secs(15 * 60);
/// What an attempt needs of a pod's deadline beyond its agent time: the
/// coordinator's own slack over an attempt's limits, past which it gives
/// the worker up anyway.
const ATTEMPT_SLACK: Duration = Duration::from_secs(5 * 60);
/// The pod's only process between attempts: it waits to be exec'd into.
const IDLE: [&str; 2] = ["sleep", "2147483647"];
/// The user and group the worker runs as (the sample image's `worker`).
const WORKER_ID: u32 = 1000;

/// Everything the pods of a transport share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodShape {
    /// `[executor.kubernetes]`, its agent limit included (`None`: no
    /// limit, and no deadline).
    pub settings: KubernetesSettings,
    /// The value of [`RUN_LABEL`].
    pub run_key: String,
    /// What the user's pod template adds (`[executor.kubernetes]
    /// pod_template`), checked.
    pub template: Option<super::template::PodTemplate>,
    /// What tells this invocation's pod names from an earlier one's, whose
    /// pods may still be terminating under theirs (see [`PodShape::name`]).
    pub token: String,
}

impl PodShape {
    /// The pods of `settings`, labelled `run_key`.
    pub fn new(settings: &KubernetesSettings, run_key: String) -> PodShape {
        PodShape {
            settings: settings.clone(),
            run_key,
            template: None,
            token: token(),
        }
    }

    /// The name of the `n`th pod (from 1) this invocation makes, for
    /// `slot`: `planwright-RUN-SLOT-TOKEN-N`. planwright names its pods
    /// itself, rather than leaving it to the API server, so that an
    /// attempt's `attempt_started` names its pod before the pod is made.
    pub fn name(&self, slot: usize, n: usize) -> String {
        match self.token.as_str() {
            "" => format!("planwright-{}-{slot}-{n}", self.run_key),
            token => format!("planwright-{}-{slot}-{token}-{n}", self.run_key),
        }
    }

    /// The time one attempt needs of a pod's deadline: its agent time and
    /// the coordinator's slack. A pod with less left is replaced.
    pub fn attempt_time(&self) -> Option<Duration> {
        self.settings.agent_timeout.map(|t| t + ATTEMPT_SLACK)
    }

    /// `activeDeadlineSeconds`, one attempt's agent time and 15 minutes:
    /// the kubelet ends the pod then, even when the coordinator that
    /// should have deleted it is gone, so a pod never holds its requests
    /// for long past its attempt. (The API lets a deadline only shrink, so
    /// a slot's pod is replaced rather than extended.)
    pub fn deadline(&self) -> Option<Duration> {
        self.settings.agent_timeout.map(|t| t + POD_SLACK)
    }

    /// The label selector of the pods of these runs.
    pub fn selector(&self) -> String {
        format!(
            "{}={},{RUN_LABEL}={}",
            MANAGED_BY.0, MANAGED_BY.1, self.run_key
        )
    }
}

/// Five letters and digits from the clock and the process id: enough that
/// two invocations in one namespace do not pick the same pod names.
fn token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut v = nanos ^ (u64::from(std::process::id()) << 32);
    // Letters and digits a pod name may hold, as the API server's own
    // generated names use.
    const CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5)
        .map(|_| {
            let c = CHARS[(v % CHARS.len() as u64) as usize];
            v /= CHARS.len() as u64;
            c as char
        })
        .collect()
}

/// The pod `name` of `slot`: no service-account token, no service links, no
/// privilege, every capability dropped, non-root, a deadline; secrets only
/// as references the kubelet resolves.
pub fn pod_manifest(shape: &PodShape, slot: usize, name: &str) -> Value {
    let k = &shape.settings;
    let mut spec = json!({
        "automountServiceAccountToken": false,
        "enableServiceLinks": false,
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 5,
        "securityContext": {
            "runAsNonRoot": true,
            "runAsUser": WORKER_ID,
            "runAsGroup": WORKER_ID,
            "fsGroup": WORKER_ID,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container(k)],
        "volumes": [{"name": "cache", "emptyDir": {}}],
    });
    let extra = spec.as_object_mut().expect("a pod spec is an object");
    if let Some(deadline) = shape.deadline() {
        extra.insert("activeDeadlineSeconds".into(), deadline.as_secs().into());
    }
    if let Some(class) = &k.runtime_class {
        extra.insert("runtimeClassName".into(), class.clone().into());
    }
    let template = shape.template.clone().unwrap_or_default();
    // The template's node labels first: `node_selector`'s win.
    let mut selector = match template.spec.get("nodeSelector") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    selector.extend(
        k.node_selector
            .iter()
            .map(|(key, v)| (key.clone(), v.clone().into())),
    );
    if !selector.is_empty() {
        extra.insert("nodeSelector".into(), selector.into());
    }
    for (key, v) in &template.spec {
        match (key.as_str(), extra.get_mut(key)) {
            ("nodeSelector", _) => {}
            ("volumes", Some(Value::Array(ours))) => {
                ours.extend(v.as_array().cloned().unwrap_or_default())
            }
            // The template can set only fields planwright leaves alone.
            (_, None) => {
                extra.insert(key.clone(), v.clone());
            }
            (_, Some(_)) => {}
        }
    }
    if let Some(Value::Array(mounts)) = extra["containers"][0].get_mut("volumeMounts") {
        mounts.extend(template.mounts.iter().cloned());
    }
    let mut labels = template.labels.clone();
    labels.insert(MANAGED_BY.0.into(), MANAGED_BY.1.into());
    labels.insert(RUN_LABEL.into(), shape.run_key.clone().into());
    labels.insert(SLOT_LABEL.into(), slot.to_string().into());
    let mut metadata = json!({
        "name": name,
        "labels": labels,
    });
    if !template.annotations.is_empty() {
        metadata["annotations"] = template.annotations.clone().into();
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": spec,
    })
}

/// The worker's container: the user's image, idle until exec'd into.
fn container(k: &KubernetesSettings) -> Value {
    let mut c = json!({
        "name": "worker",
        "image": k.image,
        "command": IDLE,
        "securityContext": {
            "allowPrivilegeEscalation": false,
            "privileged": false,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": "cache", "mountPath": cache_volume()}],
    });
    let fields = c.as_object_mut().expect("a container is an object");
    if !k.secrets.is_empty() {
        let from: Vec<Value> = (k.secrets.iter())
            .map(|name| json!({"secretRef": {"name": name}}))
            .collect();
        fields.insert("envFrom".into(), from.into());
    }
    if !k.resources.is_empty() {
        let amounts: Map<String, Value> = (k.resources.iter())
            .map(|(name, q)| (name.clone(), q.clone().into()))
            .collect();
        let amounts = Value::from(amounts);
        fields.insert(
            "resources".into(),
            json!({"requests": amounts, "limits": amounts}),
        );
    }
    c
}

/// The folder the cache volume is mounted on: the parent of [`POD_CACHE`].
fn cache_volume() -> &'static str {
    POD_CACHE.rsplit_once('/').map_or(POD_CACHE, |(dir, _)| dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> KubernetesSettings {
        KubernetesSettings {
            image: "reg.example/pw:1".into(),
            namespace: Some("agents".into()),
            resources: Vec::new(),
            node_selector: Default::default(),
            runtime_class: None,
            secrets: Vec::new(),
            command: vec!["planwright".into(), "worker".into()],
            agent_timeout: None,
            kubeconfig: None,
            pod_template: None,
        }
    }

    #[test]
    fn the_plain_pod_is_exactly_this() {
        let mut s = settings();
        s.agent_timeout = Some(Duration::from_secs(600));
        let shape = PodShape::new(&s, "0123".into());
        let expected = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "planwright-0123-2-7",
                "labels": {
                    "app.kubernetes.io/managed-by": "planwright",
                    "planwright.dev/run": "0123",
                    "planwright.dev/slot": "2",
                },
            },
            "spec": {
                "automountServiceAccountToken": false,
                "enableServiceLinks": false,
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 5,
                "securityContext": {
                    "runAsNonRoot": true,
                    "runAsUser": 1000,
                    "runAsGroup": 1000,
                    "fsGroup": 1000,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "containers": [{
                    "name": "worker",
                    "image": "reg.example/pw:1",
                    "command": ["sleep", "2147483647"],
                    "securityContext": {
                        "allowPrivilegeEscalation": false,
                        "privileged": false,
                        "capabilities": {"drop": ["ALL"]},
                    },
                    "volumeMounts": [{"name": "cache", "mountPath": "/planwright"}],
                }],
                "volumes": [{"name": "cache", "emptyDir": {}}],
                // 600 s of agent and 900 s of slack: one attempt.
                "activeDeadlineSeconds": 1500,
            },
        });
        // An invocation's token between the slot and the count.
        let named = shape.name(2, 7);
        let token = (named.strip_prefix("planwright-0123-2-"))
            .and_then(|rest| rest.strip_suffix("-7"))
            .unwrap_or_else(|| panic!("{named}"));
        assert_eq!(token.len(), 5, "{named}");
        assert!(token
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
        let mut shape = shape;
        shape.token = String::new();
        assert_eq!(pod_manifest(&shape, 2, &shape.name(2, 7)), expected);
        assert_eq!(
            shape.selector(),
            "app.kubernetes.io/managed-by=planwright,planwright.dev/run=0123"
        );
    }

    /// A template's fields reach the pod beside planwright's, its node
    /// labels under `node_selector`'s, its volumes after the cache.
    #[test]
    fn a_pod_template_adds_its_fields_under_planwrights() {
        let mut s = settings();
        s.node_selector.insert("pool".into(), "agents".into());
        let mut shape = PodShape::new(&s, "k".into());
        let template = json!({"metadata": {"labels": {"team": "ml"}, "annotations": {"note": "x"}},
            "spec": {"tolerations": [{"key": "gpu", "operator": "Exists"}],
                "priorityClassName": "batch", "imagePullSecrets": [{"name": "reg"}],
                "nodeSelector": {"pool": "theirs", "zone": "a"},
                "volumes": [{"name": "tools", "configMap": {"name": "tools"}}],
                "containers": [{"name": "worker", "volumeMounts": [{"name": "tools", "mountPath": "/opt/tools"}]}]}});
        shape.template = Some(super::super::template::parse(&template).unwrap());
        let pod = pod_manifest(&shape, 0, "p");
        let (meta, spec) = (&pod["metadata"], &pod["spec"]);
        assert_eq!(meta["labels"]["team"], "ml");
        assert_eq!(meta["labels"][RUN_LABEL], "k");
        assert_eq!(meta["annotations"], json!({"note": "x"}));
        assert_eq!(spec["tolerations"][0]["key"], "gpu");
        assert_eq!(spec["priorityClassName"], "batch");
        assert_eq!(spec["imagePullSecrets"], json!([{"name": "reg"}]));
        assert_eq!(spec["nodeSelector"], json!({"pool": "agents", "zone": "a"}));
        assert_eq!(spec["volumes"][0]["name"], "cache");
        assert_eq!(spec["volumes"][1]["name"], "tools");
        let mounts = &spec["containers"][0]["volumeMounts"];
        assert_eq!(mounts[1]["mountPath"], "/opt/tools");
        // What confines the agent stays planwright's.
        assert_eq!(spec["automountServiceAccountToken"], false);
        assert_eq!(spec["containers"][0]["command"], json!(IDLE));
    }

    #[test]
    fn secrets_stay_references_and_the_rest_is_the_users() {
        let mut s = settings();
        s.secrets = vec!["model-keys".into(), "more".into()];
        s.runtime_class = Some("gvisor".into());
        s.node_selector.insert("pool".into(), "agents".into());
        s.resources = vec![("cpu".into(), "2".into()), ("memory".into(), "4Gi".into())];
        let pod = pod_manifest(&PodShape::new(&s, "k".into()), 0, "p");
        let spec = &pod["spec"];
        assert_eq!(spec["runtimeClassName"], "gvisor");
        assert_eq!(spec["nodeSelector"], json!({"pool": "agents"}));
        assert_eq!(
            spec.get("activeDeadlineSeconds"),
            None,
            "no agent limit, no deadline"
        );
        let c = &spec["containers"][0];
        assert_eq!(
            c["envFrom"],
            json!([{"secretRef": {"name": "model-keys"}}, {"secretRef": {"name": "more"}}])
        );
        assert_eq!(c.get("env"), None, "no value is ever copied into the spec");
        let amounts = json!({"cpu": "2", "memory": "4Gi"});
        assert_eq!(
            c["resources"],
            json!({"requests": amounts, "limits": amounts})
        );
    }
}
