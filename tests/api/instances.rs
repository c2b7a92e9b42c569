//! Several instances on one PostgreSQL database (whichever backend the rest of the suite
//! runs on): two apps in-process, each with its own store, writer, relay and lease
//! keeper, reached directly (no proxy). A viewer on either sees every run as the log
//! holds it; answers, stops and deletes work on any instance; racing answers on two
//! instances resume exactly once; a dropped listener loses nothing.

use std::time::Instant;

use futures_util::{stream, StreamExt};
use serde_json::{json, Value};
use shared::{EventBody, Outcome};

use crate::helpers::socket::{interrupt_id, Received};
use crate::helpers::{
    assert_valid_session, fresh_postgres, start, test_config, write_script, TestApp, TestDir,
};

/// Two instances on one fresh database with one script (a model call's turn is its
/// number in the session, wherever it runs) and `extra` flags.
async fn two_instances(turns: Value, extra: &[&str]) -> (TestApp, TestApp, TestDir) {
    let (dir, url) = fresh_postgres();
    let script = write_script(dir.path(), turns);
    let a = start(test_config(&url, &script, extra)).await;
    let b = start(test_config(&url, &script, extra)).await;
    (a, b, dir)
}

fn long_text() -> Value {
    json!({"text": "word ".repeat(300)})
}

fn ask() -> Value {
    json!({"toolCalls": [{"name": "request_input", "arguments": {"prompt": "Name?", "kind": "text"}}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn viewers_on_either_instance_see_each_run_as_logged_and_resume_on_the_other() {
    let turns = json!([long_text(), {"text": "From A."}]);
    let (a, b, _dir) = two_instances(turns, &["--token-delay-ms", "2"]).await;
    let session = a.create_session().await;
    let mut on_a = a.socket(&session, 0).await;
    let mut on_b = b.socket(&session, 0).await;
    b.say(&session, "talk on B").await;
    let seen_a = on_a.until_run_end().await;
    let seen_b = on_b.until_run_end().await;
    a.say(&session, "and on A").await;
    let second_a = on_a.until_run_end().await;
    let second_b = on_b.until_run_end().await;
    let log = a.log(&session).await;
    assert_eq!(log, b.log(&session).await, "one log, read on either");
    let seen: Vec<_> = seen_a.into_iter().chain(second_a).collect();
    assert_eq!(seen, log, "the viewer on A saw exactly the log");
    let seen: Vec<_> = seen_b.into_iter().chain(second_b).collect();
    assert_eq!(seen, log, "the viewer on B saw exactly the log");
    assert_valid_session(&log, true);
    // A viewer that reconnects to the other instance gets exactly what it missed.
    for (app, after) in [(&a, 7), (&b, log.len() as u64 - 3)] {
        let mut again = app.socket(&session, after).await;
        let (backlog, caught_up) = again.backlog().await;
        assert_eq!(backlog, log[after as usize..].to_vec());
        assert_eq!(caught_up, log.len() as u64);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_and_stop_on_one_instance_act_on_a_run_of_the_other() {
    let turns = json!([ask(), {"text": "Hello, Ada."}, long_text()]);
    let (a, b, _dir) = two_instances(turns, &["--token-delay-ms", "5"]).await;
    let session = b.create_session().await;
    let mut on_b = b.socket(&session, 0).await;
    b.say(&session, "ask me").await;
    let id = interrupt_id(&on_b.until_run_end().await);
    // Answered on A: the run that continues runs on A, and B's viewer sees it.
    let answer = json!({"status": "resolved", "payload": {"text": "Ada"}});
    let path = format!("/api/sessions/{session}/interrupts/{id}");
    assert_eq!(a.post(&path, answer).await.0, 202);
    let resumed = on_b.until_run_end().await;
    assert_eq!(
        resumed.last().unwrap().1.type_name(),
        "RUN_FINISHED",
        "{resumed:?}"
    );
    // A run on B (the long text), stopped on A.
    b.say(&session, "talk").await;
    on_b.until(|e| matches!(&e.body, EventBody::TextMessageContent { delta, .. } if delta.contains("word")))
        .await;
    let stopped_at = Instant::now();
    let (status, body) = a
        .post(&format!("/api/sessions/{session}/cancel"), json!({}))
        .await;
    assert_eq!(status, 202, "{body}");
    let rest = on_b.until_run_end().await;
    let took = stopped_at.elapsed();
    assert!(
        matches!(
            &rest.last().unwrap().1.body,
            EventBody::RunFinished {
                outcome: Some(Outcome::Cancelled),
                ..
            }
        ),
        "the run on B ended cancelled: {:?}",
        rest.last()
    );
    println!("instances: a stop sent to A ended the run on B in {took:.1?}");
    let log = a.log(&session).await;
    assert_valid_session(&log, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_deleted_on_one_instance_closes_sockets_and_stops_its_run_on_the_other() {
    let (a, b, _dir) = two_instances(json!([long_text()]), &["--token-delay-ms", "5"]).await;
    let session = a.create_session().await;
    let mut on_a = a.socket(&session, 0).await;
    let mut on_b = b.socket(&session, 0).await;
    a.say(&session, "talk").await;
    on_b.until(|e| matches!(&e.body, EventBody::TextMessageContent { delta, .. } if delta.contains("word")))
        .await;
    assert_eq!(b.delete_session(&session).await, 204);
    for socket in [&mut on_a, &mut on_b] {
        loop {
            match socket.receive().await {
                Received::Closed(code) => {
                    assert_eq!(code, Some(1000), "closed normally");
                    break;
                }
                Received::Frame(_) => continue,
            }
        }
    }
    for app in [&a, &b] {
        let (status, _) = app.get(&format!("/api/sessions/{session}")).await;
        assert_eq!(status, 404);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_racing_on_two_instances_resume_exactly_once() {
    const RACES: usize = 200;
    let (a, b, _dir) = two_instances(json!([ask(), ask()]), &[]).await;
    let paused: Vec<(String, String)> = stream::iter(0..RACES)
        .map(|_| async {
            let (session, mut socket) = a.open_session().await;
            a.say(&session, "ask me").await;
            (session, interrupt_id(&socket.until_run_end().await))
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let outcomes: Vec<(u16, u16)> = stream::iter(&paused)
        .map(|(session, id)| {
            let (a, b) = (&a, &b);
            async move {
                let path = format!("/api/sessions/{session}/interrupts/{id}");
                let answer = |name: &str| json!({"status": "resolved", "payload": {"text": name}});
                let (on_a, on_b) = tokio::join!(
                    a.post(&path, answer("from A")),
                    b.post(&path, answer("from B"))
                );
                (on_a.0, on_b.0)
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let mut wins = [0, 0];
    for (race, outcome) in outcomes.iter().enumerate() {
        match outcome {
            (202, 409) => wins[0] += 1,
            (409, 202) => wins[1] += 1,
            other => panic!("race {race}: exactly one answer wins, got {other:?}"),
        }
    }
    println!(
        "instances: {RACES} races, A won {}, B won {}",
        wins[0], wins[1]
    );
    for (session, _) in &paused {
        let runs = a
            .log(session)
            .await
            .iter()
            .filter(|(_, e)| matches!(&e.body, EventBody::RunStarted { .. }))
            .count();
        assert_eq!(runs, 2, "{session}: one run asked, one answer resumed it");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_listener_loses_no_event() {
    let (dir, url) = fresh_postgres();
    let script = write_script(dir.path(), json!([long_text()]));
    let a = start(test_config(&url, &script, &["--token-delay-ms", "3"])).await;
    let b = start(test_config(&url, &script, &["--token-delay-ms", "3"])).await;
    let session = a.create_session().await;
    let mut on_a = a.socket(&session, 0).await;
    let mut list = a.list_stream().await;
    assert_eq!(list.expect().await["type"], "snapshot");
    b.say(&session, "talk").await;
    let mut seen = on_a
        .until(|e| matches!(&e.body, EventBody::TextMessageContent { delta, .. } if delta.contains("word")))
        .await;
    let mut admin = <sqlx::PgConnection as sqlx::Connection>::connect(&url)
        .await
        .unwrap();
    let ended: Vec<(bool,)> = sqlx::query_as(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = $1 AND datname = current_database()",
    )
    .bind(tandem::store::LISTENER_NAME)
    .fetch_all(&mut admin)
    .await
    .unwrap();
    assert_eq!(ended.len(), 2, "each instance has one listener: {ended:?}");
    seen.extend(on_a.until_run_end().await);
    assert_eq!(seen, a.log(&session).await, "nothing lost, nothing twice");
    // The open list read itself again (changes may have been missed), then heard the end.
    let snapshot = list
        .until("a snapshot after the drop", |m| m["type"] == "snapshot")
        .await;
    if snapshot["sessions"][0]["status"] != "idle" {
        list.until_status(&session, "idle").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_that_end_on_one_instance_close_sockets_on_every_instance() {
    let (dir, url) = fresh_postgres();
    let script = write_script(dir.path(), json!([{"text": "Hello."}]));
    // Heartbeats too rare to close anything: every close comes from the change feed.
    let flags = [
        "--auth",
        "token",
        "--heartbeat-interval-ms",
        "600000",
        "--client-timeout-ms",
        "1200000",
    ];
    let a = start(test_config(&url, &script, &flags)).await;
    let b = start(test_config(&url, &script, &flags)).await;
    let token = crate::helpers::add_users(&url, &["carol"]).await.remove(0);
    let (carol_a, carol_b) = (a.as_user(&token), b.as_user(&token));
    let session = carol_a.create_session().await;

    // A sign-out on A closes the socket of that sign-in on B.
    let login = reqwest::Client::new()
        .post(a.url("/api/auth/login"))
        .json(&json!({ "token": token }))
        .send()
        .await
        .unwrap();
    let cookie = login.headers()["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_string();
    let path = format!("/api/sessions/{session}/ws?after=0");
    let mut signed_in_on_b = b
        .try_socket_at(&path, &[("cookie", &cookie)])
        .await
        .unwrap();
    signed_in_on_b.backlog().await;
    let logout = reqwest::Client::new()
        .post(a.url("/api/auth/logout"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(logout.status(), 204);
    assert_eq!(
        signed_in_on_b.closed().await,
        (Some(1008), "signed out".into())
    );

    // A share link deleted on A closes its viewer on B.
    let (status, share) = carol_a
        .post(&format!("/api/sessions/{session}/shares"), json!({}))
        .await;
    assert_eq!(status, 201);
    let mut viewer_on_b = b
        .try_shared_socket(share["token"].as_str().unwrap(), 0)
        .await
        .unwrap();
    viewer_on_b.backlog().await;
    let delete = format!(
        "/api/sessions/{session}/shares/{}",
        share["id"].as_str().unwrap()
    );
    let deleted = carol_a.http.delete(carol_a.url(&delete)).send().await;
    assert_eq!(deleted.unwrap().status(), 204);
    assert_eq!(
        viewer_on_b.closed().await,
        (Some(1008), "this share link was deleted".into())
    );

    // A revoke from the shell closes the user's sockets on both instances.
    let mut on_a = carol_a.socket(&session, 0).await;
    let mut on_b = carol_b.socket(&session, 0).await;
    on_a.backlog().await;
    on_b.backlog().await;
    let revoke = tandem::auth::cli::UsersOn(
        tandem::auth::cli::UsersCommand::Revoke {
            name: "carol".into(),
        },
        Default::default(),
    );
    tandem::store::open(&url, &Default::default(), revoke)
        .await
        .unwrap()
        .unwrap();
    for socket in [&mut on_a, &mut on_b] {
        assert_eq!(
            socket.closed().await,
            (Some(1008), "this user was revoked".into())
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_list_on_one_instance_follows_what_the_other_does() {
    let (a, b, _dir) = two_instances(json!([ask(), {"text": "Hello, Ada."}]), &[]).await;
    let mut list = a.list_stream().await;
    assert_eq!(list.expect().await["type"], "snapshot");
    let session = b.create_session().await;
    list.until_status(&session, "idle").await;
    let mut on_b = b.socket(&session, 0).await;
    b.say(&session, "ask me").await;
    list.until_status(&session, "awaiting_input").await;
    let id = interrupt_id(&on_b.until_run_end().await);
    let answer = json!({"status": "resolved", "payload": {"text": "Ada"}});
    let path = format!("/api/sessions/{session}/interrupts/{id}");
    assert_eq!(b.post(&path, answer).await.0, 202);
    list.until_status(&session, "idle").await;
    let path = format!("/api/sessions/{session}");
    assert_eq!(b.patch(&path, json!({"title": "On B"})).await.0, 200);
    list.until_session(&session, "the rename on B", |told| told["title"] == "On B")
        .await;
    assert_eq!(b.delete_session(&session).await, 204);
    list.until_removed(&session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_queued_on_one_instance_runs_once_after_the_run_on_the_other() {
    let turns = json!([long_text(), {"text": "Queued reply."}]);
    let (a, b, _dir) = two_instances(turns, &["--token-delay-ms", "2"]).await;
    let session = a.create_session().await;
    let mut on_a = a.socket(&session, 0).await;
    let mut on_b = b.socket(&session, 0).await;
    b.say(&session, "talk on B").await;
    on_a.until(|e| e.type_name() == "STEP_STARTED").await;
    let (status, body) = a
        .post(
            &format!("/api/sessions/{session}/messages"),
            json!({"text": "queued on A"}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let queued = body["queued"].clone();
    for viewer in [&mut on_a, &mut on_b] {
        let shown = viewer.until_queue(|q| !q.is_empty()).await;
        assert_eq!(
            serde_json::to_value(&shown).unwrap(),
            json!([queued]),
            "viewers on both instances are told"
        );
    }
    let log = loop {
        let log = a.log(&session).await;
        let runs = log
            .iter()
            .filter(|(_, e)| e.type_name() == "RUN_STARTED")
            .count();
        if runs == 2 && log.last().is_some_and(|(_, e)| e.body.is_run_end()) {
            break log;
        }
        on_a.until_run_end().await;
    };
    let started = log.iter().find_map(|(_, e)| match &e.body {
        EventBody::RunStarted { run_id, .. } if *run_id == queued["runId"] => Some(run_id.clone()),
        _ => None,
    });
    assert!(started.is_some(), "the queued message started its run");
    let said = log
        .iter()
        .filter(|(_, e)| matches!(&e.body, EventBody::TextMessageStart { message_id, .. } if *message_id == queued["id"]))
        .count();
    assert_eq!(said, 1, "once");
    assert_valid_session(&log, true);
}
