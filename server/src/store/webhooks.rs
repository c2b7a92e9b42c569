//! The webhook outbox: deliveries owed for sessions waiting on a person, kept in the
//! database so none is lost to a crash or restart.
//!
//! Deliveries are derived from the `interrupts` table, which is written in the same
//! transaction as the event that makes a session wait: every so often the deliverer asks
//! the store to add a delivery for each pending interrupt and URL that has none yet (the
//! id is the interrupt's and the URL's, so every instance adds the same row once), then
//! takes the due ones. A separate trait from [`super::Store`] so each backend implements
//! it in a file of its own; a store without an outbox (the benchmark's) owes nothing.

use std::future::Future;

use crate::domain::SessionId;

use super::StoreError;

/// One delivery: to one URL, about one interrupt.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryRow {
    /// The same on every attempt (`<interrupt id>@<url key>`).
    pub id: String,
    pub interrupt_id: String,
    pub session: SessionId,
    pub url: String,
    /// `pending`, `delivered` or `failed` (gave up).
    pub state: String,
    pub attempts: i64,
    /// The HTTP status of the last attempt, if one came back.
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub next_attempt_at: i64,
    pub created_at: i64,
    pub delivered_at: Option<i64>,
    /// The interrupt as JSON (for the body; filled by [`WebhookOutbox::due_webhooks`]).
    pub interrupt: Option<String>,
}

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Attempt {
    /// The receiver answered 2xx.
    Delivered { status: i64 },
    /// It did not; try again at `retry_at`, or give up when `None`.
    Failed {
        status: Option<i64>,
        error: String,
        retry_at: Option<i64>,
    },
}

/// A URL to deliver to and the short key its deliveries' ids carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub url: String,
    pub key: String,
}

/// Storage of webhook deliveries.
pub trait WebhookOutbox: Send + Sync + 'static {
    /// Adds a delivery, due now, for every pending interrupt created at or after
    /// `since_ms` and every target that has none; returns how many were added.
    fn enqueue_webhooks(
        &self,
        _targets: &[Target],
        _since_ms: i64,
        _now_ms: i64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send {
        async { Ok(0) }
    }

    /// Pending deliveries due at `now_ms`, earliest first, with their interrupts.
    fn due_webhooks(
        &self,
        _now_ms: i64,
        _limit: u32,
    ) -> impl Future<Output = Result<Vec<DeliveryRow>, StoreError>> + Send {
        async { Ok(Vec::new()) }
    }

    /// Records an attempt's outcome.
    fn record_webhook(
        &self,
        _id: &str,
        _attempt: &Attempt,
        _now_ms: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        async { Ok(()) }
    }

    /// A session's deliveries, oldest first.
    fn webhooks_of(
        &self,
        _session: SessionId,
    ) -> impl Future<Output = Result<Vec<DeliveryRow>, StoreError>> + Send {
        async { Ok(Vec::new()) }
    }
}
