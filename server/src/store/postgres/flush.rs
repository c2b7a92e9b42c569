//! Whether the database's commits wait for their WAL to be flushed. Tandem's promises rest
//! on it: an event a viewer saw is still in the log after PostgreSQL crashes, and a log
//! writer's known head ([`super::heads`]) is never ahead of the log. With
//! `synchronous_commit = off` (for the server, the database or the role) a crash can lose
//! the last commits after viewers saw them, and the next appends would take their seqs
//! again. The store says so loudly when it connects rather than refusing: an operator may
//! accept that for a throwaway database (the benchmark's figure 9f measures one).

use sqlx::PgPool;

use crate::store::StoreError;

/// Whether commits on `pool`'s connections wait for the WAL's flush: every setting of
/// `synchronous_commit` but `off` does (`local` and the replica ones flush locally first).
async fn commits_wait_for_flush(pool: &PgPool) -> Result<bool, StoreError> {
    let setting: String = sqlx::query_scalar("SHOW synchronous_commit")
        .fetch_one(pool)
        .await?;
    Ok(setting != "off")
}

/// Warns when commits do not wait for the flush ([`commits_wait_for_flush`]).
pub(super) async fn warn_unless_flushed(pool: &PgPool) -> Result<(), StoreError> {
    if !commits_wait_for_flush(pool).await? {
        tracing::warn!(
            "synchronous_commit is off for this database: a PostgreSQL crash can lose the \
             last events viewers already saw, and the seqs after them would be handed out \
             again; set it to on (PostgreSQL's default) to keep Tandem's log exact"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::commits_wait_for_flush;
    use crate::store::postgres::test_support::temp_store;
    use crate::store::PostgresStore;

    #[tokio::test]
    async fn off_only_where_the_database_turns_the_flush_off() {
        let (database, store) = temp_store().await;
        assert!(commits_wait_for_flush(store.pool()).await.unwrap());
        let off = format!(
            "ALTER DATABASE \"{}\" SET synchronous_commit = off",
            database.name()
        );
        sqlx::query(&off).execute(store.pool()).await.unwrap();
        // The setting holds for connections made after it.
        let reopened = PostgresStore::connect(database.url(), &Default::default())
            .await
            .unwrap();
        assert!(!commits_wait_for_flush(reopened.pool()).await.unwrap());
    }
}
