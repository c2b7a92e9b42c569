//! Schedules: each kind fires at its times, once; missed times after downtime by each
//! policy; overlap; a scheduled run that asks and is answered a day later; time zones
//! across daylight saving; isolation; bad input; and exactly once with instances killed
//! with SIGKILL (`crash.rs`); the shell's commands (`shell.rs`). Time is the scheduler's
//! injected clock, moved by hand: no test sleeps a scheduled time away. What the scheduler
//! records of a missed or skipped time reaches no viewer, so [`until_fires`] reads the
//! fires list until it shows what the test waits for.

mod crash;
mod shell;

use std::time::Duration;

use serde_json::{json, Value};
use tandem::domain::Clock;

use crate::helpers::{
    add_users, count_in_database, fresh_database, start, test_config, TestApp, TestDir,
};

const SECOND: i64 = 1_000;
const MINUTE: i64 = 60 * SECOND;
/// How long a test waits for what the scheduler does before it fails, naming it.
const WAIT: Duration = Duration::from_secs(20);

/// 2026-12-01T08:59:30Z, where every test's clock starts.
fn start_ms() -> i64 {
    chrono::DateTime::parse_from_rfc3339("2026-12-01T08:59:30Z")
        .unwrap()
        .timestamp_millis()
}

/// An app whose scheduler runs on `clock`, on `url`, replaying `turns` (each session
/// from the first).
async fn app_on(url: &str, dir: &TestDir, turns: &Value, clock: &Clock) -> TestApp {
    app_with(url, dir, turns, clock, &[]).await
}

/// [`app_on`] with `extra` flags.
async fn app_with(
    url: &str,
    dir: &TestDir,
    turns: &Value,
    clock: &Clock,
    extra: &[&str],
) -> TestApp {
    let script = dir.path().join("script.json");
    if !script.exists() {
        std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
    }
    let mut config = test_config(url, &script, extra);
    config.clock = clock.clone();
    start(config).await
}

/// A fresh database and an app on it with a clock at [`start_ms`].
async fn scheduled_app(turns: Value) -> (TestApp, Clock, TestDir, String) {
    let (dir, url) = fresh_database();
    let clock = Clock::manual(start_ms());
    let app = app_on(&url, &dir, &turns, &clock).await;
    (app, clock, dir, url)
}

/// Makes a schedule; its body.
async fn schedule(app: &TestApp, body: Value) -> Value {
    let (status, made) = app.post("/api/schedules", body).await;
    assert_eq!(status, 201, "{made}");
    made
}

/// The fires of schedule `id`, newest first (the newest 1,000).
async fn fires(app: &TestApp, id: &str) -> Vec<Value> {
    let (status, body) = app
        .get(&format!("/api/schedules/{id}/fires?limit=1000"))
        .await;
    assert_eq!(status, 200, "{body}");
    body["fires"].as_array().unwrap().clone()
}

/// Waits until schedule `id`'s fires satisfy `done` (what the scheduler records of a
/// missed time reaches no viewer, so this reads the list), failing with `what` after
/// [`WAIT`].
async fn until_fires(
    app: &TestApp,
    id: &str,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let fires = fires(app, id).await;
        if done(&fires) {
            return fires;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited {WAIT:?} for {what}: {fires:#?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The texts of the person's messages in `log`, in order.
fn user_texts(log: &[(u64, shared::Event)]) -> Vec<String> {
    use shared::{EventBody, TextRole};
    let mut texts: Vec<(String, String)> = Vec::new();
    for (_, event) in log {
        match &event.body {
            EventBody::TextMessageStart {
                message_id,
                role: Some(TextRole::User),
                ..
            } => texts.push((message_id.clone(), String::new())),
            EventBody::TextMessageContent { message_id, delta } => {
                if let Some((_, text)) = texts.iter_mut().find(|(id, _)| id == message_id) {
                    text.push_str(delta);
                }
            }
            _ => {}
        }
    }
    texts.into_iter().map(|(_, text)| text).collect()
}

fn statuses(fires: &[Value]) -> Vec<&str> {
    fires
        .iter()
        .map(|f| f["status"].as_str().unwrap())
        .collect()
}

fn finished(fires: &[Value]) -> bool {
    fires.iter().all(|fire| {
        fire["status"] != "fired"
            || ["succeeded", "waiting"].contains(&fire["outcome"].as_str().unwrap_or(""))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_kind_fires_at_its_times_once_in_a_session_named_for_it() {
    let (app, clock, _dir, _url) = scheduled_app(json!([{"text": "Done."}])).await;
    let mut list = app.list_stream().await;
    let every = schedule(
        &app,
        json!({"name": "Minutely", "message": {"text": "tick"},
                                       "everySeconds": 60}),
    )
    .await;
    let at = schedule(
        &app,
        json!({"name": "Once", "message": {"text": "once"},
                                    "at": "2026-12-01T09:00:00Z"}),
    )
    .await;
    let cron = schedule(
        &app,
        json!({"name": "Standup", "message": {"text": "standup"},
                                      "cron": "0 9 * * *", "timezone": "Europe/Paris"}),
    )
    .await;
    assert_eq!(every["nextFireAt"], "2026-12-01T09:00:30.000Z");
    assert_eq!(at["nextFireAt"], "2026-12-01T09:00:00.000Z");
    assert_eq!(
        cron["nextFireAt"], "2026-12-02T08:00:00.000Z",
        "09:00 in Paris is 08:00 UTC"
    );

    clock.advance(30 * SECOND);
    let once = until_fires(&app, at["id"].as_str().unwrap(), "the `at` to fire", |f| {
        f.len() == 1 && finished(f)
    })
    .await;
    assert_eq!(once[0]["scheduledFor"], "2026-12-01T09:00:00.000Z");
    assert_eq!(once[0]["outcome"], "succeeded");
    let session = once[0]["sessionId"].as_str().unwrap().to_string();
    let told = list.until_status(&session, "idle").await;
    assert_eq!(told["title"], "Once · 2026-12-01 09:00 UTC");
    let log = app.log(&session).await;
    assert_eq!(user_texts(&log), ["once"]);
    assert_eq!(
        crate::helpers::streamed_text(&log),
        "onceDone.",
        "its message, then the answer"
    );
    let (_, at_now) = app
        .get(&format!("/api/schedules/{}", at["id"].as_str().unwrap()))
        .await;
    assert_eq!(at_now.get("nextFireAt"), None, "an `at` has no time left");
    assert_eq!(at_now["lastFire"]["status"], "fired");

    clock.advance(30 * SECOND);
    let ticks = until_fires(&app, every["id"].as_str().unwrap(), "the first tick", |f| {
        f.len() == 1 && finished(f)
    })
    .await;
    assert_eq!(ticks[0]["scheduledFor"], "2026-12-01T09:00:30.000Z");
    clock.advance(60 * SECOND);
    let ticks = until_fires(
        &app,
        every["id"].as_str().unwrap(),
        "the second tick",
        |f| f.len() == 2 && finished(f),
    )
    .await;
    assert_eq!(
        ticks[0]["scheduledFor"], "2026-12-01T09:01:30.000Z",
        "newest first"
    );
    assert_ne!(
        ticks[0]["sessionId"], ticks[1]["sessionId"],
        "a session per fire"
    );
    assert!(
        fires(&app, cron["id"].as_str().unwrap()).await.is_empty(),
        "not 08:00 yet"
    );

    // A day on: the cron fires at 08:00 UTC; the minutely one's day of missed times is
    // recorded and only its latest fires (`once`, within the hour's window).
    clock.set(
        chrono::DateTime::parse_from_rfc3339("2026-12-02T08:00:00Z")
            .unwrap()
            .timestamp_millis(),
    );
    let standup = until_fires(&app, cron["id"].as_str().unwrap(), "the cron", |f| {
        f.len() == 1 && finished(f)
    })
    .await;
    assert_eq!(standup[0]["scheduledFor"], "2026-12-02T08:00:00.000Z");
    let session = standup[0]["sessionId"].as_str().unwrap().to_string();
    let told = list.until_status(&session, "idle").await;
    assert_eq!(told["title"], "Standup · 2026-12-02 09:00 CET");
    let day = until_fires(&app, every["id"].as_str().unwrap(), "a day of ticks", |f| {
        f.len() == 1_000 && f[0]["status"] == "fired" && finished(f)
    })
    .await;
    assert_eq!(day[0]["status"], "fired");
    assert_eq!(day[0]["scheduledFor"], "2026-12-02T07:59:30.000Z");
    assert!(day[1..].iter().all(|f| f["status"] == "missed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_downtime_each_misfire_policy_does_what_it_says_and_every_time_is_recorded() {
    // Three runs in the one session of `all`: three turns.
    let turns = json!([{"text": "Done."}, {"text": "Done."}, {"text": "Done."}]);
    let (app, clock, dir, url) = scheduled_app(turns.clone()).await;
    let (_, made) = app.post("/api/sessions", json!({})).await;
    let session = made["id"].as_str().unwrap().to_string();
    let every = |misfire: &str| {
        json!({"name": misfire, "message": {"text": misfire}, "everySeconds": 600,
               "misfire": misfire, "misfireWindowSeconds": 1800})
    };
    let skip = schedule(&app, every("skip")).await;
    let once = schedule(&app, every("once")).await;
    let mut all = every("all");
    all["sessionId"] = json!(session);
    all["overlap"] = json!("queue");
    let all = schedule(&app, all).await;
    app.stop().await;

    // Down 65 minutes: the times at 10, 20, … 60 minutes passed unseen.
    clock.advance(65 * MINUTE);
    let app = app_on(&url, &dir, &turns, &clock).await;
    let id = |made: &Value| made["id"].as_str().unwrap().to_string();
    let skipped = until_fires(&app, &id(&skip), "skip's six misses", |f| f.len() == 6).await;
    assert_eq!(statuses(&skipped), ["missed"; 6]);
    assert!(
        skipped[0]["reason"]
            .as_str()
            .unwrap()
            .contains("fires only on time"),
        "{skipped:?}"
    );
    let onced = until_fires(&app, &id(&once), "once's record", |f| {
        f.len() == 6 && finished(f)
    })
    .await;
    assert_eq!(
        statuses(&onced),
        ["fired", "missed", "missed", "missed", "missed", "missed"]
    );
    assert_eq!(
        onced[0]["scheduledFor"], "2026-12-01T09:59:30.000Z",
        "the latest"
    );
    let alled = until_fires(&app, &id(&all), "all's record", |f| {
        f.len() == 6
            && f.iter()
                .all(|fire| fire["status"] == "missed" || fire["outcome"] == "succeeded")
    })
    .await;
    assert_eq!(
        statuses(&alled),
        ["fired", "fired", "fired", "missed", "missed", "missed"]
    );
    assert!(alled[5]["reason"]
        .as_str()
        .unwrap()
        .contains("past the misfire window"));
    // In order, in the one session: the three messages, each its own run.
    let log = app.log(&session).await;
    let said = user_texts(&log);
    assert_eq!(said, ["all", "all", "all"]);
    let (_, now) = app.get(&format!("/api/schedules/{}", id(&skip))).await;
    assert_eq!(now["nextFireAt"], "2026-12-01T10:09:30.000Z");
}

/// A run that asks its person a question and waits.
fn asking() -> Value {
    json!([
        {"toolCalls": [{"name": "request_input", "arguments": {"prompt": "Ship it?", "kind": "text"}}]},
        {"text": "Shipped."}
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fire_while_the_last_one_waits_is_skipped_queued_or_cancels_it() {
    let (app, clock, _dir, _url) = scheduled_app(asking()).await;
    let (_, made) = app.post("/api/sessions", json!({})).await;
    let session = made["id"].as_str().unwrap().to_string();
    let minutely = |overlap: &str| json!({"name": overlap, "message": {"text": overlap}, "everySeconds": 60, "overlap": overlap});
    let skip = schedule(&app, minutely("skip")).await;
    let mut queue = minutely("queue");
    queue["sessionId"] = json!(session);
    let queue = schedule(&app, queue).await;
    let cancel = schedule(&app, minutely("cancel")).await;
    let id = |made: &Value| made["id"].as_str().unwrap().to_string();
    clock.advance(60 * SECOND);
    for made in [&skip, &queue, &cancel] {
        let first = until_fires(&app, &id(made), "the first fire to wait", |f| {
            f.len() == 1 && f[0]["outcome"] == "waiting"
        })
        .await;
        assert_eq!(first[0]["status"], "fired");
    }
    let cancelled_session = fires(&app, &id(&cancel)).await[0]["sessionId"].clone();

    clock.advance(60 * SECOND);
    let skipped = until_fires(&app, &id(&skip), "a skip", |f| f.len() == 2).await;
    assert_eq!(statuses(&skipped), ["skipped", "fired"]);
    assert!(skipped[0]["reason"]
        .as_str()
        .unwrap()
        .contains("still runs or waits"));
    let queued = until_fires(&app, &id(&queue), "a queued fire", |f| f.len() == 2).await;
    assert_eq!(statuses(&queued), ["fired", "fired"]);
    let (_, waiting) = app.get(&format!("/api/sessions/{session}/queue")).await;
    assert_eq!(
        waiting["queued"][0]["runId"], queued[0]["runId"],
        "{waiting}"
    );
    let replaced = until_fires(&app, &id(&cancel), "the cancel", |f| {
        f.len() == 2 && f[1]["outcome"] == "cancelled" && f[0]["outcome"] == "waiting"
    })
    .await;
    assert_ne!(replaced[0]["sessionId"], cancelled_session);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_run_asks_and_its_person_answers_a_day_later() {
    let (app, clock, _dir, _url) = scheduled_app(asking()).await;
    let mut list = app.list_stream().await;
    let daily = schedule(
        &app,
        json!({"name": "Release", "message": {"text": "Release?"},
                                       "cron": "0 10 * * *", "timezone": "Europe/Paris"}),
    )
    .await;
    let id = daily["id"].as_str().unwrap().to_string();
    clock.set(
        chrono::DateTime::parse_from_rfc3339("2026-12-01T09:00:00Z")
            .unwrap()
            .timestamp_millis(),
    );
    let fired = until_fires(&app, &id, "the fire to wait", |f| {
        f.len() == 1 && f[0]["outcome"] == "waiting"
    })
    .await;
    let session = fired[0]["sessionId"].as_str().unwrap().to_string();
    list.until_status(&session, "awaiting_input").await;

    // A day passes while the question waits: nothing of the run is held, and the next
    // day's fire is skipped (the last one still waits).
    clock.advance(24 * 60 * MINUTE);
    let next_day = until_fires(&app, &id, "the next day's skip", |f| f.len() == 2).await;
    assert_eq!(statuses(&next_day), ["skipped", "fired"]);
    let log = app.log(&session).await;
    let interrupt = crate::helpers::socket::interrupt_id(&log);
    let (status, body) = app
        .post(
            &format!("/api/sessions/{session}/interrupts/{interrupt}"),
            json!({"status": "resolved", "payload": {"text": "Yes"}}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    list.until_status(&session, "idle").await;
    let answered = fires(&app, &id).await;
    assert_eq!(answered[1]["outcome"], "answered");
    assert!(crate::helpers::streamed_text(&app.log(&session).await).ends_with("Shipped."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn previews_follow_the_time_zone_across_daylight_saving_changes() {
    let (app, _clock, _dir, _url) = scheduled_app(json!([])).await;
    let (status, body) = app
        .get("/api/schedules/preview?cron=30%202%20*%20*%20*&timezone=America/New_York&from=2027-03-13T00:00:00Z&count=3")
        .await;
    assert_eq!(status, 200, "{body}");
    // 02:30 does not exist on 2027-03-14 in New York: that day's fire is at 03:00 EDT.
    assert_eq!(
        body["times"],
        json!([
            "2027-03-13T07:30:00.000Z",
            "2027-03-14T07:00:00.000Z",
            "2027-03-15T06:30:00.000Z"
        ])
    );
    let (status, body) = app
        .get("/api/schedules/preview?cron=0%209%20*%20*%20*&timezone=Europe/Paris&from=2026-10-24T00:00:00Z&count=2")
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        body["times"],
        json!(["2026-10-24T07:00:00.000Z", "2026-10-25T08:00:00.000Z"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_schedules_are_refused_naming_the_field_and_nothing_is_kept() {
    let (app, _clock, _dir, _url) = scheduled_app(json!([])).await;
    let base = json!({"name": "n", "message": {"text": "go"}});
    let with = |extra: Value| {
        let mut body = base.clone();
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        body
    };
    for (body, field) in [
        (
            with(json!({"cron": "0 25 * * *", "timezone": "UTC"})),
            "cron",
        ),
        (with(json!({"cron": "0 9 * * *"})), "timezone"),
        (
            with(json!({"cron": "0 9 * * *", "timezone": "Europe/Atlantis"})),
            "timezone",
        ),
        (with(json!({"at": "next tuesday"})), "at"),
        (with(json!({"at": "2020-01-01T00:00:00Z"})), "at"),
        (with(json!({"everySeconds": 30})), "everySeconds"),
        (with(json!({})), "cron"),
        (with(json!({"everySeconds": 60, "model": "nope"})), "model"),
        (
            with(json!({"everySeconds": 60, "sessionId": uuid::Uuid::now_v7().to_string()})),
            "sessionId",
        ),
        (
            with(json!({"everySeconds": 60, "overlap": "queue"})),
            "overlap",
        ),
    ] {
        let (status, refused) = app.post("/api/schedules", body.clone()).await;
        assert_eq!(status, 422, "{body}: {refused}");
        assert_eq!(refused["error"]["code"], "invalid_schedule");
        assert_eq!(
            refused["error"]["details"]["field"], field,
            "{body}: {refused}"
        );
    }
    let (status, _) = app
        .post("/api/schedules", with(json!({"everySeconds": "60"})))
        .await;
    assert_eq!(status, 400, "a wrong type is a bad body");
    let (_, listed) = app.get("/api/schedules").await;
    assert_eq!(listed["schedules"], json!([]));
    let made = schedule(&app, with(json!({"everySeconds": 60}))).await;
    let path = format!("/api/schedules/{}", made["id"].as_str().unwrap());
    let (status, refused) = app.patch(&path, json!({"timezone": "UTC"})).await;
    assert_eq!(
        (status, refused["error"]["details"]["field"].as_str()),
        (422, Some("timezone"))
    );
    let (status, _) = app.get("/api/schedules/preview?cron=x&timezone=UTC").await;
    assert_eq!(status, 422);
    let (_, kept) = app.get(&path).await;
    assert_eq!(
        kept["everySeconds"], 60,
        "the refused change changed nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_schedules_are_theirs_alone_and_stop_when_they_are_revoked() {
    let (dir, url) = fresh_database();
    let clock = Clock::manual(start_ms());
    let turns = json!([{"text": "Done."}]);
    let app = app_with(&url, &dir, &turns, &clock, &["--auth", "token"]).await;
    let tokens = add_users(&url, &["alice", "bob", "carol"]).await;
    let (alice, bob, carol) = (
        app.as_user(&tokens[0]),
        app.as_user(&tokens[1]),
        app.as_user(&tokens[2]),
    );
    let (alice, bob) = (&alice, &bob);
    let made = schedule(
        alice,
        json!({"name": "Mine", "message": {"text": "go"}, "everySeconds": 3600}),
    )
    .await;
    let id = made["id"].as_str().unwrap();
    let path = format!("/api/schedules/{id}");
    assert_eq!(bob.get(&path).await.0, 404);
    assert_eq!(bob.patch(&path, json!({"enabled": false})).await.0, 404);
    assert_eq!(bob.post(&format!("{path}/run"), json!({})).await.0, 404);
    assert_eq!(bob.get(&format!("{path}/fires")).await.0, 404);
    let deleted = bob
        .http
        .delete(bob.url(&path))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(deleted, 404);
    let (_, listed) = bob.get("/api/schedules").await;
    assert_eq!(listed["schedules"], json!([]));
    let (_, alices_session) = alice.post("/api/sessions", json!({})).await;
    let (status, refused) = bob
        .post(
            "/api/schedules",
            json!({"name": "Theirs", "message": {"text": "go"},
                                        "everySeconds": 3600, "sessionId": alices_session["id"]}),
        )
        .await;
    assert_eq!(
        (status, refused["error"]["details"]["field"].as_str()),
        (422, Some("sessionId"))
    );
    // Run now: the fire is alice's, in a session of hers.
    let (status, fire) = alice.post(&format!("{path}/run"), json!({})).await;
    assert_eq!(status, 201, "{fire}");
    assert_eq!(fire["manual"], true);
    let session = fire["sessionId"].as_str().unwrap();
    assert_eq!(alice.get(&format!("/api/sessions/{session}")).await.0, 200);
    assert_eq!(bob.get(&format!("/api/sessions/{session}")).await.0, 404);

    // Revoked, alice's schedules stop: carol's, due at the same time, fires; alice's
    // is not even claimed.
    let minutely = json!({"name": "Minutely", "message": {"text": "go"}, "everySeconds": 60});
    let alices = schedule(alice, minutely.clone()).await;
    let carols = schedule(&carol, minutely).await;
    let revoke = tandem::auth::cli::UsersOn(
        tandem::auth::cli::UsersCommand::Revoke {
            name: "alice".into(),
        },
        Default::default(),
    );
    tandem::store::open(&url, &Default::default(), revoke)
        .await
        .unwrap()
        .unwrap();
    clock.advance(60 * SECOND);
    let carols_id = carols["id"].as_str().unwrap();
    until_fires(&carol, carols_id, "carol's fire", |f| {
        f.len() == 1 && finished(f)
    })
    .await;
    let alices_id = alices["id"].as_str().unwrap();
    let query = format!("SELECT COUNT(*) FROM schedule_fires WHERE schedule_id = '{alices_id}'");
    assert_eq!(
        count_in_database(&url, &query).await,
        0,
        "a revoked owner's schedule fired"
    );
}
