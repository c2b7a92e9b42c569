use std::time::{Duration, Instant};

use super::*;

fn row(seq: u64, position: i64) -> TailRow {
    TailRow {
        seq,
        position,
        json: format!("{{\"n\":{seq}}}").into(),
    }
}

/// `count` rows of `session` with seqs from `first`, positions from `position`.
fn rows(session: SessionId, first: u64, position: i64, count: u64) -> Vec<(SessionId, TailRow)> {
    (0..count)
        .map(|i| (session, row(first + i, position + i as i64)))
        .collect()
}

#[test]
fn reads_start_after_the_asked_seq_and_stop_at_the_limit() {
    let tail = Tail::default();
    let session = SessionId::generate();
    tail.committed(rows(session, 5, 1, 4), Instant::now());
    let seqs = |after, limit| -> Vec<u64> {
        tail.rows_after(session, after, limit)
            .iter()
            .map(|r| r.seq)
            .collect()
    };
    assert_eq!(seqs(0, 10), [5, 6, 7, 8]);
    assert_eq!(seqs(6, 10), [7, 8]);
    assert_eq!(seqs(5, 2), [6, 7]);
    assert!(seqs(8, 10).is_empty());
    assert_eq!(tail.last_seq(session), Some(8));
    assert_eq!(tail.last_seq(SessionId::generate()), None);
    assert_eq!(tail.next_position(), 5);
}

#[test]
fn a_full_session_is_folded_whole_and_a_calm_one_waits() {
    let tail = Tail::default();
    let (busy, calm) = (SessionId::generate(), SessionId::generate());
    let now = Instant::now();
    tail.committed(rows(calm, 1, 1, 3), now);
    tail.committed(rows(busy, 1, 4, FOLD_AT as u64 + 10), now);
    let plan = tail.plan(now);
    assert_eq!(plan.sessions.len(), 1, "the calm session is not due yet");
    let (session, folded) = &plan.sessions[0];
    assert_eq!(*session, busy);
    assert_eq!(folded.len(), FOLD_AT + 10, "a session's rows go together");
    tail.folded(&plan);
    assert_eq!(tail.len(), 3);
    assert_eq!(tail.last_seq(busy), None);
    assert_eq!(
        tail.lowest_position(),
        1,
        "the calm session still holds the lowest"
    );
}

#[test]
fn past_the_soft_cap_every_session_is_due_and_a_fold_takes_more() {
    let tail = Tail::default();
    let now = Instant::now();
    let sessions: Vec<SessionId> = (0..300).map(|_| SessionId::generate()).collect();
    for (i, session) in sessions.iter().enumerate() {
        tail.committed(rows(*session, 1, i as i64 * 100, 60), now);
    }
    assert!(!tail.crowded(), "300 sessions may hold 60 rows each");
    assert!(tail.plan(now).is_empty(), "none is due");
    let stream = SessionId::generate();
    tail.committed(rows(stream, 1, 1_000_000, 40_000), now);
    assert!(tail.crowded());
    let plan = tail.plan(now);
    assert_eq!(plan.sessions[0].0, stream, "the fullest goes first");
    let planned: usize = plan.sessions.iter().map(|(_, rows)| rows.len()).sum();
    assert!(planned >= CROWDED_SLICE);
    tail.folded(&plan);
    assert!(!tail.crowded());
}

#[test]
fn a_quiet_session_is_folded_whatever_its_count_and_leaves_the_tail() {
    let tail = Tail::default();
    let session = SessionId::generate();
    let then = Instant::now();
    tail.committed(rows(session, 1, 1, 2), then);
    assert!(tail.plan(then).is_empty());
    let later = then + QUIET + Duration::from_millis(1);
    let plan = tail.plan(later);
    let positions: Vec<i64> = plan.sessions[0].1.iter().map(|row| row.position).collect();
    assert_eq!(positions, [1, 2]);
    tail.folded(&plan);
    assert_eq!(tail.len(), 0);
    assert_eq!(
        tail.last_seq(session),
        None,
        "sessions.last_seq is exact again"
    );
    assert_eq!(
        tail.lowest_position(),
        3,
        "everything below the next position is folded"
    );
}

#[test]
fn forgetting_and_resetting_drop_what_was_held() {
    let tail = Tail::default();
    let (gone, kept) = (SessionId::generate(), SessionId::generate());
    tail.committed(rows(gone, 1, 1, 3), Instant::now());
    tail.committed(rows(kept, 1, 4, 2), Instant::now());
    tail.forget(gone);
    assert_eq!(tail.len(), 2);
    assert!(tail.rows_after(gone, 0, 10).is_empty());
    tail.reset(100);
    assert_eq!(tail.len(), 0);
    assert_eq!(tail.next_position(), 100);
}
