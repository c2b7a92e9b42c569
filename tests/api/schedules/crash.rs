//! Exactly once while instances die: twenty schedules every second on two instances of one
//! PostgreSQL database (on SQLite, one and its restart), one killed with SIGKILL.

use std::collections::{BTreeMap, HashSet};

use serde_json::json;

use super::{schedule, user_texts, SECOND, WAIT};
use crate::helpers::child::Tandem;
use crate::helpers::{count_in_database, fresh_database, on_postgres, write_script};

/// The fires recorded in the database at `url`: per schedule, each scheduled time and its
/// fire's session.
async fn recorded(url: &str) -> BTreeMap<String, Vec<(i64, String, Option<String>)>> {
    use sqlx::Connection;
    let query = "SELECT schedule_id, scheduled_for, status, session_id FROM schedule_fires \
                 ORDER BY schedule_id, scheduled_for";
    let rows: Vec<(String, i64, String, Option<String>)> = match url.strip_prefix("sqlite://") {
        Some(file) => {
            let options = sqlx::sqlite::SqliteConnectOptions::new().filename(file);
            let mut connection = sqlx::ConnectOptions::connect(&options).await.unwrap();
            sqlx::query_as(query)
                .fetch_all(&mut connection)
                .await
                .unwrap()
        }
        None => {
            let mut connection = sqlx::PgConnection::connect(url).await.unwrap();
            sqlx::query_as(query)
                .fetch_all(&mut connection)
                .await
                .unwrap()
        }
    };
    let mut by_schedule: BTreeMap<String, Vec<(i64, String, Option<String>)>> = BTreeMap::new();
    for (schedule, time, status, session) in rows {
        by_schedule
            .entry(schedule)
            .or_default()
            .push((time, status, session));
    }
    by_schedule
}

/// Twenty schedules every second, on two instances of one PostgreSQL database (on
/// SQLite, one instance and its restart), one killed with SIGKILL while they fire: no
/// scheduled time fires twice (each fire's session holds one run), and none is lost (each
/// schedule's times form an unbroken run of seconds, each fired, missed or skipped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_time_fires_once_while_an_instance_is_killed_mid_way() {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), json!([{"text": "Done."}]));
    let flags = [
        "--min-schedule-interval-seconds",
        "1",
        "--token-delay-ms",
        "0",
    ];
    let mut first = Tandem::spawn_with(&url, &script, &flags);
    let second = on_postgres().then(|| Tandem::spawn_with(&url, &script, &flags));
    let client = first.client();
    for n in 0..20 {
        schedule(
            &client,
            json!({"name": format!("s{n}"), "message": {"text": "tick"},
                                  "everySeconds": 1, "misfire": "all"}),
        )
        .await;
    }
    assert!(
        first.logged_times("a schedule fired", 15, WAIT).await,
        "the first fires"
    );
    first.kill();
    let (survivor, client) = match second {
        Some(second) => {
            let client = second.client();
            (second, client)
        }
        None => {
            let restarted = Tandem::spawn_with(&url, &script, &flags);
            let client = restarted.client();
            (restarted, client)
        }
    };
    let fired_before = count_in_database(&url, "SELECT COUNT(*) FROM schedule_fires").await;
    assert!(
        survivor.logged_times("a schedule fired", 40, WAIT).await,
        "the survivor fires ({fired_before} recorded before)"
    );
    // Stop the schedules, then read what was recorded.
    let (_, listed) = client.get("/api/schedules").await;
    for schedule in listed["schedules"].as_array().unwrap() {
        let path = format!("/api/schedules/{}", schedule["id"].as_str().unwrap());
        assert_eq!(client.patch(&path, json!({"enabled": false})).await.0, 200);
    }
    let recorded = recorded(&url).await;
    assert_eq!(recorded.len(), 20, "every schedule fired");
    let mut sessions: HashSet<Option<String>> = HashSet::new();
    for (schedule, times) in &recorded {
        for pair in times.windows(2) {
            assert_eq!(
                pair[1].0 - pair[0].0,
                SECOND,
                "{schedule}: a time lost: {times:?}"
            );
        }
        for (_, status, session) in times {
            if status == "fired" {
                assert!(sessions.insert(session.clone()), "a session fired twice");
            }
        }
    }
    // Each fire's session holds its one message and the one run it started (a crash
    // repaired it, or it ran to its end).
    for session in &sessions {
        let log = client.log(session.as_deref().unwrap()).await;
        let started = crate::helpers::types(&log)
            .into_iter()
            .filter(|kind| *kind == "RUN_STARTED")
            .count();
        assert_eq!(user_texts(&log), ["tick"], "{session:?}");
        assert!(started <= 2, "{session:?}: a run and at most its repair's");
    }
    drop(survivor);
    let recorded_at_stop = count_in_database(&url, "SELECT COUNT(*) FROM schedule_fires").await;
    assert!(
        recorded_at_stop > fired_before,
        "the survivor recorded fires of its own"
    );
}
