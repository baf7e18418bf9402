//! The command-line settings a message may tell the user to give.
//!
//! Libraries name the setting ([`Flag`]); the program that parses the
//! command line says how each is spelled ([`set_spelling`]), once, so that
//! no library holds a flag's name and a renamed flag changes one table.

use std::fmt;
use std::sync::OnceLock;

/// A setting given on the command line, as a message names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flag {
    /// The agent to run.
    Agent,
    /// The branch tickets merge into.
    Base,
    /// `worker`: its cache.
    Cache,
    /// Slots: attempts at once.
    Jobs,
    /// `worker`: agents may run unconfined.
    Unsandboxed,
    /// The `cmd` agent's command.
    AgentCmd,
    /// Continue the newest run on the base whatever its plan.
    Continue,
    /// Let a ticket that names them change the run's plan or configuration.
    AllowConfigChange,
    /// `deliver`: open the pull requests as drafts.
    Draft,
    /// Gates failing on the base are a warning.
    AllowRedBase,
    /// Preflight does not run the gates on the base.
    NoGateProbe,
    /// standard_v1: the calibration hint the planner saw.
    CalibrationHint,
    /// standard_v1: fishhawk's coercions.
    Coerce,
    /// The plan format to read.
    Format,
    /// `replay`: the commits it replays.
    Commits,
    /// A gate for every ticket.
    Gate,
    /// codeboost: the issue the plan answers.
    Issue,
    /// standard_v1: the files-changed cap.
    MaxFilesChanged,
    /// agb: strict gates off.
    NoStrictGates,
    /// How results are printed.
    Output,
    /// The repository to work in.
    Repo,
    /// Run a merged ticket again.
    Rerun,
    /// Run every ticket merged from an older definition again.
    RerunChanged,
    /// taskmaster: the tag to read.
    Tag,
    /// The format a command writes.
    To,
    /// Say more.
    Verbose,
}

impl Flag {
    /// Every flag, for the spelling table's test.
    pub const ALL: [Flag; 26] = [
        Flag::Agent,
        Flag::Base,
        Flag::Cache,
        Flag::Jobs,
        Flag::Unsandboxed,
        Flag::AgentCmd,
        Flag::Continue,
        Flag::AllowConfigChange,
        Flag::Draft,
        Flag::AllowRedBase,
        Flag::NoGateProbe,
        Flag::CalibrationHint,
        Flag::Coerce,
        Flag::Format,
        Flag::Commits,
        Flag::Gate,
        Flag::Issue,
        Flag::MaxFilesChanged,
        Flag::NoStrictGates,
        Flag::Output,
        Flag::Repo,
        Flag::Rerun,
        Flag::RerunChanged,
        Flag::Tag,
        Flag::To,
        Flag::Verbose,
    ];

    /// The setting's own name, used when no program set a spelling (a
    /// library's own tests).
    pub fn setting(self) -> &'static str {
        match self {
            Flag::Agent => "agent",
            Flag::Base => "base",
            Flag::Cache => "cache",
            Flag::Jobs => "jobs",
            Flag::Unsandboxed => "unsandboxed",
            Flag::AgentCmd => "agent cmd",
            Flag::Continue => "continue",
            Flag::AllowConfigChange => "allow config change",
            Flag::Draft => "draft",
            Flag::AllowRedBase => "allow red base",
            Flag::NoGateProbe => "no gate probe",
            Flag::CalibrationHint => "calibration hint",
            Flag::Coerce => "coerce",
            Flag::Format => "format",
            Flag::Commits => "commits",
            Flag::Gate => "gate",
            Flag::Issue => "issue",
            Flag::MaxFilesChanged => "max files changed",
            Flag::NoStrictGates => "no strict gates",
            Flag::Output => "output",
            Flag::Repo => "repo",
            Flag::Rerun => "rerun",
            Flag::RerunChanged => "rerun changed",
            Flag::Tag => "tag",
            Flag::To => "to",
            Flag::Verbose => "verbose",
        }
    }
}

static SPELLING: OnceLock<fn(Flag) -> &'static str> = OnceLock::new();

/// Says how the program spells each flag; the first call wins.
pub fn set_spelling(spell: fn(Flag) -> &'static str) {
    let _ = SPELLING.set(spell);
}

/// The flag as the program spells it (`--gate`).
impl fmt::Display for Flag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match SPELLING.get() {
            Some(spell) => f.write_str(spell(*self)),
            None => f.write_str(self.setting()),
        }
    }
}
