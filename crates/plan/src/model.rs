//! The plan model (IR): what every format is parsed into and what everything
//! after parsing (analysis, conversion, execution) sees.
//!
//! It is also the native format (`"planwright": 1`), so every type here
//! serializes losslessly and has a JSON Schema (`schemas/native.schema.json`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The plan formats planwright reads and writes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// agb's plan (`tickets` and `gate`).
    Agb,
    /// codeboost plan v1 (`schema_version: 1` and `items`).
    Codeboost,
    /// fishhawk's standard_v1 (`plan_version: "standard_v1"`).
    #[serde(rename = "standard_v1")]
    StandardV1,
    /// planwright's own IR (`planwright: 1`).
    Native,
    /// Taskmaster's `tasks.json` (`tasks`, or tags each holding `tasks`).
    Taskmaster,
    /// Auto-Claude's `implementation_plan.json` (`feature`, `workflow_type`, `phases`).
    Autoclaude,
    /// GitHub Spec Kit's `tasks.md` (Markdown checklist lines `- [ ] T001 ...`).
    Speckit,
}

impl Format {
    /// Every format, in detection order.
    pub const ALL: [Format; 7] = [
        Format::Agb,
        Format::Codeboost,
        Format::StandardV1,
        Format::Native,
        Format::Taskmaster,
        Format::Autoclaude,
        Format::Speckit,
    ];

    /// Whether the format's plans name the branch they merge into (agb's
    /// `base`, which agb itself defaults to `main`, and the native `base`).
    /// A plan of any other format runs on the branch `--base` or
    /// `[run] base` names, else on the repository's current branch.
    pub fn names_base(self) -> bool {
        matches!(self, Format::Agb | Format::Native)
    }

    /// The name used on the command line, in JSON output and in codes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Agb => "agb",
            Format::Codeboost => "codeboost",
            Format::StandardV1 => "standard_v1",
            Format::Native => "native",
            Format::Taskmaster => "taskmaster",
            Format::Autoclaude => "autoclaude",
            Format::Speckit => "speckit",
        }
    }

    /// Parses a format name as written on the command line.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The format the plan was read from.
    pub source_format: Format,
    /// The target repository, when the format names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The branch the tickets merge into.
    pub base: String,
    /// Gates every ticket must pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<Gate>,
    /// The tickets, in source order.
    pub tickets: Vec<Ticket>,
    /// Per-pool concurrency caps (pool name -> at most this many at once).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub caps: BTreeMap<String, u32>,
    /// Review settings.
    #[serde(default)]
    pub review: Review,
    /// What the source format says that the model has no field for, kept for
    /// lossless conversion back to that format.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub metadata: serde_json::Map<String, serde_json::Value>,
}

/// Review settings of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Review {
    /// Consecutive "ship" verdicts a ticket needs from the reviewer.
    pub dry_passes: u32,
}

impl Default for Review {
    fn default() -> Self {
        Review { dry_passes: 1 }
    }
}

/// One unit of work: one workspace, one branch, one merged commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ticket {
    /// Unique id; also the branch name `planwright/<id>`.
    pub id: String,
    /// Short title.
    #[serde(default)]
    pub title: String,
    /// The prompt: what to do and how to know it is done.
    pub body: String,
    /// The files the ticket may change.
    pub scope: Vec<ScopeEntry>,
    /// Protected paths the ticket must not change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rails: Vec<String>,
    /// Tickets that must merge before this one starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    /// Model tier (`cheap`, `mid`, `frontier`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    /// Model pool family.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_hint: Option<String>,
    /// A specific model, when the format names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Gates of this ticket, in addition to the plan's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<Gate>,
    /// Statements a reviewer judges against the code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
    /// Mutations that must make named tests fail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counterfactuals: Vec<Counterfactual>,
    /// Estimated minutes of work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate_minutes: Option<u32>,
    /// Format-specific fields kept for lossless conversion.
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub metadata: Metadata,
}

/// A ticket's format-specific fields: a map, held boxed and only when it
/// has an entry. Most tickets have none, and a plan holds one per ticket:
/// inline, an empty map took 72 of a ticket's 368 bytes (issue 53). Reads
/// and writes go through the map it derefs to.
#[derive(Debug, Clone, Default)]
pub struct Metadata(Option<Box<serde_json::Map<String, serde_json::Value>>>);

static NO_METADATA: std::sync::LazyLock<serde_json::Map<String, serde_json::Value>> =
    std::sync::LazyLock::new(serde_json::Map::new);

impl Metadata {
    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|m| m.is_empty())
    }
}

impl std::ops::Deref for Metadata {
    type Target = serde_json::Map<String, serde_json::Value>;

    fn deref(&self) -> &Self::Target {
        self.0.as_deref().unwrap_or(&NO_METADATA)
    }
}

impl std::ops::DerefMut for Metadata {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.0.get_or_insert_with(Box::default)
    }
}

impl From<serde_json::Map<String, serde_json::Value>> for Metadata {
    fn from(map: serde_json::Map<String, serde_json::Value>) -> Self {
        Metadata((!map.is_empty()).then(|| Box::new(map)))
    }
}

impl PartialEq for Metadata {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<'a> IntoIterator for &'a Metadata {
    type Item = (&'a String, &'a serde_json::Value);
    type IntoIter = serde_json::map::Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Serialize for Metadata {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_json::Map::deserialize(d).map(Metadata::from)
    }
}

/// One entry of a ticket's scope: a path or glob and what may happen to it.
// No `deny_unknown_fields`: serde cannot combine it with `flatten`; the
// native schema check rejects unknown keys instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("unevaluatedProperties" = false))]
pub struct ScopeEntry {
    /// A repository-relative path or glob (`src/**`).
    pub pattern: String,
    /// What the ticket may do to the matching paths.
    #[serde(flatten)]
    pub op: ScopeOp,
}

impl ScopeEntry {
    /// A pattern that may be changed in any way.
    pub fn any(pattern: impl Into<String>) -> Self {
        ScopeEntry {
            pattern: pattern.into(),
            op: ScopeOp::Any,
        }
    }
}

/// What a ticket may do to a scope entry's paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ScopeOp {
    /// Create, modify or delete.
    Any,
    /// Create a path that does not exist in the base.
    Create,
    /// Modify a path that exists in the base.
    Modify,
    /// Delete a path that exists in the base.
    Delete,
    /// Move `from` to the pattern (optionally changing it).
    Rename {
        /// The old path.
        from: String,
    },
}

/// A command that must exit 0. Always an argv, never a shell string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    /// A name for reports (`test`, `build`, or the command itself).
    pub name: String,
    /// Program and arguments.
    pub argv: Vec<String>,
}

impl Gate {
    /// The argv as one line a shell reads back as the same words (`-run
    /// 'TestDo.*'`), for messages, prompts and logs; gates never run in one.
    pub fn command_line(&self) -> String {
        shlex::try_join(self.argv.iter().map(String::as_str))
            .unwrap_or_else(|_| self.argv.join(" "))
    }
}

/// A mutation of production code that must make the named tests fail,
/// proving the tests depend on that code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Counterfactual {
    /// Repository-relative path of the file to mutate.
    pub control_path: String,
    /// How to mutate it.
    pub mutation: Mutation,
    /// The tests that must go red.
    pub tests: CounterfactualTests,
}

/// How a counterfactual mutates its file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "form", rename_all = "snake_case")]
pub enum Mutation {
    /// Replace the single occurrence of `find` with `replace`.
    FindReplace {
        /// The exact text to replace.
        find: String,
        /// The replacement.
        replace: String,
    },
    /// Apply a unified diff with `git apply`.
    Patch {
        /// The diff.
        patch: String,
    },
}

/// The tests a counterfactual runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CounterfactualTests {
    /// Test selector (for Go, the `-run` regular expression).
    pub run: String,
    /// Package or path the tests live in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// The command that runs the tests, when it is not Go's
    /// (`go test -json -count=1 -run <run> <package>`). An argv, never a
    /// shell string; native plans only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
}

impl Ticket {
    /// A ticket with an id and a body and nothing else: no scope, no
    /// dependencies, no gates. Fill the rest with struct update syntax.
    pub fn new(id: impl Into<String>, body: impl Into<String>) -> Ticket {
        Ticket {
            id: id.into(),
            title: String::new(),
            body: body.into(),
            scope: Vec::new(),
            rails: Vec::new(),
            depends_on: Vec::new(),
            tier: None,
            pool_hint: None,
            model: None,
            gates: Vec::new(),
            checks: Vec::new(),
            counterfactuals: Vec::new(),
            estimate_minutes: None,
            metadata: Metadata::default(),
        }
    }

    /// A title for a format that requires one, for a ticket that has none:
    /// the first line of its body (at most 120 characters), else its id.
    pub fn made_up_title(&self) -> String {
        match self.body.lines().next().map(str::trim) {
            Some(first) if !first.is_empty() => first.chars().take(120).collect(),
            _ => self.id.clone(),
        }
    }
}

impl Plan {
    /// A plan of `tickets` onto `main`, read from `source_format`, with no
    /// gates, caps or metadata.
    pub fn new(source_format: Format, tickets: Vec<Ticket>) -> Plan {
        Plan {
            source_format,
            repo: None,
            base: "main".to_string(),
            gates: Vec::new(),
            tickets,
            caps: BTreeMap::new(),
            review: Review::default(),
            metadata: serde_json::Map::new(),
        }
    }

    /// The ticket with this id.
    pub fn ticket(&self, id: &str) -> Option<&Ticket> {
        self.tickets.iter().find(|t| t.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_ticket_without_metadata_holds_no_map() {
        let mut t = Ticket::new("T1", "b");
        assert!(t.metadata.0.is_none());
        assert!(std::mem::size_of::<Metadata>() == std::mem::size_of::<usize>());
        let bare = serde_json::to_value(&t).unwrap();
        assert!(bare.get("metadata").is_none(), "{bare}");
        t.metadata.insert("issue".into(), json!(7));
        assert_eq!(t.metadata["issue"], 7);
        let with = serde_json::to_value(&t).unwrap();
        assert_eq!(with["metadata"], json!({"issue": 7}));
        let back: Ticket = serde_json::from_value(with).unwrap();
        assert_eq!(back, t);
        t.metadata.remove("issue");
        assert_eq!(t, Ticket::new("T1", "b"), "an emptied map is no map");
        assert_eq!(serde_json::to_value(&t).unwrap(), bare);
    }
}
