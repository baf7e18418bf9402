//! The logs planwright appends to (a ticket's `ticket.log`, a gate's
//! output), in folders an agent or a reviewer may also write.

use crate::error::EngineError;
use std::io::Write;
use std::path::Path;

/// Appends `text` to the log at `path`.
pub(crate) fn append(path: &Path, text: &str) -> Result<(), EngineError> {
    let mut f = planwright_os::beneath::append(path)?;
    f.write_all(text.as_bytes())
        .map_err(|e| EngineError::io(path, e))
}
