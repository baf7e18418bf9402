//! Preflight's probe of an ACP agent: started as an attempt would be, it
//! is asked for a session (`initialize`, `session/new`) and no prompt, so
//! preflight can say which set-up it got and which models it offers, and
//! refuse a model it does not offer before any attempt.

use super::session::{not_offered, offered_as, TurnEnd, PROBED};
use super::Acp;
use crate::agent::{AttemptContext, Probed};
use crate::error::EngineError;
use planwright_os::process::Finished;
use std::path::Path;

/// The probe's attempt context: as a CLI's probe has it, the slot home
/// named `acp`.
pub(super) fn context(
    acp: &Acp,
    scratch: &Path,
    confine: Option<&planwright_os::sandbox::Confine>,
) -> Result<AttemptContext, EngineError> {
    crate::agent::cli::probe_context(acp, "acp", scratch, confine)
}

/// What preflight says of a probe that ended with `turn`: the command,
/// the set-up and the models offered (kept, for the routing's check);
/// or, as an error, why the agent cannot serve an attempt (no session,
/// or no `model` among those it offers).
pub(super) fn verdict(
    argv: &str,
    setup: &str,
    model: Option<&str>,
    turn: TurnEnd,
    offered: Option<Vec<String>>,
    done: &Finished,
) -> Result<Option<Probed>, String> {
    // The probe has no network: an agent whose session needs it (a login
    // checked, a model list fetched) is left for the attempt to judge.
    let unjudged = |what: String| {
        Ok(Some(Probed {
            said: format!(
                "`{argv}` with {setup}; {what} without the network, so the models it offers are for the attempt to find"
            ),
            offers: None,
        }))
    };
    match turn {
        TurnEnd::Stopped(reason) if reason == PROBED => {}
        TurnEnd::Error(error)
            if error["message"]
                .as_str()
                .is_some_and(|m| m.contains("speaks ACP version")) =>
        {
            return Err(format!(
                "`{argv}`: {}",
                error["message"].as_str().unwrap_or("")
            ))
        }
        TurnEnd::Error(error) => {
            let message = error["message"].as_str().unwrap_or("an error").to_string();
            return unjudged(format!(
                "it answered `session/new` with an error ({message})"
            ));
        }
        TurnEnd::TimedOut => return unjudged("it did not answer `session/new` in time".into()),
        _ => {
            return Err(format!(
                "`{argv}` ended with {} before answering `session/new`: {}",
                done.exit,
                done.output_tail.trim()
            ))
        }
    }
    let models = match &offered {
        Some(list) if !list.is_empty() => format!("it offers {}", ticked(list)),
        _ => "it offers no models to choose from".to_string(),
    };
    if let (Some(model), Some(list)) = (model, &offered) {
        if offered_as(model, list).is_none() {
            return Err(format!("`{argv}`: {}", not_offered(model, list)));
        }
    }
    Ok(Some(Probed {
        said: format!("`{argv}` with {setup}; {models}"),
        offers: offered.filter(|list| !list.is_empty()),
    }))
}

fn ticked(list: &[String]) -> String {
    let each: Vec<String> = list.iter().map(|m| format!("`{m}`")).collect();
    each.join(", ")
}
