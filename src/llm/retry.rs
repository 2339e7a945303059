//! When and how long to wait before trying a failed request again: exponential backoff
//! with jitter, the server's `Retry-After` (seconds or an HTTP date) within a cap, and no
//! retry for failures another attempt cannot fix (auth, quota, bad request...). A
//! `Retry-After` of zero or a date already past asks for nothing in particular and gets
//! the normal backoff; one longer than the cap is not waited for, and the verdict says
//! how long the server asked. It must not know how requests are sent; the client asks it
//! for a [`Verdict`].

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::RetryPolicy;
use super::error::{LlmError, RetryBudget};

/// A tiny xorshift generator for jitter (not for anything secret).
#[derive(Debug, Clone)]
pub struct Jitter(u64);

impl Jitter {
    /// Seeded from the clock.
    pub fn from_clock() -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Jitter::seeded(nanos ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// Seeded explicitly (tests, benchmarks).
    pub fn seeded(seed: u64) -> Self {
        Jitter(seed.max(1))
    }

    /// The next pseudo-random number.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A fraction in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The computed wait before retry number `retry` (1 for the first retry): the base delay
/// doubled each time, capped, then jittered into its upper half.
pub fn backoff_delay(policy: &RetryPolicy, retry: u32, jitter: &mut Jitter) -> Duration {
    let factor = 2u32.saturating_pow(retry.saturating_sub(1));
    let full = policy
        .base_delay
        .saturating_mul(factor)
        .min(policy.max_delay);
    full.mul_f64(0.5 + 0.5 * jitter.unit())
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Wait this long, then try again.
    Retry {
        /// The wait: the server's `Retry-After`, or the backoff.
        delay: Duration,
    },
    /// Give up and report the error.
    Stop {
        /// Why.
        reason: StopReason,
    },
}

/// Why no further attempt is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// Another attempt cannot fix this failure (auth, quota, bad request...).
    NotRetryable,
    /// The retries of the policy are used up.
    OutOfRetries,
    /// The server asked for a longer wait than the policy accepts.
    WaitTooLong {
        /// The server's `Retry-After`.
        asked: Duration,
        /// [`RetryPolicy::max_retry_after`].
        cap: Duration,
    },
}

/// What to do before retry number `retry` (1 for the first retry) after `error`.
pub fn verdict(policy: &RetryPolicy, error: &LlmError, retry: u32, jitter: &mut Jitter) -> Verdict {
    if !error.is_retryable() {
        return Verdict::Stop {
            reason: StopReason::NotRetryable,
        };
    }
    match error.retry_after() {
        Some(asked) if asked > policy.max_retry_after => Verdict::Stop {
            reason: StopReason::WaitTooLong {
                asked,
                cap: policy.max_retry_after,
            },
        },
        _ if retry > policy.max_retries => Verdict::Stop {
            reason: StopReason::OutOfRetries,
        },
        _ if retry > 1 && error.retry_budget() == RetryBudget::Once => Verdict::Stop {
            reason: StopReason::OutOfRetries,
        },
        Some(delay) => Verdict::Retry { delay },
        None => Verdict::Retry {
            delay: backoff_delay(policy, retry, jitter),
        },
    }
}

/// Reads a `Retry-After` value: whole (or fractional) seconds, or an HTTP date
/// (`Sun, 06 Nov 1994 08:49:37 GMT`) measured from `now`. `None` when it cannot be read,
/// and when it asks for no wait at all (`0`, or a date now or in the past): the caller
/// then backs off as if there were no `Retry-After`, instead of hammering the server.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let wait = if let Ok(secs) = value.parse::<u64>() {
        Duration::from_secs(secs)
    } else if let Ok(secs) = value.parse::<f64>() {
        Duration::try_from_secs_f64(secs).ok()?
    } else {
        parse_http_date(value)?.duration_since(now).ok()?
    };
    (!wait.is_zero()).then_some(wait)
}

/// IMF-fixdate, the only HTTP-date form servers still send.
fn parse_http_date(value: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_weekday, day, month, year, time, zone] = parts.as_slice() else {
        return None;
    };
    if !zone.eq_ignore_ascii_case("GMT") && *zone != "UTC" {
        return None;
    }
    let day: u32 = day.parse().ok()?;
    let year: i64 = year.parse().ok()?;
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))? as u32 + 1;
    let mut hms = time.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if hms.next().is_some() || h > 23 || m > 59 || s > 60 || !(1..=31).contains(&day) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + s;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    // Count years from March so the leap day is the last day of the "year".
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let m = i64::from(month);
    let day_of_year = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(250),
            max_retry_after: Duration::from_secs(5),
        }
    }

    #[test]
    fn backoff_doubles_caps_and_jitters() {
        let mut j = Jitter::seeded(42);
        for _ in 0..100 {
            let d1 = backoff_delay(&policy(), 1, &mut j);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
            let d2 = backoff_delay(&policy(), 2, &mut j);
            assert!(d2 >= Duration::from_millis(100) && d2 <= Duration::from_millis(200));
            let d9 = backoff_delay(&policy(), 9, &mut j);
            assert!(d9 <= Duration::from_millis(250));
            assert!(backoff_delay(&policy(), u32::MAX, &mut j) <= Duration::from_millis(250));
        }
    }

    fn site() -> crate::llm::error::Site {
        crate::llm::error::Site {
            provider: "p".into(),
            endpoint: "http://x/v1/chat/completions".into(),
            base_url: "http://x/v1".into(),
            key_source: "OPENAI_API_KEY".into(),
            key_sent: false,
            secrets: crate::redact::Redactor::new(),
        }
    }

    #[test]
    fn verdicts_for_errors() {
        let mut j = Jitter::seeded(1);
        let p = policy();
        let http = |status, ra: Option<u64>| {
            LlmError::http(&site(), "m", status, "", ra.map(Duration::from_secs))
        };
        assert!(matches!(
            verdict(&p, &http(500, None), 1, &mut j),
            Verdict::Retry { .. }
        ));
        assert_eq!(
            verdict(&p, &http(500, None), 4, &mut j),
            Verdict::Stop {
                reason: StopReason::OutOfRetries
            }
        );
        assert_eq!(
            verdict(&p, &http(401, None), 1, &mut j),
            Verdict::Stop {
                reason: StopReason::NotRetryable
            }
        );
        assert_eq!(
            verdict(&p, &http(429, Some(2)), 1, &mut j),
            Verdict::Retry {
                delay: Duration::from_secs(2)
            }
        );
        let too_long = Verdict::Stop {
            reason: StopReason::WaitTooLong {
                asked: Duration::from_secs(86_400),
                cap: Duration::from_secs(5),
            },
        };
        assert_eq!(verdict(&p, &http(429, Some(86_400)), 1, &mut j), too_long);
        // The longer wait is the news, even when the retries are used up too.
        assert_eq!(verdict(&p, &http(429, Some(86_400)), 4, &mut j), too_long);
    }

    #[test]
    fn a_validation_error_in_a_5xx_is_retried_once() {
        let mut j = Jitter::seeded(1);
        let e = LlmError::http(
            &site(),
            "m",
            500,
            "1 validation error: Field required",
            None,
        );
        assert!(matches!(
            verdict(&policy(), &e, 1, &mut j),
            Verdict::Retry { .. }
        ));
        assert_eq!(
            verdict(&policy(), &e, 2, &mut j),
            Verdict::Stop {
                reason: StopReason::OutOfRetries
            }
        );
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // 1994-11-06 08:49:30
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("86400", now),
            Some(Duration::from_secs(86_400))
        );
        assert_eq!(
            parse_retry_after(" 1.5 ", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn a_past_date_or_zero_asks_for_no_particular_wait() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // 1994-11-06 08:49:30
        for value in [
            "Sun, 06 Nov 1994 08:00:00 GMT",
            "Sun, 06 Nov 1994 08:49:30 GMT",
            "0",
            "0.0",
        ] {
            assert_eq!(parse_retry_after(value, now), None, "{value}");
        }
    }

    #[test]
    fn without_a_wait_the_backoff_grows_with_jitter() {
        let mut j = Jitter::seeded(7);
        let p = policy();
        let error = LlmError::http(&site(), "m", 429, "", None);
        let delays: Vec<Duration> = (1..=3)
            .map(|retry| match verdict(&p, &error, retry, &mut j) {
                Verdict::Retry { delay } => delay,
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(delays[0] >= Duration::from_millis(50), "{delays:?}");
        assert!(delays[1] >= Duration::from_millis(100), "{delays:?}");
        assert!(delays[2] >= Duration::from_millis(125), "{delays:?}");
    }

    #[test]
    fn civil_days_match_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2024, 2, 29), 19_782);
    }
}
