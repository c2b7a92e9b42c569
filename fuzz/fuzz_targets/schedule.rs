//! A schedule as a person writes it (`POST /api/schedules`) or a preview's pattern and
//! time zone: checking never panics, and a schedule that checks gives times in order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::schedules::ScheduleInput;
use tandem::schedules::spec::{Rules, Spec};

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    if which % 2 == 0 {
        let Ok(input) = tandem::routes::parse_json::<ScheduleInput>(rest) else {
            return;
        };
        let rules = Rules {
            min_interval_seconds: 60,
            models: vec!["demo".into()],
        };
        let Ok(spec) = Spec::check(input, &rules, 1_764_000_000_000) else {
            return;
        };
        let mut next = spec.at_or_after(1_764_000_000_000);
        for _ in 0..5 {
            let Some(time) = next else { break };
            next = spec.after(time);
            assert!(next.is_none_or(|later| later > time), "times go forward");
        }
    } else {
        let text = String::from_utf8_lossy(rest);
        let (cron, zone) = text.split_once('\n').unwrap_or((&text, "UTC"));
        let _ = tandem::schedules::preview(cron, zone, None, Some(5), 1_764_000_000_000);
    }
});
