//! Storage behind a trait per job, each implemented once per backend.
//!
//! - **The event log** ([`EventLog`], per backend, the hot path and the only part the
//!   benchmark swaps): creating and deleting sessions in the log's order, guarded
//!   batches of appends applied by [`EventLog::apply`] in one transaction (events,
//!   status, interrupts and de-duplication rows together, so readers never see an event
//!   without its effects, and appends fenced by the run's lease), replay and frames
//!   after a seq, the change feed, upkeep.
//! - **The run leases** ([`RunLeases`]): which instance executes a session's run, taken
//!   over, renewed and handed back, written once for both backends (`sql/leases.rs`).
//! - **The records** ([`Records`]), a trait per job: session rows ([`Sessions`]: the
//!   list, search, rename, retention), share links ([`Shares`]), users and their secrets
//!   ([`Users`]), interrupts and queued messages as read ([`InterruptReads`],
//!   [`QueueReads`]), the webhook outbox, attachments, feedback, budgets, instructions.
//!   Each job's SQL (`sql/`) implements its trait, expanded once per backend.
//!
//! [`Store`] is all three, from one backend: `sqlite/` is the embedded one, `postgres/` the
//! one several instances share. What every backend shares lives here once: guard
//! decisions (`guards.rs`) and the guard's SQL with its reads and writes
//! (`sql/guards.rs`, over each backend's [`sql`]-level `GuardRows`), effects of events
//! (`effects.rs`, `advances.rs`), leases' terms (`leases.rs`), the frame layout
//! (`frame_page.rs`), row decoding (`rows.rs`), the records' SQL (`sql/`, the same text
//! on both backends). The rows, errors and commands everything imports are leaves that
//! import no backend; this file only declares the modules, the umbrella traits and the
//! re-exports. This module must not know about HTTP, sockets or the agent loop.
//! `docs/architecture.md` ("The store") tables each file.

mod advances;
mod attachments;
mod batch;
mod budgets;
mod changes;
mod command;
#[cfg(test)]
pub(crate) mod contract;
#[cfg(test)]
pub(crate) mod contract_tests;
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
mod replays;
mod rows;
mod schedules;
mod sessions;
mod shares;
mod sql;
mod sqlite;
mod user_tools;
/// A migrated SQLite store on a fresh file, for tests outside the store.
#[cfg(test)]
pub(crate) use sqlite::test_support::temp_store;
mod users;
#[cfg(test)]
pub(crate) mod webhook_contract;
mod webhooks;

pub use attachments::{AttachmentRow, Attachments, ChunkStored, FinishedUpload, CHUNK_BYTES};
pub(crate) use batch::Batch;
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
pub use interrupts::{InterruptReads, InterruptRow, InterruptState};
pub use leases::RunLeases;
pub use open::{open, Backend, OpenError, UnsupportedUrl, UseStore};
pub use options::{StoreOptions, DEFAULT_LOG_WRITERS};
pub use postgres::scratch::ScratchDatabase;
pub use postgres::{PostgresStore, LISTENER_NAME};
pub use queued::{QueueReads, QueuedExtra, QueuedRow, MAX_QUEUED};
pub use replays::{EvalRow, ReplayRow, Replays, TrialRow};
pub use schedules::{FireClaim, FireRow, ScheduleChange, ScheduleRow, Schedules};
pub use sessions::{Fork, Found, NewBranch, SessionRow, Sessions, DEFAULT_TITLE};
pub use shares::{ShareRow, Shares};
#[cfg(test)]
pub(crate) use sqlite::test_support;
pub use sqlite::{SqliteRecords, SqliteStore};
pub use user_tools::{UserToolRow, UserTools};
pub use users::{SignInMatch, UserRow, Users};
pub use webhooks::{
    Attempt, DeliveryRow, Target, Wanted, WebhookOutbox, FEEDBACK, RUN_ENDED, WAITING,
};

/// The storage Tandem needs: the event log, its run leases and the records, from one
/// backend.
pub trait Store: EventLog + RunLeases + Records {}

impl<T: EventLog + RunLeases + Records> Store for T {}

/// The records around the log, a trait per job, each implemented once per backend by its
/// SQL (`sql/`): session rows, share links, users and their secrets, interrupts and queued
/// messages as read, the webhook outbox, attachments, feedback, budgets, a person's own
/// instructions and tools.
pub trait Records:
    Sessions
    + Shares
    + Users
    + InterruptReads
    + QueueReads
    + WebhookOutbox
    + Attachments
    + FeedbackReads
    + Budgets
    + Instructions
    + UserTools
    + Schedules
    + Replays
{
}

impl<T> Records for T where
    T: Sessions
        + Shares
        + Users
        + InterruptReads
        + QueueReads
        + WebhookOutbox
        + Attachments
        + FeedbackReads
        + Budgets
        + Instructions
        + UserTools
        + Schedules
        + Replays
{
}
