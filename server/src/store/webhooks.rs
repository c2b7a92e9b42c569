//! The webhook outbox: deliveries owed for sessions waiting on a person (and, when asked
//! for, for runs that ended), kept in the database so none is lost to a crash or restart.
//!
//! Deliveries are derived from rows written in the same transaction as the event they
//! announce: the `interrupts` table (a session starts waiting) and the `run_ends` table (a
//! run ended). Every so often the deliverer asks the store to add a delivery for each of
//! them and each URL that has none yet (the id is the source's and the URL's, so every
//! instance adds the same row once), then claims the due ones: a claim moves the row's
//! next attempt past the attempt's time limit and names the instance, in one statement
//! that skips rows another instance is claiming, so one instance attempts a due delivery
//! at a time, and an attempt is counted once, when claimed. One of the jobs of
//! [`super::Records`], its SQL in `store/sql/webhooks.rs` and `store/sql/webhook_sources.rs`.

use std::future::Future;

use crate::domain::SessionId;

use super::StoreError;

/// The event of a delivery about a waiting session.
pub const WAITING: &str = "session.waiting";
/// The event of a delivery about a run that ended.
pub const RUN_ENDED: &str = "run.ended";
/// The event of a delivery about a person's rating of an answer.
pub const FEEDBACK: &str = "feedback";

/// One delivery: to one URL, about one interrupt or run end.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryRow {
    /// The same on every attempt (`<interrupt or run end id>@<url key>`).
    pub id: String,
    /// [`WAITING`] or [`RUN_ENDED`].
    pub event: String,
    /// The interrupt's id, or the run end's (`<session>:<seq>`).
    pub interrupt_id: String,
    pub session: SessionId,
    pub url: String,
    /// `pending`, `delivered`, `failed` (gave up), `superseded` (the interrupt was
    /// settled before a delivery got through) or `cancelled` (its URL is no longer
    /// configured).
    pub state: String,
    /// Attempts made (or under way), counted when each is claimed.
    pub attempts: i64,
    /// The HTTP status of the last attempt, if one came back.
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub next_attempt_at: i64,
    pub created_at: i64,
    pub delivered_at: Option<i64>,
    /// A run end as JSON (`{runId, outcome, error?}`), for [`RUN_ENDED`].
    pub payload: Option<String>,
    /// The interrupt as JSON (for the body; filled by [`WebhookOutbox::claim_webhooks`]).
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

/// Which deliveries are owed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Wanted {
    /// A session waits for a person (a question, an approval).
    pub waiting: bool,
    /// A session waits for an AG-UI client's own tools (no person is needed).
    pub client_tools: bool,
    /// A run ended.
    pub run_ends: bool,
    /// A person rated an answer.
    pub feedback: bool,
}

/// Storage of webhook deliveries.
pub trait WebhookOutbox: Send + Sync + 'static {
    /// Adds a delivery, due now, for every pending interrupt (and recorded run end)
    /// created at or after `since_ms` that `wanted` covers and every target that has
    /// none, and forgets the run ends it has looked at; returns how many were added.
    fn enqueue_webhooks(
        &self,
        targets: &[Target],
        wanted: Wanted,
        since_ms: i64,
        now_ms: i64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Claims up to `limit` pending deliveries due at `now_ms` for this instance, earliest
    /// first, with their interrupts: each one's attempt count goes up by one and its next
    /// attempt moves to `hold_until_ms`, so no other instance takes it meanwhile.
    fn claim_webhooks(
        &self,
        now_ms: i64,
        limit: u32,
        hold_until_ms: i64,
    ) -> impl Future<Output = Result<Vec<DeliveryRow>, StoreError>> + Send;

    /// Records an attempt's outcome, if this instance's claim still holds (a delivery is
    /// recorded whoever holds it).
    fn record_webhook(
        &self,
        id: &str,
        attempt: &Attempt,
        now_ms: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Stops the pending deliveries nobody needs any more: about interrupts settled
    /// meanwhile (`superseded`), and, when `urls` is given, to URLs not among them
    /// (`cancelled`). Returns how many.
    fn settle_webhooks(
        &self,
        urls: Option<&[String]>,
        now_ms: i64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Deletes the deliveries settled (delivered, failed, superseded, cancelled) before
    /// `before_ms`; returns how many.
    fn prune_webhooks(
        &self,
        before_ms: i64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// A session's deliveries, oldest first.
    fn webhooks_of(
        &self,
        session: SessionId,
    ) -> impl Future<Output = Result<Vec<DeliveryRow>, StoreError>> + Send;

    /// How many interrupts wait for a person now, on every instance (an AG-UI client's
    /// own tools are no person): what the deliveries announce, and a metric.
    fn interrupts_waiting(&self) -> impl Future<Output = Result<u64, StoreError>> + Send;
}
