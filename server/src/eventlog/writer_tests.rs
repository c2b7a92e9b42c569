//! The writer's unit tests: session writes among appends, broken streams, and several
//! writers at once (PostgreSQL).

use super::*;
use crate::store::test_support::{append, temp_store};
use crate::store::{EventLog, Rejection};

/// Creates an untitled session of the local user through the writer.
async fn create_untitled(writer: &Writer, id: SessionId) {
    let create = SessionOp::Create {
        owner: UserId::LOCAL,
        id,
        title: None,
    };
    writer.session(create).await.unwrap();
}

#[tokio::test]
async fn session_writes_keep_their_place_among_appends() {
    let (_dir, store) = temp_store().await;
    let writer = Writer::spawn(Arc::new(store), Hub::default(), Duration::from_secs(1));
    let id = SessionId::generate();
    let create = SessionOp::Create {
        owner: UserId::LOCAL,
        id,
        title: Some("Notes".into()),
    };
    let created = writer.session(create).await.unwrap();
    assert!(matches!(created, SessionDone::Created(row) if row.id == id && row.title == "Notes"));
    // Queued in this order: an append, the delete, another append.
    let (first, deleted, last) = tokio::join!(
        writer.submit(append(id, &["a"])),
        writer.session(SessionOp::Delete { id }),
        writer.submit(append(id, &["b"])),
    );
    assert_eq!(first.unwrap(), Applied::Committed { first_seq: 1 });
    assert!(matches!(deleted.unwrap(), SessionDone::Deleted(true)));
    assert_eq!(
        last.unwrap(),
        Applied::Rejected(Rejection::SessionMissing),
        "an append queued after the delete finds no session"
    );
    let again = writer.session(SessionOp::Delete { id }).await.unwrap();
    assert!(matches!(again, SessionDone::Deleted(false)));
}

#[tokio::test]
async fn a_refused_command_breaks_the_rest_of_its_stream() {
    let (_dir, store) = temp_store().await;
    let writer = Writer::spawn(Arc::new(store), Hub::default(), Duration::from_secs(1));
    let (gone, kept) = (SessionId::generate(), SessionId::generate());
    for id in [gone, kept] {
        create_untitled(&writer, id).await;
    }
    let stream = StreamId::fresh();
    let first = writer.send(append(gone, &["a"]), stream).await.unwrap();
    let (deleted, refused, after) = tokio::join!(
        writer.session(SessionOp::Delete { id: gone }),
        async { writer.send(append(gone, &["b"]), stream).await.unwrap() },
        async {
            tokio::task::yield_now().await;
            writer.send(append(kept, &["c"]), stream).await.unwrap()
        },
    );
    assert!(matches!(deleted.unwrap(), SessionDone::Deleted(true)));
    assert_eq!(
        first.outcome().await.unwrap(),
        Applied::Committed { first_seq: 1 }
    );
    let refusal = Applied::Rejected(Rejection::SessionMissing);
    assert_eq!(refused.outcome().await.unwrap(), refusal);
    assert_eq!(
        after.outcome().await.unwrap(),
        refusal,
        "a later command of the broken stream is not applied, though its session exists"
    );
    let other = writer.send(append(kept, &["d"]), StreamId::fresh()).await;
    assert_eq!(
        other.unwrap().outcome().await.unwrap(),
        Applied::Committed { first_seq: 1 },
        "other streams go on, and nothing of the broken one reached the log"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_commits_what_was_queued_before_it_and_refuses_what_comes_after() {
    let (_dir, store) = temp_store().await;
    let store = Arc::new(store);
    let writer = Writer::spawn(store.clone(), Hub::default(), Duration::from_secs(1));
    let id = SessionId::generate();
    create_untitled(&writer, id).await;
    // Sent without awaiting the commit, then the close.
    let stream = StreamId::fresh();
    let sent = writer.send(append(id, &["a", "b"]), stream).await.unwrap();
    writer.close().await;
    assert_eq!(
        sent.outcome().await.unwrap(),
        Applied::Committed { first_seq: 1 }
    );
    assert_eq!(store.events_after(id, 0, 10).await.unwrap().len(), 2);
    let late = writer.submit(append(id, &["c"])).await;
    assert!(matches!(late, Err(WriteError::Stopped)), "{late:?}");
    // A second close has nothing left to do.
    writer.close().await;
}

#[tokio::test]
async fn several_writers_keep_each_sessions_order() {
    let database = crate::store::ScratchDatabase::create()
        .expect("PostgreSQL must be reachable for these tests (scripts/test.sh starts it)");
    let options = crate::store::StoreOptions::default();
    let store = crate::store::PostgresStore::connect(database.url(), &options);
    let store = Arc::new(store.await.unwrap());
    let writer = Writer::spawn(store.clone(), Hub::default(), Duration::from_secs(5));
    assert_eq!(writer.queues.len(), crate::store::DEFAULT_LOG_WRITERS);
    // An odd count: a writer picked per command in turn would split every session's
    // appends over both writers, and their order would break (checked: it fails then).
    let sessions: Vec<SessionId> = (0..15).map(|_| SessionId::generate()).collect();
    for &id in &sessions {
        create_untitled(&writer, id).await;
    }
    let writers: std::collections::HashSet<usize> =
        sessions.iter().map(|&id| writer.writer_of(id)).collect();
    assert_eq!(writers.len(), 2, "15 sessions spread over both writers");
    // Every session pipelines 40 appends on its own stream, all sessions interleaved.
    let streams: Vec<StreamId> = sessions.iter().map(|_| StreamId::fresh()).collect();
    let mut in_flight = Vec::new();
    for index in 0..40 {
        for (&id, &stream) in sessions.iter().zip(&streams) {
            let delta = format!("{index},");
            let sent = writer.send(append(id, &[&delta]), stream).await.unwrap();
            in_flight.push(sent);
        }
    }
    for sent in in_flight {
        assert!(matches!(
            sent.outcome().await,
            Ok(Applied::Committed { .. })
        ));
    }
    let expected: String = (0..40).map(|index| format!("{index},")).collect();
    for &id in &sessions {
        let stored = store.events_after(id, 0, 1000).await.unwrap();
        let seqs: Vec<u64> = stored.iter().map(|event| event.seq).collect();
        assert_eq!(seqs, (1..=stored.len() as u64).collect::<Vec<_>>(), "{id}");
        let text: String = stored
            .iter()
            .map(|event| {
                let event: serde_json::Value = serde_json::from_str(&event.json).unwrap();
                event["delta"].as_str().unwrap().to_string()
            })
            .collect();
        assert_eq!(text, expected, "session {id}'s deltas in the order sent");
    }
    writer.close().await;
}
