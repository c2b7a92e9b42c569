//! The store's contract for queued messages: they wait while the session is busy, run once
//! and first in line first, and change or leave only while they wait.

use shared::{EventBody, TextRole};

use super::{command, run_started, start};
use crate::domain::{SessionId, UserId};
use crate::store::{Applied, Guard, Rejection, Store};

/// A queued message waiting for a run to end.
fn queued(id: &str, client: Option<&str>) -> Box<crate::store::QueuedRow> {
    Box::new(crate::store::QueuedRow {
        id: id.into(),
        run_id: format!("run_{id}"),
        steer: false,
        client_message_id: client.map(str::to_string),
        text: format!("text of {id}"),
        extra: Default::default(),
    })
}

fn run_finished(session: SessionId, run: &str) -> EventBody {
    EventBody::RunFinished {
        thread_id: session.to_string(),
        run_id: run.into(),
        result: None,
        outcome: None,
        usage: None,
    }
}

/// Queued messages wait while the session is busy, run once and first-in-line first, and
/// change or leave only while they wait.
pub async fn queued_messages_run_once_in_order<S: Store>(store: &S) {
    let session = SessionId::generate();
    store
        .create_session(UserId::LOCAL, session, None, 0)
        .await
        .unwrap();
    let put = |message: Box<crate::store::QueuedRow>, first: bool| {
        command(
            session,
            Guard::Queue {
                message,
                first,
                fire: None,
            },
            Vec::new(),
        )
    };
    assert_eq!(
        store
            .apply(&[put(queued("q0", None), false)], 1)
            .await
            .unwrap(),
        [Applied::Rejected(Rejection::NothingToWaitFor)],
        "an idle session with nothing queued has nothing to wait for"
    );
    store
        .apply(&[start(session, "r1", Some("c1"))], 1)
        .await
        .unwrap();
    let batch = [
        put(queued("q1", None), false),
        put(queued("q2", None), false),
        put(queued("q3", None), true),
        put(queued("q4", Some("c1")), false),
        put(queued("q5", Some("c5")), false),
        put(queued("q6", Some("c5")), false),
    ];
    let applied = store.apply(&batch, 2).await.unwrap();
    let committed = Applied::Committed { first_seq: 2 };
    assert_eq!(
        applied,
        [
            committed.clone(),
            committed.clone(),
            committed.clone(),
            Applied::Rejected(Rejection::DuplicateMessage {
                run_id: "r1".into()
            }),
            committed,
            Applied::Rejected(Rejection::DuplicateMessage {
                run_id: "run_q5".into()
            }),
        ],
        "nothing is appended; a client message id is taken once, queued or run"
    );
    let ids =
        |rows: Vec<crate::store::QueuedRow>| rows.into_iter().map(|q| q.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.queued_messages(session).await.unwrap()),
        ["q3", "q1", "q2", "q5"]
    );
    assert!(store.idle_with_queue().await.unwrap().is_empty());

    let finish = command(session, Guard::Append, vec![run_finished(session, "r1")]);
    store.apply(&[finish], 3).await.unwrap();
    assert_eq!(store.idle_with_queue().await.unwrap(), [session]);
    let start_queued = |id: &str| {
        let guard = Guard::StartRun {
            run_id: format!("run_{id}"),
            client_message_id: None,
            title: "t".into(),
            queued: Some(id.into()),
            fire: None,
        };
        command(
            session,
            guard,
            vec![run_started(session, &format!("run_{id}"))],
        )
    };
    let applied = store
        .apply(
            &[
                start(session, "r2", None),
                start_queued("q1"),
                start_queued("q3"),
            ],
            4,
        )
        .await
        .unwrap();
    assert_eq!(
        applied,
        [
            Applied::Rejected(Rejection::QueueWaiting),
            Applied::Rejected(Rejection::QueuedMissing),
            Applied::Committed { first_seq: 3 },
        ],
        "messages queued earlier go first"
    );
    assert_eq!(
        store.apply(&[start_queued("q3")], 5).await.unwrap(),
        [Applied::Rejected(Rejection::Busy(
            shared::api::SessionStatus::Running
        ))]
    );

    let change = |id: &str, text: Option<&str>| {
        let guard = Guard::ChangeQueued {
            id: id.into(),
            text: text.map(str::to_string),
        };
        command(session, guard, Vec::new())
    };
    let applied = store
        .apply(
            &[
                change("q1", Some("edited")),
                change("q2", None),
                change("q3", None),
                change("q9", None),
            ],
            6,
        )
        .await
        .unwrap();
    assert_eq!(
        &applied[2..],
        [
            Applied::Rejected(Rejection::QueuedStarted {
                run_id: "run_q3".into()
            }),
            Applied::Rejected(Rejection::QueuedMissing),
        ]
    );
    let left = store.queued_messages(session).await.unwrap();
    assert_eq!(ids(left.clone()), ["q1", "q5"]);
    assert_eq!(left[0].text, "edited");

    let steer = |ids: &[&str]| {
        let guard = Guard::TakeSteering {
            run_id: "run_q3".into(),
            ids: ids.iter().map(|id| id.to_string()).collect(),
        };
        command(
            session,
            guard,
            vec![EventBody::TextMessageStart {
                message_id: ids[0].into(),
                role: Some(TextRole::User),
                name: None,
            }],
        )
    };
    let applied = store
        .apply(&[steer(&["q5", "q9"]), steer(&["q5"]), steer(&["q5"])], 7)
        .await
        .unwrap();
    assert_eq!(
        applied,
        [
            Applied::Rejected(Rejection::QueuedMissing),
            Applied::Committed { first_seq: 4 },
            Applied::Rejected(Rejection::QueuedMissing),
        ],
        "a steering message joins the run once"
    );
    assert_eq!(ids(store.queued_messages(session).await.unwrap()), ["q1"]);
}
