//! `GET /api/sessions/{id}/webhooks`: where each webhook delivery about a session stands.
//! A receiver's URL may hold a secret, so only its origin is shown.

use actix_web::web;
use serde_json::{json, Value};

use super::Owned;
use crate::domain::origin;
use crate::error::ApiError;
use crate::store::{DeliveryRow, Store, FEEDBACK, RUN_ENDED};

/// `GET /api/sessions/{id}/webhooks` → `{deliveries: [...]}`, oldest first.
#[utoipa::path(get, path = "/api/sessions/{id}/webhooks", tag = "sessions", responses(
    (status = 200, description = "`{deliveries:[{id, event: session.waiting|run.ended|feedback, interruptId? (session.waiting), runId? (run.ended, feedback), url (its origin only), state: pending|delivered|failed|superseded|cancelled, attempts, lastStatus?, lastError?, nextAttemptAt, createdAt, deliveredAt?}]}`", body = Object),
))]
pub async fn deliveries<S: Store>(
    Owned { state, row, .. }: Owned<S>,
) -> Result<web::Json<Value>, ApiError> {
    let id = row.id;
    let rows = state.store.webhooks_of(id).await?;
    let deliveries: Vec<Value> = rows.iter().map(delivery).collect();
    Ok(web::Json(json!({ "deliveries": deliveries })))
}

/// One delivery as the API shows it (no `null`s).
fn delivery(row: &DeliveryRow) -> Value {
    let mut value = json!({
        "id": row.id,
        "event": row.event,
        "url": origin(&row.url),
        "state": row.state,
        "attempts": row.attempts,
        "nextAttemptAt": row.next_attempt_at,
        "createdAt": row.created_at,
    });
    if row.event == RUN_ENDED || row.event == FEEDBACK {
        let run = row.payload.as_deref().and_then(|p| {
            let payload: Value = serde_json::from_str(p).ok()?;
            payload["runId"].as_str().map(str::to_string)
        });
        if let Some(run) = run {
            value["runId"] = json!(run);
        }
    } else {
        value["interruptId"] = json!(row.interrupt_id);
    }
    if let Some(status) = row.last_status {
        value["lastStatus"] = json!(status);
    }
    if let Some(error) = &row.last_error {
        value["lastError"] = json!(error);
    }
    if let Some(at) = row.delivered_at {
        value["deliveredAt"] = json!(at);
    }
    value
}
