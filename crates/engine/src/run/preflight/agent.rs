//! The `agent` checks: each agent's program is there, the user's set-up of
//! its CLI does not fail every attempt, and it starts as an attempt would.

use super::{path, Check, CheckName};
use crate::agent::Agent;
use planwright_config::ContainSettings;
use planwright_os::process::find_program;

pub(super) fn check_agent(agent: &dyn Agent, out: &mut Vec<Check>) {
    if let Some(problem) = agent.unusable() {
        out.push(Check::error(
            CheckName::Agent,
            problem,
            format!("check `{}`", planwright_plan::Flag::Agent),
        ));
        return;
    }
    match agent.program() {
        Some(p) if find_program(&p, path().as_deref()).is_none() => out.push(Check::error(
            CheckName::Agent,
            format!("the agent program `{p}` is not on PATH"),
            format!(
                "install it, or give its full path in `{}`",
                planwright_plan::Flag::AgentCmd
            ),
        )),
        _ => out.push(Check::ok(
            CheckName::Agent,
            format!("agent `{}` is runnable", agent.name()),
        )),
    }
}

/// What in the user's set-up of the agent's CLI fails every attempt: a
/// gateway at a loopback address behind the proxy, a key variable its
/// configuration names that the agent is not given.
pub(super) fn check_agent_setup(
    agent: &dyn Agent,
    contain: &ContainSettings,
    out: &mut Vec<Check>,
) {
    let proxied = contain.agent_network == planwright_config::AgentNetwork::Proxy;
    for problem in agent.setup_problems(proxied) {
        out.push(Check::error(
            CheckName::Agent,
            format!("agent `{}`: {}", agent.name(), problem.message),
            problem.hint,
        ));
    }
}

/// Starts the agent's CLI as an attempt would (see [`Agent::probe`]), in
/// a temporary folder outside the repository (a dry run changes nothing
/// there), when the checks before found it and the sandbox usable: a CLI
/// that cannot start there fails here, in its own words, rather than in a
/// paid attempt. The models the agent offers, when it lists them (an ACP
/// agent), for [`super::offers::check_offered`].
pub(super) fn probe_agent(
    agent: &dyn Agent,
    contain: &ContainSettings,
    out: &mut Vec<Check>,
) -> Option<Vec<String>> {
    let blocked = |check: CheckName| out.iter().any(|c| c.failed_at(check));
    if blocked(CheckName::Agent) || blocked(CheckName::Sandbox) {
        return None;
    }
    let containment = crate::contain::containment(contain.mode).ok()?;
    let scratch = tempfile::Builder::new()
        .prefix("planwright-probe-")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary folder for it: {e}"));
    let probed = scratch.and_then(|scratch| {
        // No network: the probe makes no model call.
        let confine = containment.confine(planwright_os::sandbox::Policy {
            writable: contain.writable.clone(),
            readable: contain.readable.clone(),
            ..planwright_os::sandbox::Policy::default()
        });
        let probed = agent.probe(scratch.path(), Some(&confine));
        // A folder the CLI made unreadable is opened up to be removed.
        let _ = crate::exec::files::remove_any(scratch.path());
        probed
    });
    let how = if containment.confines_writes() {
        "confined, in a fresh CLI home"
    } else {
        "in a fresh CLI home; `[sandbox] mode = \"off\"` confines nothing"
    };
    match probed {
        Ok(None) => None,
        Ok(Some(found)) => {
            out.push(Check::ok(
                CheckName::Agent,
                format!(
                    "agent `{}` started as an attempt would ({how}): {}",
                    agent.name(),
                    found.said
                ),
            ));
            found.offers
        }
        Err(words) => {
            out.push(Check::error(
                CheckName::Agent,
                format!(
                    "agent `{}` did not start as an attempt would ({how}): {words}",
                    agent.name()
                ),
                "see docs/agents.md for what the CLI needs from you",
            ));
            None
        }
    }
}
