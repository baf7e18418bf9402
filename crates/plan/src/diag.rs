//! Diagnostics: what a validator found, where, and how bad it is.
//!
//! Validators push [`Diagnostic`]s into a [`Sink`]; they never print. The
//! location is a JSON Pointer into the input; [`crate::doc::Document::locate`]
//! turns it into a byte span and a line/column for rendering.

use serde::Serialize;

/// How bad a finding is. `Error` makes a plan invalid; the others never do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The plan cannot be used.
    Error,
    /// Probably a mistake, but the plan can be used.
    Warning,
    /// A note a reviewer should see (standard_v1 plan-gate advisories).
    Advisory,
}

impl Severity {
    /// The word used in every output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Advisory => "advisory",
        }
    }
}

/// Codes that were renamed, `(former, current)`. A former code still
/// names the diagnostics of its current one wherever codes are matched
/// ([`Diagnostic::is`], SARIF's `deprecatedIds`), as clippy's renamed lints
/// do; output always says the current code.
pub const RENAMED_CODES: &[(&str, &str)] = &[
    // Every other format calls its cycle rule `<format>.dag.cycle`.
    ("agb.graph.cycle", "agb.dag.cycle"),
];

/// The current spelling of `code`, which may be a former one.
pub fn current_code(code: &str) -> &str {
    RENAMED_CODES
        .iter()
        .find(|(former, _)| *former == code)
        .map_or(code, |(_, current)| current)
}

/// The former spellings of the current code `code`.
pub fn former_codes(code: &str) -> impl Iterator<Item = &'static str> + '_ {
    RENAMED_CODES
        .iter()
        .filter(move |(_, current)| *current == code)
        .map(|(former, _)| *former)
}

/// One finding of a validator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error, warning or advisory.
    pub severity: Severity,
    /// Stable code, `<format>.<rule>`, documented in `docs/diagnostics.md`.
    pub code: String,
    /// One sentence for a person; names the ticket or item when there is one.
    pub message: String,
    /// RFC 6901 pointer into the input document (`""` is the whole document).
    pub pointer: String,
    /// How to fix it, when the message alone does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The fault is the key the pointer ends in, not its value (an unknown
    /// field, a repeated key): the key is what gets underlined.
    #[serde(skip)]
    pub at_key: bool,
}

impl Diagnostic {
    /// An error at `pointer`.
    pub fn error(
        code: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Error, code, pointer, message)
    }

    /// A warning at `pointer`.
    pub fn warning(
        code: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Warning, code, pointer, message)
    }

    /// An advisory at `pointer`.
    pub fn advisory(
        code: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Advisory, code, pointer, message)
    }

    fn new(
        severity: Severity,
        code: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity,
            code: code.into(),
            message: message.into(),
            pointer: pointer.into(),
            hint: None,
            at_key: false,
        }
    }

    /// Underlines the key the pointer ends in rather than its value.
    pub fn at_key(mut self) -> Self {
        self.at_key = true;
        self
    }

    /// Adds a hint line.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Whether this diagnostic has `code`, given in its current spelling or
    /// a former one.
    pub fn is(&self, code: &str) -> bool {
        self.code == current_code(code)
    }
}

/// Where validators put what they find.
pub trait Sink {
    /// Records one diagnostic.
    fn push(&mut self, diagnostic: Diagnostic);
}

impl Sink for Vec<Diagnostic> {
    fn push(&mut self, diagnostic: Diagnostic) {
        Vec::push(self, diagnostic)
    }
}

/// A sink that remembers whether an error went through it, for validators
/// that must not build a plan from an invalid document.
pub struct Counting<'a> {
    inner: &'a mut dyn Sink,
    /// Number of errors pushed so far.
    pub errors: usize,
}

impl<'a> Counting<'a> {
    /// Wraps `inner`.
    pub fn new(inner: &'a mut dyn Sink) -> Self {
        Counting { inner, errors: 0 }
    }
}

impl Sink for Counting<'_> {
    fn push(&mut self, diagnostic: Diagnostic) {
        if diagnostic.severity == Severity::Error {
            self.errors += 1;
        }
        self.inner.push(diagnostic)
    }
}
