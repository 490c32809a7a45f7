//! UTC timestamps in the log's format, `YYYY-MM-DDTHH:MM:SSZ`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `t` as `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds, truncated). Times before 1970 are written
/// as 1970-01-01T00:00:00Z.
pub fn utc(t: SystemTime) -> String {
    let t = if t < UNIX_EPOCH { UNIX_EPOCH } else { t };
    humantime::format_rfc3339_seconds(t).to_string()
}

/// The current time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn now() -> String {
    utc(SystemTime::now())
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn from_unix(secs: u64) -> String {
    utc(UNIX_EPOCH + Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_instants() {
        assert_eq!(from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(from_unix(1_796_047_200), "2026-11-30T14:00:00Z");
        assert_eq!(from_unix(951_868_799), "2000-02-29T23:59:59Z");
        assert_eq!(from_unix(951_868_800), "2000-03-01T00:00:00Z");
        assert_eq!(from_unix(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(
            utc(UNIX_EPOCH + Duration::from_millis(1_796_047_200_999)),
            "2026-11-30T14:00:00Z"
        );
        assert!(toolmark_log::entry::valid_time(&now()));
    }

    #[test]
    fn every_day_of_four_years_is_valid_and_increasing() {
        let mut last = String::new();
        for day in 19_000..19_000 + 4 * 366 {
            let t = from_unix(day * 86_400 + 86_399);
            assert!(toolmark_log::entry::valid_time(&t), "{t}");
            assert!(t > last, "{t} after {last}");
            last = t;
        }
    }
}
