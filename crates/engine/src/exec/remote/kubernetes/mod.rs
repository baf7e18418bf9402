//! Workers in Kubernetes pods (`[executor] kind = "kubernetes"`, cargo
//! feature `kubernetes`): a pod per slot from the user's image, with no
//! service-account token, the worker protocol over the pods/exec API, and
//! every pod of the run deleted when the run ends (docs/scaling.md).

#[cfg(feature = "kubernetes")]
mod api;
#[cfg(feature = "kubernetes")]
mod labels;
#[cfg(feature = "kubernetes")]
mod manifest;
#[cfg(feature = "kubernetes")]
mod pods;
#[cfg(feature = "kubernetes")]
mod template;

#[cfg(feature = "kubernetes")]
pub use manifest::{pod_manifest, PodShape, MANAGED_BY, RUN_LABEL, SLOT_LABEL};
#[cfg(feature = "kubernetes")]
pub use pods::KubernetesTransport;
#[cfg(feature = "kubernetes")]
pub use template::PodTemplate;

use super::transport::Transport;
use crate::error::EngineError;
use planwright_config::KubernetesSettings;
use planwright_os::process::Cancel;
use std::path::Path;
use std::sync::Arc;

/// The transport of `[executor.kubernetes]` for `slots` pods, labelled
/// as the runs of the repository whose state directory is `state_dir`;
/// the cluster from its kubeconfig; its API calls are cut short once
/// `cancel` (the run's Ctrl-C) is set.
pub fn kubernetes(
    settings: &KubernetesSettings,
    state_dir: &Path,
    slots: usize,
    cancel: &Cancel,
) -> Result<Arc<dyn Transport>, EngineError> {
    #[cfg(feature = "kubernetes")]
    {
        let mut shape = PodShape::new(settings, run_key(state_dir));
        if let Some(path) = &settings.pod_template {
            shape.template = Some(template::read(path).map_err(EngineError::Settings)?);
        }
        let transport =
            KubernetesTransport::new(shape, slots, settings.kubeconfig.as_deref(), cancel)?;
        Ok(Arc::new(transport))
    }
    #[cfg(not(feature = "kubernetes"))]
    {
        let _ = (settings, state_dir, slots, cancel);
        Err(EngineError::Settings(
            "`[executor] kind = \"kubernetes\"` needs a planwright built with the `kubernetes` feature; install it with `cargo install --path crates/cli --features kubernetes`, or choose another `[executor] kind`".into(),
        ))
    }
}

/// The label value that marks the pods of this repository's runs: stable
/// across invocations, so that a resumed run finds the pods an earlier one
/// left (one run per repository at a time holds the run lock).
pub fn run_key(state_dir: &Path) -> String {
    // FNV-1a: the same value from every build, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in state_dir.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}
