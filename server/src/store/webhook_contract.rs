//! The webhook outbox's contract, as one story every backend runs: what is owed (a
//! person's waits, not a client's tools; run ends with their run), claims that never
//! overlap and count each attempt once, outcomes, and settling what nobody needs.

use serde_json::{json, Value};
use shared::{EventBody, Interrupt, Outcome};

use super::contract::command;
use super::{Attempt, Guard, Store, Target, Wanted, RUN_ENDED, WAITING};
use crate::domain::{SessionId, UserId};

fn started(session: SessionId, run: &str) -> EventBody {
    EventBody::RunStarted {
        thread_id: session.to_string(),
        run_id: run.into(),
        parent_run_id: None,
        input: None,
    }
}

fn finished(run: &str, outcome: Outcome) -> EventBody {
    EventBody::RunFinished {
        thread_id: "t".into(),
        run_id: run.into(),
        result: None,
        outcome: Some(outcome),
        usage: None,
    }
}

fn interrupt(id: &str, reason: &str) -> Interrupt {
    Interrupt {
        id: id.into(),
        reason: reason.into(),
        message: Some("Ship it?".into()),
        tool_call_id: Some(format!("call-{id}")),
        response_schema: None,
        expires_at: None,
        metadata: None,
    }
}

/// A new session whose run `run` started and then did `then` (appended by the run).
async fn session_that<S: Store>(store: &S, run: &str, then: Vec<EventBody>) -> SessionId {
    let session = SessionId::generate();
    let local = UserId::LOCAL;
    store.create_session(local, session, None, 0).await.unwrap();
    let guard = Guard::StartRun {
        run_id: run.into(),
        client_message_id: None,
        title: "t".into(),
        queued: None,
        fire: None,
    };
    let start = command(session, guard, vec![started(session, run)]);
    let append = command(session, Guard::Append, then);
    store.apply(&[start], 1).await.unwrap();
    store.apply(&[append], 2).await.unwrap();
    session
}

/// The story.
pub async fn the_outbox_owes_claims_and_settles<S: Store>(store: &S) {
    let asking = Outcome::Interrupt {
        interrupts: vec![interrupt("i-person", "input_required")],
    };
    let person = session_that(store, "r1", vec![finished("r1", asking)]).await;
    let pending = EventBody::Custom {
        name: shared::custom::CLIENT_TOOLS_PENDING.into(),
        value: serde_json::to_value(interrupt("i-client", "client_tools")).unwrap(),
    };
    let success = Outcome::Success {
        pending_tool_call_ids: Some(vec!["call-i-client".into()]),
    };
    session_that(store, "r2", vec![pending, finished("r2", success)]).await;
    let error = EventBody::RunError {
        message: "the model is gone".into(),
        code: Some("gone".into()),
    };
    let failed = session_that(store, "r3", vec![error]).await;
    assert_eq!(
        store.interrupts_waiting().await.unwrap(),
        1,
        "a person's wait only"
    );

    let targets: Vec<Target> = ["a", "b"]
        .iter()
        .map(|key| Target {
            url: format!("http://{key}.example/hook"),
            key: (*key).into(),
        })
        .collect();
    let wanted = Wanted {
        waiting: true,
        client_tools: false,
        run_ends: true,
        feedback: false,
    };
    let added = store
        .enqueue_webhooks(&targets, wanted, 0, 100)
        .await
        .unwrap();
    assert_eq!(
        added,
        2 + 3 * 2,
        "the person's wait and three run ends, to each URL"
    );
    let again = store
        .enqueue_webhooks(&targets, wanted, 0, 100)
        .await
        .unwrap();
    assert_eq!(again, 0, "each is owed once");

    let first = store.claim_webhooks(100, 3, 1_000).await.unwrap();
    let rest = store.claim_webhooks(100, 100, 1_000).await.unwrap();
    assert_eq!((first.len(), rest.len()), (3, 5));
    assert!(
        store
            .claim_webhooks(100, 100, 1_000)
            .await
            .unwrap()
            .is_empty(),
        "all held"
    );
    let mut ids: Vec<&str> = first.iter().chain(&rest).map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 8, "no delivery claimed twice");
    let all: Vec<_> = first.iter().chain(&rest).collect();
    assert!(all
        .iter()
        .all(|r| r.attempts == 1 && r.next_attempt_at == 1_000));
    let waiting: Vec<_> = all.iter().filter(|r| r.event == WAITING).collect();
    assert_eq!(waiting.len(), 2);
    let body: Value = serde_json::from_str(waiting[0].interrupt.as_deref().unwrap()).unwrap();
    assert_eq!(body["id"], "i-person");
    let error_end = all
        .iter()
        .find(|r| r.event == RUN_ENDED && r.session == failed)
        .expect("the failed run's end is owed");
    let payload: Value = serde_json::from_str(error_end.payload.as_deref().unwrap()).unwrap();
    assert_eq!(
        payload,
        json!({"runId": "r3", "outcome": "error", "error": {"message": "the model is gone", "code": "gone"}})
    );

    // A failed attempt is due again at its retry time, counted once more when claimed.
    let retried = &waiting[0].id;
    let failure = Attempt::Failed {
        status: Some(500),
        error: "the receiver answered 500".into(),
        retry_at: Some(200),
    };
    store.record_webhook(retried, &failure, 150).await.unwrap();
    assert!(store
        .claim_webhooks(150, 10, 1_000)
        .await
        .unwrap()
        .is_empty());
    let second = store.claim_webhooks(200, 10, 1_300).await.unwrap();
    assert_eq!(second.len(), 1);
    assert_eq!((&second[0].id, second[0].attempts), (retried, 2));
    let delivered = Attempt::Delivered { status: 204 };
    store
        .record_webhook(retried, &delivered, 250)
        .await
        .unwrap();

    // The question is answered: its other delivery is not needed any more.
    let answer = Guard::Resume {
        interrupt_id: "i-person".into(),
        response: json!({"status": "resolved", "payload": {}}),
        run_id: "r4".into(),
    };
    store
        .apply(&[command(person, answer, vec![started(person, "r4")])], 300)
        .await
        .unwrap();
    assert_eq!(store.interrupts_waiting().await.unwrap(), 0);
    assert_eq!(store.settle_webhooks(None, 300).await.unwrap(), 1);
    let urls = [targets[0].url.clone()];
    let cancelled = store.settle_webhooks(Some(&urls), 300).await.unwrap();
    assert_eq!(cancelled, 3, "the run ends owed to b");
    let rows = store.webhooks_of(person).await.unwrap();
    let states: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.event.as_str(), r.state.as_str()))
        .collect();
    assert!(states.contains(&(WAITING, "delivered")), "{states:?}");
    assert!(states.contains(&(WAITING, "superseded")), "{states:?}");
    assert!(states.contains(&(RUN_ENDED, "cancelled")), "{states:?}");
    let deleted = store.prune_webhooks(301).await.unwrap();
    assert_eq!(deleted, 1 + 1 + 3, "delivered, superseded, cancelled");
    assert_eq!(store.webhooks_of(person).await.unwrap().len(), 1);
}
