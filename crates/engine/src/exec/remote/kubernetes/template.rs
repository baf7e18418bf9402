//! The user's pod template (`[executor.kubernetes] pod_template`): a
//! pod's YAML whose scheduling fields, labels, annotations and extra
//! volumes the pods get. planwright sets everything that confines an
//! agent (no token, its command, its security context, its deadline); a
//! template that would set any of that, or a field this list does not
//! name, is refused with the field and the fix. The file may be in the
//! repository an agent changes, so what it may set is a list, not what it
//! may not.

use super::labels::{MANAGED_BY, RUN_LABEL, SLOT_LABEL};
use serde_json::{Map, Value};
use std::path::Path;

/// The fields of a pod's `spec` a template may set.
const SPEC_FIELDS: &[&str] = &[
    "tolerations",
    "affinity",
    "priorityClassName",
    "imagePullSecrets",
    "serviceAccountName",
    "volumes",
    "nodeSelector",
    "topologySpreadConstraints",
    "schedulerName",
];

/// Fields planwright sets to confine agents, and why a template may not.
const PLANWRIGHT_SETS: &[(&str, &str)] = &[
    (
        "automountServiceAccountToken",
        "an agent must find no token to call the API with",
    ),
    (
        "securityContext",
        "planwright runs the worker as user 1000, non-root, with the runtime's seccomp profile",
    ),
    ("hostNetwork", "a pod shares nothing with its node"),
    ("hostPID", "a pod shares nothing with its node"),
    ("hostIPC", "a pod shares nothing with its node"),
    ("initContainers", "only planwright's worker runs in the pod"),
    (
        "ephemeralContainers",
        "only planwright's worker runs in the pod",
    ),
    (
        "restartPolicy",
        "a pod is never restarted: its slot gets a new one",
    ),
    (
        "activeDeadlineSeconds",
        "planwright sets the deadline from the agent's timeout",
    ),
    (
        "runtimeClassName",
        "set `[executor.kubernetes] runtime_class`",
    ),
    (
        "enableServiceLinks",
        "an agent gets no addresses of the cluster's services",
    ),
];

/// What a template adds to each pod, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodTemplate {
    /// `metadata.labels`, none of planwright's.
    pub labels: Map<String, Value>,
    /// `metadata.annotations`.
    pub annotations: Map<String, Value>,
    /// The fields of [`SPEC_FIELDS`] it sets.
    pub spec: Map<String, Value>,
    /// The worker container's extra `volumeMounts`.
    pub mounts: Vec<Value>,
}

/// Reads and checks the template at `path`.
pub fn read(path: &Path) -> Result<PodTemplate, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the pod template `{}`: {e}", path.display()))?;
    let value: Value = serde_saphyr::from_str(&text)
        .map_err(|e| format!("the pod template `{}` is not YAML: {e}", path.display()))?;
    parse(&value).map_err(|why| format!("the pod template `{}`: {why}", path.display()))
}

fn object<'v>(v: &'v Value, at: &str) -> Result<&'v Map<String, Value>, String> {
    v.as_object()
        .ok_or_else(|| format!("`{at}` is not a mapping; write it as `{at}:` with keys under it"))
}

/// The template in `value`, a Pod's YAML.
pub fn parse(value: &Value) -> Result<PodTemplate, String> {
    let top = object(value, "the template")?;
    let mut t = PodTemplate::default();
    for (key, v) in top {
        match key.as_str() {
            "apiVersion" if v == "v1" => {}
            "kind" if v == "Pod" => {}
            "apiVersion" | "kind" => {
                return Err(format!("`{key}: {v}`: a pod template is `apiVersion: v1`, `kind: Pod`"))
            }
            "metadata" => metadata(object(v, "metadata")?, &mut t)?,
            "spec" => spec(object(v, "spec")?, &mut t)?,
            _ => {
                return Err(format!(
                    "`{key}` is not part of a pod template; it may have `metadata` (labels, annotations) and `spec`"
                ))
            }
        }
    }
    Ok(t)
}

fn metadata(meta: &Map<String, Value>, t: &mut PodTemplate) -> Result<(), String> {
    for (key, v) in meta {
        match key.as_str() {
            "labels" => t.labels = object(v, "metadata.labels")?.clone(),
            "annotations" => t.annotations = object(v, "metadata.annotations")?.clone(),
            _ => {
                return Err(format!(
                    "`metadata.{key}` is planwright's to set; a template may set `metadata.labels` and `metadata.annotations`"
                ))
            }
        }
    }
    for ours in [MANAGED_BY.0, RUN_LABEL, SLOT_LABEL] {
        if t.labels.contains_key(ours) {
            return Err(format!(
                "the label `{ours}` is planwright's: it finds and deletes its pods by it; choose another key"
            ));
        }
    }
    Ok(())
}

fn spec(spec: &Map<String, Value>, t: &mut PodTemplate) -> Result<(), String> {
    for (key, v) in spec {
        if let Some((_, why)) = PLANWRIGHT_SETS.iter().find(|(k, _)| k == key) {
            return Err(format!(
                "`spec.{key}` is planwright's to set ({why}); remove it from the template"
            ));
        }
        match key.as_str() {
            "containers" => t.mounts = containers(v)?,
            "volumes" => {
                volumes(v)?;
                t.spec.insert(key.clone(), v.clone());
            }
            k if SPEC_FIELDS.contains(&k) => {
                t.spec.insert(key.clone(), v.clone());
            }
            _ => {
                return Err(format!(
                    "`spec.{key}` is not a field a pod template may set; it may set {}, and `volumeMounts` of the container `worker`",
                    SPEC_FIELDS.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
                ))
            }
        }
    }
    let names: Vec<&str> = (t
        .spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(|v| v["name"].as_str())
    .collect();
    for mount in &t.mounts {
        let name = mount["name"].as_str().unwrap_or_default();
        if !names.contains(&name) {
            return Err(format!(
                "the mount of `{name}` names no volume of the template's `spec.volumes`; add the volume, or remove the mount"
            ));
        }
    }
    Ok(())
}

/// The worker container's extra mounts: the template's one container is
/// `worker`, with only `name` and `volumeMounts`, none on the cache.
fn containers(v: &Value) -> Result<Vec<Value>, String> {
    let list = v.as_array().map(Vec::as_slice).unwrap_or_default();
    let [worker] = list else {
        return Err("`spec.containers` must list one container, `worker`, planwright's own".into());
    };
    let mut mounts = Vec::new();
    for (key, v) in object(worker, "spec.containers[0]")? {
        match key.as_str() {
            "name" if v == "worker" => {}
            "name" => return Err(format!("the container `{v}` is not planwright's `worker`; name it `worker`")),
            "volumeMounts" => mounts = v.as_array().cloned().unwrap_or_default(),
            _ => {
                return Err(format!(
                    "the container's `{key}` is planwright's to set (its image, command and security context confine the agent); a template may add `volumeMounts` only"
                ))
            }
        }
    }
    for m in &mounts {
        let path = m["mountPath"].as_str().unwrap_or_default();
        if path == "/planwright" || path.starts_with("/planwright/") || path == "/" {
            return Err(format!(
                "a mount at `{path}` would cover the worker's cache at /planwright; mount it elsewhere"
            ));
        }
    }
    Ok(mounts)
}

/// Extra volumes: none named `cache` (the worker's), none of the node's
/// files, none carrying a service-account token.
fn volumes(v: &Value) -> Result<(), String> {
    for vol in v.as_array().map(Vec::as_slice).unwrap_or_default() {
        let name = vol["name"].as_str().unwrap_or_default();
        if name == "cache" {
            return Err("the volume `cache` is the worker's; name yours another way".into());
        }
        if vol.get("hostPath").is_some() {
            return Err(format!(
                "the volume `{name}` is a `hostPath`: it would give agents the node's files; use a volume of the pod's own"
            ));
        }
        let sources = vol["projected"]["sources"].as_array().map(Vec::as_slice);
        if sources
            .unwrap_or_default()
            .iter()
            .any(|s| s.get("serviceAccountToken").is_some())
        {
            return Err(format!(
                "the volume `{name}` projects a service-account token: an agent could call the API with it; remove it"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_template_sets_what_schedules_a_pod_and_nothing_that_confines_it() {
        let ok = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"labels": {"team": "ml"}, "annotations": {"a": "b"}},
            "spec": {"tolerations": [{"key": "gpu", "operator": "Exists"}],
                "priorityClassName": "batch", "serviceAccountName": "agents",
                "volumes": [{"name": "tools", "configMap": {"name": "tools"}}],
                "containers": [{"name": "worker", "volumeMounts": [{"name": "tools", "mountPath": "/opt/tools"}]}]}});
        let t = parse(&ok).unwrap();
        assert_eq!(t.labels["team"], "ml");
        assert_eq!(t.spec["priorityClassName"], "batch");
        assert_eq!(t.mounts[0]["mountPath"], "/opt/tools");
        for (bad, said) in [
            (
                json!({"spec": {"automountServiceAccountToken": true}}),
                "`spec.automountServiceAccountToken` is planwright's to set",
            ),
            (
                json!({"spec": {"securityContext": {"runAsUser": 0}}}),
                "`spec.securityContext` is planwright's to set",
            ),
            (
                json!({"spec": {"hostNetwork": true}}),
                "`spec.hostNetwork` is planwright's",
            ),
            (
                json!({"spec": {"containers": [{"name": "worker", "command": ["sh"]}]}}),
                "the container's `command` is planwright's to set",
            ),
            (
                json!({"spec": {"containers": [{"name": "worker", "securityContext": {"privileged": true}}]}}),
                "the container's `securityContext`",
            ),
            (
                json!({"spec": {"volumes": [{"name": "root", "hostPath": {"path": "/"}}]}}),
                "`root` is a `hostPath`",
            ),
            (
                json!({"spec": {"volumes": [{"name": "t", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}]}}),
                "projects a service-account token",
            ),
            (
                json!({"metadata": {"labels": {"planwright.dev/run": "x"}}}),
                "the label `planwright.dev/run` is planwright's",
            ),
            (
                json!({"spec": {"dnsPolicy": "None"}}),
                "`spec.dnsPolicy` is not a field a pod template may set",
            ),
            (
                json!({"kind": "Deployment"}),
                "a pod template is `apiVersion: v1`, `kind: Pod`",
            ),
            (
                json!({"spec": {"containers": [{"name": "worker", "volumeMounts": [{"name": "x", "mountPath": "/x"}]}]}}),
                "names no volume",
            ),
        ] {
            let e = parse(&bad).unwrap_err();
            assert!(e.contains(said), "{bad}: {e}");
        }
    }

    #[test]
    fn a_template_file_is_read_as_yaml_and_named_in_its_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pod.yaml");
        std::fs::write(&path, "spec:\n  priorityClassName: batch\n").unwrap();
        assert_eq!(read(&path).unwrap().spec["priorityClassName"], "batch");
        std::fs::write(&path, "spec:\n  hostPID: true\n").unwrap();
        let e = read(&path).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "the pod template `{}`: `spec.hostPID`",
                path.display()
            )),
            "{e}"
        );
    }
}
