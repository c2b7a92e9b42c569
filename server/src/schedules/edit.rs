//! Making and changing schedules, for the routes and `tandem schedules`: a new row from
//! what its person wrote, a change from a `PATCH` (a JSON merge patch over what was
//! written), a cron pattern's next times; each checked, with the field that is wrong.

use serde_json::Value;
use shared::schedules::ScheduleInput;

use super::spec::{self, FieldError, Rules, Spec};
use crate::domain::UserId;
use crate::store::{ScheduleChange, ScheduleRow};

/// The most times a preview gives.
pub const MAX_PREVIEW: u32 = 100;

/// The fields that say when a schedule fires: a change of any of them starts its times
/// again from now.
const TIME_FIELDS: [&str; 6] = ["cron", "timezone", "at", "everySeconds", "startAt", "endAt"];

/// A stored schedule, read back (its model may have left the configuration since: the
/// fire then says so).
pub fn stored_spec(row: &ScheduleRow) -> Result<Spec, FieldError> {
    let input: ScheduleInput = serde_json::from_str(&row.spec).map_err(|e| FieldError {
        field: "spec",
        message: e.to_string(),
    })?;
    let rules = Rules {
        min_interval_seconds: 1,
        models: Vec::new(),
    };
    Spec::check(input, &rules, row.created_at)
}

/// A new schedule of `owner`, made at `now`.
pub fn create(
    input: ScheduleInput,
    owner: UserId,
    rules: &Rules,
    now: i64,
) -> Result<ScheduleRow, FieldError> {
    let spec = Spec::check(input, rules, now)?;
    let next_fire_at = first_time(&spec, now)?;
    Ok(ScheduleRow {
        id: uuid::Uuid::now_v7().to_string(),
        owner,
        name: spec.input.name.clone(),
        spec: serde_json::to_string(&spec.input).expect("a schedule serialises"),
        enabled: spec.enabled,
        next_fire_at: Some(next_fire_at),
        version: 1,
        created_at: now,
        updated_at: now,
    })
}

/// The first time of a schedule made or retimed at `now`: one must be left.
fn first_time(spec: &Spec, now: i64) -> Result<i64, FieldError> {
    spec.at_or_after(now).ok_or_else(|| FieldError {
        field: match (&spec.when, spec.end_ms) {
            (spec::When::At(_), _) => "at",
            (_, Some(_)) => "endAt",
            _ => "cron",
        },
        message: "no time of this schedule is left: it would never fire".into(),
    })
}

/// `row` changed by `patch`, a JSON merge patch (RFC 7396) over what its person wrote: a
/// field given replaces its value, `null` removes it. Naming one way of saying when
/// (`cron`, `at`, `everySeconds`) drops the others. A change of when it fires starts its
/// times from now; pausing and resuming keep them (a resumed schedule's missed times are
/// handled by its `misfire`).
pub fn patch(
    row: &ScheduleRow,
    patch: &Value,
    rules: &Rules,
    now: i64,
) -> Result<ScheduleChange, FieldError> {
    let Some(changes) = patch.as_object() else {
        return Err(FieldError {
            field: "body",
            message: "a JSON object of the fields to change".into(),
        });
    };
    let mut merged: Value = serde_json::from_str(&row.spec).map_err(|e| FieldError {
        field: "spec",
        message: e.to_string(),
    })?;
    if let Some(written) = merged.as_object_mut() {
        if changes.contains_key("at") || changes.contains_key("everySeconds") {
            for field in ["cron", "timezone", "at", "everySeconds"] {
                written.remove(field);
            }
        } else if changes.contains_key("cron") {
            written.remove("at");
            written.remove("everySeconds");
        }
    }
    json_patch::merge(&mut merged, patch);
    let input: ScheduleInput = serde_json::from_value(merged).map_err(|e| FieldError {
        field: "body",
        message: e.to_string(),
    })?;
    let spec = Spec::check(input, rules, row.created_at)?;
    let retimed = TIME_FIELDS.iter().any(|field| changes.contains_key(*field));
    let next_fire_at = match retimed {
        true => Some(first_time(&spec, now)?),
        false => row.next_fire_at,
    };
    Ok(ScheduleChange {
        name: spec.input.name.clone(),
        spec: serde_json::to_string(&spec.input).expect("a schedule serialises"),
        enabled: spec.enabled,
        next_fire_at,
    })
}

/// The next `count` times of `cron` in `timezone` from `from` (RFC 3339; `now` if
/// absent), as RFC 3339 UTC.
pub fn preview(
    cron: &str,
    timezone: &str,
    from: Option<&str>,
    count: Option<u32>,
    now: i64,
) -> Result<Vec<String>, FieldError> {
    let pattern = spec::parse_cron(cron)?;
    let zone = spec::parse_zone(timezone)?;
    let from = match from {
        Some(text) => chrono::DateTime::parse_from_rfc3339(text.trim())
            .map(|at| at.timestamp_millis())
            .map_err(|e| FieldError {
                field: "from",
                message: format!("`{text}` is not an RFC 3339 instant ({e})"),
            })?,
        None => now,
    };
    let count = count.unwrap_or(5);
    if !(1..=MAX_PREVIEW).contains(&count) {
        return Err(FieldError {
            field: "count",
            message: format!("from 1 to {MAX_PREVIEW}"),
        });
    }
    let mut times = Vec::new();
    let mut next = spec::cron_at_or_after(&pattern, zone, from);
    while let Some(time) = next {
        times.push(spec::rfc3339(time));
        if times.len() == count as usize {
            break;
        }
        next = spec::cron_at_or_after(&pattern, zone, time + 1);
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules {
            min_interval_seconds: 60,
            models: vec!["demo".into()],
        }
    }

    #[test]
    fn a_patch_changes_what_it_names_and_a_new_way_of_saying_when_replaces_the_old() {
        let input = serde_json::from_value(serde_json::json!({
            "name": "Report", "message": {"text": "go"}, "cron": "0 9 * * *",
            "timezone": "Europe/Paris", "endAt": "2030-01-01T00:00:00Z"}))
        .unwrap();
        let row = create(input, UserId::LOCAL, &rules(), 0).unwrap();
        let paused = patch(
            &row,
            &serde_json::json!({"enabled": false}),
            &rules(),
            1_000,
        )
        .unwrap();
        assert!(!paused.enabled);
        assert_eq!(
            paused.next_fire_at, row.next_fire_at,
            "pausing keeps its times"
        );
        let every = patch(
            &row,
            &serde_json::json!({"everySeconds": 3600, "endAt": null}),
            &rules(),
            1_000,
        )
        .unwrap();
        let written: Value = serde_json::from_str(&every.spec).unwrap();
        assert_eq!(written.get("cron"), None);
        assert_eq!(written.get("timezone"), None);
        assert_eq!(written.get("endAt"), None);
        assert_eq!(
            every.next_fire_at,
            Some(3_600_000),
            "counted from when it was made"
        );
        let bad = patch(
            &row,
            &serde_json::json!({"timezone": "Nowhere/Else"}),
            &rules(),
            0,
        );
        assert_eq!(bad.unwrap_err().field, "timezone");
    }

    #[test]
    fn a_schedule_with_no_time_left_is_refused() {
        let input = serde_json::from_value(serde_json::json!({
            "name": "Once", "message": {"text": "go"}, "at": "2020-01-01T00:00:00Z"}))
        .unwrap();
        let refused = create(input, UserId::LOCAL, &rules(), 1_700_000_000_000).unwrap_err();
        assert_eq!(refused.field, "at");
    }

    #[test]
    fn a_preview_gives_the_asked_number_of_times_across_a_change_of_clocks() {
        let times = preview(
            "0 9 * * *",
            "America/New_York",
            Some("2026-10-31T00:00:00Z"),
            Some(3),
            0,
        )
        .unwrap();
        assert_eq!(
            times,
            [
                "2026-10-31T13:00:00.000Z",
                "2026-11-01T14:00:00.000Z",
                "2026-11-02T14:00:00.000Z"
            ]
        );
        assert_eq!(
            preview("0 9 * * *", "UTC", None, Some(0), 0)
                .unwrap_err()
                .field,
            "count"
        );
        assert_eq!(
            preview("0 9 * *", "UTC", None, None, 0).unwrap_err().field,
            "cron"
        );
    }
}
