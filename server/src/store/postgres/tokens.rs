//! The token path: a batch of plain appends that do nothing but add rows (content
//! deltas, tool-call arguments, reasoning) is one statement, sent without `BEGIN` or
//! `COMMIT`, so PostgreSQL runs it as one implicit transaction in one round trip.
//!
//! When this instance's writers know the head of every session in the batch
//! ([`super::heads`]), the statement is a bare insert at the seqs after those heads,
//! fenced as a whole by the sessions and their run leases (a batch with a session gone or
//! run elsewhere goes the locked way) and with the events' primary key as the arbiter: a
//! head that moved on (another instance appended since) collides, and the batch is
//! committed again the locked way. Otherwise the statement advances and locks the batch's
//! sessions in id order (as the general path does, fenced by the run leases alike), reads
//! each head from `last_seq` or the log's key, whichever is further (bare inserts leave
//! `last_seq` behind), and inserts the rows at the seqs the advance hands out. Either way
//! it announces each session's new seqs on [`super::CHANGES_CHANNEL`] itself.

use std::collections::HashMap;

use sqlx::PgConnection;

use super::apply::Skipped;
use super::heads::Heads;
use super::CHANGES_CHANNEL;
use crate::domain::SessionId;
use crate::store::leases::LeaseTerms;
use crate::store::{derive_effects, Applied, Change, Command, Effects, StoreError};

/// Announcement lines per notice, where the locked way builds them (it hands the seqs
/// out, so only it can write the lines). A line is `a <session> <first> <last>`: at most
/// 78 bytes (a 36-byte id and two 19-digit seqs), so 64 of them stay well under
/// PostgreSQL's 8,000-byte payload.
const LINES_PER_NOTICE: i64 = 64;

/// The bare insert: `$1` the batch's sessions, `$2` their announcement, already in
/// notices ([`Change::encode_many`]), `$3` this instance, `$4`/`$5`/`$6` the rows
/// (session, seq, JSON), `$7` the channel. All or nothing: the rows go in, and are
/// announced, only if every session exists and no other instance holds its lease; the
/// one row returned says whether they did (its second column only makes the announcement
/// run). One fence for the batch, rather than one filter per row, leaves PostgreSQL the
/// insert and two index probes per session: a batch that a deleted session or a lost
/// lease spoils is rare, and goes the locked way, which refuses those sessions alone.
const APPEND_AT: &str = "WITH fence AS (SELECT (SELECT count(*) FROM UNNEST($1::text[]) AS v(id) \
       WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.id = v.id) \
         AND NOT EXISTS (SELECT 1 FROM run_leases l WHERE l.session_id = v.id AND l.owner <> $3)) \
       = cardinality($1) AS open), \
   inserted AS (INSERT INTO events (session_id, seq, event) \
     SELECT * FROM UNNEST($4::text[], $5::bigint[], $6::text[]) WHERE (SELECT open FROM fence)), \
   announced AS (SELECT pg_notify($7, notice) FROM UNNEST($2::text[]) AS notice \
     WHERE (SELECT open FROM fence)) \
   SELECT open, (SELECT count(*) FROM announced) FROM fence";

/// The locked way: `$1`/`$2` each session and how many rows it gets, `$3` this instance,
/// `$4`/`$5`/`$6` the rows (session, 1-based place among its rows in the batch, JSON),
/// `$7` the channel, `$8` lines per notice. Returns each advanced session's slot (its
/// 1-based place in `$1`) and last seq; the third column only makes the announcement run.
const APPEND_LOCKED: &str = concat!(
    "WITH advanced AS (UPDATE sessions AS s SET last_seq = ",
    super::head_of!("s.last_seq", "s.id"),
    " + v.n \
     FROM UNNEST($1::text[], $2::bigint[]) WITH ORDINALITY AS v(id, n, slot), \
       (SELECT id FROM sessions WHERE id = ANY($1) ORDER BY id FOR UPDATE) AS locked \
     WHERE s.id = v.id AND s.id = locked.id AND ",
    super::lease_fence!("locked.id", "$3"),
    " RETURNING s.id, s.last_seq, v.n, v.slot), \
   inserted AS (INSERT INTO events (session_id, seq, event) \
     SELECT e.id, a.last_seq - a.n + e.k, e.event \
     FROM UNNEST($4::text[], $5::bigint[], $6::text[]) AS e(id, k, event) \
       JOIN advanced a ON a.id = e.id), \
   announced AS (SELECT pg_notify($7, string_agg(line, E'\\n')) FROM \
     (SELECT 'a ' || id || ' ' || (last_seq - n + 1) || ' ' || last_seq AS line, \
        (row_number() OVER ()) / $8 AS notice FROM advanced) AS lines GROUP BY notice) \
   SELECT slot, last_seq, (SELECT count(*) FROM announced) FROM advanced"
);

/// Whether `batch` can take the token path: plain appends whose entries change nothing
/// but the log (no status, interrupt, stop, run end, spending or state).
pub(super) fn fits(batch: &[Command]) -> bool {
    batch.iter().all(|command| {
        command.is_plain_append()
            && !command.entries.is_empty()
            && derive_effects(&command.entries) == Effects::default()
    })
}

/// A batch laid out as the statements bind it. Each session has a slot: its place in
/// order of first appearance.
struct Rows<'a> {
    /// Each slot's session, its id as bound, and how many rows it gets.
    sessions: Vec<SessionId>,
    ids: Vec<String>,
    totals: Vec<i64>,
    /// Each command's slot.
    slots: Vec<usize>,
    /// Per row: its slot, its 1-based place among its session's rows, its JSON.
    row_slots: Vec<usize>,
    places: Vec<i64>,
    events: Vec<&'a str>,
}

impl<'a> Rows<'a> {
    fn of(batch: &'a [Command]) -> Self {
        let count: usize = batch.iter().map(|command| command.entries.len()).sum();
        let mut rows = Rows {
            sessions: Vec::with_capacity(batch.len()),
            ids: Vec::with_capacity(batch.len()),
            totals: Vec::with_capacity(batch.len()),
            slots: Vec::with_capacity(batch.len()),
            row_slots: Vec::with_capacity(count),
            places: Vec::with_capacity(count),
            events: Vec::with_capacity(count),
        };
        let mut slot_of: HashMap<SessionId, usize> = HashMap::with_capacity(batch.len());
        for command in batch {
            let slot = *slot_of.entry(command.session).or_insert_with(|| {
                rows.sessions.push(command.session);
                rows.ids.push(command.session.to_string());
                rows.totals.push(0);
                rows.sessions.len() - 1
            });
            rows.slots.push(slot);
            for entry in &command.entries {
                rows.totals[slot] += 1;
                rows.row_slots.push(slot);
                rows.places.push(rows.totals[slot]);
                rows.events.push(entry.json.as_str());
            }
        }
        rows
    }

    /// Each row's session id, as bound.
    fn row_ids(&self) -> Vec<&str> {
        self.row_slots
            .iter()
            .map(|&slot| self.ids[slot].as_str())
            .collect()
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
    let rows = Rows::of(batch);
    let advanced = match append_rows(conn, lease, heads, &rows).await {
        Ok(advanced) => advanced,
        Err(error) => {
            heads.forget(rows.sessions.iter().copied());
            return Err(error);
        }
    };
    // Each slot's next seq of this batch, handed out command by command; none for a
    // session the statement refused.
    let mut next_seq: Vec<Option<i64>> = vec![None; rows.sessions.len()];
    for &(slot, last) in &advanced {
        next_seq[slot] = Some(last - rows.totals[slot] + 1);
    }
    heads.record(
        advanced
            .iter()
            .map(|&(slot, last)| (rows.sessions[slot], last)),
    );
    let refused: Vec<usize> = (0..rows.sessions.len())
        .filter(|&slot| next_seq[slot].is_none())
        .collect();
    heads.forget(refused.iter().map(|&slot| rows.sessions[slot]));
    let refused: Vec<&str> = refused
        .iter()
        .map(|&slot| rows.ids[slot].as_str())
        .collect();
    let skipped = Skipped::read(conn, &refused).await?;
    let applied = batch
        .iter()
        .zip(&rows.slots)
        .map(|(command, &slot)| match &mut next_seq[slot] {
            Some(next) => {
                let first_seq = *next;
                *next += command.entries.len() as i64;
                Applied::Committed {
                    first_seq: first_seq as u64,
                }
            }
            None => Applied::Rejected(skipped.rejection(&rows.ids[slot])),
        })
        .collect();
    Ok(applied)
}

/// The bare insert when every head is known and its fence lets the batch in; otherwise
/// the locked way, which refuses a session gone or run elsewhere alone. Returns each
/// advanced slot with its session's new head.
async fn append_rows(
    conn: &mut PgConnection,
    lease: &LeaseTerms,
    heads: &Heads,
    rows: &Rows<'_>,
) -> Result<Vec<(usize, i64)>, StoreError> {
    if let Some(known) = heads.of_all(&rows.sessions) {
        if let Some(advanced) = append_at(conn, lease, rows, &known).await? {
            return Ok(advanced);
        }
    }
    append_locked(conn, lease, rows).await
}

/// The bare insert after the known `heads` (by slot); returns every slot with its new
/// head, or `None` (and nothing went in) if the fence refused the batch.
async fn append_at(
    conn: &mut PgConnection,
    lease: &LeaseTerms,
    rows: &Rows<'_>,
    heads: &[i64],
) -> Result<Option<Vec<(usize, i64)>>, StoreError> {
    let seqs: Vec<i64> = rows
        .row_slots
        .iter()
        .zip(&rows.places)
        .map(|(&slot, place)| heads[slot] + place)
        .collect();
    let new_heads: Vec<(usize, i64)> = (0..rows.sessions.len())
        .map(|slot| (slot, heads[slot] + rows.totals[slot]))
        .collect();
    let changes: Vec<Change> = new_heads
        .iter()
        .map(|&(slot, last)| Change::Appended {
            session: rows.sessions[slot],
            first_seq: (heads[slot] + 1) as u64,
            last_seq: last as u64,
            stop_run: None,
        })
        .collect();
    let notices = Change::encode_many(changes.iter());
    let (open, _): (bool, i64) = sqlx::query_as(APPEND_AT)
        .bind(&rows.ids)
        .bind(&notices)
        .bind(&lease.owner)
        .bind(rows.row_ids())
        .bind(&seqs)
        .bind(&rows.events)
        .bind(CHANGES_CHANNEL)
        .fetch_one(&mut *conn)
        .await?;
    Ok(open.then_some(new_heads))
}

/// The locked way; returns each advanced slot with its session's new head.
async fn append_locked(
    conn: &mut PgConnection,
    lease: &LeaseTerms,
    rows: &Rows<'_>,
) -> Result<Vec<(usize, i64)>, StoreError> {
    let advanced: Vec<(i64, i64, i64)> = sqlx::query_as(APPEND_LOCKED)
        .bind(&rows.ids)
        .bind(&rows.totals)
        .bind(&lease.owner)
        .bind(rows.row_ids())
        .bind(&rows.places)
        .bind(&rows.events)
        .bind(CHANGES_CHANNEL)
        .bind(LINES_PER_NOTICE)
        .fetch_all(&mut *conn)
        .await?;
    Ok(advanced
        .into_iter()
        .map(|(slot, last, _)| (slot as usize - 1, last))
        .collect())
}
