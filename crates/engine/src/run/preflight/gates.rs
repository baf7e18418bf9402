//! The `gates` and `gate-files` checks: every ticket has a gate, its
//! programs are there, a plan an agent wrote runs only approved commands,
//! and no scope glob quietly covers a file a gate runs. (The names a gate
//! command gives its tool are `commands.rs`'s; the gates on the base
//! commit are `probe.rs`'s.)

use super::{ok_if_quiet, path, Check, CheckName};
use crate::verify::ticket_gates;
use planwright_os::process::find_program;
use planwright_plan::gate_integrity;
use planwright_plan::model::Gate;
use planwright_plan::Plan;
use std::collections::HashSet;
use std::path::Path;

/// Every distinct gate of every ticket, in plan order.
pub(super) fn every_gate(plan: &Plan, extra: &[Gate]) -> Vec<Gate> {
    let mut seen = HashSet::new();
    let mut gates = Vec::new();
    for t in &plan.tickets {
        for g in ticket_gates(plan, t, extra) {
            if seen.insert(g.argv.clone()) {
                gates.push(g);
            }
        }
    }
    gates
}

/// `setup`: whether `[workspace] setup` runs in each gate checkout before
/// its gates, so that a gate may run a program it makes there
/// (`.venv/bin/python`).
pub(super) fn check_gates(
    dir: &Path,
    plan: &Plan,
    extra: &[Gate],
    setup: bool,
    out: &mut Vec<Check>,
) {
    let mut programs: Vec<String> = Vec::new();
    for t in &plan.tickets {
        let gates = ticket_gates(plan, t, extra);
        if gates.is_empty() {
            out.push(Check::error(
                CheckName::Gates,
                format!("ticket {} has no gate", t.id),
                no_gate_hint(dir),
            ));
        }
        for g in gates {
            if let Some(p) = g.argv.first() {
                if !programs.contains(p) {
                    programs.push(p.clone());
                }
            }
        }
    }
    for p in programs {
        // A relative path with a slash is resolved in the workspace, like the gate will be.
        let found = if p.contains('/') && !p.starts_with('/') {
            dir.join(&p).is_file()
        } else {
            find_program(&p, path().as_deref()).is_some()
        };
        let made = setup && p.contains('/') && !p.starts_with('/');
        if found {
            out.push(Check::ok(
                CheckName::Gates,
                format!("gate program `{p}` found"),
            ));
        } else if made {
            // The gates' trial on the base (`gate-probe`) runs it after
            // the set-up, and says when it is still not there.
            out.push(Check::ok(
                CheckName::Gates,
                format!("gate program `{p}` is not in the repository: `[workspace] setup` is to make it"),
            ));
        } else {
            out.push(Check::error(
                CheckName::Gates,
                format!("gate program `{p}` is not on PATH"),
                format!("install `{p}` or change the gate"),
            ));
        }
    }
}

/// Each ticket whose scope covers, with a glob, a file one of its gates
/// runs (`./check.sh`, `sh ci/check.sh`) without naming it: a candidate
/// that changes the file is rejected, so the ticket could not do that part
/// of its work. Said once to be fine when some gate runs such a file.
pub(super) fn check_gate_files(plan: &Plan, extra: &[Gate], out: &mut Vec<Check>) {
    let before = out.len();
    let mut any = false;
    for t in &plan.tickets {
        let gates = ticket_gates(plan, t, extra);
        any |= (gates.iter()).any(|g| !gate_integrity::program_files(&g.argv).is_empty());
        let Some((gate, pattern, file)) = gate_integrity::exposed(&t.scope, &gates) else {
            continue;
        };
        out.push(Check::warning(
            CheckName::GateFiles,
            format!(
                "ticket {}'s scope `{pattern}` covers `{file}`, which the gate `{}` runs; a candidate that changes it is rejected (gate_script_tampering)",
                t.id,
                gate.command_line()
            ),
            format!("narrow the scope to leave `{file}` out, or name `{file}` in the scope if the ticket is meant to change it"),
        ));
    }
    if any {
        ok_if_quiet(
            out,
            before,
            CheckName::GateFiles,
            "no ticket may change a file its gates run unless its scope names it",
        );
    }
}

/// The repository's own test command as the gate to add, else no
/// particular one (never another ecosystem's).
pub(super) fn no_gate_hint(dir: &Path) -> String {
    match planwright_plan::project::test_command(|f| dir.join(f).is_file()) {
        Some(argv) => format!(
            "add `[gates] run = [{}]` to planwright.toml or pass `{} \"{}\"`",
            planwright_plan::formats::codeboost::toml_argv(&argv),
            planwright_plan::Flag::Gate,
            argv.join(" ")
        ),
        None => format!("add the project's test command to planwright.toml (`[gates] run = [[\"PROGRAM\", \"ARGUMENT\"]]`) or pass it with `{} \"COMMAND\"`", planwright_plan::Flag::Gate),
    }
}

/// The commands of a plan an agent wrote (codeboost) run only once a
/// person approved them in `[commands] allow`; its format says so.
pub(super) fn check_allowed(plan: &Plan, allow: &[Vec<String>], out: &mut Vec<Check>) {
    if !planwright_plan::formats::plan_format(plan.source_format).commands_need_approval() {
        return;
    }
    for t in &plan.tickets {
        for g in t.gates.iter().filter(|g| !allow.contains(&g.argv)) {
            out.push(Check::error(
                CheckName::Gates,
                format!(
                    "ticket {}: the plan's command `{}` is not on the `[commands] allow` list",
                    t.id,
                    g.command_line()
                ),
                format!(
                    "approve it in planwright.toml: `[commands] allow = [{}]`",
                    planwright_plan::formats::codeboost::toml_argv(&g.argv)
                ),
            ));
        }
    }
}
