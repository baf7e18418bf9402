//! Takes a worker's candidate into the coordinator's repository. The pack
//! goes through `git index-pack --strict`; when git's fsck refuses it, the
//! same pack is indexed again, without the checks, into a quarantine that
//! borrows the repository's objects, to tell a broken pack (the worker's
//! fault) from content git refuses (the agent's work: the attempt fails
//! naming the path and git's words, and the worker is not lost).

use crate::error::EngineError;
use crate::git::transfer::ObjectDir;
use crate::model::{Failure, FailureKind};
use std::path::Path;

/// What became of a candidate's pack.
#[derive(Debug, PartialEq)]
pub(super) enum Intake {
    /// The candidate is in the repository: one commit on the base with
    /// every object it needs.
    Taken,
    /// The pack is sound and its commit one on the base, but git's fsck
    /// refuses a file of it: the attempt's failure, not the worker's.
    Refused(Failure),
    /// What the worker sent is not a candidate: why, after "the worker at
    /// PLACE".
    Bad(String),
}

/// Takes `objects`, the pack of `commit` whose parent must be `base`, into
/// the repository whose git directory is `git_dir`.
pub(super) fn take(
    git_dir: &Path,
    objects: &[u8],
    commit: &str,
    base: &str,
) -> Result<Intake, EngineError> {
    let store = ObjectDir::at(git_dir);
    let Err(said) = store.index_pack(objects, true)? else {
        return shape(&store, commit, base).map(|bad| bad.map_or(Intake::Taken, Intake::Bad));
    };
    // The objects wait in the quarantine, and go with it: nothing git
    // refused enters the repository.
    let quarantine = tempfile::Builder::new()
        .prefix("planwright-quarantine-")
        .tempdir_in(git_dir)
        .map_err(|e| EngineError::io(git_dir, e))?;
    let quarantined = ObjectDir::quarantined(git_dir, quarantine.path());
    let loose = quarantined.index_pack(objects, false)?;
    let refusal = last_error(&said);
    if loose.is_err() {
        return Ok(Intake::Bad(format!(
            "sent a candidate git refuses: {refusal}"
        )));
    }
    if let Some(bad) = shape(&quarantined, commit, base)? {
        return Ok(Intake::Bad(bad));
    }
    let Some((object, words)) = fsck_error(&said) else {
        return Ok(Intake::Bad(format!(
            "sent a candidate git refuses: {refusal}"
        )));
    };
    match quarantined.path_of(commit, object)? {
        Some(path) => Ok(Intake::Refused(refused(&path, words))),
        // Not a file of the candidate: the commit planwright's worker made.
        None => Ok(Intake::Bad(format!(
            "sent a candidate git refuses: {refusal}"
        ))),
    }
}

/// Why the candidate now in `store` is not one commit on `base` with
/// every object it needs, if it is not.
fn shape(store: &ObjectDir, commit: &str, base: &str) -> Result<Option<String>, EngineError> {
    let line = store.with_parents(commit)?;
    if line.as_deref() != Some(format!("{commit} {base}").as_str()) {
        return Ok(Some(format!(
            "sent a candidate {commit} that is not one commit on the base {base}"
        )));
    }
    if !store.complete(commit, base)? {
        return Ok(Some(format!(
            "sent a candidate {commit} with objects missing"
        )));
    }
    Ok(None)
}

/// The failure of a candidate whose file at `path` git refuses, in git's
/// `words`.
fn refused(path: &str, words: &str) -> Failure {
    let path = planwright_plan::words::inert(path);
    let words = planwright_plan::words::inert(words);
    Failure::new(
        FailureKind::ScopeViolation,
        format!("`{path}`: git refuses this file's content ({words})"),
    )
    .with_evidence(format!(
        "git's fsck refuses `{path}`: {words}\nChange or remove the file so that git accepts it."
    ))
}

/// The object and the words of git's fsck error (`error: object OID:
/// msgId: text`).
fn fsck_error(said: &str) -> Option<(&str, &str)> {
    said.lines().find_map(|line| {
        let rest = line.strip_prefix("error: object ")?;
        let (object, words) = rest.split_once(": ")?;
        let hex = object.len() >= 40 && object.bytes().all(|b| b.is_ascii_hexdigit());
        hex.then_some((object, words.trim()))
    })
}

/// git's last error line, for a message.
fn last_error(said: &str) -> String {
    let lines: Vec<&str> = said
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let chosen = lines
        .iter()
        .rev()
        .find(|l| l.starts_with("error:"))
        .or(lines.last());
    chosen.map_or_else(String::new, |l| l.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_fsck_error_names_its_object_and_gits_words() {
        let said = "warning: ignoring overly long attributes line 1\nerror: object 59a2050735e4c7f4b17b2b889837e5e176bdba9c: gitattributesLineLength: .gitattributes has too long lines to parse\nfatal: fsck error in packed object\n";
        assert_eq!(
            fsck_error(said),
            Some((
                "59a2050735e4c7f4b17b2b889837e5e176bdba9c",
                "gitattributesLineLength: .gitattributes has too long lines to parse"
            ))
        );
        assert_eq!(fsck_error("fatal: pack has bad object at offset 12"), None);
        assert_eq!(
            last_error(said),
            "error: object 59a2050735e4c7f4b17b2b889837e5e176bdba9c: gitattributesLineLength: .gitattributes has too long lines to parse"
        );
    }
}
