//! What the events say of an attempt: where its workspace starts, and why
//! the merge queue sends a ticket back for a rebuild. One spelling each in
//! code, events, docs and messages.

use super::ticket::named_enum;

named_enum! {
    /// Where an attempt's workspace starts (`attempt_started.starts_from`):
    /// the base, the previous attempt's candidate, or the base after a
    /// rejected attempt whose change it does not hold, saying why.
    #[derive(Default)]
    StartsFrom {
        /// A first attempt: the current base. Logs written before the
        /// field was recorded read as this.
        #[default]
        Base = "base",
        /// The previous attempt's candidate, on the same base.
        Candidate = "candidate",
        /// The previous attempt's candidate, carried onto a base that moved.
        CandidateCarried = "candidate_carried",
        /// The base: the previous attempt left no candidate.
        BaseNoCandidate = "base_no_candidate",
        /// The base: `[run] retry_from = "base"`.
        BaseAsked = "base_asked",
        /// The base: the previous change no longer applies onto it.
        BaseNoLongerApplies = "base_no_longer_applies",
        /// The base: the previous change passed but no longer merges.
        BaseConflict = "base_conflict",
        /// The base: the previous attempt was an earlier invocation's.
        BaseEarlierRun = "base_earlier_run",
        /// The base: everything the previous attempt changed was rejected.
        BaseAllRejected = "base_all_rejected",
    }
}

named_enum! {
    /// Why a ticket goes back for a new attempt from the current tip
    /// (`rebuild.reason`).
    RebuildReason {
        /// Its candidate no longer merges: no strike, at most
        /// `[merge] max_rebuilds` times.
        Conflict = "conflict",
        /// It breaks the gates together with what landed ahead of it: a
        /// strike.
        Combination = "combination",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events spell each value as the docs and messages do.
    #[test]
    fn each_value_has_one_spelling() {
        for &v in StartsFrom::ALL {
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(json, format!("\"{v}\""));
            assert_eq!(serde_json::from_str::<StartsFrom>(&json).unwrap(), v);
        }
        for &v in RebuildReason::ALL {
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(json, format!("\"{v}\""));
            assert_eq!(serde_json::from_str::<RebuildReason>(&json).unwrap(), v);
        }
    }

    /// docs/observing.md's row of each event lists every value it can say.
    #[test]
    fn the_docs_event_table_lists_every_value() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/observing.md");
        let docs = std::fs::read_to_string(path).expect("docs/observing.md");
        let row = |event: &str| {
            let start = format!("| `{event}` |");
            let line = docs.lines().find(|l| l.starts_with(&start));
            line.unwrap_or_else(|| panic!("docs/observing.md has no row {start}"))
        };
        let check = |event: &str, values: Vec<&str>| {
            let row = row(event);
            for v in values {
                assert!(
                    row.contains(&format!("`{v}`")),
                    "`{event}` lacks `{v}`: {row}"
                );
            }
        };
        check(
            "attempt_started",
            StartsFrom::ALL.iter().map(|v| v.as_str()).collect(),
        );
        check(
            "rebuild",
            RebuildReason::ALL.iter().map(|v| v.as_str()).collect(),
        );
        let outcomes = crate::model::AgentOutcomeKind::ALL;
        check(
            "agent_reported",
            outcomes.iter().map(|v| v.as_str()).collect(),
        );
    }
}
