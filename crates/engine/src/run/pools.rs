//! Pools: which model an attempt runs on, and pausing a pool (a model
//! family's quota) while it is rate-limited.
//!
//! Pure; time is seconds since the Unix epoch, passed in. A pool pauses
//! when an attempt comes back `Unavailable`, for [`pause_length`]: the
//! reset time the CLI gave, but at least an exponential backoff and at most
//! `[agent] max_pause`. When the pause is over, exactly
//! one attempt may probe the pool (no thundering herd of every queued
//! ticket at once); its answer either resumes the pool or pauses it again
//! with a longer backoff. Meanwhile a ticket whose routing allows another
//! candidate model in an open pool goes there.

use planwright_config::{Families, Routing, DEFAULT_TIER};
use planwright_plan::model::Ticket;
use std::collections::BTreeMap;
use std::time::Duration;

/// The first backoff: the pause when a CLI gives no reset time, and the
/// shortest pause when it does. It doubles with each pause in a row, up to
/// [`MAX_BACKOFF`].
pub(crate) const FIRST_BACKOFF: Duration = Duration::from_secs(60);

/// The longest backoff.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(3600);

/// How long the `streak`-th pause in a row lasts: the time the provider
/// named, but at least the backoff (a CLI that says "retry in 1s" every
/// time must not make a loop of attempts), and at most `max` (a CLI may
/// name any time, "in 900000 hours" included).
pub(crate) fn pause_length(retry_after: Option<Duration>, streak: u32, max: Duration) -> Duration {
    let floor = backoff(streak);
    retry_after.map_or(floor, |r| r.max(floor)).min(max)
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Pause {
    until: u64,
    /// Pauses in a row without an answer in between.
    strikes: u32,
    probing: bool,
}

/// May an attempt use a pool now?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admission {
    /// It is not paused.
    Open,
    /// Its pause is over and no probe is out: this attempt is the probe.
    Probe,
    /// Paused until this time (or until the probe that is out answers).
    Paused {
        /// Seconds since the epoch; a pool with a probe out reports its old
        /// resume time.
        until: u64,
    },
}

/// The paused pools.
#[derive(Debug, Clone)]
pub(crate) struct PoolPauses {
    paused: BTreeMap<String, Pause>,
    /// The longest pause (`[agent] max_pause`).
    max_pause: Duration,
}

impl Default for PoolPauses {
    fn default() -> PoolPauses {
        PoolPauses::new(crate::run::defaults::MAX_PAUSE)
    }
}

impl PoolPauses {
    /// No pool paused; no pause will last longer than `max_pause`.
    pub(crate) fn new(max_pause: Duration) -> PoolPauses {
        PoolPauses {
            paused: BTreeMap::new(),
            max_pause,
        }
    }

    /// An attempt on `pool` came back rate-limited: pause it from `now`
    /// for [`pause_length`] of `retry_after`.
    pub(crate) fn pause(&mut self, pool: &str, now: u64, retry_after: Option<Duration>) {
        let strikes = self.paused.get(pool).map_or(0, |p| p.strikes) + 1;
        let wait = pause_length(retry_after, strikes, self.max_pause);
        self.paused.insert(
            pool.to_string(),
            Pause {
                until: now.saturating_add(wait.as_secs()),
                strikes,
                probing: false,
            },
        );
    }

    /// Puts back a pause an earlier invocation saved: `pool` is paused
    /// until `until`, its `strikes`-th pause in a row, but no longer than
    /// the longest pause from `now` (the saved one may predate the bound,
    /// or a lower one); returns the end it keeps. No probe is out (an
    /// earlier invocation's probe ended with it).
    pub(crate) fn restore(&mut self, pool: &str, until: u64, strikes: u32, now: u64) -> u64 {
        let until = until.min(now.saturating_add(self.max_pause.as_secs()));
        let pause = Pause {
            until,
            strikes: strikes.max(1),
            probing: false,
        };
        self.paused.insert(pool.to_string(), pause);
        until
    }

    /// When `pool`'s pause ends and how many pauses in a row it has had,
    /// if it is paused (what [`PoolPauses::restore`] takes back).
    pub(crate) fn pause_of(&self, pool: &str) -> Option<(u64, u32)> {
        self.paused.get(pool).map(|p| (p.until, p.strikes))
    }

    /// An attempt on `pool` got an answer (any outcome but a rate limit):
    /// the pool is open again.
    pub(crate) fn answered(&mut self, pool: &str) {
        self.paused.remove(pool);
    }

    /// Whether an attempt may use `pool` now, without claiming anything.
    pub(crate) fn peek(&self, pool: &str, now: u64) -> Admission {
        match self.paused.get(pool) {
            None => Admission::Open,
            Some(p) if now < p.until || p.probing => Admission::Paused { until: p.until },
            Some(_) => Admission::Probe,
        }
    }

    /// [`PoolPauses::peek`], and when the answer is [`Admission::Probe`],
    /// marks the probe as out so no second attempt probes.
    pub(crate) fn admit(&mut self, pool: &str, now: u64) -> Admission {
        let a = self.peek(pool, now);
        if a == Admission::Probe {
            if let Some(p) = self.paused.get_mut(pool) {
                p.probing = true;
            }
        }
        a
    }

    #[cfg(test)]
    /// The paused pools and when each resumes, for `status`.
    pub(crate) fn paused(&self) -> Vec<(String, u64)> {
        self.paused
            .iter()
            .map(|(pool, p)| (pool.clone(), p.until))
            .collect()
    }
}

/// The backoff of the `strikes`-th pause in a row.
pub(crate) fn backoff(strikes: u32) -> Duration {
    let factor = 1u64 << strikes.saturating_sub(1).min(16);
    FIRST_BACKOFF.saturating_mul(factor as u32).min(MAX_BACKOFF)
}

/// The model chosen for one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice {
    /// The ticket names no model, tier or pool hint: the CLI's own default.
    CliDefault,
    /// Run on `model`, counted against `pool` (none for an explicit model
    /// the routing table does not list); `probe` when the attempt is its
    /// pool's probe.
    Model {
        /// The model's name.
        model: String,
        /// Its pool.
        pool: Option<String>,
        /// Whether this attempt probes a paused pool.
        probe: bool,
    },
    /// Every candidate's pool is paused: wait until this time.
    Wait {
        /// The earliest resume time of the candidates' pools.
        until: u64,
    },
    /// A candidate's pool is open (or may be probed) but at its cap: try
    /// again when an attempt ends.
    Full,
}

/// The model for the next attempt of `ticket`: its explicit model (which
/// has no alternative), else the first candidate of its tier and pool hint
/// (through the routing table) whose pool is open, else the first whose
/// pool may be probed, else wait for the earliest resume. Only pools below
/// their cap (`room`) are chosen: the attempt counts against the pool it
/// runs on. Claims the probe when it chooses one. A CLI that runs only
/// `family`'s models never gets another family's: an explicit model the
/// table lists under another family, or a hint that leaves none of the
/// family, routes by tier within the family (see [`Routing::for_family`]).
pub(crate) fn choose(
    ticket: &Ticket,
    routing: &Routing,
    families: &Families,
    family: Option<&str>,
    pauses: &mut PoolPauses,
    now: u64,
    room: &dyn Fn(&str) -> bool,
) -> Choice {
    if let Some(model) = ticket
        .model
        .as_ref()
        .filter(|m| foreign_family(routing, families, m, family).is_none())
    {
        let pool = routing.pool_of(model).map(String::from);
        return pick(vec![(model.clone(), pool)], pauses, now, room);
    }
    if ticket.tier.is_none() && ticket.pool_hint.is_none() && ticket.model.is_none() {
        return Choice::CliDefault;
    }
    let tier = ticket.tier.as_deref().unwrap_or(DEFAULT_TIER);
    let hint = ticket.pool_hint.as_deref().unwrap_or("auto");
    let candidates = routing
        .for_family(families, tier, hint, family)
        .models
        .into_iter()
        .map(|m| (m.name, Some(m.pool)))
        .collect();
    pick(candidates, pauses, now, room)
}

/// Every model routing may give `ticket` on a CLI of `family`, in the
/// order [`choose`] tries them: its explicit model (of that family), else
/// its tier's candidates under its pool hint; `None` when it names none
/// of model, tier and pool hint (the CLI's own default model).
pub(crate) fn candidates(
    ticket: &Ticket,
    routing: &Routing,
    families: &Families,
    family: Option<&str>,
) -> Option<Vec<String>> {
    let own = ticket.model.as_ref();
    if let Some(model) = own.filter(|m| foreign_family(routing, families, m, family).is_none()) {
        return Some(vec![model.clone()]);
    }
    if ticket.tier.is_none() && ticket.pool_hint.is_none() && own.is_none() {
        return None;
    }
    let tier = ticket.tier.as_deref().unwrap_or(DEFAULT_TIER);
    let hint = ticket.pool_hint.as_deref().unwrap_or("auto");
    let route = routing.for_family(families, tier, hint, family);
    Some(route.models.into_iter().map(|m| m.name).collect())
}

/// The family of `model` when a table (agb's, then the family table)
/// lists it under one other than `family`, the CLI's, or, where no table
/// lists it, when its name starts with another family's
/// ([`Families::family_named`]: `gemini-2.5-flash` is never claude's).
pub(crate) fn foreign_family<'r>(
    routing: &'r Routing,
    families: &'r Families,
    model: &str,
    family: Option<&str>,
) -> Option<&'r str> {
    let of_model = routing
        .family_of(model)
        .or_else(|| families.family_named(model))?;
    family.filter(|f| *f != of_model).map(|_| of_model)
}

fn pick(
    candidates: Vec<(String, Option<String>)>,
    pauses: &mut PoolPauses,
    now: u64,
    room: &dyn Fn(&str) -> bool,
) -> Choice {
    let admission = |p: &Option<String>| {
        p.as_deref()
            .map_or(Admission::Open, |p| pauses.peek(p, now))
    };
    let usable = |p: &Option<String>| p.as_deref().is_none_or(room);
    let open = candidates
        .iter()
        .find(|(_, p)| admission(p) == Admission::Open && usable(p));
    let chosen = open.or_else(|| {
        candidates
            .iter()
            .find(|(_, p)| admission(p) == Admission::Probe && usable(p))
    });
    if let Some((model, pool)) = chosen.cloned() {
        let probe = pool
            .as_deref()
            .is_some_and(|p| pauses.admit(p, now) == Admission::Probe);
        return Choice::Model { model, pool, probe };
    }
    if candidates
        .iter()
        .any(|(_, p)| !matches!(admission(p), Admission::Paused { .. }))
    {
        return Choice::Full;
    }
    let until = candidates
        .iter()
        .filter_map(|(_, p)| match admission(p) {
            Admission::Paused { until } => Some(until),
            _ => None,
        })
        .min();
    match until {
        Some(until) => Choice::Wait { until },
        // No candidate at all: validation rejects such tickets; the CLI's
        // default is the only thing left.
        None => Choice::CliDefault,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(tier: Option<&str>, hint: Option<&str>, model: Option<&str>) -> Ticket {
        let mut t = Ticket::new("T1", "body");
        t.tier = tier.map(String::from);
        t.pool_hint = hint.map(String::from);
        t.model = model.map(String::from);
        t
    }

    fn any(_: &str) -> bool {
        true
    }

    #[test]
    fn a_cli_of_one_family_never_gets_another_familys_model() {
        let routing = Routing::default();
        let families = Families::default();
        let mut p = PoolPauses::default();
        let claude = Some("claude");
        let hinted = ticket(Some("mid"), Some("gemini"), None);
        assert_eq!(
            choose(&hinted, &routing, &families, claude, &mut p, 0, &any),
            Choice::Model {
                model: "claude-sonnet-4-6".into(),
                pool: Some("claude".into()),
                probe: false
            }
        );
        let pinned = ticket(Some("frontier"), None, Some("gemini-3-flash"));
        assert!(
            matches!(choose(&pinned, &routing, &families, claude, &mut p, 0, &any),
                Choice::Model { model, .. } if model == "claude-sonnet-4-6"),
            "an explicit model of another family routes by tier"
        );
        let named = ticket(Some("mid"), None, Some("gemini-2.5-flash"));
        assert!(
            matches!(choose(&named, &routing, &families, claude, &mut p, 0, &any),
                Choice::Model { model, .. } if model == "claude-sonnet-4-6"),
            "a model no table lists is of the family its name starts with"
        );
        let unlisted = ticket(None, None, Some("my-own-model"));
        assert!(
            matches!(choose(&unlisted, &routing, &families, claude, &mut p, 0, &any),
            Choice::Model { model, pool: None, .. } if model == "my-own-model")
        );
        assert_eq!(
            choose(&hinted, &routing, &families, None, &mut p, 0, &any),
            Choice::Model {
                model: "gemini-3.1-pro-low".into(),
                pool: Some("gemini-pro".into()),
                probe: false
            },
            "a CLI of any family keeps the hint"
        );
    }

    #[test]
    fn a_paused_pools_ticket_goes_only_to_a_pool_with_room() {
        let routing = Routing::default();
        let families = Families::default();
        let mut p = PoolPauses::default();
        let frontier = ticket(Some("frontier"), Some("auto"), None);
        let gemini_full = |pool: &str| pool != "gemini-pro";
        let first = choose(
            &frontier,
            &routing,
            &families,
            None,
            &mut p,
            0,
            &gemini_full,
        );
        assert!(
            matches!(&first, Choice::Model { pool: Some(pool), .. } if pool == "claude"),
            "an open pool at its cap is passed over: {first:?}"
        );
        p.pause("gemini-pro", 0, Some(Duration::from_secs(600)));
        let claude_full = |pool: &str| pool != "claude";
        assert_eq!(
            choose(
                &frontier,
                &routing,
                &families,
                None,
                &mut p,
                10,
                &claude_full
            ),
            Choice::Full,
            "the paused pool's ticket does not crowd the pool it moves to"
        );
        let none = |_: &str| false;
        let cheap = ticket(Some("cheap"), Some("gemini"), None);
        p.pause("gemini-flash", 0, Some(Duration::from_secs(100)));
        assert_eq!(
            choose(&cheap, &routing, &families, None, &mut p, 50, &none),
            Choice::Wait { until: 100 },
            "paused, not full: wait for the pause"
        );
    }

    #[test]
    fn pause_until_reset_then_one_probe() {
        let mut p = PoolPauses::default();
        p.pause("claude", 1000, Some(Duration::from_secs(300)));
        assert_eq!(p.admit("claude", 1299), Admission::Paused { until: 1300 });
        assert_eq!(p.admit("claude", 1300), Admission::Probe);
        assert_eq!(
            p.admit("claude", 1301),
            Admission::Paused { until: 1300 },
            "one probe at a time"
        );
        assert_eq!(p.admit("gemini-pro", 1301), Admission::Open);
        // The probe is limited again: a longer backoff when no reset is given.
        p.pause("claude", 1400, None);
        assert_eq!(p.paused(), [("claude".to_string(), 1400 + 120)]);
        p.answered("claude");
        assert_eq!(p.admit("claude", 1401), Admission::Open);
        assert!(p.paused().is_empty());
    }

    #[test]
    fn a_restored_pause_holds_until_its_time_then_allows_one_probe() {
        let mut p = PoolPauses::default();
        p.pause("claude", 1000, None);
        p.pause("claude", 1100, None);
        let (until, strikes) = p.pause_of("claude").unwrap();
        let mut again = PoolPauses::default();
        assert_eq!(again.restore("claude", until, strikes, 1100), until);
        assert_eq!(
            again.admit("claude", until - 1),
            Admission::Paused { until }
        );
        assert_eq!(again.admit("claude", until), Admission::Probe);
        assert_eq!(again.admit("claude", until), Admission::Paused { until });
        // The backoff goes on from the restored count.
        again.pause("claude", until, None);
        assert_eq!(again.pause_of("claude"), Some((until + 240, 3)));
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        assert_eq!(backoff(1), Duration::from_secs(60));
        assert_eq!(backoff(3), Duration::from_secs(240));
        assert_eq!(backoff(40), MAX_BACKOFF);
    }

    #[test]
    fn a_pause_is_at_least_the_backoff_and_at_most_the_bound() {
        let hours = |h: u64| Duration::from_secs(h * 3600);
        let max = hours(6);
        let secs = Duration::from_secs;
        assert_eq!(pause_length(Some(secs(1)), 1, max), secs(60), "a floor");
        assert_eq!(pause_length(Some(secs(1)), 3, max), secs(240), "growing");
        assert_eq!(pause_length(Some(hours(2)), 1, max), hours(2));
        assert_eq!(pause_length(Some(hours(900_000)), 1, max), max);
        assert_eq!(pause_length(Some(Duration::MAX), 1, max), max);
        assert_eq!(pause_length(None, 2, max), secs(120));
        assert_eq!(pause_length(None, 2, secs(5)), secs(5), "the bound wins");
    }

    #[test]
    fn pauses_are_bounded_when_made_and_when_restored() {
        let max = Duration::from_secs(6 * 3600);
        let mut p = PoolPauses::new(max);
        p.pause("claude", 1000, Some(Duration::from_secs(900_000 * 3600)));
        assert_eq!(p.pause_of("claude"), Some((1000 + 6 * 3600, 1)));
        // Saved by an older planwright: until 2129.
        let kept = p.restore("gemini-pro", 5_000_000_000, 1, 1000);
        assert_eq!(kept, 1000 + 6 * 3600);
        assert_eq!(p.peek("gemini-pro", kept), Admission::Probe);
    }

    #[test]
    fn a_paused_pool_sends_tickets_to_another_candidate() {
        let routing = Routing::default();
        let families = Families::default();
        let mut p = PoolPauses::default();
        let frontier = ticket(Some("frontier"), Some("auto"), None);
        let first = choose(&frontier, &routing, &families, None, &mut p, 0, &any);
        assert_eq!(
            first,
            Choice::Model {
                model: "gemini-3.1-pro-high".into(),
                pool: Some("gemini-pro".into()),
                probe: false
            }
        );
        p.pause("gemini-pro", 0, Some(Duration::from_secs(600)));
        let moved = choose(&frontier, &routing, &families, None, &mut p, 10, &any);
        assert!(
            matches!(&moved, Choice::Model { model, probe: false, .. } if model == "claude-sonnet-4-6"),
            "{moved:?}"
        );
        // Only gemini may serve a cheap ticket: it waits, then probes once.
        p.pause("gemini-flash", 0, Some(Duration::from_secs(100)));
        let cheap = ticket(Some("cheap"), Some("gemini"), None);
        assert_eq!(
            choose(&cheap, &routing, &families, None, &mut p, 50, &any),
            Choice::Wait { until: 100 }
        );
        assert!(matches!(
            choose(&cheap, &routing, &families, None, &mut p, 100, &any),
            Choice::Model { probe: true, .. }
        ));
        assert_eq!(
            choose(&cheap, &routing, &families, None, &mut p, 101, &any),
            Choice::Wait { until: 100 }
        );
    }

    #[test]
    fn explicit_model_and_no_routing() {
        let routing = Routing::default();
        let families = Families::default();
        let mut p = PoolPauses::default();
        let own = ticket(None, None, Some("my-local-model"));
        assert_eq!(
            choose(&own, &routing, &families, None, &mut p, 0, &any),
            Choice::Model {
                model: "my-local-model".into(),
                pool: None,
                probe: false
            }
        );
        p.pause("claude", 0, Some(Duration::from_secs(60)));
        let pinned = ticket(Some("cheap"), None, Some("claude-opus-4-6-thinking"));
        assert_eq!(
            choose(&pinned, &routing, &families, None, &mut p, 1, &any),
            Choice::Wait { until: 60 }
        );
        assert_eq!(
            choose(
                &ticket(None, None, None),
                &routing,
                &families,
                None,
                &mut p,
                1,
                &any
            ),
            Choice::CliDefault
        );
    }
}
