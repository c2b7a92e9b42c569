//! The token path's one statement ([`super::tokens`]): seqs handed out command by command,
//! the notices it builds itself, its fences, and a deleted session's rows going with it.

use super::test_support::temp_store;
use crate::domain::{SessionId, UserId};
use crate::store::test_support::append as tokens;
use crate::store::{Applied, Change, Command, EventLog, Rejection};

#[tokio::test]
async fn one_statement_hands_out_seqs_and_announces_every_session() {
    let (database, store) = temp_store().await;
    // Another instance hears them: this one's own feed leaves its own appends out.
    let other = super::PostgresStore::connect(database.url(), &Default::default())
        .await
        .unwrap();
    let mut changes = other.changes().await.unwrap().unwrap();
    let mut own = store.changes().await.unwrap().unwrap();
    // More sessions than one notice holds lines, so the announcement takes several.
    let mut sessions = Vec::new();
    for _ in 0..150 {
        let id = SessionId::generate();
        store
            .create_session(UserId::LOCAL, id, None, 0)
            .await
            .unwrap();
        sessions.push(id);
    }
    let mut batch: Vec<Command> = sessions.iter().map(|&s| tokens(s, &["a"])).collect();
    batch.extend(sessions.iter().map(|&s| tokens(s, &["b", "c"])));
    assert!(super::tokens::fits(&batch));
    let applied = store.apply(&batch, 0).await.unwrap();
    for (index, outcome) in applied.iter().enumerate() {
        let first_seq = if index < sessions.len() { 1 } else { 2 };
        assert_eq!(
            *outcome,
            Applied::Committed { first_seq },
            "command {index}"
        );
    }
    let history = store.events_after(sessions[77], 0, 10).await.unwrap();
    let deltas: Vec<(u64, String)> = history
        .iter()
        .map(|stored| {
            let event: serde_json::Value = serde_json::from_str(&stored.json).unwrap();
            (
                stored.seq,
                event["delta"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(deltas, [(1, "a".into()), (2, "b".into()), (3, "c".into())]);
    // Every session announced once, with the seqs the batch gave it.
    let mut announced = Vec::new();
    while announced.len() < sessions.len() {
        let change = tokio::time::timeout(std::time::Duration::from_secs(10), changes.recv())
            .await
            .expect("every session's change is announced")
            .unwrap();
        if let Change::Appended { .. } = change {
            announced.push(change);
        }
    }
    for &session in &sessions {
        let expected = Change::Appended {
            session,
            first_seq: 1,
            last_seq: 3,
            stop_run: None,
        };
        assert!(announced.contains(&expected), "{session} was not announced");
    }
    assert_no_own_append(&store, &mut own).await;
}

#[tokio::test]
async fn every_writer_connections_appends_are_left_out_of_its_own_feed() {
    let (database, store) = temp_store().await;
    assert_eq!(store.log_writers(), crate::store::DEFAULT_LOG_WRITERS);
    let other = super::PostgresStore::connect(database.url(), &Default::default())
        .await
        .unwrap();
    let mut changes = other.changes().await.unwrap().unwrap();
    let mut own = store.changes().await.unwrap().unwrap();
    let (first, second) = (SessionId::generate(), SessionId::generate());
    for id in [first, second] {
        store
            .create_session(UserId::LOCAL, id, None, 0)
            .await
            .unwrap();
    }
    // Two batches at once, as two log writers send them: each on its own connection.
    for round in 0..3 {
        let (one, two) = ([tokens(first, &["x"])], [tokens(second, &["y"])]);
        let (a, b) = tokio::join!(store.apply(&one, 0), store.apply(&two, 0));
        let first_seq = round + 1;
        assert_eq!(a.unwrap(), [Applied::Committed { first_seq }]);
        assert_eq!(b.unwrap(), [Applied::Committed { first_seq }]);
    }
    // Another instance hears both writers' appends; this one's own feed hears neither.
    let mut heard = std::collections::HashSet::new();
    while heard.len() < 6 {
        let change = tokio::time::timeout(std::time::Duration::from_secs(10), changes.recv())
            .await
            .expect("both writers' appends are announced")
            .unwrap();
        if let Change::Appended {
            session, last_seq, ..
        } = change
        {
            heard.insert((session, last_seq));
        }
    }
    assert_no_own_append(&store, &mut own).await;
}

/// Creates a sentinel session and reads `own` (this instance's feed) until its notice:
/// notices arrive in commit order, so once it is in, no append of this instance's own
/// writers came back before it.
async fn assert_no_own_append(
    store: &super::PostgresStore,
    own: &mut tokio::sync::mpsc::UnboundedReceiver<Change>,
) {
    let sentinel = SessionId::generate();
    store
        .create_session(UserId::LOCAL, sentinel, None, 0)
        .await
        .unwrap();
    loop {
        let change = tokio::time::timeout(std::time::Duration::from_secs(10), own.recv())
            .await
            .expect("the sentinel is announced")
            .unwrap();
        match change {
            Change::Listed { session } if session == sentinel => break,
            Change::Appended { .. } => panic!("a writer's own append came back: {change:?}"),
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_missing_session_and_another_instances_run_are_refused_alone() {
    let (_database, store) = temp_store().await;
    let (open, leased, missing) = (
        SessionId::generate(),
        SessionId::generate(),
        SessionId::generate(),
    );
    for id in [open, leased] {
        store
            .create_session(UserId::LOCAL, id, None, 0)
            .await
            .unwrap();
    }
    sqlx::query(
        "INSERT INTO run_leases (session_id, run_id, owner, epoch, expires_at) \
         VALUES ($1, 'run_1', 'another-instance', 1, 9999999999999)",
    )
    .bind(leased.to_string())
    .execute(store.pool())
    .await
    .unwrap();
    let batch = [
        tokens(leased, &["x"]),
        tokens(missing, &["y"]),
        tokens(open, &["z"]),
    ];
    let applied = store.apply(&batch, 0).await.unwrap();
    assert_eq!(
        applied,
        [
            Applied::Rejected(Rejection::LeaseLost),
            Applied::Rejected(Rejection::SessionMissing),
            Applied::Committed { first_seq: 1 },
        ]
    );
    assert!(store.events_after(leased, 0, 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_deleted_sessions_rows_go_with_it() {
    let (_database, store) = temp_store().await;
    let (gone, kept) = (SessionId::generate(), SessionId::generate());
    for id in [gone, kept] {
        store
            .create_session(UserId::LOCAL, id, None, 0)
            .await
            .unwrap();
        store.apply(&[tokens(id, &["a", "b"])], 0).await.unwrap();
    }
    assert!(store.delete_session(gone).await.unwrap());
    let count = |id: SessionId| {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM events WHERE session_id = $1")
            .bind(id.to_string())
            .fetch_one(store.pool())
    };
    assert_eq!(count(gone).await.unwrap(), 0);
    assert_eq!(count(kept).await.unwrap(), 2);
}
