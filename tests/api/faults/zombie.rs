//! The zombie: the instance that executes a run freezes (SIGSTOP) past its lease, another
//! instance takes the run over and finishes it, then the frozen one wakes (SIGCONT). Its
//! late appends are refused by the store, it stops its run, and viewers see exactly one
//! continuation: the log has one recovery and one end, and nothing after it.
//!
//! Two real binaries on one PostgreSQL database (whichever backend the suite runs on),
//! leases of a second.

use serde_json::json;
use shared::EventBody;

use crate::helpers::child::Tandem;
use crate::helpers::{assert_valid_session, fresh_postgres, write_script};

/// How long either instance may take to notice anything here.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_instance_that_wakes_after_a_takeover_is_fenced_off() {
    let (dir, url) = fresh_postgres();
    let long = json!({"text": "word ".repeat(400)});
    let script = write_script(
        dir.path(),
        json!([long, {"text": "Continued elsewhere."}, {"text": "Once more."}]),
    );
    let flags = ["--token-delay-ms", "5"];
    let frozen = Tandem::spawn_with(&url, &script, &flags);
    let taker = Tandem::spawn_with(&url, &script, &flags);
    let (on_frozen, on_taker) = (frozen.client(), taker.client());
    let session = on_frozen.create_session().await;
    let mut viewer = on_taker.socket(&session, 0).await;
    on_frozen.say(&session, "talk").await;
    let mut seen = viewer
        .until(|e| matches!(&e.body, EventBody::TextMessageContent { delta, .. } if delta.contains("word")))
        .await;

    frozen.signal("STOP");
    seen.extend(
        viewer
            .until(|e| matches!(&e.body, EventBody::Custom { name, .. } if name == shared::custom::RUN_RECOVERED))
            .await,
    );
    seen.extend(viewer.until_run_end().await);
    let finished = on_taker.log(&session).await;
    assert_eq!(
        seen, finished,
        "the viewer saw the log, continuation included"
    );

    frozen.signal("CONT");
    assert!(
        frozen
            .logged("another instance took this run over", PATIENCE)
            .await,
        "the woken instance stops its run: {:#?}",
        frozen.log()
    );
    let log = on_taker.log(&session).await;
    assert_eq!(
        log, finished,
        "nothing of the woken instance reached the log"
    );
    let recoveries = log
        .iter()
        .filter(|(_, e)| matches!(&e.body, EventBody::Custom { name, .. } if name == shared::custom::RUN_RECOVERED))
        .count();
    let ends = log.iter().filter(|(_, e)| e.body.is_run_end()).count();
    assert_eq!((recoveries, ends), (1, 1), "one continuation, one end");
    assert_valid_session(&log, true);
    println!(
        "faults/zombie: run taken over and finished with {} events; the woken instance was fenced off",
        log.len()
    );
}
