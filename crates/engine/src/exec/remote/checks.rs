//! What preflight (and `run`, before any agent starts) finds out about a
//! remote executor's workers: slots for every job; at each place a worker
//! of this protocol and this build (unless `[executor]
//! allow_version_skew`), that confines agents, or was started
//! `--unsandboxed` when `[sandbox] mode = "off"`, and finds every agent's
//! program; and over `ssh`, host keys checked as `ssh -G` says.

use super::hello::{greet, places, Greeting};
use super::worker::version;
use crate::agent::Agents;
use crate::git::repo::Repo;
use crate::model::{Check, CheckName};
use planwright_config::{ContainSettings, ExecutorSettings, SandboxMode, WorkerLink};
use planwright_plan::Flag;

/// The checks of `executor`'s workers for a run of `jobs` slots, with the
/// agents `agents` and the sandbox `contain`.
pub(crate) fn check_workers(
    repo: &Repo,
    executor: &ExecutorSettings,
    jobs: usize,
    link: &WorkerLink,
    contain: &ContainSettings,
    agents: &Agents,
    checks: &mut Vec<Check>,
) {
    let jobs = jobs.max(1);
    // Preflight runs before the run's Ctrl-C is caught: the signal ends
    // the process, and the next invocation deletes the greeting's pod.
    let never = planwright_os::process::Cancel::default();
    let transport = match super::transport(executor, &repo.state_dir(), jobs, &never) {
        Ok(Some(t)) => t,
        Ok(None) => return,
        Err(e) => {
            let hint = match executor {
                ExecutorSettings::Kubernetes(_) => "see docs/scaling.md#kubernetes",
                _ => "run planwright by its full path, or set `[executor] command`",
            };
            checks.push(Check::error(CheckName::Executor, e.to_string(), hint));
            return;
        }
    };
    if transport.slots() < jobs {
        checks.push(Check::error(
            CheckName::Executor,
            format!(
                "{} asked for, but the hosts have {}",
                planwright_plan::words::count(jobs, "slot"),
                transport.slots()
            ),
            format!(
                "pass fewer `{}`, or raise `[executor] slots_per_host` or add hosts",
                Flag::Jobs
            ),
        ));
    }
    if let ExecutorSettings::Ssh { hosts, ssh, .. } = executor {
        for host in hosts {
            if let Some(check) = host_keys(ssh, host) {
                checks.push(check);
            }
        }
    }
    let mut programs: Vec<String> = agents.each().filter_map(|a| a.program()).collect();
    programs.sort();
    programs.dedup();
    let confine = contain.mode == SandboxMode::Enforce;
    for (slot, place) in places(transport.as_ref()) {
        checks.push(
            match greet(transport.as_ref(), slot, &programs, link.lost_after) {
                Ok(g) => judge(&place, &g, confine, link),
                Err(lost) => Check::error(
                    CheckName::Executor,
                    lost.to_string(),
                    transport.unreachable_hint(slot),
                ),
            },
        );
    }
    transport.close();
}

/// The check of one place's greeting.
fn judge(place: &str, g: &Greeting, confine: bool, link: &WorkerLink) -> Check {
    if !link.allow_version_skew && g.planwright != version() {
        return Check::error(
            CheckName::Executor,
            format!("the worker at {place} {}", super::hello::skewed(&g.planwright)),
            "build the workers from the same commit as this planwright (`planwright --version` names it)",
        );
    }
    if confine && !g.sandbox.enforced {
        return Check::error(
            CheckName::Executor,
            format!("the worker at {place} cannot confine agents: {}", g.sandbox.detail),
            format!("run workers on Linux with Landlock and unprivileged user namespaces, or set `[sandbox] mode = \"off\"` and start them with `planwright worker {}`", Flag::Unsandboxed),
        );
    }
    if !confine && !g.unsandboxed {
        return Check::error(
            CheckName::Executor,
            format!("the worker at {place} was not started `{}`, so it refuses to run agents unconfined as `[sandbox] mode = \"off\"` asks", Flag::Unsandboxed),
            format!("add `{}` to `[executor] command`, or confine the agents (`[sandbox] mode = \"enforce\"`)", Flag::Unsandboxed),
        );
    }
    if !g.missing.is_empty() {
        let names: Vec<String> = g.missing.iter().map(|p| format!("`{p}`")).collect();
        return Check::error(
            CheckName::Executor,
            format!(
                "the worker at {place} cannot find the agent program {} on its PATH",
                names.join(", ")
            ),
            format!("install it there (for `ssh`: on the PATH of a non-interactive login), or give its full path in `{}`", Flag::AgentCmd),
        );
    }
    let sandbox = if g.unsandboxed && !confine {
        format!("none, started `{}`", Flag::Unsandboxed)
    } else {
        g.sandbox.detail.clone()
    };
    Check::ok(
        CheckName::Executor,
        format!(
            "the worker at {place}: planwright {}, protocol {}, sandbox: {sandbox}",
            g.planwright,
            super::protocol::PROTOCOL,
        ),
    )
}

/// An error when `ssh -G` says the connection to `host` would not check
/// its key (`StrictHostKeyChecking` `no`, `off` or `accept-new`, or known
/// hosts in `/dev/null`), whatever turned it off: `ssh_command`, a `-F`
/// file, `~/.ssh/config`.
fn host_keys(ssh: &[String], host: &str) -> Option<Check> {
    let (program, args) = ssh.split_first()?;
    let out = std::process::Command::new(program)
        .args(args)
        .args(["-G", "--", host])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        // `ssh` of another make; the connection itself says more.
        return None;
    }
    let said = String::from_utf8_lossy(&out.stdout);
    let setting = |key: &str| {
        said.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
            .map(str::trim)
    };
    let strict = setting("stricthostkeychecking").unwrap_or("ask");
    let unchecked = matches!(strict, "false" | "no" | "off" | "accept-new");
    let discarded = setting("userknownhostsfile").is_some_and(|f| f == "/dev/null");
    if !unchecked && !discarded {
        return None;
    }
    let what = if unchecked {
        format!("`StrictHostKeyChecking {strict}`")
    } else {
        "`UserKnownHostsFile /dev/null`".into()
    };
    Some(Check::error(
        CheckName::Executor,
        format!("`ssh -G {host}` says the connection to {host} would not check the host's key ({what})"),
        "remove that setting from `ssh_command` or your ssh configuration, and add the host's key to your known hosts (`ssh-keyscan`, then compare the fingerprint)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `ssh` whose `-G` prints `settings`.
    fn ssh_saying(settings: &str) -> Vec<String> {
        let script = format!("printf '{settings}'");
        ["sh", "-c", &script, "ssh"].map(String::from).to_vec()
    }

    #[test]
    fn host_keys_are_judged_by_the_effective_settings() {
        for strict in ["no", "off", "accept-new"] {
            let ssh = ssh_saying(&format!(
                "user me\\nstricthostkeychecking {strict}\\nuserknownhostsfile ~/.ssh/known_hosts\\n"
            ));
            let check = host_keys(&ssh, "build-1").expect("refused");
            assert!(
                check
                    .message
                    .contains(&format!("StrictHostKeyChecking {strict}")),
                "{check:?}"
            );
        }
        let discarded = ssh_saying("stricthostkeychecking true\\nuserknownhostsfile /dev/null\\n");
        assert!(host_keys(&discarded, "h").is_some());
        let checked =
            ssh_saying("stricthostkeychecking true\\nuserknownhostsfile ~/.ssh/known_hosts\\n");
        assert_eq!(host_keys(&checked, "h"), None);
        let asks = ssh_saying("stricthostkeychecking ask\\n");
        assert_eq!(host_keys(&asks, "h"), None);
    }
}
