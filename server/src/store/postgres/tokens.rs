//! The token path: a batch of plain appends that do nothing but add rows (content
//! deltas, tool-call arguments, reasoning) is one statement, sent without `BEGIN` or
//! `COMMIT`, so PostgreSQL runs it as one implicit transaction in one round trip. The
//! statement advances and locks the batch's sessions in id order (as the general path
//! does, fenced by the run leases alike), inserts the rows at the seqs the advance hands
//! out, and announces each session's new seqs on [`super::CHANGES_CHANNEL`], built by the
//! statement itself since only it knows them.

use std::collections::HashMap;

use sqlx::PgConnection;

use super::apply::Skipped;
use super::CHANGES_CHANNEL;
use crate::store::leases::LeaseTerms;
use crate::store::{derive_effects, Applied, Command, Effects, StoreError};

/// Announcement lines per notice. A line is `a <session> <first> <last>`: at most 78
/// bytes (a 36-byte id and two 19-digit seqs), so 64 of them stay well under
/// PostgreSQL's 8,000-byte payload.
const LINES_PER_NOTICE: i64 = 64;

/// The statement: `$1`/`$2` each session and how many rows it gets, `$3` this instance,
/// `$4`/`$5`/`$6` the rows (session, 1-based place among its rows in the batch, JSON),
/// `$7` the channel, `$8` lines per notice. Returns each advanced session's last seq;
/// the third column only makes the announcement run.
const APPEND_TOKENS: &str =
    "WITH advanced AS (UPDATE sessions AS s SET last_seq = s.last_seq + v.n \
     FROM UNNEST($1::text[], $2::bigint[]) AS v(id, n), \
       (SELECT id FROM sessions WHERE id = ANY($1) ORDER BY id FOR UPDATE) AS locked \
     WHERE s.id = v.id AND s.id = locked.id AND NOT EXISTS (SELECT 1 FROM run_leases l \
       WHERE l.session_id = s.id AND l.owner <> $3) \
     RETURNING s.id, s.last_seq, v.n), \
   inserted AS (INSERT INTO events (session_id, seq, event) \
     SELECT e.id, a.last_seq - a.n + e.k, e.event \
     FROM UNNEST($4::text[], $5::bigint[], $6::text[]) AS e(id, k, event) \
       JOIN advanced a ON a.id = e.id), \
   announced AS (SELECT pg_notify($7, string_agg(line, E'\\n')) FROM \
     (SELECT 'a ' || id || ' ' || (last_seq - n + 1) || ' ' || last_seq AS line, \
        (row_number() OVER ()) / $8 AS notice FROM advanced) AS lines GROUP BY notice) \
   SELECT id, last_seq, (SELECT count(*) FROM announced) FROM advanced";

/// Whether `batch` can take the token path: plain appends whose entries change nothing
/// but the log (no status, interrupt, stop, run end, spending or state).
pub(super) fn fits(batch: &[Command]) -> bool {
    batch.iter().all(|command| {
        command.is_plain_append()
            && !command.entries.is_empty()
            && derive_effects(&command.entries) == Effects::default()
    })
}

/// Applies a batch that [`fits`], on `conn` outside any transaction; one outcome per
/// command.
pub(super) async fn append_tokens(
    conn: &mut PgConnection,
    lease: &LeaseTerms,
    batch: &[Command],
) -> Result<Vec<Applied>, StoreError> {
    let sessions: Vec<String> = batch.iter().map(|c| c.session.to_string()).collect();
    // Each session's rows in the batch so far, and the sessions in order of appearance.
    let mut totals: HashMap<&str, i64> = HashMap::with_capacity(batch.len());
    let mut order: Vec<&str> = Vec::with_capacity(batch.len());
    let rows: usize = batch.iter().map(|command| command.entries.len()).sum();
    let (mut row_sessions, mut places, mut events) = (
        Vec::with_capacity(rows),
        Vec::with_capacity(rows),
        Vec::with_capacity(rows),
    );
    for (command, session) in batch.iter().zip(&sessions) {
        let total = totals.entry(session).or_insert_with(|| {
            order.push(session);
            0
        });
        for entry in &command.entries {
            *total += 1;
            row_sessions.push(session.as_str());
            places.push(*total);
            events.push(entry.json.as_str());
        }
    }
    let counts: Vec<i64> = order.iter().map(|id| totals[id]).collect();
    let advanced: Vec<(String, i64, i64)> = sqlx::query_as(APPEND_TOKENS)
        .bind(&order)
        .bind(&counts)
        .bind(&lease.owner)
        .bind(&row_sessions)
        .bind(&places)
        .bind(&events)
        .bind(CHANGES_CHANNEL)
        .bind(LINES_PER_NOTICE)
        .fetch_all(&mut *conn)
        .await?;
    // Each advanced session's first seq of this batch, handed out command by command.
    let mut next_seq: HashMap<String, i64> = advanced
        .into_iter()
        .map(|(id, last, _)| {
            let first = last - totals.get(id.as_str()).copied().unwrap_or(0) + 1;
            (id, first)
        })
        .collect();
    let skipped: Vec<&str> = order
        .iter()
        .copied()
        .filter(|id| !next_seq.contains_key(*id))
        .collect();
    let skipped = Skipped::read(conn, &skipped).await?;
    let applied = batch
        .iter()
        .zip(&sessions)
        .map(|(command, session)| match next_seq.get_mut(session) {
            Some(next) => {
                let first_seq = *next;
                *next += command.entries.len() as i64;
                Applied::Committed {
                    first_seq: first_seq as u64,
                }
            }
            None => Applied::Rejected(skipped.rejection(session)),
        })
        .collect();
    Ok(applied)
}
