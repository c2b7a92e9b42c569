//! Schedules and fires as the API shows them.

use shared::schedules::{Fire, FireStatus, Schedule, ScheduleInput};

use super::spec::rfc3339;
use crate::store::{FireRow, ScheduleRow};

/// A fire as the API shows it.
pub fn fire_view(row: FireRow) -> Fire {
    Fire {
        scheduled_for: rfc3339(row.scheduled_for),
        fired_at: row.fired_at.map(rfc3339),
        status: match row.status.as_str() {
            "fired" => FireStatus::Fired,
            "missed" => FireStatus::Missed,
            _ => FireStatus::Skipped,
        },
        session_id: row.session_id,
        run_id: row.run_id,
        outcome: row.outcome,
        reason: row.reason,
        manual: row.manual,
    }
}

/// A schedule as the API shows it, with its newest fire.
pub fn schedule_view(row: ScheduleRow, last_fire: Option<FireRow>) -> Schedule {
    let written: ScheduleInput = serde_json::from_str(&row.spec).unwrap_or_default();
    Schedule {
        id: row.id,
        name: row.name,
        message: written.message,
        session_id: written.session_id,
        model: written.model,
        cron: written.cron,
        timezone: written.timezone,
        at: written.at,
        every_seconds: written.every_seconds,
        start_at: written.start_at,
        end_at: written.end_at,
        enabled: row.enabled,
        misfire: written.misfire.unwrap_or_default(),
        misfire_window_seconds: written
            .misfire_window_seconds
            .unwrap_or(super::spec::DEFAULT_MISFIRE_WINDOW_SECONDS),
        overlap: written.overlap.unwrap_or_default(),
        next_fire_at: row.next_fire_at.map(rfc3339),
        last_fire: last_fire.map(fire_view),
        created_at: rfc3339(row.created_at),
        updated_at: rfc3339(row.updated_at),
    }
}
