//! UTC civil days as `YYYY-MM-DD` and day numbers (days since 1970-01-01), and ISO-8601
//! timestamps of unix milliseconds: the only calendar arithmetic the core does (the
//! Scanner's days, the sampling salts' ids).

/// Milliseconds in a day.
pub const DAY_MS: i64 = 86_400_000;

/// (year, month, day) of a day number (proleptic Gregorian).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's algorithm, on 400-year eras.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The day number of (year, month, day).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DD` of a day number.
pub fn day_string(n: i64) -> String {
    let (y, m, d) = civil_from_days(n);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The day number of `YYYY-MM-DD`, or `None` when it is not a real date in that form.
pub fn day_number(day: &str) -> Option<i64> {
    let b = day.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = &day[r];
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let n = days_from_civil(i64::from(y), m, d);
    (civil_from_days(n) == (i64::from(y), m, d)).then_some(n)
}

/// The UTC day `YYYY-MM-DD` of a unix-millisecond time.
pub fn day_of(ms: i64) -> String {
    day_string(ms.div_euclid(DAY_MS))
}

/// ISO-8601 UTC with milliseconds, e.g. `2026-11-30T06:45:00.123Z`.
pub fn iso(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        sod / 3600,
        (sod % 3600) / 60,
        sod % 60,
        ms.rem_euclid(1000)
    )
}

/// Unix milliseconds of an RFC 3339 timestamp (`2026-11-30T06:34:56.123Z`, or with an offset
/// `+01:00`; fractions past milliseconds are cut), or `None` when it is not one.
pub fn parse_iso(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let day = day_number(text.get(..10)?)?;
    let (h, m, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    let mut rest = &text[19..];
    let mut ms = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let padded = format!("{:0<3}", &frac[..digits.min(3)]);
        ms = padded.parse::<i64>().ok()?;
        rest = &frac[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" => 0,
        _ => {
            let o = rest.as_bytes();
            if o.len() != 6 || !matches!(o[0], b'+' | b'-') || o[3] != b':' {
                return None;
            }
            let oh: i64 = rest[1..3]
                .parse()
                .ok()
                .filter(|_| rest[1..3].bytes().all(|c| c.is_ascii_digit()))?;
            let om: i64 = rest[4..6]
                .parse()
                .ok()
                .filter(|_| rest[4..6].bytes().all(|c| c.is_ascii_digit()))?;
            if oh > 23 || om > 59 {
                return None;
            }
            let sign = if o[0] == b'-' { -1 } else { 1 };
            sign * (oh * 60 + om)
        }
    };
    Some(((day * 86_400 + h * 3600 + m * 60 + s) - offset_min * 60) * 1000 + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_round_trip_and_reject_non_dates() {
        assert_eq!(day_number("1970-01-01"), Some(0));
        assert_eq!(day_number("2000-02-29"), Some(11_016));
        assert_eq!(day_string(11_016), "2000-02-29");
        for n in [-1, 0, 59, 20_000, 2_932_896] {
            assert_eq!(day_number(&day_string(n)), Some(n), "{n}");
        }
        for bad in [
            "2001-02-29",
            "2026-13-01",
            "2026-1-01",
            "2026-01-00",
            "x",
            "+026-01-01",
        ] {
            assert_eq!(day_number(bad), None, "{bad}");
        }
        assert_eq!(day_of(951_782_400_000), "2000-02-29");
        assert_eq!(day_of(-1), "1969-12-31");
        assert_eq!(iso(1_796_020_496_123), "2026-11-30T06:34:56.123Z");
        assert_eq!(
            parse_iso("2026-11-30T06:34:56.123Z"),
            Some(1_796_020_496_123)
        );
        assert_eq!(
            parse_iso("2026-11-30T07:34:56.1234+01:00"),
            Some(1_796_020_496_123)
        );
        assert_eq!(parse_iso("2026-11-30T06:34:56Z"), Some(1_796_020_496_000));
        for bad in [
            "2026-11-30",
            "2026-11-30T06:34:56",
            "2026-11-30T24:00:00Z",
            "x",
        ] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
    }
}
