//! Wall-clock helpers: AG-UI timestamps are integer milliseconds, expiries RFC 3339.

use chrono::{SecondsFormat, Utc};

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// `ms` since the epoch as RFC 3339 UTC, to the millisecond.
pub fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The RFC 3339 instant `seconds` from now (UTC, millisecond precision, so a deadline
/// is never rounded earlier than asked).
pub fn rfc3339_after(seconds: u64) -> String {
    let seconds = i64::try_from(seconds).unwrap_or(i64::MAX / 2_000);
    (Utc::now() + chrono::TimeDelta::seconds(seconds.min(10 * 365 * 86_400)))
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// An interrupt's `expiresAt` in ms since the epoch, if it has a readable one.
pub fn deadline_ms(interrupt: &shared::Interrupt) -> Option<i64> {
    let at = interrupt.expires_at.as_deref()?;
    let parsed = chrono::DateTime::parse_from_rfc3339(at).ok()?;
    Some(parsed.timestamp_millis())
}
