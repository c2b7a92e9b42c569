//! MCP servers as tools, against real servers: the reference `server-everything` (npm)
//! over stdio and over streamable HTTP, and a fixture built on the official SDK.

use std::time::Duration;

use serde_json::{json, Value};
use shared::{Event, EventBody, Outcome};

mod process;

use crate::helpers::child::Tandem;
use crate::helpers::mcp::{config_file, everything_stdio, notes, HttpEverything};
use crate::helpers::{
    assert_valid_session, fresh_database, spawn_app_with, tool_call, tool_results, write_script,
    TestApp,
};

/// Long enough for a Node server to start on a loaded machine; a safety net only.
const DEADLINE: Duration = Duration::from_secs(30);

async fn mcp_servers(app: &TestApp) -> Vec<Value> {
    let (status, info) = app.get("/api/info").await;
    assert_eq!(status, 200);
    info["mcpServers"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_server_works_over_stdio_and_streamable_http() {
    let http = HttpEverything::start();
    let dir = tempfile::tempdir().unwrap();
    let servers = json!({
        "everything": everything_stdio(),
        "remote": {"url": http.url, "headers": {"X-Test": "1"}},
        "broken": {"command": "/nonexistent/mcp-server"},
    });
    let path = config_file(dir.path(), servers);
    let script = json!([
        {"toolCalls": [
            tool_call("everything__get-sum", json!({"a": 2, "b": 3})),
            tool_call("remote__echo", json!({"message": "over http"})),
            tool_call("everything__get-sum", json!({"a": "two"})),
            tool_call("everything__no-such-tool", json!({})),
            tool_call("broken__anything", json!({})),
        ]},
        {"text": "Done."},
    ]);
    let app = spawn_app_with(script, &["--mcp-config", path.to_str().unwrap()]).await;
    let listed = mcp_servers(&app).await;
    assert_eq!(listed.len(), 3, "{listed:?}");
    for server in listed.iter().filter(|s| s["name"] != "broken") {
        assert_eq!(server["connected"], true, "{server}");
        assert!(server["tools"].as_u64().unwrap() >= 5, "{server}");
    }
    let broken = listed.iter().find(|s| s["name"] == "broken").unwrap();
    assert_eq!(broken["connected"], false);
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .contains("could not be started"),
        "{broken}"
    );

    let (session, mut socket) = app.open_session().await;
    app.say(&session, "use the tools").await;
    let run = socket.until_run_end().await;
    let results = tool_results(&run);
    assert_eq!(results[0]["text"], "The sum of 2 and 3 is 5.");
    assert_eq!(results[1]["text"], "Echo: over http");
    let invalid = results[2]["error"].as_str().unwrap();
    assert!(
        invalid.contains("invalid arguments"),
        "validated against its schema: {invalid}"
    );
    let unknown = results[3]["error"].as_str().unwrap();
    assert!(unknown.contains("no tool"), "{unknown}");
    let down = results[4]["error"].as_str().unwrap();
    assert!(
        down.contains("`broken` is not available") && down.contains("tries again"),
        "{down}"
    );
    assert_eq!(run.last().unwrap().1.type_name(), "RUN_FINISHED");
}

/// A child `tandem` with the notes server (and `extra` keys on its entry), and what it
/// takes to start it again on the same database.
struct WithNotes {
    _config_dir: tempfile::TempDir,
    _db_dir: crate::helpers::TestDir,
    url: String,
    script: std::path::PathBuf,
    config: String,
    tandem: Tandem,
}

impl WithNotes {
    fn start(turns: Value, extra: Value) -> Self {
        let config_dir = tempfile::tempdir().unwrap();
        let config = config_file(config_dir.path(), json!({"notes": notes(extra)}));
        let config = config.display().to_string();
        let (db_dir, url) = fresh_database();
        let script = write_script(db_dir.path(), turns);
        let tandem = Tandem::spawn_with(&url, &script, &["--mcp-config", &config]);
        Self {
            _config_dir: config_dir,
            _db_dir: db_dir,
            url,
            script,
            config,
            tandem,
        }
    }

    /// Kills the running `tandem` (SIGKILL) and starts another on the same database.
    fn restart(&mut self) {
        self.tandem.kill();
        self.start_again();
    }

    /// Starts another `tandem` on the same database (the last one has exited).
    fn start_again(&mut self) {
        self.tandem = Tandem::spawn_with(&self.url, &self.script, &["--mcp-config", &self.config]);
    }
}

/// A socket that replays the session's latest run from its start.
async fn latest_run(app: &TestApp, session: &str) -> Vec<(u64, Event)> {
    let log = app.log(session).await;
    let start = log
        .iter()
        .rev()
        .find(|(_, e)| e.type_name() == "RUN_STARTED")
        .map_or(0, |(seq, _)| seq - 1);
    app.socket(session, start).await.until_run_end().await
}

/// The `tandem.mcp_server_unavailable` notices of `events`, by the call they are about.
fn notices(events: &[(u64, Event)]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::Custom { name, value } if name == "tandem.mcp_server_unavailable" => {
                Some(value.clone())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_timeouts_and_a_dead_server_are_results_and_it_comes_back() {
    let turns = json!([
        {"toolCalls": [
            tool_call("notes__greet", json!({})),
            tool_call("notes__fail", json!({})),
            tool_call("notes__hang", json!({"ms": 3000})),
            tool_call("notes__count_notes", json!({})),
        ]},
        {"text": "Noted."},
        {"toolCalls": [tool_call("notes__add_note", json!({"text": "x"})), tool_call("notes__crash", json!({}))]},
        {"text": "Crashed."},
        {"toolCalls": [tool_call("notes__count_notes", json!({}))]},
        {"text": "Back."},
    ]);
    let setup = WithNotes::start(turns, json!({"timeoutSecs": 1}));
    let (tandem, app) = (&setup.tandem, setup.tandem.client());
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "try everything").await;
    let run = socket.until_run_end().await;
    let first = tool_results(&run);
    assert_eq!(
        first[0]["text"], "hello from the config",
        "the config's env reached it"
    );
    assert_eq!(first[1]["error"], "the disk is on fire");
    let timed_out = first[2]["error"].as_str().unwrap();
    assert!(
        timed_out.contains("did not answer within 1 s") && timed_out.contains("restarts it"),
        "{timed_out}"
    );
    let after = first[3]["error"].as_str().unwrap();
    assert!(
        after.contains("`notes` is not available"),
        "a timed-out server is not trusted with the next call: {after}"
    );
    let seen = notices(&run);
    assert_eq!(
        seen.len(),
        2,
        "one notice per call that found it down: {seen:?}"
    );
    assert!(
        seen[0]["message"].as_str().unwrap().contains("is down"),
        "{seen:?}"
    );
    assert_eq!(seen[0]["server"], "notes");
    assert_eq!(
        run.last().unwrap().1.type_name(),
        "RUN_FINISHED",
        "the run went on"
    );
    assert!(
        tandem
            .logged_times("MCP server connected", 2, DEADLINE)
            .await,
        "the server that timed out was started again"
    );

    app.say(&session, "crash it").await;
    let crashed = socket.until_run_end().await;
    let second = tool_results(&crashed);
    assert_eq!(second[0]["text"], "added; 1 notes");
    assert!(
        second[1]["error"].as_str().unwrap().contains("restarts it"),
        "a server that dies mid-call: {}",
        second[1]
    );
    assert_eq!(notices(&crashed).len(), 1, "the death is a notice too");
    assert!(
        tandem
            .logged_times("MCP server connected", 3, DEADLINE)
            .await,
        "the server was started again"
    );
    app.say(&session, "again").await;
    let again = tool_results(&socket.until_run_end().await);
    assert_eq!(again[0]["text"], "0 notes", "a fresh process");
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destructive_tool_waits_for_a_person_and_new_tools_are_picked_up() {
    let turns = json!([
        {"toolCalls": [tool_call("notes__add_note", json!({"text": "milk"})), tool_call("notes__delete_notes", json!({}))]},
        {"text": "Cleared."},
        {"toolCalls": [tool_call("notes__learn", json!({}))]},
        {"text": "Learnt."},
        {"toolCalls": [tool_call("notes__shiny", json!({}))]},
        {"text": "Shiny."},
    ]);
    let setup = WithNotes::start(turns, json!({}));
    let (tandem, app) = (&setup.tandem, setup.tandem.client());
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "clear my notes").await;
    let paused = socket.until_run_end().await;
    assert_eq!(
        tool_results(&paused)[0]["text"],
        "added; 1 notes",
        "a non-destructive tool ran at once"
    );
    let interrupt = match &paused.last().unwrap().1.body {
        EventBody::RunFinished {
            outcome: Some(Outcome::Interrupt { interrupts }),
            ..
        } => interrupts[0].clone(),
        other => panic!("the destructive call should wait: {other:?}"),
    };
    assert_eq!(interrupt.reason, "tool_approval");
    assert_eq!(
        interrupt.metadata.as_ref().unwrap()["toolName"],
        "notes__delete_notes"
    );
    let answer = json!({"status": "resolved", "payload": {"approved": true}});
    let (status, body) = app
        .post(
            &format!("/api/sessions/{session}/interrupts/{}", interrupt.id),
            answer,
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let resumed = tool_results(&socket.until_run_end().await);
    assert_eq!(resumed[0]["text"], "deleted every note");

    app.say(&session, "learn something").await;
    socket.until_run_end().await;
    assert!(
        tandem.logged_times("MCP tool list read", 2, DEADLINE).await,
        "the list was read again after notifications/tools/list_changed"
    );
    app.say(&session, "use it").await;
    let shiny = tool_results(&socket.until_run_end().await);
    assert_eq!(shiny[0]["text"], "shiny works");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_during_a_call_runs_again_only_what_is_safe_to_repeat() {
    let turns = json!([
        {"toolCalls": [tool_call("notes__slow_add", json!({"text": "once", "ms": 60000}))]},
        {"text": "Whatever happened to that note."},
        {"toolCalls": [tool_call("notes__hang", json!({"ms": 1000}))]},
        {"text": "Counted."},
    ]);
    let mut setup = WithNotes::start(turns, json!({}));
    let app = setup.tandem.client();
    let (session, _socket) = app.open_session().await;
    app.say(&session, "add slowly").await;
    assert!(
        setup
            .tandem
            .logged("notes-server: calling slow_add", DEADLINE)
            .await
    );
    setup.restart();
    let app = setup.tandem.client();
    let run = latest_run(&app, &session).await;
    let result = tool_results(&run)[0].clone();
    assert_eq!(result["outcomeUnknown"], true, "not run again: {result}");
    assert!(
        !setup
            .tandem
            .logged("notes-server: calling slow_add", Duration::ZERO)
            .await
    );

    app.say(&session, "count").await;
    assert!(
        setup
            .tandem
            .logged("notes-server: calling hang", DEADLINE)
            .await
    );
    setup.restart();
    let app = setup.tandem.client();
    let run = latest_run(&app, &session).await;
    assert!(
        setup
            .tandem
            .logged("notes-server: calling hang", DEADLINE)
            .await,
        "run again: it is read-only"
    );
    let counted = tool_results(&run);
    assert_eq!(counted.last().unwrap()["text"], "0 notes, after 1000 ms");
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_stop_during_a_call_lets_it_finish_and_the_run_goes_on_without_running_it_again() {
    let turns = json!([
        {"toolCalls": [tool_call("notes__slow_add", json!({"text": "once", "ms": 1500}))]},
        {"text": "Added."},
    ]);
    let mut setup = WithNotes::start(turns, json!({}));
    let app = setup.tandem.client();
    let (session, _socket) = app.open_session().await;
    app.say(&session, "add slowly").await;
    assert!(
        setup
            .tandem
            .logged("notes-server: calling slow_add", DEADLINE)
            .await
    );
    setup.tandem.signal("TERM");
    let status = setup.tandem.exited(DEADLINE).await.expect("it stops");
    assert!(status.success(), "{status}");
    setup.start_again();
    let app = setup.tandem.client();
    let run = latest_run(&app, &session).await;
    let results = tool_results(&run);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(
        results[0]["text"], "added slowly; 1 notes",
        "the call finished before the stop and its result was committed"
    );
    assert!(
        !setup
            .tandem
            .logged("notes-server: calling slow_add", Duration::ZERO)
            .await,
        "not run again"
    );
    assert_eq!(run.last().unwrap().1.type_name(), "RUN_FINISHED");
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_and_a_resource_a_tool_returns_are_kept_as_attachments() {
    let turns = json!([{"toolCalls": [tool_call("notes__draw", json!({}))]}, {"text": "Drawn."}]);
    let setup = WithNotes::start(turns, json!({}));
    let app = setup.tandem.client();
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "draw").await;
    let run = socket.until_run_end().await;
    let result = &tool_results(&run)[0];
    assert_eq!(result["text"], "a picture, and the notes");
    let others = result["otherContent"].as_array().unwrap();
    assert_eq!(others[0]["type"], "image");
    assert_eq!(others[0]["name"], "image-1.png");
    assert_eq!(others[1]["name"], "notes.txt");
    assert!(
        others
            .iter()
            .all(|o| o.get("data").is_none() && o.get("text").is_none()),
        "{result}"
    );
    let kept = run
        .iter()
        .find_map(|(_, e)| match &e.body {
            EventBody::Custom { name, value } if name == "tandem.attachments" => {
                Some(value.clone())
            }
            _ => None,
        })
        .expect("the files recorded");
    assert!(kept["toolCallId"].is_string());
    let image = others[0]["attachment"].as_str().unwrap();
    assert_eq!(kept["attachments"][0]["id"], image);
    let bytes = app
        .http
        .get(app.url(&format!("/api/attachments/{image}")))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let picture = include_bytes!("../fixtures/attachments/picture.png");
    assert_eq!(bytes.as_ref(), picture.as_slice());
    let notes = others[1]["attachment"].as_str().unwrap();
    let url = app.url(&format!("/api/attachments/{notes}"));
    let text = app
        .http
        .get(url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(text, "no notes");
}

/// A long call's progress: each `notifications/progress` the server sends for it becomes
/// the call's activity while it works (`ACTIVITY_SNAPSHOT`, then `ACTIVITY_DELTA`s, before
/// its result), and a call that keeps reporting outlives its timeout (each report gives it
/// the whole timeout again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_s_progress_is_its_activity_and_keeps_it_alive() {
    let dir = tempfile::tempdir().unwrap();
    let mut everything = everything_stdio();
    everything["timeoutSecs"] = json!(1);
    let path = config_file(dir.path(), json!({"everything": everything}));
    // Four steps of 0.6 s: 2.4 s in all, past the 1 s timeout, never 1 s without a report.
    let long = json!({"duration": 2.4, "steps": 4});
    let turns = json!([
        {"toolCalls": [tool_call("everything__trigger-long-running-operation", long)]},
        {"text": "Done."},
    ]);
    let app = spawn_app_with(turns, &["--mcp-config", path.to_str().unwrap()]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "take your time").await;
    let run = socket.until_run_end().await;
    let result = &tool_results(&run)[0];
    assert!(
        result["text"]
            .as_str()
            .is_some_and(|text| text.contains("Long running operation completed")),
        "{result}"
    );
    let call_id = run
        .iter()
        .find_map(|(_, e)| match &e.body {
            EventBody::ToolCallStart { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .unwrap();
    let position = |wanted: &str| run.iter().position(|(_, e)| e.type_name() == wanted);
    let (first, result_at) = (position("ACTIVITY_SNAPSHOT"), position("TOOL_CALL_RESULT"));
    assert!(
        first.unwrap() < result_at.unwrap(),
        "progress comes while the call works"
    );
    let mut content = Value::Null;
    let mut seen = Vec::new();
    for (_, event) in &run {
        match &event.body {
            EventBody::ActivitySnapshot {
                content: whole,
                activity_type,
                ..
            } => {
                assert_eq!(activity_type, "progress");
                content = whole.clone();
            }
            EventBody::ActivityDelta { patch, .. } => {
                content = shared::state::apply(&content, patch).unwrap();
            }
            _ => continue,
        }
        assert_eq!(content["toolCallId"], json!(call_id));
        assert_eq!(content["total"], json!(4.0));
        seen.push(content["progress"].as_f64().unwrap());
    }
    // One event a step (0.6 s apart, past the 0.2 s throttle). The last step's report and
    // the answer come together, and rmcp hands each notification on in a task of its own,
    // so the answer may overtake it: the result, not the last report, says how it ended.
    assert!(
        seen == [1.0, 2.0, 3.0] || seen == [1.0, 2.0, 3.0, 4.0],
        "{seen:?}"
    );
    assert_valid_session(&app.log(&session).await, true);
}

/// A tool configured with `state` writes its structured output into the shared state: a
/// `STATE_DELTA` before its result, seen in the next model call's view of the state; one
/// the state's rules refuse leaves the state alone and says so in the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_s_structured_output_feeds_the_shared_state_where_configured() {
    let dir = tempfile::tempdir().unwrap();
    let mut everything = everything_stdio();
    everything["tools"] = json!({"get-structured-content": {"state": "/weather"}});
    let mut second = everything_stdio();
    second["tools"] = json!({"get-structured-content": {"state": "/missing/parent"}});
    let servers = json!({"everything": everything, "second": second});
    let path = config_file(dir.path(), servers);
    let turns = json!([
        {"toolCalls": [
            tool_call("everything__get-structured-content", json!({"location": "Chicago"})),
            tool_call("second__get-structured-content", json!({"location": "New York"})),
        ]},
        {"text": "Noted the weather."},
    ]);
    let app = spawn_app_with(turns, &["--mcp-config", path.to_str().unwrap()]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "what is the weather in Chicago?").await;
    let run = socket.until_run_end().await;
    let weather = json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82});
    let (status, state) = app.get(&format!("/api/sessions/{session}/state")).await;
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["state"], json!({"weather": weather}));
    let delta = run
        .iter()
        .position(|(_, e)| e.type_name() == "STATE_DELTA")
        .unwrap();
    let result = run
        .iter()
        .position(|(_, e)| e.type_name() == "TOOL_CALL_RESULT")
        .unwrap();
    assert!(
        delta < result,
        "the state changes before the result says so"
    );
    let results = tool_results(&run);
    assert_eq!(results[0]["structuredContent"], weather);
    // A path whose parent is missing does not apply: the state stays, the result says why.
    let refused = results[1]["stateNotUpdated"].as_str().unwrap_or_default();
    assert!(refused.contains("/missing/parent"), "{}", results[1]);
    assert_eq!(results[1]["structuredContent"]["temperature"], 33);
    assert_valid_session(&app.log(&session).await, true);
}

/// A tool's structured output nested deeper than any logged JSON may nest does not go
/// into the state (the result says why); one within the limit does, and reads back whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_output_nested_too_deep_for_the_state_is_refused_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let servers = json!({"notes": notes(json!({"tools": {"nest": {"state": "/nested"}}}))});
    let path = config_file(dir.path(), servers);
    let turns = json!([
        {"toolCalls": [tool_call("notes__nest", json!({"levels": 100}))]},
        {"toolCalls": [tool_call("notes__nest", json!({"levels": 10}))]},
        {"text": "Nested."},
    ]);
    let app = spawn_app_with(turns, &["--mcp-config", path.to_str().unwrap()]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "nest").await;
    let run = socket.until_run_end().await;
    let results = tool_results(&run);
    let refused = results[0]["stateNotUpdated"].as_str().unwrap_or_default();
    assert!(refused.contains("at most 64"), "{}", results[0]);
    assert!(
        results[1].get("stateNotUpdated").is_none(),
        "{}",
        results[1]
    );
    let kept = (0..11).fold(json!(1), |inner, _| json!({ "n": inner }));
    let (_, state) = app.get(&format!("/api/sessions/{session}/state")).await;
    assert_eq!(state["state"], json!({ "nested": kept }));
    assert_valid_session(&app.log(&session).await, true);
}
