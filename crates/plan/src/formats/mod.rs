//! The plan formats: detection, and the validator and writer of each.
//!
//! Each format is one [`PlanFormat`] implementation and one row of
//! [`FORMATS`]; nothing here matches on the format.
//!
//! Every validator walks the document, pushes every problem it finds into a
//! sink (never stopping at the first), and returns the plan (IR) only when
//! it found no error.

pub mod agb;
pub mod autoclaude;
pub mod codeboost;
pub mod foreign;
pub mod loss;
pub mod native;
pub mod speckit;
pub mod standard_v1;
pub mod sweep;
pub mod taskmaster;

use crate::diag::{Counting, Diagnostic, Sink};
use crate::doc::{Document, Span};
use crate::flag::Flag;
use crate::model::{Format, Plan};
use crate::overlap::Overlap;
use crate::pointer::Pointer;
use crate::view::{Obj, Val};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// Everything a validator may take into account besides the document.
#[derive(Debug, Clone)]
pub struct Options {
    /// Read the document as this format instead of detecting it.
    pub format: Option<Format>,
    /// agb: gates must be `npm test` or `npm run <script>`.
    pub strict_gates: bool,
    /// The routing table in force (`[routing]`): agb's tier and pool hint
    /// must leave a candidate model in it.
    pub routing: crate::routing::Routing,
    /// The argv a codeboost `cmd` check (or a foreign format's test
    /// command) may run as a gate (`[commands] allow`), matched exactly.
    pub allowed_commands: Vec<Vec<String>>,
    /// codeboost: the issue the plan must be for.
    pub issue: Option<u64>,
    /// standard_v1: coerce bare strings into objects where the schema allows.
    pub coerce: bool,
    /// standard_v1: the implement stage's file cap, given for this
    /// validation (it wins over `standard_v1`'s).
    pub max_files_changed: Option<u32>,
    /// standard_v1: the planner's prompt rendered a calibration hint,
    /// given for this validation.
    pub calibration_hint: bool,
    /// standard_v1: what the run configuration says of the cap and the
    /// hint. Kept apart from the two above because only those make a plan of
    /// another format warn that they were ignored.
    pub standard_v1: StandardV1Defaults,
    /// The files of the repository tree the plan will run on, when known.
    pub repo_files: Option<std::sync::Arc<BTreeSet<String>>>,
    /// The surface syntax, when the file name cannot tell (standard input).
    pub syntax: Option<crate::doc::Syntax>,
    /// How many overlapping pairs of tickets to show besides the groups
    /// (`validate --verbose`); 0 shows none.
    pub overlap_pairs: usize,
    /// taskmaster: the tag to read (default: the current tag, else `master`).
    pub tag: Option<String>,
    /// taskmaster: the tag Taskmaster reads when none is named, from its
    /// files beside the plan (`.taskmaster/state.json`'s `currentTag`, else
    /// `.taskmaster/config.json`'s `global.defaultTag`), read by the caller.
    pub current_tag: Option<CurrentTag>,
}

/// The tag Taskmaster reads when none is named, and the file that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentTag {
    /// The tag.
    pub tag: String,
    /// Where it was read, as shown to the user (`.taskmaster/state.json`).
    pub from: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            format: None,
            strict_gates: true,
            routing: crate::routing::Routing::default(),
            allowed_commands: Vec::new(),
            issue: None,
            coerce: false,
            max_files_changed: None,
            calibration_hint: false,
            standard_v1: StandardV1Defaults::default(),
            repo_files: None,
            syntax: None,
            overlap_pairs: 0,
            tag: None,
            current_tag: None,
        }
    }
}

/// `[standard_v1]` of the run configuration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StandardV1Defaults {
    /// The implement stage's file cap; the cap advisories need it.
    pub max_files_changed: Option<u32>,
    /// The planner's prompts render a calibration hint, so a plan must carry
    /// `raw_predicted_runtime_minutes` (an advisory when it does not).
    pub calibration_hint: bool,
}

/// What validating one document gave.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The format the document was read as, if one was chosen.
    pub format: Option<Format>,
    /// The plan, when there was no error.
    pub plan: Option<Plan>,
    /// The plan's overlap forecast (groups of tickets), made once here for
    /// its warnings and kept for whoever checks the plan next (a run's
    /// preflight).
    pub overlaps: Vec<Overlap>,
}

/// Detects the format of `doc` (unless `options.format` says) and validates it.
pub fn validate(doc: &Document, options: &Options, sink: &mut dyn Sink) -> Outcome {
    let read = read(doc, options, sink);
    let (outcome, warnings) = forecast(read, options);
    for (d, _) in warnings {
        sink.push(d);
    }
    outcome
}

/// What [`read`] found: the format, the plan when it has no error, and
/// where its tickets stand, for [`forecast`].
pub struct Read {
    format: Option<Format>,
    plan: Option<Plan>,
    places: Places,
}

/// The first part of [`validate`]: detects the format, runs its checks
/// and the gate-file warnings, and finds where each ticket stands, so that
/// [`forecast`] needs no document (a caller may free its parsed tree
/// first: issue 53).
pub fn read(doc: &Document, options: &Options, sink: &mut dyn Sink) -> Read {
    let unread = |format| Read {
        format,
        plan: None,
        places: Places::default(),
    };
    let format = match options.format {
        Some(f) => f,
        None if doc.syntax == crate::doc::Syntax::Markdown => Format::Speckit,
        None => match detect(doc.root().val()) {
            Ok(f) => f,
            Err(d) => {
                sink.push(d);
                return unread(None);
            }
        },
    };
    if (doc.syntax == crate::doc::Syntax::Markdown) != (format == Format::Speckit) {
        sink.push(syntax_mismatch(format));
        return unread(Some(format));
    }
    unused_options(format, options, sink);
    let mut counting = Counting::new(sink);
    let plan = plan_format(format).validate(doc, options, &mut counting);
    let plan = if counting.errors == 0 { plan } else { None };
    let places = match &plan {
        Some(plan) => {
            let places = Places::new(doc, plan, format);
            gate_file_warnings(&places, plan, sink);
            places
        }
        None => Places::default(),
    };
    Read {
        format: Some(format),
        plan,
        places,
    }
}

/// The second part of [`validate`]: the overlap forecast of the plan
/// [`read`] found, and its warnings, each with the span it underlines.
pub fn forecast(read: Read, options: &Options) -> (Outcome, Vec<(Diagnostic, Span)>) {
    let mut warnings = Vec::new();
    let overlaps = match &read.plan {
        Some(plan) => overlap_warnings(&read.places, plan, options, &mut warnings),
        None => vec![],
    };
    let outcome = Outcome {
        format: read.format,
        plan: read.plan,
        overlaps,
    };
    (outcome, warnings)
}

/// Only Spec Kit plans are Markdown, and they are nothing else.
fn syntax_mismatch(format: Format) -> Diagnostic {
    let d = Diagnostic::error(
        "plan.format.syntax",
        "",
        match format {
            Format::Speckit => {
                "a Spec Kit tasks.md is Markdown; this file was read as JSON or YAML".to_string()
            }
            _ => format!("a {format} plan is JSON or YAML, and this file was read as Markdown"),
        },
    );
    d.with_hint(format!("name the file for its syntax (`.md` for a tasks.md, `.json` or `.yaml` otherwise), or pass the right `{}`", crate::Flag::Format))
}

/// A warning for each option that only another format reads, so that a
/// check the user asked for is never silently skipped.
fn unused_options(format: Format, options: &Options, sink: &mut dyn Sink) {
    let set = [
        (Flag::Issue, Format::Codeboost, options.issue.is_some()),
        (Flag::Repo, Format::Codeboost, options.repo_files.is_some()),
        (Flag::Coerce, Format::StandardV1, options.coerce),
        (
            Flag::MaxFilesChanged,
            Format::StandardV1,
            options.max_files_changed.is_some(),
        ),
        (
            Flag::CalibrationHint,
            Format::StandardV1,
            options.calibration_hint,
        ),
        (Flag::Tag, Format::Taskmaster, options.tag.is_some()),
    ];
    for (flag, reader, given) in set {
        if given && format != reader {
            sink.push(Diagnostic::warning(
                "plan.option.unused",
                "",
                format!("`{flag}` applies to {reader} plans only; it was ignored for this {format} plan"),
            ));
        }
    }
}

/// The JSON Schema of `format`, when it has one.
pub fn schema(format: Format) -> Option<Value> {
    plan_format(format).schema()
}

/// One `plan.gate.in-scope` warning per ticket whose scope covers a file
/// one of its gates runs with a glob, and does not name it: a candidate
/// that changes it is rejected.
fn gate_file_warnings(places: &Places, plan: &Plan, sink: &mut dyn Sink) {
    for (i, ticket) in plan.tickets.iter().enumerate() {
        let gates = plan.gates.iter().chain(&ticket.gates);
        let Some((gate, pattern, file)) = crate::gate_integrity::exposed(&ticket.scope, gates)
        else {
            continue;
        };
        sink.push(
            Diagnostic::warning(
                "plan.gate.in-scope",
                places.ticket(i),
                format!(
                    "{}: scope `{pattern}` covers `{file}`, which the gate `{}` runs; a candidate that changes it fails with gate_script_tampering, as the scope does not name it",
                    ticket.id,
                    gate.command_line()
                ),
            )
            .with_hint(format!(
                "narrow the scope to leave `{file}` out, or name `{file}` in the scope if the ticket is meant to change it"
            )),
        );
    }
}

/// One `plan.scope.overlap` warning per group of tickets that may run at
/// the same time and may change the same paths, at its first ticket; with
/// `options.overlap_pairs`, that many of the pairs behind them as
/// advisories. Returns the forecast.
fn overlap_warnings(
    places: &Places,
    plan: &Plan,
    options: &Options,
    out: &mut Vec<(Diagnostic, Span)>,
) -> Vec<Overlap> {
    let graph = crate::graph::TicketGraph::new(plan);
    let groups = crate::overlap::forecast(plan, &graph);
    for group in &groups {
        let first = group.indices[0];
        out.push((
            Diagnostic::warning(
                "plan.scope.overlap",
                places.ticket(first),
                crate::words::overlap_message(&group.tickets, &group.patterns),
            )
            .with_hint(format!("add dependencies between them (so one merges before the next starts) or narrow their scopes; `{}` shows the pairs, `{} json` lists every ticket", crate::Flag::Verbose, crate::Flag::Output)),
            places.span(first),
        ));
    }
    if options.overlap_pairs > 0 {
        for pair in crate::overlap::pairs(plan, &graph, &groups, options.overlap_pairs) {
            let [pa, pb] = &pair.patterns;
            out.push((
                Diagnostic::advisory(
                    "plan.scope.overlap-pair",
                    places.ticket(pair.b_index),
                    format!(
                        "{} and {} may run at the same time and both may change `{pa}` / `{pb}`",
                        pair.a, pair.b
                    ),
                ),
                places.span(pair.b_index),
            ));
        }
    }
    groups
}

/// One `<format>.json.duplicate-key` warning per duplicate key, for formats
/// whose tool (`tool`) parses JSON with last-value-wins semantics.
fn warn_duplicate_keys(doc: &Document, format: &str, tool: &str, sink: &mut dyn Sink) {
    for (at, _) in doc.duplicate_keys() {
        sink.push(
            Diagnostic::warning(
                format!("{format}.json.duplicate-key"),
                &at,
                format!("duplicate key; {tool} uses the last value ({at})"),
            )
            .at_key()
            .with_hint("remove one of the two"),
        );
    }
}

/// Where tickets stand in their document, read from it once, so that
/// placing many warnings reads the document once.
#[derive(Default)]
struct Places {
    /// Each ticket's pointer (its scope's, or the ticket's, or the whole
    /// document's, whichever exists first) and the span it locates to.
    tickets: Vec<(String, Span)>,
    /// The whole document's span, for a ticket without a place.
    root: Span,
}

impl Places {
    fn new(doc: &Document, plan: &Plan, format: Format) -> Self {
        let place = |pointers: &[Pointer]| {
            let pointer = (pointers.iter())
                .find(|p| doc.node(p.as_str()).is_some())
                .map(String::from)
                .unwrap_or_default();
            let span = doc.locate(&pointer);
            (pointer, span)
        };
        let form = plan_format(format);
        // Made one ticket at a time where the format places tickets one to
        // one: a table of every candidate would be held with the parsed
        // tree and the plan, a large plan's peak (issue 53).
        let tickets = match form.ticket_pointers(doc.root().val(), plan) {
            Some(table) => table.iter().map(|p| place(p)).collect(),
            None => (0..plan.tickets.len())
                .map(|i| place(&form.pointer(i)))
                .collect(),
        };
        Places {
            tickets,
            root: doc.root().span(),
        }
    }

    /// The pointer of ticket `i`'s scope in the document (or of the
    /// ticket, or of the whole document, whichever exists first).
    fn ticket(&self, i: usize) -> String {
        self.tickets
            .get(i)
            .map(|(p, _)| p.clone())
            .unwrap_or_default()
    }

    /// The span [`Places::ticket`]'s pointer locates to.
    fn span(&self, i: usize) -> Span {
        self.tickets.get(i).map_or(self.root, |(_, s)| *s)
    }
}

/// Writes `plan` in the format `to`; pushes a warning for each thing the
/// target cannot express.
pub fn emit(plan: &Plan, to: Format, sink: &mut dyn Sink) -> Value {
    plan_format(to).emit(plan, sink)
}

/// The text of `plan` written in the format `to`; pushes a warning for
/// each thing the target cannot express.
pub fn write(plan: &Plan, to: Format, sink: &mut dyn Sink) -> String {
    plan_format(to).write(plan, sink)
}

/// How strongly a document looks like one format.
pub enum Fit {
    /// Every signature field is there.
    Full,
    /// Some of them are, with what is missing.
    Partial(String),
    /// None is, with why not.
    No(String),
}

/// One plan format: how to tell it, read it, write it and point into it.
/// A new format is one implementation and one row of [`FORMATS`].
pub trait PlanFormat: Sync {
    /// Which format this is.
    fn format(&self) -> Format;

    /// The name used on the command line, in JSON output and in codes.
    fn name(&self) -> &'static str {
        self.format().name()
    }

    /// How strongly a document's top-level object looks like this format.
    fn detect(&self, root: Obj<'_>) -> Fit;

    /// Validates a document of this format; the plan when there was no error.
    fn validate(&self, doc: &Document, options: &Options, sink: &mut dyn Sink) -> Option<Plan>;

    /// Writes `plan` in this format, with a warning for each thing it cannot say.
    fn emit(&self, plan: &Plan, sink: &mut dyn Sink) -> Value;

    /// The text of [`PlanFormat::emit`]'s document: pretty JSON, unless the
    /// format is not JSON.
    fn write(&self, plan: &Plan, sink: &mut dyn Sink) -> String {
        let doc = self.emit(plan, sink);
        serde_json::to_string_pretty(&doc).expect("documents serialize") + "\n"
    }

    /// The JSON Schema, when the format has one.
    fn schema(&self) -> Option<Value>;

    /// What the format calls a ticket's checks (`Ticket::checks`), one
    /// then many, as messages name them: `check`, `checks`.
    fn check_nouns(&self) -> [&'static str; 2] {
        ["check", "checks"]
    }

    /// Whether the plan's own commands (its gates) run only once a person
    /// approved each in `[commands] allow`: a plan an agent wrote.
    fn commands_need_approval(&self) -> bool {
        false
    }

    /// Where ticket `i` stands in a document of this format: its scope,
    /// then the ticket itself.
    fn pointer(&self, i: usize) -> [Pointer; 2];

    /// Where each ticket of `plan`, read from the document `root`, stands
    /// in it (the candidates of [`PlanFormat::pointer`], by ticket), for
    /// formats whose tickets are not one to one with a list of the
    /// document (finished tasks left out, phases flattened). All at once,
    /// so that placing many warnings reads the document once. `None` where
    /// ticket `i` is at [`PlanFormat::pointer`]`(i)`.
    fn ticket_pointers(&self, _root: Val<'_>, _plan: &Plan) -> Option<Vec<Vec<Pointer>>> {
        None
    }
}

/// Where each item of a document of phases holding items is
/// (`/phases/<p>/<items>/<k>`), by the item's `id` (the ticket's), for
/// formats that flatten phases into tickets; the first item of an id.
pub(crate) fn phase_items(root: Val<'_>, items: &str) -> HashMap<String, Pointer> {
    let mut out = HashMap::new();
    let Some(phases) = root.get("phases").and_then(Val::as_array) else {
        return out;
    };
    for (p, phase) in phases.iter().enumerate() {
        let Some(list) = phase.get(items).and_then(Val::as_array) else {
            continue;
        };
        for (k, item) in list.iter().enumerate() {
            if let Some(id) = item.get("id").and_then(Val::as_str) {
                let at = Pointer::root().key("phases").index(p).key(items).index(k);
                out.entry(id.to_string()).or_insert(at);
            }
        }
    }
    out
}

/// Every format, in the order detection tries them.
pub static FORMATS: [&dyn PlanFormat; 7] = [
    &agb::Agb,
    &codeboost::Codeboost,
    &standard_v1::StandardV1,
    &native::Native,
    &taskmaster::Taskmaster,
    &autoclaude::Autoclaude,
    &speckit::Speckit,
];

/// The implementation of `format`.
pub fn plan_format(format: Format) -> &'static dyn PlanFormat {
    match FORMATS.iter().find(|f| f.format() == format) {
        Some(f) => *f,
        // `every_format_has_a_row` holds this.
        None => unreachable!("{format} has no row in FORMATS"),
    }
}

/// Which format a document is written in.
///
/// A format whose signature fields are all present wins; when none is
/// complete but exactly one is partly there, that one is chosen so that its
/// validator can say precisely what is missing.
pub fn detect(value: Val<'_>) -> Result<Format, Diagnostic> {
    let Some(root) = value.as_object() else {
        return Err(Diagnostic::error(
            "plan.format.unknown",
            "",
            "a plan must be a JSON object (or YAML mapping) at the top level",
        ));
    };
    let fits: Vec<(Format, Fit)> = FORMATS
        .iter()
        .map(|f| (f.format(), f.detect(root)))
        .collect();
    let full: Vec<Format> = fits
        .iter()
        .filter(|(_, x)| matches!(x, Fit::Full))
        .map(|(f, _)| *f)
        .collect();
    let partial: Vec<Format> = fits
        .iter()
        .filter(|(_, x)| matches!(x, Fit::Partial(_)))
        .map(|(f, _)| *f)
        .collect();
    match (full.as_slice(), partial.as_slice()) {
        ([one], _) | ([], [one]) => Ok(*one),
        ([], []) => {
            let why: Vec<String> = fits
                .iter()
                .map(|(f, x)| match x {
                    Fit::No(w) | Fit::Partial(w) => format!("{f}: {w}"),
                    Fit::Full => unreachable!("no format fits fully here"),
                })
                .collect();
            Err(Diagnostic::error(
                "plan.format.unknown",
                "",
                format!(
                    "cannot tell which plan format this is (tried {})",
                    why.join("; ")
                ),
            )
            .with_hint(format!("pass `{} agb|codeboost|standard_v1|native|taskmaster|autoclaude|speckit` to choose one", crate::Flag::Format)))
        }
        (many, _) if many.len() > 1 => Err(ambiguous(many)),
        (_, many) => Err(ambiguous(many)),
    }
}

fn ambiguous(formats: &[Format]) -> Diagnostic {
    let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
    Diagnostic::error(
        "plan.format.ambiguous",
        "",
        format!(
            "the document fits several plan formats: {}",
            names.join(", ")
        ),
    )
    .with_hint(format!("pass `{} NAME` to choose one", crate::Flag::Format))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect(text: &str) -> Result<Format, Diagnostic> {
        let doc = Document::parse("p.json", text.to_string()).unwrap();
        super::detect(doc.root().val())
    }

    /// The forecast needs no document: its warnings carry the spans their
    /// pointers locate to, so `validate_text` frees the parsed tree first.
    #[test]
    fn the_forecast_places_its_warnings_as_the_document_does() {
        let text = r#"{"repo": "/srv/app", "base": "main", "gate": {"test": "npm test"},
            "tickets": [
              {"id": "T1", "title": "a", "body": "a", "scope": ["src/**"]},
              {"id": "T2", "title": "b", "body": "b", "scope": ["src/a.rs"]},
              {"id": "T3", "title": "c", "body": "c", "scope": ["docs/x.md"]},
              {"id": "T4", "title": "d", "body": "d", "scope": ["docs/*.md"]}
            ]}"#;
        let doc = Document::parse("p.json", text.to_string()).unwrap();
        let options = Options {
            overlap_pairs: 9,
            ..Options::default()
        };
        let mut found = Vec::new();
        let read = read(&doc, &options, &mut found);
        let copy = doc.clone();
        drop(doc);
        let (outcome, warnings) = forecast(read, &options);
        assert_eq!(outcome.overlaps.len(), 2, "{warnings:?}");
        let placed: Vec<(&str, &str, &str)> = (warnings.iter())
            .map(|(d, span)| {
                assert_eq!(*span, copy.locate(&d.pointer), "{d:?}");
                (
                    d.code.as_str(),
                    d.pointer.as_str(),
                    &copy.text[span.start..span.end],
                )
            })
            .collect();
        assert_eq!(
            placed,
            [
                ("plan.scope.overlap", "/tickets/0/scope", "[\"src/**\"]"),
                ("plan.scope.overlap", "/tickets/2/scope", "[\"docs/x.md\"]"),
                (
                    "plan.scope.overlap-pair",
                    "/tickets/1/scope",
                    "[\"src/a.rs\"]"
                ),
                (
                    "plan.scope.overlap-pair",
                    "/tickets/3/scope",
                    "[\"docs/*.md\"]"
                ),
            ]
        );
    }

    #[test]
    fn options_of_another_format_are_named_not_ignored() {
        let doc = Document::parse("p.json", r#"{"planwright": 1}"#.to_string()).unwrap();
        let options = Options {
            issue: Some(3),
            coerce: true,
            ..Options::default()
        };
        let mut found = Vec::new();
        validate(&doc, &options, &mut found);
        let unused: Vec<&str> = found
            .iter()
            .filter(|d| d.code == "plan.option.unused")
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(
            unused,
            [
                format!(
                    "`{}` applies to codeboost plans only; it was ignored for this native plan",
                    Flag::Issue
                ),
                format!(
                    "`{}` applies to standard_v1 plans only; it was ignored for this native plan",
                    Flag::Coerce
                ),
            ]
        );
    }

    #[test]
    fn every_format_has_a_row() {
        for format in Format::ALL {
            assert_eq!(plan_format(format).format(), format);
            assert_eq!(plan_format(format).name(), format.name());
        }
        assert_eq!(FORMATS.len(), Format::ALL.len());
    }

    #[test]
    fn detects_each_format() {
        assert_eq!(
            detect(r#"{"tickets": [], "gate": {}}"#).unwrap(),
            Format::Agb
        );
        assert_eq!(
            detect(r#"{"schema_version": 1, "items": []}"#).unwrap(),
            Format::Codeboost
        );
        assert_eq!(
            detect(r#"{"plan_version": "standard_v1"}"#).unwrap(),
            Format::StandardV1
        );
        assert_eq!(detect(r#"{"planwright": 1}"#).unwrap(), Format::Native);
        assert_eq!(detect(r#"{"tickets": []}"#).unwrap(), Format::Agb);
    }

    #[test]
    fn unknown_and_ambiguous_say_why() {
        let d = detect(r#"{"x": 1}"#).unwrap_err();
        assert_eq!(d.code, "plan.format.unknown");
        assert!(
            d.message.contains("agb: no `tickets` and `gate` keys"),
            "{}",
            d.message
        );
        let d = detect(r#"{"tickets": [], "gate": {}, "planwright": 1}"#).unwrap_err();
        assert_eq!(d.code, "plan.format.ambiguous");
        assert!(d.message.contains("agb, native"), "{}", d.message);
        assert_eq!(detect("[]").unwrap_err().code, "plan.format.unknown");
    }
}
