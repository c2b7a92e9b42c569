//! A person's schedules, from HTTP: make, list, read, change, delete, run now, their
//! fires, and a cron pattern's next times. A schedule is its owner's alone (another's
//! answers 404). The checks and the firing are `schedules`'.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::Value;
use shared::api::ErrorBody;
use shared::schedules::{Fire, FireList, Schedule, ScheduleInput, ScheduleList, SchedulePreview};

use super::JsonBody;
use crate::access::owned_session;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::schedules::{fire_view, schedule_view};
use crate::state::AppState;
use crate::store::{ScheduleRow, Store};

/// The most schedules one person may have.
pub const MAX_SCHEDULES_PER_USER: usize = 200;
/// The most fires one page lists.
const MAX_FIRES: i64 = 1_000;

/// The caller's schedule named in the path, else 404 (another's too).
async fn own_schedule<S: Store>(
    state: &AppState<S>,
    caller: &Caller,
    id: &str,
) -> Result<ScheduleRow, ApiError> {
    let row = state.store.schedule(caller.user, id).await?;
    row.ok_or_else(|| ApiError::NotFound(format!("no schedule {id}")))
}

/// A schedule with its newest fire, as shown.
async fn shown<S: Store>(state: &AppState<S>, row: ScheduleRow) -> Result<Schedule, ApiError> {
    let last = state.store.fires(&row.id, 1).await?.into_iter().next();
    Ok(schedule_view(row, last))
}

/// Checks what only the server knows of a schedule: its session is the caller's, its
/// files are that session's.
async fn check_session<S: Store>(
    state: &AppState<S>,
    caller: &Caller,
    row: &ScheduleRow,
) -> Result<(), ApiError> {
    let written: ScheduleInput = serde_json::from_str(&row.spec).unwrap_or_default();
    let Some(id) = written.session_id.as_deref() else {
        return Ok(());
    };
    let invalid = |message: String| ApiError::InvalidSchedule {
        field: "sessionId",
        message,
    };
    let Ok(session) = owned_session(state, caller, id).await else {
        return Err(invalid(format!("`sessionId`: no session {id}")));
    };
    let session = session.id;
    let files = &written.message.attachments;
    if let Err(refusal) = state.runner.attachments(session, files).await {
        return Err(ApiError::InvalidSchedule {
            field: "message",
            message: format!("`message.attachments`: {refusal}"),
        });
    }
    Ok(())
}

/// `POST /api/schedules` → the schedule made.
#[utoipa::path(post, path = "/api/schedules", tag = "schedules", request_body = ScheduleInput, responses(
    (status = 201, description = "Made: it fires at `nextFireAt` (each scheduled time once, on any number of instances)", body = Schedule),
    (status = 409, description = "`conflict`: the caller has as many schedules as they may (200)", body = ErrorBody),
    (status = 422, description = "`invalid_schedule`: a bad cron pattern, time zone, date, interval (under `--min-schedule-interval-seconds`), model or session, or no time left; `details.field` names the field", body = ErrorBody),
))]
pub async fn create<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let input: ScheduleInput = body.read(state.limits.max_body_bytes).await?;
    let scheduler = &state.scheduler;
    let now = scheduler.clock().now_ms();
    let row = crate::schedules::create(input, caller.user, scheduler.rules(), now)?;
    check_session(&state, &caller, &row).await?;
    if state.store.schedules(caller.user).await?.len() >= MAX_SCHEDULES_PER_USER {
        return Err(ApiError::Conflict(format!(
            "you have {MAX_SCHEDULES_PER_USER} schedules, as many as one person may: delete one first"
        )));
    }
    state.store.add_schedule(&row).await?;
    scheduler.waker().wake();
    Ok(HttpResponse::Created().json(schedule_view(row, None)))
}

/// `GET /api/schedules` → the caller's schedules.
#[utoipa::path(get, path = "/api/schedules", tag = "schedules", responses(
    (status = 200, description = "The caller's schedules, oldest first, each with its next time and newest fire", body = ScheduleList),
))]
pub async fn list<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
) -> Result<web::Json<ScheduleList>, ApiError> {
    let mut schedules = Vec::new();
    for row in state.store.schedules(caller.user).await? {
        schedules.push(shown(&state, row).await?);
    }
    Ok(web::Json(ScheduleList { schedules }))
}

/// `GET /api/schedules/{schedule}` → one of the caller's schedules.
#[utoipa::path(get, path = "/api/schedules/{schedule}", tag = "schedules",
    params(("schedule" = String, Path, description = "The schedule's id")),
    responses(
        (status = 200, description = "The schedule", body = Schedule),
        (status = 404, description = "`not_found`: the caller has no such schedule (another person's is not theirs)", body = ErrorBody),
    )
)]
pub async fn get<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<web::Json<Schedule>, ApiError> {
    let row = own_schedule(&state, &caller, &id).await?;
    Ok(web::Json(shown(&state, row).await?))
}

/// `PATCH /api/schedules/{schedule}` (a JSON merge patch) → the schedule as changed.
#[utoipa::path(patch, path = "/api/schedules/{schedule}", tag = "schedules",
    params(("schedule" = String, Path, description = "The schedule's id")),
    request_body(content = Object, description = "Any fields of a schedule (`{\"enabled\": false}` pauses it); `null` removes one; naming `cron`, `at` or `everySeconds` drops the others. A change of when it fires counts its times from now; a paused schedule resumed handles the times it missed by its `misfire`"),
    responses(
        (status = 200, description = "Changed", body = Schedule),
        (status = 404, description = "`not_found`: the caller has no such schedule", body = ErrorBody),
        (status = 422, description = "`invalid_schedule`: as for `POST`; nothing changed", body = ErrorBody),
    )
)]
pub async fn patch<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    id: web::Path<String>,
    body: JsonBody,
) -> Result<web::Json<Schedule>, ApiError> {
    let row = own_schedule(&state, &caller, &id).await?;
    let changes: Value = body.read(state.limits.max_body_bytes).await?;
    let scheduler = &state.scheduler;
    let now = scheduler.clock().now_ms();
    let change = crate::schedules::patch(&row, &changes, scheduler.rules(), now)?;
    let changed = ScheduleRow {
        spec: change.spec.clone(),
        ..row.clone()
    };
    check_session(&state, &caller, &changed).await?;
    let row = state
        .store
        .change_schedule(caller.user, &id, &change, now)
        .await?;
    let row = row.ok_or_else(|| ApiError::NotFound(format!("no schedule {id}")))?;
    scheduler.waker().wake();
    Ok(web::Json(shown(&state, row).await?))
}

/// `DELETE /api/schedules/{schedule}` → 204.
#[utoipa::path(delete, path = "/api/schedules/{schedule}", tag = "schedules",
    params(("schedule" = String, Path, description = "The schedule's id")),
    responses(
        (status = 204, description = "Deleted with its fires (the sessions its fires started stay)"),
        (status = 404, description = "`not_found`: the caller has no such schedule", body = ErrorBody),
    )
)]
pub async fn delete<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    if !state.store.delete_schedule(caller.user, &id).await? {
        return Err(ApiError::NotFound(format!("no schedule {id}")));
    }
    state.scheduler.waker().wake();
    Ok(HttpResponse::NoContent().finish())
}

/// `POST /api/schedules/{schedule}/run` → the fire it made now.
#[utoipa::path(post, path = "/api/schedules/{schedule}/run", tag = "schedules",
    params(("schedule" = String, Path, description = "The schedule's id")),
    responses(
        (status = 201, description = "Fired now (`manual`), by the schedule's `overlap`: `fired` with its session and run, or `skipped` with why (the previous fire's run still runs or waits, the server's run queue is full, the schedule's session is gone); a paused schedule runs too", body = Fire),
        (status = 404, description = "`not_found`: the caller has no such schedule", body = ErrorBody),
        (status = 409, description = "`conflict`: another \"run now\" of it took the same millisecond", body = ErrorBody),
    )
)]
pub async fn run_now<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let row = own_schedule(&state, &caller, &id).await?;
    state.rates.send_message(caller.user)?;
    let fire = state.scheduler.run_now(&row).await?;
    Ok(HttpResponse::Created().json(fire_view(fire)))
}

/// The query of `GET /api/schedules/{schedule}/fires`.
#[derive(Debug, Deserialize)]
pub struct FiresQuery {
    limit: Option<i64>,
}

/// `GET /api/schedules/{schedule}/fires` → what became of each scheduled time.
#[utoipa::path(get, path = "/api/schedules/{schedule}/fires", tag = "schedules",
    params(
        ("schedule" = String, Path, description = "The schedule's id"),
        ("limit" = Option<i64>, Query, description = "At most this many (default 100, at most 1,000)"),
    ),
    responses(
        (status = 200, description = "Its fires, newest first: each scheduled time once, `fired` (with its session, run and how the run went), `missed` (too late by its `misfire`) or `skipped` (by its `overlap`, or its session gone), with why", body = FireList),
        (status = 404, description = "`not_found`: the caller has no such schedule", body = ErrorBody),
    )
)]
pub async fn fires<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    id: web::Path<String>,
    query: web::Query<FiresQuery>,
) -> Result<web::Json<FireList>, ApiError> {
    let row = own_schedule(&state, &caller, &id).await?;
    let limit = query.limit.unwrap_or(100);
    if !(1..=MAX_FIRES).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "`limit` is from 1 to {MAX_FIRES}"
        )));
    }
    let fires = state.store.fires(&row.id, limit).await?;
    Ok(web::Json(FireList {
        fires: fires.into_iter().map(fire_view).collect(),
    }))
}

/// The query of `GET /api/schedules/preview`.
#[derive(Debug, Deserialize)]
pub struct PreviewQuery {
    cron: String,
    timezone: String,
    from: Option<String>,
    count: Option<u32>,
}

/// `GET /api/schedules/preview?cron=&timezone=&from=&count=` → a cron pattern's next times.
#[utoipa::path(get, path = "/api/schedules/preview", tag = "schedules",
    params(
        ("cron" = String, Query, description = "A cron pattern (5 fields, or 6 with seconds first)"),
        ("timezone" = String, Query, description = "An IANA time zone (`Europe/Paris`)"),
        ("from" = Option<String>, Query, description = "From this instant (RFC 3339; default now)"),
        ("count" = Option<u32>, Query, description = "How many (default 5, at most 100)"),
    ),
    responses(
        (status = 200, description = "The pattern's next times, in UTC, as its time zone's clocks read it across changes of daylight saving time (a time a change skips fires once, after it; one it repeats, once)", body = SchedulePreview),
        (status = 422, description = "`invalid_schedule`: a bad pattern, time zone, instant or count; `details.field` names it", body = ErrorBody),
    )
)]
pub async fn preview<S: Store>(
    state: web::Data<AppState<S>>,
    _caller: Caller,
    query: web::Query<PreviewQuery>,
) -> Result<web::Json<SchedulePreview>, ApiError> {
    let now = state.scheduler.clock().now_ms();
    let query = query.into_inner();
    let times = crate::schedules::preview(
        &query.cron,
        &query.timezone,
        query.from.as_deref(),
        query.count,
        now,
    )?;
    Ok(web::Json(SchedulePreview { times }))
}
