//! Read-only share links: the viewer sees the session live, cannot act on it, and never
//! receives what the link hides; a deleted link stops at once.

mod results;

use serde_json::{json, Value};
use shared::EventBody;
use uuid::Uuid;

use crate::helpers::socket::{Received, Socket};
use crate::helpers::{spawn_app_with, TestApp};

fn turns() -> Value {
    json!([
        {"reasoning": "The secret plan.",
         "toolCalls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]},
        {"text": "It is 42."},
        {"reasoning": "Second thoughts.", "text": "Still 42."},
    ])
}

async fn create_share(app: &TestApp, session: &str, hide: Value) -> Value {
    let (status, share) = app
        .post(&format!("/api/sessions/{session}/shares"), hide)
        .await;
    assert_eq!(status, 201, "{share}");
    share
}

fn types(events: &[(u64, shared::Event)]) -> Vec<&'static str> {
    events.iter().map(|(_, e)| e.type_name()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_shows_the_session_live_without_what_it_hides_and_takes_no_input() {
    let app = spawn_app_with(turns(), &[]).await;
    let (session, mut owner) = app.open_session().await;
    app.say(&session, "What is 6*7?").await;
    owner.until_run_end().await;
    let share = create_share(
        &app,
        &session,
        json!({"hideReasoning": true, "hideToolArguments": true}),
    )
    .await;
    let token = share["token"].as_str().unwrap();
    assert!(token.starts_with("tds_"), "{share}");
    assert_eq!(share["path"], format!("/#/shared/{token}"));

    let viewer = app.anonymous();
    let (status, seen) = viewer.get(&format!("/api/shared/{token}")).await;
    assert_eq!(status, 200, "{seen}");
    assert_eq!(seen["title"], "What is 6*7?");
    assert_eq!(
        (
            seen["hideReasoning"].as_bool(),
            seen["hideToolArguments"].as_bool()
        ),
        (Some(true), Some(true))
    );

    let mut socket = viewer
        .try_shared_socket(token, 0)
        .await
        .expect("the link opens");
    let (backlog, caught_up) = socket.backlog().await;
    let full = app.log(&session).await;
    assert_eq!(caught_up, full.last().unwrap().0);
    let shown = types(&backlog);
    assert!(
        shown.iter().all(|t| !t.starts_with("REASONING")),
        "{shown:?}"
    );
    assert!(!shown.contains(&"TOOL_CALL_ARGS"), "{shown:?}");
    for kept in [
        "TEXT_MESSAGE_CONTENT",
        "TOOL_CALL_START",
        "TOOL_CALL_RESULT",
        "RUN_FINISHED",
    ] {
        assert!(shown.contains(&kept), "{kept} missing from {shown:?}");
    }
    let seqs: Vec<u64> = backlog.iter().map(|(seq, _)| *seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in log order");

    // Live: the owner's next run reaches the viewer, filtered the same way.
    app.say(&session, "Sure?").await;
    let live = socket.until_run_end().await;
    assert!(
        live.iter()
            .all(|(_, e)| !e.type_name().starts_with("REASONING")),
        "{:?}",
        types(&live)
    );
    assert!(live.iter().any(|(_, e)| matches!(&e.body, EventBody::TextMessageContent { delta, .. } if delta.contains("42"))));

    // Read-only: any frame gets an error frame and the socket stays open.
    socket
        .send(json!({"kind": "user_message", "text": "hijack"}))
        .await;
    assert_eq!(socket.error_code().await, "read_only");
    socket.send(json!({"kind": "cancel"})).await;
    assert_eq!(socket.error_code().await, "read_only");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_that_hides_nothing_shows_everything_but_signatures() {
    let app = spawn_app_with(turns(), &[]).await;
    let (session, mut owner) = app.open_session().await;
    app.say(&session, "What is 6*7?").await;
    owner.until_run_end().await;
    let share = create_share(&app, &session, json!({})).await;
    let mut socket = app
        .anonymous()
        .try_shared_socket(share["token"].as_str().unwrap(), 0)
        .await
        .unwrap();
    let (backlog, _) = socket.backlog().await;
    let full: Vec<_> = app
        .log(&session)
        .await
        .into_iter()
        .filter(|(_, e)| e.type_name() != "REASONING_ENCRYPTED_VALUE")
        .collect();
    assert_eq!(backlog, full);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_link_opens_nothing_and_its_sockets_close_at_once() {
    // Heartbeats too rare to close anything: the close comes from the deletion.
    let flags = [
        "--heartbeat-interval-ms",
        "600000",
        "--client-timeout-ms",
        "1200000",
    ];
    let app = spawn_app_with(turns(), &flags).await;
    let session = app.create_session().await;
    let share = create_share(&app, &session, json!({"hideReasoning": true})).await;
    let token = share["token"].as_str().unwrap();
    let (_, listed) = app.get(&format!("/api/sessions/{session}/shares")).await;
    assert_eq!(listed["shares"][0]["id"], share["id"]);
    assert!(
        listed["shares"][0].get("token").is_none(),
        "secrets are shown once"
    );
    assert_eq!(listed["shares"][0]["hideReasoning"], true);

    let mut socket = app.anonymous().try_shared_socket(token, 0).await.unwrap();
    socket.backlog().await;
    let url = app.url(&format!(
        "/api/sessions/{session}/shares/{}",
        share["id"].as_str().unwrap()
    ));
    assert_eq!(app.http.delete(&url).send().await.unwrap().status(), 204);
    assert_eq!(app.http.delete(&url).send().await.unwrap().status(), 404);
    assert_eq!(
        socket.closed().await,
        (Some(1008), "this share link was deleted".into())
    );
    let (status, body) = app.anonymous().get(&format!("/api/shared/{token}")).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found"))
    );
    assert_eq!(
        app.anonymous()
            .try_shared_socket(token, 0)
            .await
            .err()
            .unwrap()
            .0,
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_session_takes_its_links_with_it() {
    let app = spawn_app_with(turns(), &[]).await;
    let session = app.create_session().await;
    let share = create_share(&app, &session, json!({})).await;
    let token = share["token"].as_str().unwrap();
    let mut socket = app.anonymous().try_shared_socket(token, 0).await.unwrap();
    socket.backlog().await;
    assert_eq!(app.delete_session(&session).await, 204);
    assert!(matches!(socket.receive().await, Received::Closed(_)));
    assert_eq!(
        app.anonymous().get(&format!("/api/shared/{token}")).await.0,
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_links_are_capped_per_session_and_their_creation_is_rate_limited() {
    let flags = ["--max-shares-per-session", "3", "--shares-per-minute", "5"];
    let app = spawn_app_with(turns(), &flags).await;
    let session = app.create_session().await;
    let path = format!("/api/sessions/{session}/shares");
    let mut made = Vec::new();
    for _ in 0..3 {
        made.push(create_share(&app, &session, json!({})).await);
    }
    let (status, body) = app.post(&path, json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("too_many_share_links")),
        "{body}"
    );
    let first = made[0]["id"].as_str().unwrap();
    let deleted = app.http.delete(app.url(&format!("{path}/{first}"))).send();
    assert_eq!(deleted.await.unwrap().status(), 204);
    create_share(&app, &session, json!({})).await;

    // Four made this minute; one more is allowed, then the rate refuses.
    let other = app.create_session().await;
    create_share(&app, &other, json!({})).await;
    let response = app
        .http
        .post(app.url(&format!("/api/sessions/{other}/shares")))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    assert!(response.headers().contains_key("retry-after"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn viewers_are_capped_per_session_across_links_and_per_owner() {
    let flags = [
        "--viewer-sockets-per-session",
        "2",
        "--viewer-sockets-per-owner",
        "3",
        "--sockets-per-user",
        "2",
    ];
    let app = spawn_app_with(turns(), &flags).await;
    let (one, two) = (app.create_session().await, app.create_session().await);
    let token = |share: &Value| share["token"].as_str().unwrap().to_string();
    let first_link = token(&create_share(&app, &one, json!({})).await);
    let second_link = token(&create_share(&app, &one, json!({})).await);
    let other_session = token(&create_share(&app, &two, json!({})).await);
    let viewer = app.anonymous();
    let _a = viewer.try_shared_socket(&first_link, 0).await.unwrap();
    let _b = viewer.try_shared_socket(&second_link, 0).await.unwrap();
    for link in [&first_link, &second_link] {
        let (status, body) = viewer.try_shared_socket(link, 0).await.err().unwrap();
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (429, Some("too_many_sockets")),
            "the session's viewers are full, whichever link: {body}"
        );
    }
    let _c = viewer.try_shared_socket(&other_session, 0).await.unwrap();
    let (status, _) = viewer
        .try_shared_socket(&other_session, 0)
        .await
        .err()
        .unwrap();
    assert_eq!(status, 429, "the owner's viewers are full across sessions");
    // The owner's own sockets count apart.
    let _mine = app.socket(&one, 0).await;
    let _mine_too = app.socket(&two, 0).await;
}

/// Arguments a link that hides them must never send, where Tandem records them: the
/// model's, the person's edit of them, and those of an AG-UI client's own tool; and the
/// client tool's result, which may repeat them.
const ARGUMENTS: [&str; 4] = [
    "model-argument-canary",
    "edited-argument-canary",
    "client-argument-canary",
    "client-result-canary",
];
/// What an AG-UI client sends beside its messages, which no link sends.
const CLIENT_INPUT: [&str; 4] = [
    "context-canary",
    "state-canary",
    "props-canary",
    "tool-definition-canary",
];

/// A call that needs approval, then a call of the client's own tool, then an answer.
fn approval_then_client_tool() -> Value {
    json!([
        {"toolCalls": [{"name": "write_file",
                        "arguments": {"path": "note.txt", "content": ARGUMENTS[0]}}]},
        {"text": "Showing a card.",
         "toolCalls": [{"name": "show_card", "arguments": {"title": ARGUMENTS[2]}}]},
        {"text": "All done."},
    ])
}

/// An AG-UI input on `thread` with the client's tool, context, state and props.
fn client_input(thread: &str, messages: Value) -> Value {
    json!({"threadId": thread, "runId": Uuid::new_v4().to_string(), "messages": messages,
           "tools": [{"name": "show_card", "description": CLIENT_INPUT[3],
                      "parameters": {"type": "object", "properties": {"title": {"type": "string"}}}}],
           "context": [{"description": "what the client knows", "value": CLIENT_INPUT[0]}],
           "state": {"secret": CLIENT_INPUT[1]}, "forwardedProps": {"note": CLIENT_INPUT[2]}})
}

/// Posts an AG-UI input and reads the run it starts to its end; returns the last event.
async fn agui_run(app: &TestApp, input: &Value) -> Value {
    let response = app
        .http
        .post(app.url("/api/agui"))
        .header("accept", "text/event-stream")
        .json(input)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body = response.text().await.unwrap();
    let last = body
        .split("\n\n")
        .filter_map(|f| f.strip_prefix("data: "))
        .last();
    serde_json::from_str(last.expect("the run's events")).unwrap()
}

/// A socket's frames as the server sent them, up to and including the one `done` holds for.
async fn raw_until(socket: &mut Socket, done: impl Fn(&Value) -> bool) -> Vec<String> {
    let mut frames = Vec::new();
    loop {
        let text = socket.text().await.expect("the socket stays open");
        let frame: Value = serde_json::from_str(&text).unwrap();
        frames.push(text);
        if done(&frame) {
            return frames;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_that_hides_arguments_sends_none_nor_what_an_ag_ui_client_sent_beside_its_messages()
{
    let flags = ["--require-approval", "write_file"];
    let app = spawn_app_with(approval_then_client_tool(), &flags).await;
    // A thread whose id is a session of the caller's runs in that session.
    let thread = app.create_session().await;
    let said = json!([{"id": "u1", "role": "user", "content": "Write a note"}]);
    let first = client_input(&thread, said.clone());
    let paused = agui_run(&app, &first).await;
    let interrupt = paused["outcome"]["interrupts"][0]["id"].clone();
    // The client's state becomes the session's shared state (`STATE_SNAPSHOT`), which a
    // link shows unless it hides it, as this one does; the input itself never shows it.
    let hide = json!({"hideToolArguments": true, "state": false});
    let share = create_share(&app, &thread, hide).await;
    let token = share["token"].as_str().unwrap();
    let mut live = app.anonymous().try_shared_socket(token, 0).await.unwrap();
    let mut seen = raw_until(&mut live, |frame| frame["kind"] == "caught_up").await;

    // The person approves the call with edited arguments; the model then calls the
    // client's tool, whose result the client sends.
    let mut approve = client_input(&thread, said.clone());
    approve["resume"] = json!([{"interruptId": interrupt, "status": "resolved", "payload":
        {"approved": true, "arguments": {"path": "note.txt", "content": ARGUMENTS[1]}}}]);
    let waiting = agui_run(&app, &approve).await;
    let call = waiting["outcome"]["pendingToolCallIds"][0].clone();
    let mut messages = said.as_array().unwrap().clone();
    messages.push(json!({"id": "t1", "role": "tool", "toolCallId": call, "content": ARGUMENTS[3]}));
    let done = agui_run(&app, &client_input(&thread, json!(messages))).await;
    assert_eq!(done["outcome"], json!({"type": "success"}));

    let last = app.log(&thread).await.last().unwrap().0;
    seen.extend(raw_until(&mut live, |frame| frame["seq"].as_u64() == Some(last)).await);
    let mut again = app.anonymous().try_shared_socket(token, 0).await.unwrap();
    let replayed = raw_until(&mut again, |frame| frame["kind"] == "caught_up").await;
    let (status, read) = app.anonymous().get(&format!("/api/shared/{token}")).await;
    assert_eq!(status, 200, "{read}");

    let (_, log) = app
        .get(&format!(
            "/api/sessions/{thread}/events?after=0&limit=10000"
        ))
        .await;
    let log = log.to_string();
    for planted in ARGUMENTS.iter().chain(&CLIENT_INPUT[..1]) {
        assert!(log.contains(planted), "{planted} is not in the log: {log}");
    }
    let (seen, replayed) = (seen.join("\n"), replayed.join("\n"));
    for (way, text) in [
        ("live", &seen),
        ("replay", &replayed),
        ("REST", &read.to_string()),
    ] {
        for planted in ARGUMENTS.iter().chain(&CLIENT_INPUT) {
            assert!(
                !text.contains(planted),
                "{planted} reached the {way} viewer:\n{text}"
            );
        }
    }
    // What the link shows still arrives: the person's message (from the client's input),
    // that the edited call ran (not what its result says), the client's call waiting, the
    // answer.
    let result = r#"{\"status\":\"hidden\"}"#;
    for shown in [
        "Write a note",
        result,
        "tandem.client_tools_pending",
        "show_card",
        "done",
    ] {
        assert!(
            replayed.contains(shown),
            "{shown} missing from the replay:\n{replayed}"
        );
        assert!(
            seen.contains(shown),
            "{shown} missing from the live frames:\n{seen}"
        );
    }
}
