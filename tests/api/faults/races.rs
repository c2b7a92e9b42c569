//! Two answers to one question at the same moment: exactly one resumes the run.
//!
//! One session is paused again and again (every scripted turn asks a question). Over
//! sockets, two viewers send different `resume` frames at once; the loser gets
//! `interrupt_already_answered` and sees the winner's result in its own stream. Over
//! REST, two POSTs race: one 202 and a 409 (different payloads) or a 200 duplicate
//! (equal payloads). The log then holds exactly one resumption per question.

use std::collections::HashMap;

use serde_json::{json, Value};
use shared::{Event, EventBody, ServerFrame};

use super::raw_ws::RawSocket;
use crate::helpers::socket::interrupt_id;
use crate::helpers::{assert_valid_session, spawn_app, TestApp};

const SOCKET_RACES: usize = 200;
const REST_RACES: usize = 200;

/// A frame every socket refuses; its reply marks that the frames before it were handled.
const PROBE: &str = r#"{"kind":"probe"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_answers_resume_exactly_once() {
    let question = json!({"prompt": "Next?", "kind": "text"});
    let ask = json!({"toolCalls": [{"name": "request_input", "arguments": question}]});
    let app = spawn_app(json!(vec![ask; SOCKET_RACES + REST_RACES + 1])).await;
    let session = app.create_session().await;
    let path = format!("/api/sessions/{session}/ws");
    let mut a = RawSocket::connect(&app.address, &path).await;
    let mut b = RawSocket::connect(&app.address, &path).await;
    app.say(&session, "ask away").await;
    until_run_end(&mut b).await;
    let mut id = interrupt_id(&until_run_end(&mut a).await);
    let mut winners: HashMap<String, Value> = HashMap::new();
    let mut losers = [0, 0];
    for race in 0..SOCKET_RACES {
        let payloads = [
            json!({"text": format!("a{race}")}),
            json!({"text": format!("b{race}")}),
        ];
        let frames = payloads.each_ref().map(|payload| {
            json!({"kind": "resume", "interruptId": id, "status": "resolved", "payload": payload})
                .to_string()
        });
        tokio::join!(a.send_text(&frames[0]), b.send_text(&frames[1]));
        tokio::join!(a.send_text(PROBE), b.send_text(PROBE));
        let (seen_a, lost_a) = read_race(&mut a).await;
        let (seen_b, lost_b) = read_race(&mut b).await;
        assert_eq!(
            seen_a, seen_b,
            "race {race}: both viewers see the same events"
        );
        assert!(
            lost_a ^ lost_b,
            "race {race}: exactly one loses (a lost: {lost_a}, b lost: {lost_b})"
        );
        let winner = &payloads[usize::from(lost_a)];
        let (call, content) = resumed_result(&seen_a);
        assert_eq!(
            content,
            json!({"status": "resolved", "payload": winner}),
            "race {race}"
        );
        winners.insert(call, winner.clone());
        losers[usize::from(lost_b)] += 1;
        id = interrupt_id(&seen_a);
    }
    let mut rest_outcomes: HashMap<(u16, u16), usize> = HashMap::new();
    for race in 0..REST_RACES {
        let same = race % 2 == 1;
        let payloads = [
            json!({"text": format!("c{race}")}),
            json!({"text": format!("{}{race}", if same { 'c' } else { 'd' })}),
        ];
        let path = format!("/api/sessions/{session}/interrupts/{id}");
        let answer = |p: &Value| json!({"status": "resolved", "payload": p});
        let (first, second) = tokio::join!(
            app.post(&path, answer(&payloads[0])),
            app.post(&path, answer(&payloads[1]))
        );
        let mut statuses = [first.0, second.0];
        statuses.sort();
        let expected = if same { [200, 202] } else { [202, 409] };
        assert_eq!(statuses, expected, "REST race {race}: {first:?} {second:?}");
        let (won, lost) = if first.0 == 202 {
            (&first, &second)
        } else {
            (&second, &first)
        };
        if same {
            assert_eq!(
                (&lost.1["duplicate"], &lost.1["runId"]),
                (&json!(true), &won.1["runId"])
            );
        } else {
            assert_eq!(
                lost.1["error"]["code"], "interrupt_already_answered",
                "{lost:?}"
            );
        }
        let seen = until_run_end(&mut a).await;
        assert_eq!(until_run_end(&mut b).await, seen);
        let (call, _) = resumed_result(&seen);
        winners.insert(call, payloads[usize::from(first.0 != 202)].clone());
        *rest_outcomes.entry((statuses[0], statuses[1])).or_default() += 1;
        id = interrupt_id(&seen);
    }
    check_log(&app, &session, &winners).await;
    println!(
        "faults/races: {SOCKET_RACES} socket races (first socket lost {}, second lost {}), \
         {REST_RACES} REST races {rest_outcomes:?}; every question resumed exactly once",
        losers[0], losers[1]
    );
}

/// Reads one viewer's frames until its probe's reply and the resumed run's end; returns
/// the events and whether this viewer's answer was refused as already answered.
async fn read_race(socket: &mut RawSocket) -> (Vec<(u64, Event)>, bool) {
    let (mut events, mut lost, mut probed) = (Vec::new(), false, false);
    while !probed
        || !events
            .last()
            .is_some_and(|(_, e): &(u64, Event)| e.body.is_run_end())
    {
        match frame(socket).await {
            ServerFrame::Event { seq, event } => events.push((seq, event)),
            ServerFrame::Error { code, .. } if code == "invalid_frame" => probed = true,
            ServerFrame::Error { code, .. } if code == "interrupt_already_answered" && !probed => {
                lost = true
            }
            other => panic!("unexpected frame {other:?}"),
        }
    }
    (events, lost)
}

/// Events until one that ends a run, included.
async fn until_run_end(socket: &mut RawSocket) -> Vec<(u64, Event)> {
    let mut events = Vec::new();
    loop {
        match frame(socket).await {
            ServerFrame::Event { seq, event } if event.body.is_run_end() => {
                events.push((seq, event));
                return events;
            }
            ServerFrame::Event { seq, event } => events.push((seq, event)),
            other => panic!("unexpected frame {other:?}"),
        }
    }
}

async fn frame(socket: &mut RawSocket) -> ServerFrame {
    let frame = socket.next_json().await.expect("the socket stays open");
    serde_json::from_value(frame).expect("a server frame")
}

/// The `TOOL_CALL_RESULT` that opened a resumed run: its call and parsed content.
fn resumed_result(events: &[(u64, Event)]) -> (String, Value) {
    assert_eq!(events[0].1.type_name(), "RUN_STARTED");
    match &events[1].1.body {
        EventBody::ToolCallResult {
            tool_call_id,
            content,
            ..
        } => (tool_call_id.clone(), serde_json::from_str(content).unwrap()),
        other => panic!("a resumed run starts with the answer's result, got {other:?}"),
    }
}

/// One `RUN_STARTED` per question plus the first, one result per call, the winner's.
async fn check_log(app: &TestApp, session: &str, winners: &HashMap<String, Value>) {
    let log = app.log(session).await;
    assert_valid_session(&log, true);
    let runs = log
        .iter()
        .filter(|(_, e)| e.type_name() == "RUN_STARTED")
        .count();
    assert_eq!(
        runs,
        1 + SOCKET_RACES + REST_RACES,
        "one resumption per question"
    );
    let mut results: HashMap<&str, usize> = HashMap::new();
    for (_, event) in &log {
        if let EventBody::ToolCallResult {
            tool_call_id,
            content,
            ..
        } = &event.body
        {
            *results.entry(tool_call_id).or_default() += 1;
            let content: Value = serde_json::from_str(content).unwrap();
            assert_eq!(
                content["payload"],
                winners[tool_call_id.as_str()],
                "{tool_call_id}"
            );
        }
    }
    assert_eq!(results.len(), SOCKET_RACES + REST_RACES);
    assert!(results.values().all(|n| *n == 1), "one result per question");
}
