//! `[respond.labels]`: the labels planwright writes on the issues a plan
//! was imported from (`planwright import issues`) as their tickets run:
//! `running` while a ticket runs, `failed` when it fails; both are taken
//! off when it merges or is delivered (docs/forge.md, "Issues in").
//! Neither is set by default: no label is written.

use serde::{Deserialize, Serialize};
use std::fmt;

/// `[respond.labels]` as the file says it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssueLabels {
    /// The label of an issue whose ticket runs, such as
    /// `"planwright:running"`.
    #[serde(default)]
    pub running: Option<LabelName>,
    /// The label of an issue whose ticket failed, such as
    /// `"planwright:failed"`.
    #[serde(default)]
    pub failed: Option<LabelName>,
}

impl IssueLabels {
    /// Whether any label is written.
    pub fn any(&self) -> bool {
        self.running.is_some() || self.failed.is_some()
    }
}

/// A label's name: 1 to 50 characters (GitHub's limit), no comma (GitLab
/// and the listings take labels as a comma-separated list), no control
/// character, not blank.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct LabelName(String);

impl LabelName {
    /// Checks `text`; the error says what to write.
    pub fn parse(text: &str) -> Result<LabelName, String> {
        let bad = text.trim().is_empty()
            || text.chars().count() > 50
            || text.contains(',')
            || text.chars().any(char::is_control);
        if bad {
            return Err(format!(
                "label `{}` is not a label name: write 1 to 50 characters, without a comma, such as `planwright:running`",
                text.escape_debug()
            ));
        }
        Ok(LabelName(text.to_string()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for LabelName {
    type Error = String;
    fn try_from(s: String) -> Result<LabelName, String> {
        LabelName::parse(&s)
    }
}

impl From<LabelName> for String {
    fn from(l: LabelName) -> String {
        l.0
    }
}

impl fmt::Display for LabelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::LabelName;

    #[test]
    fn a_label_name_is_short_and_has_no_comma() {
        assert!(LabelName::parse("planwright:running").is_ok());
        for bad in ["", "  ", "a,b", "x\ny", &"l".repeat(51)] {
            let err = LabelName::parse(bad).unwrap_err();
            assert!(err.contains("without a comma"), "{err}");
        }
    }
}
