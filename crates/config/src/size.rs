//! Sizes and limits in `planwright.toml`: `[sandbox] memory = "4G"`,
//! `[sandbox] pids = 4096`, `[run] min_free = "1G"` or `"5%"`.

use serde::{Deserialize, Serialize};

/// A number of bytes, or none: `"4G"`, `"512M"`, `"64MiB"`, a whole
/// number of bytes, or `"off"`. Units are binary (`K` = 1024).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "SizeText", into = "SizeText")]
pub struct SizeSetting(pub Option<u64>);

/// How a size is written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum SizeText {
    Bytes(u64),
    Text(String),
}

impl TryFrom<SizeText> for SizeSetting {
    type Error = String;
    fn try_from(t: SizeText) -> Result<SizeSetting, String> {
        match t {
            SizeText::Bytes(0) => {
                Err("a size of 0 bytes bounds nothing (write \"off\" for no limit)".into())
            }
            SizeText::Bytes(n) => Ok(SizeSetting(Some(n))),
            SizeText::Text(t) if t.trim() == "off" => Ok(SizeSetting(None)),
            SizeText::Text(t) => parse_size(&t).map(|n| SizeSetting(Some(n))),
        }
    }
}

impl From<SizeSetting> for SizeText {
    fn from(s: SizeSetting) -> SizeText {
        match s.0 {
            Some(n) => SizeText::Bytes(n),
            None => SizeText::Text("off".into()),
        }
    }
}

/// Parses `4G`, `512M`, `64MiB`, `1024K`, `100` (bytes): binary units.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (num, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a size (try \"4G\", \"512M\" or \"off\")"))?;
    let shift = match unit.trim().trim_end_matches("iB").trim_end_matches('B') {
        "" => 0,
        "K" | "k" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("'{text}' has an unknown unit (use K, M, G or T)")),
    };
    match n.checked_mul(1 << shift) {
        Some(0) => Err(format!(
            "'{text}' bounds nothing (write \"off\" for no limit)"
        )),
        Some(bytes) => Ok(bytes),
        None => Err(format!("'{text}' is too large")),
    }
}

/// `[sandbox] pids`: a number of processes and threads, or `"off"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "SizeText", into = "SizeText")]
pub struct CountSetting(pub Option<u64>);

impl TryFrom<SizeText> for CountSetting {
    type Error = String;
    fn try_from(t: SizeText) -> Result<CountSetting, String> {
        match t {
            SizeText::Bytes(0) => {
                Err("a limit of 0 processes bounds nothing (write \"off\" for no limit)".into())
            }
            SizeText::Bytes(n) => Ok(CountSetting(Some(n))),
            SizeText::Text(t) if t.trim() == "off" => Ok(CountSetting(None)),
            SizeText::Text(t) => Err(format!(
                "'{t}' is not a number of processes (try 4096 or \"off\")"
            )),
        }
    }
}

impl From<CountSetting> for SizeText {
    fn from(s: CountSetting) -> SizeText {
        match s.0 {
            Some(n) => SizeText::Bytes(n),
            None => SizeText::Text("off".into()),
        }
    }
}

/// `[run] min_free`: the free space below which no attempt starts, as
/// bytes (`"1G"`), a share of the disk (`"5%"`), or `"off"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "SizeText", into = "SizeText")]
pub enum MinFree {
    /// No floor.
    Off,
    /// This many bytes.
    Bytes(u64),
    /// This many percent of the disk's size.
    Percent(u8),
    /// The smaller of a number of bytes and a share of the disk (the
    /// default: 1 GiB or 5%).
    Smaller(u64, u8),
}

impl MinFree {
    /// The floor on a disk of `total` bytes.
    pub fn floor(self, total: u64) -> u64 {
        let share = |p: u8| total / 100 * u64::from(p);
        match self {
            MinFree::Off => 0,
            MinFree::Bytes(n) => n,
            MinFree::Percent(p) => share(p),
            MinFree::Smaller(n, p) => n.min(share(p)),
        }
    }

    /// As written in `planwright.toml`, for messages.
    pub fn describe(self) -> String {
        match self {
            MinFree::Off => "off".into(),
            MinFree::Bytes(n) => size_text(n),
            MinFree::Percent(p) => format!("{p}%"),
            MinFree::Smaller(n, p) => format!("{} or {p}%, whichever is smaller", size_text(n)),
        }
    }
}

/// `1 GiB`, `512 MiB`, `1000 bytes`: exact, in the largest binary unit
/// that divides it.
fn size_text(bytes: u64) -> String {
    [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")]
        .iter()
        .find(|(shift, _)| bytes >= 1 << shift && bytes % (1 << shift) == 0)
        .map_or_else(
            || format!("{bytes} bytes"),
            |(shift, unit)| format!("{} {unit}", bytes >> shift),
        )
}

impl TryFrom<SizeText> for MinFree {
    type Error = String;
    fn try_from(t: SizeText) -> Result<MinFree, String> {
        match t {
            SizeText::Bytes(n) => Ok(MinFree::Bytes(n)),
            SizeText::Text(t) if t.trim() == "off" => Ok(MinFree::Off),
            SizeText::Text(t) => match t.trim().strip_suffix('%') {
                Some(p) => match p.trim().parse::<u8>() {
                    Ok(p) if p <= 100 => Ok(MinFree::Percent(p)),
                    _ => Err(format!("'{t}' is not a share of the disk (try \"5%\")")),
                },
                None => parse_size(&t).map(MinFree::Bytes),
            },
        }
    }
}

impl From<MinFree> for SizeText {
    fn from(m: MinFree) -> SizeText {
        match m {
            MinFree::Off => SizeText::Text("off".into()),
            MinFree::Bytes(n) | MinFree::Smaller(n, _) => SizeText::Bytes(n),
            MinFree::Percent(p) => SizeText::Text(format!("{p}%")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("64MB"), Ok(64 << 20));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("4X").unwrap_err().contains("unknown unit"));
        assert!(parse_size("0G").unwrap_err().contains("off"));
        assert!(parse_size("lots").is_err());
    }

    #[test]
    fn the_floor_is_the_smaller_of_bytes_and_share() {
        let default = MinFree::Smaller(1 << 30, 5);
        assert_eq!(default.floor(100 << 30), 1 << 30);
        assert_eq!(default.floor(10 << 30), (10 << 30) / 100 * 5);
        assert_eq!(MinFree::Off.floor(1 << 40), 0);
        assert_eq!(
            MinFree::try_from(SizeText::Text("5%".into())),
            Ok(MinFree::Percent(5))
        );
        assert!(MinFree::try_from(SizeText::Text("500%".into())).is_err());
    }
}
