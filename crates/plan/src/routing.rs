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
    /// that runs only `family`'s models (`None`: a CLI of any family). When
    /// the hint leaves none of that family, the family's models of the same
    /// tier, and `honoured` is false; empty when the family has none.
    pub fn for_family(&self, tier: &str, pool_hint: &str, family: Option<&str>) -> FamilyRoute<'_> {
        let hinted = self.candidates(tier, pool_hint);
        let Some(family) = family else {
            return FamilyRoute {
                models: hinted,
                honoured: true,
            };
        };
        let of_family = |m: &&Model| m.family == family;
        let kept: Vec<&Model> = hinted.into_iter().filter(of_family).collect();
        if !kept.is_empty() {
            return FamilyRoute {
                models: kept,
                honoured: true,
            };
        }
        let models = self
            .candidates(tier, "auto")
            .into_iter()
            .filter(of_family)
            .collect();
        FamilyRoute {
            models,
            honoured: false,
        }
    }

    /// The family of `model` in this table, if it lists it.
    pub fn family_of(&self, model: &str) -> Option<&str> {
        self.models
            .iter()
            .find(|m| m.name == model)
            .map(|m| m.family.as_str())
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
pub struct FamilyRoute<'a> {
    /// The candidates, in order of preference.
    pub models: Vec<&'a Model>,
    /// Whether they are the ticket's pool hint's (else the family's own).
    pub honoured: bool,
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

    #[test]
    fn a_family_gets_its_own_model_of_the_tier_when_the_hint_names_another() {
        let r = Routing::default();
        let names = |f: FamilyRoute<'_>| -> (Vec<String>, bool) {
            (
                f.models.iter().map(|m| m.name.clone()).collect(),
                f.honoured,
            )
        };
        assert_eq!(
            names(r.for_family("mid", "gemini", Some("claude"))),
            (vec!["claude-sonnet-4-6".to_string()], false)
        );
        assert_eq!(
            names(r.for_family("mid", "gemini", Some("gemini"))),
            (vec!["gemini-3.1-pro-low".to_string()], true)
        );
        assert_eq!(
            names(r.for_family("cheap", "gemini", Some("claude"))),
            (vec![], false),
            "claude has no cheap model"
        );
        assert_eq!(
            names(r.for_family("frontier", "auto", Some("claude"))).0,
            ["claude-sonnet-4-6", "claude-opus-4-6-thinking"]
        );
        assert_eq!(
            names(r.for_family("mid", "gemini", None)).0,
            ["gemini-3.1-pro-low"]
        );
    }

    /// docs/agents.md's table of the model each family's CLI gets per tier.
    #[test]
    fn the_docs_table_is_the_default_table() {
        let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/agents.md"));
        let rows: Vec<Vec<&str>> = doc
            .lines()
            .map(str::trim)
            .skip_while(|l| !l.starts_with("| family | cheap | mid | frontier |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
            .collect();
        let r = Routing::default();
        let mut families: Vec<&str> = r.models.iter().map(|m| m.family.as_str()).collect();
        families.dedup();
        let expected: Vec<Vec<String>> = families
            .iter()
            .map(|f| {
                let cells = TIERS.iter().map(|t| {
                    let first = r.for_family(t, "auto", Some(f)).models.first().copied();
                    first.map_or("—".to_string(), |m| m.name.clone())
                });
                std::iter::once(f.to_string()).chain(cells).collect()
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
