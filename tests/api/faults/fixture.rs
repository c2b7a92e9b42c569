//! The scene the bad-input tables play in: one session paused on a question, one whose
//! question was answered (runs are started there to prove the server still serves),
//! a viewer on each, and a byte-exact snapshot of both logs and the session list.

use serde_json::json;
use shared::Event;

use crate::helpers::socket::{interrupt_id, Socket};
use crate::helpers::{spawn_app, TestApp};

/// Everything a bad-input case needs.
pub struct Fixture {
    pub app: TestApp,
    /// A session awaiting input on interrupt `pending`.
    pub paused: String,
    pub pending: String,
    /// An idle session whose interrupt `answered` was answered with `{"text":"first"}`.
    pub idle: String,
    pub answered: String,
    watch_paused: Socket,
    watch_idle: Socket,
}

/// What must not change: both logs as the server returns them, and the session ids.
#[derive(Debug, PartialEq)]
pub struct Snapshot {
    logs: Vec<String>,
    sessions: Vec<String>,
}

/// Builds the scene: the script asks a question first, then answers "ok" forever.
pub async fn fixture() -> Fixture {
    let question = json!({"prompt": "Name?", "kind": "text"});
    let ask = json!({"toolCalls": [{"name": "request_input", "arguments": question}]});
    let mut turns = vec![ask];
    turns.extend((0..300).map(|i| json!({"text": format!("ok {i}")})));
    let app = spawn_app(json!(turns)).await;
    let (paused, mut watch_paused) = app.open_session().await;
    app.say(&paused, "ask me").await;
    let pending = interrupt_id(&watch_paused.until_run_end().await);
    let (idle, mut watch_idle) = app.open_session().await;
    app.say(&idle, "ask me too").await;
    let answered = interrupt_id(&watch_idle.until_run_end().await);
    let path = format!("/api/sessions/{idle}/interrupts/{answered}");
    let (status, _) = app
        .post(
            &path,
            json!({"status": "resolved", "payload": {"text": "first"}}),
        )
        .await;
    assert_eq!(status, 202);
    watch_idle.until_run_end().await;
    Fixture {
        app,
        paused,
        pending,
        idle,
        answered,
        watch_paused,
        watch_idle,
    }
}

impl Fixture {
    /// Both logs, byte for byte, and the list of session ids.
    pub async fn snapshot(&self) -> Snapshot {
        let mut logs = Vec::new();
        for session in [&self.paused, &self.idle] {
            let url = self.app.url(&format!(
                "/api/sessions/{session}/events?after=0&limit=10000"
            ));
            let response = self.app.http.get(url).send().await.unwrap();
            assert_eq!(response.status(), 200);
            logs.push(response.text().await.unwrap());
        }
        let (_, list) = self.app.get("/api/sessions").await;
        let sessions = list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect();
        Snapshot { logs, sessions }
    }

    /// Starts a run in the idle session; its viewer must see it end. Returns its events.
    pub async fn liveness(&mut self) -> Vec<(u64, Event)> {
        self.app.say(&self.idle, "still there?").await;
        let events = self.watch_idle.until_run_end().await;
        assert_eq!(events.last().unwrap().1.type_name(), "RUN_FINISHED");
        events
    }

    /// Answers the paused session's question; its viewer, open all along, sees the run.
    pub async fn finish(mut self) {
        let path = format!("/api/sessions/{}/interrupts/{}", self.paused, self.pending);
        let (status, body) = self
            .app
            .post(
                &path,
                json!({"status": "resolved", "payload": {"text": "Ada"}}),
            )
            .await;
        assert_eq!(status, 202, "{body}");
        let events = self.watch_paused.until_run_end().await;
        assert_eq!(events.last().unwrap().1.type_name(), "RUN_FINISHED");
    }
}
