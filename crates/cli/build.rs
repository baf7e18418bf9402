//! Puts the git commit the binary was built from into `--version`.
//!
//! Outside a git checkout (`cargo install` from a packaged crate, a source
//! tarball) or without git, the version is the package version alone: the
//! build must never fail for want of a commit.

use std::path::Path;
use std::process::Command;

fn main() {
    let version = env!("CARGO_PKG_VERSION");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PLANWRIGHT_COMMIT");
    let commit = std::env::var("PLANWRIGHT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(git_commit);
    let full = match commit {
        Some(commit) => format!("{version} ({commit})"),
        None => version.to_string(),
    };
    println!("cargo:rustc-env=PLANWRIGHT_VERSION={full}");
    copy_diagnostics_doc();
}

/// `docs/diagnostics.md` into `OUT_DIR`, for the help of `--output sarif`
/// rules; empty when the crate is built away from the repository.
fn copy_diagnostics_doc() {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/diagnostics.md");
    if doc.exists() {
        println!("cargo:rerun-if-changed={}", doc.display());
    }
    let text = std::fs::read_to_string(&doc).unwrap_or_default();
    let out =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("diagnostics.md");
    std::fs::write(out, text).expect("OUT_DIR is writable");
}

/// The short commit of the checkout this package is in; None when there is
/// no checkout or no git. (Not marked dirty: that would mean watching every
/// file, and rebuilding on each edit.)
fn git_commit() -> Option<String> {
    let dir = std::env::var("CARGO_MANIFEST_DIR").ok()?;
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(&dir)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        out.status.success().then(|| text.trim().to_string())
    };
    // A new commit or checkout changes HEAD's reflog, which reruns this script.
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        for file in ["HEAD", "logs/HEAD"] {
            let path = Path::new(&git_dir).join(file);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    git(&["rev-parse", "--short=12", "HEAD"]).filter(|c| !c.is_empty())
}
