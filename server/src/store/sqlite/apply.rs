//! Applying a batch of commands inside one transaction: guards, seq allocation, derived
//! status and interrupts, then the event rows with multi-row INSERTs. A batch of plain
//! appends (the token path) takes [`super::appends`], which advances every session of
//! the batch with one statement.

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use super::guards::check_guard;
use crate::store::leases::LeaseTerms;
use crate::store::{derive_effects, Applied, Command, Guard, Rejection, StoreError};

/// Rows per multi-row INSERT at most (3 parameters each, far below SQLite's limit).
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

/// Checks each guard and applies the commands that pass; rows are inserted at the end,
/// many per statement.
pub(super) async fn apply_in_transaction(
    conn: &mut SqliteConnection,
    lease: &LeaseTerms,
    batch: &[Command],
    now_ms: i64,
) -> Result<Vec<Applied>, StoreError> {
    if batch
        .iter()
        .all(|command| matches!(command.guard, Guard::Append))
    {
        return super::appends::apply_appends(conn, lease, batch, now_ms).await;
    }
    let mut applied = Vec::with_capacity(batch.len());
    let mut rows: Vec<(String, i64, &str)> = Vec::new();
    for command in batch {
        if let Some(rejection) = check_guard(conn, lease, command, now_ms).await? {
            applied.push(Applied::Rejected(rejection));
            continue;
        }
        let session = command.session.to_string();
        let Some(first_seq) = advance_session(conn, command, &session, now_ms).await? else {
            applied.push(Applied::Rejected(Rejection::SessionMissing));
            continue;
        };
        for (offset, entry) in command.entries.iter().enumerate() {
            rows.push((
                session.clone(),
                first_seq + offset as i64,
                entry.json.as_str(),
            ));
        }
        applied.push(Applied::Committed {
            first_seq: first_seq as u64,
        });
    }
    insert_rows(conn, &rows).await?;
    Ok(applied)
}

/// Inserts event rows `(session, seq, json)`, many per statement.
pub(super) async fn insert_rows(
    conn: &mut SqliteConnection,
    rows: &[(String, i64, &str)],
) -> Result<(), StoreError> {
    for chunk in shaped_chunks(rows, INSERT_CHUNK) {
        let mut insert =
            QueryBuilder::<Sqlite>::new("INSERT INTO events (session_id, seq, event) ");
        insert.push_values(chunk, |mut row, (session, seq, json)| {
            row.push_bind(session.as_str())
                .push_bind(*seq)
                .push_bind(*json);
        });
        insert.build().execute(&mut *conn).await?;
    }
    Ok(())
}

/// Bumps `last_seq` (and the derived status), records raised interrupts; returns the
/// first seq of the command's entries, or `None` if the session does not exist.
async fn advance_session(
    conn: &mut SqliteConnection,
    command: &Command,
    session: &str,
    now_ms: i64,
) -> Result<Option<i64>, StoreError> {
    let effects = derive_effects(&command.entries);
    let count = command.entries.len() as i64;
    let last: Option<(i64,)> = match &effects.status {
        Some((status, run_id)) => {
            sqlx::query_as(
                "UPDATE sessions SET last_seq = last_seq + ?, updated_at = ?, status = ?, \
             active_run_id = ? WHERE id = ? RETURNING last_seq",
            )
            .bind(count)
            .bind(now_ms)
            .bind(status.as_str())
            .bind(run_id.as_deref())
            .bind(session)
            .fetch_optional(&mut *conn)
            .await?
        }
        None => sqlx::query_as(
            "UPDATE sessions SET last_seq = last_seq + ?, updated_at = coalesce(?, updated_at) \
                 WHERE id = ? RETURNING last_seq",
        )
        .bind(count)
        .bind(touches(command).then_some(now_ms))
        .bind(session)
        .fetch_optional(&mut *conn)
        .await?,
    };
    let Some((last,)) = last else {
        return Ok(None);
    };
    insert_interrupts(conn, session, &effects.interrupts, now_ms).await?;
    insert_run_ends(conn, session, last - count + 1, &effects.run_ends, now_ms).await?;
    Ok(Some(last - count + 1))
}

/// Whether a command that changes no status still moves the session's `updated_at`: a
/// person's command does, a run's plain append (a token) does not.
fn touches(command: &Command) -> bool {
    !matches!(command.guard, Guard::Append)
}

crate::store::sql::interrupts::interrupts_on!(SqliteConnection);

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
