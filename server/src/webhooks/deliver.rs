//! One delivery attempt: the body, its signature, the POST, and what came of it.

use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use super::WebhookConfig;
use crate::domain::now_ms;
use crate::metrics::METRICS;
use crate::store::{Attempt, DeliveryRow};

/// `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
pub const SIGNATURE_HEADER: &str = "X-Tandem-Signature";
/// The delivery's id, the same on every attempt.
const DELIVERY_HEADER: &str = "X-Tandem-Delivery";
/// What happened: `session.waiting`.
const EVENT_HEADER: &str = "X-Tandem-Event";
/// The event a waiting session's delivery announces.
const WAITING: &str = "session.waiting";

/// The signature header's value for `body` sent at `timestamp` (unix seconds).
pub fn signature(secret: &[u8], timestamp: i64, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(format!("{timestamp}.{body}").as_bytes());
    let digest = mac.finalize().into_bytes();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("t={timestamp},v1={hex}")
}

/// The JSON a receiver gets.
fn body(config: &WebhookConfig, row: &DeliveryRow, title: Option<&str>) -> Value {
    let interrupt = row
        .interrupt
        .as_deref()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .unwrap_or(Value::Null);
    let base = config.public_url.trim_end_matches('/');
    let mut session = json!({
        "id": row.session.to_string(),
        "link": format!("{base}/#/sessions/{}", row.session),
    });
    if let Some(title) = title {
        session["title"] = json!(title);
    }
    json!({
        "id": row.id,
        "event": WAITING,
        "createdAt": row.created_at,
        "attempt": row.attempts + 1,
        "session": session,
        "interrupt": interrupt,
    })
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
        .header(EVENT_HEADER, WAITING)
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
        Err(error) => (None, format!("the request failed: {error}")),
    };
    let attempts = row.attempts as u32 + 1;
    let retry_at = (attempts < config.max_attempts)
        .then(|| now_ms() + config.backoff(attempts).as_millis() as i64);
    METRICS.webhook(if retry_at.is_some() {
        "retry"
    } else {
        "failed"
    });
    tracing::warn!(delivery = row.id, url = row.url, attempts, %error, "webhook not delivered");
    Attempt::Failed {
        status,
        error,
        retry_at,
    }
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
}
