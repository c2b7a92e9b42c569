//! The log's tail on a real file: every committed event reads back, in order, whether it
//! is still in the tail or folded into `events`; what a store leaves in the tail is read
//! by the next one; a store whose log was taken over stops writing.

use super::super::test_support::{append, open_store, temp_store};
use super::super::SqliteStore;
use crate::domain::{now_ms, SessionId, UserId};
use crate::store::{Applied, EventLog, FramePage, NewBranch, Sessions};

async fn session(store: &SqliteStore) -> SessionId {
    let id = SessionId::generate();
    store
        .create_session(UserId::LOCAL, id, None, now_ms())
        .await
        .unwrap();
    id
}

/// Appends `count` one-delta commands `d<n>` (n from `first`), one per batch.
async fn append_deltas(store: &SqliteStore, id: SessionId, first: u64, count: u64) {
    for n in first..first + count {
        let delta = format!("d{n}");
        let applied = store
            .apply(&[append(id, &[&delta])], now_ms())
            .await
            .unwrap();
        assert_eq!(applied, [Applied::Committed { first_seq: n }]);
    }
}

/// A store in a new folder with one session of `count` deltas (seqs 1 to `count`).
async fn store_with_deltas(count: u64) -> (tempfile::TempDir, SqliteStore, SessionId) {
    let (dir, store) = temp_store().await;
    let id = session(&store).await;
    append_deltas(&store, id, 1, count).await;
    (dir, store, id)
}

/// Checks that the session's log reads back as `d1`…`d<last>` in every way it is read.
async fn assert_log(store: &SqliteStore, id: SessionId, last: u64) {
    let events = store.events_after(id, 0, u32::MAX).await.unwrap();
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=last).collect::<Vec<_>>());
    for event in &events {
        assert!(
            event.json.contains(&format!("\"d{}\"", event.seq)),
            "{event:?}"
        );
    }
    for after in [0, last / 3, last.saturating_sub(1)] {
        for limit in [1, 7, 1000] {
            let page = store.frames_after(id, after, limit).await.unwrap();
            let expected: Vec<_> = events
                .iter()
                .filter(|e| e.seq > after)
                .take(limit as usize)
                .map(|e| FramePage::frame(e.seq, &e.json))
                .collect();
            assert_eq!(page.frames, expected, "frames after {after}, limit {limit}");
            let read = store.events_after(id, after, limit).await.unwrap();
            assert_eq!(read.len(), expected.len());
        }
    }
    let row = store.session(id).await.unwrap().unwrap();
    assert_eq!(row.last_seq, last, "the session's last seq is exact");
}

#[tokio::test]
async fn every_event_reads_back_in_order_while_the_tail_is_folded() {
    let (_dir, store) = temp_store().await;
    let (busy, calm) = (session(&store).await, session(&store).await);
    append_deltas(&store, calm, 1, 3).await;
    for round in 0..5 {
        append_deltas(&store, busy, round * 40 + 1, 40).await;
        assert_log(&store, busy, round * 40 + 40).await;
        store.log_upkeep().await.unwrap();
        assert_log(&store, busy, round * 40 + 40).await;
    }
    assert!(
        store.log.tail.len() < 64 + 3,
        "the busy session's rows were folded: {} held",
        store.log.tail.len()
    );
    assert_log(&store, calm, 3).await;
    store.settle_log().await.unwrap();
    assert_eq!(store.log.tail.len(), 0, "settling folds whatever is held");
    assert_log(&store, busy, 200).await;
    assert_log(&store, calm, 3).await;
}

#[tokio::test]
async fn the_next_store_reads_what_the_last_one_left_in_the_tail() {
    let (dir, store, id) = store_with_deltas(10).await;
    assert_eq!(store.log.tail.len(), 10, "nothing was folded");
    drop(store);
    let next = open_store(dir.path()).await;
    assert_log(&next, id, 10).await;
    append_deltas(&next, id, 11, 2).await;
    assert_log(&next, id, 12).await;
}

#[tokio::test]
async fn a_store_whose_log_was_taken_over_stops_writing() {
    let (dir, first, id) = store_with_deltas(3).await;
    let second = open_store(dir.path()).await;
    append_deltas(&second, id, 4, 2).await;
    let refused = first.apply(&[append(id, &["late"])], now_ms()).await;
    let error = refused.expect_err("the first store no longer writes");
    assert!(
        error.to_string().contains("took this database's log over"),
        "{error}"
    );
    assert_log(&second, id, 5).await;
}

#[tokio::test]
async fn rows_of_a_session_deleted_meanwhile_leave_the_tail() {
    let (_dir, store, id) = store_with_deltas(70).await;
    // Retention deletes idle sessions on its own connection, not the writer's.
    let deleted = store.delete_idle_before(now_ms() + 1, 10).await.unwrap();
    assert_eq!(deleted, [id]);
    store.log_upkeep().await.unwrap();
    assert_eq!(store.log.tail.len(), 0);
    assert!(store.events_after(id, 0, 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_branch_reads_its_prefix_wherever_the_parents_rows_are() {
    use crate::store::Fork;
    let (_dir, store, parent) = store_with_deltas(30).await;
    let branch = SessionId::generate();
    let fork = Fork { parent, at_seq: 20 };
    store
        .fork_session(NewBranch::new(branch, fork, 0))
        .await
        .unwrap()
        .unwrap();
    append_deltas(&store, branch, 21, 5).await;
    // The parent's rows in the tail's memory, then folded into `events`, then half and half.
    assert_log(&store, branch, 25).await;
    store.settle_log().await.unwrap();
    assert_log(&store, branch, 25).await;
    append_deltas(&store, branch, 26, 5).await;
    append_deltas(&store, parent, 31, 5).await;
    assert_log(&store, branch, 30).await;
    assert_log(&store, parent, 35).await;
}
