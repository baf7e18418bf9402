//! The ticket state machine, defined once: the state store writes only the
//! states [`transition`] returns, the scheduler places tickets by
//! [`Place::of`] their state, the resume rules speak in [`Step`]s, and the
//! event fold replays the same steps. docs/running.md's table is checked
//! against [`TRANSITIONS`] by a test.

macro_rules! named_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($(#[$vm])* $v,)* }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$v,)*];
            /// The stored and printed name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$v => $s,)* }
            }
            /// Parses a stored name.
            pub fn from_name(s: &str) -> Option<$name> {
                match s { $($s => Some($name::$v),)* _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub(crate) use named_enum;

named_enum! {
    /// Where a ticket stands. docs/running.md draws the transitions.
    TicketState {
        /// Not started, or waiting for its next attempt.
        Pending = "pending",
        /// An attempt is running.
        Running = "running",
        /// Its candidate passed verification and waits to be merged.
        Verified = "verified",
        /// The merge commit is recorded; the target branch is being moved.
        Merging = "merging",
        /// On the base branch, from the plan's current definition.
        Merged = "merged",
        /// On the base branch, from a definition the plan has changed since;
        /// runs again only when a rerun is asked for.
        Changed = "changed",
        /// Out of strikes.
        Failed = "failed",
        /// An ancestor failed.
        Blocked = "blocked",
    }
}

named_enum! {
    /// How a run stands.
    RunStatus {
        /// A `planwright run` is working on it (or was, until it was killed:
        /// `status` tells the two apart by the run lock).
        Running = "running",
        /// Its last invocation ended normally.
        Finished = "finished",
        /// Its last invocation was stopped (signal, or a kill found later).
        Interrupted = "interrupted",
    }
}

named_enum! {
    /// What moves a ticket from one state to another.
    Step {
        /// An attempt starts.
        Start = "start",
        /// The attempt ended without a verdict (interrupted, or the model
        /// could not serve it): no strike is used.
        Interrupt = "interrupt",
        /// Its candidate passed verification.
        Verify = "verify",
        /// Rejected with strikes left (by verification, or when its merge
        /// was re-gated): another attempt follows.
        Retry = "retry",
        /// Out of strikes, or out of budget between attempts.
        Fail = "fail",
        /// An ancestor failed.
        Block = "block",
        /// The merge commit is recorded, before the target moves (again
        /// when the target moved under it and the merge is made anew).
        BeginMerge = "begin_merge",
        /// The target moved to the merge commit.
        Merge = "merge",
        /// Resume: git says it landed from the current definition.
        Landed = "landed",
        /// Resume: git says it landed from an older definition.
        LandedChanged = "landed_changed",
        /// Resume: its verified candidate is still usable and is merged
        /// without another agent run.
        Reverify = "reverify",
        /// Resume: nothing of it landed and nothing of it is usable, or a
        /// rerun was asked for: it waits for an attempt again.
        Reopen = "reopen",
    }
}

use Step as St;
use TicketState as S;

/// Every state a ticket can be in.
const ANY: &[TicketState] = TicketState::ALL;

/// The whole machine: from any of these states, this step leads there.
pub(crate) const TRANSITIONS: &[(&[TicketState], Step, TicketState)] = &[
    (&[S::Pending], St::Start, S::Running),
    (&[S::Running], St::Interrupt, S::Pending),
    (&[S::Running], St::Verify, S::Verified),
    (
        &[S::Running, S::Verified, S::Merging],
        St::Retry,
        S::Pending,
    ),
    (
        &[S::Pending, S::Running, S::Verified, S::Merging],
        St::Fail,
        S::Failed,
    ),
    (&[S::Pending], St::Block, S::Blocked),
    // Merging again: the target moved under the merge, which is made anew.
    (&[S::Verified, S::Merging], St::BeginMerge, S::Merging),
    (&[S::Merging], St::Merge, S::Merged),
    (ANY, St::Landed, S::Merged),
    (ANY, St::LandedChanged, S::Changed),
    (&[S::Verified, S::Merging], St::Reverify, S::Verified),
    (ANY, St::Reopen, S::Pending),
];

/// A step the machine does not allow from a state: a bug in planwright,
/// never the user's doing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a ticket cannot {step} from `{from}`")]
pub struct IllegalTransition {
    /// The state it was in.
    pub from: TicketState,
    /// The step asked for.
    pub step: Step,
}

/// The state `step` leads to from `from`.
pub fn transition(from: TicketState, step: Step) -> Result<TicketState, IllegalTransition> {
    TRANSITIONS
        .iter()
        .find(|(froms, s, _)| *s == step && froms.contains(&from))
        .map(|&(_, _, to)| to)
        .ok_or(IllegalTransition { from, step })
}

impl Step {
    /// The state this step leads to, from whichever state allows it (each
    /// step has one row of [`TRANSITIONS`]).
    pub fn to(self) -> TicketState {
        (TRANSITIONS.iter())
            .find(|(_, s, _)| *s == self)
            .map_or(TicketState::Pending, |&(_, _, to)| to)
    }
}

/// Where the scheduler keeps a ticket in a given state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Waiting for its dependencies, a free slot, or the end of a pause.
    Waiting,
    /// An attempt, a merge or a pause is in progress.
    Active,
    /// Merged (or merged from an older definition and not run again).
    Done,
    /// Failed or blocked.
    Dead,
}

impl Place {
    /// The place of a ticket in `state`.
    pub(crate) fn of(state: TicketState) -> Place {
        match state {
            S::Pending => Place::Waiting,
            S::Running | S::Verified | S::Merging => Place::Active,
            S::Merged | S::Changed => Place::Done,
            S::Failed | S::Blocked => Place::Dead,
        }
    }
}

#[cfg(test)]
/// The rows of docs/running.md's transition table, as this build has them:
/// `| from | step | to |`.
pub(crate) fn transition_table() -> String {
    let mut out = String::from("| from | step | to |\n|---|---|---|\n");
    for (froms, step, to) in TRANSITIONS {
        let from = match *froms == ANY {
            true => "any".to_string(),
            false => (froms.iter())
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        out.push_str(&format!("| {from} | `{step}` | `{to}` |\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_step_leads_to_one_state_from_each_state_it_allows() {
        for &step in Step::ALL {
            for &from in TicketState::ALL {
                let rows = TRANSITIONS
                    .iter()
                    .filter(|(f, s, _)| *s == step && f.contains(&from))
                    .count();
                assert!(rows <= 1, "{step} from {from} is listed {rows} times");
            }
        }
    }

    #[test]
    fn each_step_has_one_row() {
        for &step in Step::ALL {
            let rows = TRANSITIONS.iter().filter(|(_, s, _)| *s == step).count();
            assert_eq!(rows, 1, "{step}");
        }
        assert_eq!(St::Block.to(), S::Blocked);
        assert_eq!(St::Reopen.to(), S::Pending);
    }

    #[test]
    fn a_ticket_goes_from_pending_to_merged_and_nothing_leaves_a_dead_end_but_resume() {
        let mut s = S::Pending;
        for step in [St::Start, St::Verify, St::BeginMerge, St::Merge] {
            s = transition(s, step).unwrap();
        }
        assert_eq!(s, S::Merged);
        assert_eq!(
            transition(S::Merged, St::Start),
            Err(IllegalTransition {
                from: S::Merged,
                step: St::Start
            })
        );
        for &from in TicketState::ALL {
            assert_eq!(transition(from, St::Reopen), Ok(S::Pending));
        }
    }

    #[test]
    fn places_follow_states() {
        assert_eq!(
            Place::of(transition(S::Pending, St::Start).unwrap()),
            Place::Active
        );
        assert_eq!(
            Place::of(transition(S::Running, St::Fail).unwrap()),
            Place::Dead
        );
        assert_eq!(
            Place::of(transition(S::Running, St::Retry).unwrap()),
            Place::Waiting
        );
    }

    #[test]
    fn docs_running_md_has_this_machines_table() {
        let page = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/running.md");
        let text = std::fs::read_to_string(page).unwrap();
        assert!(
            text.contains(&transition_table()),
            "docs/running.md must hold the table of model::ticket::TRANSITIONS:\n{}",
            transition_table()
        );
    }

    #[test]
    fn names_round_trip() {
        for &s in TicketState::ALL {
            assert_eq!(TicketState::from_name(s.as_str()), Some(s));
        }
        for &s in Step::ALL {
            assert_eq!(Step::from_name(s.as_str()), Some(s));
        }
    }
}
