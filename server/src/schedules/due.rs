//! Which of a schedule's due times fire and which are missed, by its `misfire` policy.
//! Pure: the times, the clock's now and the policy in, the decisions out.

use shared::schedules::Misfire;

use super::spec::Spec;

/// A time reached within this long of it is on time, whatever the policy (the scheduler
/// wakes at the time itself; this covers a busy or briefly paused process).
pub const ON_TIME_MS: i64 = 60_000;
/// The most due times one pass handles (a schedule paused for a month with a short
/// interval has tens of thousands): the rest are handled by the next passes, in order.
pub const MAX_PER_PASS: usize = 1_000;

/// What becomes of one due time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handling {
    /// Its message is sent.
    Fire,
    /// Recorded as missed, for this reason.
    Miss(String),
}

/// A pass over a schedule's due times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    /// Each due time (ms) in order, and what becomes of it.
    pub times: Vec<(i64, Handling)>,
    /// The schedule's next time not handled by this pass (`None`: none is left).
    pub next: Option<i64>,
}

/// The due times of `spec` from `cursor` (its next time not yet handled) to `now`, and
/// what becomes of each.
pub fn due(spec: &Spec, cursor: i64, now: i64) -> Due {
    let mut times = Vec::new();
    let mut next = spec.at_or_after(cursor);
    while let Some(time) = next {
        if time > now || times.len() == MAX_PER_PASS {
            break;
        }
        times.push(time);
        next = spec.after(time);
    }
    // When the pass stopped at its cap, later times are due too: the latest is not here.
    let latest_here = next.is_none_or(|time| time > now);
    let window = spec.misfire_window_ms.max(ON_TIME_MS);
    let last = times.len().saturating_sub(1);
    let times = times
        .into_iter()
        .enumerate()
        .map(|(index, time)| {
            let late = now - time;
            let handling = match spec.misfire {
                _ if late <= ON_TIME_MS => Handling::Fire,
                Misfire::Skip => Handling::Miss(format!(
                    "{} late (the server was down or the schedule paused); misfire `skip` fires only on time",
                    duration(late)
                )),
                _ if late > window => Handling::Miss(format!(
                    "{} late (the server was down or the schedule paused): past the misfire window of {}",
                    duration(late),
                    duration(spec.misfire_window_ms)
                )),
                Misfire::Once if index == last && latest_here => Handling::Fire,
                Misfire::Once => Handling::Miss(
                    "a later time fired in its place (misfire `once`)".to_string(),
                ),
                Misfire::All => Handling::Fire,
            };
            (time, handling)
        })
        .collect();
    Due { times, next }
}

/// A duration as people read it: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`.
pub fn duration(ms: i64) -> String {
    let seconds = ms.max(0) / 1_000;
    let (days, hours, minutes) = (seconds / 86_400, seconds / 3_600 % 24, seconds / 60 % 60);
    match (days, hours, minutes) {
        (0, 0, 0) => format!("{seconds} s"),
        (0, 0, m) => format!("{m} min"),
        (0, h, 0) => format!("{h} h"),
        (0, h, m) => format!("{h} h {m} min"),
        (d, 0, _) => format!("{d} d"),
        (d, h, _) => format!("{d} d {h} h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedules::spec::Rules;

    const MIN: i64 = 60_000;

    /// Every ten minutes from 0, with this policy and a window of half an hour.
    fn every_ten_minutes(misfire: &str) -> Spec {
        let input = serde_json::from_value(serde_json::json!({
            "name": "n", "message": {"text": "go"}, "everySeconds": 600,
            "misfire": misfire, "misfireWindowSeconds": 1800,
        }))
        .unwrap();
        let rules = Rules {
            min_interval_seconds: 60,
            models: vec![],
        };
        Spec::check(input, &rules, 0).unwrap()
    }

    fn fired(due: &Due) -> Vec<i64> {
        let fired = due.times.iter().filter(|(_, h)| *h == Handling::Fire);
        fired.map(|(time, _)| time / MIN).collect()
    }

    #[test]
    fn on_time_fires_whatever_the_policy() {
        for policy in ["skip", "once", "all"] {
            let due = due(&every_ten_minutes(policy), 10 * MIN, 10 * MIN + 500);
            assert_eq!(fired(&due), [10], "{policy}");
            assert_eq!(due.next, Some(20 * MIN));
        }
    }

    #[test]
    fn after_downtime_each_policy_does_what_it_says_and_every_time_is_recorded() {
        // Down from just after 0 until 65 minutes: 10 … 60 were due.
        let now = 65 * MIN;
        let skip = due(&every_ten_minutes("skip"), 10 * MIN, now);
        assert_eq!(skip.times.len(), 6, "every missed time has its record");
        assert!(fired(&skip).is_empty(), "five minutes late is not on time");
        let once = due(&every_ten_minutes("once"), 10 * MIN, now);
        assert_eq!(fired(&once), [60]);
        let all = due(&every_ten_minutes("all"), 10 * MIN, now);
        assert_eq!(
            fired(&all),
            [40, 50, 60],
            "within the 30-minute window, in order"
        );
        assert!(
            matches!(&all.times[0].1, Handling::Miss(why) if why.contains("past the misfire window"))
        );
        assert_eq!(all.next, Some(70 * MIN));
    }

    #[test]
    fn a_long_pause_is_handled_in_passes_and_fires_only_the_latest() {
        let spec = every_ten_minutes("once");
        let now = 20_000 * MIN;
        let first = due(&spec, 10 * MIN, now);
        assert_eq!(first.times.len(), MAX_PER_PASS);
        assert!(fired(&first).is_empty(), "the latest is in a later pass");
        let mut cursor = first.next.unwrap();
        let mut fires = Vec::new();
        while cursor <= now {
            let pass = due(&spec, cursor, now);
            fires.extend(fired(&pass));
            cursor = pass.next.unwrap();
        }
        assert_eq!(fires, [20_000]);
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(45_000), "45 s");
        assert_eq!(duration(12 * MIN), "12 min");
        assert_eq!(duration(185 * MIN), "3 h 5 min");
        assert_eq!(duration(52 * 60 * MIN), "2 d 4 h");
    }
}
