//! Wall-clock helpers: AG-UI timestamps are integer milliseconds, expiries RFC 3339.

use chrono::{SecondsFormat, Utc};

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// The RFC 3339 instant `seconds` from now (UTC, second precision).
pub fn rfc3339_after(seconds: u64) -> String {
    let seconds = i64::try_from(seconds).unwrap_or(i64::MAX / 2_000);
    (Utc::now() + chrono::TimeDelta::seconds(seconds.min(10 * 365 * 86_400)))
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}
