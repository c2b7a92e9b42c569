//! Files and images (the first part of issue 28: upload, storage and download): a file
//! streams into the database in chunks, its media type read from its bytes; it comes back
//! whole or by range with an `ETag`, never sniffed, shown in place only when a raster
//! image; the same bytes are stored once per user; limits and quotas refuse with their
//! codes; another user sees nothing; deleting the session frees it; what a browser would
//! run is served as a type it does not ([`served`]).

mod ranges;
mod served;

use serde_json::Value;

use crate::helpers::{spawn_app, spawn_app_with, spawn_app_with_users, TestApp};

/// A 1×1 PNG's signature and header (what the media sniffing reads).
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\x0f\0\0\x01\x01\0\x05\x18\xd8N\0\0\0\0IEND\xaeB`\x82";

async fn upload(
    app: &TestApp,
    session: &str,
    name: &str,
    media_type: &str,
    bytes: Vec<u8>,
) -> (u16, Value) {
    let url = app.url(&format!("/api/sessions/{session}/attachments?name={name}"));
    let request = app
        .http
        .post(url)
        .header("content-type", media_type)
        .body(bytes);
    crate::helpers::status_and_json(request).await
}

async fn download(app: &TestApp, id: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = app.http.get(app.url(&format!("/api/attachments/{id}")));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

/// `count` bytes of a text file, each line numbered.
fn text_of(count: usize) -> Vec<u8> {
    let mut text = Vec::with_capacity(count);
    let mut n = 0;
    while text.len() < count {
        text.extend_from_slice(format!("line {n}\n").as_bytes());
        n += 1;
    }
    text.truncate(count);
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_goes_in_and_comes_back_whole_by_range_and_by_etag() {
    let app = spawn_app(serde_json::json!([])).await;
    let session = app.create_session().await;
    let (status, stored) = upload(&app, &session, "dot.png", "image/png", PNG.to_vec()).await;
    assert_eq!(status, 201, "{stored}");
    assert_eq!(stored["mediaType"], "image/png");
    assert_eq!(stored["bytes"], PNG.len());
    assert_eq!(stored["name"], "dot.png");
    let id = stored["id"].as_str().unwrap();
    let sha = stored["sha256"].as_str().unwrap();
    assert_eq!(sha.len(), 64);

    let whole = download(&app, id, &[]).await;
    assert_eq!(whole.status(), 200);
    let header = |r: &reqwest::Response, name: &str| {
        r.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    assert_eq!(header(&whole, "content-type").as_deref(), Some("image/png"));
    assert_eq!(
        header(&whole, "x-content-type-options").as_deref(),
        Some("nosniff")
    );
    assert_eq!(header(&whole, "etag"), Some(format!("\"{sha}\"")));
    assert_eq!(header(&whole, "accept-ranges").as_deref(), Some("bytes"));
    assert!(header(&whole, "content-disposition")
        .unwrap()
        .starts_with("inline"));
    assert_eq!(whole.bytes().await.unwrap().as_ref(), PNG);

    let part = download(&app, id, &[("range", "bytes=1-3")]).await;
    assert_eq!(part.status(), 206);
    let total = PNG.len();
    assert_eq!(
        header(&part, "content-range"),
        Some(format!("bytes 1-3/{total}"))
    );
    assert_eq!(part.bytes().await.unwrap().as_ref(), b"PNG");
    let past = download(&app, id, &[("range", "bytes=9999-")]).await;
    assert_eq!(past.status(), 416);
    assert_eq!(
        header(&past, "content-range"),
        Some(format!("bytes */{total}"))
    );
    let etag = format!("\"{sha}\"");
    let cached = download(&app, id, &[("if-none-match", &etag)]).await;
    assert_eq!(cached.status(), 304);
    let metrics = app.metrics().await;
    assert!(
        metrics.contains("tandem_attachments_uploaded_total"),
        "counted"
    );
    assert!(
        metrics.contains(&format!("tandem_attachment_bytes_stored {}", PNG.len())),
        "what the database holds: {metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_file_streams_through_chunks_and_ranges_cross_them() {
    let app = spawn_app(serde_json::json!([])).await;
    let session = app.create_session().await;
    // Several of the store's 256 KiB chunks, and a bit.
    let text = text_of(3 * 256 * 1024 + 1234);
    let (status, stored) = upload(&app, &session, "notes.txt", "text/plain", text.clone()).await;
    assert_eq!(
        (status, &stored["mediaType"]),
        (201, &Value::from("text/plain"))
    );
    let id = stored["id"].as_str().unwrap();
    let whole = download(&app, id, &[]).await;
    assert!(whole
        .headers()
        .get("content-disposition")
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("attachment"));
    assert_eq!(
        whole.bytes().await.unwrap().as_ref(),
        &text[..],
        "byte for byte"
    );
    let (first, last) = (256 * 1024 - 10, 2 * 256 * 1024 + 10);
    let range = format!("bytes={first}-{last}");
    let part = download(&app, id, &[("range", &range)]).await;
    assert_eq!(part.status(), 206);
    assert_eq!(part.bytes().await.unwrap().as_ref(), &text[first..=last]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_that_disagree_with_their_declared_type_or_are_empty_are_refused() {
    let app = spawn_app(serde_json::json!([])).await;
    let session = app.create_session().await;
    for (media_type, bytes) in [
        ("image/jpeg", PNG.to_vec()),
        ("image/png", b"not an image".to_vec()),
        ("text/plain", vec![0xff, 0xfe, 0x00, 0x41]),
        ("text/plain", Vec::new()),
    ] {
        let (status, body) = upload(&app, &session, "f", media_type, bytes).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (422, Some("invalid_attachment")),
            "{media_type}: {body}"
        );
    }
    for name in ["", "a%2Fb", "..", "%E2%80%AE%07"] {
        let (status, _) = upload(&app, &session, name, "text/plain", b"hi".to_vec()).await;
        assert_eq!(status, 400, "name {name:?}");
    }
    // A name keeps what a person reads of it (`names.rs`): a tab is a space.
    let (status, stored) = upload(&app, &session, "x%09y", "text/plain", b"hi".to_vec()).await;
    assert_eq!((status, stored["name"].as_str()), (201, Some("x y")));
    let url = app.url(&format!("/api/sessions/{session}/attachments?name=f"));
    let untyped = app.http.post(url).body("hi").send().await.unwrap();
    assert_eq!(untyped.status(), 400, "no Content-Type");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_size_limit_and_the_quota_refuse_and_keep_nothing() {
    let app = spawn_app_with(
        serde_json::json!([]),
        &[
            "--max-attachment-bytes",
            "300000",
            "--attachment-quota-bytes",
            "500000",
        ],
    )
    .await;
    let session = app.create_session().await;
    let (status, body) = upload(&app, &session, "big.txt", "text/plain", text_of(300_001)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (413, Some("payload_too_large")),
        "{body}"
    );
    let (status, _) = upload(&app, &session, "a.txt", "text/plain", text_of(290_000)).await;
    assert_eq!(status, 201);
    let (status, body) = upload(&app, &session, "b.txt", "text/plain", b"x".repeat(250_000)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (413, Some("attachment_quota_exceeded")),
        "{body}"
    );
    assert_eq!(body["error"]["details"]["used"], 290_000);
    assert_eq!(body["error"]["details"]["quota"], 500_000);
    let (status, _) = upload(&app, &session, "c.txt", "text/plain", b"y".repeat(200_000)).await;
    assert_eq!(
        status, 201,
        "the refused upload left nothing counted against the quota"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_bytes_are_stored_once_and_another_user_sees_nothing() {
    let apps = spawn_app_with_users(serde_json::json!([]), &[], &["alice", "bob"]).await;
    let (alice, bob) = (&apps[0], &apps[1]);
    let session = alice.create_session().await;
    let (_, first) = upload(alice, &session, "one.png", "image/png", PNG.to_vec()).await;
    let (_, second) = upload(alice, &session, "two.png", "image/png", PNG.to_vec()).await;
    assert_ne!(first["id"], second["id"], "two attachments");
    assert_eq!(first["sha256"], second["sha256"]);
    for stored in [&first, &second] {
        let id = stored["id"].as_str().unwrap();
        assert_eq!(download(alice, id, &[]).await.status(), 200);
        let theirs = download(bob, id, &[]).await;
        assert_eq!(theirs.status(), 404, "another user's attachment is unknown");
    }
    let (status, _) = upload(bob, &session, "x.png", "image/png", PNG.to_vec()).await;
    assert_eq!(status, 404, "nor can they attach to the session");
    let unknown = download(alice, "att_nope", &[]).await;
    assert_eq!(unknown.status(), 404);

    assert_eq!(alice.delete_session(&session).await, 204);
    let gone = download(alice, first["id"].as_str().unwrap(), &[]).await;
    assert_eq!(
        gone.status(),
        404,
        "a deleted session takes its attachments"
    );
}

/// A `multipart/form-data` body with a field before the file.
fn form(filename: &str, media_type: &str, bytes: &[u8]) -> Vec<u8> {
    let mut body =
        b"--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nskipped\r\n".to_vec();
    body.extend_from_slice(
        format!(
            "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
             Content-Type: {media_type}\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(b"\r\n--XyZ--\r\n");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multipart_form_s_file_part_is_taken_with_its_name_and_type() {
    let app = spawn_app(serde_json::json!([])).await;
    let session = app.create_session().await;
    let post = |body: Vec<u8>| {
        let url = app.url(&format!("/api/sessions/{session}/attachments"));
        let request = app
            .http
            .post(url)
            .header("content-type", "multipart/form-data; boundary=XyZ")
            .body(body);
        crate::helpers::status_and_json(request)
    };
    let (status, stored) = post(form("dot.png", "image/png", PNG)).await;
    assert_eq!(status, 201, "{stored}");
    assert_eq!(
        (&stored["name"], &stored["mediaType"]),
        (&Value::from("dot.png"), &Value::from("image/png"))
    );
    let id = stored["id"].as_str().unwrap();
    assert_eq!(
        download(&app, id, &[])
            .await
            .bytes()
            .await
            .unwrap()
            .as_ref(),
        PNG
    );
    let (status, body) = post(form("dot.png", "image/gif", PNG)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_attachment"))
    );
    let (status, _) = post(
        b"--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nx\r\n--XyZ--\r\n".to_vec(),
    )
    .await;
    assert_eq!(status, 400, "no file part");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_at_the_same_moment_all_land_and_the_same_bytes_stay_one() {
    let app = spawn_app(serde_json::json!([])).await;
    let session = app.create_session().await;
    let text = text_of(600 * 1024);
    let uploads = (0..8).map(|n| {
        let bytes = if n % 2 == 0 {
            text.clone()
        } else {
            text_of(300 * 1024 + n)
        };
        upload(&app, &session, "same.txt", "text/plain", bytes)
    });
    let done = futures_util::future::join_all(uploads).await;
    let mut same = Vec::new();
    for (n, (status, body)) in done.into_iter().enumerate() {
        assert_eq!(status, 201, "upload {n}: {body}");
        if n % 2 == 0 {
            same.push(body["sha256"].clone());
        }
    }
    assert!(same.windows(2).all(|pair| pair[0] == pair[1]));
}

/// Uploads `count` different files of `each` bytes at once, spread over `apps` in turn;
/// how many were accepted (every other refused for the quota).
async fn upload_at_once(apps: &[&TestApp], session: &str, count: usize, each: usize) -> usize {
    let uploads = (0..count).map(|n| {
        // Different bytes each (the same bytes would be stored once).
        let mut bytes = text_of(each);
        bytes[..8].copy_from_slice(format!("{n:08}").as_bytes());
        upload(
            apps[n % apps.len()],
            session,
            "part.txt",
            "text/plain",
            bytes,
        )
    });
    let done = futures_util::future::join_all(uploads).await;
    let mut accepted = 0;
    for (status, body) in &done {
        match status {
            201 => accepted += 1,
            _ => assert_eq!(
                (*status, body["error"]["code"].as_str()),
                (413, Some("attachment_quota_exceeded")),
                "{body}"
            ),
        }
    }
    accepted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_uploads_never_take_more_than_the_quota() {
    const QUOTA: usize = 300_000;
    const EACH: usize = 90_000;
    let quota = QUOTA.to_string();
    let flags = ["--attachment-quota-bytes", quota.as_str()];
    let app = spawn_app_with(serde_json::json!([]), &flags).await;
    let session = app.create_session().await;
    let accepted = upload_at_once(&[&app], &session, 20, EACH).await;
    assert!(accepted >= 1, "the first to come fits");
    assert!(
        accepted * EACH <= QUOTA,
        "{accepted} uploads of {EACH} bytes were accepted: past the quota of {QUOTA}"
    );
    // What a refused upload counted while it ran is given back.
    let room = QUOTA - accepted * EACH;
    let (status, body) = upload(&app, &session, "last.txt", "text/plain", text_of(room)).await;
    assert_eq!(status, 201, "the room left is whole again: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_uploads_on_two_instances_never_take_more_than_the_quota_together() {
    const QUOTA: usize = 1_000_000;
    // Larger than a chunk: each upload is counted in several steps.
    const EACH: usize = 300_000;
    let quota = QUOTA.to_string();
    let flags = ["--attachment-quota-bytes", quota.as_str()];
    let (dir, url) = crate::helpers::fresh_postgres();
    let script = crate::helpers::write_script(dir.path(), serde_json::json!([]));
    let a = crate::helpers::start(crate::helpers::test_config(&url, &script, &flags)).await;
    let b = crate::helpers::start(crate::helpers::test_config(&url, &script, &flags)).await;
    let session = a.create_session().await;
    let accepted = upload_at_once(&[&a, &b], &session, 16, EACH).await;
    assert!(
        (1..=QUOTA / EACH).contains(&accepted),
        "{accepted} uploads of {EACH} bytes were accepted on two instances: quota {QUOTA}"
    );
}
