//! Keeping sessions in order: rename, search by title and content, export.

use serde_json::{json, Value};

use crate::helpers::{spawn_app, spawn_app_with_users, TestApp};

/// Titles of the sessions a search finds, in list order.
async fn found(app: &TestApp, query: &str) -> Vec<String> {
    let url = app.url("/api/sessions");
    let response = app
        .http
        .get(url)
        .query(&[("q", query)])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    body["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap().to_string())
        .collect()
}

async fn patch(app: &TestApp, session: &str, body: Value) -> (u16, Value) {
    app.patch(&format!("/api/sessions/{session}"), body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_session_keeps_its_name_through_later_messages() {
    let app = spawn_app(json!([{"text": "Sure."}])).await;
    let (session, mut socket) = app.open_session().await;
    let (status, renamed) = patch(&app, &session, json!({"title": "  Budget 2027  "})).await;
    assert_eq!(
        (status, renamed["title"].as_str()),
        (200, Some("Budget 2027")),
        "{renamed}"
    );
    app.say(&session, "Plan the budget").await;
    socket.until_run_end().await;
    let (_, detail) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(
        detail["title"], "Budget 2027",
        "the first message no longer names it"
    );

    for (bad, code) in [
        (json!({"title": "   "}), 400),
        (json!({"title": "x".repeat(201)}), 400),
        (json!({"title": "ok", "pinned": true}), 400),
        (json!({}), 400),
    ] {
        let (status, body) = patch(&app, &session, bad.clone()).await;
        assert_eq!(status, code, "{bad}: {body}");
        assert_eq!(body["error"]["code"], "bad_request", "{bad}");
    }
    let unknown = uuid::Uuid::now_v7();
    assert_eq!(
        patch(&app, &unknown.to_string(), json!({"title": "x"}))
            .await
            .0,
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_finds_titles_and_streamed_message_text_of_ones_own_sessions() {
    // The answer streams word by word, so "is LOVELY" spans several deltas.
    let turns = json!([{"text": "Paris is lovely in spring"}]);
    let users = spawn_app_with_users(turns, &[], &["ada", "bob"]).await;
    let (ada, bob) = (&users[0], &users[1]);
    let (paris, mut socket) = ada.open_session().await;
    ada.say(&paris, "Where should I go?").await;
    socket.until_run_end().await;
    let (_, other) = ada
        .post("/api/sessions", json!({"title": "Tax 100% done"}))
        .await;
    assert!(other["id"].is_string());
    let (_, _bobs) = bob
        .post("/api/sessions", json!({"title": "Paris with bob"}))
        .await;

    assert_eq!(found(ada, "is LOVELY").await, ["Where should I go?"]);
    assert_eq!(
        found(ada, "where should").await,
        ["Where should I go?"],
        "the person's own words"
    );
    assert_eq!(found(ada, "100%").await, ["Tax 100% done"], "% is literal");
    assert!(found(ada, "1_0").await.is_empty(), "_ is literal");
    assert_eq!(
        found(ada, "paris").await,
        ["Where should I go?"],
        "not bob's Paris"
    );
    assert_eq!(found(bob, "paris").await, ["Paris with bob"]);
    assert_eq!(
        found(ada, "   ").await.len(),
        2,
        "a blank search lists everything"
    );
    let long = "x".repeat(201);
    let response = ada
        .http
        .get(ada.url("/api/sessions"))
        .query(&[("q", &long)])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_exports_as_markdown_and_as_its_agui_events() {
    let turns = json!([
        {"reasoning": "Use the calculator.",
         "toolCalls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]},
        {"text": "It is **42**."},
    ]);
    let app = spawn_app(turns).await;
    let (_, created) = app
        .post("/api/sessions", json!({"title": "Sums, for Ada!"}))
        .await;
    let session = created["id"].as_str().unwrap().to_string();
    let mut socket = app.socket(&session, 0).await;
    socket.backlog().await;
    app.say(&session, "What is 6*7?").await;
    socket.until_run_end().await;

    let export = |format: &'static str| {
        let url = app.url(&format!("/api/sessions/{session}/export"));
        let request = app.http.get(url).query(&[("format", format)]);
        async move { request.send().await.unwrap() }
    };
    let markdown = export("markdown").await;
    assert_eq!(markdown.status(), 200);
    let header = |response: &reqwest::Response, name: &str| {
        response.headers()[name].to_str().unwrap().to_string()
    };
    assert_eq!(
        header(&markdown, "content-type"),
        "text/markdown; charset=utf-8"
    );
    assert_eq!(
        header(&markdown, "content-disposition"),
        "attachment; filename=\"sums-for-ada.md\""
    );
    let text = markdown.text().await.unwrap();
    assert!(
        text.starts_with("# Sums, for Ada!\n\n## You\n\nWhat is 6*7?\n\n## Agent\n\n"),
        "{text}"
    );
    assert!(text.contains("> Reasoning: Use the calculator."), "{text}");
    assert!(text.contains("Called `calculator` with:"), "{text}");
    assert!(text.contains("It is **42**."), "{text}");

    let json = export("json").await;
    assert_eq!(
        header(&json, "content-disposition"),
        "attachment; filename=\"sums-for-ada.json\""
    );
    let body: Value = json.json().await.unwrap();
    let log = app.log(&session).await;
    assert_eq!(body["session"]["id"], session);
    let events = body["events"].as_array().unwrap();
    assert_eq!(events.len(), log.len(), "every event, in order");
    assert_eq!(events[0]["type"], "RUN_STARTED");
    assert_eq!(events.last().unwrap()["type"], "RUN_FINISHED");

    let bad = export("pdf").await;
    assert_eq!(bad.status(), 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_preview_is_its_transcript_as_escaped_html() {
    let turns = json!([
        {"reasoning": "Use the calculator.",
         "toolCalls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]},
        {"text": "It is **42**. <b>not bold</b>"},
    ]);
    let app = spawn_app(turns).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "What is <i>6*7</i>?").await;
    socket.until_run_end().await;

    let url = app.url(&format!("/api/sessions/{session}/preview"));
    let response = app.http.get(url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "text/html; charset=utf-8"
    );
    assert_eq!(response.headers()["cache-control"], "no-store");
    let html = response.text().await.unwrap();
    let question = html.find("What is &lt;i&gt;6*7&lt;/i&gt;?").expect(&html);
    let reasoning = html.find("Use the calculator.").expect(&html);
    let call = html.find(r#"<span class="tool-name">calculator</span>"#);
    let answer = html.find("It is <strong>42</strong>.").expect(&html);
    assert!(question < reasoning && reasoning < call.expect(&html) && call < Some(answer));
    assert!(html.contains("&lt;b&gt;not bold&lt;/b&gt;"), "{html}");
    assert!(!html.contains("<i>") && !html.contains("<b>"), "{html}");
}
