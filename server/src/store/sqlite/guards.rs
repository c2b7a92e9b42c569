//! Guards on SQLite: the statements of [`crate::store::sql::guards`] run through the log
//! writer's rusqlite connection, inside its transaction. Nothing here waits: the shared
//! (async) guard code finishes in one poll.

use futures_util::FutureExt;
use rusqlite::{params_from_iter, Connection, OptionalExtension, ToSql};

use super::appended::Appended;
use crate::domain::SessionId;
use crate::store::leases::LeaseTerms;
use crate::store::sql::guards::{GuardRows, Param, INTERRUPT_FACTS, SESSION_FACTS};
use crate::store::{Command, Rejection, StoreError};

/// Returns why the command may not be applied, or records what its guard owns (the
/// de-duplication row, the title, the interrupt's answer) and returns `None`.
pub(super) fn check_guard(
    conn: &Connection,
    appended: &Appended<'_>,
    lease: &LeaseTerms,
    command: &Command,
    session: &str,
    now_ms: i64,
) -> Result<Option<Rejection>, StoreError> {
    let mut rows = SqliteGuardRows {
        conn,
        appended,
        session: command.session,
    };
    crate::store::sql::guards::check_guard(&mut rows, lease, command, session, now_ms)
        .now_or_never()
        .expect("SQLite's guard rows never wait")
}

/// The writer's connection, as the guards read and write it, with the seqs the batch
/// handed out so far (a head is the batch's, the tail's in memory, or the row's).
struct SqliteGuardRows<'c, 'a> {
    conn: &'c Connection,
    appended: &'c Appended<'a>,
    /// The command's session, whose head [`GuardRows::head`] reads.
    session: SessionId,
}

impl GuardRows for SqliteGuardRows<'_, '_> {
    async fn session_row(
        &mut self,
        session: &str,
    ) -> Result<Option<(String, Option<String>)>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(SESSION_FACTS)?
            .query_row([session], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?)
    }

    async fn text_row(
        &mut self,
        sql: &'static str,
        params: &[Param<'_>],
    ) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(sql)?
            .query_row(params_from_iter(params.iter().map(as_sql)), |row| {
                row.get(0)
            })
            .optional()?)
    }

    async fn interrupt_row(
        &mut self,
        interrupt_id: &str,
        session: &str,
    ) -> Result<Option<(String, Option<String>, Option<String>)>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(INTERRUPT_FACTS)?
            .query_row([interrupt_id, session], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .optional()?)
    }

    async fn head(&mut self, _session: &str) -> Result<u64, StoreError> {
        Ok(self
            .appended
            .last_seq(self.conn, self.session)?
            .unwrap_or(0))
    }

    async fn execute(&mut self, sql: &'static str, params: &[Param<'_>]) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(sql)?
            .execute(params_from_iter(params.iter().map(as_sql)))?;
        Ok(())
    }
}

fn as_sql<'a>(param: &'a Param<'a>) -> &'a dyn ToSql {
    match param {
        Param::Text(text) => text,
        Param::MaybeText(text) => text,
        Param::Int(number) => number,
    }
}
