//! The values of `--timeout` and `--max-cost` as people write them: a duration of
//! number-and-unit groups (`90s`, `10m`, `1h30m`, `1.5s`, `500ms`; a bare number is
//! seconds) and an amount of US dollars (`0.50`, `$2`). Each must be above zero; a
//! value that is not one is clap's error, exit 2.

use std::time::Duration;

use crate::protocol::Cost;

/// `--timeout DURATION`.
pub fn duration(text: &str) -> Result<Duration, String> {
    let bad =
        || format!("`{text}` is not a duration: write e.g. 90s, 10m, 1h30m or 500ms (above zero)");
    let text_trimmed = text.trim();
    if let Ok(seconds) = text_trimmed.parse::<u64>() {
        return (seconds > 0)
            .then(|| Duration::from_secs(seconds))
            .ok_or_else(bad);
    }
    let mut total = 0.0_f64;
    let mut rest = text_trimmed;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(bad)?;
        let number: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += number * seconds;
        rest = &rest[unit_len..];
    }
    // Up to about 31 years: far beyond any run, and safe to add to an instant.
    if (0.001..1e9).contains(&total) {
        Ok(Duration::from_secs_f64(total))
    } else {
        Err(bad())
    }
}

/// `--max-cost USD`.
pub fn dollars(text: &str) -> Result<Cost, String> {
    let bad = || format!("`{text}` is not an amount of US dollars above zero (e.g. 0.50)");
    let number = text.trim().trim_start_matches('$');
    let value: f64 = number.parse().map_err(|_| bad())?;
    let micros = (value * 1_000_000.0).round();
    if (1.0..1e15).contains(&micros) {
        Ok(Cost::from_micros(micros as u64))
    } else {
        Err(bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_as_people_write_them() {
        let ok = |t: &str| duration(t).unwrap();
        assert_eq!(ok("90s"), Duration::from_secs(90));
        assert_eq!(ok("90"), Duration::from_secs(90));
        assert_eq!(ok("10m"), Duration::from_secs(600));
        assert_eq!(ok("1h30m"), Duration::from_secs(5400));
        assert_eq!(ok("1.5s"), Duration::from_millis(1500));
        assert_eq!(ok("500ms"), Duration::from_millis(500));
        for bad in [
            "", "0", "0s", "-5s", "10x", "s", "1.2.3s", "1e400s", "soon", "NaNs",
        ] {
            assert!(duration(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn amounts_are_dollars_above_zero() {
        assert_eq!(dollars("0.50").unwrap(), Cost::from_micros(500_000));
        assert_eq!(dollars("$2").unwrap(), Cost::from_micros(2_000_000));
        for bad in ["0", "-1", "abc", "NaN", "inf", "0.0000001", ""] {
            assert!(dollars(bad).is_err(), "{bad:?} must be refused");
        }
    }
}
