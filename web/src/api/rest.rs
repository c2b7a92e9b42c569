//! The REST calls the page makes: signing in and out, server info, listing (and
//! searching), reading, creating, renaming and deleting sessions, a new conversation's
//! first message, branches, Continue, instructions, share links, the tools the model
//! may call (the person's own uploaded and deleted), and schedules.
//!
//! Every call returns the decoded body or an [`ApiError`] read from the server's error body.
//! A call answered `401 unauthorized` (the sign-in expired or was revoked) also tells the
//! handler set with [`on_unauthorized`], so the page can ask to sign in again. Messages and
//! answers go over the session socket, not through here, except a new conversation's first
//! message, which comes with creating its session.

use std::cell::RefCell;

use gloo_net::http::{Request, Response};
use serde::de::DeserializeOwned;
use serde_json::Value;
use shared::api::{
    BranchList, BranchStarted, CreateSession, CurrentUser, EditMessage, ErrorBody, EventPage,
    LoginBody, McpServerInfo, ModelList, PostMessage, Regenerate, RunAccepted, ServerInfo,
    SessionDetail, SessionList, SessionSummary,
};

use shared::queue::QueuedMessage;
use shared::sharing::{CreateShare, CreatedShare, RenameSession, Share, SharedSession};
use shared::usage::UsageTotals;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::ApiError;

thread_local! {
    /// Called when a request is refused for want of a valid sign-in.
    static ON_UNAUTHORIZED: RefCell<Option<Box<dyn Fn()>>> = RefCell::new(None);
}

/// Sets what happens when the server says the page is not signed in.
pub fn on_unauthorized(handler: impl Fn() + 'static) {
    ON_UNAUTHORIZED.with(|slot| *slot.borrow_mut() = Some(Box::new(handler)));
}

/// `GET /api/auth/me`: who the page acts for (401 when not signed in).
pub async fn me() -> Result<CurrentUser, ApiError> {
    current_user(send(Request::get("/api/auth/me").build()).await?).await
}

/// Reads a [`CurrentUser`] field by field: no derived deserialiser for it (or its budget)
/// in the page.
async fn current_user(response: Response) -> Result<CurrentUser, ApiError> {
    let value: Value = json(response).await?;
    let text = |key: &str| text_of(&value, key);
    let (Some(id), Some(name)) = (text("id"), text("name")) else {
        return Err(ApiError::bad_response("not a user"));
    };
    Ok(CurrentUser {
        id,
        name,
        auth: text("auth").unwrap_or_default(),
        signed_in_with: text("signedInWith").unwrap_or_default(),
        budget: shared::budget::BudgetLine::list_from_value(value.get("budget")),
    })
}

/// `POST /api/auth/login`: exchanges an API token for the sign-in cookie.
pub async fn sign_in(token: &str) -> Result<CurrentUser, ApiError> {
    let body = LoginBody {
        token: token.trim().to_string(),
    };
    current_user(send(Request::post("/api/auth/login").json(&body)).await?).await
}

/// `POST /api/auth/logout`: ends the sign-in (server-side) and clears the cookie.
pub async fn sign_out() -> Result<(), ApiError> {
    send(Request::post("/api/auth/logout").build()).await?;
    Ok(())
}

/// `GET /api/info`: the engine and model this server runs.
pub async fn server_info() -> Result<ServerInfo, ApiError> {
    // Read by hand, as `me`: no derived deserialiser for it in the page.
    let value: Value = json(send(Request::get("/api/info").build()).await?).await?;
    let servers = value
        .get("mcpServers")
        .and_then(Value::as_array)
        .map(Vec::as_slice);
    let mcp_servers = servers
        .unwrap_or_default()
        .iter()
        .filter_map(|server| {
            Some(McpServerInfo {
                name: text_of(server, "name")?,
                connected: server.get("connected").and_then(Value::as_bool)?,
                tools: server.get("tools").and_then(Value::as_u64).unwrap_or(0) as usize,
                error: text_of(server, "error"),
            })
        })
        .collect();
    Ok(ServerInfo {
        engine: text_of(&value, "engine").unwrap_or_default(),
        model: text_of(&value, "model").unwrap_or_default(),
        version: text_of(&value, "version").unwrap_or_default(),
        mcp_servers,
    })
}

/// `GET /api/models`: the models a session may pick, the default first.
pub async fn models() -> Result<ModelList, ApiError> {
    let value: Value = json(send(Request::get("/api/models").build()).await?).await?;
    let text = |key: &str| text_of(&value, key);
    let texts = |key: &str| -> Vec<String> {
        let list = value.get(key).and_then(Value::as_array).map(Vec::as_slice);
        let list = list.unwrap_or_default().iter();
        list.filter_map(|item| item.as_str().map(str::to_string))
            .collect()
    };
    Ok(ModelList {
        engine: text("engine").unwrap_or_default(),
        default: text("default").unwrap_or_default(),
        models: texts("models"),
        without_images: texts("withoutImages"),
    })
}

/// `GET /api/sessions?q=`: all sessions, newest first, or those a search finds.
pub async fn list_sessions(search: Option<&str>) -> Result<Vec<SessionSummary>, ApiError> {
    let request = match search {
        Some(text) => Request::get("/api/sessions").query([("q", text)]).build(),
        None => Request::get("/api/sessions").build(),
    };
    let list: SessionList = json(send(request).await?).await?;
    Ok(list.sessions)
}

/// `PATCH /api/sessions/{id}`: renames a session.
pub async fn rename_session(id: &str, title: &str) -> Result<SessionSummary, ApiError> {
    let body = RenameSession {
        title: title.to_string(),
    };
    json(send(Request::patch(&format!("/api/sessions/{id}")).json(&body)).await?).await
}

/// `POST /api/sessions/{id}/shares`: a new read-only link (its secret shown this once).
pub async fn create_share(id: &str, hide: CreateShare) -> Result<CreatedShare, ApiError> {
    let url = format!("/api/sessions/{id}/shares");
    let value: Value = json(send(Request::post(&url).json(&hide)).await?).await?;
    let text = |key: &str| text_of(&value, key);
    let created = (share_of(&value), text("token"), text("path"));
    let (Some(share), Some(token), Some(path)) = created else {
        return Err(ApiError::bad_response("not a share link"));
    };
    Ok(CreatedShare { share, token, path })
}

/// `GET /api/sessions/{id}/shares`: the session's links.
pub async fn list_shares(id: &str) -> Result<Vec<Share>, ApiError> {
    let url = format!("/api/sessions/{id}/shares");
    let value: Value = json(send(Request::get(&url).build()).await?).await?;
    let shares = value
        .get("shares")
        .and_then(Value::as_array)
        .map(Vec::as_slice);
    Ok(shares
        .unwrap_or_default()
        .iter()
        .filter_map(share_of)
        .collect())
}

/// A share link read by hand (a derived deserialiser, flattened into the created link's,
/// costs the page more).
fn share_of(value: &Value) -> Option<Share> {
    let flag = |key: &str| value.get(key).and_then(Value::as_bool);
    Some(Share {
        id: value.get("id")?.as_str()?.to_string(),
        hide_reasoning: flag("hideReasoning")?,
        hide_tool_arguments: flag("hideToolArguments")?,
        attachments: flag("attachments").unwrap_or(true),
        state: flag("state").unwrap_or(true),
        instructions: flag("instructions").unwrap_or(false),
        created_at: value.get("createdAt").and_then(Value::as_i64).unwrap_or(0),
    })
}

/// `DELETE /api/sessions/{id}/shares/{share}`: the link stops working.
pub async fn delete_share(id: &str, share: &str) -> Result<(), ApiError> {
    send(Request::delete(&format!("/api/sessions/{id}/shares/{share}")).build()).await?;
    Ok(())
}

/// `GET /api/shared/{token}`: what a share link shows (no sign-in needed).
pub async fn shared_session(token: &str) -> Result<SharedSession, ApiError> {
    json(send(Request::get(&format!("/api/shared/{token}")).build()).await?).await
}

/// `POST /api/sessions` with `{}`: a new, empty session.
pub async fn create_session() -> Result<SessionSummary, ApiError> {
    let request = Request::post("/api/sessions").json(&CreateSession::default());
    json(send(request).await?).await
}

/// `POST /api/sessions/{id}/messages`: a message that starts a run (the first message of a
/// conversation; later ones go over the session's socket).
pub async fn post_message(id: &str, message: &PostMessage) -> Result<RunAccepted, ApiError> {
    let url = format!("/api/sessions/{id}/messages");
    json(send(Request::post(&url).json(message)).await?).await
}

/// `GET /api/sessions/{id}`: one session with its pending questions.
pub async fn get_session(id: &str) -> Result<SessionDetail, ApiError> {
    json(send(Request::get(&format!("/api/sessions/{id}")).build()).await?).await
}

/// `GET /api/sessions/{id}/events?after=&limit=`: up to `limit` logged events after `after`.
/// The first page of the session the page was opened on comes from the request the
/// loader in `index.html` started before the page's code arrived, when it made one.
pub async fn events(id: &str, after: u64, limit: u32) -> Result<EventPage, ApiError> {
    if after == 0 {
        if let Some(response) = prefetched_history(id, limit).await {
            return json(checked(response).await?).await;
        }
    }
    let url = format!("/api/sessions/{id}/events?after={after}&limit={limit}");
    json(send(Request::get(&url).build()).await?).await
}

/// The response to the loader's request for the first `limit` events of session `id`,
/// taken once; `None` if it asked for something else, or nothing, or could not send it.
async fn prefetched_history(id: &str, limit: u32) -> Option<Response> {
    let window = web_sys::window()?;
    let key = JsValue::from_str(PREFETCHED_HISTORY);
    let slot = js_sys::Reflect::get(&window, &key).ok()?;
    if slot.is_undefined() {
        return None;
    }
    let _ = js_sys::Reflect::set(&window, &key, &JsValue::UNDEFINED);
    let field = |name: &str| js_sys::Reflect::get(&slot, &JsValue::from_str(name)).ok();
    let same = field("id")?.as_string()? == id && field("limit")?.as_f64()? == f64::from(limit);
    if !same {
        return None;
    }
    let promise: js_sys::Promise = field("response")?.dyn_into().ok()?;
    let response = JsFuture::from(promise).await.ok()?;
    Some(Response::from(
        response.dyn_into::<web_sys::Response>().ok()?,
    ))
}

/// Where `index.html`'s loader leaves its request for the opened session's history:
/// `{id, limit, response}` (a promise of the `fetch` response).
const PREFETCHED_HISTORY: &str = "tandemHistory";

/// `POST /api/sessions/{id}/messages/{messageId}/edit`: a branch that parts before the
/// person's message, with `text` sent in its place.
pub async fn edit_message(
    id: &str,
    message_id: &str,
    text: &str,
) -> Result<BranchStarted, ApiError> {
    let url = format!("/api/sessions/{id}/messages/{message_id}/edit");
    let body = EditMessage {
        text: text.to_string(),
        attachments: None,
    };
    json(send(Request::post(&url).json(&body)).await?).await
}

/// `POST /api/sessions/{id}/runs/{runId}/regenerate`: a branch that parts before the run,
/// with its message sent again.
pub async fn regenerate(
    id: &str,
    run_id: &str,
    model: Option<String>,
) -> Result<BranchStarted, ApiError> {
    let url = format!("/api/sessions/{id}/runs/{run_id}/regenerate");
    json(send(Request::post(&url).json(&Regenerate { model })).await?).await
}

/// `POST /api/sessions/{id}/runs/{runId}/continue`: continues the answer the session's
/// last run was stopped in.
pub async fn continue_run(
    id: &str,
    run_id: &str,
    asked: &shared::api::ContinueRun,
) -> Result<RunAccepted, ApiError> {
    let url = format!("/api/sessions/{id}/runs/{run_id}/continue");
    json(send(Request::post(&url).json(asked)).await?).await
}

/// `GET /api/instructions`: the person's own instructions, for all their conversations.
pub async fn own_instructions() -> Result<String, ApiError> {
    let value: Value = json(send(Request::get("/api/instructions").build()).await?).await?;
    Ok(text_of(&value, "text").unwrap_or_default())
}

/// `PUT /api/instructions` (`path` `None`) or `PUT /api/sessions/{id}/instructions`: sets
/// instructions; the text as kept.
pub async fn set_instructions(session: Option<&str>, text: &str) -> Result<String, ApiError> {
    let url = match session {
        Some(id) => format!("/api/sessions/{id}/instructions"),
        None => "/api/instructions".to_string(),
    };
    let body = shared::instructions::Instructions {
        text: text.to_string(),
    };
    let value: Value = json(send(Request::put(&url).json(&body)).await?).await?;
    Ok(text_of(&value, "text").unwrap_or_default())
}

/// `GET /api/sessions/{id}/branches`: every line of the session's conversation, oldest
/// first.
pub async fn branches(id: &str) -> Result<Vec<SessionSummary>, ApiError> {
    let list: BranchList =
        json(send(Request::get(&format!("/api/sessions/{id}/branches")).build()).await?).await?;
    Ok(list.branches)
}

/// `GET /api/sessions/{id}/usage`: what the whole conversation cost (every line, each
/// shared call once).
pub async fn session_usage(id: &str) -> Result<UsageTotals, ApiError> {
    let url = format!("/api/sessions/{id}/usage");
    let value: Value = json(send(Request::get(&url).build()).await?).await?;
    let totals = value.get("conversation").unwrap_or(&Value::Null);
    let count = |key: &str| totals.get(key).and_then(Value::as_u64).unwrap_or(0);
    Ok(UsageTotals {
        calls: count("calls") as u32,
        input_tokens: count("inputTokens"),
        output_tokens: count("outputTokens"),
        reasoning_tokens: count("reasoningTokens"),
        cached_input_tokens: count("cachedInputTokens"),
        cost_usd: totals.get("costUsd").and_then(Value::as_f64).unwrap_or(0.0),
        unpriced_calls: count("unpricedCalls") as u32,
    })
}

/// `PATCH /api/sessions/{id}/queue/{queuedId}`: a queued message's new text.
pub async fn edit_queued(id: &str, queued: &str, text: &str) -> Result<QueuedMessage, ApiError> {
    let url = format!("/api/sessions/{id}/queue/{queued}");
    let body = EditMessage {
        text: text.to_string(),
        attachments: None,
    };
    json(send(Request::patch(&url).json(&body)).await?).await
}

/// `POST /api/sessions/{id}/runs/{runId}/feedback`: a rating of the run's answer (what
/// it recorded comes back over the socket).
pub async fn give_feedback(
    id: &str,
    run: &str,
    given: &shared::feedback::GiveFeedback,
) -> Result<(), ApiError> {
    let url = format!("/api/sessions/{id}/runs/{run}/feedback");
    send(Request::post(&url).json(given)).await?;
    Ok(())
}

/// `PATCH /api/sessions/{id}/state`: a JSON Patch of the shared state; the state it made.
pub async fn patch_state(id: &str, delta: &[serde_json::Value]) -> Result<(), ApiError> {
    let url = format!("/api/sessions/{id}/state");
    send(Request::patch(&url).json(&delta)).await?;
    Ok(())
}

/// `DELETE /api/sessions/{id}/queue/{queuedId}`: a queued message will not run.
pub async fn withdraw_queued(id: &str, queued: &str) -> Result<(), ApiError> {
    send(Request::delete(&format!("/api/sessions/{id}/queue/{queued}")).build()).await?;
    Ok(())
}

/// `GET /api/tools`: every tool the person's model may call (`{tools, uploads}`), as the
/// server sends it (the Tools dialog reads the fields it shows).
pub async fn tools() -> Result<Value, ApiError> {
    json(send(Request::get("/api/tools").build()).await?).await
}

/// `PUT /api/tools/{name}`: uploads one of the person's own tools, its manifest and its
/// module as a multipart form.
pub async fn upload_tool(
    name: &str,
    manifest: &web_sys::File,
    module: &web_sys::File,
) -> Result<(), ApiError> {
    let form =
        web_sys::FormData::new().map_err(|_| ApiError::new("form", "cannot make the form"))?;
    let parts = [("manifest", manifest), ("module", module)];
    for (part, file) in parts {
        form.append_with_blob_and_filename(part, file, &file.name())
            .map_err(|_| ApiError::new("form", "cannot read the file"))?;
    }
    let url = format!(
        "/api/tools/{}",
        String::from(js_sys::encode_uri_component(name))
    );
    send(Request::put(&url).body(form)).await?;
    Ok(())
}

/// `DELETE /api/tools/{name}`: deletes one of the person's own tools.
pub async fn delete_tool(name: &str) -> Result<(), ApiError> {
    let url = format!(
        "/api/tools/{}",
        String::from(js_sys::encode_uri_component(name))
    );
    send(Request::delete(&url).build()).await?;
    Ok(())
}

/// A request of the schedules dialog on its way: its reply's JSON (`null` for none).
pub type Pending = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, ApiError>>>>;

/// `GET url`: its JSON (the schedules dialog's reads).
pub async fn get_json(url: &str) -> Result<Value, ApiError> {
    json(send(Request::get(url).build()).await?).await
}

/// `POST url` with `body`; its reply's JSON.
pub fn post_json(url: String, body: Value) -> Pending {
    Box::pin(async move { json(send(Request::post(&url).json(&body)).await?).await })
}

/// `PATCH url` with `body`; its reply's JSON.
pub fn patch_json(url: String, body: Value) -> Pending {
    Box::pin(async move { json(send(Request::patch(&url).json(&body)).await?).await })
}

/// `DELETE url`.
pub fn delete_path(url: String) -> Pending {
    Box::pin(async move {
        send(Request::delete(&url).build()).await?;
        Ok(Value::Null)
    })
}

/// `DELETE /api/sessions/{id}`: removes a session, stopping its run first.
pub async fn delete_session(id: &str) -> Result<(), ApiError> {
    send(Request::delete(&format!("/api/sessions/{id}")).build()).await?;
    Ok(())
}

/// `DELETE /api/sessions/{id}` sent so that it outlives the page (`keepalive`), as the
/// page goes away; nobody reads the answer.
pub fn delete_session_as_page_leaves(id: &str) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let init = web_sys::RequestInit::new();
    init.set_method("DELETE");
    // `keepalive` lets the request outlive the page (not in web-sys's bindings).
    let _ = js_sys::Reflect::set(&init, &JsValue::from_str("keepalive"), &JsValue::TRUE);
    init.set_credentials(web_sys::RequestCredentials::SameOrigin);
    let _ = window.fetch_with_str_and_init(&format!("/api/sessions/{id}"), &init);
}

/// Sends a request; a non-2xx reply becomes the server's error.
async fn send(request: Result<Request, gloo_net::Error>) -> Result<Response, ApiError> {
    let response = request
        .map_err(ApiError::network)?
        .send()
        .await
        .map_err(ApiError::network)?;
    checked(response).await
}

/// The response if it is a 2xx; otherwise the server's error (a 401 also tells the
/// sign-in handler).
async fn checked(response: Response) -> Result<Response, ApiError> {
    if response.ok() {
        return Ok(response);
    }
    let (status, status_text) = (response.status(), response.status_text());
    match json::<ErrorBody>(response).await {
        Ok(body) => {
            if body.error.code == "unauthorized" {
                ON_UNAUTHORIZED.with(|slot| {
                    if let Some(handler) = slot.borrow().as_ref() {
                        handler();
                    }
                });
            }
            Err(body.error.into())
        }
        Err(_) => Err(ApiError::new(
            "http_error",
            format!("The server answered {status} {status_text}"),
        )),
    }
}

async fn json<T: DeserializeOwned>(response: Response) -> Result<T, ApiError> {
    let text = response.text().await.map_err(ApiError::bad_response)?;
    super::from_text(&text).map_err(ApiError::bad_response)
}

/// A string field of a reply read by hand (the page keeps no derived deserialiser it can
/// do without).
fn text_of(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_string)
}
