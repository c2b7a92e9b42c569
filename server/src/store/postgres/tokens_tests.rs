//! The token path's one statement ([`super::tokens`]): seqs handed out command by command,
//! the notices it builds itself, its fences, and a deleted session's rows going with it;
//! the bare insert after known heads, the key that catches a head left behind, and the
//! sweep of rows a bare append left after its session was purged.

use super::test_support::temp_store;
use crate::domain::{SessionId, UserId};
use crate::store::test_support::append as tokens;
use crate::store::{Applied, Change, Command, EventLog, NewBranch, Rejection, Sessions};

#[tokio::test]
async fn one_statement_hands_out_seqs_and_announces_every_session_either_way() {
    let (database, store) = temp_store().await;
    // Another instance hears them: this one's own feed leaves its own appends out.
    let other = another_instance(&database).await;
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
    assert_eq!(
        deltas(&store, sessions[77]).await,
        [(1, "a".into()), (2, "b".into()), (3, "c".into())]
    );
    assert_announced(&mut changes, &sessions, 1, 3).await;
    // Every head is known now: the next batch is the bare insert, announced alike.
    let batch: Vec<Command> = sessions.iter().map(|&s| tokens(s, &["d"])).collect();
    let applied = store.apply(&batch, 0).await.unwrap();
    assert!(applied
        .iter()
        .all(|outcome| *outcome == Applied::Committed { first_seq: 4 }));
    assert_eq!(
        stored_last_seq(&store, sessions[77]).await,
        3,
        "the bare insert ran (it leaves last_seq behind)"
    );
    assert_announced(&mut changes, &sessions, 4, 4).await;
    assert_no_own_append(&store, &mut own).await;
}

/// Waits until every one of `sessions` is announced once as appended from `first_seq`
/// to `last_seq`.
/// A second instance on the same database.
async fn another_instance(database: &super::scratch::ScratchDatabase) -> super::PostgresStore {
    super::PostgresStore::connect(database.url(), &Default::default())
        .await
        .unwrap()
}

async fn assert_announced(
    changes: &mut tokio::sync::mpsc::UnboundedReceiver<Change>,
    sessions: &[SessionId],
    first_seq: u64,
    last_seq: u64,
) {
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
    for &session in sessions {
        let expected = Change::Appended {
            session,
            first_seq,
            last_seq,
            stop_run: None,
        };
        assert!(announced.contains(&expected), "{session} was not announced");
    }
}

#[tokio::test]
async fn every_writer_connections_appends_are_left_out_of_its_own_feed() {
    let (database, store) = temp_store().await;
    assert_eq!(store.log_writers(), crate::store::DEFAULT_LOG_WRITERS);
    let other = another_instance(&database).await;
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
    lease_to_another_instance(&store, leased).await;
    assert_fenced(&store, [leased, missing, open], 1).await;
    assert_eq!(rows_of(&store, leased).await, 0);
}

/// Gives `session`'s run lease to another instance.
async fn lease_to_another_instance(store: &super::PostgresStore, session: SessionId) {
    sqlx::query(
        "INSERT INTO run_leases (session_id, run_id, owner, epoch, expires_at) \
         VALUES ($1, 'run_1', 'another-instance', 1, 9999999999999)",
    )
    .bind(session.to_string())
    .execute(store.pool())
    .await
    .unwrap();
}

/// Applies one batch to a session another instance runs, a missing one and an open one
/// (in that order): only the open one's row goes in, at `first_seq`.
async fn assert_fenced(store: &super::PostgresStore, sessions: [SessionId; 3], first_seq: u64) {
    let [leased, missing, open] = sessions;
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
            Applied::Committed { first_seq },
        ]
    );
}

/// `N` new sessions, each with one batch of `deltas` appended.
async fn sessions_with<const N: usize>(
    store: &super::PostgresStore,
    deltas: &[&str],
) -> [SessionId; N] {
    let sessions = [(); N].map(|_| SessionId::generate());
    for id in sessions {
        store
            .create_session(UserId::LOCAL, id, None, 0)
            .await
            .unwrap();
        store.apply(&[tokens(id, deltas)], 0).await.unwrap();
    }
    sessions
}

/// How many rows `session` has in `events`.
async fn rows_of(store: &super::PostgresStore, session: SessionId) -> i64 {
    let sql = "SELECT count(*) FROM events WHERE session_id = $1";
    number_of(store, sql, session).await
}

/// The number a query of one session (`$1`) reads.
async fn number_of(store: &super::PostgresStore, sql: &str, session: SessionId) -> i64 {
    sqlx::query_scalar(sql)
        .bind(session.to_string())
        .fetch_one(store.pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_deleted_sessions_rows_go_with_it() {
    let (_database, store) = temp_store().await;
    let [gone, kept] = sessions_with(&store, &["a", "b"]).await;
    assert!(store.delete_session(gone).await.unwrap());
    assert_eq!(rows_of(&store, gone).await, 0);
    assert_eq!(rows_of(&store, kept).await, 2);
}

/// The deltas of a session's events in seq order, with their seqs.
async fn deltas(store: &super::PostgresStore, session: SessionId) -> Vec<(u64, String)> {
    let history = store.events_after(session, 0, 100).await.unwrap();
    history
        .iter()
        .map(|stored| {
            let event: serde_json::Value = serde_json::from_str(&stored.json).unwrap();
            let delta = event["delta"].as_str().unwrap_or("").to_string();
            (stored.seq, delta)
        })
        .collect()
}

/// The session's `last_seq` column as stored (bare inserts leave it behind).
async fn stored_last_seq(store: &super::PostgresStore, session: SessionId) -> i64 {
    let sql = "SELECT last_seq FROM sessions WHERE id = $1";
    number_of(store, sql, session).await
}

#[tokio::test]
async fn a_head_another_instance_moved_on_collides_and_the_batch_goes_in_after_it() {
    let (database, store) = temp_store().await;
    let other = another_instance(&database).await;
    let session = SessionId::generate();
    store
        .create_session(UserId::LOCAL, session, None, 0)
        .await
        .unwrap();
    let append = |store: &super::PostgresStore, deltas: &[&str]| {
        let batch = [tokens(session, deltas)];
        let store = store.clone();
        async move { store.apply(&batch, 0).await.unwrap() }
    };
    // The first batch reads the head the locked way; the second goes in bare after it
    // (which leaves the stored `last_seq` behind).
    assert_eq!(
        append(&store, &["a"]).await,
        [Applied::Committed { first_seq: 1 }]
    );
    assert_eq!(
        append(&store, &["b", "c"]).await,
        [Applied::Committed { first_seq: 2 }]
    );
    assert_eq!(
        stored_last_seq(&store, session).await,
        1,
        "the bare insert ran"
    );
    // Another instance appends: the head this one knows (3) falls behind.
    assert_eq!(
        append(&other, &["d"]).await,
        [Applied::Committed { first_seq: 4 }]
    );
    // This one's next batch collides at seq 4 and is committed again after it.
    assert_eq!(
        append(&store, &["e"]).await,
        [Applied::Committed { first_seq: 5 }]
    );
    assert_eq!(
        append(&store, &["f"]).await,
        [Applied::Committed { first_seq: 6 }]
    );
    let expected: Vec<(u64, String)> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .zip(1..)
        .map(|(delta, seq)| (seq, delta.to_string()))
        .collect();
    assert_eq!(deltas(&store, session).await, expected);
    // Whatever the stored column says, a session's row reads its head from the log.
    assert_eq!(stored_last_seq(&store, session).await, 5);
    assert_eq!(store.session(session).await.unwrap().unwrap().last_seq, 6);
    let listed = store.list_sessions(UserId::LOCAL).await.unwrap();
    assert_eq!(
        listed.iter().map(|row| row.last_seq).collect::<Vec<_>>(),
        [6]
    );
    let lines = store.conversation(session).await.unwrap();
    assert_eq!(
        lines.iter().map(|row| row.last_seq).collect::<Vec<_>>(),
        [6]
    );
    // A branch may part at the head only bare inserts reached, and not after it.
    let at = |at_seq| crate::store::Fork {
        parent: session,
        at_seq,
    };
    let past = other
        .fork_session(NewBranch::new(SessionId::generate(), at(7), 0))
        .await
        .unwrap();
    assert!(past.is_none(), "a branch parts after the log's end");
    let branch = other
        .fork_session(NewBranch::new(SessionId::generate(), at(6), 0))
        .await
        .unwrap()
        .expect("a branch at the log's end");
    assert_eq!(branch.last_seq, 6);
}

/// The bare insert is fenced as a whole: a session another instance runs and a deleted
/// one send the batch the locked way, which refuses those two alone; the open session's
/// next batch is a bare insert again.
#[tokio::test]
async fn a_batch_the_bare_insert_fences_goes_the_locked_way() {
    let (_database, store) = temp_store().await;
    let [open, leased, gone] = sessions_with(&store, &["a"]).await;
    // Every head is known now; another instance takes one run, one session goes.
    lease_to_another_instance(&store, leased).await;
    assert!(store.delete_session(gone).await.unwrap());
    assert_fenced(&store, [leased, gone, open], 2).await;
    assert_eq!(
        stored_last_seq(&store, open).await,
        2,
        "the locked way appended the open session's row"
    );
    assert_eq!(deltas(&store, leased).await, [(1, "a".to_string())]);
    assert_eq!(
        rows_of(&store, gone).await,
        0,
        "no rows of a deleted session"
    );
    let applied = store.apply(&[tokens(open, &["b"])], 0).await.unwrap();
    assert_eq!(applied, [Applied::Committed { first_seq: 3 }]);
    assert_eq!(
        stored_last_seq(&store, open).await,
        2,
        "the bare insert ran (it leaves last_seq behind)"
    );
    assert_eq!(
        deltas(&store, open).await,
        [
            (1, "a".to_string()),
            (2, "z".to_string()),
            (3, "b".to_string())
        ]
    );
}

#[tokio::test]
async fn rows_appended_as_their_session_was_purged_are_swept_once_no_append_can_follow() {
    let (_database, store) = temp_store().await;
    let [gone, kept] = sessions_with(&store, &["a"]).await;
    assert!(store.delete_session(gone).await.unwrap());
    // A bare append that began before the purge commits after it: its row stays behind.
    sqlx::query("INSERT INTO events (session_id, seq, event) VALUES ($1, 2, '{}')")
        .bind(gone.to_string())
        .execute(store.pool())
        .await
        .unwrap();
    let purged_at: i64 = sqlx::query_scalar("SELECT purged_at FROM purged_sessions WHERE id = $1")
        .bind(gone.to_string())
        .fetch_one(store.pool())
        .await
        .expect("the purge is remembered");
    // Not while an append that began before the purge might still come.
    assert_eq!(
        super::purged::sweep(store.pool(), purged_at).await.unwrap(),
        0
    );
    assert_eq!(rows_of(&store, gone).await, 1);
    // After that, the writers' upkeep (which sweeps at its first round) takes it.
    sqlx::query("UPDATE purged_sessions SET purged_at = purged_at - 3600000")
        .execute(store.pool())
        .await
        .unwrap();
    store.log_upkeep().await.unwrap();
    assert_eq!(rows_of(&store, gone).await, 0);
    assert_eq!(rows_of(&store, kept).await, 1, "other sessions' rows stay");
    let remembered: i64 = sqlx::query_scalar("SELECT count(*) FROM purged_sessions")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(remembered, 0, "a swept purge is forgotten");
}

#[tokio::test]
async fn a_locked_append_that_waited_behind_a_takeover_is_refused() {
    let (_database, store) = temp_store().await;
    let run_end = shared::EventBody::RunFinished {
        thread_id: String::new(),
        run_id: "run_1".into(),
        result: None,
        outcome: None,
        usage: None,
    };
    // Tokens on the locked way (no head known yet), then a run's end (plain, with effects).
    for which in ["tokens", "a run's end"] {
        let session = SessionId::generate();
        store
            .create_session(UserId::LOCAL, session, None, 0)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO run_leases (session_id, run_id, owner, epoch, expires_at) \
             VALUES ($1, 'run_1', $2, 1, 0)",
        )
        .bind(session.to_string())
        .bind(&store.lease.owner)
        .execute(store.pool())
        .await
        .unwrap();
        // Another instance takes the lapsed lease over, under the session's row lock...
        let mut takeover = store.pool().begin().await.unwrap();
        sqlx::query("SELECT id FROM sessions WHERE id = $1 FOR UPDATE")
            .bind(session.to_string())
            .execute(&mut *takeover)
            .await
            .unwrap();
        sqlx::query(
            "UPDATE run_leases SET owner = 'another-instance', epoch = epoch + 1 \
             WHERE session_id = $1",
        )
        .bind(session.to_string())
        .execute(&mut *takeover)
        .await
        .unwrap();
        // ...while this instance's append, begun before it commits, waits for that lock.
        let appending = tokio::spawn({
            let store = store.clone();
            let command = match which {
                "tokens" => tokens(session, &["late"]),
                _ => Command {
                    entries: vec![crate::store::LogEntry::new(shared::Event::at(
                        run_end.clone(),
                        0,
                    ))],
                    ..tokens(session, &[])
                },
            };
            async move { store.apply(&[command], 0).await }
        });
        wait_for_a_lock_wait(&store).await;
        takeover.commit().await.unwrap();
        let applied = appending.await.unwrap().unwrap();
        assert_eq!(
            applied,
            [Applied::Rejected(Rejection::LeaseLost)],
            "{which}: the append's snapshot predates the takeover, its fence must not"
        );
        assert_eq!(rows_of(&store, session).await, 0, "{which}");
    }
}

/// Returns once a statement of the database waits for a lock. PostgreSQL tells no one
/// when a statement starts waiting, so its activity view is read until it shows the wait,
/// each read the next as soon as the last answered (no timer: the round trip paces it).
async fn wait_for_a_lock_wait(store: &super::PostgresStore) {
    let waiting = async {
        let waits = || {
            sqlx::query_scalar::<_, i64>(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
            .fetch_one(store.pool())
        };
        while waits().await.unwrap() == 0 {}
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), waiting)
        .await
        .expect("the append waits for the takeover's row lock");
}
