//! An interrupt's deadline as a pending card counts it down.
//!
//! It owns the arithmetic of the countdown — how much time is left, how it reads
//! (`Answer within 4:59`, `Time is up…`) and when it should look urgent — on plain
//! millisecond numbers. It must not read the clock, parse dates or touch the DOM: the
//! component does those and passes milliseconds in, so all of this is tested on the host.

use std::time::Duration;

/// How often a card's countdown re-reads the clock. Shorter than a second so the shown
/// second never lags the real one by much.
pub const TICK: Duration = Duration::from_millis(250);

/// With fewer whole seconds than this left, the countdown turns amber.
pub const SOON_SECS: u64 = 60;

/// What the countdown says once the deadline has passed.
pub const TIME_UP: &str = "Time is up…";

/// The time left until `expires_at_ms`, or `None` once it has passed. Both arguments are
/// milliseconds since the Unix epoch; a `NaN` in either counts as passed.
pub fn remaining(expires_at_ms: f64, now_ms: f64) -> Option<Duration> {
    let gap = expires_at_ms - now_ms;
    // `as` saturates, so a far-off deadline cannot overflow.
    (gap > 0.0).then(|| Duration::from_millis(gap.ceil() as u64))
}

/// The whole seconds a countdown shows: rounded up, so it reads `0:01` until the very end
/// and never `0:00` while an answer is still taken.
pub fn shown_secs(left: Duration) -> u64 {
    u64::try_from(left.as_millis().div_ceil(1000)).unwrap_or(u64::MAX)
}

/// The time left as a person reads it: `m:ss` (`4:59`, `0:07`), or `h:mm:ss` from an
/// hour on (`1:00:00`).
pub fn format_remaining(left: Duration) -> String {
    let secs = shown_secs(left);
    let (hours, minutes, seconds) = (secs / 3600, secs / 60 % 60, secs % 60);
    if hours > 0 {
        format!("{hours}:{minutes:02}:{seconds:02}")
    } else {
        format!("{minutes}:{seconds:02}")
    }
}

/// The countdown's text: `Answer within 4:59`, or [`TIME_UP`] once nothing is left.
pub fn countdown_text(left: Option<Duration>) -> String {
    match left {
        Some(left) => format!("Answer within {}", format_remaining(left)),
        None => TIME_UP.to_string(),
    }
}

/// Whether the countdown should look urgent: under a minute left, or none.
pub fn is_soon(left: Option<Duration>) -> bool {
    left.is_none_or(|left| shown_secs(left) < SOON_SECS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: f64 = 1_795_000_000_000.0;

    #[test]
    fn remaining_is_the_gap_until_the_deadline() {
        assert_eq!(
            remaining(NOW + 299_500.0, NOW),
            Some(Duration::from_millis(299_500))
        );
        assert_eq!(remaining(NOW + 0.4, NOW), Some(Duration::from_millis(1)));
    }

    #[test]
    fn remaining_is_none_at_and_after_the_deadline() {
        assert_eq!(remaining(NOW, NOW), None);
        assert_eq!(remaining(NOW - 1.0, NOW), None);
        assert_eq!(remaining(f64::NAN, NOW), None);
        assert_eq!(remaining(NOW, f64::NAN), None);
    }

    #[test]
    fn a_far_deadline_saturates_instead_of_overflowing() {
        assert!(remaining(f64::MAX, 0.0).is_some());
        assert!(remaining(f64::INFINITY, 0.0).is_some());
    }

    #[test]
    fn shown_seconds_round_up() {
        assert_eq!(shown_secs(Duration::from_millis(1)), 1);
        assert_eq!(shown_secs(Duration::from_millis(1_000)), 1);
        assert_eq!(shown_secs(Duration::from_millis(1_001)), 2);
        assert_eq!(shown_secs(Duration::ZERO), 0);
    }

    #[test]
    fn format_is_minutes_and_seconds_under_an_hour() {
        let secs = |s| format_remaining(Duration::from_secs(s));
        assert_eq!(secs(299), "4:59");
        assert_eq!(secs(300), "5:00");
        assert_eq!(secs(7), "0:07");
        assert_eq!(secs(59 * 60 + 59), "59:59");
        assert_eq!(format_remaining(Duration::from_millis(4_200)), "0:05");
    }

    #[test]
    fn format_shows_hours_from_an_hour_on() {
        let secs = |s| format_remaining(Duration::from_secs(s));
        assert_eq!(secs(3600), "1:00:00");
        assert_eq!(secs(3600 + 61), "1:01:01");
        assert_eq!(secs(26 * 3600 + 5), "26:00:05");
    }

    #[test]
    fn countdown_text_reads_as_a_sentence() {
        assert_eq!(
            countdown_text(Some(Duration::from_secs(299))),
            "Answer within 4:59"
        );
        assert_eq!(countdown_text(None), "Time is up…");
    }

    #[test]
    fn soon_means_under_a_minute_as_shown() {
        assert!(!is_soon(Some(Duration::from_secs(60))));
        // 59.5 s shows as 1:00, so it is not amber yet.
        assert!(!is_soon(Some(Duration::from_millis(59_500))));
        assert!(is_soon(Some(Duration::from_secs(59))));
        assert!(is_soon(None));
    }
}
