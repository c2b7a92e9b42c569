//! The fast path for a batch of plain appends (`Guard::Append` only): one
//! `UPDATE … FROM (VALUES …) RETURNING` advances every session of the batch at once
//! (seqs, derived status), instead of one statement per command. Seqs are then handed
//! out in command order, so a session's commands keep their order within the batch.

use std::collections::HashMap;

use shared::api::SessionStatus;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use super::apply::{insert_interrupts, insert_rows};
use crate::store::{derive_effects, Applied, Command, Effects, Rejection, StoreError};

/// Sessions per UPDATE (4 parameters each, far below SQLite's limit).
const SESSIONS_PER_UPDATE: usize = 400;

/// What the batch does to one session.
struct Advance {
    id: String,
    count: i64,
    /// The status the session's last status-changing command leaves it in.
    status: Option<(SessionStatus, Option<String>)>,
}

/// Applies a batch whose commands are all plain appends.
pub(super) async fn apply_appends(
    conn: &mut SqliteConnection,
    batch: &[Command],
    now_ms: i64,
) -> Result<Vec<Applied>, StoreError> {
    let effects: Vec<Effects> = batch.iter().map(|c| derive_effects(&c.entries)).collect();
    let advances = advances(batch, &effects);
    let mut next_seq: HashMap<String, i64> = HashMap::with_capacity(advances.len());
    for chunk in advances.chunks(SESSIONS_PER_UPDATE) {
        for (id, last) in update_sessions(conn, chunk, now_ms).await? {
            let count = chunk.iter().find(|a| a.id == id).map_or(0, |a| a.count);
            next_seq.insert(id, last - count + 1);
        }
    }
    let mut applied = Vec::with_capacity(batch.len());
    let mut rows: Vec<(String, i64, &str)> = Vec::new();
    for (command, effects) in batch.iter().zip(&effects) {
        let session = command.session.to_string();
        let Some(next) = next_seq.get_mut(&session) else {
            applied.push(Applied::Rejected(Rejection::SessionMissing));
            continue;
        };
        let first_seq = *next;
        *next += command.entries.len() as i64;
        for (offset, entry) in command.entries.iter().enumerate() {
            rows.push((
                session.clone(),
                first_seq + offset as i64,
                entry.json.as_str(),
            ));
        }
        insert_interrupts(conn, &session, &effects.interrupts, now_ms).await?;
        applied.push(Applied::Committed {
            first_seq: first_seq as u64,
        });
    }
    insert_rows(conn, &rows).await?;
    Ok(applied)
}

/// The per-session totals of a batch, in order of first appearance.
fn advances(batch: &[Command], effects: &[Effects]) -> Vec<Advance> {
    let mut order: HashMap<String, usize> = HashMap::new();
    let mut advances: Vec<Advance> = Vec::new();
    for (command, effects) in batch.iter().zip(effects) {
        let id = command.session.to_string();
        let at = *order.entry(id.clone()).or_insert_with(|| {
            advances.push(Advance {
                id,
                count: 0,
                status: None,
            });
            advances.len() - 1
        });
        let advance = &mut advances[at];
        advance.count += command.entries.len() as i64;
        if effects.status.is_some() {
            advance.status = effects.status.clone();
        }
    }
    advances
}

/// Advances the sessions of one chunk; returns `(id, new last_seq)` of those that exist.
async fn update_sessions(
    conn: &mut SqliteConnection,
    chunk: &[Advance],
    now_ms: i64,
) -> Result<Vec<(String, i64)>, StoreError> {
    let mut update = QueryBuilder::<Sqlite>::new(
        "UPDATE sessions SET last_seq = last_seq + v.column2, updated_at = ",
    );
    update.push_bind(now_ms);
    update.push(
        ", status = coalesce(v.column3, status), \
         active_run_id = CASE WHEN v.column3 IS NULL THEN active_run_id ELSE v.column4 END \
         FROM (",
    );
    update.push_values(chunk, |mut row, advance| {
        let (status, run_id) = match &advance.status {
            Some((status, run_id)) => (Some(status.as_str()), run_id.clone()),
            None => (None, None),
        };
        row.push_bind(advance.id.as_str())
            .push_bind(advance.count)
            .push_bind(status)
            .push_bind(run_id);
    });
    update.push(") AS v WHERE sessions.id = v.column1 RETURNING sessions.id, sessions.last_seq");
    Ok(update.build_query_as().fetch_all(&mut *conn).await?)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{append, temp_store};
    use crate::domain::{SessionId, UserId};
    use crate::store::{Applied, Rejection, Store};

    #[tokio::test]
    async fn one_batch_of_appends_keeps_each_sessions_order_and_skips_missing_ones() {
        let (_dir, store) = temp_store().await;
        let a = SessionId::parse("0193a1f2-0000-7000-8000-00000000000a").unwrap();
        let b = SessionId::parse("0193a1f2-0000-7000-8000-00000000000b").unwrap();
        let missing = SessionId::parse("0193a1f2-0000-7000-8000-00000000000c").unwrap();
        for id in [a, b] {
            store
                .create_session(UserId::LOCAL, id, None, 0)
                .await
                .unwrap();
        }
        store.apply(&[append(a, &["a0"])], 0).await.unwrap();
        let batch = [
            append(a, &["a1", "a2"]),
            append(b, &["b1"]),
            append(missing, &["x"]),
            append(a, &["a3"]),
        ];
        let applied = store.apply(&batch, 0).await.unwrap();
        assert_eq!(
            applied,
            [
                Applied::Committed { first_seq: 2 },
                Applied::Committed { first_seq: 1 },
                Applied::Rejected(Rejection::SessionMissing),
                Applied::Committed { first_seq: 4 },
            ]
        );
        let texts: Vec<String> = store
            .events_after(a, 0, 10)
            .await
            .unwrap()
            .iter()
            .map(|row| row.json.clone())
            .collect();
        for (at, text) in texts.iter().enumerate() {
            assert!(text.contains(&format!("\"a{at}\"")), "{text}");
        }
        assert_eq!(store.session(a).await.unwrap().unwrap().last_seq, 4);
    }
}
