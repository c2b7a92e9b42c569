//! `POST /api/agui`: AG-UI's HTTP transport. The work is in [`crate::agui`]; this turns
//! the request into an input and the started run into an SSE response, whose
//! `Tandem-Session-Id` header names the thread's session (for its socket and REST routes).

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::Value;
use shared::api::ErrorBody;

use super::JsonBody;
use crate::agui::{self, input, RunFeed};
use crate::auth::{Auth, Caller, Reliance};
use crate::error::ApiError;
use crate::standing::Standing;
use crate::state::AppState;
use crate::store::Store;

/// The response header that names the session of the input's thread.
pub const SESSION_ID_HEADER: &str = "tandem-session-id";

/// `POST /api/agui` `RunAgentInput` → `text/event-stream` of the run's events.
#[utoipa::path(post, path = "/api/agui", tag = "agui",
    request_body(content = Object, content_type = "application/json",
                 description = "An AG-UI `RunAgentInput`: `threadId` (a UUID; a session of the caller by that id, else the caller's own session of the thread, made by its first run), `runId`, `messages` (the client's whole conversation; those the log holds are ignored), `tools` (the client's own tools), `context`, `state`, `forwardedProps`, `resume`"),
    responses(
        (status = 200, description = "The run's events from `RUN_STARTED` to `RUN_FINISHED` or `RUN_ERROR`, each as `data: <event JSON>`, carrying the input's `threadId` (a repeated input streams the run it started)", content_type = "text/event-stream", body = String,
        headers(("Tandem-Session-Id" = String, description = "The id of the thread's session, for its socket and REST routes"))),
        (status = 400, description = "Malformed body, not a RunAgentInput, a `threadId` that is not a UUID, or a thread whose session was deleted while branches still read it", body = ErrorBody),
        (status = 404, description = "`interrupt_not_found`: `resume` names no interrupt of the thread", body = ErrorBody),
        (status = 409, description = "`run_active` (with `details.watch`: the socket to watch it on), `awaiting_input`, or `interrupt_already_answered`", body = ErrorBody),
        (status = 410, description = "The interrupt expired before it was answered", body = ErrorBody),
        (status = 422, description = "`invalid_message` (nothing new to run, a bad tool, several new messages, `context`, `state`, `forwardedProps` or `tools` over its `--max-agui-*-bytes`) or `invalid_payload`", body = ErrorBody),
    )
)]
pub async fn run<S: Store>(
    state: web::Data<AppState<S>>,
    (caller, auth): (Caller, web::Data<Auth>),
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    if !accepts_event_stream(body.request()) {
        return Err(ApiError::NotAcceptable);
    }
    // The stream ends when the caller's credential does: watch for endings before its
    // last check, so that one ending in between cannot be missed.
    let watch = state.endings.watch();
    if !auth.still_valid(&caller).await? {
        return Err(ApiError::Unauthorized);
    }

    let raw: Value = body.read(agui::MAX_INPUT_BYTES).await?;
    let (input, raw) = input::from_value(raw)?;
    let started = agui::start(&state, &caller, input, raw).await?;
    let session = started.session.to_string();
    let state = state.into_inner();
    let reliance = Reliance::Caller(caller);
    let standing = Standing::new(
        reliance,
        watch,
        (**auth).clone(),
        state.clone(),
        started.session,
    );
    let feed = RunFeed::new(state, started, standing);
    let events = futures_util::stream::unfold(feed, |mut feed| async move {
        let chunk = feed.next_chunk().await?;
        Some((Ok::<_, std::convert::Infallible>(chunk), feed))
    });
    Ok(event_stream_response()
        .insert_header((SESSION_ID_HEADER, session))
        .streaming(events))
}

/// The head of a `text/event-stream` response: never cached, compressed or buffered.
pub(super) fn event_stream_response() -> actix_web::HttpResponseBuilder {
    let mut response = HttpResponse::Ok();
    response
        .content_type("text/event-stream")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        // Compressing would hold events back until a compressor block fills.
        .insert_header((header::CONTENT_ENCODING, "identity"))
        .insert_header(("X-Accel-Buffering", "no"));
    response
}

/// Whether the client takes an event stream (no `Accept` at all counts as yes).
pub(super) fn accepts_event_stream(request: &HttpRequest) -> bool {
    let Some(accept) = request.headers().get(header::ACCEPT) else {
        return true;
    };
    let accept = accept.to_str().unwrap_or_default().to_ascii_lowercase();
    accept.split(',').any(|range| {
        let essence = range.split(';').next().unwrap_or_default().trim();
        matches!(essence, "text/event-stream" | "text/*" | "*/*")
    })
}
