//! The `sandbox` and `limits` checks: the containment the run would use,
//! the folders `[sandbox]` declares, and what holds children to `[sandbox]
//! pids` and `memory`.

use super::{path, Check, CheckName};
use planwright_config::ContainSettings;
use planwright_config::SandboxMode;
use planwright_os::sandbox::SandboxError;

/// The sandbox the run would use; a declared writable directory that holds
/// the home directory or a `PATH` entry would let agents change what gates run.
pub(super) fn check_sandbox(contain: &ContainSettings, out: &mut Vec<Check>) {
    match crate::contain::containment(contain.mode) {
        Ok(c) if contain.mode == SandboxMode::Off => out.push(Check::warning(
            CheckName::Sandbox,
            format!(
                "`[sandbox] mode = \"off\"`: agents and gates run unconfined ({})",
                c.describe()
            ),
            "set `[sandbox] mode = \"enforce\"` where the kernel allows it (see docs/security.md)",
        )),
        Ok(c) => out.push(Check::ok(
            CheckName::Sandbox,
            format!("agents and gates run confined: {}", c.describe()),
        )),
        Err(e) => out.push(Check::error(
            CheckName::Sandbox,
            e.to_string(),
            SandboxError::HINT,
        )),
    }
    let mut guarded: Vec<std::path::PathBuf> = path()
        .unwrap_or_default()
        .split(':')
        .filter(|d| d.starts_with('/'))
        .map(std::path::PathBuf::from)
        .collect();
    guarded.extend(std::env::var_os("HOME").map(std::path::PathBuf::from));
    for dir in &contain.writable {
        if let Some(g) = guarded
            .iter()
            .find(|g| planwright_os::sandbox::below_any(g, std::slice::from_ref(dir)))
        {
            out.push(Check::error(
                CheckName::Sandbox,
                format!("`[sandbox] writable` lists `{}`, which holds `{}`: an agent could change what gates run", dir.display(), g.display()),
                "declare a narrower directory (the agent CLI's own state folder)",
            ));
        } else if !dir.exists() {
            out.push(Check::error(
                CheckName::Sandbox,
                format!(
                    "`[sandbox] writable` lists `{}`, which does not exist",
                    dir.display()
                ),
                "create it, or remove it from the list",
            ));
        }
    }
    check_readable(contain, out);
}

/// `[sandbox] pids` and `memory`, and what holds each confined child to
/// them here: a cgroup sees a limit reached and names it in the attempt's
/// failure; rlimits bound without seeing it, a warning.
pub(super) fn check_limits(contain: &ContainSettings, out: &mut Vec<Check>) {
    use planwright_os::sandbox::{bytes_text, mechanism, Mechanism};
    let limits = crate::contain::limits(contain);
    if limits.is_none() {
        out.push(Check::ok(
            CheckName::Limits,
            "no limits: `[sandbox] pids` and `memory` are \"off\"",
        ));
        return;
    }
    let what = [
        limits.pids.map(|n| format!("{n} processes")),
        limits
            .memory
            .map(|m| format!("{} of memory", bytes_text(m))),
    ];
    let what: Vec<String> = what.into_iter().flatten().collect();
    let mechanism = mechanism();
    let message = format!(
        "each agent, set-up, gate and reviewer is held to {} by {}",
        what.join(" and "),
        mechanism.describe()
    );
    match mechanism {
        Mechanism::CgroupV2 { .. } | Mechanism::CgroupV1 { memory: Some(_), pids: Some(_), .. } => {
            out.push(Check::ok(CheckName::Limits, message))
        }
        _ => out.push(Check::warning(
            CheckName::Limits,
            message,
            "a limit reached without a cgroup shows as the program's own failure, not `resource_limit`; run planwright as root on cgroup v1, or alone in a delegated cgroup v2 (`systemd-run --user --scope -p Delegate=yes planwright run ...`); see docs/security.md",
        )),
    }
}

/// `[sandbox] readable` names what exists, below the home rather than the
/// home itself (which a child's view hides whole, sockets and all).
pub(super) fn check_readable(contain: &ContainSettings, out: &mut Vec<Check>) {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    for path in &contain.readable {
        let holds_home = home
            .as_ref()
            .is_some_and(|h| planwright_os::sandbox::below_any(h, std::slice::from_ref(path)));
        if holds_home {
            out.push(Check::error(
                CheckName::Sandbox,
                format!(
                    "`[sandbox] readable` lists `{}`, which holds the home directory: its sockets (ssh, gpg, a container engine's) would be reachable",
                    path.display()
                ),
                "name the files or folders below the home that the tools need",
            ));
        } else if !path.exists() {
            out.push(Check::error(
                CheckName::Sandbox,
                format!(
                    "`[sandbox] readable` lists `{}`, which does not exist",
                    path.display()
                ),
                "create it, or remove it from the list",
            ));
        }
    }
}
