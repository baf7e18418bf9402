//! Status written back on the issues a plan was imported from
//! (`[respond.labels]`, docs/forge.md "Issues in"): `running` while a
//! ticket runs, `failed` once it failed, both taken off when it merges (or
//! is delivered).
//!
//! The run tells it through a [`Reporter`] ([`LabelReporter`]), which only
//! queues what to write; a thread of its own ([`LabelWriter`]) talks to
//! the forge, so a slow or unreachable forge never holds the run up. What
//! the forge refuses is kept as a warning, which the caller says once the
//! run has ended: a label never stops a run.

use crate::events::{Event, Reporter};
use planwright_config::labels::IssueLabels;
use planwright_forge::Forge;
use planwright_plan::Plan;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{channel, Receiver, Sender};

/// One change of an issue's labels.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Job {
    Add(u64, String),
    Remove(u64, String),
}

/// The run's side: turns a ticket's events into label changes of its
/// issue, each sent once.
pub struct LabelReporter {
    labels: IssueLabels,
    /// The issue of each imported ticket of this repository, by ticket id.
    issues: BTreeMap<String, u64>,
    /// The tickets whose issue carries `running` from this reporter.
    running: BTreeSet<String>,
    jobs: Sender<Job>,
}

/// The forge's side: writes the changes as they come, then says what went
/// wrong.
pub struct LabelWriter {
    thread: std::thread::JoinHandle<Vec<String>>,
}

/// The reporter and the writer of `labels` for the imported tickets of
/// `plan` whose issue is in `repository` (the forge's), through `forge`.
/// `None` when no label is set or no ticket was imported from an issue.
pub fn start(
    labels: &IssueLabels,
    plan: &Plan,
    repository: &str,
    forge: Box<dyn Forge>,
) -> Option<(LabelReporter, LabelWriter)> {
    let issues: BTreeMap<String, u64> = plan
        .tickets
        .iter()
        .filter_map(|t| Some((t.id.clone(), super::ticket_issue(t)?)))
        .filter(|(_, issue)| issue.is_in(repository))
        .map(|(id, issue)| (id, issue.number))
        .collect();
    if !labels.any() || issues.is_empty() {
        return None;
    }
    let (jobs, queue) = channel();
    let thread = std::thread::spawn(move || write(forge.as_ref(), queue));
    let reporter = LabelReporter {
        labels: labels.clone(),
        issues,
        running: BTreeSet::new(),
        jobs,
    };
    Some((reporter, LabelWriter { thread }))
}

/// Writes each change; a refusal is a warning naming the issue and label.
fn write(forge: &dyn Forge, queue: Receiver<Job>) -> Vec<String> {
    let mut warnings = Vec::new();
    for job in queue {
        let (issue, label, done) = match &job {
            Job::Add(issue, label) => (
                *issue,
                label,
                forge.add_labels(*issue, std::slice::from_ref(label)),
            ),
            Job::Remove(issue, label) => (*issue, label, forge.remove_label(*issue, label)),
        };
        if let Err(e) = done {
            let verb = match job {
                Job::Add(..) => "put",
                Job::Remove(..) => "take",
            };
            let place = if verb == "put" { "on" } else { "off" };
            warnings.push(format!(
                "could not {verb} label `{label}` {place} issue #{issue}: {e}"
            ));
        }
    }
    warnings
}

impl LabelReporter {
    fn send(&self, job: Job) {
        // The writer ends only after every reporter is gone.
        let _ = self.jobs.send(job);
    }

    /// The ticket's issue, if it was imported from one of this repository.
    fn issue(&self, ticket: &str) -> Option<u64> {
        self.issues.get(ticket).copied()
    }

    fn started(&mut self, ticket: &str) {
        let Some(issue) = self.issue(ticket) else {
            return;
        };
        if !self.running.insert(ticket.to_string()) {
            return;
        }
        if let Some(failed) = &self.labels.failed {
            self.send(Job::Remove(issue, failed.to_string()));
        }
        if let Some(running) = &self.labels.running {
            self.send(Job::Add(issue, running.to_string()));
        }
    }

    fn ended(&mut self, ticket: &str, failed: bool) {
        let Some(issue) = self.issue(ticket) else {
            return;
        };
        if let Some(running) = &self.labels.running {
            self.send(Job::Remove(issue, running.to_string()));
        }
        self.running.remove(ticket);
        match (&self.labels.failed, failed) {
            (Some(label), true) => self.send(Job::Add(issue, label.to_string())),
            (Some(label), false) => self.send(Job::Remove(issue, label.to_string())),
            (None, _) => {}
        }
    }
}

impl Reporter for LabelReporter {
    fn report(&mut self, _at: &str, event: &Event) {
        match event {
            Event::AttemptStarted { ticket, .. } => self.started(ticket),
            Event::Failed { ticket, .. } => self.ended(ticket, true),
            Event::Merged { ticket, .. } | Event::Unchanged { ticket, .. } => {
                self.ended(ticket, false)
            }
            _ => {}
        }
    }
}

impl LabelWriter {
    /// Waits for every change to be written (the reporter must be gone:
    /// the run drops its reporters as it ends) and returns the warnings.
    pub fn finish(self) -> Vec<String> {
        self.thread
            .join()
            .unwrap_or_else(|_| vec!["the thread writing issue labels panicked".to_string()])
    }
}

/// `deliver`: takes `running` and `failed` off each issue of a delivered
/// ticket, through `forge`; what the forge refuses is a warning.
pub fn delivered(labels: &IssueLabels, issues: &[u64], forge: &dyn Forge) -> Vec<String> {
    let (jobs, queue) = channel();
    for issue in issues {
        for label in [&labels.running, &labels.failed].into_iter().flatten() {
            let _ = jobs.send(Job::Remove(*issue, label.to_string()));
        }
    }
    drop(jobs);
    write(forge, queue)
}
