//! A person's own tools over HTTP (`GET /api/tools`, `PUT`/`DELETE /api/tools/{name}`):
//! uploaded as a manifest and a module, checked like the operator's, called by that
//! person's model alone, replaced and deleted; every bad upload refused with its reason.

use serde_json::{json, Value};

use crate::helpers::{
    spawn_app_with, spawn_app_with_users, status_and_json, tool_call, tool_results, TestApp,
};
use crate::sandbox::{toolbox, FORBIDDEN_IMPORT};

/// A `multipart/form-data` body of these `(part name, content type, bytes)`.
fn form(parts: &[(&str, &str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, media_type, bytes) in parts {
        body.extend_from_slice(
            format!(
                "--XyZ\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{name}\"\r\n\
                 Content-Type: {media_type}\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"--XyZ--\r\n");
    body
}

fn manifest(description: &str) -> Vec<u8> {
    json!({"description": description, "parameters": {"type": "object"}})
        .to_string()
        .into_bytes()
}

async fn upload(app: &TestApp, name: &str, manifest: &[u8], module: &[u8]) -> (u16, Value) {
    let body = form(&[
        ("manifest", "application/json", manifest),
        ("module", "application/wasm", module),
    ]);
    put_body(app, name, body).await
}

async fn put_body(app: &TestApp, name: &str, body: Vec<u8>) -> (u16, Value) {
    let request = app
        .http
        .put(app.url(&format!("/api/tools/{name}")))
        .header("content-type", "multipart/form-data; boundary=XyZ")
        .body(body);
    status_and_json(request).await
}

async fn delete(app: &TestApp, name: &str) -> u16 {
    let response = app
        .http
        .delete(app.url(&format!("/api/tools/{name}")))
        .send()
        .await
        .unwrap();
    response.status().as_u16()
}

fn names_of(list: &Value, source: &str) -> Vec<String> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool["source"] == source)
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_tool_is_theirs_alone_from_upload_to_delete() {
    let turns = json!([
        {"toolCalls": [tool_call("echo", json!({"say": "mine"}))]},
        {"text": "Done."},
        {"toolCalls": [tool_call("echo", json!({"say": "theirs"}))]},
        {"text": "Done."},
    ]);
    let apps = spawn_app_with_users(turns, &[], &["ada", "bob"]).await;
    let (ada, bob) = (&apps[0], &apps[1]);
    let (status, added) = upload(ada, "echo", &manifest("Echoes."), toolbox()).await;
    assert_eq!(status, 201, "{added}");
    assert_eq!(added["source"], "user");
    assert_eq!(added["moduleBytes"], toolbox().len());
    let (status, replaced) = upload(ada, "echo", &manifest("Echoes back."), toolbox()).await;
    assert_eq!(
        (status, &replaced["description"]),
        (200, &json!("Echoes back."))
    );

    let (_, listed) = ada.get("/api/tools").await;
    assert_eq!(names_of(&listed, "user"), ["echo"]);
    assert!(names_of(&listed, "builtin").contains(&"calculator".to_string()));
    assert_eq!(listed["uploads"], true);
    let (_, theirs) = bob.get("/api/tools").await;
    assert!(names_of(&theirs, "user").is_empty(), "{theirs}");

    let (session, mut socket) = ada.open_session().await;
    ada.say(&session, "go").await;
    assert_eq!(
        tool_results(&socket.until_run_end().await)[0],
        json!({"say": "mine"})
    );
    let (session, mut socket) = bob.open_session().await;
    bob.say(&session, "go").await;
    let refused = &tool_results(&socket.until_run_end().await)[0];
    assert!(
        refused["error"].as_str().unwrap().contains("unknown tool"),
        "{refused}"
    );

    assert_eq!(
        delete(bob, "echo").await,
        404,
        "another person's tool is not theirs"
    );
    assert_eq!(delete(ada, "echo").await, 204);
    assert_eq!(delete(ada, "echo").await, 404);
    let (_, listed) = ada.get("/api/tools").await;
    assert!(names_of(&listed, "user").is_empty(), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_upload_is_refused_with_its_reason_and_changes_nothing() {
    let app = spawn_app_with(json!([]), &["--max-tool-module-bytes", "200000"]).await;
    let forbidden = wat::parse_str(FORBIDDEN_IMPORT).unwrap();
    let no_start = wat::parse_str(r#"(module (memory (export "memory") 1))"#).unwrap();
    let starts =
        wat::parse_str(r#"(module (memory (export "memory") 1) (func (export "_start")))"#)
            .unwrap();
    let cases: [(&str, Vec<u8>, Vec<u8>, &str); 7] = [
        (
            "plain",
            manifest("x"),
            b"not wasm".to_vec(),
            "not a WebAssembly module",
        ),
        ("now", manifest("x"), forbidden, "env.now"),
        ("lib", manifest("x"), no_start, "_start"),
        (
            "calculator",
            manifest("x"),
            starts.clone(),
            "a tool of the server",
        ),
        ("Bad-Name", manifest("x"), starts.clone(), "not a tool name"),
        (
            "schema",
            br#"{"description":"x","parameters":{"type":"string"}}"#.to_vec(),
            starts.clone(),
            "parameters",
        ),
        (
            "fields",
            br#"{"description":"x","parameters":{"type":"object"},"net":true}"#.to_vec(),
            starts.clone(),
            "unknown field `net`",
        ),
    ];
    for (name, manifest, module, says) in cases {
        let (status, body) = upload(&app, name, &manifest, &module).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (422, Some("invalid_tool")),
            "{name}: {body}"
        );
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{name}: {message}");
    }
    let (status, body) = upload(&app, "big", &manifest("x"), &vec![0; 300_000]).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (413, Some("payload_too_large")),
        "{body}"
    );
    let only_manifest = form(&[("manifest", "application/json", &manifest("x"))]);
    let (status, body) = put_body(&app, "half", only_manifest).await;
    assert_eq!(status, 400, "{body}");
    let (status, _) = app.put("/api/tools/json", json!({"manifest": {}})).await;
    assert_eq!(status, 400, "not multipart");
    let (_, listed) = app.get("/api/tools").await;
    assert!(names_of(&listed, "user").is_empty(), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_may_turn_peoples_own_tools_off() {
    let app = spawn_app_with(json!([]), &["--user-tools", "off"]).await;
    let (status, body) = upload(&app, "echo", &manifest("x"), toolbox()).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("user_tools_off")),
        "{body}"
    );
    let (_, listed) = app.get("/api/tools").await;
    assert_eq!(listed["uploads"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_tool_a_crash_cut_short_runs_again_only_if_it_says_it_is_idempotent() {
    use crate::helpers::child::Tandem;
    use crate::helpers::{fresh_database, write_script};
    use shared::EventBody;
    let spin = |idempotent: bool| {
        json!({
            "description": "Spins.", "parameters": {"type": "object"},
            "idempotent": idempotent, "limits": {"timeoutMs": 4000},
        })
        .to_string()
        .into_bytes()
    };
    for (tool, idempotent) in [("spin", true), ("spin2", false)] {
        let (dir, url) = fresh_database();
        let turns = json!([{"toolCalls": [tool_call(tool, json!({}))]}, {"text": "Done."}]);
        let script = write_script(dir.path(), turns);
        let flags = ["--wasm-fuel", "1000000000000000"];
        let mut server = Tandem::spawn_with(&url, &script, &flags);
        let app = server.client();
        let (status, body) = upload(&app, tool, &spin(idempotent), toolbox()).await;
        assert_eq!(status, 201, "{body}");
        let (session, mut socket) = app.open_session().await;
        app.say(&session, "go").await;
        // The model call's end is committed before its calls run.
        socket
            .until(|event| matches!(event.body, EventBody::StepFinished { .. }))
            .await;
        server.kill();
        // A new process reads the person's tools from the database to decide.
        let server = Tandem::spawn_with(&url, &script, &flags);
        let app = server.client();
        let mut socket = app.socket(&session, 0).await;
        let result = &tool_results(&socket.until_run_end().await)[0];
        if idempotent {
            assert_eq!(result["limit"], "time", "{tool}: {result}");
        } else {
            let error = result["error"].as_str().unwrap();
            assert!(error.contains("not run again"), "{tool}: {error}");
        }
        drop(dir);
    }
}
