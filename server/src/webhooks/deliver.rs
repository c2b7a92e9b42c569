//! One delivery attempt: the body, its signature, the POST, and what came of it. What
//! an attempt reports (shown to the session's owner) never carries the URL: a receiver's
//! URL may hold a secret.

use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use super::WebhookConfig;
use crate::domain::now_ms;
use crate::metrics::METRICS;
use crate::store::{Attempt, DeliveryRow, FEEDBACK, RUN_ENDED};

/// `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
pub const SIGNATURE_HEADER: &str = "X-Tandem-Signature";
/// The delivery's id, the same on every attempt.
const DELIVERY_HEADER: &str = "X-Tandem-Delivery";
/// What happened: `session.waiting` or `run.ended`.
const EVENT_HEADER: &str = "X-Tandem-Event";

/// The signature header's value for `body` sent at `timestamp` (unix seconds).
pub fn signature(secret: &[u8], timestamp: i64, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(format!("{timestamp}.{body}").as_bytes());
    let digest = mac.finalize().into_bytes();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("t={timestamp},v1={hex}")
}

/// The JSON a receiver gets: the delivery, its session and the interrupt it waits on
/// (`session.waiting`) or the run that ended (`run.ended`).
fn body(config: &WebhookConfig, row: &DeliveryRow, title: Option<&str>) -> Value {
    let json = |text: Option<&str>| {
        text.and_then(|text| serde_json::from_str::<Value>(text).ok())
            .unwrap_or(Value::Null)
    };
    let base = config.public_url.trim_end_matches('/');
    let mut session = json!({
        "id": row.session.to_string(),
        "link": format!("{base}/#/sessions/{}", row.session),
    });
    if let Some(title) = title {
        session["title"] = json!(title);
    }
    let mut body = json!({
        "id": row.id,
        "event": row.event,
        "createdAt": row.created_at,
        "attempt": row.attempts,
        "session": session,
    });
    match row.event.as_str() {
        RUN_ENDED => body["run"] = json(row.payload.as_deref()),
        FEEDBACK => body["feedback"] = json(row.payload.as_deref()),
        _ => body["interrupt"] = json(row.interrupt.as_deref()),
    }
    body
}

/// Posts one delivery and says what came of it.
pub async fn attempt(
    client: &reqwest::Client,
    config: &WebhookConfig,
    row: &DeliveryRow,
    title: Option<&str>,
) -> Attempt {
    let text = body(config, row, title).to_string();
    let timestamp = now_ms() / 1000;
    let sent = client
        .post(&row.url)
        .header("Content-Type", "application/json")
        .header(DELIVERY_HEADER, &row.id)
        .header(EVENT_HEADER, &row.event)
        .header(
            SIGNATURE_HEADER,
            signature(&config.secret, timestamp, &text),
        )
        .body(text)
        .send()
        .await;
    let (status, error) = match sent {
        Ok(response) if response.status().is_success() => {
            METRICS.webhook("delivered");
            return Attempt::Delivered {
                status: i64::from(response.status().as_u16()),
            };
        }
        Ok(response) => (
            Some(i64::from(response.status().as_u16())),
            format!("the receiver answered {}", response.status()),
        ),
        Err(error) if error.is_timeout() => (
            None,
            format!("no answer within {} ms", config.timeout.as_millis()),
        ),
        Err(error) => (None, format!("the request failed: {}", without_url(error))),
    };
    let attempts = row.attempts.max(1) as u32;
    let retry_at = (attempts < config.max_attempts)
        .then(|| now_ms() + config.backoff(attempts).as_millis() as i64);
    METRICS.webhook(if retry_at.is_some() {
        "retry"
    } else {
        "failed"
    });
    Attempt::Failed {
        status,
        error,
        retry_at,
    }
}

/// A failed request's error and its causes, without the URL reqwest puts in it.
fn without_url(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_timestamp_and_body() {
        let signed = signature(b"Jefe", 0, "x");
        assert!(signed.starts_with("t=0,v1="));
        assert_eq!(signed.len(), "t=0,v1=".len() + 64);
        assert_ne!(signature(b"Jefe", 0, "y"), signed, "the body is signed");
        assert_ne!(
            signature(b"Jefe", 1, "x"),
            signed,
            "the timestamp is signed"
        );
    }

    #[tokio::test]
    async fn a_failed_request_is_reported_without_its_url() {
        // Nothing listens on port 9 of the loopback (discard), so the connection fails.
        let url = "http://user:hunter2@127.0.0.1:9/hooks?token=hunter2";
        let error = reqwest::Client::new().post(url).send().await.unwrap_err();
        assert!(
            error.to_string().contains("hunter2"),
            "reqwest names the URL"
        );
        let text = without_url(error);
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("error sending request"), "{text}");
    }
}
