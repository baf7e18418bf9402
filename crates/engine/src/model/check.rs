//! One finding of preflight: what was checked, how it stands, what was
//! found and how to fix it. In the model, below both `run/preflight` and
//! the checks of remote workers in `exec/`.

use serde::Serialize;

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What was checked (`repo`, `lock`, `base`, `clean`, `git-config`, `sandbox`, `agent`, `gates`, `copy`, `setup`, `scope-ops`, `overlap`, `routing`).
    pub check: &'static str,
    /// `ok`, `warning` or `error`.
    pub status: &'static str,
    /// What was found.
    pub message: String,
    /// How to fix it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Check {
    pub(crate) fn ok(check: &'static str, message: impl Into<String>) -> Check {
        Check {
            check,
            status: "ok",
            message: message.into(),
            hint: None,
        }
    }
    pub(crate) fn error(
        check: &'static str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Check {
        Check::problem(check, "error", message.into(), hint.into())
    }
    pub(crate) fn warning(
        check: &'static str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Check {
        Check::problem(check, "warning", message.into(), hint.into())
    }
    /// A check that found something, with what to do about it.
    fn problem(check: &'static str, status: &'static str, message: String, hint: String) -> Check {
        Check {
            check,
            status,
            message,
            hint: Some(hint),
        }
    }
}
