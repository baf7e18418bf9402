//! Lengths of time: in `planwright.toml` whole seconds or text with a unit,
//! and the same text on the command line.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A length of time in `planwright.toml`: whole seconds, or a string with
/// a unit (`"90s"`, `"30m"`, `"6h"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "DurationText", into = "DurationText")]
pub struct DurationSetting(pub Duration);

/// How a [`DurationSetting`] is written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum DurationText {
    Seconds(u64),
    Text(String),
}

impl TryFrom<DurationText> for DurationSetting {
    type Error = String;
    fn try_from(t: DurationText) -> Result<DurationSetting, String> {
        match t {
            DurationText::Seconds(n) => Ok(DurationSetting(Duration::from_secs(n))),
            DurationText::Text(text) => parse_duration(&text).map(DurationSetting),
        }
    }
}

impl From<DurationSetting> for DurationText {
    fn from(s: DurationSetting) -> DurationText {
        DurationText::Seconds(s.0.as_secs())
    }
}

/// Parses `90`, `90s`, `30m`, `2h`: the one reading of a duration, for
/// flags and `planwright.toml` alike.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a duration (try 90s, 30m or 2h)"))?;
    let scale = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(format!("'{text}' has an unknown unit (use s, m or h)")),
    };
    let secs = n
        .checked_mul(scale)
        .ok_or_else(|| format!("'{text}' is too long a duration"))?;
    Ok(Duration::from_secs(secs))
}
