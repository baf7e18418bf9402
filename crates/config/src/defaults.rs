//! Every default a setting falls back to when neither a flag nor
//! `planwright.toml` gives it, and the bounds a given value must keep.

use std::time::Duration;

/// Slots when the number of cores cannot be read (otherwise one slot per
/// core).
pub const JOBS: usize = 2;
/// Rejected attempts a ticket may have in one invocation.
pub const STRIKES: u32 = 2;
/// The agent's wall-clock limit per attempt.
pub const AGENT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Verified candidates checked as one stack at most (`[merge] batch`).
pub const MERGE_BATCH: usize = 8;
/// The longest a batch waits to fill (`[merge] wait_secs`).
pub const MERGE_WAIT: Duration = Duration::from_secs(5);
/// Times the gates that failed on an attempt's candidate run again on the
/// same tree before the attempt is rejected (`[gates] flaky_retries`).
pub const GATE_FLAKY_RETRIES: u32 = 1;
/// Times a red stack runs again before bisection (`[merge] flaky_retries`).
pub const FLAKY_RETRIES: u32 = 1;
/// Merge checkouts, so stacks checked at once (`[merge] checkouts`).
pub const MERGE_CHECKOUTS: usize = 2;
/// Rebuilds after a textual conflict, without a strike (`[merge] max_rebuilds`).
pub const MAX_REBUILDS: u32 = 2;
/// Each gate's wall-clock limit.
pub const GATE_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// Each workspace set-up command's limit.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// One review's limit (`[review] timeout_secs`).
pub const REVIEW_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// The longest pause after the model could not serve an attempt
/// (`[agent] max_pause`).
pub const MAX_PAUSE: Duration = Duration::from_secs(6 * 3600);
/// The longest `[agent] max_pause` accepted: a week covers the weekly
/// limits of subscriptions, and keeps every deadline representable.
pub const LONGEST_MAX_PAUSE: Duration = Duration::from_secs(7 * 24 * 3600);
/// Unavailable outcomes in a row after which a ticket fails
/// (`[agent] max_unavailable`).
pub const MAX_UNAVAILABLE: u32 = 5;
/// The cap of one attempt's agent log, in bytes (`[agent] log_limit_mib`).
pub const AGENT_LOG_LIMIT: u64 = 64 * MIB;
/// The longest line of an agent's output planwright reads, in bytes
/// (`[agent] line_limit_kib`); the rest of a longer line is dropped.
pub const AGENT_LINE_LIMIT: u64 = 1024 * KIB;
/// Bytes in a KiB, the unit of `[agent] line_limit_kib`.
pub const KIB: u64 = 1024;
/// Whether each slot gets its own CLI state directory (`[agent] isolate`).
pub const ISOLATE: bool = true;
/// The agent a command template alone selects.
pub const TEMPLATE_AGENT: &str = "cmd";

/// The memory of each confined child and all it starts (`[sandbox]
/// memory`): an agent CLI (a few hundred MiB) and the build or test run
/// it starts in its slot fit; a leak or runaway does not take the machine.
pub const MEMORY: u64 = 4 << 30;
/// Processes and threads of each confined child and all it starts
/// (`[sandbox] pids`): a parallel build counts its compilers' threads
/// (`cargo build` on 64 cores stays below 2,000), a fork bomb stops here.
pub const PIDS: u64 = 4096;
/// The free space below which no attempt starts (`[run] min_free`).
pub const MIN_FREE: crate::size::MinFree = crate::size::MinFree::Smaller(1 << 30, 5);

/// Bytes in a MiB, the unit of `[agent] log_limit_mib`.
pub const MIB: u64 = 1024 * 1024;

/// `[executor] heartbeat`: how often a coordinator and its workers tell
/// each other they are there.
pub const HEARTBEAT: Duration = Duration::from_secs(5);
/// `[executor] lost_after`: the silence after which either side gives the
/// other up.
pub const LOST_AFTER: Duration = Duration::from_secs(30);
/// `[executor] lost_backoff`: a slot's rest after its worker was lost.
pub const LOST_BACKOFF: Duration = Duration::from_secs(10);
/// `[executor] ssh_keepalive`: `ssh`'s `ServerAliveInterval`.
pub const SSH_KEEPALIVE: Duration = Duration::from_secs(15);
