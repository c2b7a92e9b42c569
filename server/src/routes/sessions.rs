//! Session endpoints: create, list and search, read, rename, delete, and the event log
//! page.

use std::fmt::Write;

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use shared::api::{
    CreateSession, ErrorBody, EventPage, SessionDetail, SessionList, SessionListEvent,
    SessionSummary,
};
use shared::sharing::RenameSession;

use super::JsonBody;
use super::Owned;
use crate::auth::{Auth, Caller};
use crate::domain::now_ms;
use crate::error::ApiError;
use crate::limits::SocketOwner;
use crate::session_list::summary;
use crate::session_list::ListStream;
use crate::standing::Standing;
use crate::state::AppState;
use crate::store::Store;

/// Longest session title accepted, in characters.
const MAX_TITLE: usize = 200;
/// Largest page of events one request returns.
const MAX_EVENTS_PAGE: u32 = 10_000;

/// `POST /api/sessions` `{title?}` → 201 with the summary.
#[utoipa::path(post, path = "/api/sessions", tag = "sessions",
    request_body(content = CreateSession, content_type = "application/json",
                 description = "May be empty; without a title the first message names the session"),
    responses(
        (status = 201, description = "Created", body = SessionSummary),
        (status = 400, description = "Malformed body or a title of the wrong length", body = ErrorBody),
    )
)]
pub async fn create<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let max = state.limits.max_body_bytes;
    let request: CreateSession = body.read_or_default(max).await?;
    let title = request.title.as_deref().map(valid_title).transpose()?;
    state.rates.create_session(caller.user)?;
    let row = state
        .runner
        .create_session(caller.user, title.as_deref())
        .await?;
    Ok(HttpResponse::Created().json(summary(row)))
}

/// A title as one line a person reads (`shared::text::one_line`: no control or
/// bidirectional characters, trimmed), or why it cannot be one.
pub(super) fn valid_title(title: &str) -> Result<String, ApiError> {
    let title = shared::text::one_line(title);
    if title.is_empty() || title.chars().count() > MAX_TITLE {
        return Err(ApiError::BadRequest(format!(
            "title must be 1 to {MAX_TITLE} characters (control characters left out)"
        )));
    }
    Ok(title)
}

/// Query of the session list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    q: Option<String>,
}

/// `GET /api/sessions?q=`: the caller's sessions, or those matching a search.
#[utoipa::path(get, path = "/api/sessions", tag = "sessions",
    params(
        ("q" = Option<String>, Query, max_length = 200,
         description = "Only sessions whose title or messages contain this text (ASCII letters in any case)"),
    ),
    responses(
        (status = 200, description = "The caller's sessions, most recently updated first", body = SessionList),
        (status = 400, description = "A bad query", body = ErrorBody),
    )
)]
pub async fn list<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    query: web::Query<ListQuery>,
) -> Result<web::Json<SessionList>, ApiError> {
    let search = query.q.as_deref().map(str::trim).filter(|q| !q.is_empty());
    let sessions = match search {
        Some(text) if text.chars().count() > MAX_TITLE => {
            return Err(ApiError::BadRequest(format!(
                "q must be at most {MAX_TITLE} characters"
            )))
        }
        Some(text) => {
            let found = state.store.search_sessions(caller.user, text).await?;
            found
                .into_iter()
                .map(|found| SessionSummary {
                    snippet: found
                        .message
                        .and_then(|message| shared::search::snippet(&message, text)),
                    ..summary(found.session)
                })
                .collect()
        }
        None => {
            let rows = state.store.list_sessions(caller.user).await?;
            rows.into_iter().map(summary).collect()
        }
    };
    Ok(web::Json(SessionList { sessions }))
}

/// `GET /api/sessions/stream`: the caller's session list, live.
#[utoipa::path(get, path = "/api/sessions/stream", tag = "sessions", responses(
    (status = 200, description = "Server-Sent Events, each `data:` a `SessionListEvent`: first a `snapshot` (what `GET /api/sessions` answers), then a `changed` row or a `removed` id as each change of the list commits, on any instance (a `snapshot` again whenever changes may have been missed). Comments keep it open; it ends when the caller's credential does", content_type = "text/event-stream", body = SessionListEvent),
    (status = 429, description = "The caller has as many sockets and streams open as `--sockets-per-user` allows", body = ErrorBody),
))]
pub async fn stream<S: Store>(
    state: web::Data<AppState<S>>,
    (caller, auth): (Caller, web::Data<Auth>),
    request: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    if !super::agui::accepts_event_stream(&request) {
        return Err(ApiError::NotAcceptable);
    }
    let slot = state.sockets.open(&[SocketOwner::User(caller.user)])?;
    // Watch for endings before the credential's last check, and for changes before the
    // snapshot is read, so that nothing in between is missed.
    let endings = state.endings.watch();
    let watch = state.lists.watch(caller.user);
    if !auth.still_valid(&caller).await? {
        return Err(ApiError::Unauthorized);
    }
    let owner = caller.user;
    let state = state.into_inner();
    let standing = Standing::of_caller(caller, endings, (**auth).clone(), state.clone());
    let list = ListStream::new(state, owner, watch, standing, slot);
    let events = futures_util::stream::unfold(list, |mut list| async move {
        let chunk = list.next_chunk().await?;
        Some((Ok::<_, std::convert::Infallible>(chunk), list))
    });
    Ok(super::agui::event_stream_response().streaming(events))
}

/// `GET /api/sessions/{id}`: summary and pending interrupts.
#[utoipa::path(get, path = "/api/sessions/{id}", tag = "sessions", responses(
    (status = 200, description = "The session and its pending questions", body = SessionDetail),
))]
pub async fn get<S: Store>(
    Owned { state, row, .. }: Owned<S>,
) -> Result<web::Json<SessionDetail>, ApiError> {
    let pending = state.store.pending_interrupts(row.id).await?;
    Ok(web::Json(SessionDetail {
        summary: summary(row),
        pending_interrupts: pending.into_iter().map(|p| p.interrupt).collect(),
    }))
}

/// `PATCH /api/sessions/{id}` `{title}` → the renamed summary.
#[utoipa::path(patch, path = "/api/sessions/{id}", tag = "sessions", request_body = RenameSession, responses(
    (status = 200, description = "Renamed", body = SessionSummary),
    (status = 400, description = "Not a session id, a malformed body or a title of the wrong length", body = ErrorBody),
    (status = 403, description = "A browser page of another origin", body = ErrorBody),
))]
pub async fn rename<S: Store>(
    Owned { state, row, .. }: Owned<S>,
    body: JsonBody,
) -> Result<web::Json<SessionSummary>, ApiError> {
    let id = row.id;
    let rename: RenameSession = body.read(state.limits.max_body_bytes).await?;
    let title = valid_title(&rename.title)?;
    let gone = || ApiError::SessionNotFound(id.to_string());
    if !state.store.rename_session(id, &title, now_ms()).await? {
        return Err(gone());
    }
    let row = state.store.session(id).await?.ok_or_else(gone)?;
    Ok(web::Json(summary(row)))
}

/// `DELETE /api/sessions/{id}` → 204.
#[utoipa::path(delete, path = "/api/sessions/{id}", tag = "sessions", responses(
    (status = 204, description = "Deleted, its run stopped and its sockets closed"),
))]
pub async fn delete<S: Store>(
    Owned { state, row, .. }: Owned<S>,
) -> Result<HttpResponse, ApiError> {
    let id = row.id;
    state.runner.delete(id).await?;
    state.hub.close(id);
    Ok(HttpResponse::NoContent().finish())
}

/// Query of the events page.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    #[serde(default)]
    after: u64,
    limit: Option<u32>,
}

/// `GET /api/sessions/{id}/events?after=&limit=` → `{events:[{seq,event}], lastSeq}`.
#[utoipa::path(get, path = "/api/sessions/{id}/events", tag = "sessions",
    params(
        ("after" = Option<u64>, Query, description = "Events with a greater seq (default 0)"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 10000, description = "Events at most (default 1000)"),
    ),
    responses(
        (status = 200, description = "A page of the log", body = EventPage),
        (status = 400, description = "Not a session id, or a bad query", body = ErrorBody),
    )
)]
pub async fn events<S: Store>(
    Owned { state, row, .. }: Owned<S>,
    query: web::Query<EventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let id = row.id;
    let limit = query.limit.unwrap_or(1000);
    if limit == 0 || limit > MAX_EVENTS_PAGE {
        return Err(ApiError::BadRequest(format!(
            "limit must be 1 to {MAX_EVENTS_PAGE}"
        )));
    }
    let rows = state.store.events_after(id, query.after, limit).await?;
    let session = state
        .store
        .session(id)
        .await?
        .ok_or_else(|| ApiError::SessionNotFound(id.to_string()))?;
    // The events are stored as JSON; splice them in rather than parse and re-serialise.
    let mut body =
        String::with_capacity(rows.iter().map(|r| r.json.len() + 24).sum::<usize>() + 32);
    body.push_str(r#"{"events":["#);
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        let _ = write!(body, r#"{{"seq":{},"event":{}}}"#, row.seq, row.json);
    }
    let _ = write!(body, r#"],"lastSeq":{}}}"#, session.last_seq);
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(body))
}
