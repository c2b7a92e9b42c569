//! The database under pressure: another process holding the write lock, and (SQLite) a
//! full disk. The
//! writer retries within bounds, clients get a clear 503, no viewer ever sees an event
//! that was not committed, and everything works again once the condition clears.

use std::time::Duration;

use serde_json::json;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, PgConnection, SqliteConnection};

use crate::helpers::{
    assert_valid_session, fresh_database, start, test_config, write_script, TestApp, TestDir,
};

/// A write lock another process holds on the database the app uses.
enum HeldLock {
    Sqlite(SqliteConnection),
    Postgres(PgConnection),
}

/// Takes the write lock: SQLite's file lock, or on PostgreSQL an exclusive lock on the
/// event table (reads go on, every append waits).
async fn hold_write_lock(dir: &TestDir, url: &str) -> HeldLock {
    match dir.sqlite_file() {
        Some(file) => {
            let mut conn = SqliteConnectOptions::new()
                .filename(file)
                .connect()
                .await
                .unwrap();
            sqlx::query("BEGIN IMMEDIATE")
                .execute(&mut conn)
                .await
                .unwrap();
            HeldLock::Sqlite(conn)
        }
        None => {
            let mut conn = PgConnection::connect(url).await.unwrap();
            sqlx::query("BEGIN").execute(&mut conn).await.unwrap();
            sqlx::query("LOCK TABLE events IN EXCLUSIVE MODE")
                .execute(&mut conn)
                .await
                .unwrap();
            HeldLock::Postgres(conn)
        }
    }
}

async fn release(lock: HeldLock) {
    match lock {
        HeldLock::Sqlite(mut conn) => {
            sqlx::query("ROLLBACK").execute(&mut conn).await.unwrap();
            conn.close().await.unwrap();
        }
        HeldLock::Postgres(mut conn) => {
            sqlx::query("ROLLBACK").execute(&mut conn).await.unwrap();
            conn.close().await.unwrap();
        }
    }
}

async fn app_on(dir: &std::path::Path, url: &str, extra: &[&str]) -> TestApp {
    let script = write_script(dir, json!([{"text": "Still here."}, {"text": "Again."}]));
    start(test_config(url, &script, extra)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_held_for_a_while_delays_writes_but_loses_nothing() {
    let (dir, url) = fresh_database();
    let flags = ["--lock-timeout-ms", "50", "--write-retry-ms", "20000"];
    let app = app_on(dir.path(), &url, &flags).await;
    let (session, mut socket) = app.open_session().await;
    let lock = hold_write_lock(&dir, &url).await;
    let url = app.url(&format!("/api/sessions/{session}/messages"));
    let post = tokio::spawn(async move {
        let client = reqwest::Client::new();
        let response = client
            .post(url)
            .json(&json!({"text": "hello"}))
            .send()
            .await
            .unwrap();
        response.status().as_u16()
    });
    // The lock stays held for a second: the condition under test, not synchronisation.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !post.is_finished(),
        "the write waits while the lock is held"
    );
    release(lock).await;
    assert_eq!(post.await.unwrap(), 202);
    let seen = socket.until_run_end().await;
    let log = app.log(&session).await;
    assert_eq!(seen, log, "the viewer saw exactly the committed log");
    assert_valid_session(&log, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_held_past_the_retry_bound_is_a_clear_503_and_then_it_recovers() {
    let (dir, url) = fresh_database();
    let flags = ["--lock-timeout-ms", "50", "--write-retry-ms", "300"];
    let app = app_on(dir.path(), &url, &flags).await;
    let (session, mut socket) = app.open_session().await;
    let before = app.log(&session).await;
    let lock = hold_write_lock(&dir, &url).await;
    let path = format!("/api/sessions/{session}/messages");
    let (status, body) = app.post(&path, json!({"text": "hello"})).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "storage_unavailable");
    assert_eq!(app.log(&session).await, before, "nothing was committed");
    release(lock).await;
    let (status, _) = app.post(&path, json!({"text": "hello again"})).await;
    assert_eq!(status, 202);
    let seen = socket.until_run_end().await;
    assert_eq!(
        seen,
        app.log(&session).await,
        "the refused write never reached a viewer"
    );
    assert_valid_session(&seen, true);
}

/// Mounts a small tmpfs, or explains why the test cannot run here.
fn small_disk(at: &std::path::Path) -> bool {
    std::fs::create_dir_all(at).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(at)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIPPED full-disk test: cannot mount a tmpfs here (needs root)");
    }
    mounted
}

struct Unmount(std::path::PathBuf);
impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the disk under `dir` with a filler file until writing fails.
fn fill(dir: &std::path::Path) -> std::path::PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let block = vec![0u8; 16 * 1024];
    while file
        .write_all(&block)
        .and_then(|_| file.sync_data())
        .is_ok()
    {}
    let small = vec![0u8; 512];
    while file
        .write_all(&small)
        .and_then(|_| file.sync_data())
        .is_ok()
    {}
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_writes_clearly_and_recovers_when_space_returns() {
    // The disk filled here is one of the test's own, under its SQLite file; PostgreSQL's
    // data directory belongs to the server (its disk-full code, 53100, reads as `Full`).
    if crate::helpers::on_postgres() {
        eprintln!("SKIPPED full-disk test on PostgreSQL: the server's disk is not the test's");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let disk = dir.path().join("disk");
    if !small_disk(&disk) {
        return;
    }
    let _unmount = Unmount(disk.clone());
    let url = format!("sqlite://{}", disk.join("t.db").display());
    let flags = ["--write-retry-ms", "300"];
    let app = app_on(dir.path(), &url, &flags).await;
    let (session, socket) = app.open_session().await;
    let before = app.log(&session).await;
    let filler = fill(&disk);
    let path = format!("/api/sessions/{session}/messages");
    let mut refused = 0;
    // SQLite may still fit a few pages in free space; keep writing until it cannot.
    for attempt in 0..50 {
        let (status, body) = app
            .post(&path, json!({"text": format!("try {attempt}")}))
            .await;
        if status == 503 {
            assert_eq!(body["error"]["code"], "storage_unavailable");
            refused += 1;
            break;
        }
        assert!(status == 202 || status == 409, "{status}: {body}");
    }
    assert_eq!(refused, 1, "a full disk refuses writes");
    std::fs::remove_file(filler).unwrap();
    let log = app.log(&session).await;
    assert!(log.len() >= before.len());
    // Once space is back, any run cut short ends by itself and new work goes through.
    let mut socket_after = app.socket(&session, 0).await;
    let (status, detail) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(status, 200);
    if detail["status"] == "running" {
        socket_after
            .until(|e| e.body.is_run_end() && e.type_name() == "RUN_ERROR")
            .await;
    }
    let (status, body) = app.post(&path, json!({"text": "space is back"})).await;
    assert!(status == 202, "{status}: {body}");
    let log = app.log(&session).await;
    drop(socket);
    assert_valid_session(&log, false);
}
