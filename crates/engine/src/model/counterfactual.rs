//! What a counterfactual's mutated tests did: a verdict of `verify`, an
//! `outcome` of the `counterfactual` event and the report.

use super::ticket::named_enum;

named_enum! {
    /// What the mutated tests did.
    CounterfactualOutcome {
        /// The tests failed under the mutation: the control is pinned.
        Red = "red",
        /// The tests still passed: nothing pins the control.
        Green = "green",
        /// The mutated tests ran out of time.
        Timeout = "timeout",
        /// The counterfactual could not be judged (baseline failed, the
        /// mutation did not apply, the tests could not start).
        Error = "error",
    }
}
