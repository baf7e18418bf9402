//! Typed git operations that move objects between repositories (a
//! coordinator and its workers): new object stores, packs of commits,
//! taking a pack in (checked, or into a quarantine), what a store has, and
//! the refs a store keeps. The remote executor and the worker call these by
//! name; none of them builds git's argv itself.

use crate::error::EngineError;
use crate::git::Git;
use std::path::Path;

/// A git directory seen as objects and refs, without a work tree: a
/// worker's shared store, or the common git directory of a repository.
#[derive(Debug, Clone)]
pub(crate) struct ObjectDir {
    git: Git,
}

/// Makes a new repository at `dir` with the object format `format`
/// (`sha1`, `sha256`), `bare` or with a work tree, from no template.
pub(crate) fn init(dir: &Path, format: &str, bare: bool) -> Result<(), EngineError> {
    let mut git = Git::outside().args(["init", "-q", "--template="]);
    if bare {
        git = git.arg("--bare");
    }
    git.arg(format!("--object-format={format}"))
        .arg(dir)
        .output()?;
    Ok(())
}

impl ObjectDir {
    /// The objects and refs of the git directory `git_dir`.
    pub(crate) fn at(git_dir: &Path) -> ObjectDir {
        ObjectDir {
            git: Git::bare(git_dir),
        }
    }

    /// The git directory `git_dir` reading its own objects but writing new
    /// ones to `held`, a quarantine: what is taken in there never enters
    /// the repository.
    pub(crate) fn quarantined(git_dir: &Path, held: &Path) -> ObjectDir {
        let objects = git_dir.join("objects").display().to_string();
        ObjectDir {
            git: Git::bare(git_dir)
                .env("GIT_OBJECT_DIRECTORY", held.display().to_string())
                .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects),
        }
    }

    fn git(&self) -> Git {
        self.git.clone()
    }

    /// A pack of the commits `want` and what they need beyond the commits
    /// `not` (thin: it may refer to their objects).
    pub(crate) fn pack(&self, want: &[&str], not: &[&str]) -> Result<Vec<u8>, EngineError> {
        let mut revs = String::new();
        for w in want {
            revs.push_str(&format!("{w}\n"));
        }
        for n in not {
            revs.push_str(&format!("^{n}\n"));
        }
        let out = (self.git())
            .args(["pack-objects", "--revs", "--thin", "--stdout", "-q"])
            .input(revs)
            .output()?;
        Ok(out.stdout)
    }

    /// Takes the (thin) `pack` in, with git's fsck checks on every object
    /// when `strict`; when git refuses it, its words.
    pub(crate) fn index_pack(
        &self,
        pack: &[u8],
        strict: bool,
    ) -> Result<Result<(), String>, EngineError> {
        let mut git = self.git().args(["index-pack", "--stdin", "--fix-thin"]);
        if strict {
            git = git.arg("--strict");
        }
        let out = git.input(pack).raw()?;
        Ok(match out.status.success() {
            true => Ok(()),
            false => Err(String::from_utf8_lossy(&out.stderr).to_string()),
        })
    }

    /// Takes the (thin) `pack` in, an error when git refuses it.
    pub(crate) fn ingest(&self, pack: &[u8]) -> Result<(), EngineError> {
        (self.git())
            .args(["index-pack", "--stdin", "--fix-thin"])
            .input(pack)
            .output()?;
        Ok(())
    }

    /// `commit` followed by its parents, one line, or None when the store
    /// does not have it.
    pub(crate) fn with_parents(&self, commit: &str) -> Result<Option<String>, EngineError> {
        Ok((self.git())
            .args(["rev-list", "--parents", "-n1", commit])
            .text_if_success()?)
    }

    /// Whether the store has every object `commit` needs beyond `base`.
    pub(crate) fn complete(&self, commit: &str, base: &str) -> Result<bool, EngineError> {
        Ok((self.git())
            .args(["rev-list", "--objects", "--quiet", commit, "--not", base])
            .succeeds()?)
    }

    /// The path of the first entry of `commit`'s tree, at any depth, whose
    /// object is `object`.
    pub(crate) fn path_of(
        &self,
        commit: &str,
        object: &str,
    ) -> Result<Option<String>, EngineError> {
        let listed = (self.git())
            .args(["ls-tree", "-r", "-t", "-z", commit])
            .output()?;
        Ok(listed
            .stdout
            .split(|&b| b == 0)
            .filter_map(|entry| {
                let entry = std::str::from_utf8(entry).ok()?;
                let (meta, path) = entry.split_once('\t')?;
                (meta.split(' ').nth(2) == Some(object)).then(|| path.to_string())
            })
            .next())
    }

    /// Whether the store has the commit `commit`.
    pub(crate) fn has_commit(&self, commit: &str) -> Result<bool, EngineError> {
        Ok((self.git())
            .args(["cat-file", "-e", &format!("{commit}^{{commit}}")])
            .succeeds()?)
    }

    /// Which of `ids` (full object ids) are commits the store has.
    pub(crate) fn commits_among(&self, ids: &[&String]) -> Result<Vec<String>, EngineError> {
        let lines: String = ids.iter().map(|c| format!("{c}\n")).collect();
        let out = (self.git())
            .args(["cat-file", "--batch-check=%(objectname) %(objecttype)"])
            .input(lines)
            .text()?;
        Ok(out
            .lines()
            .filter_map(|l| l.strip_suffix(" commit"))
            .map(str::to_string)
            .collect())
    }

    /// The commits the refs under `prefix` point at, newest first.
    pub(crate) fn newest_under(&self, prefix: &str) -> Result<Vec<String>, EngineError> {
        let out = (self.git())
            .args([
                "for-each-ref",
                "--sort=-committerdate",
                "--format=%(objectname)",
                prefix,
            ])
            .text()?;
        Ok(out.lines().map(str::to_string).collect())
    }

    /// Points `name` at `commit` (creating it).
    pub(crate) fn set_ref(&self, name: &str, commit: &str) -> Result<(), EngineError> {
        self.git().args(["update-ref", name, commit]).output()?;
        Ok(())
    }

    /// Deletes `name` if it exists.
    pub(crate) fn delete_ref(&self, name: &str) -> Result<(), EngineError> {
        self.git().args(["update-ref", "-d", name]).output()?;
        Ok(())
    }
}
