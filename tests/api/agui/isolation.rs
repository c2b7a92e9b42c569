//! Another user's thread answers exactly like one that does not exist: a `threadId` that
//! is a session of alice's (made over REST or by a thread), or alice's thread's own id,
//! gets bob what a fresh random id gets him, and leaves alice's session as it was. And
//! nothing is written on a refusal: a refused input leaves no session behind.

use serde_json::{json, Value};
use uuid::Uuid;

use super::{events, input, post, run, session_of, user};
use crate::helpers::{
    add_users, fresh_database, start, status_and_json, test_config, write_script, TestApp, TestDir,
};

/// An app with users alice and bob, the folder and database it runs on.
struct Two {
    alice: TestApp,
    bob: TestApp,
    url: String,
    _app: TestApp,
    _dir: TestDir,
}

async fn alice_and_bob(turns: Value, extra: &[&str]) -> Two {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), turns);
    let flags = [&["--auth", "token"], extra].concat();
    let app = start(test_config(&url, &script, &flags)).await;
    let tokens = add_users(&url, &["alice", "bob"]).await;
    Two {
        alice: app.as_user(&tokens[0]),
        bob: app.as_user(&tokens[1]),
        url,
        _app: app,
        _dir: dir,
    }
}

/// How many sessions the database holds, of every user.
async fn sessions_in_database(url: &str) -> i64 {
    crate::helpers::count_in_database(url, "SELECT COUNT(*) FROM sessions").await
}

/// The ids of the caller's session list.
async fn session_ids(app: &TestApp) -> Vec<String> {
    let list = session_list(app).await;
    let sessions = list["sessions"].as_array().unwrap().iter();
    sessions
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

/// The caller's session list as the route gives it.
async fn session_list(app: &TestApp) -> Value {
    let (status, list) = app.get("/api/sessions").await;
    assert_eq!(status, 200, "{list}");
    list
}

/// Status, headers (except those that differ between any two responses) and body.
async fn answer(app: &TestApp, input: &Value) -> (u16, Vec<(String, String)>, Value) {
    let response = app
        .http
        .post(app.url("/api/agui"))
        .header("accept", "text/event-stream")
        .json(input)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let headers = comparable_headers(&response);
    (
        status,
        headers,
        response.json().await.unwrap_or(Value::Null),
    )
}

fn comparable_headers(response: &reqwest::Response) -> Vec<(String, String)> {
    const VARYING: [&str; 3] = ["date", "x-request-id", "tandem-session-id"];
    let mut headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .filter(|(name, _)| !VARYING.contains(&name.as_str()))
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_string()))
        .collect();
    headers.sort();
    headers
}

/// The refused inputs of a thread: nothing to run, a resume, tool results.
fn refused_inputs(thread: &str) -> [(u16, Value); 3] {
    let nothing = input(thread, vec![]);
    let mut resume = input(thread, vec![]);
    resume["resume"] = json!([{"interruptId": "int_0123", "status": "resolved"}]);
    let tool = json!({"id": "t1", "role": "tool", "toolCallId": "call_1", "content": "done"});
    [
        (422, nothing),
        (404, resume),
        (422, input(thread, vec![tool])),
    ]
}

/// Alice's ids a thread of bob's might name: a session she made over REST and ran as a
/// thread, a thread of hers and that thread's session.
async fn alices_ids(alice: &TestApp) -> Vec<String> {
    let made = alice.create_session().await;
    let (same, _) = run(alice, &input(&made, vec![user("a1", "Mine")])).await;
    assert_eq!(same, made);
    let thread = Uuid::new_v4().to_string();
    let (session, _) = run(alice, &input(&thread, vec![user("a1", "Also mine")])).await;
    vec![made, thread, session]
}

#[tokio::test]
async fn bob_naming_alices_thread_gets_what_a_fresh_id_gets_him_and_alice_keeps_hers() {
    let two = alice_and_bob(json!([{"text": "Hello."}]), &[]).await;
    let (alice, bob) = (&two.alice, &two.bob);
    let ids = alices_ids(alice).await;
    let alices_logs = [alice.log(&ids[0]).await, alice.log(&ids[2]).await];
    let alices_list = session_list(alice).await;

    for taken in &ids {
        let fresh = Uuid::new_v4().to_string();
        for ((status, of_taken), (_, of_fresh)) in refused_inputs(taken)
            .into_iter()
            .zip(refused_inputs(&fresh))
        {
            let taken_answer = answer(bob, &of_taken).await;
            assert_eq!(taken_answer.0, status, "{}", taken_answer.2);
            assert_eq!(
                taken_answer,
                answer(bob, &of_fresh).await,
                "alice's {taken} and a fresh id answer alike"
            );
        }

        let taken_response = post(bob, &input(taken, vec![user("b1", "Hi")])).await;
        let fresh_response = post(bob, &input(&fresh, vec![user("b1", "Hi")])).await;
        assert_eq!(
            comparable_headers(&taken_response),
            comparable_headers(&fresh_response)
        );
        let bobs_session = session_of(&taken_response);
        assert!(!ids.contains(&bobs_session), "bob's own session");
        for (thread, response) in [(taken, taken_response), (&fresh, fresh_response)] {
            let streamed = events(response).await;
            let runs = streamed.iter().filter(|e| e["threadId"].is_string());
            assert!(runs.clone().count() >= 2, "{streamed:?}");
            for event in runs {
                assert_eq!(event["threadId"], thread.as_str(), "the thread bob sent");
            }
        }
        let (status, _) = bob.get(&format!("/api/sessions/{taken}")).await;
        assert_eq!(status, 404, "bob cannot read alice's {taken}");
    }

    assert_eq!(
        [alice.log(&ids[0]).await, alice.log(&ids[2]).await],
        alices_logs,
        "alice's sessions are untouched"
    );
    assert_eq!(session_list(alice).await, alices_list);
    let bobs_list = session_list(bob).await;
    assert_eq!(bobs_list["sessions"].as_array().unwrap().len(), 6);
    for id in &ids {
        let shown = bobs_list.to_string();
        assert!(!shown.contains(id.as_str()), "{id} in bob's list: {shown}");
    }
}

#[tokio::test]
async fn a_refused_input_leaves_no_session_behind() {
    let two = alice_and_bob(json!([{"text": "Hello."}]), &["--messages-per-minute", "2"]).await;
    let bob = &two.bob;
    let ids = alices_ids(&two.alice).await;
    let before = (session_ids(bob).await, sessions_in_database(&two.url).await);
    assert_eq!(before.0, Vec::<String>::new());

    let mut refused: Vec<(u16, Value)> = ids.iter().flat_map(|id| refused_inputs(id)).collect();
    refused.extend(refused_inputs(&Uuid::new_v4().to_string()));
    let fresh = || Uuid::new_v4().to_string();
    let mut bad_model = input(&fresh(), vec![user("b1", "Hi")]);
    bad_model["forwardedProps"] = json!({"model": "model-z"});
    refused.push((422, bad_model));
    refused.push((422, input(&fresh(), vec![user("b1", " ")])));
    let image = json!([{"type": "binary", "mimeType": "image/png", "data": "AA=="}]);
    refused.push((
        422,
        input(
            &fresh(),
            vec![json!({"id": "b1", "role": "user", "content": image})],
        ),
    ));
    let mut huge = input(&fresh(), vec![user("b1", "Hi")]);
    huge["state"] = json!({"blob": "x".repeat(70 * 1024)});
    refused.push((422, huge));
    for (status, input) in &refused {
        let (got, body) = status_and_json(bob.http.post(bob.url("/api/agui")).json(input)).await;
        assert_eq!(got, *status, "{input}: {body}");
        assert_eq!(
            (session_ids(bob).await, sessions_in_database(&two.url).await),
            before,
            "nothing written for {body}"
        );
    }

    // bob's messages this minute: two runs, then 429.
    for _ in 0..2 {
        run(bob, &input(&fresh(), vec![user("b1", "Hi")])).await;
    }
    let after_runs = (session_ids(bob).await, sessions_in_database(&two.url).await);
    assert_eq!(after_runs.1, before.1 + 2);
    let (status, body) = status_and_json(
        bob.http
            .post(bob.url("/api/agui"))
            .json(&input(&fresh(), vec![user("b1", "Hi")])),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (429, Some("rate_limited"))
    );
    assert_eq!(
        (session_ids(bob).await, sessions_in_database(&two.url).await),
        after_runs,
        "nothing was written for the refusals"
    );
}

#[tokio::test]
async fn a_first_input_refused_for_a_full_queue_leaves_no_session_behind() {
    let words: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
    let turns = json!([{"text": words.join(" ")}]);
    let extra = [
        "--max-concurrent-runs",
        "1",
        "--max-queued-runs",
        "1",
        "--token-delay-ms",
        "50",
    ];
    let two = alice_and_bob(turns, &extra).await;
    let bob = &two.bob;
    // A slow run holds the slot; the queue's one place is then taken.
    let mut slow = post(
        bob,
        &input(&Uuid::new_v4().to_string(), vec![user("b1", "Hi")]),
    )
    .await;
    slow.chunk().await.unwrap().expect("the first run started");
    let mut waiting = post(
        bob,
        &input(&Uuid::new_v4().to_string(), vec![user("b1", "Hi")]),
    )
    .await;
    waiting
        .chunk()
        .await
        .unwrap()
        .expect("the second run is queued");
    let before = (session_ids(bob).await, sessions_in_database(&two.url).await);
    let (status, body) = status_and_json(
        bob.http
            .post(bob.url("/api/agui"))
            .json(&input(&Uuid::new_v4().to_string(), vec![user("b1", "Hi")])),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (503, Some("saturated"))
    );
    assert_eq!(
        (session_ids(bob).await, sessions_in_database(&two.url).await),
        before
    );
}
