//! Continue: a stopped answer goes on in a run of its own, started by no message of the
//! person's (`CUSTOM tandem.continue`); the model is told, after the stopped answer, to go
//! on from where it stopped. Only the session's last run, stopped, with an answer, is
//! continued; a repeated `clientMessageId` starts nothing new.

use std::time::Duration;

use serde_json::{json, Value};
use shared::{EventBody, Outcome, TextRole};

use crate::helpers::provider::{fixture, openai_app, Reply};
use crate::helpers::{assert_valid_session, TestApp};

/// What the model is told (the server's `agent::prompt::CONTINUE`).
const TOLD: &str = "Your previous answer was stopped before it was complete. Continue it \
exactly where it stopped, without repeating anything you already wrote.";

async fn continue_run(app: &TestApp, session: &str, run: &str, body: Value) -> (u16, Value) {
    app.post(
        &format!("/api/sessions/{session}/runs/{run}/continue"),
        body,
    )
    .await
}

/// A reply that streams the text fixture slowly, so a stop lands in the middle.
fn slow_text() -> Reply {
    Reply::Sse {
        body: fixture("openai/text.sse"),
        split_every: None,
        pace: Duration::from_millis(60),
        cut_after: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_answer_goes_on_in_a_run_of_its_own_that_tells_the_model_to_continue() {
    let replies = vec![slow_text(), Reply::sse("openai/text.sse")];
    let (app, mut provider) = openai_app(replies, &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "greet me").await;
    socket
        .until(
            |e| matches!(&e.body, EventBody::TextMessageContent { delta, .. } if delta == "Hello"),
        )
        .await;
    let (status, body) = app
        .post(&format!("/api/sessions/{session}/cancel"), json!({}))
        .await;
    assert_eq!(status, 202, "{body}");
    let stopped = socket.until_run_end().await;
    let Some((_, last)) = stopped.last() else {
        panic!("no events")
    };
    let EventBody::RunFinished {
        run_id: stopped_run,
        outcome: Some(Outcome::Cancelled),
        ..
    } = &last.body
    else {
        panic!("{last:?}")
    };
    let answer = app
        .log(&session)
        .await
        .iter()
        .find_map(|(_, e)| match &e.body {
            EventBody::TextMessageStart {
                message_id,
                role: Some(TextRole::Assistant),
                ..
            } => Some(message_id.clone()),
            _ => None,
        })
        .expect("the stopped run's answer");

    let asked = json!({"clientMessageId": "continue-1"});
    let (status, accepted) = continue_run(&app, &session, stopped_run, asked.clone()).await;
    assert_eq!(status, 202, "{accepted}");
    let continuing = accepted["runId"].as_str().unwrap().to_string();
    let events = socket.until_run_end().await;
    assert_eq!(events.last().unwrap().1.type_name(), "RUN_FINISHED");
    let log = app.log(&session).await;
    assert_valid_session(&log, true);

    // The run starts with the marker, not with a message of the person's.
    let start = log
        .iter()
        .position(|(_, e)| matches!(&e.body, EventBody::RunStarted { run_id, .. } if *run_id == continuing))
        .unwrap();
    match &log[start + 1].1.body {
        EventBody::Custom { name, value } => {
            assert_eq!(name, "tandem.continue");
            let marked =
                json!({"runId": stopped_run, "messageId": answer, "clientMessageId": "continue-1"});
            assert_eq!(value, &marked);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        !log[start..].iter().any(|(_, e)| matches!(
            &e.body,
            EventBody::TextMessageStart {
                role: Some(TextRole::User),
                ..
            }
        )),
        "no message of the person's in the continuing run"
    );

    // The model is told to go on, right after the stopped answer.
    provider.received(2).await;
    let messages = provider.requests()[1].body["messages"].clone();
    let messages = messages.as_array().unwrap();
    let told = &messages[messages.len() - 1];
    assert_eq!(told, &json!({"role": "user", "content": TOLD}));
    let before = &messages[messages.len() - 2];
    assert_eq!(before["role"], "assistant");
    assert!(
        before["content"].as_str().unwrap().starts_with("Hello"),
        "{before}"
    );

    // The same request again starts nothing new.
    let (status, again) = continue_run(&app, &session, stopped_run, asked).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["runId"], continuing);
    // The answer is whole now: there is nothing stopped to continue.
    let (status, refused) = continue_run(&app, &session, &continuing, json!({})).await;
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("was not stopped"),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_last_stopped_run_is_continued_and_never_while_another_runs() {
    let replies = vec![
        Reply::sse("openai/text.sse"),
        Reply::Silent(Duration::from_secs(60)),
    ];
    let (app, mut provider) = openai_app(replies, &[]).await;
    let (session, mut socket) = app.open_session().await;
    let finished = app.say(&session, "hello").await;
    socket.until_run_end().await;
    let (status, refused) = continue_run(&app, &session, &finished, json!({})).await;
    assert_eq!(status, 422, "a finished run: {refused}");
    let (status, refused) = continue_run(&app, &session, "run_nope", json!({})).await;
    assert_eq!(status, 422, "an unknown run: {refused}");
    let (status, refused) = continue_run(&app, &session, &finished, json!({"x": 1})).await;
    assert_eq!(status, 400, "an unknown field: {refused}");

    // While a run waits on its model, nothing else starts.
    app.say(&session, "again").await;
    provider.received(2).await;
    let (status, refused) = continue_run(&app, &session, &finished, json!({})).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "run_active");
    assert_valid_session(&app.log(&session).await, false);
}
