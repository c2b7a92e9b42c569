//! The seqs a batch hands out and the rows it appends to the log's tail, in order: what
//! the general path ([`super::apply`]), the all-appends path ([`super::appends`]) and the
//! guards' reads of a head ([`super::guards`]) share within one transaction.

use std::collections::HashMap;

use rusqlite::{params_from_iter, Connection, OptionalExtension, ToSql};

use super::log::NewRows;
use super::shaped::{shaped_chunks, value_rows, ShapedSql};
use super::tail::{Tail, TailRow};
use crate::domain::SessionId;
use crate::store::{Change, Command, StoreError};

/// Rows per multi-row INSERT at most (4 parameters each, far below SQLite's limit).
const INSERT_CHUNK: usize = 256;

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

    /// Notes that the session's queued messages changed.
    pub fn queue_changed(&mut self, session: SessionId) {
        if !self.queues.contains(&session) {
            self.queues.push(session);
        }
    }

    /// What to announce once the batch is committed: the sessions whose listed row
    /// changed, then those whose queued messages did.
    pub fn announced(&mut self) -> Vec<Change> {
        let listed = std::mem::take(&mut self.listed);
        let queues = std::mem::take(&mut self.queues);
        listed
            .into_iter()
            .map(|session| Change::Listed { session })
            .chain(queues.into_iter().map(|session| Change::Queued { session }))
            .collect()
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
