//! What a session's model calls cost, per line of its conversation and for the whole
//! conversation: `GET /api/sessions/{id}/usage`. Read from the log's `CUSTOM tandem.usage`
//! events (one per model call), so it is exact on every instance; a call in a prefix that
//! branches share is counted once for the conversation, in the line that made it.

use actix_web::HttpResponse;
use shared::usage::{CallUsage, SessionUsage, UsageTotals};
use shared::{Event, EventBody};

use super::Owned;
use crate::domain::SessionId;
use crate::error::ApiError;
use crate::store::Store;

/// `GET /api/sessions/{id}/usage` → this line's usage, its own, and its conversation's.
#[utoipa::path(get, path = "/api/sessions/{id}/usage", tag = "sessions", responses(
    (status = 200, description = "Tokens and cost of the line's history (`line`), of the calls it made itself (`own`), and of every line of its conversation, each call once (`conversation`)", body = SessionUsage),
))]
pub async fn usage<S: Store>(Owned { state, row, .. }: Owned<S>) -> Result<HttpResponse, ApiError> {
    let store = &*state.store;
    let parts_at = |fork: Option<crate::store::Fork>| fork.map_or(0, |fork| fork.at_seq);
    let own = calls_in(store, row.id, parts_at(row.fork), None).await?;
    let mut line = own;
    if let Some(fork) = row.fork {
        line.merge(&calls_in(store, row.id, 0, Some(fork.at_seq)).await?);
    }
    let mut conversation = UsageTotals::default();
    for other in store.conversation(row.conversation).await? {
        let made = match other.id == row.id {
            true => own,
            false => calls_in(store, other.id, parts_at(other.fork), None).await?,
        };
        conversation.merge(&made);
    }
    Ok(HttpResponse::Ok().json(SessionUsage {
        line,
        own,
        conversation,
    }))
}

/// The model calls logged in `session`'s history after `after` (up to `upto`, if given).
async fn calls_in<S: Store>(
    store: &S,
    session: SessionId,
    after: u64,
    upto: Option<u64>,
) -> Result<UsageTotals, ApiError> {
    const PAGE: u32 = 5_000;
    let mut totals = UsageTotals::default();
    let mut seen = after;
    loop {
        let rows = store.events_after(session, seen, PAGE).await?;
        for row in &rows {
            if upto.is_some_and(|upto| row.seq > upto) {
                return Ok(totals);
            }
            seen = row.seq;
            if !row.json.contains(shared::custom::USAGE) {
                continue;
            }
            let Ok(event) = serde_json::from_str::<Event>(&row.json) else {
                continue;
            };
            if let EventBody::Custom { name, value } = event.body {
                if name == shared::custom::USAGE {
                    if let Ok(call) = serde_json::from_value::<CallUsage>(value) {
                        totals.add(&call);
                    }
                }
            }
        }
        if rows.len() < PAGE as usize {
            return Ok(totals);
        }
    }
}
