//! A worker's cache: per object format, one object store its slots share
//! (`store.git`, which keeps what coordinators sent) and one repository
//! per slot that borrows the store's objects through `alternates` and
//! holds the slot's workspace, locked while an attempt runs there.

use crate::error::EngineError;
use crate::git::repo::Repo;
use crate::git::transfer::{self, ObjectDir};
use std::fs::File;
use std::path::{Path, PathBuf};

/// Commits the store keeps a ref for: the bases of recent attempts, which
/// the next pack from a coordinator may leave out.
const KEPT: usize = 32;

/// Where the store's refs live.
const KEPT_REFS: &str = "refs/planwright/cache";

/// The cache for one object format.
pub(super) struct WorkerCache {
    root: PathBuf,
    format: String,
}

/// A slot's repository, held for one attempt.
pub(super) struct SlotRepo {
    /// The slot's repository, whose workspace the attempt runs in.
    pub(super) repo: Repo,
    /// Held until the attempt ends: no two coordinators share a slot.
    _lock: File,
}

impl WorkerCache {
    /// The cache under `dir` for repositories of `format`, made when missing.
    pub(super) fn open(dir: &Path, format: &str) -> Result<WorkerCache, EngineError> {
        if !matches!(format, "sha1" | "sha256") {
            return Err(EngineError::Settings(format!(
                "object format `{format}` is neither sha1 nor sha256"
            )));
        }
        let root = dir.join(format);
        std::fs::create_dir_all(&root).map_err(|e| EngineError::io(&root, e))?;
        let cache = WorkerCache {
            root,
            format: format.into(),
        };
        let store = cache.store();
        if !store.is_dir() {
            // Made aside and renamed into place: workers of two slots
            // starting at once must not both write one store's config.
            let aside = cache.root.join(format!("store.git.{}", std::process::id()));
            cache.init(&aside, true)?;
            if std::fs::rename(&aside, &store).is_err() && store.is_dir() {
                let _ = std::fs::remove_dir_all(&aside);
            }
        }
        Ok(cache)
    }

    fn store(&self) -> PathBuf {
        self.root.join("store.git")
    }

    fn init(&self, dir: &Path, bare: bool) -> Result<(), EngineError> {
        transfer::init(dir, &self.format, bare)
    }

    /// Slot `slot`'s repository, or `None` while another attempt holds it.
    pub(super) fn slot(&self, slot: usize) -> Result<Option<SlotRepo>, EngineError> {
        let lock_path = self.root.join(format!("slot-{}.lock", slot + 1));
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| EngineError::io(&lock_path, e))?;
        if !planwright_os::lock::try_exclusive(&lock).map_err(|e| EngineError::io(&lock_path, e))? {
            return Ok(None);
        }
        let dir = self.root.join(format!("slot-{}", slot + 1));
        let alternates = dir.join(".git/objects/info/alternates");
        if !alternates.is_file() {
            self.init(&dir, false)?;
            let objects = self.store().join("objects");
            let line = format!("{}\n", objects.display());
            std::fs::write(&alternates, line).map_err(|e| EngineError::io(&alternates, e))?;
        }
        let repo = Repo::open(&dir)?;
        Ok(Some(SlotRepo { repo, _lock: lock }))
    }

    /// Which of `commits` the store lacks.
    pub(super) fn lacks(&self, commits: &[&str]) -> Result<Vec<String>, EngineError> {
        let store = ObjectDir::at(&self.store());
        let mut missing = Vec::new();
        for c in commits {
            if !store.has_commit(c)? && !missing.iter().any(|m| m == c) {
                missing.push(c.to_string());
            }
        }
        Ok(missing)
    }

    /// The commits the store keeps, newest first: a pack may leave out
    /// what they reach.
    pub(super) fn kept(&self) -> Result<Vec<String>, EngineError> {
        ObjectDir::at(&self.store()).newest_under(KEPT_REFS)
    }

    /// Adds a pack of objects (thin: its bases are in the store) to the store.
    pub(super) fn ingest(&self, pack: &[u8]) -> Result<(), EngineError> {
        ObjectDir::at(&self.store()).ingest(pack)
    }

    /// Keeps `commit` for later packs to build on, dropping the oldest
    /// beyond [`KEPT`].
    pub(super) fn keep(&self, commit: &str) -> Result<(), EngineError> {
        let store = ObjectDir::at(&self.store());
        store.set_ref(&format!("{KEPT_REFS}/{commit}"), commit)?;
        for old in self.kept()?.iter().skip(KEPT) {
            store.delete_ref(&format!("{KEPT_REFS}/{old}"))?;
        }
        Ok(())
    }
}

/// A pack of the commits `want` and what they need beyond the commits
/// `not` (thin: it may refer to their objects), from the repository whose
/// git directory is `git_dir`.
pub(super) fn pack(git_dir: &Path, want: &[&str], not: &[&str]) -> Result<Vec<u8>, EngineError> {
    ObjectDir::at(git_dir).pack(want, not)
}
