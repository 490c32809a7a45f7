//! UTC timestamps in the log's format, `YYYY-MM-DDTHH:MM:SSZ`, without a calendar dependency.

use std::time::{SystemTime, UNIX_EPOCH};

/// `t` as `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds, truncated). Times before 1970 are written
/// as 1970-01-01T00:00:00Z.
pub fn utc(t: SystemTime) -> String {
    from_unix(t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}

/// The current time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn now() -> String {
    utc(SystemTime::now())
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn from_unix(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01, computed over 400-year eras
/// (146,097 days each) counted from 0000-03-01, so leap days fall at the end of a year.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // days from 0000-03-01 to 1970-01-01
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month as u32, day as u32)
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
