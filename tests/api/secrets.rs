//! Secrets stay secret: after runs that fail with a provider echoing the key, with a
//! user signed in by token and cookie, neither the API key, an extra header's value, the
//! user's token nor the cookie appears in the logs, the database files, the events every
//! viewer sees, an error body, or the process's command line.

use std::time::Duration;

use reqwest::header::{COOKIE, SET_COOKIE};
use serde_json::json;
use shared::EventBody;

use crate::helpers::child::Tandem;
use crate::helpers::provider::{ProviderServer, Reply};
use crate::helpers::{add_users, write_script};

const KEY: &str = "sk-live-SECRETKEY1234567890abcdef";
const HEADER_VALUE: &str = "hdr-SECRET-4567-opaque";

/// A provider that echoes both secrets back, in an HTTP error and mid-stream.
fn echoing_provider_replies() -> Vec<Reply> {
    let echo =
        format!("Incorrect API key provided: {KEY}. Header X-Org-Auth: {HEADER_VALUE} refused.");
    let http_error = json!({"error": {"message": echo, "type": "invalid_request_error"}});
    let stream_error = format!(
        "data: {}\n\n",
        json!({"id": "x", "object": "chat.completion.chunk", "choices": [],
               "error": {"code": "server_error", "message": echo}})
    );
    vec![
        Reply::Status {
            status: 401,
            headers: vec![("content-type".into(), "application/json".into())],
            body: http_error.to_string(),
        },
        Reply::Sse {
            body: stream_error,
            split_every: None,
            pace: Duration::ZERO,
            cut_after: None,
        },
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_leaks_to_logs_files_events_errors_or_the_process_list() {
    let (dir, url) = crate::helpers::fresh_database();
    let token = add_users(&url, &["alice"]).await.remove(0);
    let provider = ProviderServer::start(echoing_provider_replies()).await;
    let base = format!("{}/v1", provider.url);
    let script = write_script(dir.path(), json!([]));
    let flags = [
        "--auth",
        "token",
        "--engine",
        "openai",
        "--openai-base-url",
        &base,
    ];
    let extra_header = format!("X-Org-Auth: {HEADER_VALUE}");
    let env = [
        ("OPENAI_API_KEY", KEY),
        ("TANDEM_EXTRA_HEADERS", extra_header.as_str()),
    ];
    let mut tandem = Tandem::spawn_with_env(&url, &script, &flags, &env);
    let alice = tandem.client().as_user(&token);

    let login = reqwest::Client::new()
        .post(alice.url("/api/auth/login"))
        .json(&json!({ "token": token }))
        .send()
        .await
        .unwrap();
    let cookie_pair = login.headers()[SET_COOKIE]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let cookie = cookie_pair.split_once('=').unwrap().1.to_string();
    let me = reqwest::Client::new()
        .get(alice.url("/api/auth/me"))
        .header(COOKIE, &cookie_pair)
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), 200);

    let (session, mut socket) = alice.open_session().await;
    let mut seen = String::new();
    for (text, code) in [("first", "provider_auth"), ("second", "provider_error")] {
        alice.say(&session, text).await;
        let events = socket.until_run_end().await;
        match &events.last().unwrap().1.body {
            EventBody::RunError { code: got, message } => {
                assert_eq!(got.as_deref(), Some(code), "{message}");
                assert!(message.contains("[redacted]"), "{message}");
            }
            other => panic!("expected RUN_ERROR, got {other:?}"),
        }
        seen.push_str(
            &serde_json::to_string(&events.iter().map(|(_, e)| e).collect::<Vec<_>>()).unwrap(),
        );
    }
    let sent = provider.requests();
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(
        sent[0].header("x-org-auth"),
        Some(HEADER_VALUE),
        "the secrets were used"
    );

    let mut error_bodies = String::new();
    for bearer in [KEY, HEADER_VALUE, &format!("{token}x")] {
        let response = reqwest::Client::new()
            .get(alice.url("/api/sessions"))
            .header("authorization", format!("Bearer {bearer}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401);
        error_bodies.push_str(&response.text().await.unwrap());
    }
    let wrong_login = reqwest::Client::new()
        .post(alice.url("/api/auth/login"))
        .json(&json!({ "token": KEY }))
        .send()
        .await
        .unwrap();
    error_bodies.push_str(&wrong_login.text().await.unwrap());

    let cmdline = std::fs::read(format!("/proc/{}/cmdline", tandem.pid())).unwrap();
    let log = tandem.log().join("\n");
    tandem.kill();
    let files = dir.database_contents();
    if dir.sqlite_file().is_some() {
        assert!(
            files.iter().any(|(name, _)| name.ends_with("-wal")),
            "the WAL is checked too"
        );
    }

    let secrets = [KEY, HEADER_VALUE, token.as_str(), cookie.as_str()];
    let mut places: Vec<(String, Vec<u8>)> = vec![
        ("the log".into(), log.into_bytes()),
        ("the events".into(), seen.into_bytes()),
        ("error bodies".into(), error_bodies.into_bytes()),
        ("the command line".into(), cmdline),
    ];
    places.extend(files);
    for (place, bytes) in &places {
        for secret in secrets {
            let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
            assert!(!found, "a secret ({}…) leaked into {place}", &secret[..6]);
        }
    }
}
