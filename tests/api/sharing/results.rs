//! What a link that hides tool arguments shows of tool results: that each call ran and
//! how it ended (done, an error, rejected), never what its result says, since a result
//! may repeat its arguments (`{"expression":"1234 * 5678", …}`, `{"written":"…"}`, an
//! echo, an error naming what it was given). Every built-in tool, an MCP tool, and a
//! person's answer; an AG-UI client's own tool results are in `sharing.rs`.

use serde_json::{json, Value};

use super::{create_share, raw_until};
use crate::helpers::mcp::{config_file, everything_stdio};
use crate::helpers::socket::interrupt_id;
use crate::helpers::spawn_app_with;

/// What the calls were given, which their results may repeat; no frame of the link may
/// hold any of them.
const GIVEN: [&str; 9] = [
    "1234 * 5678",
    "7006652",
    "att_canary-attachment",
    "canary-state",
    "canary-echo",
    "canary-path",
    "canary-content",
    "canary-line",
    "canary-answer",
];

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_that_hides_arguments_shows_of_every_result_only_how_the_call_ended() {
    let dir = tempfile::tempdir().unwrap();
    let mcp = config_file(dir.path(), json!({"everything": everything_stdio()}));
    let turns = json!([
        {"toolCalls": [
            call("calculator", json!({"expression": GIVEN[0]})),
            call("clock", json!({})),
            call("read_attachment", json!({"id": GIVEN[2]})),
            call("update_state", json!({"patch": [{"op": "add", "path": "/k", "value": GIVEN[3]}]})),
            call("everything__echo", json!({"message": GIVEN[4]})),
        ]},
        {"toolCalls": [call("write_file", json!({"path": "canary-path.txt", "content": GIVEN[6]}))]},
        {"toolCalls": [call("append_file", json!({"path": "canary-path.txt", "line": GIVEN[7]}))]},
        {"toolCalls": [call("request_input", json!({"prompt": "Your name?", "kind": "text"}))]},
        {"text": "Done."},
    ]);
    let app = spawn_app_with(turns, &["--mcp-config", mcp.to_str().unwrap()]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Use every tool").await;
    let answers = [
        json!({"approved": true}),
        json!({"approved": true}),
        json!({"text": GIVEN[8]}),
    ];
    for payload in answers {
        let paused = socket.until_run_end().await;
        let path = format!(
            "/api/sessions/{session}/interrupts/{}",
            interrupt_id(&paused)
        );
        let (status, body) = app
            .post(&path, json!({"status": "resolved", "payload": payload}))
            .await;
        assert_eq!(status, 202, "{body}");
    }
    socket.until_run_end().await;
    let log = app
        .get(&format!(
            "/api/sessions/{session}/events?after=0&limit=10000"
        ))
        .await
        .1
        .to_string();
    for given in GIVEN {
        assert!(log.contains(given), "{given} is not in the log");
    }

    // The link hides arguments (and the state, whose changes are `update_state`'s patch).
    let hide = json!({"hideToolArguments": true, "state": false});
    let token = create_share(&app, &session, hide).await["token"]
        .as_str()
        .unwrap()
        .to_string();
    let mut viewer = app.anonymous().try_shared_socket(&token, 0).await.unwrap();
    let frames = raw_until(&mut viewer, |frame| frame["kind"] == "caught_up").await;
    let (status, read) = app.anonymous().get(&format!("/api/shared/{token}")).await;
    assert_eq!(status, 200);
    let seen = frames.join("\n") + &read.to_string();
    for given in GIVEN {
        assert!(!seen.contains(given), "{given} reached the viewer:\n{seen}");
    }
    // Each call's card still says it ran, and how it ended.
    let results: Vec<Value> = frames
        .iter()
        .map(|frame| serde_json::from_str::<Value>(frame).unwrap())
        .filter(|frame| frame["event"]["type"] == "TOOL_CALL_RESULT")
        .map(|frame| serde_json::from_str(frame["event"]["content"].as_str().unwrap()).unwrap())
        .collect();
    let hidden = json!({"status": "hidden"});
    let failed = json!({"status": "hidden", "error": "hidden by the share link"});
    let expected = [
        &hidden, &hidden, &failed, &hidden, &hidden, // the first turn's five calls
        &hidden, &hidden, // write_file, append_file
        &hidden, // the person's answer to request_input
    ];
    let results: Vec<&Value> = results.iter().collect();
    assert_eq!(results, expected, "{seen}");
    let names: Vec<&str> = [
        "calculator",
        "clock",
        "read_attachment",
        "update_state",
        "everything__echo",
        "write_file",
        "append_file",
        "request_input",
    ]
    .into_iter()
    .filter(|name| !seen.contains(&format!("\"toolCallName\":\"{name}\"")))
    .collect();
    assert!(names.is_empty(), "calls not shown: {names:?}");
}
