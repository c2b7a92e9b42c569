//! Storage behind two traits, one per part of what the store does.
//!
//! - **The event log** ([`EventLog`], per backend, the hot path and the only part the
//!   benchmark swaps): creating and deleting sessions in the log's order, guarded
//!   batches of appends applied by [`EventLog::apply`] in one transaction (events,
//!   status, interrupts and de-duplication rows together, so readers never see an event
//!   without its effects), replay and frames after a seq, the change feed, run leases
//!   and fencing, upkeep.
//! - **The records** ([`Records`], with the webhook outbox): users, tokens and sign-ins,
//!   share links, the session list with search and rename, session rows and interrupt
//!   reads, retention.
//!
//! [`Store`] is both, from one backend: `sqlite/` is the embedded one, `postgres/` the
//! one several instances share. What every backend shares lives here once: guard
//! decisions (`guards.rs`) and the guard's SQL with its reads and writes
//! (`sql/guards.rs`, over each backend's [`sql`]-level `GuardRows`), effects of events
//! (`effects.rs`, `advances.rs`), leases' terms (`leases.rs`), the frame layout
//! (`frame_page.rs`), row decoding (`rows.rs`), the records' SQL (`sql/`, one statement
//! per job, the same text on both backends). This module must not know about HTTP,
//! sockets or the agent loop. `docs/architecture.md` ("The store") tables each file.

mod advances;
mod attachments;
mod budgets;
mod changes;
mod command;
#[cfg(test)]
pub(crate) mod contract;
mod effects;
mod errors;
mod event_log;
mod feedback;
mod frame_page;
mod from_sqlx;
pub mod guards;
mod instructions;
mod interrupts;
mod leases;
mod open;
mod options;
mod postgres;
mod queued;
mod rows;
mod sessions;
mod shares;
mod sql;
mod sqlite;
/// A migrated SQLite store on a fresh file, for tests outside the store.
#[cfg(test)]
pub(crate) use sqlite::test_support::temp_store;
mod users;
#[cfg(test)]
pub(crate) mod webhook_contract;
mod webhooks;

use std::future::Future;

pub use attachments::{AttachmentRow, Attachments, ChunkStored, FinishedUpload, CHUNK_BYTES};
pub use budgets::{day_of, Budgets, OwnBudget, OwnLimit, Spending, Spent};
pub use changes::{Change, Ending};
pub use command::{Applied, Command, Guard, LogEntry, Rejection, StateRead};
pub use effects::{derive_effects, run_outcome, Effects, RunEnd};
pub use errors::{ErrorKind, StoreError};
pub use event_log::{EventLog, Replayed, StoredEvent, Upkeep};
pub use feedback::{FeedbackFilter, FeedbackReads, FeedbackRow, StoredFeedback};
pub(crate) use frame_page::event_frame_pieces;
pub use frame_page::FramePage;
pub use instructions::Instructions;
pub use interrupts::{InterruptRow, InterruptState};
pub use open::{open, Backend, OpenError, UnsupportedUrl, UseStore};
pub use options::{StoreOptions, DEFAULT_LOG_WRITERS};
pub use postgres::scratch::ScratchDatabase;
pub use postgres::{PostgresStore, LISTENER_NAME};
pub use queued::{QueuedExtra, QueuedRow, MAX_QUEUED};
pub use sessions::{Fork, Found, SessionRow, DEFAULT_TITLE};
pub use shares::ShareRow;
#[cfg(test)]
pub(crate) use sqlite::test_support;
pub use sqlite::SqliteStore;
pub use users::{SignInMatch, UserRow};
pub use webhooks::{
    Attempt, DeliveryRow, Target, Wanted, WebhookOutbox, FEEDBACK, RUN_ENDED, WAITING,
};

use shared::api::SessionStatus;

use crate::domain::{SessionId, TokenHash, UserId, UserName};

/// The storage Tandem needs: the event log and the records, from one backend.
pub trait Store: EventLog + Records {}

impl<T: EventLog + Records> Store for T {}

/// The records around the log: users, tokens and sign-ins, share links, the session
/// list with search and rename, session rows and interrupt reads, retention, and the
/// webhook outbox.
pub trait Records:
    WebhookOutbox + Attachments + FeedbackReads + Budgets + Instructions + Send + Sync + 'static
{
    /// The sessions of `owner`, most recently updated first.
    fn list_sessions(
        &self,
        owner: UserId,
    ) -> impl Future<Output = Result<Vec<SessionRow>, StoreError>> + Send;

    /// The sessions of `owner` whose title or any message's text contains `text` (ASCII
    /// letters in any case), most recently updated first, each with its latest message
    /// that matched.
    fn search_sessions(
        &self,
        owner: UserId,
        text: &str,
    ) -> impl Future<Output = Result<Vec<Found>, StoreError>> + Send;

    /// Renames a session (its first message no longer names it); false if it is gone.
    fn rename_session(
        &self,
        id: SessionId,
        title: &str,
        now_ms: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Every line of the conversation whose first line is `first`, oldest first.
    fn conversation(
        &self,
        first: SessionId,
    ) -> impl Future<Output = Result<Vec<SessionRow>, StoreError>> + Send;

    /// Records a share link of a session (only its token's hash is given).
    fn create_share(
        &self,
        share: &ShareRow,
        token: TokenHash,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A session's share links, oldest first.
    fn shares(
        &self,
        session: SessionId,
    ) -> impl Future<Output = Result<Vec<ShareRow>, StoreError>> + Send;

    /// Deletes one share link of a session, announcing [`Ending::ShareDeleted`] to the
    /// other processes sharing the database; false if it had none with that id.
    fn delete_share(
        &self,
        session: SessionId,
        id: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// The share link a token opens, with the stored hash that matched.
    fn share_for_token(
        &self,
        token: TokenHash,
    ) -> impl Future<Output = Result<Option<(ShareRow, TokenHash)>, StoreError>> + Send;

    /// One session, if it exists.
    fn session(
        &self,
        id: SessionId,
    ) -> impl Future<Output = Result<Option<SessionRow>, StoreError>> + Send;

    /// Ids of the sessions in `status`, least recently updated first.
    fn sessions_with_status(
        &self,
        status: SessionStatus,
    ) -> impl Future<Output = Result<Vec<SessionId>, StoreError>> + Send;

    /// One interrupt of a session, if it exists there.
    fn interrupt(
        &self,
        session: SessionId,
        interrupt_id: &str,
    ) -> impl Future<Output = Result<Option<InterruptRow>, StoreError>> + Send;

    /// The session's interrupts still waiting for an answer.
    fn pending_interrupts(
        &self,
        session: SessionId,
    ) -> impl Future<Output = Result<Vec<InterruptRow>, StoreError>> + Send;

    /// The session's queued messages, in the order they run.
    fn queued_messages(
        &self,
        session: SessionId,
    ) -> impl Future<Output = Result<Vec<QueuedRow>, StoreError>> + Send;

    /// Idle sessions that hold queued messages (nothing runs to take them), least
    /// recently updated first.
    fn idle_with_queue(&self) -> impl Future<Output = Result<Vec<SessionId>, StoreError>> + Send;

    /// Pending interrupts whose deadline is at or before `now_ms`, earliest first.
    fn expired_interrupts(
        &self,
        now_ms: i64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<InterruptRow>, StoreError>> + Send;

    /// Deletes up to `limit` idle sessions last updated before `cutoff_ms`, with their
    /// events; never a session that is running or awaiting input. Returns their ids.
    fn delete_idle_before(
        &self,
        cutoff_ms: i64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<SessionId>, StoreError>> + Send;

    /// Creates a user with its first API token (only the token's hash is given); false if
    /// the name is taken (also by a revoked user).
    fn create_user(
        &self,
        id: UserId,
        name: &UserName,
        token: TokenHash,
        now_ms: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// One user, revoked or not.
    fn user(&self, id: UserId) -> impl Future<Output = Result<Option<UserRow>, StoreError>> + Send;

    /// Every user, `local` included, oldest first.
    fn list_users(&self) -> impl Future<Output = Result<Vec<UserRow>, StoreError>> + Send;

    /// Revokes a user: their tokens and sign-ins are deleted and they cannot sign in
    /// again; their sessions stay. [`Ending::UserRevoked`] is announced to every process
    /// sharing the database. False if no active user has that name.
    fn revoke_user(
        &self,
        name: &UserName,
        now_ms: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// The active user an API token belongs to, with the stored hash that matched.
    fn user_for_token(
        &self,
        token: TokenHash,
    ) -> impl Future<Output = Result<Option<(UserRow, TokenHash)>, StoreError>> + Send;

    /// Records a browser sign-in (the hash of its cookie) valid until `expires_at_ms`;
    /// expired sign-ins are deleted on the way.
    fn create_sign_in(
        &self,
        cookie: TokenHash,
        user: UserId,
        now_ms: i64,
        expires_at_ms: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The active user of an unexpired sign-in, with the stored hash that matched and the
    /// sign-in's expiry.
    fn user_for_sign_in(
        &self,
        cookie: TokenHash,
        now_ms: i64,
    ) -> impl Future<Output = Result<Option<SignInMatch>, StoreError>> + Send;

    /// Deletes a sign-in (signing out), announcing [`Ending::SignedOut`] to the other
    /// processes sharing the database in the same transaction; false if there was none.
    fn delete_sign_in(
        &self,
        cookie: TokenHash,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}
