//! The tool approval gate: a call that changes things waits for a person, who approves
//! it (maybe with edited arguments) or rejects it with a reason the model reads.

use serde_json::{json, Value};
use shared::{Event, EventBody, Outcome};

use crate::helpers::socket::Socket;
use crate::helpers::{assert_valid_session, spawn_app_with, TestApp};

/// A model turn calling `write_file` then `calculator`, and a closing turn.
fn script() -> Value {
    json!([
        {"text": "Saving it.", "toolCalls": [
            {"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}},
            {"name": "calculator", "arguments": {"expression": "1+1"}}
        ]},
        {"text": "Done."}
    ])
}

struct Paused {
    app: TestApp,
    workspace: tempfile::TempDir,
    session: String,
    socket: Socket,
    interrupt: shared::Interrupt,
}

async fn paused_on_write(extra: &[&str]) -> Paused {
    let workspace = tempfile::tempdir().unwrap();
    let mut flags = vec!["--workspace-dir", workspace.path().to_str().unwrap()];
    flags.extend_from_slice(extra);
    let app = spawn_app_with(script(), &flags).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "save it").await;
    let events = socket.until_run_end().await;
    let interrupt = match &events.last().unwrap().1.body {
        EventBody::RunFinished {
            outcome: Some(Outcome::Interrupt { interrupts }),
            ..
        } => interrupts[0].clone(),
        other => panic!("expected an approval interrupt, got {other:?}"),
    };
    Paused {
        app,
        workspace,
        session,
        socket,
        interrupt,
    }
}

impl Paused {
    async fn answer(&self, body: Value) -> (u16, Value) {
        let path = format!(
            "/api/sessions/{}/interrupts/{}",
            self.session, self.interrupt.id
        );
        self.app.post(&path, body).await
    }

    fn written(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.workspace.path().join("local").join(name)).ok()
    }
}

fn results(events: &[(u64, Event)]) -> Vec<(String, Value)> {
    events
        .iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::ToolCallResult {
                tool_call_id,
                content,
                ..
            } => Some((tool_call_id.clone(), serde_json::from_str(content).unwrap())),
            _ => None,
        })
        .collect()
}

fn decision(events: &[(u64, Event)]) -> Value {
    events
        .iter()
        .find_map(|(_, e)| match &e.body {
            EventBody::Custom { name, value } if name == "tandem.tool_approval" => {
                Some(value.clone())
            }
            _ => None,
        })
        .expect("the decision is recorded")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_changes_things_waits_and_runs_once_approved() {
    let mut paused = paused_on_write(&[]).await;
    let interrupt = &paused.interrupt;
    assert_eq!(interrupt.reason, "tool_approval");
    let meta = interrupt.metadata.as_ref().unwrap();
    assert_eq!(meta["toolName"], "write_file");
    assert_eq!(meta["arguments"], json!({"path": "a.txt", "content": "hi"}));
    assert_eq!(
        meta["argumentsSchema"]["required"],
        json!(["path", "content"])
    );
    assert_eq!(paused.written("a.txt"), None, "nothing ran before approval");
    let log = paused.app.log(&paused.session).await;
    assert!(
        results(&log).is_empty(),
        "the calculator waits its turn too"
    );

    let (status, _) = paused
        .answer(json!({"status": "resolved", "payload": {"approved": true}}))
        .await;
    assert_eq!(status, 202);
    let resumed = paused.socket.until_run_end().await;
    assert_eq!(decision(&resumed)["approved"], true);
    let results = results(&resumed);
    assert_eq!(results[0].0, interrupt.tool_call_id.clone().unwrap());
    assert_eq!(results[0].1, json!({"written": "a.txt", "bytes": 2}));
    assert_eq!(results[1].1, json!({"expression": "1+1", "result": 2}));
    assert_eq!(paused.written("a.txt").as_deref(), Some("hi"));
    assert!(matches!(
        resumed.last().unwrap().1.body,
        EventBody::RunFinished {
            outcome: Some(Outcome::Success { .. }),
            ..
        }
    ));
    assert_valid_session(&paused.app.log(&paused.session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_with_edits_runs_the_edited_call_and_tells_the_model() {
    let mut paused = paused_on_write(&[]).await;
    let edited = json!({"path": "b.txt", "content": "edited"});
    let payload = json!({"approved": true, "arguments": edited});
    let (status, _) = paused
        .answer(json!({"status": "resolved", "payload": payload}))
        .await;
    assert_eq!(status, 202);
    let resumed = paused.socket.until_run_end().await;
    assert_eq!(decision(&resumed)["edited"], true);
    let first = &results(&resumed)[0].1;
    assert_eq!(first["argumentsEditedByThePerson"], edited);
    assert_eq!(first["result"]["written"], "b.txt");
    assert_eq!(paused.written("b.txt").as_deref(), Some("edited"));
    assert_eq!(paused.written("a.txt"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_that_break_the_schema_or_the_workspace_rules_are_refused_and_change_nothing() {
    let mut paused = paused_on_write(&["--max-body-bytes", "2000000"]).await;
    let before = paused.app.log(&paused.session).await;
    for payload in [
        json!({"approved": true, "arguments": {"path": 5, "content": "x"}}),
        json!({"approved": true, "arguments": {"path": "../escape", "content": "x", "extra": 1}}),
        json!({"approved": "yes"}),
        json!({"approved": true, "arguments": "not an object"}),
        // Schema-valid, but the workspace rules refuse them: checked again on edits.
        json!({"approved": true, "arguments": {"path": "../escape.txt", "content": "x"}}),
        json!({"approved": true, "arguments": {"path": "/etc/passwd", "content": "x"}}),
        json!({"approved": true, "arguments": {"path": ".ssh/authorized_keys", "content": "x"}}),
        json!({"approved": true, "arguments": {"path": "big.txt", "content": "é".repeat(600_000)}}),
    ] {
        let (status, body) = paused
            .answer(json!({"status": "resolved", "payload": payload}))
            .await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["error"]["code"], "invalid_payload");
    }
    assert_eq!(paused.app.log(&paused.session).await, before);
    let reject = json!({"approved": false, "reason": "not now"});
    let (status, _) = paused
        .answer(json!({"status": "resolved", "payload": reject}))
        .await;
    assert_eq!(status, 202);
    let resumed = paused.socket.until_run_end().await;
    let results = results(&resumed);
    assert_eq!(results[0].1["status"], "rejected");
    assert_eq!(results[0].1["reason"], "not now");
    assert_eq!(
        results[1].1,
        json!({"expression": "1+1", "result": 2}),
        "the next call still runs"
    );
    assert_eq!(paused.written("a.txt"), None);
    assert_valid_session(&paused.app.log(&paused.session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_rejects_a_pending_approval_and_leaves_a_valid_log() {
    let paused = paused_on_write(&[]).await;
    let session = &paused.session;
    let (status, _) = paused
        .app
        .post(&format!("/api/sessions/{session}/cancel"), json!({}))
        .await;
    assert_eq!(status, 202);
    let log = paused.app.log(session).await;
    assert_eq!(decision(&log)["approved"], false);
    assert!(matches!(
        log.last().unwrap().1.body,
        EventBody::RunFinished {
            outcome: Some(Outcome::Cancelled),
            ..
        }
    ));
    let (_, detail) = paused.app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(detail["status"], "idle");
    assert_eq!(paused.written("a.txt"), None);
    assert_valid_session(&log, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_is_configurable_per_tool() {
    let mut paused = paused_on_write(&[
        "--skip-approval",
        "write_file",
        "--require-approval",
        "calculator",
    ])
    .await;
    let meta = paused.interrupt.metadata.clone().unwrap();
    assert_eq!(
        meta["toolName"], "calculator",
        "write_file ran, calculator waits"
    );
    assert_eq!(paused.written("a.txt").as_deref(), Some("hi"));
    let (status, _) = paused
        .answer(json!({"status": "resolved", "payload": {"approved": true}}))
        .await;
    assert_eq!(status, 202);
    let resumed = paused.socket.until_run_end().await;
    assert_eq!(
        results(&resumed)[0].1,
        json!({"expression": "1+1", "result": 2})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_call_with_bad_arguments_is_answered_without_asking() {
    let app = spawn_app_with(
        json!([
            {"toolCalls": [{"name": "write_file", "arguments": {"path": "/etc/x"}}]},
            {"text": "Sorry."}
        ]),
        &[],
    )
    .await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "write").await;
    let events = socket.until_run_end().await;
    let results = results(&events);
    assert!(results[0].1["error"]
        .as_str()
        .unwrap()
        .contains("invalid arguments"));
    assert!(matches!(
        events.last().unwrap().1.body,
        EventBody::RunFinished {
            outcome: Some(Outcome::Success { .. }),
            ..
        }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_approval_survives_a_restart_and_the_call_runs_once() {
    let (dir, url) = crate::helpers::fresh_database();
    let script = crate::helpers::write_script(dir.path(), script());
    let workspace = dir.path().join("ws");
    let flags = ["--workspace-dir", workspace.to_str().unwrap()];
    let first = crate::helpers::start(crate::helpers::test_config(&url, &script, &flags)).await;
    let (session, mut socket) = first.open_session().await;
    first.say(&session, "save it").await;
    let id = crate::helpers::socket::interrupt_id(&socket.until_run_end().await);
    first.stop().await;
    drop(socket);

    let second = crate::helpers::start(crate::helpers::test_config(&url, &script, &flags)).await;
    let mut socket = second.socket(&session, 0).await;
    socket.backlog().await;
    let answer = json!({"status": "resolved", "payload": {"approved": true}});
    let path = format!("/api/sessions/{session}/interrupts/{id}");
    assert_eq!(second.post(&path, answer.clone()).await.0, 202);
    socket.until_run_end().await;
    assert_eq!(
        second.post(&path, answer).await.0,
        200,
        "a repeat is a no-op"
    );
    let log = second.log(&session).await;
    let writes = results(&log)
        .iter()
        .filter(|(_, content)| content.get("written").is_some())
        .count();
    assert_eq!(writes, 1, "the approved call ran exactly once");
    assert_eq!(
        std::fs::read_to_string(workspace.join("local/a.txt")).unwrap(),
        "hi"
    );
    assert_valid_session(&log, true);
}
