//! Ticket identity: a digest of what a ticket asks for, and the ledger of
//! what landed, read back from the base branch's history through the
//! trailers planwright writes into every merged commit.
//!
//! A run belongs to a repository and a base branch, not to a plan: whether a
//! ticket is merged is a fact of git history (a commit with its
//! `Planwright-Ticket` trailer and the same `Planwright-Ticket-Digest`), so
//! resume is right even when `.planwright/` is lost, and editing the plan
//! continues the run.

use crate::error::EngineError;
use crate::git::repo::Repo;
use planwright_plan::model::{Counterfactual, ScopeEntry, Ticket};
use serde::Serialize;
use std::collections::HashMap;

/// The commit message of a ticket's one commit, trailers included.
pub(crate) fn commit_message(ticket: &Ticket, digest: &str, run: &str) -> String {
    let title = if ticket.title.trim().is_empty() {
        ticket.id.as_str()
    } else {
        ticket.title.trim()
    };
    format!(
        "{}: {title}\n\n{TICKET_TRAILER}: {}\n{DIGEST_TRAILER}: {digest}\n{RUN_TRAILER}: {run}\n",
        ticket.id, ticket.id
    )
}

/// The trailer naming a merged commit's ticket.
pub(crate) const TICKET_TRAILER: &str = "Planwright-Ticket";
/// The trailer holding the digest of the ticket's definition.
pub(crate) const DIGEST_TRAILER: &str = "Planwright-Ticket-Digest";
/// The trailer naming the run that merged it.
pub(crate) const RUN_TRAILER: &str = "Planwright-Run";

/// A digest of the ticket's meaning: id, title, body, scope, rails,
/// dependencies, its own gates (argv only), reviewer checks and
/// counterfactuals. Left out on purpose: gate names, routing (tier, pool
/// hint, model), the estimate and format-specific metadata, which change how
/// or where the work runs, not what it must produce. The same ticket read
/// from two formats therefore has the same digest.
pub(crate) fn ticket_digest(t: &Ticket) -> String {
    // Serialized straight into the hash: a run digests every ticket of the
    // plan, and the bytes must stay those of the JSON object below, field
    // for field, or every stored digest would read as changed.
    #[derive(Serialize)]
    struct Meaning<'t> {
        id: &'t str,
        title: &'t str,
        body: &'t str,
        scope: &'t [ScopeEntry],
        rails: &'t [String],
        depends_on: Vec<&'t str>,
        gates: Vec<&'t [String]>,
        checks: &'t [String],
        counterfactuals: &'t [Counterfactual],
    }
    let mut depends_on: Vec<&str> = t.depends_on.iter().map(String::as_str).collect();
    depends_on.sort_unstable();
    let meaning = Meaning {
        id: &t.id,
        title: t.title.trim(),
        body: t.body.trim(),
        scope: &t.scope,
        rails: &t.rails,
        depends_on,
        gates: t.gates.iter().map(|g| g.argv.as_slice()).collect(),
        checks: &t.checks,
        counterfactuals: &t.counterfactuals,
    };
    let mut hash = Fnv128::default();
    serde_json::to_writer(&mut hash, &meaning).expect("a ticket serializes");
    format!("{:032x}", hash.0)
}

/// FNV-1a, 128 bits: a stable identity, not a security boundary (the
/// coordinator verifies every candidate whatever its trailers say).
struct Fnv128(u128);

impl Default for Fnv128 {
    fn default() -> Self {
        Fnv128(0x6c62_272e_07bb_0142_62b8_2175_6295_c58d)
    }
}

impl std::io::Write for Fnv128 {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        for b in bytes {
            self.0 ^= u128::from(*b);
            // The prime is 2^88 + 0x13b: a shift and a small product.
            self.0 = (self.0 << 88).wrapping_add(self.0.wrapping_mul(0x13b));
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The ticket digest `commit` carries in its trailer (empty when it has
/// none), or None when there is no such commit.
pub(crate) fn digest_of(repo: &Repo, commit: &str) -> Result<Option<String>, EngineError> {
    let format = format!("--format=%(trailers:key={DIGEST_TRAILER},valueonly)");
    let out = (repo.git())
        .args(["log", "-1", &format, commit, "--"])
        .raw()?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()))
}

/// One merged commit of a ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Landed {
    /// The commit.
    pub commit: String,
    /// The digest of the ticket's definition it was built from.
    pub digest: String,
    /// The run that merged it.
    pub run: String,
}

/// Every ticket commit reachable from the refs read, newest first per ticket.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ledger {
    by_ticket: HashMap<String, Vec<Landed>>,
}

impl Ledger {
    /// Reads the ledger from the history of `refs` (those that exist), in one
    /// git call whatever the number of tickets.
    pub(crate) fn read(repo: &Repo, refs: &[String]) -> Result<Ledger, EngineError> {
        let mut git = repo.git().args([
            "log",
            "-z",
            "--grep",
            &format!("^{TICKET_TRAILER}:"),
            &format!(
                "--format=%H%x01%(trailers:key={TICKET_TRAILER},valueonly,separator=%x02)%x01%(trailers:key={DIGEST_TRAILER},valueonly,separator=%x02)%x01%(trailers:key={RUN_TRAILER},valueonly,separator=%x02)"
            ),
        ]);
        let mut any = false;
        for r in refs {
            if repo.ref_tip(r)?.is_some() {
                git = git.arg(r);
                any = true;
            }
        }
        if !any {
            return Ok(Ledger::default());
        }
        Ok(Ledger::parse(&git.arg("--").text()?))
    }

    /// Parses `git log -z` output in the format [`Ledger::read`] asks for.
    pub(crate) fn parse(text: &str) -> Ledger {
        let mut by_ticket: HashMap<String, Vec<Landed>> = HashMap::new();
        for record in text.split('\0').filter(|r| !r.trim().is_empty()) {
            let fields: Vec<&str> = record.trim_matches('\n').split('\x01').collect();
            let [commit, ticket, digest, run] = fields[..] else {
                continue;
            };
            // A commit with two ticket trailers is not one of ours: skip it.
            if ticket.contains('\x02') || ticket.trim().is_empty() {
                continue;
            }
            let first = |s: &str| s.split('\x02').next().unwrap_or("").trim().to_string();
            by_ticket
                .entry(ticket.trim().to_string())
                .or_default()
                .push(Landed {
                    commit: commit.trim().to_string(),
                    digest: first(digest),
                    run: first(run),
                });
        }
        Ledger { by_ticket }
    }

    /// The commits of `ticket`, newest first; only those of `run` when given.
    pub(crate) fn landed(&self, ticket: &str, run: Option<&str>) -> Vec<&Landed> {
        self.by_ticket
            .get(ticket)
            .into_iter()
            .flatten()
            .filter(|l| run.is_none_or(|r| l.run == r))
            .collect()
    }
}

/// What the base branch's history says about one ticket of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Standing {
    /// Not merged.
    Open,
    /// Merged as `commit`, from the plan's current definition.
    Merged(String),
    /// Merged as `commit`, from a definition the plan has changed since.
    Changed(String),
}

/// Where `ticket` (whose definition's digest `digest` gives) stands in
/// `ledger`. `run` limits the search to one run's commits (a run started
/// with `--new-run`); `rerun_of`, when set, is the commit a `--rerun` asked
/// to replace: it and older commits no longer count. The digest is asked
/// only for a ticket that landed: most tickets of a large plan have not,
/// and a digest serializes the whole ticket.
pub(crate) fn standing(
    ledger: &Ledger,
    ticket: &str,
    digest: impl FnOnce() -> String,
    run: Option<&str>,
    rerun_of: Option<&str>,
) -> Standing {
    let mut landed = ledger.landed(ticket, run);
    if let Some(old) = rerun_of {
        if let Some(i) = landed.iter().position(|l| l.commit == old) {
            landed.truncate(i);
        }
    }
    if landed.is_empty() {
        return Standing::Open;
    }
    let digest = digest();
    if let Some(l) = landed.iter().find(|l| l.digest == digest) {
        return Standing::Merged(l.commit.clone());
    }
    match landed.first() {
        Some(l) => Standing::Changed(l.commit.clone()),
        None => Standing::Open,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_ignores_routing_and_names_but_not_meaning() {
        let t = Ticket::new("T1", "do it");
        let routed = Ticket {
            model: Some("m".into()),
            estimate_minutes: Some(5),
            ..t.clone()
        };
        assert_eq!(ticket_digest(&t), ticket_digest(&routed));
        let changed = Ticket::new("T1", "do something else");
        assert_ne!(ticket_digest(&t), ticket_digest(&changed));
        assert_eq!(ticket_digest(&t).len(), 32);
    }

    /// Every stored digest and every merged commit's trailer was made by
    /// this definition: the JSON text of the ticket's meaning, FNV-1a 128.
    fn reference(t: &Ticket) -> String {
        let mut deps = t.depends_on.clone();
        deps.sort();
        let meaning = serde_json::json!({
            "id": t.id,
            "title": t.title.trim(),
            "body": t.body.trim(),
            "scope": t.scope,
            "rails": t.rails,
            "depends_on": deps,
            "gates": t.gates.iter().map(|g| &g.argv).collect::<Vec<_>>(),
            "checks": t.checks,
            "counterfactuals": t.counterfactuals,
        });
        let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
        for b in meaning.to_string().bytes() {
            h ^= u128::from(b);
            h = h.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
        }
        format!("{h:032x}")
    }

    #[test]
    fn the_digest_is_the_one_earlier_versions_stored() {
        let rich: Ticket = serde_json::from_value(serde_json::json!({
            "id": "T-1 \"é\"",
            "title": "  Parse <config>\n",
            "body": "Line one.\n\tLine \u{1F600} two\\ end  ",
            "scope": [
                {"pattern": "src/**/*.rs", "op": "modify"},
                {"pattern": "docs/new.md", "op": "create"},
                {"pattern": "b.txt", "op": "rename", "from": "a.txt"}
            ],
            "rails": ["package.json", "src/lib/**"],
            "depends_on": ["T-9", "T-10", "T-2"],
            "gates": [{"name": "test", "argv": ["cargo", "test", "--", "--nocapture"]}],
            "checks": ["no unwrap"],
            "counterfactuals": [{
                "control_path": "src/lib.rs",
                "mutation": {"form": "find_replace", "find": "a < b", "replace": "a <= b"},
                "tests": {"run": "TestOrder", "argv": ["go", "test"]}
            }],
            "model": "ignored",
            "estimate_minutes": 7
        }))
        .unwrap();
        for t in [rich, Ticket::new("T1", "do it")] {
            assert_eq!(ticket_digest(&t), reference(&t), "{}", t.id);
        }
        assert_eq!(
            ticket_digest(&Ticket::new("T1", "do it")),
            "dbd41ec8321646ee21f97074d71c491d"
        );
    }

    #[test]
    fn ledger_parses_trailers_and_judges_standing() {
        let text = "c2\x01T1\x01d2\x01r1\n\0c1\x01T1\x01d1\x01r1\n\0c0\x01A\x02B\x01x\x01r\0";
        let l = Ledger::parse(text);
        assert_eq!(l.landed("T1", None).len(), 2);
        assert!(l.landed("A", None).is_empty());
        assert_eq!(
            standing(&l, "T1", || "d1".to_string(), None, None),
            Standing::Merged("c1".into())
        );
        assert_eq!(
            standing(&l, "T1", || "d9".to_string(), None, None),
            Standing::Changed("c2".into())
        );
        assert_eq!(
            standing(&l, "T1", || "d1".to_string(), Some("r2"), None),
            Standing::Open
        );
        assert_eq!(
            standing(&l, "T1", || "d2".to_string(), None, Some("c2")),
            Standing::Open
        );
        assert_eq!(
            standing(&l, "T2", || "d".to_string(), None, None),
            Standing::Open
        );
    }
}
