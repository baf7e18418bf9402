//! What a run is configured with: planwright-config resolves the settings
//! and their defaults from flags and `planwright.toml`.

pub use planwright_config::{defaults, RunSettings};
