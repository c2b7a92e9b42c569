//! Messages that carry files and images (issue 28, into the conversation): a message names
//! attachments of its conversation, the log records them with it (`CUSTOM
//! tandem.attachments`), each provider gets them in its own wire format (images scaled to
//! its limits, PDFs as documents, text inline with its name, a note for a model that takes
//! no images), the demo model describes them, branches redo them, share links show or
//! hide them, and whatever a message names that is not the caller's is a 404.

use serde_json::{json, Value};
use shared::{Event, EventBody};

use crate::helpers::provider::{self, ProviderServer, Reply};
use crate::helpers::{spawn_app_with, spawn_app_with_users, TestApp};

const PICTURE: &[u8] = include_bytes!("../fixtures/attachments/picture.png");
const PDF: &[u8] = include_bytes!("../fixtures/attachments/three_pages.pdf");
const CSV: &[u8] = b"name,score\nAda,42\n";

/// Uploads `bytes` to `session`; the attachment's id.
async fn upload(
    app: &TestApp,
    session: &str,
    name: &str,
    media_type: &str,
    bytes: &[u8],
) -> String {
    let url = app.url(&format!("/api/sessions/{session}/attachments?name={name}"));
    let request = app
        .http
        .post(url)
        .header("content-type", media_type)
        .body(bytes.to_vec());
    let (status, stored) = crate::helpers::status_and_json(request).await;
    assert_eq!(status, 201, "{stored}");
    stored["id"].as_str().unwrap().to_string()
}

/// The three files every story here attaches: a picture, a PDF, a CSV.
async fn three_files(app: &TestApp, session: &str) -> Vec<String> {
    vec![
        upload(app, session, "picture.png", "image/png", PICTURE).await,
        upload(app, session, "report.pdf", "application/pdf", PDF).await,
        upload(app, session, "scores.csv", "text/csv", CSV).await,
    ]
}

async fn send(app: &TestApp, session: &str, text: &str, attachments: &[String]) -> (u16, Value) {
    let body = json!({"text": text, "attachments": attachments});
    app.post(&format!("/api/sessions/{session}/messages"), body)
        .await
}

/// The `tandem.attachments` values of a log.
fn recorded(log: &[(u64, Event)]) -> Vec<Value> {
    log.iter()
        .filter_map(|(_, event)| match &event.body {
            EventBody::Custom { name, value } if name == "tandem.attachments" => {
                Some(value.clone())
            }
            _ => None,
        })
        .collect()
}

fn answer(events: &[(u64, Event)]) -> String {
    let mut text = String::new();
    let mut user = Vec::new();
    for (_, event) in events {
        match &event.body {
            EventBody::TextMessageStart {
                message_id,
                role: Some(shared::TextRole::User),
                ..
            } => user.push(message_id.clone()),
            EventBody::TextMessageContent { message_id, delta } if !user.contains(message_id) => {
                text.push_str(delta)
            }
            _ => {}
        }
    }
    text
}

async fn demo_app(extra: &[&str]) -> TestApp {
    spawn_app_with(json!([]), &[&["--engine", "demo"], extra].concat()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_carries_its_attachments_into_the_log_and_the_demo_model_describes_them() {
    let app = demo_app(&[]).await;
    let (session, mut socket) = app.open_session().await;
    let ids = three_files(&app, &session).await;
    let (status, body) = send(&app, &session, "What are these?", &ids).await;
    assert_eq!(status, 202, "{body}");
    let events = socket.until_run_end().await;
    let said = answer(&events);
    assert!(
        said.contains("`picture.png`: an image, 640×480 PNG"),
        "{said}"
    );
    assert!(said.contains("`report.pdf`: a PDF, 3 pages"), "{said}");
    assert!(
        said.contains("`scores.csv`: a text file, 2 lines"),
        "{said}"
    );

    // Recorded once, right after the message's end, with what the page shows of each.
    let log = app.log(&session).await;
    let at = log
        .iter()
        .position(|(_, e)| matches!(&e.body, EventBody::Custom { name, .. } if name == "tandem.attachments"))
        .unwrap();
    assert!(matches!(
        log[at - 1].1.body,
        EventBody::TextMessageEnd { .. }
    ));
    let values = recorded(&log);
    assert_eq!(values.len(), 1);
    let listed: Vec<&str> = values[0]["attachments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["picture.png", "report.pdf", "scores.csv"]);
    assert_eq!(values[0]["attachments"][0]["mediaType"], "image/png");
    assert_eq!(values[0]["attachments"][1]["bytes"], PDF.len());
    crate::helpers::assert_valid_session(&log, true);

    // Attachments count in the usage the demo reports (an image alone is ~1,600 tokens).
    let usage = events.iter().find_map(|(_, e)| match &e.body {
        EventBody::Custom { name, value } if name == "tandem.usage" => Some(value.clone()),
        _ => None,
    });
    assert!(usage.unwrap()["inputTokens"].as_u64().unwrap() > 1_600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_message_names_is_checked_before_anything_is_written() {
    let apps = spawn_app_with_users(json!([]), &["--engine", "demo"], &["ada", "bob"]).await;
    let (ada, bob) = (&apps[0], &apps[1]);
    let session = ada.create_session().await;
    let other = ada.create_session().await;
    let ids = three_files(ada, &session).await;
    let elsewhere = upload(ada, &other, "other.csv", "text/csv", CSV).await;
    let bobs_session = bob.create_session().await;
    let bobs = upload(bob, &bobs_session, "bob.csv", "text/csv", b"bob\n").await;

    let eleven: Vec<String> = (0..11).map(|n| format!("att_{n}")).collect();
    let (status, body) = send(ada, &session, "too many", &eleven).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_message")),
        "{body}"
    );
    let twice = vec![ids[0].clone(), ids[0].clone()];
    let (status, body) = send(ada, &session, "twice", &twice).await;
    assert_eq!(status, 422, "{body}");
    for foreign in [&bobs, &elsewhere, &"att_nothing".to_string()] {
        let (status, body) = send(ada, &session, "not mine", std::slice::from_ref(foreign)).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("not_found")),
            "{body}"
        );
    }
    // The socket answers the same refusal with an error frame and stays open.
    let mut socket = ada.socket(&session, 0).await;
    socket.backlog().await;
    socket
        .send(json!({"kind": "user_message", "text": "x", "attachments": [bobs]}))
        .await;
    match socket.frame().await {
        shared::envelope::ServerFrame::Error { code, .. } => assert_eq!(code, "not_found"),
        other => panic!("expected an error frame, got {other:?}"),
    }
    // Nothing of those reached the log; Bob cannot read Ada's files either.
    assert!(ada.log(&session).await.is_empty());
    let (status, _) = bob.get(&format!("/api/attachments/{}", ids[0])).await;
    assert_eq!(status, 404);
    let (status, body) = send(ada, &session, "fine", &ids).await;
    assert_eq!(status, 202, "{body}");
    socket.until_run_end().await;
}

/// The app on the `openai` engine, its stand-in answering with text.
async fn openai_app(extra: &[&str]) -> (TestApp, ProviderServer) {
    provider::openai_app(vec![Reply::sse("openai/text.sse")], extra).await
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn csv_part(id: &str) -> String {
    format!(
        "<attachment id=\"{id}\" name=\"scores.csv\" type=\"text/csv\">\nname,score\nAda,42\n\n</attachment>"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_gets_an_image_url_a_file_part_and_the_text_inline() {
    let (app, server) = openai_app(&[]).await;
    let (session, mut socket) = app.open_session().await;
    let ids = three_files(&app, &session).await;
    send(&app, &session, "What are these?", &ids).await;
    socket.until_run_end().await;
    let sent = &server.requests()[0].body["messages"];
    let user = sent.as_array().unwrap().last().unwrap();
    assert_eq!(
        user,
        &json!({"role": "user", "content": [
            {"type": "text", "text": "What are these?"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", base64(PICTURE))}},
            {"type": "file", "file": {"filename": "report.pdf", "file_data": format!("data:application/pdf;base64,{}", base64(PDF))}},
            {"type": "text", "text": csv_part(&ids[2])},
        ]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_takes_no_images_gets_a_note_instead() {
    let (app, server) = openai_app(&["--models-without-images", "gpt-4.1-mini"]).await;
    let (status, models) = app.get("/api/models").await;
    assert_eq!(
        (status, &models["withoutImages"]),
        (200, &json!(["gpt-4.1-mini"]))
    );
    let (session, mut socket) = app.open_session().await;
    let ids = three_files(&app, &session).await;
    send(&app, &session, "And now?", &ids[..2]).await;
    socket.until_run_end().await;
    let sent = &server.requests()[0].body["messages"];
    assert_eq!(
        sent.as_array().unwrap().last().unwrap()["content"],
        json!([
            {"type": "text", "text": "And now?"},
            {"type": "text", "text": "[attached: the image `picture.png`, 640×480 PNG; this model does not take images, so it was not sent]"},
            {"type": "text", "text": "[attached: the PDF `report.pdf`, 3 pages; this model does not take documents, so it was not sent]"},
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_gets_image_and_document_blocks_ahead_of_the_text() {
    let server = ProviderServer::start(vec![Reply::sse("anthropic/text.sse")]).await;
    let key = crate::helpers::key_file("sk-ant-test");
    let flags = [
        "--engine",
        "anthropic",
        "--anthropic-base-url",
        &server.url,
        "--anthropic-api-key-file",
        &key,
    ];
    let app = spawn_app_with(json!([]), &flags).await;
    let (session, mut socket) = app.open_session().await;
    let ids = three_files(&app, &session).await;
    send(&app, &session, "What are these?", &ids).await;
    socket.until_run_end().await;
    let sent = &server.requests()[0].body["messages"];
    assert_eq!(
        sent,
        &json!([{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64(PICTURE)}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": base64(PDF)}, "title": "report.pdf"},
            {"type": "text", "text": csv_part(&ids[2])},
            {"type": "text", "text": "What are these?"},
        ]}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regenerating_keeps_the_attachments_and_an_edit_may_change_them() {
    let app = demo_app(&[]).await;
    let (session, mut socket) = app.open_session().await;
    let ids = three_files(&app, &session).await;
    send(&app, &session, "What are these?", &ids[..1]).await;
    let first = socket.until_run_end().await;
    let run = first.iter().find_map(|(_, e)| match &e.body {
        EventBody::RunStarted { run_id, .. } => Some(run_id.clone()),
        _ => None,
    });
    let (status, branch) = app
        .post(
            &format!("/api/sessions/{session}/runs/{}/regenerate", run.unwrap()),
            json!({}),
        )
        .await;
    assert_eq!(status, 201, "{branch}");
    let branch_id = branch["id"].as_str().unwrap();
    let mut branch_socket = app.socket(branch_id, 0).await;
    let again = branch_socket.until_run_end().await;
    assert!(
        answer(&again).contains("an image, 640×480 PNG"),
        "{}",
        answer(&again)
    );
    let values = recorded(&app.log(branch_id).await);
    assert_eq!(values.len(), 1, "{values:?}");
    assert_eq!(values[0]["attachments"][0]["id"], ids[0].as_str());

    // An edit names other files of the conversation, or none.
    let message = first.iter().find_map(|(_, e)| match &e.body {
        EventBody::TextMessageStart {
            message_id,
            role: Some(shared::TextRole::User),
            ..
        } => Some(message_id.clone()),
        _ => None,
    });
    let edit = format!("/api/sessions/{session}/messages/{}/edit", message.unwrap());
    let (status, edited) = app
        .post(&edit, json!({"text": "And this?", "attachments": [ids[2]]}))
        .await;
    assert_eq!(status, 201, "{edited}");
    let edited_id = edited["id"].as_str().unwrap();
    let mut edited_socket = app.socket(edited_id, 0).await;
    let said = answer(&edited_socket.until_run_end().await);
    assert!(
        said.contains("`scores.csv`: a text file") && !said.contains("picture"),
        "{said}"
    );
    let (status, plain) = app
        .post(
            &edit,
            json!({"text": "Nothing attached", "attachments": []}),
        )
        .await;
    assert_eq!(status, 201, "{plain}");
    let plain_id = plain["id"].as_str().unwrap();
    app.socket(plain_id, 0).await.until_run_end().await;
    assert!(recorded(&app.log(plain_id).await).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_link_shows_attachments_unless_it_hides_them() {
    let app = demo_app(&[]).await;
    let (session, mut socket) = app.open_session().await;
    let ids = three_files(&app, &session).await;
    send(&app, &session, "Look", &ids[..1]).await;
    socket.until_run_end().await;
    for (shown, body) in [(true, json!({})), (false, json!({"attachments": false}))] {
        let (status, link) = app
            .post(&format!("/api/sessions/{session}/shares"), body)
            .await;
        assert_eq!(
            (status, &link["attachments"]),
            (201, &json!(shown)),
            "{link}"
        );
        let token = link["token"].as_str().unwrap();
        let (_, opened) = app.anonymous().get(&format!("/api/shared/{token}")).await;
        assert_eq!(opened["attachments"], shown);
        let download = format!("/api/shared/{token}/attachments/{}", ids[0]);
        let response = reqwest::get(app.url(&download)).await.unwrap();
        match shown {
            true => {
                assert_eq!(response.status(), 200);
                assert_eq!(response.bytes().await.unwrap().as_ref(), PICTURE);
            }
            false => assert_eq!(response.status(), 404),
        }
        let mut viewer = app.try_shared_socket(token, 0).await.unwrap();
        let (events, _) = viewer.backlog().await;
        assert_eq!(recorded(&events).len(), usize::from(shown));
    }
}

/// Posts an AG-UI input and reads its whole stream; the status, the thread's session (if
/// a run started) and the body.
async fn agui(app: &TestApp, input: &Value) -> (u16, Option<String>, String) {
    let response = app
        .http
        .post(app.url("/api/agui"))
        .header("accept", "text/event-stream")
        .json(input)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("tandem-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    (status, session, response.text().await.unwrap())
}

fn agui_input(parts: Value) -> Value {
    json!({"threadId": uuid::Uuid::new_v4().to_string(), "runId": uuid::Uuid::new_v4().to_string(),
           "state": {}, "tools": [], "context": [], "forwardedProps": {},
           "messages": [{"id": "m1", "role": "user", "content": parts}]})
}

/// Serves `bytes` as `image/png` to every GET on a local port; its origin.
async fn file_server(bytes: &'static [u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut head = vec![0; 4096];
            let _ = socket.read(&mut head).await;
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: image/png\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                bytes.len()
            );
            let _ = socket.write_all(reply.as_bytes()).await;
            let _ = socket.write_all(bytes).await;
        }
    });
    origin
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agui_client_s_binary_parts_are_stored_and_the_log_names_them_by_id() {
    let origin = file_server(PICTURE).await;
    let app = demo_app(&["--attachment-url-origins", &origin]).await;
    let parts = json!([
        {"type": "text", "text": "What are these?"},
        {"type": "binary", "mimeType": "image/png", "data": base64(PICTURE), "filename": "inline.png"},
        {"type": "binary", "mimeType": "image/png", "url": format!("{origin}/files/fetched.png")},
        {"type": "binary", "mimeType": "application/pdf", "data": base64(PDF), "filename": "report.pdf"},
    ]);
    let (status, session, body) = agui(&app, &agui_input(parts)).await;
    assert_eq!(status, 200, "{body}");
    let log = app.log(&session.unwrap()).await;
    let said = answer(&log);
    assert!(
        said.contains("`inline.png`: an image, 640×480 PNG"),
        "{said}"
    );
    assert!(
        said.contains("`fetched.png`: an image, 640×480 PNG"),
        "{said}"
    );
    assert!(said.contains("`report.pdf`: a PDF, 3 pages"), "{said}");
    let started = serde_json::to_value(&log[0].1).unwrap();
    let values = recorded(&log);
    let parts = &started["input"]["messages"][0]["content"];
    assert_eq!(parts[0], json!({"type": "text", "text": "What are these?"}));
    let ids: Vec<&str> = values[0]["attachments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    for (n, id) in ids.iter().enumerate() {
        assert_eq!(parts[n + 1]["id"], *id, "{parts}");
        assert!(parts[n + 1].get("data").is_none() && parts[n + 1].get("url").is_none());
    }
    assert_eq!(values[0]["messageId"], "m1");
    assert!(
        !serde_json::to_string(&log).unwrap().contains(&base64(PDF)),
        "no bytes in the log"
    );
    let fetched = app
        .http
        .get(app.url(&format!("/api/attachments/{}", ids[1])))
        .send()
        .await
        .unwrap();
    assert_eq!(fetched.bytes().await.unwrap().as_ref(), PICTURE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_from_an_unlisted_origin_is_never_fetched() {
    let origin = file_server(PICTURE).await;
    let app = demo_app(&[]).await;
    let parts =
        json!([{"type": "binary", "mimeType": "image/png", "url": format!("{origin}/cat.png")}]);
    let (status, session, body) = agui(&app, &agui_input(parts)).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("--attachment-url-origins"), "{body}");
    assert!(session.is_none());
    let (_, list) = app.get("/api/sessions").await;
    assert_eq!(
        list["sessions"],
        json!([]),
        "a refused input leaves nothing behind"
    );
    for bad in [
        json!([{"type": "binary", "mimeType": "image/png"}]),
        json!([{"type": "binary", "data": "AAAA"}]),
        json!([{"type": "binary", "mimeType": "image/png", "data": "not base64!"}]),
        json!([{"type": "binary", "mimeType": "image/png", "id": "att_missing"}]),
        json!([{"type": "image", "source": {"type": "url", "value": format!("{origin}/cat.png")}}]),
        json!([{"type": "document", "source": {"type": "file", "value": "file-abc", "provider": "openai"}}]),
        json!([{"type": "image", "source": {"type": "data", "value": base64(PDF), "mimeType": "image/png"}}]),
        json!([{"type": "image", "source": {"type": "data", "value": "AAAA"}}]),
        json!([{"type": "image"}]),
    ] {
        let (status, _, body) = agui(&app, &agui_input(bad.clone())).await;
        assert!(matches!(status, 404 | 422), "{bad}: {status} {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exports_name_the_files_and_the_zip_holds_them() {
    use std::io::Read;
    let app = demo_app(&[]).await;
    let (session, mut socket) = app.open_session().await;
    let ids = three_files(&app, &session).await;
    send(&app, &session, "Keep these", &ids).await;
    socket.until_run_end().await;
    let export = |format: &str| {
        app.http
            .get(app.url(&format!("/api/sessions/{session}/export?format={format}")))
            .send()
    };
    let markdown = export("markdown").await.unwrap().text().await.unwrap();
    assert!(
        markdown.contains(&format!(
            "- ![picture.png](/api/attachments/{}) (image/png, 18 KB)",
            ids[0]
        )),
        "{markdown}"
    );
    assert!(
        markdown.contains(&format!("- [report.pdf](/api/attachments/{})", ids[1])),
        "{markdown}"
    );
    let json: Value = export("json").await.unwrap().json().await.unwrap();
    assert!(json.to_string().contains(&ids[2]));

    let zipped = export("zip").await.unwrap();
    assert_eq!(zipped.headers()["content-type"], "application/zip");
    let bytes = zipped.bytes().await.unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    let mut names: Vec<String> = archive
        .file_names()
        .map(|name| name.unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "files/1-picture.png",
            "files/2-report.pdf",
            "files/3-scores.csv",
            "keep-these.json",
            "keep-these.md"
        ]
    );
    let mut read = |name: &str| {
        let mut out = Vec::new();
        archive
            .by_name(name)
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        out
    };
    assert_eq!(read("files/1-picture.png"), PICTURE);
    assert_eq!(read("files/2-report.pdf"), PDF);
    let inside = String::from_utf8(read("keep-these.md")).unwrap();
    assert!(
        inside.contains("- ![picture.png](files/1-picture.png)"),
        "{inside}"
    );
}
