//! Applying a batch of commands inside one transaction, on the writer's direct
//! connection ([`super::direct`]): guards, seq allocation, derived status and
//! interrupts, then the event rows, appended to the log's tail ([`super::tail`]) with
//! multi-row INSERTs. A batch of plain appends (the token path) takes
//! [`super::appends`], which writes no `sessions` row unless a status changes.
//! Statements come from rusqlite's cache of prepared statements.

use std::collections::HashMap;
use std::sync::OnceLock;

use rusqlite::{params, params_from_iter, Connection, OptionalExtension, ToSql};

use super::guards::check_guard;
use super::log::{LogState, NewRows};
use super::tail::{Tail, TailRow};
use crate::domain::SessionId;
use crate::store::leases::LeaseTerms;
use crate::store::sql::budgets::ADD_SPENDING;
use crate::store::sql::guards::SET_STATE_SEQ;
use crate::store::sql::interrupts::{INSERT_INTERRUPT, INSERT_RUN_END};
use crate::store::{
    day_of, derive_effects, Applied, Change, Command, Rejection, RunEnd, Spending, StoreError,
};

/// Rows per multi-row INSERT at most (4 parameters each, far below SQLite's limit).
const INSERT_CHUNK: usize = 256;

/// Splits `items` into chunks whose sizes are powers of two no larger than `max` (a power
/// of two): full chunks first, then the rest by its binary digits. A multi-row statement
/// then has one of a handful of shapes, each prepared once and kept in the connection's
/// statement cache, instead of a new statement to parse for every batch size.
pub(super) fn shaped_chunks<T>(items: &[T], max: usize) -> impl Iterator<Item = &[T]> {
    let mut rest = items;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let size = max.min(1 << rest.len().ilog2());
        let (chunk, tail) = rest.split_at(size);
        rest = tail;
        Some(chunk)
    })
}

/// `(?, ?, …), (?, ?, …), …`: `rows` groups of `columns` placeholders.
pub(super) fn value_rows(rows: usize, columns: usize) -> String {
    let row = format!("({})", vec!["?"; columns].join(", "));
    vec![row; rows].join(", ")
}

/// A multi-row statement's SQL in each of its [`shaped_chunks`] sizes (powers of two up
/// to 256), each built the first time it is needed: the token path looks up a string
/// instead of formatting kilobytes of placeholders for every chunk.
pub(super) struct ShapedSql {
    build: fn(usize) -> String,
    built: [OnceLock<String>; 9],
}

impl ShapedSql {
    /// Shapes that `build` makes for a number of rows.
    pub const fn new(build: fn(usize) -> String) -> Self {
        Self {
            build,
            built: [const { OnceLock::new() }; 9],
        }
    }

    /// The SQL for `rows` rows (a power of two, at most 256).
    pub fn get(&self, rows: usize) -> &str {
        assert!(rows.is_power_of_two() && rows <= 256, "{rows} rows");
        self.built[rows.ilog2() as usize].get_or_init(|| (self.build)(rows))
    }
}

/// `(?, ?, ?, ?), …`: the tail INSERT's rows (position, session, seq, event).
static INSERT_TAIL: ShapedSql = ShapedSql::new(|rows| {
    format!(
        "INSERT INTO events_tail (position, session_id, seq, event) VALUES {}",
        value_rows(rows, 4)
    )
});

/// The seqs a batch hands out and the tail rows it appends, in order.
///
/// A session's last seq is the batch's own if it appended already, else the tail's in
/// memory if it has rows there, else `sessions.last_seq` (which is then exact); `None`
/// when the session does not exist.
pub(super) struct Appended<'a> {
    tail: &'a Tail,
    next_position: i64,
    last: HashMap<SessionId, u64>,
    rows: Vec<(SessionId, i64, u64, &'a str)>,
    /// Sessions whose listed row (status, title) changed, announced after the commit.
    listed: Vec<SessionId>,
    /// Sessions whose queued messages changed, announced after the commit.
    queues: Vec<SessionId>,
}

impl<'a> Appended<'a> {
    pub fn new(tail: &'a Tail, next_position: i64) -> Self {
        Self {
            tail,
            next_position,
            last: HashMap::new(),
            rows: Vec::new(),
            listed: Vec::new(),
            queues: Vec::new(),
        }
    }

    /// Notes that the session's listed row changed.
    pub fn listed(&mut self, session: SessionId) {
        if !self.listed.contains(&session) {
            self.listed.push(session);
        }
    }

    /// The session's last seq so far, `None` if it does not exist.
    pub fn last_seq(
        &self,
        conn: &Connection,
        session: SessionId,
    ) -> Result<Option<u64>, StoreError> {
        if let Some(last) = self
            .last
            .get(&session)
            .copied()
            .or_else(|| self.tail.last_seq(session))
        {
            return Ok(Some(last));
        }
        let last: Option<i64> = conn
            .prepare_cached("SELECT last_seq FROM sessions WHERE id = ?")?
            .query_row([session.to_string()], |row| row.get(0))
            .optional()?;
        Ok(last.map(|last| last as u64))
    }

    /// Hands the command's entries the session's next seqs; returns the first, or `None`
    /// if the session does not exist.
    pub fn push(
        &mut self,
        conn: &Connection,
        command: &'a Command,
    ) -> Result<Option<u64>, StoreError> {
        let Some(last) = self.last_seq(conn, command.session)? else {
            return Ok(None);
        };
        for (offset, entry) in command.entries.iter().enumerate() {
            let seq = last + 1 + offset as u64;
            self.rows.push((
                command.session,
                self.next_position,
                seq,
                entry.json.as_str(),
            ));
            self.next_position += 1;
        }
        self.last
            .insert(command.session, last + command.entries.len() as u64);
        Ok(Some(last + 1))
    }

    /// Inserts the rows into the tail table, many per statement; returns them as the
    /// memory of the tail takes them after the commit.
    pub fn insert(self, conn: &Connection) -> Result<NewRows, StoreError> {
        let ids: HashMap<SessionId, String> = self
            .last
            .keys()
            .map(|session| (*session, session.to_string()))
            .collect();
        for chunk in shaped_chunks(&self.rows, INSERT_CHUNK) {
            let values = chunk.iter().flat_map(|(session, position, seq, json)| {
                [position as &dyn ToSql, &ids[session], seq, json]
            });
            conn.prepare_cached(INSERT_TAIL.get(chunk.len()))?
                .execute(params_from_iter(values))?;
        }
        Ok(self
            .rows
            .into_iter()
            .map(|(session, position, seq, json)| {
                let row = TailRow {
                    seq,
                    position,
                    json: json.into(),
                };
                (session, row)
            })
            .collect())
    }
}

/// One batch in one transaction as the log's writer ([`LogState::transaction`]); with
/// the outcomes, what to announce once it is committed (the sessions whose listed row
/// changed, those whose queued messages did).
pub(super) fn apply_batch(
    conn: &Connection,
    lease: &LeaseTerms,
    log: &LogState,
    batch: &[Command],
    now_ms: i64,
) -> Result<(Vec<Applied>, Vec<Change>), StoreError> {
    log.transaction(conn, |conn, next_position| {
        let mut appended = Appended::new(&log.tail, next_position);
        let applied = apply_in_transaction(conn, lease, batch, now_ms, &mut appended)?;
        let listed = std::mem::take(&mut appended.listed);
        let queues = std::mem::take(&mut appended.queues);
        let announced = listed
            .into_iter()
            .map(|session| Change::Listed { session })
            .chain(queues.into_iter().map(|session| Change::Queued { session }))
            .collect();
        Ok(((applied, announced), appended.insert(conn)?))
    })
}

/// Checks each guard and applies the commands that pass; rows are inserted at the end,
/// many per statement.
fn apply_in_transaction<'a>(
    conn: &Connection,
    lease: &LeaseTerms,
    batch: &'a [Command],
    now_ms: i64,
    appended: &mut Appended<'a>,
) -> Result<Vec<Applied>, StoreError> {
    if batch.iter().all(Command::is_plain_append) {
        return super::appends::apply_appends(conn, lease, batch, now_ms, appended);
    }
    let mut applied = Vec::with_capacity(batch.len());
    for command in batch {
        let session = command.session.to_string();
        if let Some(rejection) = check_guard(conn, appended, lease, command, &session, now_ms)? {
            applied.push(Applied::Rejected(rejection));
            continue;
        }
        let Some(first_seq) = advance_session(conn, command, &session, now_ms, appended)? else {
            applied.push(Applied::Rejected(Rejection::SessionMissing));
            continue;
        };
        if command.guard.changes_queue() && !appended.queues.contains(&command.session) {
            appended.queues.push(command.session);
        }
        applied.push(Applied::Committed { first_seq });
    }
    Ok(applied)
}

/// Hands the command its seqs, writes the session's derived status (and exact
/// `last_seq`) when it changes or a person acted, records raised interrupts and ended
/// runs; returns the first seq, or `None` if the session does not exist.
fn advance_session<'a>(
    conn: &Connection,
    command: &'a Command,
    session: &str,
    now_ms: i64,
    appended: &mut Appended<'a>,
) -> Result<Option<u64>, StoreError> {
    let Some(first_seq) = appended.push(conn, command)? else {
        return Ok(None);
    };
    let last = (first_seq + command.entries.len() as u64 - 1) as i64;
    let effects = derive_effects(&command.entries);
    match &effects.status {
        Some((status, run_id)) => {
            conn.prepare_cached(
                "UPDATE sessions SET last_seq = ?, updated_at = ?, status = ?, \
                 active_run_id = ? WHERE id = ?",
            )?
            .execute(params![last, now_ms, status.as_str(), run_id, session])?;
            appended.listed(command.session);
        }
        None if touches(command) => {
            conn.prepare_cached("UPDATE sessions SET last_seq = ?, updated_at = ? WHERE id = ?")?
                .execute(params![last, now_ms, session])?;
        }
        None => {}
    }
    if let Some(index) = effects.last_state {
        conn.prepare_cached(SET_STATE_SEQ)?
            .execute(params![first_seq as i64 + index as i64, session])?;
    }
    insert_interrupts(conn, session, &effects.interrupts, now_ms)?;
    insert_run_ends(conn, session, first_seq as i64, &effects.run_ends, now_ms)?;
    add_spending(conn, session, effects.spending, now_ms)?;
    Ok(Some(first_seq))
}

/// Whether a command that changes no status still moves the session's `updated_at`
/// ([`crate::store::Guard::moves_activity`]).
fn touches(command: &Command) -> bool {
    command.guard.moves_activity()
}

/// Records the interrupts a command raised.
pub(super) fn insert_interrupts(
    conn: &Connection,
    session: &str,
    interrupts: &[(String, shared::Interrupt)],
    now_ms: i64,
) -> Result<(), StoreError> {
    for (run_id, interrupt) in interrupts {
        let json = serde_json::to_string(interrupt).expect("interrupts serialise");
        conn.prepare_cached(INSERT_INTERRUPT)?.execute(params![
            interrupt.id,
            session,
            run_id,
            interrupt.tool_call_id.as_deref().unwrap_or_default(),
            json,
            now_ms,
            crate::domain::deadline_ms(interrupt),
            interrupt.reason,
        ])?;
    }
    Ok(())
}

/// Records the runs a command ended (its entries got `first_seq`, …), so that a webhook
/// announcing each is owed in the same transaction.
pub(super) fn insert_run_ends(
    conn: &Connection,
    session: &str,
    first_seq: i64,
    ends: &[RunEnd],
    now_ms: i64,
) -> Result<(), StoreError> {
    for end in ends {
        let seq = first_seq + end.index as i64;
        conn.prepare_cached(INSERT_RUN_END)?.execute(params![
            format!("{session}:{seq}"),
            session,
            end.run_id,
            end.outcome,
            end.error.as_ref().map(|e| e.to_string()),
            now_ms,
        ])?;
    }
    Ok(())
}

/// Adds what a command's model calls cost to its session owner's day.
pub(super) fn add_spending(
    conn: &Connection,
    session: &str,
    spending: Option<Spending>,
    now_ms: i64,
) -> Result<(), StoreError> {
    let Some(spending) = spending else {
        return Ok(());
    };
    conn.prepare_cached(ADD_SPENDING)?.execute(params![
        day_of(now_ms),
        spending.cost_usd,
        spending.tokens as i64,
        spending.calls,
        session,
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::shaped_chunks;

    #[test]
    fn chunks_come_in_powers_of_two_and_cover_everything_in_order() {
        let items: Vec<usize> = (0..600).collect();
        let sizes: Vec<usize> = shaped_chunks(&items, 256).map(<[usize]>::len).collect();
        assert_eq!(sizes, [256, 256, 64, 16, 8]);
        let joined: Vec<usize> = shaped_chunks(&items, 256).flatten().copied().collect();
        assert_eq!(joined, items);
        assert_eq!(shaped_chunks::<u8>(&[], 256).count(), 0);
    }
}
