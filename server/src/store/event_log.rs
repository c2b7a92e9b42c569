//! The event log's trait, per backend: the hot path, and the only part the benchmark
//! swaps. What it hands back besides the store's shared rows: an event as stored, what a
//! replay handed on, when its upkeep is due.

use std::future::Future;

use super::{Applied, Change, Command, FramePage, NewBranch, SessionRow, StoreError};
use crate::domain::{SessionId, UserId};

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

    /// Creates `branch.id`, a branch of `fork.parent` sharing its events `1..=fork.at_seq`
    /// (read from the rows that hold them, never copied; a seq inside the parent's own
    /// shared prefix makes it a branch of the ancestor that holds it), idle unless it waits
    /// as [`NewBranch::waiting`] says, owned by the parent's owner. `None` when the parent
    /// does not exist or has fewer events. Whether the seq is a place a branch may part
    /// (between runs) is the caller's to decide.
    fn fork_session(
        &self,
        branch: NewBranch<'_>,
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
           + Send;

    /// Whether the database answers (a trivial query).
    fn ping(&self) -> impl Future<Output = Result<(), StoreError>> + Send;

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
    fn log_upkeep(&self) -> impl Future<Output = Result<Upkeep, StoreError>> + Send;

    /// Does now all the upkeep [`EventLog::log_upkeep`] would do eventually, for whoever
    /// applies batches without the log writer (a benchmark seeding a log, say).
    fn settle_log(&self) -> impl Future<Output = Result<(), StoreError>> + Send;
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
