//! Typed git operations on a work tree planwright owns (an agent's
//! workspace, a gate checkout, a reviewer's checkout), with planwright's
//! own git directory and an index of its own: writing a commit's files
//! there, cleaning it, and reading back the tree the files make. The
//! workspaces and checkouts call these by name; none of them builds git's
//! argv itself.

use crate::error::EngineError;
use crate::git::{Git, GitError};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// planwright's git on one work tree with one index (see
/// [`crate::git::repo::Repo::own_tree`]).
#[derive(Debug, Clone)]
pub struct WorkTree {
    git: Git,
    index: PathBuf,
}

/// How much a clean removes of what the index does not track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Clean {
    /// Everything, ignored or not (`clean -ffdx`).
    All,
    /// What no ignore rule keeps (`clean -ffd`).
    Unignored,
    /// What no ignore rule keeps, ignore files included whatever rule
    /// keeps them (`clean -ffd -e !.gitignore`: a command-line rule
    /// outranks every ignore file); it says what it removed.
    UnignoredAndIgnoreFiles,
}

/// What a clean did.
#[derive(Debug)]
pub(crate) enum Cleaned {
    /// It removed what it should; git's report of it (for
    /// [`Clean::UnignoredAndIgnoreFiles`]).
    Done(Vec<u8>),
    /// It could not enter these folders (relative to the work tree; a
    /// `chmod 000` of an agent or a gate), and failed with `error`.
    Shut {
        folders: Vec<PathBuf>,
        error: GitError,
    },
}

/// A tracked file's kind as the index records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Regular,
    Executable,
    /// A symlink or a submodule.
    Other,
}

/// Why `add -A` refused the work tree's files.
#[derive(Debug)]
pub(crate) struct AddRefused {
    /// git's own words.
    pub(crate) stderr: Vec<u8>,
    pub(crate) error: GitError,
}

impl WorkTree {
    /// `git` (on a work tree, with `GIT_INDEX_FILE` set to `index`) as a
    /// work tree's handle.
    pub(crate) fn with_index(git: Git, index: PathBuf) -> WorkTree {
        WorkTree { git, index }
    }

    /// planwright's git on `work_tree` with the git directory `git_dir`
    /// and its index: for an operation that reads no index (a patch
    /// applied to the files, see [`WorkTree::apply`]).
    pub fn new(git_dir: &Path, work_tree: &Path) -> WorkTree {
        WorkTree {
            git: Git::with_tree(git_dir, work_tree),
            index: git_dir.join("index"),
        }
    }

    /// This work tree, its attributes taken from `commit`, never from a
    /// `.gitattributes` an agent or a gate left in it.
    pub(crate) fn attributes_of(&self, commit: &str) -> WorkTree {
        WorkTree {
            git: self.git.clone().arg(format!("--attr-source={commit}")),
            index: self.index.clone(),
        }
    }

    fn git(&self) -> Git {
        self.git.clone()
    }

    /// Makes the tracked files of the work tree those of `commit`. When
    /// its index is `synced` with them, a one-way merge checks and writes
    /// only the files that differ between the index and `commit`; it
    /// refuses, and leaves all as it was, when a file it would write is in
    /// the way (one the index does not track, say), and then every file is
    /// checked. Line endings and the like follow `commit`'s attributes,
    /// never a `.gitattributes` an agent or a gate left in the work tree.
    pub(crate) fn reset(&self, commit: &str, synced: bool) -> Result<(), EngineError> {
        let merge = (self.attributes_of(commit).git()).args(["read-tree", "-m", "-u", commit]);
        if synced && merge.succeeds()? {
            return Ok(());
        }
        self.reset_files(commit)
    }

    /// Makes the tracked files of the work tree those of `commit`.
    /// `read-tree --reset -u` moves the index and, for an entry it keeps,
    /// checks the file against the index's stat data (and its content when
    /// the stat data cannot tell) and writes it back when an agent or a
    /// gate changed it: modified, deleted, made executable, turned into a
    /// symlink or a directory, or moved under a symlinked directory.
    /// Attributes are `commit`'s (see [`WorkTree::reset`]).
    pub(crate) fn reset_files(&self, commit: &str) -> Result<(), EngineError> {
        let git = || self.attributes_of(commit).git();
        if self.index.is_file() {
            git()
                .args(["read-tree", "--reset", "-u", commit])
                .output()?;
        } else {
            git().args(["read-tree", commit]).output()?;
            // `-u` records each file's stat in the index: without it every
            // file would look changed to the next reset and be written again.
            git().args(["checkout-index", "-a", "-f", "-u"]).output()?;
        }
        Ok(())
    }

    /// The index made `commit`'s tree and refreshed against the files, so
    /// that `git status` finds the unchanged ones at once.
    pub(crate) fn read_refreshed(&self, commit: &str) -> Result<(), EngineError> {
        self.git().args(["read-tree", commit]).output()?;
        // Changed files make `--refresh` exit 1: that is the point.
        (self.git())
            .args(["update-index", "-q", "--refresh"])
            .raw()?;
        Ok(())
    }

    /// The tracked paths whose files differ from what the index recorded
    /// of them (`diff-files`: by the stat data, and by content where that
    /// cannot tell): changed, deleted, made executable or of another kind,
    /// or touched. These are the files a non-synced [`WorkTree::reset`]
    /// writes again; the index is never written.
    pub(crate) fn differing(&self) -> Result<Vec<Vec<u8>>, EngineError> {
        let out = (self.git())
            .args(["diff-files", "--name-only", "-z", "--no-renames"])
            .output()?;
        Ok(names(&out.stdout).map(<[u8]>::to_vec).collect())
    }

    /// Each entry of the index with its kind, in the index's order; with
    /// `among`, only those at or beneath these paths.
    pub(crate) fn entries(
        &self,
        among: Option<&[PathBuf]>,
    ) -> Result<Vec<(PathBuf, Mode)>, EngineError> {
        if among.is_some_and(<[PathBuf]>::is_empty) {
            return Ok(Vec::new());
        }
        let git = self.git().args(["ls-files", "-s", "-z"]);
        let out = match among {
            None => git.output()?,
            // `ls-files` takes no pathspec file: the paths go on the
            // command line (their number is bounded by the caller).
            Some(paths) => (git.env("GIT_LITERAL_PATHSPECS", "1"))
                .arg("--")
                .args(paths)
                .output()?,
        };
        let mut entries = Vec::new();
        for record in out.stdout.split(|b| *b == 0) {
            let Some(tab) = record.iter().position(|b| *b == b'\t') else {
                continue;
            };
            let rel = PathBuf::from(std::ffi::OsStr::from_bytes(&record[tab + 1..]));
            let mode = match record.get(..6) {
                Some(b"100644") => Mode::Regular,
                Some(b"100755") => Mode::Executable,
                _ => Mode::Other,
            };
            entries.push((rel, mode));
        }
        Ok(entries)
    }

    /// The tracked files, as git names them.
    pub(crate) fn tracked(&self) -> Result<Vec<String>, EngineError> {
        let out = self.git().args(["ls-files", "-z"]).output()?;
        Ok(names(&out.stdout)
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect())
    }

    /// The untracked ignore files at any depth (a walk into every folder).
    pub(crate) fn untracked_ignore_files(&self) -> Result<Vec<String>, EngineError> {
        let out = (self.git())
            .args(["ls-files", "--others", "-z", "--", ":(glob)**/.gitignore"])
            .output()?;
        Ok(names(&out.stdout)
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect())
    }

    /// Which of `paths` (untracked, relative to the work tree) the ignore
    /// rules keep out of `add -A`, a path beneath an ignored folder
    /// included (`check-ignore`, which reads whether a path is a folder
    /// from the work tree).
    pub(crate) fn ignored(&self, paths: &[PathBuf]) -> Result<Vec<PathBuf>, EngineError> {
        let mut ignored = Vec::new();
        let mut list = Vec::new();
        for (i, p) in paths.iter().enumerate() {
            // `check-ignore` takes no literal pathspecs: `./` keeps a name
            // such as `:x` from reading as pathspec magic (git runs at the
            // top of the work tree).
            list.extend_from_slice(b"./");
            list.extend_from_slice(p.as_os_str().as_bytes());
            list.push(0);
            // Fed whole before its answer is read, a list must fit in the
            // pipe: git would wait to write, planwright to feed it.
            if list.len() >= CHECKED_AT_ONCE || i + 1 == paths.len() {
                ignored.extend(self.check_ignore(std::mem::take(&mut list))?);
            }
        }
        Ok(ignored)
    }

    /// `check-ignore` of the NUL-terminated paths of `list`, each `./`
    /// and a path; the paths.
    fn check_ignore(&self, list: Vec<u8>) -> Result<Vec<PathBuf>, EngineError> {
        let git = (self.git())
            .args(["check-ignore", "-z", "--stdin"])
            .input(list);
        let out = git.raw()?;
        // 1: none of them is ignored.
        if !matches!(out.status.code(), Some(0 | 1)) {
            return Err(git.failure(&out).into());
        }
        Ok(names(&out.stdout)
            .map(|p| {
                PathBuf::from(std::ffi::OsStr::from_bytes(
                    p.strip_prefix(b"./").unwrap_or(p),
                ))
            })
            .collect())
    }

    /// The untracked files no ignore rule keeps, as bytes.
    pub(crate) fn untracked_unignored(&self) -> Result<Vec<Vec<u8>>, EngineError> {
        let out = (self.git())
            .args(["ls-files", "-z", "-o", "--exclude-standard"])
            .output()?;
        Ok(names(&out.stdout).map(<[u8]>::to_vec).collect())
    }

    /// Removes what the index does not track, as `how` says; with
    /// `among`, only at or beneath these paths.
    pub(crate) fn clean(
        &self,
        how: Clean,
        among: Option<&[PathBuf]>,
    ) -> Result<Cleaned, EngineError> {
        let args: &[&str] = match how {
            Clean::All => &["clean", "-q", "-ffdx"],
            Clean::Unignored => &["clean", "-q", "-ffd"],
            Clean::UnignoredAndIgnoreFiles => &["clean", "-ffd", "-e", "!.gitignore"],
        };
        if among.is_some_and(<[PathBuf]>::is_empty) {
            return Ok(Cleaned::Done(Vec::new()));
        }
        // `clean` takes no pathspec file: the paths go on the command line
        // (their number is bounded by the caller).
        let git = match among {
            None => self.git().args(args),
            Some(paths) => (self.git().env("GIT_LITERAL_PATHSPECS", "1"))
                .args(args)
                .arg("--")
                .args(paths),
        };
        let out = git.raw()?;
        if out.status.success() {
            return Ok(Cleaned::Done(out.stdout));
        }
        let said = String::from_utf8_lossy(&out.stderr);
        let folders: Vec<PathBuf> = said
            .lines()
            .filter_map(|l| l.strip_prefix("warning: could not open directory '"))
            .filter_map(|l| l.rsplit_once("': ").map(|(rel, _)| rel))
            .map(|rel| PathBuf::from(rel.trim_end_matches('/')))
            .collect();
        let error = git.failure(&out);
        if folders.is_empty() {
            return Err(error.into());
        }
        Ok(Cleaned::Shut { folders, error })
    }

    /// Stages every file of the work tree as it is (`add -A`), or says
    /// why git refused.
    pub(crate) fn add_all(&self) -> Result<Result<(), AddRefused>, EngineError> {
        staged(self.git().args(["add", "-A"]))
    }

    /// Stages the files at or beneath `paths` as they are (`add -A` of
    /// those paths alone), or says why git refused: a path that is neither
    /// in the index nor in the work tree, or one only ignored files match,
    /// is refused too.
    pub(crate) fn add_paths(
        &self,
        paths: &[PathBuf],
    ) -> Result<Result<(), AddRefused>, EngineError> {
        if paths.is_empty() {
            return Ok(Ok(()));
        }
        staged(literally(self.git().args(["add", "-A"]), paths))
    }

    /// Puts the index entries of `paths` (taken literally) back as `base`
    /// has them.
    pub(crate) fn unstage(&self, base: &str, paths: &[String]) -> Result<(), EngineError> {
        let literal = paths.iter().map(|rel| format!(":(literal){rel}"));
        (self.git())
            .args(["reset", "-q", base, "--"])
            .args(literal)
            .output()?;
        Ok(())
    }

    /// Writes the index's tree to the object store. Every entry came from
    /// a commit's tree or was just written by `add`: checking that each
    /// object exists would only cost a lookup for every file of each
    /// directory changed (`--missing-ok`).
    pub(crate) fn write_tree(&self) -> Result<String, EngineError> {
        Ok(self.git().args(["write-tree", "--missing-ok"]).text()?)
    }

    /// Applies `patch` to the files (never the index), or says in git's
    /// words why it does not apply.
    pub(crate) fn apply(&self, patch: &[u8]) -> Result<Result<(), String>, EngineError> {
        let out = (self.git())
            .args(["apply", "--whitespace=nowarn", "-"])
            .input(patch)
            .raw()?;
        Ok(match out.status.success() {
            true => Ok(()),
            false => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        })
    }
}

/// The bytes of paths one `check-ignore` is given: well under a pipe's
/// buffer (64 KiB on Linux).
const CHECKED_AT_ONCE: usize = 16 * 1024;

/// Runs `add`, or says why git refused.
fn staged(add: Git) -> Result<Result<(), AddRefused>, EngineError> {
    let out = add.raw()?;
    if out.status.success() {
        return Ok(Ok(()));
    }
    Ok(Err(AddRefused {
        error: add.failure(&out),
        stderr: out.stderr,
    }))
}

/// `git` given `paths` as its pathspec, taken literally, on its standard
/// input (any number of them, any bytes but NUL).
fn literally(git: Git, paths: &[PathBuf]) -> Git {
    let mut list = Vec::new();
    for p in paths {
        list.extend_from_slice(p.as_os_str().as_bytes());
        list.push(0);
    }
    git.env("GIT_LITERAL_PATHSPECS", "1")
        .args(["--pathspec-from-file=-", "--pathspec-file-nul"])
        .input(list)
}

/// The names of NUL-separated `-z` output.
fn names(out: &[u8]) -> impl Iterator<Item = &[u8]> {
    out.split(|b| *b == 0).filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use crate::git::testing::committed;
    use std::os::unix::fs::{symlink, PermissionsExt};

    /// What an agent or a gate may do to tracked files; one reset undoes all.
    #[test]
    fn a_reset_writes_back_every_tracked_file_that_was_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let files: Vec<(&str, String)> = ["a", "b", "c", "d", "e", "src/x"]
            .into_iter()
            .map(|f| (f, format!("hello {f}\n")))
            .collect();
        let (repo, commit) = committed(tmp.path(), &files);
        let (index, dir) = (tmp.path().join("index"), tmp.path().join("slot"));
        std::fs::create_dir_all(&dir).unwrap();
        repo.own_tree(&index, &dir).reset_files(&commit).unwrap();

        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        // Same size, same second: only the content tells.
        std::fs::write(dir.join("a"), "HELLO a\n").unwrap();
        std::fs::set_permissions(dir.join("b"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::remove_file(dir.join("c")).unwrap();
        std::fs::remove_file(dir.join("d")).unwrap();
        std::fs::create_dir_all(dir.join("d")).unwrap();
        std::fs::write(dir.join("d/inner"), "x").unwrap();
        std::fs::remove_file(dir.join("e")).unwrap();
        symlink("/etc/passwd", dir.join("e")).unwrap();
        std::fs::remove_dir_all(dir.join("src")).unwrap();
        symlink(&outside, dir.join("src")).unwrap();

        repo.own_tree(&index, &dir).reset_files(&commit).unwrap();
        for f in ["a", "b", "c", "d", "e", "src/x"] {
            let meta = std::fs::symlink_metadata(dir.join(f)).unwrap();
            assert!(meta.is_file(), "{f} is a file again");
            assert_eq!(
                meta.permissions().mode() & 0o111,
                0,
                "{f} is not executable"
            );
            let text = std::fs::read_to_string(dir.join(f)).unwrap();
            assert_eq!(text, format!("hello {f}\n"));
        }
        assert!(std::fs::symlink_metadata(dir.join("src")).unwrap().is_dir());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    /// A `.gitattributes` left in the work tree does not decide how the
    /// next reset writes files: the commit's attributes do.
    #[test]
    fn a_reset_writes_files_by_the_commits_attributes_not_the_work_trees() {
        let tmp = tempfile::tempdir().unwrap();
        let (repo, commit) = committed(tmp.path(), &[("a", "one\ntwo\n".to_string())]);
        let (index, dir) = (tmp.path().join("index"), tmp.path().join("slot"));
        std::fs::create_dir_all(&dir).unwrap();
        repo.own_tree(&index, &dir).reset_files(&commit).unwrap();
        std::fs::write(dir.join(".gitattributes"), "* text eol=crlf\n").unwrap();
        std::fs::remove_file(dir.join("a")).unwrap();
        repo.own_tree(&index, &dir).reset_files(&commit).unwrap();
        assert_eq!(std::fs::read(dir.join("a")).unwrap(), b"one\ntwo\n");
    }
}
