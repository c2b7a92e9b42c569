//! The route table, checked entry by entry for authentication and isolation.

use std::collections::HashMap;

use reqwest::Method;
use serde_json::{json, Value};
use tandem::routes::{table, Access, Endpoint};
use tandem::store::SqliteStore;

use super::{alice_and_bob, paused_session};
use crate::helpers::socket::{run_id, user_message};
use crate::helpers::TestApp;

/// The route table (the same for either backend; its handlers are built for one).
fn routes() -> Vec<Endpoint> {
    table::<SqliteStore>()
}

/// What a test sends to one route: the body, if any, and a query string.
struct Case {
    body: Option<Value>,
    query: &'static str,
}

/// A case for every route; a new route must be added here.
fn cases() -> HashMap<(&'static str, &'static str), Case> {
    let none = || Case {
        body: None,
        query: "",
    };
    let body = |value: Value| Case {
        body: Some(value),
        query: "",
    };
    let query = |query: &'static str| Case { body: None, query };
    HashMap::from([
        (("GET", "/healthz"), none()),
        (("GET", "/readyz"), none()),
        (("GET", "/metrics"), none()),
        (("GET", "/api/openapi.json"), none()),
        (
            ("POST", "/api/auth/login"),
            body(json!({"token": "tdm_wrong"})),
        ),
        (("POST", "/api/auth/logout"), none()),
        (("GET", "/api/auth/me"), none()),
        (("GET", "/api/info"), none()),
        (("GET", "/api/models"), none()),
        (("POST", "/api/sessions"), body(json!({}))),
        (("GET", "/api/sessions"), none()),
        (("GET", "/api/sessions/stream"), none()),
        (("GET", "/api/sessions/{id}"), none()),
        (
            ("PATCH", "/api/sessions/{id}"),
            body(json!({"title": "Renamed"})),
        ),
        (("DELETE", "/api/sessions/{id}"), none()),
        (
            ("POST", "/api/sessions/{id}/fork"),
            body(json!({"atSeq": 0})),
        ),
        (("GET", "/api/sessions/{id}/events"), none()),
        (("GET", "/api/sessions/{id}/branches"), none()),
        (("GET", "/api/sessions/{id}/export"), query("?format=json")),
        (("GET", "/api/sessions/{id}/preview"), none()),
        (("GET", "/api/sessions/{id}/webhooks"), none()),
        (("POST", "/api/sessions/{id}/shares"), body(json!({}))),
        (("GET", "/api/sessions/{id}/shares"), none()),
        (("DELETE", "/api/sessions/{id}/shares/{share}"), none()),
        (("GET", "/api/shared/{token}"), none()),
        (("GET", "/api/shared/{token}/ws"), none()),
        (
            ("GET", "/api/shared/{token}/attachments/{attachment}"),
            none(),
        ),
        (
            ("POST", "/api/sessions/{id}/messages"),
            body(json!({"text": "hi"})),
        ),
        (
            ("POST", "/api/sessions/{id}/interrupts/{interrupt}"),
            body(json!({"status": "resolved", "payload": {"text": "Ada"}})),
        ),
        (("POST", "/api/sessions/{id}/cancel"), none()),
        (
            ("POST", "/api/sessions/{id}/messages/{message}/edit"),
            body(json!({"text": "hi again"})),
        ),
        (
            ("POST", "/api/sessions/{id}/runs/{run}/regenerate"),
            body(json!({})),
        ),
        (
            ("POST", "/api/sessions/{id}/runs/{run}/continue"),
            body(json!({})),
        ),
        (("GET", "/api/sessions/{id}/ws"), none()),
        (("GET", "/api/sessions/{id}/queue"), none()),
        (("GET", "/api/sessions/{id}/usage"), none()),
        (("GET", "/api/sessions/{id}/state"), none()),
        (("GET", "/api/tools"), none()),
        (("PUT", "/api/tools/{name}"), body(json!({"manifest": {}}))),
        (("DELETE", "/api/tools/{name}"), none()),
        (
            ("POST", "/api/schedules"),
            body(json!({"name": "n", "message": {"text": "hi"}, "everySeconds": 3600})),
        ),
        (("GET", "/api/schedules"), none()),
        (
            ("GET", "/api/schedules/preview"),
            query("?cron=0%209%20*%20*%20*&timezone=UTC"),
        ),
        (("GET", "/api/schedules/{schedule}"), none()),
        (
            ("PATCH", "/api/schedules/{schedule}"),
            body(json!({"enabled": false})),
        ),
        (("DELETE", "/api/schedules/{schedule}"), none()),
        (("POST", "/api/schedules/{schedule}/run"), none()),
        (("GET", "/api/schedules/{schedule}/fires"), none()),
        (
            ("POST", "/api/sessions/{id}/replays"),
            body(json!({"variants": [{"label": "again"}], "k": 1})),
        ),
        (("GET", "/api/sessions/{id}/replays"), none()),
        (("GET", "/api/replays/{replay}"), none()),
        (("DELETE", "/api/replays/{replay}"), none()),
        (
            ("POST", "/api/evals"),
            body(json!({"filter": {}, "variants": [{"label": "again"}], "k": 1})),
        ),
        (("GET", "/api/evals"), none()),
        (("GET", "/api/evals/{eval}"), none()),
        (("DELETE", "/api/evals/{eval}"), none()),
        (("GET", "/api/instructions"), none()),
        (
            ("PUT", "/api/instructions"),
            body(json!({"text": "Be brief."})),
        ),
        (("GET", "/api/sessions/{id}/instructions"), none()),
        (
            ("PUT", "/api/sessions/{id}/instructions"),
            body(json!({"text": "Be brief."})),
        ),
        (
            ("POST", "/api/sessions/{id}/runs/{run}/feedback"),
            body(json!({"rating": "up"})),
        ),
        (("GET", "/api/feedback"), none()),
        (
            ("PATCH", "/api/sessions/{id}/state"),
            body(json!([{"op": "add", "path": "/x", "value": 1}])),
        ),
        (
            ("POST", "/api/sessions/{id}/attachments"),
            Case {
                body: Some(json!({"note": "a JSON file"})),
                query: "?name=note.json",
            },
        ),
        (("GET", "/api/attachments/{attachment}"), none()),
        (
            ("PATCH", "/api/sessions/{id}/queue/{queued}"),
            body(json!({"text": "instead"})),
        ),
        (("DELETE", "/api/sessions/{id}/queue/{queued}"), none()),
        (
            ("POST", "/api/agui"),
            body(
                json!({"threadId": "0193a0c4-5d2e-7c1a-9b3f-2a1e4c6d8f00", "runId": "r1",
                        "messages": [{"id": "m1", "role": "user", "content": "hi"}]}),
            ),
        ),
    ])
}

/// Sends `case` to `path` as `client`; returns status and JSON body. The socket routes
/// are opened as sockets (101 when they upgrade).
async fn send(client: &TestApp, method: &str, path: &str, case: &Case) -> (u16, Value) {
    if let Some(token) = path
        .strip_prefix("/api/shared/")
        .and_then(|rest| rest.strip_suffix("/ws"))
    {
        return match client.try_shared_socket(token, 0).await {
            Ok(_) => (101, Value::Null),
            Err(refused) => refused,
        };
    }
    if path.ends_with("/ws") {
        let session = path
            .trim_start_matches("/api/sessions/")
            .trim_end_matches("/ws");
        return match client.try_socket(session, 0, &[]).await {
            Ok(_) => (101, Value::Null),
            Err(refused) => refused,
        };
    }
    if path == "/api/sessions/stream" {
        let response = client.http.get(client.url(path)).send().await.unwrap();
        return match response.status().as_u16() {
            // Its body never ends: that it opened is the answer.
            200 => (200, Value::Null),
            status => (status, response.json().await.unwrap_or(Value::Null)),
        };
    }
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    let url = format!("{}{}", client.url(path), case.query);
    let mut request = client.http.request(method, url);
    if let Some(body) = &case.body {
        request = request.json(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The values a route's path parameters take.
struct Params<'a> {
    session: &'a str,
    interrupt: &'a str,
    share: &'a str,
    token: &'a str,
    /// The person's message and the run it started.
    message: &'a str,
    run: &'a str,
    /// A message queued behind the question.
    queued: &'a str,
    /// A file attached to the session.
    attachment: &'a str,
    /// One of the person's own tools.
    tool: &'a str,
    /// One of the person's schedules.
    schedule: &'a str,
    /// A replay of the person's session.
    replay: &'a str,
    /// An eval of the person's conversations.
    eval: &'a str,
}

fn fill(pattern: &str, params: &Params<'_>) -> String {
    pattern
        .replace("{id}", params.session)
        .replace("{interrupt}", params.interrupt)
        .replace("{share}", params.share)
        .replace("{token}", params.token)
        .replace("{message}", params.message)
        .replace("{run}", params.run)
        .replace("{queued}", params.queued)
        .replace("{attachment}", params.attachment)
        .replace("{name}", params.tool)
        .replace("{schedule}", params.schedule)
        .replace("{replay}", params.replay)
        .replace("{eval}", params.eval)
}

/// A tool `owner` uploads as their own (a WASI command that does nothing); its name.
async fn own_tool(owner: &TestApp) -> String {
    let module =
        wat::parse_str(r#"(module (memory (export "memory") 1) (func (export "_start")))"#)
            .unwrap();
    let manifest = json!({"description": "Does nothing.", "parameters": {"type": "object"}});
    let mut body = b"--XyZ\r\nContent-Disposition: form-data; name=\"manifest\"\r\n\r\n".to_vec();
    body.extend_from_slice(manifest.to_string().as_bytes());
    body.extend_from_slice(b"\r\n--XyZ\r\nContent-Disposition: form-data; name=\"module\"\r\n\r\n");
    body.extend_from_slice(&module);
    body.extend_from_slice(b"\r\n--XyZ--\r\n");
    let request = owner
        .http
        .put(owner.url("/api/tools/mine"))
        .header("content-type", "multipart/form-data; boundary=XyZ")
        .body(body);
    let (status, body) = crate::helpers::status_and_json(request).await;
    assert!([200, 201].contains(&status), "{body}");
    "mine".to_string()
}

/// A file `owner` attaches to `session`; its id.
async fn attached_to(owner: &TestApp, session: &str) -> String {
    let url = owner.url(&format!("/api/sessions/{session}/attachments?name=a.txt"));
    let request = owner
        .http
        .post(url)
        .header("content-type", "text/plain")
        .body("hello");
    let (status, body) = crate::helpers::status_and_json(request).await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap().to_string()
}

/// A schedule of `owner`'s (hourly); its id.
async fn schedule_of(owner: &TestApp) -> String {
    let schedule = json!({"name": "Hourly", "message": {"text": "hi"}, "everySeconds": 3600});
    let (status, body) = owner.post("/api/schedules", schedule).await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap().to_string()
}

/// A replay of `owner`'s `session` (one trial); its id.
async fn replay_of(owner: &TestApp, session: &str) -> String {
    let replay = json!({"variants": [{"label": "again"}], "k": 1});
    let path = format!("/api/sessions/{session}/replays");
    let (status, body) = owner.post(&path, replay).await;
    assert_eq!(status, 202, "{body}");
    body["id"].as_str().unwrap().to_string()
}

/// An eval of `owner`'s `session` (one trial); its id.
async fn eval_of(owner: &TestApp, session: &str) -> String {
    let eval = json!({"sessions": [session], "variants": [{"label": "again"}], "k": 1});
    let (status, body) = owner.post("/api/evals", eval).await;
    assert_eq!(status, 202, "{body}");
    body["id"].as_str().unwrap().to_string()
}

/// A message `owner` queues in `session` (paused: it waits for the answer); its id.
async fn queued_in(owner: &TestApp, session: &str) -> String {
    let (status, body) = owner
        .post(
            &format!("/api/sessions/{session}/messages"),
            json!({"text": "after that"}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    body["queued"]["id"].as_str().unwrap().to_string()
}

/// A share link of `session`: its id and its secret.
async fn share_of(owner: &TestApp, session: &str) -> (String, String) {
    let (status, created) = owner
        .post(&format!("/api/sessions/{session}/shares"), json!({}))
        .await;
    assert_eq!(status, 201, "{created}");
    (
        created["id"].as_str().unwrap().to_string(),
        created["token"].as_str().unwrap().to_string(),
    )
}

/// The id of the person's message in `session` and of the run it started.
async fn message_and_run(owner: &TestApp, session: &str) -> (String, String) {
    let log = owner.log(session).await;
    (user_message(&log), run_id(&log, 0))
}

/// The body with ids replaced, so two refusals can be compared.
fn without(body: &Value, ids: &[&str]) -> String {
    ids.iter()
        .fold(body.to_string(), |text, id| text.replace(id, "<id>"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_authenticates_and_isolates_users() {
    let (alice, bob) = alice_and_bob().await;
    let anonymous = alice.anonymous();
    let forged = alice.as_user("tdm_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    let cases = cases();
    let mut alices = Vec::new();
    for route in routes() {
        let case = cases.get(&(route.method, route.path)).unwrap_or_else(|| {
            panic!(
                "{} {} has no access case: add one to tests/api/access/routes.rs",
                route.method, route.path
            )
        });
        let (session, interrupt) = paused_session(&alice).await;
        alices.push(session.clone());
        let (share, token) = share_of(&alice, &session).await;
        let (message, run) = message_and_run(&alice, &session).await;
        let queued = queued_in(&alice, &session).await;
        let attachment = attached_to(&alice, &session).await;
        let tool = own_tool(&alice).await;
        let schedule = schedule_of(&alice).await;
        let replay = replay_of(&alice, &session).await;
        let eval = eval_of(&alice, &session).await;
        let params = Params {
            session: &session,
            interrupt: &interrupt,
            share: &share,
            token: &token,
            message: &message,
            run: &run,
            queued: &queued,
            attachment: &attachment,
            tool: &tool,
            schedule: &schedule,
            replay: &replay,
            eval: &eval,
        };
        let path = fill(route.path, &params);
        let what = format!("{} {}", route.method, route.path);

        for stranger in [&anonymous, &forged] {
            let (status, body) = send(stranger, route.method, &path, case).await;
            match route.access {
                Access::User => {
                    assert_eq!(status, 401, "{what}: {body}");
                    assert_eq!(body["error"]["code"], "unauthorized", "{what}");
                }
                Access::Public => assert_ne!(
                    body["error"]["code"], "unauthorized",
                    "{what} is public ({status})"
                ),
                Access::Shared => {
                    assert!(
                        [200, 101].contains(&status),
                        "{what}: the link opens it ({status}): {body}"
                    );
                    let guessed = fill(
                        route.path,
                        &Params {
                            token: "tds_guessed",
                            ..params
                        },
                    );
                    let (status, body) = send(stranger, route.method, &guessed, case).await;
                    assert_eq!(status, 404, "{what}: a wrong link: {body}");
                }
            }
        }

        if route.names_session() {
            let unknown = uuid::Uuid::now_v7().to_string();
            let unknown_path = fill(
                route.path,
                &Params {
                    session: &unknown,
                    ..params
                },
            );
            let (status, body) = send(&bob, route.method, &path, case).await;
            let (unknown_status, unknown_body) =
                send(&bob, route.method, &unknown_path, case).await;
            assert_eq!((status, unknown_status), (404, 404), "{what}: {body}");
            assert_eq!(
                without(&body, &[&session]),
                without(&unknown_body, &[&unknown]),
                "{what}: another user's session must look unknown"
            );
        }

        if route.access != Access::User {
            continue;
        }
        let (status, body) = send(&alice, route.method, &path, case).await;
        assert!(
            ![401, 403, 404].contains(&status),
            "{what}: the owner was refused ({status}): {body}"
        );
        let (_, after) = alice.get(&format!("/api/sessions/{session}")).await;
        if route.method != "DELETE" {
            assert_eq!(
                after["id"], session,
                "{what}: bob's attempt changed alice's session"
            );
        }
    }
    let (_, listed) = bob.get("/api/sessions").await;
    let bobs: Vec<&Value> = listed["sessions"].as_array().unwrap().iter().collect();
    assert!(
        bobs.iter()
            .all(|s| !alices.contains(&s["id"].as_str().unwrap().to_string())),
        "bob's list holds one of alice's sessions"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_users_session_cannot_be_answered_stopped_read_or_deleted() {
    let (alice, bob) = alice_and_bob().await;
    let (session, interrupt) = paused_session(&alice).await;
    let answer = json!({"status": "resolved", "payload": {"text": "Mallory"}});
    let (status, _) = bob
        .post(
            &format!("/api/sessions/{session}/interrupts/{interrupt}"),
            answer,
        )
        .await;
    assert_eq!(status, 404);
    assert_eq!(
        bob.post(&format!("/api/sessions/{session}/cancel"), json!({}))
            .await
            .0,
        404
    );
    assert_eq!(bob.delete_session(&session).await, 404);
    let refused = bob
        .try_socket(&session, 0, &[])
        .await
        .err()
        .expect("refused");
    assert_eq!(refused.0, 404);
    let (_, listed) = bob.get("/api/sessions").await;
    assert_eq!(
        listed["sessions"],
        json!([]),
        "bob lists only his own sessions"
    );
    let (_, mine) = alice.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(
        mine["status"], "awaiting_input",
        "alice's question is still pending"
    );
    assert_eq!(mine["pendingInterrupts"][0]["id"], interrupt);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_refuses_a_query_parameter_it_does_not_take() {
    let (alice, _) = alice_and_bob().await;
    let cases = cases();
    let (session, interrupt) = paused_session(&alice).await;
    let (share, token) = share_of(&alice, &session).await;
    let (message, run) = message_and_run(&alice, &session).await;
    let queued = queued_in(&alice, &session).await;
    let attachment = attached_to(&alice, &session).await;
    let tool = own_tool(&alice).await;
    let schedule = schedule_of(&alice).await;
    let replay = replay_of(&alice, &session).await;
    let eval = eval_of(&alice, &session).await;
    let params = Params {
        session: &session,
        interrupt: &interrupt,
        share: &share,
        token: &token,
        message: &message,
        run: &run,
        queued: &queued,
        attachment: &attachment,
        tool: &tool,
        schedule: &schedule,
        replay: &replay,
        eval: &eval,
    };
    for route in routes() {
        let case = &cases[&(route.method, route.path)];
        let query = match case.query {
            "" => "?foo=1".to_string(),
            own => format!("{own}&foo=1"),
        };
        let url = alice.url(&format!("{}{query}", fill(route.path, &params)));
        let method = Method::from_bytes(route.method.as_bytes()).unwrap();
        let mut request = alice.http.request(method, url);
        if let Some(body) = &case.body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        let what = format!("{} {}{query}", route.method, route.path);
        assert_eq!(status, 400, "{what}: {body}");
        assert_eq!(body["error"]["code"], "bad_request", "{what}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("`foo`"), "{what}: {message}");
    }
    let (_, after) = alice.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(after["id"], session, "nothing was deleted");
    assert_eq!(after["status"], "awaiting_input", "nothing was answered");
}
