//! `[executor.kubernetes]`, checked here against Kubernetes' own rules for
//! names, labels and quantities, so that a bad value is refused with its
//! key before any pod is asked for.

use crate::file::{Kubernetes, Resources};
use crate::resolve::SettingsError;
use crate::settings::KubernetesSettings;

/// The longest DNS label (namespaces, label values).
const LABEL_MAX: usize = 63;
/// The longest DNS subdomain (secrets, runtime classes, label prefixes).
const SUBDOMAIN_MAX: usize = 253;

fn bad(why: String) -> SettingsError {
    SettingsError::Executor(why)
}

/// Where the pod keeps the worker's cache: the volume the pod manifest
/// mounts there.
pub const POD_CACHE: &str = "/planwright/cache";

/// `[executor.kubernetes]` of `kind = "kubernetes"`, the worker started as
/// `command` in the pod (default `planwright worker --cache` [`POD_CACHE`]).
pub(crate) fn resolve(
    table: Option<&Kubernetes>,
    command: Option<&Vec<String>>,
) -> Result<KubernetesSettings, SettingsError> {
    let Some(Kubernetes {
        image,
        namespace,
        resources,
        node_selector,
        runtime_class,
        secrets,
        kubeconfig,
        pod_template,
    }) = table
    else {
        return Err(bad(
            "`kind = \"kubernetes\"` needs `[executor.kubernetes] image = \"...\"`, an image with planwright and the agents' CLIs".into(),
        ));
    };
    let image = match image.as_deref().map(str::trim) {
        Some(i) if !i.is_empty() && !i.contains(char::is_whitespace) => i.to_string(),
        Some(i) if !i.is_empty() => {
            return Err(bad(format!(
                "`[executor.kubernetes] image = \"{i}\"` has a space; write the image reference alone (`registry/name:tag`)"
            )))
        }
        _ => {
            return Err(bad(
                "`[executor.kubernetes] image` is missing or empty; name an image with planwright and the agents' CLIs".into(),
            ))
        }
    };
    if let Some(ns) = namespace {
        label("namespace", ns)?;
    }
    if let Some(class) = runtime_class {
        subdomain("runtime_class", class)?;
    }
    for secret in secrets {
        subdomain("secrets", secret)?;
    }
    for (key, value) in node_selector {
        label_key(key)?;
        label_value(key, value)?;
    }
    Ok(KubernetesSettings {
        image,
        namespace: namespace.clone(),
        resources: quantities(resources.as_ref())?,
        node_selector: node_selector.clone(),
        runtime_class: runtime_class.clone(),
        secrets: secrets.clone(),
        agent_timeout: None,
        kubeconfig: kubeconfig.clone(),
        pod_template: pod_template.clone(),
        command: command.cloned().unwrap_or_else(|| {
            ["planwright", "worker", "--cache", POD_CACHE]
                .map(String::from)
                .into()
        }),
    })
}

/// The resources as Kubernetes names them, each quantity checked.
fn quantities(resources: Option<&Resources>) -> Result<Vec<(String, String)>, SettingsError> {
    let Some(Resources {
        cpu,
        memory,
        ephemeral_storage,
    }) = resources
    else {
        return Ok(Vec::new());
    };
    let named = [
        ("cpu", "cpu", cpu),
        ("memory", "memory", memory),
        ("ephemeral_storage", "ephemeral-storage", ephemeral_storage),
    ];
    let mut out = Vec::new();
    for (key, name, value) in named {
        let Some(value) = value else { continue };
        if !is_quantity(value) {
            return Err(bad(format!(
                "`[executor.kubernetes] resources.{key} = \"{value}\"` is not a Kubernetes quantity; write it like `2`, `500m` or `4Gi`"
            )));
        }
        out.push((name.to_string(), value.clone()));
    }
    Ok(out)
}

/// A quantity: a decimal number and at most one suffix (`500m`, `4Gi`,
/// `1e3`).
fn is_quantity(q: &str) -> bool {
    const SUFFIXES: &[&str] = &[
        "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "m", "k", "M", "G", "T", "P", "E", "",
    ];
    let digits = q.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &q[digits.len()..];
    let (number, suffix) = match q.split_once(['e', 'E']) {
        Some((n, exp)) if !exp.is_empty() && exp.bytes().all(|b| b.is_ascii_digit()) => (n, ""),
        _ => (digits, suffix),
    };
    let mut parts = number.splitn(2, '.');
    let whole = parts.next().unwrap_or("");
    let fraction = parts.next();
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    numeric(whole) && fraction.is_none_or(numeric) && SUFFIXES.contains(&suffix)
}

/// A DNS label: lowercase letters, digits and `-`, alphanumeric at both
/// ends, at most 63 characters.
fn is_label(s: &str, max: usize) -> bool {
    let ok = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    !s.is_empty()
        && s.len() <= max
        && s.bytes().all(|b| ok(b) || b == b'-')
        && s.bytes().next().is_some_and(ok)
        && s.bytes().last().is_some_and(ok)
}

fn label(key: &str, value: &str) -> Result<(), SettingsError> {
    if is_label(value, LABEL_MAX) {
        return Ok(());
    }
    Err(bad(format!(
        "`[executor.kubernetes] {key} = \"{value}\"` is not a Kubernetes name; use at most {LABEL_MAX} lowercase letters, digits and `-`, starting and ending with a letter or digit"
    )))
}

/// A DNS subdomain: labels joined by `.`, at most 253 characters.
fn is_subdomain(s: &str) -> bool {
    s.len() <= SUBDOMAIN_MAX && s.split('.').all(|l| is_label(l, SUBDOMAIN_MAX))
}

fn subdomain(key: &str, value: &str) -> Result<(), SettingsError> {
    if is_subdomain(value) {
        return Ok(());
    }
    Err(bad(format!(
        "`[executor.kubernetes] {key}` names `{value}`, which is not a Kubernetes name; use lowercase letters, digits, `-` and `.`, as the object is named in the cluster"
    )))
}

/// A label's name part, and a label value: letters, digits, `-`, `_`,
/// `.`, alphanumeric at both ends.
fn is_label_name(s: &str, may_be_empty: bool) -> bool {
    let ok = |b: u8| b.is_ascii_alphanumeric();
    if s.is_empty() {
        return may_be_empty;
    }
    s.len() <= LABEL_MAX
        && s.bytes().all(|b| ok(b) || matches!(b, b'-' | b'_' | b'.'))
        && s.bytes().next().is_some_and(ok)
        && s.bytes().last().is_some_and(ok)
}

fn label_key(key: &str) -> Result<(), SettingsError> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if prefix.is_none_or(is_subdomain) && is_label_name(name, false) {
        return Ok(());
    }
    Err(bad(format!(
        "`[executor.kubernetes] node_selector` has the key `{key}`, which is not a label key; write `name` or `prefix/name` as the nodes' labels are written"
    )))
}

fn label_value(key: &str, value: &str) -> Result<(), SettingsError> {
    if is_label_name(value, true) {
        return Ok(());
    }
    Err(bad(format!(
        "`[executor.kubernetes] node_selector.{key} = \"{value}\"` is not a label value; use at most {LABEL_MAX} letters, digits, `-`, `_` and `.`"
    )))
}
