//! Titles and file names people read: control characters and the invisible
//! bidirectional controls (`U+202E` before `gnp.exe` makes it read as "exe.png") never
//! reach a reader, whichever way a title or a name comes in (a new session's title, a
//! rename, a first message, an upload's name) or goes out (the list, a download's
//! `Content-Disposition`, the entries of a zip export).

use serde_json::{json, Value};

use crate::helpers::spawn_app;

const RIGHT_TO_LEFT_OVERRIDE: char = '\u{202E}';

fn title_of(summary: &Value) -> String {
    summary["title"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn titles_and_file_names_lose_control_and_bidi_characters() {
    let app = spawn_app(json!([{"text": "Noted."}])).await;
    let (status, created) = app
        .post("/api/sessions", json!({"title": "\u{202E}gnp.exe"}))
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(title_of(&created), "gnp.exe");
    let session = created["id"].as_str().unwrap().to_string();
    let (status, renamed) = app
        .patch(
            &format!("/api/sessions/{session}"),
            json!({"title": "Trip\u{0007}\u{0000}\tplan\u{2066}\u{202E}"}),
        )
        .await;
    assert_eq!(status, 200, "{renamed}");
    assert_eq!(title_of(&renamed), "Trip plan");

    // A first message names a session that has no title.
    let (_, fresh) = app.post("/api/sessions", json!({})).await;
    let fresh = fresh["id"].as_str().unwrap().to_string();
    let url = app.url(&format!(
        "/api/sessions/{fresh}/attachments?name=%E2%80%AEgnp.exe"
    ));
    let request = app
        .http
        .post(url)
        .header("content-type", "text/plain")
        .body("hi");
    let (status, stored) = crate::helpers::status_and_json(request).await;
    assert_eq!(
        (status, stored["name"].as_str()),
        (201, Some("gnp.exe")),
        "{stored}"
    );
    let id = stored["id"].as_str().unwrap();
    let mut socket = app.socket(&fresh, 0).await;
    socket.backlog().await;
    let text = "\u{202E}Hello\u{0000} there\u{0085}friend";
    let (status, body) = app
        .post(
            &format!("/api/sessions/{fresh}/messages"),
            json!({"text": text, "attachments": [id]}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    socket.until_run_end().await;
    let (_, read) = app.get(&format!("/api/sessions/{fresh}")).await;
    assert_eq!(read["title"], "Hello there friend", "{read}");

    // What goes out.
    let download = app
        .http
        .get(app.url(&format!("/api/attachments/{id}")))
        .send()
        .await
        .unwrap();
    let disposition = download.headers()["content-disposition"].to_str().unwrap();
    assert!(!disposition.contains("%E2%80%AE"), "{disposition}");
    let zipped = app
        .http
        .get(app.url(&format!("/api/sessions/{fresh}/export?format=zip")))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let archive = zip::ZipArchive::new(std::io::Cursor::new(zipped.to_vec())).unwrap();
    let names: Vec<String> = archive
        .file_names()
        .map(|name| name.unwrap().to_string())
        .collect();
    assert!(names.contains(&"files/1-gnp.exe".to_string()), "{names:?}");
    for name in names {
        assert!(!name.contains(RIGHT_TO_LEFT_OVERRIDE), "{name:?}");
    }
}
