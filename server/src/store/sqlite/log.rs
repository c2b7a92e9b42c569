//! The log writer's side of a SQLite store: its memory of the tail, its mark on the log,
//! and the transaction every write of the log runs in.
//!
//! A write takes the log over before anything else if this store never wrote (folding
//! whatever the tail table holds, so its memory of the tail starts true), and refuses if
//! another store took the log over since. Rows a write appended reach the memory of the
//! tail after the commit and before the write returns, so whoever learns of a commit (the
//! producer, a viewer) reads it back.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Instant;

use rusqlite::{Connection, OptionalExtension};

use super::fold;
use super::tail::{FoldPlan, Tail, TailRow};
use crate::domain::SessionId;
use crate::store::{ErrorKind, StoreError, Upkeep};

/// Rows one transaction of [`LogState::settle`] folds at most.
const SETTLE_SLICE: usize = 4096;

/// What the writer of a SQLite log keeps between writes.
pub(super) struct LogState {
    pub tail: Tail,
    /// This store's mark on the log (fresh for each open store).
    token: String,
    /// Whether this store took the log over (and so may have appended).
    claimed: AtomicBool,
    /// Every tail row below this position is deleted from the table.
    trimmed_below: AtomicI64,
}

impl Default for LogState {
    fn default() -> Self {
        Self {
            tail: Tail::default(),
            token: crate::domain::new_id("store"),
            claimed: AtomicBool::new(false),
            trimmed_below: AtomicI64::new(0),
        }
    }
}

/// One round of upkeep: rows to fold, and the position below which the table may be
/// trimmed.
pub(super) struct UpkeepPlan {
    fold: FoldPlan,
    trim_below: i64,
}

impl UpkeepPlan {
    /// Whether the round has nothing to do.
    pub fn is_empty(&self) -> bool {
        self.fold.is_empty() && self.trim_below <= 0
    }
}

/// What a write appended to the tail, in commit order.
pub(super) type NewRows = Vec<(SessionId, TailRow)>;

impl LogState {
    /// Runs `write` in one `BEGIN IMMEDIATE … COMMIT` transaction as the log's writer;
    /// `write` gets the position of the next tail row and returns its value and the rows
    /// it appended. Rolled back on any error.
    pub fn transaction<T>(
        &self,
        conn: &Connection,
        write: impl FnOnce(&Connection, i64) -> Result<(T, NewRows), StoreError>,
    ) -> Result<T, StoreError> {
        let (value, rows, fresh_start) = in_transaction(conn, || {
            let fresh_start = self.claim(conn)?;
            let next_position = fresh_start.unwrap_or_else(|| self.tail.next_position());
            let (value, rows) = write(conn, next_position)?;
            Ok((value, rows, fresh_start))
        })?;
        if let Some(next_position) = fresh_start {
            self.tail.reset(next_position);
            self.trimmed_below.store(next_position, Ordering::Release);
            self.claimed.store(true, Ordering::Release);
        }
        self.tail.committed(rows, Instant::now());
        Ok(value)
    }

    /// Checks the log's mark, taking the log over if it is free; returns the next
    /// position after a takeover (the tail table is then empty).
    fn claim(&self, conn: &Connection) -> Result<Option<i64>, StoreError> {
        let claimed = self.claimed.load(Ordering::Acquire);
        match read_mark(conn, &self.token, claimed)? {
            Mark::Ours => Ok(None),
            Mark::Displaced => Err(displaced()),
            Mark::Free => {
                let next_position = fold::fold_all(conn)?;
                put_mark(conn, &self.token)?;
                Ok(Some(next_position))
            }
        }
    }

    /// What the next round of upkeep does: fold the tail's rows that are due (at most a
    /// slice) and trim the table below the lowest row still held.
    pub fn plan_upkeep(&self) -> UpkeepPlan {
        if !self.claimed.load(Ordering::Acquire) {
            return UpkeepPlan {
                fold: FoldPlan::default(),
                trim_below: 0,
            };
        }
        let lowest = self.tail.lowest_position();
        let trimmed = self.trimmed_below.load(Ordering::Acquire);
        UpkeepPlan {
            fold: self.tail.plan(Instant::now()),
            trim_below: if lowest > trimmed { lowest } else { 0 },
        }
    }

    /// Runs a round of upkeep in one transaction; the folded rows leave memory after it.
    pub fn run_upkeep(&self, conn: &Connection, plan: &UpkeepPlan) -> Result<(), StoreError> {
        let (trimmed, gone) = self.transaction(conn, |conn, _| {
            let gone = fold::fold_rows(conn, &plan.fold)?;
            let trimmed = match plan.trim_below {
                0 => None,
                below => Some(fold::trim(conn, below)?),
            };
            Ok(((trimmed, gone), Vec::new()))
        })?;
        self.tail.folded(&plan.fold);
        for session in gone {
            self.tail.forget(session);
        }
        if let Some(trimmed) = trimmed {
            self.trimmed_below.store(trimmed, Ordering::Release);
        }
        Ok(())
    }

    /// Folds every row held and trims the whole table, in transactions of up to
    /// [`SETTLE_SLICE`] rows.
    pub fn settle(&self, conn: &Connection) -> Result<(), StoreError> {
        loop {
            let plan = UpkeepPlan {
                fold: self.tail.plan_everything(SETTLE_SLICE),
                trim_below: self.tail.lowest_position(),
            };
            let done = plan.fold.is_empty()
                && plan.trim_below <= self.trimmed_below.load(Ordering::Acquire);
            if done || !self.claimed.load(Ordering::Acquire) {
                return Ok(());
            }
            self.run_upkeep(conn, &plan)?;
        }
    }

    /// When upkeep is due again.
    pub fn next_upkeep(&self) -> Upkeep {
        let behind = self.tail.lowest_position() > self.trimmed_below.load(Ordering::Acquire);
        if self.tail.crowded() {
            Upkeep::Soon
        } else if self.tail.len() > 0 || (behind && self.claimed.load(Ordering::Acquire)) {
            Upkeep::Later
        } else {
            Upkeep::Done
        }
    }

    /// Folds whatever the tail table holds into `events` (opening a store: another
    /// process may have left rows there), in its own transaction.
    pub fn fold_at_open(conn: &Connection) -> Result<(), StoreError> {
        in_transaction(conn, || fold::fold_all(conn).map(drop))
    }
}

/// Runs `write` in one `BEGIN IMMEDIATE … COMMIT` transaction; rolled back on any error.
/// Every write on the store's connection begins so: a deferred transaction that reads
/// first gets `SQLITE_BUSY` at once, without the busy wait, when it then writes after
/// another connection committed.
pub(super) fn in_transaction<T>(
    conn: &Connection,
    write: impl FnOnce() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
    let outcome = write().and_then(|value| {
        conn.prepare_cached("COMMIT")?.execute([])?;
        Ok(value)
    });
    if outcome.is_err() && !conn.is_autocommit() {
        // Nothing was committed; leave the connection outside any transaction. A failed
        // rollback shows at the next BEGIN.
        let _ = conn.execute_batch("ROLLBACK");
    }
    outcome
}

/// Whose mark is on the log, as a store sees it at the start of a write.
enum Mark {
    /// This store's: it appends, and its memory of the tail is the truth.
    Ours,
    /// Nobody's, or another store's that this one never displaced: this store may take
    /// the log over.
    Free,
    /// Another store's, after this one had appended: it must stop writing.
    Displaced,
}

/// Reads the log's mark for the store `token`, which has (or has not) appended before.
fn read_mark(conn: &Connection, token: &str, appended_before: bool) -> Result<Mark, StoreError> {
    let owner: Option<String> = conn
        .prepare_cached("SELECT owner FROM log_writer WHERE id = 1")?
        .query_row([], |row| row.get(0))
        .optional()?;
    Ok(match owner {
        Some(owner) if owner == token => Mark::Ours,
        Some(_) if appended_before => Mark::Displaced,
        _ => Mark::Free,
    })
}

/// Puts the store `token`'s mark on the log.
fn put_mark(conn: &Connection, token: &str) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO log_writer (id, owner) VALUES (1, ?) \
         ON CONFLICT (id) DO UPDATE SET owner = excluded.owner",
    )?
    .execute([token])?;
    Ok(())
}

/// The error of a store whose log another store took over.
fn displaced() -> StoreError {
    StoreError::of_kind(
        ErrorKind::Fatal,
        "another Tandem process took this database's log over (SQLite serves one instance \
         per file); this one no longer writes to it"
            .into(),
    )
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
