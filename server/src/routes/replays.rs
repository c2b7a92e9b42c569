//! Replays and evals from HTTP: sending a conversation's recorded run again on other
//! variants, k times each, or many conversations' at once (an eval), reading how the
//! trials did, and cancelling. Both are their owner's alone (another's answers 404). The
//! work is `replays`'.

use actix_web::{web, HttpResponse};
use shared::api::ErrorBody;
use shared::evals::{Eval, EvalInput, EvalList};
use shared::replays::{Replay, ReplayInput, ReplayList};

use super::{JsonBody, Owned};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::Store;

/// `POST /api/sessions/{id}/replays` → 202 with the replay, its trials queued or started.
#[utoipa::path(post, path = "/api/sessions/{id}/replays", tag = "replays",
    params(("id" = String, Path, format = Uuid, description = "The conversation to replay (a UUID)")),
    request_body = ReplayInput,
    responses(
        (status = 202, description = "Its trials start, `--replay-concurrency` at a time: each a branch that parts just before the run, sending the same message on its variant; tool calls and questions the same as the record's get the recorded results and answers without running. Read it again with `GET /api/replays/{replay}`", body = Replay),
        (status = 404, description = "`not_found`: no such session of the caller's, or no such run in it", body = ErrorBody),
        (status = 422, description = "`invalid_replay` (`details.field` names the field: `k`, `variants`, `variants.model`, `expect.regex`, `expect.judge.model`, …), or `invalid_message`: the run still goes on, or no message of the person's started it", body = ErrorBody),
    )
)]
pub async fn create<S: Store>(
    Owned { state, caller, row }: Owned<S>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let input: ReplayInput = body.read(state.limits.max_body_bytes).await?;
    state.rates.create_session(caller.user)?;
    state.rates.send_message(caller.user)?;
    let replay = state.replays.create(row.owner, &row, input).await?;
    Ok(HttpResponse::Accepted().json(replay))
}

/// `GET /api/sessions/{id}/replays` → the conversation's replays, newest first.
#[utoipa::path(get, path = "/api/sessions/{id}/replays", tag = "replays",
    params(("id" = String, Path, format = Uuid, description = "The conversation replayed (a UUID)")),
    responses(
        (status = 200, description = "Its replays, newest first (at most 50)", body = ReplayList),
    )
)]
pub async fn list<S: Store>(
    Owned { state, row, .. }: Owned<S>,
) -> Result<web::Json<ReplayList>, ApiError> {
    let replays = state.replays.list(row.owner, row.id).await?;
    Ok(web::Json(ReplayList { replays }))
}

/// `GET /api/replays/{replay}` → the replay: each variant's trials and scores.
#[utoipa::path(get, path = "/api/replays/{replay}", tag = "replays",
    params(("replay" = String, Path, description = "The replay's id")),
    responses(
        (status = 200, description = "Each variant's trials (status, whether it passed and why not, where it first differed from the record, its last answer, tokens, cost, latency, time to first token, the judge's verdict) and scores (`passAt1`, `passHatK`)", body = Replay),
        (status = 404, description = "`not_found`: the caller has no such replay", body = ErrorBody),
    )
)]
pub async fn get<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<web::Json<Replay>, ApiError> {
    let replay = state.replays.get(caller.user, &id).await?;
    replay
        .map(web::Json)
        .ok_or_else(|| ApiError::NotFound(format!("no replay {}", cut(&id))))
}

/// `DELETE /api/replays/{replay}` → the replay, cancelled: no more trials start, running
/// ones stop.
#[utoipa::path(delete, path = "/api/replays/{replay}", tag = "replays",
    params(("replay" = String, Path, description = "The replay's id")),
    responses(
        (status = 200, description = "Cancelled (a replay that had ended stays as it was): queued trials are skipped, running ones stopped; their branches stay", body = Replay),
        (status = 404, description = "`not_found`: the caller has no such replay", body = ErrorBody),
    )
)]
pub async fn cancel<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<web::Json<Replay>, ApiError> {
    let replay = state.replays.cancel(caller.user, &id).await?;
    replay
        .map(web::Json)
        .ok_or_else(|| ApiError::NotFound(format!("no replay {}", cut(&id))))
}

/// `POST /api/evals` → 202 with the eval: a replay of each conversation it names or its
/// filter matches.
#[utoipa::path(post, path = "/api/evals", tag = "replays",
    request_body = EvalInput,
    responses(
        (status = 202, description = "Each conversation's last run a message of the person's started is replayed with the variants (a conversation that cannot be is listed with why); read it again with `GET /api/evals/{eval}`", body = Eval),
        (status = 422, description = "`invalid_replay`: as for a replay, or `sessions`/`filter` (not exactly one given, a session not the caller's, nothing matches, more than 50 match, `filter.since` not RFC 3339); `details.field` names the field", body = ErrorBody),
    )
)]
pub async fn create_eval<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let input: EvalInput = body.read(state.limits.max_body_bytes).await?;
    state.rates.create_session(caller.user)?;
    state.rates.send_message(caller.user)?;
    let eval = state.replays.create_eval(caller.user, input).await?;
    Ok(HttpResponse::Accepted().json(eval))
}

/// `GET /api/evals` → the caller's evals, newest first.
#[utoipa::path(get, path = "/api/evals", tag = "replays",
    responses(
        (status = 200, description = "The caller's evals, newest first (at most 50)", body = EvalList),
    )
)]
pub async fn list_evals<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
) -> Result<web::Json<EvalList>, ApiError> {
    let evals = state.replays.evals(caller.user).await?;
    Ok(web::Json(EvalList { evals }))
}

/// `GET /api/evals/{eval}` → the eval's table.
#[utoipa::path(get, path = "/api/evals/{eval}", tag = "replays",
    params(("eval" = String, Path, description = "The eval's id")),
    responses(
        (status = 200, description = "Per variant: the mean pass^k over conversations, pass@1 over trials, tokens, cost, latency p50; per conversation: each variant's score and its replay", body = Eval),
        (status = 404, description = "`not_found`: the caller has no such eval", body = ErrorBody),
    )
)]
pub async fn get_eval<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<web::Json<Eval>, ApiError> {
    let eval = state.replays.eval(caller.user, &id).await?;
    eval.map(web::Json)
        .ok_or_else(|| ApiError::NotFound(format!("no eval {}", cut(&id))))
}

/// `DELETE /api/evals/{eval}` → the eval, cancelled: each of its replays as a replay's
/// cancel leaves it.
#[utoipa::path(delete, path = "/api/evals/{eval}", tag = "replays",
    params(("eval" = String, Path, description = "The eval's id")),
    responses(
        (status = 200, description = "Cancelled: no more trials start, running ones stop", body = Eval),
        (status = 404, description = "`not_found`: the caller has no such eval", body = ErrorBody),
    )
)]
pub async fn cancel_eval<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<web::Json<Eval>, ApiError> {
    let eval = state.replays.cancel_eval(caller.user, &id).await?;
    eval.map(web::Json)
        .ok_or_else(|| ApiError::NotFound(format!("no eval {}", cut(&id))))
}

/// An id from the caller, cut short for an error message.
fn cut(id: &str) -> String {
    id.chars().take(80).collect()
}
