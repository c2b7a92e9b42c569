//! A client of `GET /api/sessions/stream`: the caller's session list as Server-Sent
//! Events, read one message at a time, each wait under a time limit that keep-alives do
//! not extend.

use std::time::Duration;

use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::time::Instant;

use super::TestApp;

/// How long one message (or `until`'s whole wait) may take before the test fails, naming
/// what it waited for. Keep-alive comments, which the server sends every 15 s whatever
/// happens, do not count as the message coming.
const WAIT: Duration = Duration::from_secs(20);

/// An open list stream.
pub struct ListStream {
    body: BoxStream<'static, reqwest::Result<actix_web::web::Bytes>>,
    buffer: String,
}

impl ListStream {
    /// The next message (keep-alive comments and `retry:` left out); `None` when the
    /// stream ended.
    pub async fn next(&mut self) -> Option<Value> {
        self.next_by(Instant::now() + WAIT, "the next message")
            .await
    }

    /// [`Self::next`], failing the test, naming `what`, unless it comes by `deadline`.
    async fn next_by(&mut self, deadline: Instant, what: &str) -> Option<Value> {
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                if let Some(json) = frame.trim_end().strip_prefix("data: ") {
                    return Some(serde_json::from_str(json).expect("a data message is JSON"));
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.body.next())
                .await
                .unwrap_or_else(|_| panic!("waited {WAIT:?} for {what} on the list stream"));
            match chunk {
                Some(Ok(bytes)) => self.buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
                Some(Err(_)) | None => return None,
            }
        }
    }

    /// The next message, which must come.
    pub async fn expect(&mut self) -> Value {
        self.next().await.expect("the list stream is open")
    }

    /// Messages until one `matches`; returns it.
    pub async fn until(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        self.find(what, |message| matches(message).then(|| message.clone()))
            .await
    }

    /// Messages until the list tells `session` in `status`; returns the session as told.
    pub async fn until_status(&mut self, session: &str, status: &str) -> Value {
        let what = format!("{session} became {status}");
        self.until_session(session, &what, |told| told["status"] == status)
            .await
    }

    /// Messages until the list tells `session` as `matches` wants it, by a `changed` or
    /// by a fresh snapshot (which the list sends instead when it may have missed changes:
    /// its feed dropped, a read failed); returns the session as told.
    pub async fn until_session(
        &mut self,
        session: &str,
        what: &str,
        matches: impl Fn(&Value) -> bool,
    ) -> Value {
        self.find(what, |message| {
            told_of(message, session)
                .filter(|told| matches(told))
                .cloned()
        })
        .await
    }

    /// Messages until the list tells that `session` is gone: `removed`, or a fresh
    /// snapshot without it.
    pub async fn until_removed(&mut self, session: &str) {
        let what = format!("{session} removed");
        self.find(&what, |message| {
            let gone = match message["type"].as_str() {
                Some("removed") => message["id"] == session,
                Some("snapshot") => told_of(message, session).is_none(),
                _ => false,
            };
            gone.then_some(())
        })
        .await
    }

    /// Messages until `pick` takes something from one, all under one [`WAIT`]; failing
    /// the test, naming `what`, if none does by then or the stream ends.
    async fn find<T>(&mut self, what: &str, pick: impl Fn(&Value) -> Option<T>) -> T {
        let deadline = Instant::now() + WAIT;
        loop {
            let message = self
                .next_by(deadline, what)
                .await
                .unwrap_or_else(|| panic!("the list stream ended before {what}"));
            if let Some(picked) = pick(&message) {
                return picked;
            }
        }
    }
}

/// The summary of `session` that `message` tells, if it tells one: a `changed` of it, or
/// its row in a snapshot.
fn told_of<'a>(message: &'a Value, session: &str) -> Option<&'a Value> {
    match message["type"].as_str()? {
        "changed" => Some(&message["session"]).filter(|told| told["id"] == session),
        "snapshot" => message["sessions"]
            .as_array()?
            .iter()
            .find(|told| told["id"] == session),
        _ => None,
    }
}

impl TestApp {
    /// Opens this client's session list stream; panics unless it answers 200.
    pub async fn list_stream(&self) -> ListStream {
        let response = self
            .http
            .get(self.url("/api/sessions/stream"))
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "the list stream opens");
        let content_type = response.headers()["content-type"].to_str().unwrap();
        assert!(
            content_type.starts_with("text/event-stream"),
            "{content_type}"
        );
        ListStream {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }
}
