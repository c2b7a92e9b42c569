//! The token path: a batch of plain appends that do nothing but add rows (content
//! deltas, tool-call arguments, reasoning) is one statement, sent without `BEGIN` or
//! `COMMIT`, so PostgreSQL runs it as one implicit transaction in one round trip.
//!
//! When this instance's writers know the head of every session in the batch
//! ([`super::heads`]), the statement is a bare insert at the seqs after those heads,
//! fenced by the run leases and with the events' primary key as the arbiter: a head that
//! moved on (another instance appended since) collides, and the batch is committed again
//! the locked way. Otherwise the statement advances and locks the batch's sessions in id
//! order (as the general path does, fenced by the run leases alike), reads each head from
//! `last_seq` or the log's key, whichever is further (bare inserts leave `last_seq`
//! behind), and inserts the rows at the seqs the advance hands out. Either way it
//! announces each session's new seqs on [`super::CHANGES_CHANNEL`] itself.

use std::collections::HashMap;

use sqlx::PgConnection;

use super::apply::Skipped;
use super::heads::Heads;
use super::CHANGES_CHANNEL;
use crate::store::leases::LeaseTerms;
use crate::store::{derive_effects, Applied, Change, Command, Effects, StoreError};

/// Announcement lines per notice. A line is `a <session> <first> <last>`: at most 78
/// bytes (a 36-byte id and two 19-digit seqs), so 64 of them stay well under
/// PostgreSQL's 8,000-byte payload.
const LINES_PER_NOTICE: i64 = 64;

/// The bare insert: `$1`/`$2` each session and its announcement line, `$3` this
/// instance, `$4`/`$5`/`$6` the rows (session, seq, JSON), `$7` the channel, `$8` lines
/// per notice. Returns the sessions that exist and whose lease no other instance holds;
/// only their rows go in. The second column only makes the announcement run.
const APPEND_AT: &str = "WITH fenced AS (SELECT v.id, v.line \
       FROM UNNEST($1::text[], $2::text[]) AS v(id, line) \
       WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.id = v.id) \
         AND NOT EXISTS (SELECT 1 FROM run_leases l WHERE l.session_id = v.id AND l.owner <> $3)), \
   inserted AS (INSERT INTO events (session_id, seq, event) \
     SELECT e.id, e.seq, e.event FROM UNNEST($4::text[], $5::bigint[], $6::text[]) AS e(id, seq, event) \
     WHERE e.id IN (SELECT id FROM fenced)), \
   announced AS (SELECT pg_notify($7, string_agg(line, E'\\n')) FROM \
     (SELECT line, (row_number() OVER ()) / $8 AS notice FROM fenced) AS lines GROUP BY notice) \
   SELECT id, (SELECT count(*) FROM announced) FROM fenced";

/// The locked way: `$1`/`$2` each session and how many rows it gets, `$3` this instance,
/// `$4`/`$5`/`$6` the rows (session, 1-based place among its rows in the batch, JSON),
/// `$7` the channel, `$8` lines per notice. Returns each advanced session's last seq;
/// the third column only makes the announcement run.
const APPEND_LOCKED: &str =
    "WITH advanced AS (UPDATE sessions AS s SET last_seq = greatest(s.last_seq, \
       coalesce((SELECT max(seq) FROM events WHERE session_id = s.id), 0)) + v.n \
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

/// A batch laid out as the statements bind it.
struct Rows<'a> {
    /// The sessions, in order of first appearance.
    order: Vec<&'a str>,
    /// How many rows each session gets.
    totals: HashMap<&'a str, i64>,
    /// Per row: its session, its 1-based place among its session's rows, its JSON.
    sessions: Vec<&'a str>,
    places: Vec<i64>,
    events: Vec<&'a str>,
}

impl<'a> Rows<'a> {
    fn of(batch: &'a [Command], ids: &'a [String]) -> Self {
        let count: usize = batch.iter().map(|command| command.entries.len()).sum();
        let mut rows = Rows {
            order: Vec::with_capacity(batch.len()),
            totals: HashMap::with_capacity(batch.len()),
            sessions: Vec::with_capacity(count),
            places: Vec::with_capacity(count),
            events: Vec::with_capacity(count),
        };
        for (command, session) in batch.iter().zip(ids) {
            let total = rows.totals.entry(session).or_insert_with(|| {
                rows.order.push(session);
                0
            });
            for entry in &command.entries {
                *total += 1;
                rows.sessions.push(session.as_str());
                rows.places.push(*total);
                rows.events.push(entry.json.as_str());
            }
        }
        rows
    }
}

/// Applies a batch that [`fits`], on `conn` outside any transaction; one outcome per
/// command. The heads it leaves are recorded in `heads`; on failure the batch's sessions'
/// heads are forgotten.
pub(super) async fn append_tokens(
    conn: &mut PgConnection,
    lease: &LeaseTerms,
    heads: &Heads,
    batch: &[Command],
) -> Result<Vec<Applied>, StoreError> {
    let ids: Vec<String> = batch.iter().map(|c| c.session.to_string()).collect();
    let rows = Rows::of(batch, &ids);
    let advanced = match heads.of_all(&rows.order) {
        Some(known) => append_at(conn, lease, &rows, &known).await,
        None => append_locked(conn, lease, &rows).await,
    };
    let advanced = match advanced {
        Ok(advanced) => advanced,
        Err(error) => {
            heads.forget(rows.order.iter().copied());
            return Err(error);
        }
    };
    heads.record(advanced.iter().map(|(id, last)| (id.as_str(), *last)));
    // Each advanced session's first seq of this batch, handed out command by command.
    let mut next_seq: HashMap<&str, i64> = advanced
        .iter()
        .map(|(id, last)| {
            let first = last - rows.totals.get(id.as_str()).copied().unwrap_or(0) + 1;
            (id.as_str(), first)
        })
        .collect();
    let skipped: Vec<&str> = rows
        .order
        .iter()
        .copied()
        .filter(|id| !next_seq.contains_key(*id))
        .collect();
    heads.forget(skipped.iter().copied());
    let skipped = Skipped::read(conn, &skipped).await?;
    let applied = batch
        .iter()
        .zip(&ids)
        .map(
            |(command, session)| match next_seq.get_mut(session.as_str()) {
                Some(next) => {
                    let first_seq = *next;
                    *next += command.entries.len() as i64;
                    Applied::Committed {
                        first_seq: first_seq as u64,
                    }
                }
                None => Applied::Rejected(skipped.rejection(session)),
            },
        )
        .collect();
    Ok(applied)
}

/// The bare insert after the known `heads` (in `rows.order`'s order); returns each
/// session that took its rows with its new head.
async fn append_at(
    conn: &mut PgConnection,
    lease: &LeaseTerms,
    rows: &Rows<'_>,
    heads: &[i64],
) -> Result<Vec<(String, i64)>, StoreError> {
    let head_of: HashMap<&str, i64> = rows
        .order
        .iter()
        .copied()
        .zip(heads.iter().copied())
        .collect();
    let seqs: Vec<i64> = rows
        .sessions
        .iter()
        .zip(&rows.places)
        .map(|(session, place)| head_of[session] + place)
        .collect();
    let mut lines = Vec::with_capacity(rows.order.len());
    for (id, head) in rows.order.iter().zip(heads) {
        let session = crate::domain::SessionId::parse(id).map_err(super::corrupt)?;
        let change = Change::Appended {
            session,
            first_seq: (head + 1) as u64,
            last_seq: (head + rows.totals[id]) as u64,
            stop_run: None,
        };
        lines.push(change.encode());
    }
    let fenced: Vec<(String, i64)> = sqlx::query_as(APPEND_AT)
        .bind(&rows.order)
        .bind(&lines)
        .bind(&lease.owner)
        .bind(&rows.sessions)
        .bind(&seqs)
        .bind(&rows.events)
        .bind(CHANGES_CHANNEL)
        .bind(LINES_PER_NOTICE)
        .fetch_all(&mut *conn)
        .await?;
    Ok(fenced
        .into_iter()
        .map(|(id, _)| {
            let last = head_of[id.as_str()] + rows.totals[id.as_str()];
            (id, last)
        })
        .collect())
}

/// The locked way; returns each advanced session with its new head.
async fn append_locked(
    conn: &mut PgConnection,
    lease: &LeaseTerms,
    rows: &Rows<'_>,
) -> Result<Vec<(String, i64)>, StoreError> {
    let counts: Vec<i64> = rows.order.iter().map(|id| rows.totals[id]).collect();
    let advanced: Vec<(String, i64, i64)> = sqlx::query_as(APPEND_LOCKED)
        .bind(&rows.order)
        .bind(&counts)
        .bind(&lease.owner)
        .bind(&rows.sessions)
        .bind(&rows.places)
        .bind(&rows.events)
        .bind(CHANGES_CHANNEL)
        .bind(LINES_PER_NOTICE)
        .fetch_all(&mut *conn)
        .await?;
    Ok(advanced
        .into_iter()
        .map(|(id, last, _)| (id, last))
        .collect())
}
