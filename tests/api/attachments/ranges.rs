//! Ranges of a download: one satisfiable range is 206; several (overlapping or not) get
//! the whole file, as documented; an `If-Range` that does not name the file's current
//! `ETag` (strongly) gets the whole file too, never a part of another version.

use serde_json::json;

use super::{download, text_of, upload};
use crate::helpers::spawn_app;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_ranges_or_a_stale_if_range_get_the_whole_file() {
    let app = spawn_app(json!([])).await;
    let session = app.create_session().await;
    let text = text_of(1000);
    let (_, stored) = upload(&app, &session, "a.txt", "text/plain", text.clone()).await;
    let id = stored["id"].as_str().unwrap();
    let etag = format!("\"{}\"", stored["sha256"].as_str().unwrap());
    let weak = format!("W/{etag}");
    let whole: [(&str, Vec<(&str, &str)>); 6] = [
        (
            "the same range thrice",
            vec![("range", "bytes=0-0,0-0,0-0")],
        ),
        ("two ranges", vec![("range", "bytes=0-1,5-6")]),
        (
            "two ranges, one past the end",
            vec![("range", "bytes=0-1,5000-6000")],
        ),
        (
            "another version's ETag",
            vec![("range", "bytes=0-3"), ("if-range", "\"0000\"")],
        ),
        (
            "a weak ETag",
            vec![("range", "bytes=0-3"), ("if-range", weak.as_str())],
        ),
        (
            "a date (no Last-Modified is served)",
            vec![
                ("range", "bytes=0-3"),
                ("if-range", "Wed, 21 Oct 2015 07:28:00 GMT"),
            ],
        ),
    ];
    for (what, headers) in whole {
        let response = download(&app, id, &headers).await;
        assert_eq!(response.status(), 200, "{what}");
        assert!(response.headers().get("content-range").is_none(), "{what}");
        assert_eq!(response.bytes().await.unwrap().as_ref(), text, "{what}");
    }
    let part = download(
        &app,
        id,
        &[("range", "bytes=0-3"), ("if-range", etag.as_str())],
    )
    .await;
    assert_eq!(part.status(), 206, "the current ETag");
    assert_eq!(part.headers()["content-range"], "bytes 0-3/1000");
    assert_eq!(part.bytes().await.unwrap().as_ref(), &text[..4]);
    let past = download(&app, id, &[("range", "bytes=5000-6000")]).await;
    assert_eq!(past.status(), 416, "one range past the end");
}
