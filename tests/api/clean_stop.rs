//! A clean stop of the real binary (SIGTERM): viewers are told it is going away (1001),
//! the run in flight stops at a safe point with nothing committed lost, the process exits
//! 0 within its grace, and the run goes on at the next start, or at once on another
//! instance sharing the database.

use std::time::Duration;

use serde_json::{json, Value};
use shared::{Event, EventBody};

use crate::helpers::child::Tandem;
use crate::helpers::socket::{Received, Socket};
use crate::helpers::{assert_valid_session, fresh_database, fresh_postgres, write_script};

/// How long each wait may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(30);
/// A lease far longer than any wait here: a run continued within the test was handed
/// back, not left to lapse.
const LONG_LEASE: &[&str] = &["--run-lease-ms", "120000"];

fn long_text() -> Value {
    json!({"text": "word ".repeat(400)})
}

/// What a viewer received until the socket closed, and the close code.
async fn until_closed(socket: &mut Socket) -> (Vec<(u64, Event)>, Option<u16>) {
    let mut events = Vec::new();
    loop {
        match socket.receive().await {
            Received::Frame(shared::ServerFrame::Event { seq, event }) => events.push((seq, event)),
            Received::Frame(_) => {}
            Received::Closed(code) => return (events, code),
        }
    }
}

/// Reads frames until `count` pieces of answer text have arrived; those events.
async fn until_text_pieces(socket: &mut Socket, count: usize) -> Vec<(u64, Event)> {
    let mut pieces = 0;
    socket
        .until(|event| {
            if matches!(event.body, EventBody::TextMessageContent { .. }) {
                pieces += 1;
            }
            pieces >= count
        })
        .await
}

fn count(events: &[(u64, Event)], type_name: &str) -> usize {
    events
        .iter()
        .filter(|(_, e)| e.type_name() == type_name)
        .count()
}

fn recovered(events: &[(u64, Event)]) -> usize {
    events
        .iter()
        .filter(|(_, e)| {
            matches!(&e.body, EventBody::Custom { name, .. } if name == shared::custom::RUN_RECOVERED)
        })
        .count()
}

/// SIGTERM to `tandem`: it must exit 0 within its grace, having said so.
async fn stops_cleanly(tandem: &mut Tandem) {
    tandem.signal("TERM");
    let status = tandem
        .exited(DEADLINE)
        .await
        .expect("it exits within the grace");
    assert!(status.success(), "a clean stop exits 0, not {status}");
    assert_eq!(
        tandem.count_logged("stopped cleanly"),
        1,
        "{:?}",
        tandem.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_stream_loses_nothing_and_the_run_goes_on_at_the_next_start() {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), json!([long_text(), long_text()]));
    let mut first = Tandem::spawn_with(&url, &script, LONG_LEASE);
    let app = first.client();
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "talk for a while").await;
    let mut seen = until_text_pieces(&mut socket, 20).await;

    stops_cleanly(&mut first).await;
    let (rest, code) = until_closed(&mut socket).await;
    seen.extend(rest);
    assert_eq!(code, Some(1001), "viewers are told Tandem is going away");
    assert_eq!(count(&seen, "RUN_FINISHED") + count(&seen, "RUN_ERROR"), 0);
    assert!(
        first.count_logged("stopped at a safe point") == 1,
        "{:?}",
        first.log()
    );
    assert!(first.count_logged("handed run leases back") == 1);

    let second = Tandem::spawn_with(&url, &script, LONG_LEASE);
    let app = second.client();
    let log = app.socket(&session, 0).await.until_run_end().await;
    assert_eq!(
        log[..seen.len()],
        seen[..],
        "every event a viewer saw before the stop is in the log, at its seq"
    );
    assert_eq!(recovered(&log), 1, "the run went on once, marked");
    assert_eq!(count(&log, "RUN_STARTED"), 1, "the same run");
    assert_eq!(log.last().unwrap().1.type_name(), "RUN_FINISHED");
    assert_valid_session(&log, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_nothing_running_stops_at_once_and_the_next_start_finds_everything() {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), json!([{"text": "Hello."}]));
    let mut first = Tandem::spawn_with(&url, &script, &[]);
    let app = first.client();
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "hi").await;
    let before = socket.until_run_end().await;
    stops_cleanly(&mut first).await;
    assert_eq!(until_closed(&mut socket).await.1, Some(1001));
    assert_eq!(first.count_logged("handed run leases back"), 0);

    let second = Tandem::spawn_with(&url, &script, &[]);
    let log = second.client().log(&session).await;
    assert_eq!(log, before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_on_an_instance_that_stops_goes_on_at_once_on_another() {
    let (dir, url) = fresh_postgres();
    let script = write_script(dir.path(), json!([long_text(), long_text()]));
    let mut a = Tandem::spawn_with(&url, &script, LONG_LEASE);
    let b = Tandem::spawn_with(&url, &script, LONG_LEASE);
    let (on_a, on_b) = (a.client(), b.client());
    let (session, mut socket_a) = on_a.open_session().await;
    let mut socket_b = on_b.socket(&session, 0).await;
    socket_b.backlog().await;
    on_a.say(&session, "talk for a while").await;
    let seen = until_text_pieces(&mut socket_a, 20).await;

    let stopped = std::time::Instant::now();
    stops_cleanly(&mut a).await;
    assert_eq!(until_closed(&mut socket_a).await.1, Some(1001));
    // B's viewer saw the whole run through, continued on B long before A's lease (two
    // minutes) could have lapsed.
    let on_b_seen = socket_b.until_run_end().await;
    let taken_over_in = stopped.elapsed();
    assert!(
        taken_over_in < Duration::from_secs(20),
        "continued at once, not after the lease: {taken_over_in:?}"
    );
    assert!(b.count_logged("continuing a run nobody else executes") >= 1);
    let log = on_b.log(&session).await;
    assert_eq!(on_b_seen, log, "B's viewer saw exactly the log");
    assert_eq!(log[..seen.len()], seen[..], "nothing A committed is lost");
    assert_eq!(recovered(&log), 1);
    assert_eq!(log.last().unwrap().1.type_name(), "RUN_FINISHED");
    assert_valid_session(&log, true);
}
