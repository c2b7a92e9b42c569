//! What an uploaded file is served as: a type a browser would run or render as a page
//! (script, HTML, SVG, XML, CSS) comes back as `text/plain` (its text) or
//! `application/octet-stream`, never sniffed and always a download, to its owner and
//! through a share link alike; a raster image stays itself and is shown in place.

use serde_json::json;

use super::{download, upload, PNG};
use crate::helpers::spawn_app;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_a_browser_would_run_are_served_as_types_it_does_not() {
    let app = spawn_app(json!([])).await;
    let session = app.create_session().await;
    let (_, share) = app
        .post(&format!("/api/sessions/{session}/shares"), json!({}))
        .await;
    let token = share["token"].as_str().unwrap().to_string();
    let runnable = [
        ("alert.js", "text/javascript", "alert(document.domain)"),
        ("module.mjs", "application/javascript", "export default 1"),
        ("page.html", "text/html", "<script>alert(1)</script>"),
        ("image.svg", "image/svg+xml", "<svg onload='alert(1)'/>"),
        ("feed.xml", "text/xml", "<?xml version='1.0'?><x/>"),
        (
            "style.css",
            "text/css",
            "body { background: url(https://example.com) }",
        ),
        ("data.json", "application/json", "{\"a\": 1}"),
    ];
    for (name, declared, text) in runnable {
        let (status, stored) = upload(&app, &session, name, declared, text.into()).await;
        assert_eq!(status, 201, "{name}: {stored}");
        assert_eq!(
            stored["mediaType"], declared,
            "{name}: the type it is, as uploaded"
        );
        let id = stored["id"].as_str().unwrap();
        let shared_path = format!("/api/shared/{token}/attachments/{id}");
        let through_link = app.http.get(app.url(&shared_path)).send().await.unwrap();
        for response in [download(&app, id, &[]).await, through_link] {
            assert_eq!(response.status(), 200, "{name}");
            let headers = response.headers();
            assert_eq!(
                headers["content-type"], "text/plain; charset=utf-8",
                "{name}: served as text a browser shows and never runs"
            );
            assert_eq!(headers["x-content-type-options"], "nosniff", "{name}");
            let disposition = headers["content-disposition"].to_str().unwrap();
            assert!(
                disposition.starts_with("attachment"),
                "{name}: {disposition}"
            );
            assert_eq!(
                response.text().await.unwrap(),
                text,
                "{name}: the bytes as sent"
            );
        }
    }
    let (_, binary) = upload(
        &app,
        &session,
        "tool.wasm",
        "application/wasm",
        b"\0asm\x01\0\0\0".to_vec(),
    )
    .await;
    let response = download(&app, binary["id"].as_str().unwrap(), &[]).await;
    assert_eq!(
        response.headers()["content-type"],
        "application/octet-stream",
        "{binary}"
    );

    let (_, image) = upload(&app, &session, "dot.png", "image/png", PNG.to_vec()).await;
    let response = download(&app, image["id"].as_str().unwrap(), &[]).await;
    assert_eq!(response.headers()["content-type"], "image/png");
    let disposition = response.headers()["content-disposition"].to_str().unwrap();
    assert!(disposition.starts_with("inline"), "{disposition}");
}
