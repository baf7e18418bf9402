//! Wall-clock timestamps as RFC 3339 UTC text, without a date crate.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as `2026-11-29T21:42:11Z`.
pub fn now() -> String {
    format_unix(unix_now())
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Formats seconds since the epoch as RFC 3339 UTC.
pub fn format_unix(secs: u64) -> String {
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Formats milliseconds since the epoch as RFC 3339 UTC with milliseconds:
/// `2026-11-29T21:42:11.250Z`.
pub fn format_unix_ms(ms: u64) -> String {
    let secs = format_unix(ms / 1000);
    format!("{}.{:03}Z", secs.trim_end_matches('Z'), ms % 1000)
}

/// A run id from the time: `20261129-214211`, plus a suffix against clashes.
pub fn run_id(suffix: u32) -> String {
    let stamp = format_unix(unix_now());
    let compact: String = stamp
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .map(|c| if c == 'T' { '-' } else { c })
        .collect();
    if suffix == 0 {
        compact
    } else {
        format!("{compact}-{suffix}")
    }
}

/// Seconds since the epoch of an RFC 3339 time as forges write it
/// (`2026-11-29T21:42:11Z`, `2026-11-29T21:42:11.250+02:00`); `None` for
/// other text.
pub fn parse_unix(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let field = |from: usize, to: usize| text.get(from..to)?.parse::<i64>().ok();
    let (y, m, d) = (field(0, 4)?, field(5, 7)?, field(8, 10)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Howard Hinnant's days-from-civil, the inverse of `civil_from_days`.
    let y = if m <= 2 { y - 1 } else { y };
    let (era, yoe) = (y.div_euclid(400), y.rem_euclid(400));
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let secs = field(11, 13)? * 3600 + field(14, 16)? * 60 + field(17, 19)?;
    let zone = text[19..].trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    let offset = match zone.as_bytes().first()? {
        b'Z' | b'z' => 0,
        sign @ (b'+' | b'-') => {
            let h: i64 = zone.get(1..3)?.parse().ok()?;
            let m: i64 = zone.get(4..6)?.parse().ok()?;
            let o = h * 3600 + m * 60;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    u64::try_from(days * 86_400 + secs - offset).ok()
}

// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_unix(1_796_074_931), "2026-11-30T21:42:11Z");
    }

    #[test]
    fn parses_what_it_formats_and_forges_offsets() {
        for secs in [0, 951_782_400, 1_796_074_931] {
            assert_eq!(parse_unix(&format_unix(secs)), Some(secs));
        }
        assert_eq!(
            parse_unix("2026-11-30T23:42:11.123+02:00"),
            Some(1_796_074_931)
        );
        assert_eq!(parse_unix("yesterday"), None);
        assert_eq!(parse_unix(""), None);
    }
}
