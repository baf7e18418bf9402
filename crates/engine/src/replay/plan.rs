//! The plan a replay runs: one ticket per commit, its scope the paths the
//! commit touched with their operations, its body the commit's message,
//! and the dependencies `--deps` asks for. Pure: it works on what
//! [`crate::git::history`] read.

use crate::git::history::{Change, Commit};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;

/// How a replay orders its tickets (`--deps`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Deps {
    /// Everything side by side from the range's base: the conflicts and
    /// the queue.
    None,
    /// A commit waits for the last earlier commit that touched one of its
    /// files.
    Files,
    /// Each commit waits for the one before: the serial baseline.
    Chain,
}

impl Deps {
    /// Its name for `--deps` and the figures.
    pub fn as_str(self) -> &'static str {
        match self {
            Deps::None => "none",
            Deps::Files => "files",
            Deps::Chain => "chain",
        }
    }
}

impl std::str::FromStr for Deps {
    type Err = String;
    fn from_str(s: &str) -> Result<Deps, String> {
        match s {
            "none" => Ok(Deps::None),
            "files" => Ok(Deps::Files),
            "chain" => Ok(Deps::Chain),
            other => Err(format!(
                "`{other}` is not a dependency mode: use `none`, `files` or `chain`"
            )),
        }
    }
}

/// How long the replay agent works on a commit (`--agent-time`): a fixed
/// part and a part per changed line, `30s+0.5s/line`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AgentTime {
    /// Whatever the commit.
    pub fixed: Duration,
    /// Per line added or removed.
    pub per_line: Duration,
}

impl AgentTime {
    /// The time for a commit of `lines` changed lines.
    pub fn of(&self, lines: u64) -> Duration {
        self.fixed + self.per_line.mul_f64(lines as f64)
    }
}

impl std::str::FromStr for AgentTime {
    type Err = String;
    /// `2s`, `30s+0.5s/line`, `0.2s/line`, `1m+100ms/line`.
    fn from_str(text: &str) -> Result<AgentTime, String> {
        let bad = || {
            format!("`{text}` is not an agent time: write a duration, a duration per line or both, e.g. `30s`, `0.5s/line` or `30s+0.5s/line`")
        };
        let mut time = AgentTime::default();
        for term in text.split('+').map(str::trim) {
            let (amount, per_line) = match term.strip_suffix("/line") {
                Some(a) => (a, true),
                None => (term, false),
            };
            let d = duration(amount).ok_or_else(bad)?;
            if per_line {
                time.per_line += d;
            } else {
                time.fixed += d;
            }
        }
        Ok(time)
    }
}

/// `1.5s`, `200ms`, `2m`, `1h`: a decimal number and its unit.
fn duration(text: &str) -> Option<Duration> {
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (n, unit) = text.split_at(split);
    let n: f64 = n.parse().ok().filter(|n: &f64| n.is_finite())?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return None,
    };
    Duration::try_from_secs_f64(secs).ok()
}

/// One commit of the range as a ticket.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub(crate) ticket: String,
    pub(crate) commit: Commit,
    pub(crate) changes: Vec<Change>,
}

/// The ticket id of the `n`th (from 1) commit of the range.
pub(crate) fn ticket_id(n: usize, commit: &str) -> String {
    format!("c{n:03}-{}", &commit[..commit.len().min(8)])
}

/// The earlier steps each step waits for under `deps`.
pub(crate) fn dependencies(steps: &[Step], deps: Deps) -> Vec<Vec<usize>> {
    let mut last: HashMap<&str, usize> = HashMap::new();
    let mut all = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let on: BTreeSet<usize> = match deps {
            Deps::None => BTreeSet::new(),
            Deps::Chain => i.checked_sub(1).into_iter().collect(),
            Deps::Files => (s.changes.iter())
                .flat_map(Change::paths)
                .filter_map(|p| last.get(p).copied())
                .collect(),
        };
        for p in s.changes.iter().flat_map(Change::paths) {
            last.insert(p, i);
        }
        all.push(on.into_iter().collect());
    }
    all
}

/// A step's scope. Each path keeps its operation, except under `--deps
/// none`, where nothing orders the commits: an operation the range's base
/// contradicts (a `modify` of a path an earlier commit created) is
/// `any`, else preflight would refuse it before any ticket ran.
fn scope(changes: &[Change], deps: Deps, base_files: &HashSet<String>) -> Vec<Value> {
    let at_base = |p: &str| deps != Deps::None || base_files.contains(p);
    let absent = |p: &str| deps != Deps::None || !base_files.contains(p);
    let entry =
        |p: &str, op: &str, ok: bool| json!({"pattern": p, "op": if ok { op } else { "any" }});
    let mut out = Vec::new();
    for c in changes {
        match c {
            Change::Create(p) => out.push(entry(p, "create", absent(p))),
            Change::Modify(p) => out.push(entry(p, "modify", at_base(p))),
            Change::Delete(p) => out.push(entry(p, "delete", at_base(p))),
            Change::Rename { from, to } if at_base(from) && absent(to) => {
                out.push(json!({"pattern": to, "op": "rename", "from": from}))
            }
            Change::Rename { from, to } => {
                out.push(entry(from, "any", false));
                out.push(entry(to, "any", false));
            }
        }
    }
    out
}

/// The plan (planwright's native format) for `steps` on `base`, gated by
/// `gates` (argvs).
pub(crate) fn plan_json(
    steps: &[Step],
    deps: Deps,
    base: &str,
    base_files: &HashSet<String>,
    gates: &[Vec<String>],
) -> Value {
    let waits = dependencies(steps, deps);
    let tickets: Vec<Value> = (steps.iter().zip(&waits))
        .map(|(s, on)| {
            let subject = s.commit.message.lines().next().unwrap_or("").trim();
            let title = if subject.is_empty() { s.ticket.as_str() } else { subject };
            let depends: Vec<&str> = on.iter().map(|&j| steps[j].ticket.as_str()).collect();
            json!({
                "id": s.ticket,
                "title": title,
                "body": format!("Replay of commit {}.\n\n{}", s.commit.id, s.commit.message.trim_end()),
                "scope": scope(&s.changes, deps, base_files),
                "depends_on": depends,
            })
        })
        .collect();
    let gates: Vec<Value> = (gates.iter().enumerate())
        .map(|(i, argv)| json!({"name": if i == 0 { "test".to_string() } else { format!("test-{}", i + 1) }, "argv": argv}))
        .collect();
    json!({
        "planwright": 1,
        "source_format": "native",
        "base": base,
        "gates": gates,
        "tickets": tickets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(n: usize, changes: Vec<Change>) -> Step {
        Step {
            ticket: format!("t{n}"),
            commit: Commit {
                id: format!("{n:040}"),
                parent: String::new(),
                message: format!("commit {n}\n"),
            },
            changes,
        }
    }

    #[test]
    fn agent_times_read_a_fixed_and_a_per_line_part() {
        let t: AgentTime = "30s+0.5s/line".parse().unwrap();
        assert_eq!(t.of(10), Duration::from_secs(35));
        assert_eq!(
            "2s".parse::<AgentTime>().unwrap().of(100),
            Duration::from_secs(2)
        );
        let per: AgentTime = "200ms/line".parse().unwrap();
        assert_eq!(per.of(5), Duration::from_secs(1));
        for bad in ["", "3", "2x", "s/line", "1s+", "-1s"] {
            let e = bad.parse::<AgentTime>().unwrap_err();
            assert!(e.contains("30s+0.5s/line"), "{bad}: {e}");
        }
    }

    #[test]
    fn files_waits_for_the_last_toucher_of_each_path_and_chain_for_the_one_before() {
        let m = |p: &str| Change::Modify(p.into());
        let steps = vec![
            step(0, vec![m("a")]),
            step(1, vec![m("b")]),
            step(2, vec![m("a"), m("b")]),
            step(
                3,
                vec![Change::Rename {
                    from: "c".into(),
                    to: "a".into(),
                }],
            ),
            step(4, vec![m("d")]),
        ];
        assert_eq!(
            dependencies(&steps, Deps::Files),
            vec![vec![], vec![], vec![0, 1], vec![2], vec![]]
        );
        assert_eq!(
            dependencies(&steps, Deps::Chain),
            vec![vec![], vec![0], vec![1], vec![2], vec![3]]
        );
        assert!(dependencies(&steps, Deps::None).iter().all(Vec::is_empty));
    }

    #[test]
    fn without_dependencies_an_operation_the_base_contradicts_is_any() {
        let base: HashSet<String> = ["old".to_string()].into();
        let changes = vec![
            Change::Modify("new".into()),
            Change::Modify("old".into()),
            Change::Create("old".into()),
        ];
        let ops = |deps| -> Vec<String> {
            scope(&changes, deps, &base)
                .iter()
                .map(|v| v["op"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(ops(Deps::None), ["any", "modify", "any"]);
        assert_eq!(ops(Deps::Files), ["modify", "modify", "create"]);
    }
}
