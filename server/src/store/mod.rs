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
mod feedback;
mod frame_page;
pub mod guards;
mod instructions;
mod interrupts;
mod leases;
mod open;
mod postgres;
mod queued;
mod rows;
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

/// The title of a session that has none yet.
pub const DEFAULT_TITLE: &str = "New session";

use std::future::Future;

pub use attachments::{AttachmentRow, Attachments, ChunkStored, FinishedUpload, CHUNK_BYTES};
pub use budgets::{day_of, Budgets, OwnBudget, OwnLimit, Spending, Spent};
pub use changes::{Change, Ending};
pub use command::{Applied, Command, Guard, LogEntry, Rejection, StateRead};
pub use effects::{derive_effects, run_outcome, Effects, RunEnd};
pub use errors::{ErrorKind, StoreError};
pub use feedback::{FeedbackFilter, FeedbackReads, FeedbackRow, StoredFeedback};
pub(crate) use frame_page::event_frame_pieces;
pub use frame_page::FramePage;
pub use instructions::Instructions;
pub use interrupts::{InterruptRow, InterruptState};
pub use open::{
    open, Backend, OpenError, StoreOptions, UnsupportedUrl, UseStore, DEFAULT_LOG_WRITERS,
};
pub use postgres::scratch::ScratchDatabase;
pub use postgres::{PostgresStore, LISTENER_NAME};
pub use queued::{QueuedExtra, QueuedRow, MAX_QUEUED};
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

/// A session row.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: SessionId,
    /// The user who created it; nobody else can see it.
    pub owner: UserId,
    pub title: String,
    pub status: SessionStatus,
    pub active_run_id: Option<String>,
    pub last_seq: u64,
    pub created_at: i64,
    pub updated_at: i64,
    /// Where it parts from the session it was forked from; `None` for a conversation's
    /// first line.
    pub fork: Option<Fork>,
    /// The conversation it is a line of: the first line's id (its own when it is that one).
    pub conversation: SessionId,
}

/// A session a search found: its row, and the text of the latest of its messages that
/// matched (`None` when only its title did).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub session: SessionRow,
    pub message: Option<String>,
}

/// Where a branch parts from its parent: its history is the parent's events
/// `1..=at_seq` (shared, read from the parent's rows), then its own from `at_seq + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fork {
    pub parent: SessionId,
    pub at_seq: u64,
}

/// What [`EventLog::replay_after`] handed on: how many events, and the last seq among them
/// (the `after` asked for when none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replayed {
    pub count: u32,
    pub last_seq: u64,
}

/// An event as stored: its seq and its AG-UI JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    pub seq: u64,
    pub json: String,
}

impl StoredEvent {
    /// The events of `rows` in order, each parsed; a row that is not an event is skipped.
    pub fn parse_all(rows: &[StoredEvent]) -> Vec<shared::Event> {
        rows.iter()
            .filter_map(|row| serde_json::from_str(&row.json).ok())
            .collect()
    }
}

/// The storage Tandem needs: the event log and the records, from one backend.
pub trait Store: EventLog + Records {}

impl<T: EventLog + Records> Store for T {}

/// The event log, per backend (the hot path, and the only part the benchmark swaps):
/// sessions' creation and deletion in the log's order, guarded batches of appends
/// ([`EventLog::apply`], each batch in one transaction, `seq`s allocated inside it),
/// replay and frames after a seq, the change feed, run leases and fencing, upkeep.
pub trait EventLog: Send + Sync + 'static {
    /// Creates a session of `owner`; without a title it is named by its first message.
    fn create_session(
        &self,
        owner: UserId,
        id: SessionId,
        title: Option<&str>,
        now_ms: i64,
    ) -> impl Future<Output = Result<SessionRow, StoreError>> + Send;

    /// Creates `id`, a branch of `fork.parent` sharing its events `1..=fork.at_seq` (read
    /// from the rows that hold them, never copied; a seq inside the parent's own shared
    /// prefix makes it a branch of the ancestor that holds it), idle, owned by the parent's
    /// owner, named `title` or as the parent is. `None` when the parent does not exist or
    /// has fewer events. Whether the seq is a place a branch may part (between runs) is
    /// the caller's to decide.
    ///
    /// `waiting` names the run that waits for its person at `fork.at_seq` (its
    /// `RUN_FINISHED` paused on questions): the branch then waits too, with its own copy of
    /// each question (the same ids, answered apart, with a fresh deadline of the same
    /// length).
    fn fork_session(
        &self,
        id: SessionId,
        fork: Fork,
        waiting: Option<&str>,
        title: Option<&str>,
        now_ms: i64,
    ) -> impl Future<Output = Result<Option<SessionRow>, StoreError>> + Send;

    /// Deletes a session with its events; false if it did not exist. One that branches read
    /// part of their history from is hidden instead (gone from every read, its rows kept)
    /// until its last branch goes, when it goes too.
    fn delete_session(
        &self,
        id: SessionId,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Up to `limit` events with `seq > after`, in seq order.
    fn events_after(
        &self,
        id: SessionId,
        after: u64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<StoredEvent>, StoreError>> + Send;

    /// Up to `limit` events with `seq > after` as ready socket frames (see
    /// [`FramePage::frame`]), in seq order, with the last seq among them.
    /// Backends may build the frames in the database, which makes replay much cheaper.
    fn frames_after(
        &self,
        id: SessionId,
        after: u64,
        limit: u32,
    ) -> impl Future<Output = Result<FramePage, StoreError>> + Send {
        async move {
            let rows = self.events_after(id, after, limit).await?;
            Ok(FramePage {
                last_seq: rows.last().map_or(after, |row| row.seq),
                frames: rows
                    .iter()
                    .map(|row| FramePage::frame(row.seq, &row.json))
                    .collect(),
            })
        }
    }

    /// Hands each of up to `limit` events with `seq > after` to `sink`, in seq order, as
    /// the log is read (a socket's replay writes each straight into its buffer); says how
    /// many it handed and the last seq among them. Backends that can step through rows
    /// without copying each event first should: this is the replay path.
    fn replay_after(
        &self,
        id: SessionId,
        after: u64,
        limit: u32,
        sink: &mut (dyn FnMut(u64, &str) + Send),
    ) -> impl Future<Output = Result<Replayed, StoreError>> + Send {
        async move {
            let page = self.frames_after(id, after, limit).await?;
            let mut replayed = Replayed {
                count: 0,
                last_seq: after,
            };
            for frame in &page.frames {
                let Some(json) = FramePage::event_of(frame) else {
                    continue;
                };
                let seq = replayed.last_seq + 1;
                sink(seq, json);
                replayed = Replayed {
                    count: replayed.count + 1,
                    last_seq: seq,
                };
            }
            Ok(replayed)
        }
    }

    /// The changes committed to the database from now on, by any process sharing it
    /// (this one included), for live fan-out across instances and for closing what relied
    /// on a credential that ended; `None` where nothing else can change the database.
    fn changes(
        &self,
    ) -> impl Future<Output = Result<Option<tokio::sync::mpsc::UnboundedReceiver<Change>>, StoreError>>
           + Send {
        async { Ok(None) }
    }

    /// Whether the database answers (a trivial query).
    fn ping(&self) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// This instance's name in run leases.
    fn instance(&self) -> &str;

    /// Renews the leases this instance holds on running sessions; returns those sessions.
    fn renew_leases(
        &self,
        now_ms: i64,
    ) -> impl Future<Output = Result<Vec<SessionId>, StoreError>> + Send;

    /// Takes over, for this instance and with a new epoch, the runs nobody executes any
    /// more: running sessions whose lease lapsed or that have none (and, when `starting`
    /// on a backend only one process uses, any another process held). Returns those
    /// sessions; the caller repairs and continues their runs.
    fn take_over_runs(
        &self,
        now_ms: i64,
        starting: bool,
    ) -> impl Future<Output = Result<Vec<SessionId>, StoreError>> + Send;

    /// Hands back the run leases this instance holds (at a clean stop, once its runs have
    /// stopped): they lapse at once, so another instance (or the next start) continues
    /// those runs without waiting for them to expire, and the other instances sharing
    /// the database are told ([`Change::LeasesReleased`]). Returns how many.
    fn release_leases(&self) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// How many log writers may call [`EventLog::apply`] at once, each with its own
    /// sessions (a session's batches always come from the same one, one at a time): one
    /// where the database takes one writer at a time.
    fn log_writers(&self) -> usize {
        1
    }

    /// Applies a batch of commands in one transaction, checking each guard against the
    /// state left by the commands before it. One result per command, in order.
    fn apply(
        &self,
        batch: &[Command],
        now_ms: i64,
    ) -> impl Future<Output = Result<Vec<Applied>, StoreError>> + Send;

    /// Upkeep of the log that the log writer runs between batches, never during one: a
    /// backend may move committed rows to where reads find them cheaply, keeping every
    /// committed event readable throughout. Says when the writer should call again.
    fn log_upkeep(&self) -> impl Future<Output = Result<Upkeep, StoreError>> + Send {
        async { Ok(Upkeep::Done) }
    }

    /// Does now all the upkeep [`EventLog::log_upkeep`] would do eventually, for whoever
    /// applies batches without the log writer (a benchmark seeding a log, say).
    fn settle_log(&self) -> impl Future<Output = Result<(), StoreError>> + Send {
        async { Ok(()) }
    }
}

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

/// When the log writer should run [`EventLog::log_upkeep`] again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upkeep {
    /// Nothing is due until more is written.
    Done,
    /// More is due: once the writer is idle (or after a short while).
    Later,
    /// The backend is behind: after every batch, even while more are queued.
    Soon,
}
