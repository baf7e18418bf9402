//! What the engine reports while it runs. The engine emits [`Event`]s;
//! reporters render them (JSON lines here, terminal and plain text in the CLI).

use crate::failure::Failure;
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// Something that happened during a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The run starts (or continues a previous one).
    RunStarted {
        /// The run id.
        run: String,
        /// The base branch.
        base: String,
        /// Tickets in the plan.
        tickets: usize,
        /// Whether this continues an earlier run of the same plan.
        continued: bool,
    },
    /// A ticket merged by an earlier run is not run again.
    AlreadyMerged {
        /// The ticket.
        ticket: String,
    },
    /// An attempt starts.
    AttemptStarted {
        /// The ticket.
        ticket: String,
        /// 1-based attempt number.
        attempt: u32,
        /// The base commit it starts from.
        base_commit: String,
    },
    /// An attempt enters a phase (`agent`, `commit`, `verify`, `gates`).
    Phase {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// The phase.
        phase: String,
    },
    /// An attempt was rejected.
    AttemptRejected {
        /// The ticket.
        ticket: String,
        /// The attempt.
        attempt: u32,
        /// Why.
        failure: Failure,
        /// Whether another attempt follows.
        retrying: bool,
    },
    /// A ticket passed verification and is being merged.
    Merging {
        /// The ticket.
        ticket: String,
    },
    /// A ticket landed on the base branch.
    Merged {
        /// The ticket.
        ticket: String,
        /// The commit on the base branch.
        commit: String,
    },
    /// A ticket ran out of attempts.
    Failed {
        /// The ticket.
        ticket: String,
        /// The last failure.
        failure: Failure,
    },
    /// A ticket cannot start because an ancestor failed.
    Blocked {
        /// The ticket.
        ticket: String,
        /// The failed ancestor.
        by: String,
    },
    /// The run stopped.
    RunFinished {
        /// The run id.
        run: String,
        /// Tickets merged (in this or an earlier run of the same plan).
        merged: usize,
        /// Tickets failed.
        failed: usize,
        /// Tickets blocked.
        blocked: usize,
        /// Whether it stopped early (Ctrl-C).
        interrupted: bool,
    },
    /// How the run confines agents and gates (`[sandbox] mode`), recorded
    /// right after the run starts.
    Contained {
        /// `landlock (ABI 7), user+pid namespaces`, or `off, ...`.
        sandbox: String,
    },
}

impl Event {
    /// The ticket the event is about, if any.
    pub fn ticket(&self) -> Option<&str> {
        match self {
            Event::AlreadyMerged { ticket }
            | Event::AttemptStarted { ticket, .. }
            | Event::Phase { ticket, .. }
            | Event::AttemptRejected { ticket, .. }
            | Event::Merging { ticket }
            | Event::Merged { ticket, .. }
            | Event::Failed { ticket, .. }
            | Event::Blocked { ticket, .. } => Some(ticket),
            _ => None,
        }
    }

    /// The event's name (`attempt_started`).
    pub fn name(&self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.get("event").and_then(|e| e.as_str()).map(String::from))
            .unwrap_or_default()
    }
}

/// Receives every event, with its timestamp (RFC 3339 UTC).
pub trait Reporter: Send {
    /// One event.
    fn report(&mut self, at: &str, event: &Event);
}

/// Writes each event as one JSON object per line (`runs/<run>/events.jsonl`).
pub struct JsonLines {
    file: std::fs::File,
}

impl JsonLines {
    /// Appends to `path`, creating it.
    pub fn open(path: &Path) -> std::io::Result<JsonLines> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(JsonLines { file })
    }
}

impl Reporter for JsonLines {
    fn report(&mut self, at: &str, event: &Event) {
        let mut value = serde_json::to_value(event).expect("events serialize");
        if let Some(obj) = value.as_object_mut() {
            obj.insert("at".into(), at.into());
        }
        // A full disk must not stop the run; the state store is the record.
        let _ = writeln!(self.file, "{value}");
    }
}

/// Collects events in memory (tests).
#[derive(Default)]
pub struct Recorder(pub std::sync::Arc<std::sync::Mutex<Vec<Event>>>);

impl Reporter for Recorder {
    fn report(&mut self, _at: &str, event: &Event) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event.clone());
    }
}
