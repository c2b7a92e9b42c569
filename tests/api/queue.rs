//! Speaking while the agent works (`whileRunning`): a message sent during a run waits its
//! turn as an event and a row, runs once and in order when the run ends, may be edited or
//! withdrawn until then; `interrupt` stops the run and goes first; `steer` joins the run at
//! its next model call (or runs on its own if the run ends first); a run that pauses keeps
//! its question and the queue waits for the answer.

use serde_json::{json, Value};
use shared::{Event, EventBody, Outcome};

use crate::helpers::socket::interrupt_id;
use crate::helpers::{assert_valid_session, spawn_app, spawn_app_with, TestApp};

/// A turn that streams long enough to send messages during it.
fn slow(extra: Value) -> Value {
    let mut turn = json!({"text": "slow ".repeat(150)});
    turn.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    turn
}

fn ask() -> Value {
    json!({"toolCalls": [{"name": "request_input", "arguments": {"prompt": "Name?", "kind": "text"}}]})
}

async fn slow_app(turns: Value) -> TestApp {
    spawn_app_with(turns, &["--token-delay-ms", "5"]).await
}

/// Sends `text` to `session` with `extra` fields; status and body.
async fn send(app: &TestApp, session: &str, text: &str, extra: Value) -> (u16, Value) {
    let mut body = json!({ "text": text });
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    app.post(&format!("/api/sessions/{session}/messages"), body)
        .await
}

/// Queues `text` (the run must be busy); the queued message.
async fn queue(app: &TestApp, session: &str, text: &str, extra: Value) -> Value {
    let (status, body) = send(app, session, text, extra).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["queued"]["text"], text, "{body}");
    assert_eq!(body["queued"]["runId"], body["runId"], "{body}");
    body["queued"].clone()
}

/// The person's messages in the log: (message id, text), in order.
fn said_by_person(log: &[(u64, Event)]) -> Vec<(String, String)> {
    let mut said: Vec<(String, String)> = Vec::new();
    for (_, event) in log {
        match &event.body {
            EventBody::TextMessageStart {
                message_id,
                role: Some(shared::TextRole::User),
                ..
            } => said.push((message_id.clone(), String::new())),
            EventBody::TextMessageContent { message_id, delta } => {
                if let Some(last) = said.iter_mut().rev().find(|(id, _)| id == message_id) {
                    last.1.push_str(delta);
                }
            }
            _ => {}
        }
    }
    said
}

fn texts(said: &[(String, String)]) -> Vec<&str> {
    said.iter().map(|(_, text)| text.as_str()).collect()
}

/// The `runId` of each `RUN_STARTED`, in order.
fn runs(log: &[(u64, Event)]) -> Vec<String> {
    log.iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::RunStarted { run_id, .. } => Some(run_id.clone()),
            _ => None,
        })
        .collect()
}

fn seq_of(log: &[(u64, Event)], found: impl Fn(&Event) -> bool) -> u64 {
    log.iter()
        .find(|(_, e)| found(e))
        .map(|(seq, _)| *seq)
        .expect("the event is in the log")
}

/// Answers the question `interrupt` of `session` with "Ada"; the run resumes.
async fn answer_ada(app: &TestApp, session: &str, interrupt: &str) {
    let (status, body) = app
        .post(
            &format!("/api/sessions/{session}/interrupts/{interrupt}"),
            json!({"status": "resolved", "payload": {"text": "Ada"}}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
}

async fn queued_now(app: &TestApp, session: &str) -> Value {
    let (status, body) = app.get(&format!("/api/sessions/{session}/queue")).await;
    assert_eq!(status, 200, "{body}");
    body["queued"].clone()
}

/// Waits for the assistant's first words of the current run.
async fn answering(socket: &mut crate::helpers::socket::Socket) {
    socket
        .until(|e| matches!(&e.body, EventBody::TextMessageContent { delta, .. } if delta.starts_with("slow")))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_during_a_run_waits_its_turn_then_runs_once() {
    let app = slow_app(json!([slow(json!({})), {"text": "Second."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "first").await;
    socket.until(|e| e.type_name() == "STEP_STARTED").await;
    let extra = json!({"clientMessageId": "c-2"});
    let queued = queue(&app, &session, "second", extra.clone()).await;
    assert_eq!(queued["steer"], false);
    let (status, again) = send(&app, &session, "second", extra).await;
    assert_eq!(
        (status, &again["runId"], again["duplicate"].as_bool()),
        (200, &queued["runId"], Some(true)),
        "a retried send is one message: {again}"
    );
    assert_eq!(queued_now(&app, &session).await, json!([queued]));
    let shown = socket.until_queue(|q| !q.is_empty()).await;
    assert_eq!(
        serde_json::to_value(&shown).unwrap(),
        json!([queued]),
        "viewers are told at once"
    );
    let mut watcher = app.socket(&session, 0).await;
    let (_, _, caught_up) = watcher.backlog_and_queue().await;
    assert_eq!(
        serde_json::to_value(&caught_up).unwrap(),
        json!([queued]),
        "a viewer that joins is told in `caught_up`"
    );

    socket.until_run_end().await;
    let second = socket.until_run_end().await;
    assert_eq!(second.last().unwrap().1.type_name(), "RUN_FINISHED");
    let log = app.log(&session).await;
    assert_eq!(runs(&log)[1], queued["runId"].as_str().unwrap());
    let said = said_by_person(&log);
    assert_eq!(texts(&said), ["first", "second"]);
    assert_eq!(
        said[1].0,
        queued["id"].as_str().unwrap(),
        "its id is its messageId"
    );
    assert_eq!(queued_now(&app, &session).await, json!([]));
    assert_valid_session(&app.log(&session).await, true);
    let metrics = app.metrics().await;
    assert!(
        metrics.contains("tandem_messages_while_running_total{mode=\"queue\"}"),
        "counted in /metrics"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_messages_run_in_order_and_can_be_edited_or_withdrawn_until_they_start() {
    let app = slow_app(json!([slow(json!({})), slow(json!({})), {"text": "Third."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "a").await;
    socket.until(|e| e.type_name() == "STEP_STARTED").await;
    let b = queue(&app, &session, "b", json!({})).await;
    let c = queue(&app, &session, "c", json!({})).await;
    let d = queue(&app, &session, "d", json!({})).await;
    let path = |q: &Value| {
        format!(
            "/api/sessions/{session}/queue/{}",
            q["id"].as_str().unwrap()
        )
    };

    let withdrawn = app.http.delete(app.url(&path(&c))).send().await.unwrap();
    assert_eq!(withdrawn.status(), 204);
    let (status, edited) = app.patch(&path(&d), json!({"text": "D, better"})).await;
    assert_eq!((status, &edited["text"]), (200, &json!("D, better")));
    let (status, body) = app.patch(&path(&d), json!({"text": "  "})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_message"))
    );
    let (status, body) = app
        .patch(
            &format!("/api/sessions/{session}/queue/msg_nope"),
            json!({"text": "x"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found"))
    );
    let order: Vec<Value> = queued_now(&app, &session).await.as_array().unwrap().clone();
    assert_eq!(
        order.iter().map(|q| &q["id"]).collect::<Vec<_>>(),
        [&b["id"], &d["id"]]
    );

    socket.until_run_end().await;
    socket
        .until(|e| matches!(&e.body, EventBody::RunStarted { run_id, .. } if *run_id == b["runId"]))
        .await;
    let (status, body) = app.patch(&path(&b), json!({"text": "too late"})).await;
    assert_eq!(
        (
            status,
            body["error"]["code"].as_str(),
            &body["error"]["details"]["runId"]
        ),
        (409, Some("already_started"), &b["runId"]),
        "{body}"
    );
    let late = app.http.delete(app.url(&path(&b))).send().await.unwrap();
    assert_eq!(late.status(), 409);
    socket.until_run_end().await;
    socket.until_run_end().await;

    let log = app.log(&session).await;
    assert_eq!(texts(&said_by_person(&log)), ["a", "b", "D, better"]);
    assert_eq!(runs(&log).len(), 3, "the withdrawn message never ran");
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupting_message_stops_the_run_and_runs_before_the_queue() {
    let app =
        slow_app(json!([slow(json!({})), {"text": "Now this."}, {"text": "Then that."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "first").await;
    answering(&mut socket).await;
    queue(&app, &session, "later", json!({})).await;
    let now = queue(
        &app,
        &session,
        "stop, do this",
        json!({"whileRunning": "interrupt"}),
    )
    .await;

    let stopped = socket.until_run_end().await;
    assert!(
        matches!(
            &stopped.last().unwrap().1.body,
            EventBody::RunFinished {
                outcome: Some(Outcome::Cancelled),
                ..
            }
        ),
        "the run stopped as Stop stops it: {:?}",
        stopped.last()
    );
    socket.until_run_end().await;
    socket.until_run_end().await;
    let log = app.log(&session).await;
    let first_end = stopped.last().unwrap().0;
    let partial: String = log
        .iter()
        .take_while(|(seq, _)| *seq < first_end)
        .filter_map(|(_, e)| match &e.body {
            EventBody::TextMessageContent { delta, .. } if delta.starts_with("slow") => {
                Some(delta.as_str())
            }
            _ => None,
        })
        .collect();
    assert!(
        !partial.is_empty() && partial.len() < "slow ".len() * 150,
        "the partial answer is kept: {partial:?}"
    );
    assert_eq!(
        texts(&said_by_person(&log)),
        ["first", "stop, do this", "later"]
    );
    assert_eq!(runs(&log)[1], now["runId"].as_str().unwrap());
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_steering_message_joins_the_run_at_its_next_model_call() {
    let calc = json!({"toolCalls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]});
    let app = slow_app(json!([slow(calc), {"text": "Steered."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "compute").await;
    answering(&mut socket).await;
    let steer = queue(
        &app,
        &session,
        "use radians",
        json!({"whileRunning": "steer"}),
    )
    .await;
    assert_eq!(steer["steer"], true);
    let run = socket.until_run_end().await;
    assert_eq!(run.last().unwrap().1.type_name(), "RUN_FINISHED");

    let log = app.log(&session).await;
    assert_eq!(
        runs(&log).len(),
        1,
        "it joined the run instead of starting one"
    );
    let said = said_by_person(&log);
    assert_eq!(texts(&said), ["compute", "use radians"]);
    assert_eq!(said[1].0, steer["id"].as_str().unwrap());
    let joined = seq_of(
        &log,
        |e| matches!(&e.body, EventBody::TextMessageStart { message_id, .. } if *message_id == steer["id"]),
    );
    let result = seq_of(&log, |e| e.type_name() == "TOOL_CALL_RESULT");
    let calls: Vec<u64> = log
        .iter()
        .filter(|(_, e)| e.type_name() == "STEP_STARTED")
        .map(|(seq, _)| *seq)
        .collect();
    assert!(
        result < joined && joined < calls[1],
        "after the call in flight, before the next model call: {result} {joined} {calls:?}"
    );
    assert_eq!(queued_now(&app, &session).await, json!([]));
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_steering_message_runs_on_its_own_when_the_run_ends_first() {
    let app = slow_app(json!([slow(json!({})), {"text": "On its own."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "one call only").await;
    answering(&mut socket).await;
    let steer = queue(&app, &session, "and also", json!({"whileRunning": "steer"})).await;
    socket.until_run_end().await;
    let own = socket.until_run_end().await;
    assert_eq!(own.last().unwrap().1.type_name(), "RUN_FINISHED");
    let log = app.log(&session).await;
    assert_eq!(runs(&log)[1], steer["runId"].as_str().unwrap());
    assert_eq!(texts(&said_by_person(&log)), ["one call only", "and also"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_run_keeps_its_question_and_the_queue_waits_for_the_answer() {
    let app = spawn_app(json!([ask(), {"text": "Thanks, Ada."}, {"text": "Queued reply."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "start").await;
    let paused = socket.until_run_end().await;
    let interrupt = interrupt_id(&paused);
    let queued = queue(&app, &session, "meanwhile", json!({})).await;
    let (_, row) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(row["status"], "awaiting_input", "the question stays");

    answer_ada(&app, &session, &interrupt).await;
    socket.until_run_end().await;
    socket.until_run_end().await;
    let log = app.log(&session).await;
    assert_eq!(
        runs(&log).last().unwrap(),
        queued["runId"].as_str().unwrap()
    );
    assert_eq!(texts(&said_by_person(&log)), ["start", "meanwhile"]);
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_a_paused_run_lets_the_queue_go_on() {
    let app = spawn_app(json!([ask(), {"text": "Queued reply."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "start").await;
    socket.until_run_end().await;
    queue(&app, &session, "never mind, this", json!({})).await;
    let (status, _) = app
        .post(&format!("/api/sessions/{session}/cancel"), json!({}))
        .await;
    assert_eq!(status, 202);
    socket.until_run_end().await;
    let next = socket.until_run_end().await;
    assert_eq!(next.last().unwrap().1.type_name(), "RUN_FINISHED");
    let log = app.log(&session).await;
    assert_eq!(texts(&said_by_person(&log)), ["start", "never mind, this"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_socket_frame_says_while_running_too_and_a_wrong_mode_is_an_error_frame() {
    let app = slow_app(json!([slow(json!({})), {"text": "Second."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "first").await;
    socket.until(|e| e.type_name() == "STEP_STARTED").await;
    socket
        .send(json!({"kind": "user_message", "text": "x", "whileRunning": "later"}))
        .await;
    assert_eq!(socket.error_code().await, "invalid_frame");
    socket
        .send(json!({"kind": "user_message", "text": "steer me", "whileRunning": "steer"}))
        .await;
    let queued = socket.until_queue(|q| !q.is_empty()).await;
    assert_eq!(
        (queued[0].text.as_str(), queued[0].steer),
        ("steer me", true)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_holds_a_bounded_queue() {
    let app = spawn_app(json!([ask()])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "start").await;
    socket.until_run_end().await;
    for n in 0..32 {
        queue(&app, &session, &format!("m{n}"), json!({})).await;
    }
    let (status, body) = send(&app, &session, "one too many", json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("queue_full")),
        "{body}"
    );
    assert_eq!(
        queued_now(&app, &session).await.as_array().unwrap().len(),
        32
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_message_waits_through_a_restart() {
    let (dir, url) = crate::helpers::fresh_database();
    let script = crate::helpers::write_script(
        dir.path(),
        json!([ask(), {"text": "Thanks."}, {"text": "After the restart."}]),
    );
    let first = crate::helpers::start(crate::helpers::test_config(&url, &script, &[])).await;
    let session = first.create_session().await;
    let mut socket = first.socket(&session, 0).await;
    socket.backlog().await;
    first.say(&session, "ask me").await;
    let interrupt = interrupt_id(&socket.until_run_end().await);
    let queued = queue(&first, &session, "later, please", json!({})).await;
    first.stop().await;
    drop(socket);

    let second = crate::helpers::start(crate::helpers::test_config(&url, &script, &[])).await;
    assert_eq!(queued_now(&second, &session).await, json!([queued]));
    let mut socket = second.socket(&session, 0).await;
    let (_, _, caught_up) = socket.backlog_and_queue().await;
    assert_eq!(serde_json::to_value(&caught_up).unwrap(), json!([queued]));
    answer_ada(&second, &session, &interrupt).await;
    socket.until_run_end().await;
    socket.until_run_end().await;
    let log = second.log(&session).await;
    assert_eq!(texts(&said_by_person(&log)), ["ask me", "later, please"]);
    assert_eq!(
        runs(&log).last().unwrap(),
        queued["runId"].as_str().unwrap()
    );
    assert_valid_session(&log, true);
}
