//! The labels planwright puts on its pods: it finds, and deletes, its
//! pods by them, so a user's pod template may not set them.

/// The label every pod of planwright's carries.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "planwright");
/// The label naming the runs a pod belongs to (see [`super::run_key`]).
pub const RUN_LABEL: &str = "planwright.dev/run";
/// The label naming the slot a pod serves.
pub const SLOT_LABEL: &str = "planwright.dev/slot";
