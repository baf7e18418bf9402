//! One finding of preflight: what was checked, how it stands, what was
//! found and how to fix it. In the model, below both `run/preflight` and
//! the checks of remote workers in `exec/`.

use super::ticket::named_enum;
use serde::Serialize;

named_enum! {
    /// What a preflight check looks at: its name in `planwright preflight`'s
    /// output, its JSON and the table of docs/running.md.
    CheckName {
        /// git is new enough for planwright (`MINIMUM_GIT_VERSION`).
        Git = "git",
        /// `--repo` is a git repository.
        Repo = "repo",
        /// No other run holds the repository's run lock.
        Lock = "lock",
        /// The base branch exists.
        Base = "base",
        /// The working tree has no uncommitted changes.
        Clean = "clean",
        /// The repository's config runs no programs in planwright's git.
        #[serde(rename = "git-config")]
        GitConfig = "git-config",
        /// The sandbox, and the folders `[sandbox]` declares.
        Sandbox = "sandbox",
        /// `[sandbox] pids` and `memory`, and what holds children to them.
        Limits = "limits",
        /// Each agent is runnable and starts as an attempt would.
        Agent = "agent",
        /// Each ticket has gates whose programs and names exist.
        Gates = "gates",
        /// `[workspace] copy` names untracked files of the checkout.
        Copy = "copy",
        /// `[workspace] setup` runs on the base commit.
        Setup = "setup",
        /// The gates pass once on the base commit.
        #[serde(rename = "gate-probe")]
        GateProbe = "gate-probe",
        /// Scope operations against the base tree.
        #[serde(rename = "scope-ops")]
        ScopeOps = "scope-ops",
        /// No scope glob covers a file a gate runs without naming it.
        #[serde(rename = "gate-files")]
        GateFiles = "gate-files",
        /// The tickets' checks are judged by a reviewer.
        Checks = "checks",
        /// Scopes of tickets that may run at the same time.
        Overlap = "overlap",
        /// Which agent does each ticket, and its reviewer's family.
        Routing = "routing",
        /// Each routed model has a price, for costs and budgets.
        Prices = "prices",
        /// What earlier runs merged, and which run this one continues.
        Continue = "continue",
        /// Tickets merged from an older definition.
        Changed = "changed",
        /// `--rerun` names tickets of the plan.
        Rerun = "rerun",
        /// The workers of `[executor]` answer, with a slot per job.
        Executor = "executor",
    }
}

named_enum! {
    /// How a check stands.
    CheckStatus {
        /// Nothing to fix.
        Ok = "ok",
        /// Worth knowing; the run still starts.
        Warning = "warning",
        /// The run does not start.
        Error = "error",
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What was checked.
    pub check: CheckName,
    /// How it stands.
    pub status: CheckStatus,
    /// What was found.
    pub message: String,
    /// How to fix it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Check {
    pub(crate) fn ok(check: CheckName, message: impl Into<String>) -> Check {
        Check {
            check,
            status: CheckStatus::Ok,
            message: message.into(),
            hint: None,
        }
    }
    pub(crate) fn error(
        check: CheckName,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Check {
        Check::problem(check, CheckStatus::Error, message.into(), hint.into())
    }
    pub(crate) fn warning(
        check: CheckName,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Check {
        Check::problem(check, CheckStatus::Warning, message.into(), hint.into())
    }
    /// A check that found something, with what to do about it.
    fn problem(check: CheckName, status: CheckStatus, message: String, hint: String) -> Check {
        Check {
            check,
            status,
            message,
            hint: Some(hint),
        }
    }
    /// Whether this is the check `name` and it failed.
    pub fn failed_at(&self, name: CheckName) -> bool {
        self.check == name && self.status == CheckStatus::Error
    }
}

#[cfg(test)]
mod tests {
    use super::{CheckName, CheckStatus};

    #[test]
    fn each_name_serializes_as_it_prints() {
        for name in CheckName::ALL {
            let json = serde_json::to_value(name).expect("serializes");
            assert_eq!(json, name.as_str(), "{name:?}");
        }
        for status in CheckStatus::ALL {
            let json = serde_json::to_value(status).expect("serializes");
            assert_eq!(json, status.as_str(), "{status:?}");
        }
    }

    /// docs/running.md's table of checks has a row for each name.
    #[test]
    fn the_docs_table_names_every_check() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/running.md");
        let docs = std::fs::read_to_string(path).expect("docs/running.md");
        for name in CheckName::ALL {
            let row = format!("| `{name}` ");
            assert!(docs.contains(&row), "docs/running.md has no row `{row}`");
        }
    }
}
