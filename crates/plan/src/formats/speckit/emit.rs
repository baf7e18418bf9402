//! placeholder
use crate::diag::Sink;
use crate::model::Plan;
pub fn emit(_plan: &Plan, _sink: &mut dyn Sink) -> String { String::new() }
