//! Branches (`POST /api/sessions/{id}/fork`): a new line of a conversation that shares a
//! prefix of its parent's log, read from the parent's rows, never copied. Every reader sees
//! one history (the events page, the socket's replay, export, the model's conversation);
//! the parent goes on untouched; a branch parts only between runs; a session others branch
//! from cannot be deleted before them.

use serde_json::{json, Value};
use shared::EventBody;

use crate::helpers::socket::{run_id, user_message};
use crate::helpers::{assert_valid_session, spawn_app, spawn_app_with, spawn_app_with_users};

fn ask() -> Value {
    json!({"toolCalls": [{"name": "request_input", "arguments": {"prompt": "Name?", "kind": "text"}}]})
}

/// The text of a run's messages.
fn said(events: &[(u64, shared::Event)]) -> String {
    events
        .iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::TextMessageContent { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_shares_its_parents_history_and_goes_on_its_own() {
    let app = spawn_app(json!([{"text": "First answer."}, {"text": "Second answer."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "hello").await;
    socket.until_run_end().await;
    let log = app.log(&session).await;
    let end = log.len() as u64;

    let path = format!("/api/sessions/{session}/fork");
    let (status, branch) = app
        .post(&path, json!({"atSeq": end, "title": "Other way"}))
        .await;
    assert_eq!(status, 201, "{branch}");
    assert_eq!(branch["parentId"], session.as_str());
    assert_eq!(branch["forkSeq"], end);
    assert_eq!(branch["lastSeq"], end);
    assert_eq!(branch["title"], "Other way");
    assert_eq!(branch["status"], "idle");
    let id = branch["id"].as_str().unwrap().to_string();
    assert_eq!(
        app.log(&id).await,
        log,
        "the branch's history is its parent's"
    );

    // The model's conversation in the branch holds the shared history: this is its second
    // model call, so the script answers with its second turn.
    let mut on_branch = app.socket(&id, end).await;
    app.say(&id, "go on").await;
    let run = on_branch.until_run_end().await;
    let answer = said(&run);
    assert!(
        answer.contains("Second answer.") && !answer.contains("First answer."),
        "{answer}"
    );
    let branch_log = app.log(&id).await;
    assert_eq!(
        branch_log[..end as usize],
        log[..],
        "the prefix stays as it was"
    );
    assert_eq!(
        branch_log[end as usize..],
        run[..],
        "then the branch's own run"
    );
    assert_valid_session(&branch_log, true);
    let mut again = app.socket(&id, 0).await;
    let (backlog, caught_up) = again.backlog().await;
    assert_eq!(
        (backlog, caught_up),
        (branch_log.clone(), branch_log.len() as u64)
    );
    let (status, exported) = app
        .get(&format!("/api/sessions/{id}/export?format=json"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        exported["events"].as_array().unwrap().len(),
        branch_log.len()
    );
    assert_eq!(app.log(&session).await, log, "the parent is untouched");

    // A share link of the branch shows its whole history, live.
    let (status, link) = app
        .post(&format!("/api/sessions/{id}/shares"), json!({}))
        .await;
    assert_eq!(status, 201, "{link}");
    let mut viewer = app
        .try_shared_socket(link["token"].as_str().unwrap(), 0)
        .await
        .unwrap();
    let (seen, _) = viewer.backlog().await;
    assert_eq!(
        seen, branch_log,
        "a link shows the branch as its owner sees it"
    );

    // Deleting the parent hides it; the branch keeps the history it shares.
    assert_eq!(app.delete_session(&session).await, 204);
    assert_eq!(app.get(&format!("/api/sessions/{session}")).await.0, 404);
    assert_eq!(
        app.delete_session(&session).await,
        404,
        "it is gone for good"
    );
    assert_eq!(app.log(&id).await, branch_log, "the shared prefix stays");
    let (_, tree) = app.get(&format!("/api/sessions/{id}/branches")).await;
    assert_eq!(tree["branches"].as_array().unwrap().len(), 1, "{tree}");
    let (_, listed) = app.get("/api/sessions").await;
    assert_eq!(listed["sessions"][0]["id"], id.as_str());
    assert_eq!(app.delete_session(&id).await, 204);
    let (_, listed) = app.get("/api/sessions").await;
    assert_eq!(listed["sessions"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_parts_only_between_runs_of_the_callers_own_session() {
    let users = spawn_app_with_users(json!([{"text": "Hi."}, ask()]), &[], &["ada", "bob"]).await;
    let (ada, bob) = (&users[0], &users[1]);
    let (session, mut socket) = ada.open_session().await;
    ada.say(&session, "hello").await;
    socket.until_run_end().await;
    let end = ada.log(&session).await.len() as u64;
    let path = format!("/api/sessions/{session}/fork");

    let (status, inside) = ada.post(&path, json!({"atSeq": 1})).await;
    assert_eq!(status, 422, "{inside}");
    assert_eq!(inside["error"]["code"], "not_a_fork_point");
    let (status, empty) = ada.post(&path, json!({"atSeq": 0})).await;
    assert_eq!(status, 201, "{empty}");
    assert_eq!(
        (empty["lastSeq"].as_u64(), empty["forkSeq"].as_u64()),
        (Some(0), Some(0))
    );
    let empty_id = empty["id"].as_str().unwrap();
    assert!(ada.log(empty_id).await.is_empty());

    let (status, past) = ada.post(&path, json!({"atSeq": end + 1})).await;
    assert_eq!(status, 404, "{past}");
    let (status, _) = bob.post(&path, json!({"atSeq": end})).await;
    assert_eq!(status, 404, "another user's session looks unknown");
    let unknown = format!("/api/sessions/{}/fork", uuid::Uuid::now_v7());
    assert_eq!(ada.post(&unknown, json!({"atSeq": 0})).await.0, 404);
    let (status, bad) = ada.post(&path, json!({"at": 0})).await;
    assert_eq!(status, 400, "{bad}");
    let (status, blank) = ada.post(&path, json!({"atSeq": 0, "title": "  "})).await;
    assert_eq!(status, 400, "{blank}");

    let (_, listed) = ada.get("/api/sessions").await;
    let rows = listed["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "a conversation is listed once: {rows:?}");
}

/// The id of the first message of the assistant's in a history.
fn assistant_message(log: &[(u64, shared::Event)]) -> String {
    log.iter()
        .find_map(|(_, e)| match &e.body {
            EventBody::TextMessageStart {
                message_id,
                role: Some(shared::TextRole::Assistant) | None,
                ..
            } => Some(message_id.clone()),
            _ => None,
        })
        .expect("a message of the assistant's")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_a_message_or_regenerating_an_answer_runs_it_again_in_a_branch() {
    let turns = json!([{"text": "One."}, {"text": "Two."}, {"text": "Three."}, {"text": "Four."}]);
    let app = spawn_app_with_users(turns, &["--models", "other-model"], &["ada"])
        .await
        .remove(0);
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "first question").await;
    socket.until_run_end().await;
    app.say(&session, "second question").await;
    socket.until_run_end().await;
    let log = app.log(&session).await;
    let second = run_id(&log, 1);
    let second_run = log
        .iter()
        .position(
            |(_, e)| matches!(&e.body, EventBody::RunStarted { run_id, .. } if *run_id == second),
        )
        .unwrap();
    let second_message = user_message(&log[second_run..]);

    // Editing the second message: a branch that parts where the first run ended.
    let path = format!("/api/sessions/{session}/messages/{second_message}/edit");
    let (status, edited) = app.post(&path, json!({"text": "another question"})).await;
    assert_eq!(status, 201, "{edited}");
    assert_eq!(edited["parentId"], session.as_str());
    assert_eq!(edited["forkSeq"], second_run as u64);
    assert!(
        edited["runId"].as_str().unwrap().starts_with("run_"),
        "{edited}"
    );
    let branch = edited["id"].as_str().unwrap().to_string();
    let mut on_branch = app.socket(&branch, second_run as u64).await;
    let run = on_branch.until_run_end().await;
    let text = said(&run);
    assert!(
        // The shared first run made one model call, so this is the branch's second.
        text.contains("another question") && text.contains("Two."),
        "{text}"
    );
    let branch_log = app.log(&branch).await;
    assert_eq!(
        branch_log[..second_run],
        log[..second_run],
        "the first run is shared"
    );
    assert_valid_session(&branch_log, true);

    // Regenerating the first run with another model: a branch from the start.
    let first = run_id(&log, 0);
    let path = format!("/api/sessions/{session}/runs/{first}/regenerate");
    let (status, again) = app.post(&path, json!({"model": "other-model"})).await;
    assert_eq!(status, 201, "{again}");
    assert_eq!(again["forkSeq"], 0);
    let regenerated = again["id"].as_str().unwrap().to_string();
    let mut on_regenerated = app.socket(&regenerated, 0).await;
    let run = on_regenerated.until_run_end().await;
    let text = said(&run);
    assert!(
        text.contains("first question") && text.contains("One."),
        "{text}"
    );
    assert!(
        run.iter().any(|(_, e)| matches!(&e.body, EventBody::Custom { value, .. } if value["model"] == "other-model")),
        "the model picked is recorded"
    );
    assert_eq!(app.log(&session).await, log, "the parent is untouched");
    let metrics = app.metrics().await;
    for how in ["edit", "regenerate"] {
        // The process's metrics are shared: that the family counted it is what is checked.
        let line = format!("tandem_branches_total{{how=\"{how}\"}} ");
        assert!(metrics.contains(&line), "{line} in\n{metrics}");
    }

    // Refusals: an assistant's message, unknown ids, another model, an empty text.
    let theirs = assistant_message(&log);
    let path = format!("/api/sessions/{session}/messages/{theirs}/edit");
    let (status, refused) = app.post(&path, json!({"text": "x"})).await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (422, &json!("invalid_message")),
        "{refused}"
    );
    let path = format!("/api/sessions/{session}/messages/msg_nope/edit");
    assert_eq!(app.post(&path, json!({"text": "x"})).await.0, 404);
    let path = format!("/api/sessions/{session}/messages/{second_message}/edit");
    assert_eq!(app.post(&path, json!({"text": "  "})).await.0, 422);
    let path = format!("/api/sessions/{session}/runs/run_nope/regenerate");
    assert_eq!(app.post(&path, json!({})).await.0, 404);
    let path = format!("/api/sessions/{session}/runs/{first}/regenerate");
    assert_eq!(app.post(&path, json!({"model": "no-such"})).await.0, 422);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_still_going_cannot_be_regenerated() {
    let turns = json!([{"text": "word ".repeat(300)}]);
    let app = spawn_app_with(turns, &["--token-delay-ms", "5"]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "talk").await;
    socket
        .until(|e| matches!(e.body, EventBody::TextMessageContent { .. }))
        .await;
    let log = app.log(&session).await;
    let run = run_id(&log, 0);
    let path = format!("/api/sessions/{session}/runs/{run}/regenerate");
    let (status, refused) = app.post(&path, json!({})).await;
    assert_eq!(status, 422, "{refused}");
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("still going"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_is_listed_once_and_its_branches_form_its_tree() {
    let app = spawn_app(json!([{"text": "Hi."}, {"text": "Again."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "hello").await;
    socket.until_run_end().await;
    let end = app.log(&session).await.len() as u64;
    let other = app.create_session().await;
    let path = format!("/api/sessions/{session}/fork");
    let (_, first) = app.post(&path, json!({"atSeq": end})).await;
    let (_, second) = app
        .post(&path, json!({"atSeq": 0, "title": "From scratch"}))
        .await;
    let (first, second) = (
        first["id"].as_str().unwrap(),
        second["id"].as_str().unwrap(),
    );

    let (_, listed) = app.get("/api/sessions").await;
    let rows = listed["sessions"].as_array().unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [second, other.as_str()],
        "each conversation once, by its latest line"
    );
    assert_eq!(rows[0]["conversationId"], session.as_str());
    assert_eq!(rows[1]["conversationId"], other.as_str());
    let (_, found) = app.get("/api/sessions?q=hello").await;
    let found = found["sessions"].as_array().unwrap();
    assert_eq!(
        found.len(),
        1,
        "search finds the conversation once: {found:?}"
    );

    for any in [session.as_str(), first, second] {
        let (status, tree) = app.get(&format!("/api/sessions/{any}/branches")).await;
        assert_eq!(status, 200, "{tree}");
        let lines = tree["branches"].as_array().unwrap();
        let ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
        assert_eq!(
            ids,
            [session.as_str(), first, second],
            "oldest first, from any line"
        );
        assert!(lines[0].get("parentId").is_none());
        assert_eq!(lines[1]["parentId"], session.as_str());
        let points = (lines[1]["forkSeq"].as_u64(), lines[2]["forkSeq"].as_u64());
        assert_eq!(points, (Some(end), Some(0)));
    }
    let (_, alone) = app.get(&format!("/api/sessions/{other}/branches")).await;
    assert_eq!(alone["branches"].as_array().unwrap().len(), 1);

    // Deleting the line the list shows brings the conversation's next one back.
    assert_eq!(app.delete_session(second).await, 204);
    let (_, listed) = app.get("/api/sessions").await;
    let rows = listed["sessions"].as_array().unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [first, other.as_str()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_list_takes_a_branch_as_its_conversations_row() {
    let app = spawn_app(json!([{"text": "Hi."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "hello").await;
    socket.until_run_end().await;
    let end = app.log(&session).await.len() as u64;
    let mut list = app.list_stream().await;
    assert_eq!(list.expect().await["sessions"].as_array().unwrap().len(), 1);
    let path = format!("/api/sessions/{session}/fork");
    let (_, branch) = app.post(&path, json!({"atSeq": end})).await;
    let changed = list.expect().await;
    assert_eq!(changed["type"], "changed", "{changed}");
    assert_eq!(changed["session"]["id"], branch["id"]);
    assert_eq!(changed["session"]["conversationId"], session.as_str());
    // The branch the list shows goes: the list is sent again, with the first line back.
    assert_eq!(
        app.delete_session(branch["id"].as_str().unwrap()).await,
        204
    );
    let again = list.expect().await;
    assert_eq!(again["type"], "snapshot", "{again}");
    assert_eq!(again["sessions"][0]["id"], session.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_at_a_pause_answers_the_question_its_own_way() {
    let app = spawn_app(json!([ask(), {"text": "Thanks."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "ask me").await;
    let paused = socket.until_run_end().await;
    let interrupt = crate::helpers::socket::interrupt_id(&paused);
    let at = app.log(&session).await.len() as u64;

    let path = format!("/api/sessions/{session}/fork");
    let (status, branch) = app.post(&path, json!({"atSeq": at})).await;
    assert_eq!(status, 201, "{branch}");
    assert_eq!(branch["status"], "awaiting_input", "the branch waits too");
    let id = branch["id"].as_str().unwrap().to_string();
    let (_, detail) = app.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(
        detail["pendingInterrupts"][0]["id"],
        interrupt.as_str(),
        "{detail}"
    );

    // Answered one way in the branch, another way in the parent: each goes on its own.
    let mut on_branch = app.socket(&id, at).await;
    for (line, name) in [(&id, "Ada"), (&session, "Bob")] {
        let answer = json!({"status": "resolved", "payload": {"text": name}});
        let answered = app
            .post(
                &format!("/api/sessions/{line}/interrupts/{interrupt}"),
                answer,
            )
            .await;
        assert_eq!(answered.0, 202, "{}", answered.1);
    }
    on_branch.until_run_end().await;
    socket.until_run_end().await;
    let (branch_log, parent_log) = (app.log(&id).await, app.log(&session).await);
    assert_eq!(
        branch_log[..at as usize],
        parent_log[..at as usize],
        "one shared prefix"
    );
    let text = |log: &[(u64, shared::Event)]| serde_json::to_string(&log[at as usize..]).unwrap();
    assert!(text(&branch_log).contains("Ada") && !text(&branch_log).contains("Bob"));
    assert!(text(&parent_log).contains("Bob") && !text(&parent_log).contains("Ada"));
    assert_valid_session(&branch_log, true);
    assert_valid_session(&parent_log, true);
    // The branch's question is settled in the branch only once.
    let again = json!({"status": "resolved", "payload": {"text": "Eve"}});
    let path = format!("/api/sessions/{id}/interrupts/{interrupt}");
    assert_eq!(app.post(&path, again).await.0, 409);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_counts_each_model_call_once_per_conversation() {
    let turn = |text: &str, input: u64| json!({"text": text, "usage": {"model": "m", "inputTokens": input, "outputTokens": 1}});
    let app = spawn_app(json!([turn("One.", 10), turn("Two.", 20)])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "one").await;
    socket.until_run_end().await;
    app.say(&session, "two").await;
    socket.until_run_end().await;
    let second = run_id(&app.log(&session).await, 1);
    let (status, branch) = app
        .post(
            &format!("/api/sessions/{session}/runs/{second}/regenerate"),
            json!({}),
        )
        .await;
    assert_eq!(status, 201, "{branch}");
    let own_run = branch["runId"].as_str().unwrap().to_string();
    let branch = branch["id"].as_str().unwrap().to_string();
    // Its own run's end: the history it shares ends a run too.
    app.socket(&branch, 0)
        .await
        .until(|e| matches!(&e.body, EventBody::RunFinished { run_id, .. } if *run_id == own_run))
        .await;

    let usage = |id: &str| {
        let app = &app;
        let path = format!("/api/sessions/{id}/usage");
        async move {
            let (status, body) = app.get(&path).await;
            assert_eq!(status, 200, "{body}");
            body
        }
    };
    let tokens = |body: &Value, part: &str| {
        (
            body[part]["calls"].as_u64().unwrap(),
            body[part]["inputTokens"].as_u64().unwrap(),
        )
    };
    let first = usage(&session).await;
    assert_eq!(tokens(&first, "line"), (2, 30));
    assert_eq!(tokens(&first, "own"), (2, 30));
    let regenerated = usage(&branch).await;
    assert_eq!(
        tokens(&regenerated, "line"),
        (2, 30),
        "its history: the shared call and its own"
    );
    assert_eq!(tokens(&regenerated, "own"), (1, 20));
    for body in [&first, &regenerated] {
        assert_eq!(
            tokens(body, "conversation"),
            (3, 50),
            "the shared first call once, each line's own calls once"
        );
    }
}
