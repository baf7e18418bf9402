//! Routing: which agent and which model do each ticket, and the pools
//! their models count against. One word per concept (the glossary of
//! docs/architecture.md):
//!
//! - a ticket's **tier** (`cheap`, `mid`, `frontier`) and **pool hint**
//!   are the plan's; the routing table that reads them (`Routing`,
//!   `Families`) is `planwright_plan::routing`, which validation needs;
//! - a **family** is the makers' line of models an agent's CLI runs
//!   (`Agent::family`);
//! - a ticket's **lane** is the agent that runs it and the family it keeps
//!   the ticket to ([`lanes`]);
//! - a **pool** is the quota a model counts against: at most its cap of
//!   tickets at once, paused while the model is rate-limited ([`pools`]);
//! - a **route** is what routing and the budget decided for one attempt
//!   about to start (`Route` in `run/msg.rs`).
//!
//! Preflight's `routing` lines are `run/preflight/routing.rs`.

mod lanes;
mod pools;

pub(crate) use lanes::{Lane, Lanes};
pub(crate) use pools::{
    candidates, choose, foreign_family, pause_length, scheduler, Choice, PoolPauses,
};
