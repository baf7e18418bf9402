//! planwright-view: the read side of a run. Every reader (`status`,
//! `report`, `watch`, `serve`) shows one [`RunView`], folded from the run's
//! typed [`Event`](planwright_engine::Event)s as `events.jsonl`
//! holds them, with the state store supplying what events do not carry.
//! It only reads: no processes, no writes to the run.
#![deny(missing_docs)]

mod html;
mod json;
mod pull_request;
mod report;
mod view;

pub use html::{duration_text, html_body, html_page, HtmlOptions};
pub use json::{
    AgentJson, AttemptJson, LegacyCounts, LegacyPause, PausedPoolJson, RunDocument, RunJson,
    StatusDocument, TicketJson,
};
pub use pull_request::pull_request_text;
pub use report::{
    cost_text, failure_text, load_report, markdown, totals_text, why, AttemptReport, RunReport,
    TicketReport, Totals, EVIDENCE_LINES,
};
pub use view::{
    load_view, open_view, parse_time, read_gate_logs, AttemptOutcome, AttemptView, BatchView,
    CheckResult, Counts, PausedPool, RunFiles, RunInfo, RunView, ShownState, Tail, TicketView,
};
