//! planwright-plan: the plan formats, the plan model (IR), validation and
//! DAG analysis.
//!
//! This crate is pure: it never starts a process, touches git, reads the
//! clock or the environment. Callers hand it text and settings; it hands
//! back diagnostics and plans.
#![deny(missing_docs)]

pub mod analysis;
pub mod command;
pub mod dag;
pub mod delivery;
pub mod diag;
pub mod doc;
pub mod flag;
pub mod formats;
pub mod gate_integrity;
pub mod graph;
pub mod json;
pub mod model;
pub mod overlap;
pub mod pathspec;
pub mod pointer;
pub mod project;
pub mod refname;
pub mod report;
pub mod routing;
pub mod schema;
pub mod schema_doc;
pub mod scope;
pub mod suggest;
mod tree;
pub mod unicode;
pub mod verdict;
pub mod view;
pub mod words;
pub mod yaml;

pub use diag::{Diagnostic, Severity, Sink};
pub use doc::Document;
pub use flag::Flag;
pub use formats::Options;
pub use model::{Format, Plan};
pub use report::{validate_text, FileReport, Target};
