//! kill -9 in the middle of an upload: what was committed before stays whole, the cut
//! upload never shows as an attachment, and its bytes do not stay: once the restarted
//! server sees it stopped moving, the purge takes them.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;

use crate::helpers::child::Tandem;
use crate::helpers::{count_in_database, fresh_database, write_script};

/// How long the restarted server lets an upload stand still before purging it.
const STALL: &[&str] = &["--attachment-stall-ms", "400"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_during_an_upload_loses_nothing_committed_and_leaves_no_bytes() {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), json!([]));
    let mut first = Tandem::spawn_with(&url, &script, STALL);
    let app = first.client();
    let session = app.create_session().await;
    let kept: Vec<u8> = (0..600_000u32).flat_map(|n| n.to_le_bytes()).collect();
    let upload = |body: reqwest::Body| {
        app.http
            .post(app.url(&format!(
                "/api/sessions/{session}/attachments?name=data.bin"
            )))
            .header("content-type", "application/octet-stream")
            .body(body)
            .send()
    };
    let stored = upload(kept.clone().into()).await.unwrap();
    assert_eq!(stored.status(), 201);
    let stored: serde_json::Value = stored.json().await.unwrap();

    // A second upload that sends 2 MiB, then nothing: the server holds its chunks.
    let (feed, body) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(4);
    let stream = tokio_stream_of(body);
    let cut = tokio::spawn(upload(reqwest::Body::wrap_stream(stream)));
    for _ in 0..8 {
        feed.send(Ok(vec![7u8; 256 * 1024])).await.unwrap();
    }
    let incomplete =
        "SELECT COUNT(*) FROM blob_chunks c JOIN blobs b ON b.id = c.blob_id WHERE NOT b.complete";
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while count_in_database(&url, incomplete).await < 4 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cut upload's chunks never landed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.kill();
    drop(feed);
    let _ = cut.await;

    let second = Tandem::spawn_with(&url, &script, STALL);
    let app = second.client();
    let id = stored["id"].as_str().unwrap();
    let again = app
        .http
        .get(app.url(&format!("/api/attachments/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(
        again.bytes().await.unwrap().as_ref(),
        kept.as_slice(),
        "committed bytes whole"
    );
    assert_eq!(
        count_in_database(&url, "SELECT COUNT(*) FROM attachments").await,
        1
    );
    // The purge says when it took something: what it took is then checked in the database.
    assert!(
        second
            .logged("purged attachments", Duration::from_secs(20))
            .await,
        "the cut upload was never purged"
    );
    let left = count_in_database(&url, "SELECT COUNT(*) FROM blobs WHERE NOT complete").await;
    assert_eq!((left, count_in_database(&url, incomplete).await), (0, 0));
    let chunks = count_in_database(&url, "SELECT COUNT(*) FROM blob_chunks").await;
    assert_eq!(chunks, 10, "the committed file's chunks, no others");
}

/// A stream of what the channel receives.
fn tokio_stream_of(
    mut receiver: tokio::sync::mpsc::Receiver<Result<Vec<u8>, std::io::Error>>,
) -> impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    futures_util::stream::poll_fn(move |context| receiver.poll_recv(context)).boxed()
}
