//! Restarts: a paused session is answerable by a new instance on the same file, and a
//! process killed mid-run (the real binary, SIGKILL) leaves a valid, usable log.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::json;
use shared::EventBody;

use crate::helpers::socket::interrupt_id;
use crate::helpers::{assert_valid_session, start, test_config, write_script, TestApp};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_session_is_answered_after_a_restart_and_resumes_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let script = write_script(
        dir.path(),
        json!([{"toolCalls": [{"name": "request_input", "arguments": {"prompt": "Name?", "kind": "text"}}]}, {"text": "Hello Ada."}]),
    );
    let first = start(test_config(&url, &script, &[])).await;
    let session = first.create_session().await;
    let mut socket = first.socket(&session, 0).await;
    socket.backlog().await;
    first.say(&session, "ask me").await;
    let id = interrupt_id(&socket.until_run_end().await);
    first.stop().await;
    drop(socket);

    let second = start(test_config(&url, &script, &[])).await;
    let (_, detail) = second.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(detail["status"], "awaiting_input");
    let before = second.log(&session).await;
    let mut socket = second.socket(&session, 0).await;
    let (backlog, _) = socket.backlog().await;
    assert_eq!(backlog, before, "the whole history is there");
    socket.send(json!({"kind": "resume", "interruptId": id, "status": "resolved", "payload": {"text": "Ada"}})).await;
    socket.until_run_end().await;
    let (status, _) = second
        .post(
            &format!("/api/sessions/{session}/interrupts/{id}"),
            json!({"status": "resolved", "payload": {"text": "Ada"}}),
        )
        .await;
    assert_eq!(status, 200, "a repeat after resuming is a no-op");
    let log = second.log(&session).await;
    let resumes = log
        .iter()
        .filter(|(_, e)| e.type_name() == "RUN_STARTED")
        .count();
    assert_eq!(resumes, 2, "the run resumed exactly once");
    assert_valid_session(&log, true);
}

/// The real binary as a child process.
struct Tandem {
    child: Child,
    address: String,
}

impl Drop for Tandem {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Tandem {
    fn spawn(url: &str, script: &std::path::Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args([
                "--bind",
                "127.0.0.1:0",
                "--database-url",
                url,
                "--engine",
                "script",
                "--web-dir",
                "/nonexistent",
            ])
            .arg("--script")
            .arg(script)
            .args(["--token-delay-ms", "10", "--workers", "1"])
            .env("RUST_LOG", "info")
            .stderr(Stdio::piped())
            .spawn()
            .expect("the tandem binary starts");
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let mut lines = stderr.lines();
        let address = loop {
            let line = lines.next().expect("tandem logs its address").unwrap();
            if let Some(at) = line.find("open http://") {
                let rest = &line[at + "open http://".len()..];
                break rest
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ':')
                    .collect();
            }
        };
        std::thread::spawn(move || lines.for_each(drop));
        Self { child, address }
    }

    fn client(&self) -> TestApp {
        TestApp::remote(&self.address)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_mid_answer_continues_by_itself_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let long = "word ".repeat(500);
    let script = write_script(
        dir.path(),
        json!([
            {"reasoning": "thinking", "text": long, "toolCalls": [{"name": "clock", "arguments": {}}]},
            {"text": "after restart"},
            {"text": "and again"}
        ]),
    );
    let mut tandem = Tandem::spawn(&url, &script);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    // Kill it while it streams: after the second word of the answer is committed.
    socket
        .until(|e| e.type_name() == "TEXT_MESSAGE_CONTENT")
        .await;
    socket
        .until(|e| e.type_name() == "TEXT_MESSAGE_CONTENT")
        .await;
    tandem.child.kill().unwrap();
    tandem.child.wait().unwrap();

    let restarted = Tandem::spawn(&url, &script);
    let app = restarted.client();
    let mut socket = app.socket(&session, 0).await;
    let events = socket.until_run_end().await;
    assert_eq!(events.last().unwrap().1.type_name(), "RUN_FINISHED");
    let log = app.log(&session).await;
    assert_valid_session(&log, true);
    let runs = log
        .iter()
        .filter(|(_, e)| e.type_name() == "RUN_STARTED")
        .count();
    assert_eq!(runs, 1, "the same run went on");
    let marker = log.iter().position(|(_, e)| {
        matches!(&e.body, EventBody::Custom { name, .. } if name == "tandem.run_recovered")
    });
    let answer = log.iter().position(|(_, e)| {
        matches!(&e.body, EventBody::TextMessageContent { delta, .. } if delta.contains("restart"))
    });
    assert!(
        marker.unwrap() < answer.unwrap(),
        "the continuation follows the marker"
    );
    let (_, detail) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(detail["status"], "idle");
    app.say(&session, "continue").await;
    let events = socket.until_run_end().await;
    assert_eq!(
        events.last().unwrap().1.type_name(),
        "RUN_FINISHED",
        "the session is usable again"
    );
}
