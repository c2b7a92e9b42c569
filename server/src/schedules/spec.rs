//! A schedule as checked: its times (a cron pattern in an IANA time zone, one instant, or
//! a fixed interval), its bounds and its policies, from what its person wrote
//! ([`ScheduleInput`]); and the times it gives.

use std::str::FromStr;

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use shared::schedules::{Misfire, Overlap, ScheduleInput};

use crate::domain::SessionId;

/// The longest a name may be, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// How late a missed time may fire when the schedule does not say, in seconds.
pub const DEFAULT_MISFIRE_WINDOW_SECONDS: u64 = 3_600;
/// The longest misfire window (a year).
const MAX_MISFIRE_WINDOW_SECONDS: u64 = 366 * 86_400;
/// The longest interval (a year).
const MAX_EVERY_SECONDS: u64 = 366 * 86_400;

/// A field of a schedule that is not right, and what is wrong with it (422).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}`: {message}")]
pub struct FieldError {
    /// The field's name as the API spells it (`cron`, `timezone`, `everySeconds`, …).
    pub field: &'static str,
    pub message: String,
}

fn refuse<T>(field: &'static str, message: impl Into<String>) -> Result<T, FieldError> {
    Err(FieldError {
        field,
        message: message.into(),
    })
}

/// What a schedule is checked against: the server's settings.
#[derive(Debug, Clone)]
pub struct Rules {
    /// `--min-schedule-interval-seconds`.
    pub min_interval_seconds: u64,
    /// The models a session may pick (empty: any; a fire names one the server lacks).
    pub models: Vec<String>,
}

/// When a schedule fires.
#[derive(Debug, Clone)]
pub enum When {
    /// Each time the pattern matches, read in the zone.
    Cron { cron: Box<Cron>, zone: Tz },
    /// Once.
    At(i64),
    /// `anchor`, `anchor + every`, … (ms).
    Every { every_ms: i64, anchor_ms: i64 },
}

/// A schedule, checked.
#[derive(Debug, Clone)]
pub struct Spec {
    /// What its person wrote, trimmed and with the defaults filled in (as it is kept).
    pub input: ScheduleInput,
    pub when: When,
    /// No fire before (ms).
    pub start_ms: Option<i64>,
    /// No fire after (ms).
    pub end_ms: Option<i64>,
    /// The one session every fire sends to.
    pub session: Option<SessionId>,
    pub enabled: bool,
    pub misfire: Misfire,
    pub misfire_window_ms: i64,
    pub overlap: Overlap,
}

/// An RFC 3339 instant in ms since the epoch.
fn instant(field: &'static str, text: &str) -> Result<i64, FieldError> {
    match DateTime::parse_from_rfc3339(text.trim()) {
        Ok(at) => Ok(at.timestamp_millis()),
        Err(error) => refuse(
            field,
            format!("`{text}` is not an RFC 3339 instant ({error}), e.g. 2026-12-01T09:00:00Z"),
        ),
    }
}

/// A cron pattern, as croner reads it: five fields, or six with seconds first.
pub fn parse_cron(text: &str) -> Result<Cron, FieldError> {
    let fields = text.split_whitespace().count();
    if !(5..=6).contains(&fields) {
        return refuse(
            "cron",
            format!("`{text}` has {fields} fields; a cron pattern has 5 (minute hour day-of-month month day-of-week) or 6 (seconds first)"),
        );
    }
    let parsed = croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Optional)
        .build()
        .parse(text.trim());
    parsed.or_else(|error| refuse("cron", format!("`{text}` is not a cron pattern: {error}")))
}

/// An IANA time zone (`Europe/Paris`, `UTC`).
pub fn parse_zone(text: &str) -> Result<Tz, FieldError> {
    Tz::from_str(text.trim()).or_else(|_| {
        refuse(
            "timezone",
            format!("`{text}` is not an IANA time zone (e.g. Europe/Paris, America/New_York, UTC)"),
        )
    })
}

/// The first time at or after `from_ms` that `cron` matches in `zone` (ms).
pub fn cron_at_or_after(cron: &Cron, zone: Tz, from_ms: i64) -> Option<i64> {
    let from = Utc.timestamp_millis_opt(from_ms).single()?;
    // Whole seconds: a pattern's times are on the second.
    let from = from.with_timezone(&zone);
    let next = cron.find_next_occurrence(&from, true).ok()?;
    let next_ms = next.timestamp_millis();
    if next_ms >= from_ms {
        Some(next_ms)
    } else {
        // `from` had milliseconds past a matching second: the match is before it.
        let later = Utc
            .timestamp_millis_opt(from_ms)
            .single()?
            .with_timezone(&zone);
        Some(
            cron.find_next_occurrence(&later, false)
                .ok()?
                .timestamp_millis(),
        )
    }
}

impl Spec {
    /// Checks what a person wrote; `created_ms` anchors an interval without `startAt`.
    pub fn check(input: ScheduleInput, rules: &Rules, created_ms: i64) -> Result<Spec, FieldError> {
        let mut input = input;
        input.name = shared::text::one_line(&input.name);
        if input.name.is_empty() {
            return refuse("name", "a schedule needs a name");
        }
        if input.name.chars().count() > MAX_NAME_CHARS {
            return refuse("name", format!("at most {MAX_NAME_CHARS} characters"));
        }
        if input.message.text.trim().is_empty() {
            return refuse("message", "`message.text` may not be empty");
        }
        let session = match input.session_id.as_deref() {
            Some(id) => Some(SessionId::parse(id).or_else(|e| refuse("sessionId", e.to_string()))?),
            None => None,
        };
        if session.is_none() && !input.message.attachments.is_empty() {
            return refuse(
                "message",
                "attachments need `sessionId`: a file is uploaded to one session, and each fire would start a new one",
            );
        }
        if let Some(model) = input.model.as_deref() {
            // An empty list checks nothing (the shell does not know the engine's models).
            if !rules.models.is_empty() && !rules.models.iter().any(|known| known == model) {
                return refuse(
                    "model",
                    format!(
                        "`{model}` is not one of the server's models ({})",
                        rules.models.join(", ")
                    ),
                );
            }
        }
        let start_ms = input
            .start_at
            .as_deref()
            .map(|t| instant("startAt", t))
            .transpose()?;
        let end_ms = input
            .end_at
            .as_deref()
            .map(|t| instant("endAt", t))
            .transpose()?;
        if let (Some(start), Some(end)) = (start_ms, end_ms) {
            if end < start {
                return refuse("endAt", "`endAt` is before `startAt`");
            }
        }
        let given = [
            input.cron.is_some(),
            input.at.is_some(),
            input.every_seconds.is_some(),
        ];
        let when = match given {
            [true, false, false] => {
                let cron = parse_cron(input.cron.as_deref().unwrap_or_default())?;
                let Some(zone) = input.timezone.as_deref() else {
                    return refuse(
                        "timezone",
                        "a cron pattern needs its IANA time zone (`timezone`, e.g. Europe/Paris)",
                    );
                };
                When::Cron {
                    cron: Box::new(cron),
                    zone: parse_zone(zone)?,
                }
            }
            [false, true, false] => {
                if input.timezone.is_some() {
                    return refuse(
                        "timezone",
                        "`timezone` goes with `cron` (an `at` carries its own offset)",
                    );
                }
                When::At(instant("at", input.at.as_deref().unwrap_or_default())?)
            }
            [false, false, true] => {
                if input.timezone.is_some() {
                    return refuse("timezone", "`timezone` goes with `cron`");
                }
                let every = input.every_seconds.unwrap_or_default();
                if every < rules.min_interval_seconds.max(1) {
                    return refuse(
                        "everySeconds",
                        format!(
                            "at least {} seconds (`--min-schedule-interval-seconds`)",
                            rules.min_interval_seconds.max(1)
                        ),
                    );
                }
                if every > MAX_EVERY_SECONDS {
                    return refuse(
                        "everySeconds",
                        format!("at most {MAX_EVERY_SECONDS} seconds (a year)"),
                    );
                }
                // From `startAt` (its first fire), else one interval after it was made.
                let every_ms = every as i64 * 1_000;
                When::Every {
                    every_ms,
                    anchor_ms: start_ms.unwrap_or(created_ms + every_ms),
                }
            }
            [false, false, false] => {
                return refuse(
                    "cron",
                    "give when it fires: `cron` with `timezone`, `at`, or `everySeconds`",
                )
            }
            _ => return refuse("cron", "give only one of `cron`, `at` and `everySeconds`"),
        };
        let window = input
            .misfire_window_seconds
            .unwrap_or(DEFAULT_MISFIRE_WINDOW_SECONDS);
        if window > MAX_MISFIRE_WINDOW_SECONDS {
            return refuse(
                "misfireWindowSeconds",
                format!("at most {MAX_MISFIRE_WINDOW_SECONDS} seconds (a year)"),
            );
        }
        let overlap = input.overlap.unwrap_or_default();
        if overlap == Overlap::Queue && session.is_none() {
            return refuse(
                "overlap",
                "`queue` needs `sessionId`: each fire without one starts its own session, with nothing to wait behind",
            );
        }
        let (enabled, misfire) = (
            input.enabled.unwrap_or(true),
            input.misfire.unwrap_or_default(),
        );
        input.enabled = Some(enabled);
        input.misfire = Some(misfire);
        input.misfire_window_seconds = Some(window);
        input.overlap = Some(overlap);
        Ok(Spec {
            input,
            when,
            start_ms,
            end_ms,
            session,
            enabled,
            misfire,
            misfire_window_ms: window as i64 * 1_000,
            overlap,
        })
    }

    /// The first of its times at or after `from_ms`, within its bounds.
    pub fn at_or_after(&self, from_ms: i64) -> Option<i64> {
        let from = from_ms.max(self.start_ms.unwrap_or(i64::MIN));
        let time = match &self.when {
            When::At(at) => (*at >= from).then_some(*at),
            When::Every {
                every_ms,
                anchor_ms,
            } => {
                let behind = (from - anchor_ms).max(0);
                let steps = behind / every_ms + i64::from(behind % every_ms != 0);
                Some(anchor_ms + steps * every_ms)
            }
            When::Cron { cron, zone } => cron_at_or_after(cron, *zone, from),
        }?;
        match self.end_ms {
            Some(end) if time > end => None,
            _ => Some(time),
        }
    }

    /// The first of its times after `time_ms`.
    pub fn after(&self, time_ms: i64) -> Option<i64> {
        self.at_or_after(time_ms.saturating_add(1))
    }

    /// The title of the session a fire at `time_ms` starts: the name and the time, in the
    /// schedule's time zone (a cron's), else UTC.
    pub fn title_at(&self, time_ms: i64) -> String {
        let Some(at) = Utc.timestamp_millis_opt(time_ms).single() else {
            return self.input.name.clone();
        };
        let when = match &self.when {
            When::Cron { zone, .. } => at
                .with_timezone(zone)
                .format("%Y-%m-%d %H:%M %Z")
                .to_string(),
            _ => at.format("%Y-%m-%d %H:%M UTC").to_string(),
        };
        format!("{} · {when}", self.input.name)
    }
}

pub use crate::domain::rfc3339;

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules {
            min_interval_seconds: 60,
            models: vec!["demo".into(), "other".into()],
        }
    }

    fn input(json: serde_json::Value) -> ScheduleInput {
        serde_json::from_value(json).unwrap()
    }

    fn ms(text: &str) -> i64 {
        instant("at", text).unwrap()
    }

    fn times(spec: &Spec, from: &str, count: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut next = spec.at_or_after(ms(from));
        while let Some(time) = next {
            out.push(rfc3339(time));
            if out.len() == count {
                break;
            }
            next = spec.after(time);
        }
        out
    }

    #[test]
    fn a_daily_cron_keeps_its_local_hour_across_both_daylight_saving_changes() {
        let spec = Spec::check(
            input(
                serde_json::json!({"name": "Standup", "message": {"text": "go"},
                                     "cron": "30 9 * * *", "timezone": "Europe/Paris"}),
            ),
            &rules(),
            0,
        )
        .unwrap();
        // Summer time ends on 2026-10-25: 09:30 is 07:30 UTC before, 08:30 after.
        assert_eq!(
            times(&spec, "2026-10-24T00:00:00Z", 3),
            [
                "2026-10-24T07:30:00.000Z",
                "2026-10-25T08:30:00.000Z",
                "2026-10-26T08:30:00.000Z"
            ]
        );
        // It begins on 2027-03-28.
        assert_eq!(
            times(&spec, "2027-03-27T00:00:00Z", 2),
            ["2027-03-27T08:30:00.000Z", "2027-03-28T07:30:00.000Z"]
        );
        assert_eq!(
            spec.title_at(ms("2027-03-28T07:30:00Z")),
            "Standup · 2027-03-28 09:30 CEST"
        );
    }

    #[test]
    fn a_time_the_spring_change_skips_fires_once_and_one_the_autumn_repeats_fires_once() {
        let spec = Spec::check(
            input(serde_json::json!({"name": "n", "message": {"text": "go"},
                                     "cron": "30 2 * * *", "timezone": "America/New_York"})),
            &rules(),
            0,
        )
        .unwrap();
        // 2027-03-14: 02:00 becomes 03:00, so 02:30 does not exist that day.
        let spring = times(&spec, "2027-03-13T00:00:00Z", 3);
        assert_eq!(spring.len(), 3);
        assert_eq!(
            spring,
            [
                "2027-03-13T07:30:00.000Z",
                "2027-03-14T07:00:00.000Z",
                "2027-03-15T06:30:00.000Z"
            ],
            "on the day it does not exist, it fires as the clocks jump: 03:00 EDT"
        );
        // 2026-11-01: 02:00 becomes 01:00; 02:30 happens once.
        let autumn = times(&spec, "2026-10-31T00:00:00Z", 3);
        assert_eq!(
            autumn,
            [
                "2026-10-31T06:30:00.000Z",
                "2026-11-01T07:30:00.000Z",
                "2026-11-02T07:30:00.000Z"
            ]
        );
    }

    #[test]
    fn intervals_count_from_their_start_and_stop_at_their_end() {
        let spec = Spec::check(
            input(serde_json::json!({"name": "n", "message": {"text": "go"}, "everySeconds": 90,
                                     "startAt": "2026-01-01T00:00:00Z", "endAt": "2026-01-01T00:04:00Z"})),
            &rules(),
            ms("2025-06-01T00:00:00Z"),
        )
        .unwrap();
        assert_eq!(
            times(&spec, "2025-12-01T00:00:00Z", 10),
            [
                "2026-01-01T00:00:00.000Z",
                "2026-01-01T00:01:30.000Z",
                "2026-01-01T00:03:00.000Z"
            ]
        );
        assert_eq!(
            times(&spec, "2026-01-01T00:00:00.001Z", 1),
            ["2026-01-01T00:01:30.000Z"]
        );
    }

    #[test]
    fn each_bad_field_is_named() {
        let bad =
            |json: serde_json::Value| Spec::check(input(json), &rules(), 0).unwrap_err().field;
        let base = |extra: serde_json::Value| {
            let mut value = serde_json::json!({"name": "n", "message": {"text": "go"}});
            value
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            value
        };
        assert_eq!(
            bad(base(
                serde_json::json!({"cron": "61 * * * *", "timezone": "UTC"})
            )),
            "cron"
        );
        assert_eq!(
            bad(base(
                serde_json::json!({"cron": "* * *", "timezone": "UTC"})
            )),
            "cron"
        );
        assert_eq!(
            bad(base(serde_json::json!({"cron": "0 9 * * *"}))),
            "timezone"
        );
        assert_eq!(
            bad(base(
                serde_json::json!({"cron": "0 9 * * *", "timezone": "Mars/Olympus"})
            )),
            "timezone"
        );
        assert_eq!(bad(base(serde_json::json!({"at": "tomorrow"}))), "at");
        assert_eq!(
            bad(base(serde_json::json!({"everySeconds": 59}))),
            "everySeconds"
        );
        assert_eq!(
            bad(base(
                serde_json::json!({"everySeconds": 60, "at": "2026-01-01T00:00:00Z"})
            )),
            "cron"
        );
        assert_eq!(bad(base(serde_json::json!({}))), "cron");
        assert_eq!(
            bad(base(
                serde_json::json!({"everySeconds": 60, "model": "gpt-9"})
            )),
            "model"
        );
        assert_eq!(
            bad(base(
                serde_json::json!({"everySeconds": 60, "sessionId": "x"})
            )),
            "sessionId"
        );
        assert_eq!(
            bad(base(
                serde_json::json!({"everySeconds": 60, "overlap": "queue"})
            )),
            "overlap"
        );
        assert_eq!(
            bad(base(
                serde_json::json!({"everySeconds": 60, "startAt": "2026-02-01T00:00:00Z",
                                        "endAt": "2026-01-01T00:00:00Z"})
            )),
            "endAt"
        );
        let mut nameless = base(serde_json::json!({"everySeconds": 60}));
        nameless["name"] = " ".into();
        assert_eq!(bad(nameless), "name");
    }
}
