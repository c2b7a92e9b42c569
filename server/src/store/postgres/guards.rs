//! Guards on PostgreSQL: the statements of [`crate::store::sql::guards`] run through
//! sqlx on the batch's connection (the session row is already locked by the batch).

use sqlx::PgConnection;

use crate::store::sql::guards::{GuardRows, Param, INTERRUPT_FACTS, SESSION_FACTS};
use crate::store::StoreError;

/// `$query` with each of `$params` bound in order (a macro: sqlx's `Query` and `QueryAs`
/// share no trait that binds).
macro_rules! bind_params {
    ($query:expr, $params:expr) => {{
        let mut query = $query;
        for param in $params {
            query = match *param {
                Param::Text(text) => query.bind(text),
                Param::MaybeText(text) => query.bind(text),
                Param::Int(number) => query.bind(number),
            };
        }
        query
    }};
}

pub(super) use crate::store::sql::guards::check_guard;

/// The batch's connection, as the guards read and write it.
pub(super) struct PgGuardRows<'c>(pub &'c mut PgConnection);

impl GuardRows for PgGuardRows<'_> {
    async fn session_row(
        &mut self,
        session: &str,
    ) -> Result<Option<(String, Option<String>)>, StoreError> {
        Ok(sqlx::query_as(SESSION_FACTS)
            .bind(session)
            .fetch_optional(&mut *self.0)
            .await?)
    }

    async fn text_row(
        &mut self,
        sql: &'static str,
        params: &[Param<'_>],
    ) -> Result<Option<String>, StoreError> {
        let row: Option<(String,)> = bind_params!(sqlx::query_as(sql), params)
            .fetch_optional(&mut *self.0)
            .await?;
        Ok(row.map(|(text,)| text))
    }

    async fn interrupt_row(
        &mut self,
        interrupt_id: &str,
        session: &str,
    ) -> Result<Option<(String, Option<String>, Option<String>)>, StoreError> {
        Ok(sqlx::query_as(INTERRUPT_FACTS)
            .bind(interrupt_id)
            .bind(session)
            .fetch_optional(&mut *self.0)
            .await?)
    }

    async fn head(&mut self, session: &str) -> Result<u64, StoreError> {
        let head: Option<i64> = sqlx::query_scalar(concat!(
            "SELECT ",
            super::head_of!("last_seq", "$1"),
            " FROM sessions WHERE id = $1"
        ))
        .bind(session)
        .fetch_optional(&mut *self.0)
        .await?;
        Ok(head.unwrap_or(0) as u64)
    }

    async fn execute(&mut self, sql: &'static str, params: &[Param<'_>]) -> Result<(), StoreError> {
        bind_params!(sqlx::query(sql), params)
            .execute(&mut *self.0)
            .await?;
        Ok(())
    }
}
