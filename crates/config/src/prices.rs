//! `[prices]`: what each model costs, for CLIs that report no cost.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one model costs, in US dollars per million tokens of each kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Input not read from a cache.
    pub input: f64,
    /// Output (reasoning included).
    pub output: f64,
    /// Input read from a cache (default: the input price).
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Input written to a cache (default: the input price).
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl Price {
    /// The cost of the given token counts, in US dollars.
    pub fn cost(&self, input: u64, output: u64, cache_read: u64, cache_write: u64) -> f64 {
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(input, self.input)
            + per(output, self.output)
            + per(cache_read, self.cache_read.unwrap_or(self.input))
            + per(cache_write, self.cache_write.unwrap_or(self.input))
    }
}

/// `[prices]`: model name -> [`Price`]. Entries in `planwright.toml` are
/// added to the shipped defaults (and replace a default of the same name),
/// so a user names only the models they change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "BTreeMap<String, Price>", into = "BTreeMap<String, Price>")]
pub struct Prices(pub BTreeMap<String, Price>);

impl Default for Prices {
    fn default() -> Self {
        Prices(default_prices())
    }
}

impl From<BTreeMap<String, Price>> for Prices {
    fn from(user: BTreeMap<String, Price>) -> Self {
        let mut all = default_prices();
        all.extend(user);
        Prices(all)
    }
}

impl From<Prices> for BTreeMap<String, Price> {
    fn from(p: Prices) -> Self {
        p.0
    }
}

impl Prices {
    /// The price of `model`: an exact entry, else the longest entry the
    /// model's name starts with, since CLIs report dated or suffixed names
    /// (`claude-sonnet-4-6-20260217`, `gemini-3-flash-preview`).
    /// A `provider/model` name (opencode's) is looked up by its model part.
    /// A model no entry names is priced as the name a CLI resolved it
    /// from ([`ALIASES`]: Gemini CLI 0.61 runs `gemini-3-flash` as
    /// `gemini-3.8-flash`).
    pub fn find(&self, model: &str) -> Option<&Price> {
        let model = model.rsplit('/').next().unwrap_or(model);
        self.lookup(model).or_else(|| {
            let (_, alias) = ALIASES.iter().find(|(name, _)| model.starts_with(name))?;
            self.lookup(alias)
        })
    }

    /// What a budget counts an attempt of `model` at when the table has
    /// no price for it: the highest price of each kind among the entries
    /// of its family (the entries that begin with the part of its name
    /// before the first `-`: `gpt-9-mock` is priced as the dearest `gpt-`
    /// of each kind), else, for a model of no family here or none, among
    /// every entry. `None` only for an empty table.
    pub fn ceiling(&self, model: Option<&str>) -> Option<Price> {
        let name = model.map(|m| m.rsplit('/').next().unwrap_or(m));
        let family = name
            .and_then(|n| n.split_once('-'))
            .map(|(f, _)| format!("{f}-"));
        let of_family: Vec<&Price> = match &family {
            Some(f) => self
                .0
                .iter()
                .filter(|(k, _)| k.starts_with(f.as_str()))
                .map(|(_, p)| p)
                .collect(),
            None => Vec::new(),
        };
        let pool = if of_family.is_empty() {
            self.0.values().collect()
        } else {
            of_family
        };
        if pool.is_empty() {
            return None;
        }
        let max = |kind: fn(&Price) -> f64| pool.iter().map(|p| kind(p)).fold(0.0, f64::max);
        Some(Price {
            input: max(|p| p.input),
            output: max(|p| p.output),
            cache_read: Some(max(|p| p.cache_read.unwrap_or(p.input))),
            cache_write: Some(max(|p| p.cache_write.unwrap_or(p.input))),
        })
    }

    fn lookup(&self, model: &str) -> Option<&Price> {
        if let Some(p) = self.0.get(model) {
            return Some(p);
        }
        self.0
            .iter()
            .filter(|(name, _)| model.starts_with(name.as_str()))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, p)| p)
    }
}

/// Models a CLI reports under another name than the one it was asked for
/// and billed as: (the name it reports, the name priced). Gemini CLI 0.61
/// resolves its alias `gemini-3-flash` to `gemini-3.8-flash`.
pub(crate) const ALIASES: &[(&str, &str)] = &[("gemini-3.8-flash", "gemini-3-flash")];

/// The shipped prices, per million tokens: (model, input, output,
/// cache read, cache write). Dated and sourced in docs/agents.md; a model
/// missing here gets no computed cost.
const DEFAULT_PRICES: &[(&str, f64, f64, f64, f64)] = &[
    ("claude-sonnet-4-6", 3.0, 15.0, 0.30, 3.75),
    ("claude-opus-4-6", 5.0, 25.0, 0.50, 6.25),
    ("claude-haiku-4-5", 1.0, 5.0, 0.10, 1.25),
    ("gpt-5.5", 5.0, 30.0, 0.50, 5.0),
    ("gpt-5.4", 2.50, 15.0, 0.25, 2.50),
    ("gpt-5.4-mini", 0.75, 4.52, 0.075, 0.75),
    ("gpt-5.3-codex", 1.75, 14.0, 0.175, 1.75),
    ("gpt-5-codex", 1.25, 10.0, 0.125, 1.25),
    ("gemini-3.1-pro", 2.0, 12.0, 0.20, 2.0),
    ("gemini-3-flash", 0.50, 3.0, 0.05, 0.50),
    ("gemini-2.5-pro", 1.25, 10.0, 0.125, 1.25),
    ("gemini-2.5-flash", 0.30, 2.50, 0.03, 0.30),
    ("gemini-2.5-flash-lite", 0.10, 0.40, 0.01, 0.10),
];

fn default_prices() -> BTreeMap<String, Price> {
    DEFAULT_PRICES
        .iter()
        .map(|&(name, input, output, read, write)| {
            let price = Price {
                input,
                output,
                cache_read: Some(read),
                cache_write: Some(write),
            };
            (name.to_string(), price)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_a_cli_resolved_is_priced_as_its_alias() {
        let prices = Prices::default();
        let flash = prices.find("gemini-3-flash").copied();
        assert!(flash.is_some());
        assert_eq!(prices.find("gemini-3.8-flash").copied(), flash);
        assert_eq!(prices.find("google/gemini-3.8-flash-001").copied(), flash);
        assert_eq!(prices.find("gpt-9-mock"), None);
    }

    #[test]
    fn an_unpriced_model_is_bounded_by_its_familys_dearest_rates() {
        let prices = Prices::default();
        let gpt = prices.ceiling(Some("gpt-9-mock")).unwrap();
        // gpt-5.5's input and output, each kind's highest of the `gpt-` rows.
        assert_eq!((gpt.input, gpt.output), (5.0, 30.0));
        assert_eq!((gpt.cache_read, gpt.cache_write), (Some(0.5), Some(5.0)));
        let claude = prices.ceiling(Some("anthropic/claude-next")).unwrap();
        assert_eq!((claude.input, claude.output), (5.0, 25.0));
        // No family here: the whole table's dearest.
        let any = prices.ceiling(Some("my-model")).unwrap();
        assert_eq!((any.input, any.output), (5.0, 30.0));
        assert_eq!(prices.ceiling(None), Some(any));
        assert_eq!(Prices(BTreeMap::new()).ceiling(Some("x")), None);
    }
}
