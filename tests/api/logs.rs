//! `--log-format json`: every line the binary logs is a JSON object, and the lines about a
//! run carry its session and run ids as fields.

use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::child::Tandem;
use crate::helpers::{fresh_database, write_script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_lines_parse_and_carry_the_session_and_run() {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), json!([{"text": "Logged."}]));
    let tandem = Tandem::spawn_with(&url, &script, &["--log-format", "json"]);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    let run = app.say(&session, "hello").await;
    socket.until_run_end().await;
    assert!(tandem.logged("run ended", Duration::from_secs(10)).await);

    let lines = tandem.log();
    assert!(lines.len() >= 3, "{lines:?}");
    let parsed: Vec<Value> = lines
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    for line in &parsed {
        for field in ["timestamp", "level", "target"] {
            assert!(line[field].is_string(), "no {field}: {line}");
        }
    }
    let about_the_run: Vec<&Value> = parsed
        .iter()
        .filter(|line| line["message"] == "run started" || line["message"] == "run ended")
        .collect();
    assert_eq!(about_the_run.len(), 2, "{parsed:?}");
    for line in about_the_run {
        assert_eq!(line["session"], session.as_str(), "{line}");
        assert_eq!(line["run"], run.as_str(), "{line}");
    }
    let listening = parsed.iter().find(|l| {
        l["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Tandem is listening"))
    });
    assert!(listening.is_some(), "the listening line is JSON too");
}
