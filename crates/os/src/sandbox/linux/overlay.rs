//! Overlays are overlayfs, mounted over the directory in the child's own
//! mount namespace: what the child writes lands in the upper layer, and
//! [`fold_layer`] reads that layer in overlayfs's own format (whiteouts,
//! opaque directories).

use super::landlock;
use crate::beneath::{BeneathError, Dir, Kind};
use crate::sandbox::{Overlay, SandboxError};
use rustix::fs::{Mode, OFlags};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

/// Data for mounting an [`Overlay`], made before the fork.
#[derive(Debug)]
pub(super) struct OverlaySetup {
    /// The directory the paths of `options` and `target` are relative to.
    base: CString,
    target: CString,
    options: CString,
    /// The overlay's directory, absolute: the child starts there.
    dir: CString,
    /// The Landlock rights the child gets below `dir`.
    access: u64,
}

impl OverlaySetup {
    pub(super) fn new(overlay: &Overlay, access: u64) -> Result<OverlaySetup, SandboxError> {
        let setup = |why: String| SandboxError::Setup(why);
        let base = overlay
            .dir
            .ancestors()
            .find(|a| overlay.upper.starts_with(a) && overlay.work.starts_with(a))
            .unwrap_or(Path::new("/"));
        // Mount options separate with `,` and `:` and escape with `\`:
        // relative paths keep the user's directory names out of them.
        let rel = |p: &Path| match p.strip_prefix(base).ok().and_then(Path::to_str) {
            Some(r) if !r.is_empty() && !r.contains([',', ':', '\\', '=']) => Ok(r.to_string()),
            _ => Err(setup(format!(
                "cannot name `{}` in an overlay's options",
                p.display()
            ))),
        };
        let (dir, upper, work) = (
            rel(&overlay.dir)?,
            rel(&overlay.upper)?,
            rel(&overlay.work)?,
        );
        let c = |s: &[u8]| CString::new(s).map_err(|e| setup(e.to_string()));
        Ok(OverlaySetup {
            base: c(base.as_os_str().as_encoded_bytes())?,
            options: c(
                format!("lowerdir={dir},upperdir={upper},workdir={work},userxattr").as_bytes(),
            )?,
            target: c(dir.as_bytes())?,
            dir: c(overlay.dir.as_os_str().as_encoded_bytes())?,
            access,
        })
    }

    /// In the child, in its new user and mount namespaces: mounts the
    /// overlay, enters it, and lets the child write there.
    pub(super) fn enter(&self, ruleset: Option<&OwnedFd>) -> io::Result<()> {
        rustix::process::chdir(self.base.as_c_str())?;
        rustix::mount::mount(
            c"overlay",
            self.target.as_c_str(),
            c"overlay",
            rustix::mount::MountFlags::empty(),
            self.options.as_c_str(),
        )?;
        rustix::process::chdir(self.dir.as_c_str())?;
        let Some(ruleset) = ruleset else {
            return Ok(());
        };
        // The rule for `dir` the parent made holds the directory under
        // the mount, which Landlock no longer sees on the way up.
        let dir = rustix::fs::open(
            self.dir.as_c_str(),
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        landlock::allow_beneath(ruleset, dir.as_fd(), self.access)
    }
}

/// [`crate::sandbox::fold_layer`] for overlayfs: an entry replaces the one
/// of the same name, a whiteout (a character device 0/0) deletes it, an
/// opaque directory (one the child made anew) replaces the whole
/// directory, and any other directory is merged.
pub(in crate::sandbox) fn fold_layer(upper: &Dir, lower: &Dir) -> Result<(), BeneathError> {
    for name in upper.names()? {
        let Some(entry) = upper.entry(&name)? else {
            continue;
        };
        if entry.kind == Kind::Special && entry.device == 0 {
            lower.remove(&name)?;
            continue;
        }
        let into_dir = lower.entry(&name)?.is_some_and(|e| e.kind == Kind::Dir);
        if entry.kind == Kind::Dir && into_dir {
            let from = upper.dir(&name)?;
            if !opaque(&from) {
                let to = lower.dir(&name)?;
                fold_layer(&from, &to)?;
                to.set_mode(entry.mode)?;
                continue;
            }
        }
        lower.remove(&name)?;
        upper.rename(&name, lower, &name)?;
    }
    Ok(())
}

/// Whether overlayfs marked directory `dir` of an upper layer opaque: it
/// hides everything below it in the lower layer. (`user.`, as the
/// overlay is mounted with `userxattr`.)
fn opaque(dir: &Dir) -> bool {
    dir.xattr("user.overlay.opaque").as_deref() == Some(b"y")
}
