//! Instructions: the person's own (for all their conversations) and each conversation's
//! are sent with every model call after the server's system prompt, are in the log, kept
//! by a branch, hidden from a share link unless it shows them, and refused with a clear
//! error (nothing changed) when they cannot be kept.

use serde_json::{json, Value};
use shared::EventBody;

use crate::helpers::provider::{openai_app, Reply};
use crate::helpers::TestApp;

/// The `tandem.instructions` values of a log, in order.
fn recorded(log: &[(u64, shared::Event)]) -> Vec<Value> {
    log.iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::Custom { name, value } if name == "tandem.instructions" => {
                Some(value.clone())
            }
            _ => None,
        })
        .collect()
}

/// The system prompt of the provider's `n`-th request.
fn system_prompt(requests: &[crate::helpers::provider::Recorded], n: usize) -> String {
    let first = &requests[n].body["messages"][0];
    assert_eq!(first["role"], "system", "{first}");
    first["content"].as_str().unwrap().to_string()
}

async fn put(app: &TestApp, path: &str, text: &str) -> Value {
    let (status, body) = app.put(path, json!({ "text": text })).await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_instructions_follow_the_servers_prompt_and_the_log_records_what_each_run_was_told() {
    let replies = vec![Reply::sse("openai/text.sse"); 3];
    let (app, mut provider) = openai_app(replies, &["--system-prompt", "Be helpful."]).await;
    let own = put(&app, "/api/instructions", "  Answer in French.  ").await;
    assert_eq!(own, json!({"text": "Answer in French."}), "trimmed");
    let (session, mut socket) = app.open_session().await;
    let path = format!("/api/sessions/{session}/instructions");
    put(&app, &path, "We are planning a trip.").await;
    socket.until_run_end().await;
    assert_eq!(
        app.get(&path).await.1,
        json!({"text": "We are planning a trip."})
    );

    app.say(&session, "hello").await;
    socket.until_run_end().await;
    provider.received(1).await;
    assert_eq!(
        system_prompt(&provider.requests(), 0),
        "Be helpful.\n\nThe person's instructions, for all their conversations:\nAnswer in \
         French.\n\nThe person's instructions for this conversation:\nWe are planning a trip."
    );
    // Unchanged instructions are not recorded again; changed ones are, before the call.
    app.say(&session, "again").await;
    socket.until_run_end().await;
    put(&app, "/api/instructions", "Answer in German.").await;
    app.say(&session, "once more").await;
    socket.until_run_end().await;
    provider.received(3).await;
    assert!(system_prompt(&provider.requests(), 2).contains("Answer in German."));
    let log = app.log(&session).await;
    assert_eq!(
        recorded(&log),
        [
            json!({"scope": "conversation", "text": "We are planning a trip."}),
            json!({"scope": "person", "text": "Answer in French."}),
            json!({"scope": "person", "text": "Answer in German."}),
        ]
    );
    let told = log
        .iter()
        .position(|(_, e)| matches!(&e.body, EventBody::Custom { value, .. } if value["text"] == "Answer in French."))
        .unwrap();
    let first_call = log
        .iter()
        .position(|(_, e)| matches!(&e.body, EventBody::StepStarted { step_name } if step_name == "model_call"))
        .unwrap();
    assert!(
        told < first_call,
        "recorded before the run's first model call"
    );
    crate::helpers::assert_valid_session(&log, true);

    // Removing them: the next call is told none.
    put(&app, "/api/instructions", "").await;
    assert_eq!(app.get("/api/instructions").await.1, json!({"text": ""}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_keeps_the_conversations_instructions_and_a_link_shows_them_only_when_it_says() {
    let app = crate::helpers::spawn_app(json!([{"text": "One."}, {"text": "Two."}])).await;
    let (session, mut socket) = app.open_session().await;
    let path = format!("/api/sessions/{session}/instructions");
    put(&app, &path, "Keep it short.").await;
    socket.until_run_end().await;
    app.say(&session, "hello").await;
    socket.until_run_end().await;
    let end = app.log(&session).await.len() as u64;
    let (status, branch) = app
        .post(
            &format!("/api/sessions/{session}/fork"),
            json!({"atSeq": end}),
        )
        .await;
    assert_eq!(status, 201, "{branch}");
    let branch = branch["id"].as_str().unwrap().to_string();
    let branch_path = format!("/api/sessions/{branch}/instructions");
    assert_eq!(app.get(&branch_path).await.1["text"], "Keep it short.");
    put(&app, &branch_path, "Be thorough.").await;
    assert_eq!(
        app.get(&path).await.1["text"],
        "Keep it short.",
        "the other line keeps its own"
    );

    for (asked, shown) in [(json!({}), false), (json!({"instructions": true}), true)] {
        let (status, share) = app
            .post(&format!("/api/sessions/{session}/shares"), asked)
            .await;
        assert_eq!(status, 201, "{share}");
        assert_eq!(share["instructions"], shown);
        let token = share["token"].as_str().unwrap();
        let viewer = app.anonymous();
        assert_eq!(
            viewer.get(&format!("/api/shared/{token}")).await.1["instructions"],
            shown
        );
        let mut socket = viewer.try_shared_socket(token, 0).await.unwrap();
        let (backlog, _) = socket.backlog().await;
        let seen = recorded(&backlog);
        match shown {
            true => assert_eq!(
                seen,
                [json!({"scope": "conversation", "text": "Keep it short."})]
            ),
            false => assert!(seen.is_empty(), "{seen:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instructions_that_cannot_be_kept_are_refused_and_change_nothing() {
    let app = crate::helpers::spawn_app(json!([])).await;
    let session = app.create_session().await;
    let paths = [
        "/api/instructions".to_string(),
        format!("/api/sessions/{session}/instructions"),
    ];
    for path in &paths {
        put(&app, path, "Kept.").await;
        let long = "x".repeat(8_001);
        let (status, refused) = app.put(path, json!({ "text": long })).await;
        assert_eq!(status, 422, "{refused}");
        assert_eq!(refused["error"]["code"], "invalid_instructions");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("at most 8000 characters"),
            "{refused}"
        );
        let (status, refused) = app.put(path, json!({"text": "a\u{7}b"})).await;
        assert_eq!(status, 422, "{refused}");
        let (status, refused) = app.put(path, json!({"text": "x", "scope": "all"})).await;
        assert_eq!(status, 400, "an unknown field: {refused}");
        assert_eq!(app.get(path).await.1["text"], "Kept.", "{path}");
    }
    let other = format!("/api/sessions/{}/instructions", uuid_like());
    assert_eq!(app.put(&other, json!({"text": "x"})).await.0, 404);
}

/// A session id nobody has.
fn uuid_like() -> String {
    "01234567-89ab-7def-8123-456789abcdef".into()
}
