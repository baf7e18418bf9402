//! Merging verified candidates: the merge queue's thread (`queue.rs`),
//! one batch of it stacked, checked and bisected (`batch.rs`), and
//! landing one candidate or a stack on the target (`land.rs`: merged
//! without a checkout, re-gated when the target moved, moved by
//! compare-and-swap). The refs and targets these move are
//! `crate::git::refs`'s.

mod batch;
mod land;
mod queue;

pub(super) use queue::merger;
