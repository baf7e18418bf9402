//! The routing table: which models a ticket's tier and pool hint allow, and
//! the model pools they count against.
//!
//! It lives here, not in planwright-config, because validation needs it
//! (agb's rule "the tier and pool hint must leave a candidate"); the
//! `[routing]` section of `planwright.toml` deserializes into it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One model a ticket can be routed to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// The model's name as the agent CLI knows it.
    pub name: String,
    /// Its family (`gemini`, `claude`, `gpt`, `gpt-oss`); pool hints select families.
    pub family: String,
    /// The tiers it serves.
    pub tiers: Vec<String>,
    /// The model pool it counts against (see `caps`).
    pub pool: String,
}

/// The routing table. `[routing]` in `planwright.toml` replaces any part it
/// names; a part it leaves out keeps agb's default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Routing {
    /// Candidate models, in order of preference.
    #[serde(default = "default_models")]
    pub models: Vec<Model>,
    /// Pool hint -> the families it accepts. `auto` accepts every family.
    #[serde(default = "default_hints")]
    pub hints: BTreeMap<String, Vec<String>>,
    /// Model pool -> how many tickets may use it at once.
    #[serde(default = "default_caps")]
    pub caps: BTreeMap<String, u32>,
}

impl Default for Routing {
    fn default() -> Self {
        Routing {
            models: default_models(),
            hints: default_hints(),
            caps: default_caps(),
        }
    }
}

/// The tiers a ticket may ask for.
pub const TIERS: [&str; 3] = ["cheap", "mid", "frontier"];

/// The tier of a ticket that names none.
pub const DEFAULT_TIER: &str = "mid";

impl Routing {
    /// The models a ticket of `tier` with `pool_hint` may run on.
    pub fn candidates(&self, tier: &str, pool_hint: &str) -> Vec<&Model> {
        let families = self.hints.get(pool_hint);
        self.models
            .iter()
            .filter(|m| m.tiers.iter().any(|t| t == tier))
            .filter(|m| pool_hint == "auto" || families.is_some_and(|f| f.contains(&m.family)))
            .collect()
    }

    /// The models a ticket of `tier` with `pool_hint` may run on with a CLI
    /// that runs only `family`'s models (`None`: a CLI of any family): the
    /// hint's candidates of that family, else the family's model of the
    /// tier in `families` (empty when it has none), `honoured` then saying
    /// whether the hint accepts the family at all.
    pub fn for_family(
        &self,
        families: &Families,
        tier: &str,
        pool_hint: &str,
        family: Option<&str>,
    ) -> FamilyCandidates {
        let hinted = self.candidates(tier, pool_hint).into_iter().cloned();
        let Some(family) = family else {
            return FamilyCandidates {
                models: hinted.collect(),
                honoured: true,
            };
        };
        let kept: Vec<Model> = hinted.filter(|m| m.family == family).collect();
        if !kept.is_empty() {
            return FamilyCandidates {
                models: kept,
                honoured: true,
            };
        }
        let models = families
            .model(family, tier)
            .map(|name| model(name, family, &[tier], self.pool_of(name).unwrap_or(family)))
            .into_iter()
            .collect();
        FamilyCandidates {
            models,
            honoured: self.accepts(pool_hint, family),
        }
    }

    /// Whether `pool_hint` accepts `family`'s models.
    pub fn accepts(&self, pool_hint: &str, family: &str) -> bool {
        pool_hint == "auto"
            || self
                .hints
                .get(pool_hint)
                .is_some_and(|f| f.iter().any(|f| f == family))
    }

    /// The families `pool_hint` accepts, in order (`auto`: none named).
    pub fn hint_families(&self, pool_hint: &str) -> &[String] {
        self.hints.get(pool_hint).map_or(&[], Vec::as_slice)
    }

    /// The family of `model` in this table, if it lists it.
    pub fn family_of(&self, model: &str) -> Option<&str> {
        self.models
            .iter()
            .find(|m| m.name == model)
            .map(|m| m.family.as_str())
    }

    /// The pool of `model` in this table, if it lists it.
    pub fn pool_of(&self, model: &str) -> Option<&str> {
        self.models
            .iter()
            .find(|m| m.name == model)
            .map(|m| m.pool.as_str())
    }

    /// Whether `hint` is a pool hint this table knows.
    pub fn knows_hint(&self, hint: &str) -> bool {
        hint == "auto" || self.hints.contains_key(hint)
    }

    /// The known pool hints, for error messages.
    pub fn hint_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.hints.keys().map(String::as_str).collect();
        names.push("auto");
        names
    }
}

/// What [`Routing::for_family`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyCandidates {
    /// The candidates, in order of preference.
    pub models: Vec<Model>,
    /// Whether they are the ticket's pool hint's (else the family's own).
    pub honoured: bool,
}

/// Planwright's own table, apart from agb's [`Routing`]: the one model a
/// CLI of each family gets for a tier when a ticket's pool hint leaves it
/// none of its family (`--agent claude` on a `pool_hint: gemini` ticket).
/// Plan validation never reads it, so it can give every family a model of
/// every tier without changing which agb plans validate. `[families]` in
/// `planwright.toml` replaces the rows it names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Families(pub BTreeMap<String, FamilyModels>);

/// One family's row of [`Families`]: its model per tier.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyModels {
    /// The `cheap` tier's model.
    pub cheap: Option<String>,
    /// The `mid` tier's model.
    pub mid: Option<String>,
    /// The `frontier` tier's model.
    pub frontier: Option<String>,
}

impl FamilyModels {
    /// The model of `tier`, if the row has one.
    pub fn of(&self, tier: &str) -> Option<&str> {
        match tier {
            "cheap" => self.cheap.as_deref(),
            "mid" => self.mid.as_deref(),
            "frontier" => self.frontier.as_deref(),
            _ => None,
        }
    }

    fn all(&self) -> impl Iterator<Item = &str> {
        TIERS.iter().filter_map(|t| self.of(t))
    }
}

impl Default for Families {
    fn default() -> Self {
        let row = |cheap: &str, mid: &str, frontier: &str| FamilyModels {
            cheap: Some(cheap.into()),
            mid: Some(mid.into()),
            frontier: Some(frontier.into()),
        };
        Families(BTreeMap::from([
            (
                "claude".into(),
                row("claude-haiku-4-5", "claude-sonnet-4-6", "claude-opus-4-6"),
            ),
            (
                "gemini".into(),
                row(
                    "gemini-3-flash",
                    "gemini-3.1-pro-low",
                    "gemini-3.1-pro-high",
                ),
            ),
            ("gpt".into(), row("gpt-5.4-mini", "gpt-5.4", "gpt-5.5")),
        ]))
    }
}

impl Families {
    /// `family`'s model of `tier`, if it has one.
    pub fn model(&self, family: &str, tier: &str) -> Option<&str> {
        self.0.get(family)?.of(tier)
    }

    /// The family whose row names `model`, if one does.
    pub fn family_of(&self, model: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(_, row)| row.all().any(|m| m == model))
            .map(|(family, _)| family.as_str())
    }

    /// The family whose row names `model`, else the family whose name
    /// starts it as a word (`gemini-2.5-flash`: gemini), if one does.
    pub fn family_named(&self, model: &str) -> Option<&str> {
        self.family_of(model).or_else(|| {
            self.0
                .keys()
                .find(|f| {
                    model
                        .strip_prefix(f.as_str())
                        .is_some_and(|r| r.starts_with('-'))
                })
                .map(String::as_str)
        })
    }

    /// This table with `rows` in place of the rows of the same families.
    pub fn with(mut self, rows: &BTreeMap<String, FamilyModels>) -> Families {
        self.0
            .extend(rows.iter().map(|(f, row)| (f.clone(), row.clone())));
        self
    }
}

fn model(name: &str, family: &str, tiers: &[&str], pool: &str) -> Model {
    Model {
        name: name.into(),
        family: family.into(),
        tiers: tiers.iter().map(|t| t.to_string()).collect(),
        pool: pool.into(),
    }
}

/// agb's defaults: cheap is Gemini-only; frontier is gemini-3.1-pro-high,
/// claude-sonnet-4-6 and claude-opus-4-6-thinking. agb's newest table also
/// makes mid Gemini-only, which rejects its own shipped template (ticket T2
/// is mid + claude); the seed's template is the contract, so mid keeps
/// claude-sonnet-4-6 here (see docs/formats/agb.md).
fn default_models() -> Vec<Model> {
    vec![
        model("gemini-3-flash", "gemini", &["cheap"], "gemini-flash"),
        model("gemini-3.1-pro-low", "gemini", &["mid"], "gemini-pro"),
        model("gemini-3.1-pro-high", "gemini", &["frontier"], "gemini-pro"),
        model(
            "claude-sonnet-4-6",
            "claude",
            &["mid", "frontier"],
            "claude",
        ),
        model(
            "claude-opus-4-6-thinking",
            "claude",
            &["frontier"],
            "claude",
        ),
    ]
}

fn default_hints() -> BTreeMap<String, Vec<String>> {
    [
        ("gemini", vec!["gemini"]),
        ("claude", vec!["claude"]),
        ("claude-gpt", vec!["claude", "gpt"]),
        ("gpt-oss", vec!["gpt-oss"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect()
}

fn default_caps() -> BTreeMap<String, u32> {
    [
        ("gemini-flash", 8),
        ("gemini-pro", 4),
        ("claude", 4),
        ("gpt-oss", 2),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(f: FamilyCandidates) -> (Vec<String>, bool) {
        (f.models.into_iter().map(|m| m.name).collect(), f.honoured)
    }

    #[test]
    fn a_family_gets_its_own_model_of_the_tier_when_the_hint_names_another() {
        let (r, f) = (Routing::default(), Families::default());
        let route = |tier, hint, family| names(r.for_family(&f, tier, hint, family));
        assert_eq!(
            route("mid", "gemini", Some("claude")),
            (vec!["claude-sonnet-4-6".to_string()], false)
        );
        assert_eq!(
            route("mid", "gemini", Some("gemini")),
            (vec!["gemini-3.1-pro-low".to_string()], true)
        );
        assert_eq!(
            route("cheap", "gemini", Some("claude")),
            (vec!["claude-haiku-4-5".to_string()], false),
            "agb's table has no cheap claude model; the family table has"
        );
        assert_eq!(
            route("frontier", "auto", Some("claude")).0,
            ["claude-sonnet-4-6", "claude-opus-4-6-thinking"],
            "a hint that leaves the family candidates keeps agb's"
        );
        assert_eq!(route("mid", "gemini", None).0, ["gemini-3.1-pro-low"]);
        assert_eq!(
            route("cheap", "claude-gpt", Some("gpt")),
            (vec!["gpt-5.4-mini".to_string()], true),
            "the hint accepts gpt, which agb's table has no model of"
        );
        let none = Families::default().with(&BTreeMap::from([(
            "claude".to_string(),
            FamilyModels::default(),
        )]));
        assert_eq!(
            names(r.for_family(&none, "cheap", "gemini", Some("claude"))),
            (vec![], false)
        );
    }

    #[test]
    fn a_fallback_model_counts_against_its_pool_in_agbs_table_else_its_familys() {
        let (r, f) = (Routing::default(), Families::default());
        let pool = |tier, family| {
            r.for_family(&f, tier, "gpt-oss", Some(family)).models[0]
                .pool
                .clone()
        };
        assert_eq!(pool("cheap", "gemini"), "gemini-flash");
        assert_eq!(pool("frontier", "claude"), "claude");
        assert_eq!(pool("mid", "gpt"), "gpt");
        assert_eq!(f.family_of("gpt-5.5"), Some("gpt"));
        assert_eq!(f.family_of("claude-sonnet-4-6"), Some("claude"));
        assert_eq!(f.family_of("llama"), None);
    }

    #[test]
    fn a_model_no_row_names_is_of_the_family_its_name_starts_with() {
        let f = Families::default();
        assert_eq!(f.family_named("gemini-3-flash"), Some("gemini"));
        assert_eq!(f.family_named("gemini-2.5-flash"), Some("gemini"));
        assert_eq!(f.family_named("claude-haiku-4-5-20251001"), Some("claude"));
        assert_eq!(f.family_named("gpt-5.4-mini"), Some("gpt"));
        assert_eq!(f.family_named("gpt5"), None);
        assert_eq!(f.family_named("my-local-model"), None);
        assert_eq!(f.family_named("openai/gpt-5.4"), None);
    }

    /// docs/agents.md's table of the model each family's CLI gets per tier.
    #[test]
    fn the_docs_table_is_the_default_family_table() {
        let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/agents.md"));
        let rows: Vec<Vec<&str>> = doc
            .lines()
            .map(str::trim)
            .skip_while(|l| !l.starts_with("| family | cheap | mid | frontier |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
            .collect();
        let expected: Vec<Vec<String>> = Families::default()
            .0
            .iter()
            .map(|(family, row)| {
                let cells = TIERS.iter().map(|t| row.of(t).unwrap_or("—").to_string());
                std::iter::once(family.clone()).chain(cells).collect()
            })
            .collect();
        assert_eq!(rows, expected);
    }

    #[test]
    fn default_table_matches_agb() {
        let r = Routing::default();
        assert!(r.candidates("cheap", "claude").is_empty());
        assert!(!r.candidates("cheap", "gemini").is_empty());
        assert!(
            !r.candidates("mid", "claude").is_empty(),
            "the seed's template uses mid + claude"
        );
        for tier in TIERS {
            assert!(r.candidates(tier, "gpt-oss").is_empty());
        }
        let frontier: Vec<_> = r
            .candidates("frontier", "auto")
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(
            frontier,
            [
                "gemini-3.1-pro-high",
                "claude-sonnet-4-6",
                "claude-opus-4-6-thinking"
            ]
        );
    }
}
