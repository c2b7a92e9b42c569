//! The writer's unit tests: session writes among appends, and broken streams.

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
