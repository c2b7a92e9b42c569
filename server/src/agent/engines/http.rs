//! HTTP to model providers: the client, retries before the first token, and errors.
//!
//! Retries cover 408, 409, 429, 5xx (and Anthropic's 529) and connection failures, with
//! exponential backoff, full jitter and the provider's `retry-after`. Error messages
//! name the status and the provider's own message, never a header or a key.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::Value;

use super::EngineError;
use crate::config::{ProviderSettings, RetryPolicy};
use crate::scrub::Scrubber;

/// Longest `retry-after` Tandem waits; a provider asking for more fails the call.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Longest provider error body read for its message.
const MAX_ERROR_BODY: usize = 16 * 1024;

/// The wait before retry `attempt` (1-based) under `policy`: full jitter over the
/// backoff window, which doubles from `base_delay` up to `max_delay`.
pub fn backoff(policy: &RetryPolicy, attempt: u32) -> Duration {
    let window = policy
        .base_delay
        .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)))
        .min(policy.max_delay);
    window.mul_f64(fastrand::f64())
}

/// A client with the provider's timeouts. Building fails only on a broken TLS setup.
pub fn client(settings: &ProviderSettings) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .connect_timeout(settings.connect_timeout)
        .read_timeout(settings.read_timeout)
        .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Makes ring rustls's process-wide crypto provider, as the model clients use it: the
/// clients on reqwest 0.13 (rmcp's, the OTLP exporter's) bring rustls without one. Once
/// is enough; later calls change nothing.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

tokio::task_local! {
    /// The retries of the model call the current task makes ([`counting_retries`]).
    static RETRIES: Arc<AtomicU32>;
}

/// Runs `call` (a model call, streamed to its end) and says how many failed attempts
/// [`send_with_retry`] retried inside it.
pub async fn counting_retries<F: std::future::Future>(call: F) -> (F::Output, u32) {
    let count = Arc::new(AtomicU32::new(0));
    let output = RETRIES.scope(count.clone(), call).await;
    (output, count.load(Ordering::Relaxed))
}

/// Sends the request `build` makes until a 2xx arrives or retrying stops making sense.
/// Error messages pass through `scrubber` before they are logged or returned. `engine`
/// (`openai`, `anthropic`) labels the retries in the metrics; `provider` names the
/// server in messages.
pub async fn send_with_retry(
    build: impl Fn() -> RequestBuilder,
    policy: &RetryPolicy,
    (engine, provider): (&str, &str),
    scrubber: &Scrubber,
) -> Result<Response, EngineError> {
    let mut attempt = 0;
    loop {
        let mut failure = match build().send().await {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => Failure::from_response(response, provider).await,
            Err(error) => Failure::transport(&error, provider),
        };
        failure.error.message = scrubber.clean(&failure.error.message);
        attempt += 1;
        let wait = match failure.wait(attempt, policy) {
            Some(wait) => wait,
            None => return Err(failure.error),
        };
        crate::metrics::METRICS.provider_retry(engine);
        let _ = RETRIES.try_with(|count| count.fetch_add(1, Ordering::Relaxed));
        tracing::warn!(
            provider,
            attempt,
            wait_ms = wait.as_millis() as u64,
            error = %failure.error,
            "model call failed; retrying"
        );
        tokio::time::sleep(wait).await;
    }
}

/// One failed attempt.
struct Failure {
    error: EngineError,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl Failure {
    async fn from_response(response: Response, provider: &str) -> Self {
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let body = read_error_body(response).await;
        let detail = provider_message(&body).unwrap_or_else(|| {
            status
                .canonical_reason()
                .unwrap_or("no message")
                .to_string()
        });
        // OpenAI's 429 for an account out of credit will not pass by waiting.
        let out_of_quota = status.as_u16() == 429 && body.contains("insufficient_quota");
        let code = match status.as_u16() {
            401 | 403 => "provider_auth",
            429 if out_of_quota => "provider_quota",
            429 => "rate_limited",
            500.. => "provider_unavailable",
            _ => "provider_rejected",
        };
        Self {
            error: EngineError {
                code,
                message: format!("{provider} answered {}: {detail}", status.as_u16()),
            },
            retryable: is_retryable(status) && !out_of_quota,
            retry_after,
        }
    }

    fn transport(error: &reqwest::Error, provider: &str) -> Self {
        if error.is_builder() {
            return Self {
                error: EngineError {
                    code: "provider_config",
                    message: format!("the request to {provider} could not be built; check the base URL and extra headers"),
                },
                retryable: false,
                retry_after: None,
            };
        }
        let what = if error.is_timeout() {
            "did not answer in time"
        } else if error.is_connect() {
            "could not be reached"
        } else {
            "failed to answer"
        };
        let cause = std::error::Error::source(error)
            .map(|source| format!(": {source}"))
            .unwrap_or_default();
        Self {
            error: EngineError {
                code: "provider_unreachable",
                message: format!("{provider} {what}{cause}"),
            },
            retryable: true,
            retry_after: None,
        }
    }

    /// How long to wait before the next attempt, or `None` to give up.
    fn wait(&self, attempt: u32, policy: &RetryPolicy) -> Option<Duration> {
        if !self.retryable || attempt > policy.max_retries {
            return None;
        }
        match self.retry_after {
            Some(asked) if asked > MAX_RETRY_AFTER => None,
            Some(asked) => Some(asked),
            None => Some(backoff(policy, attempt)),
        }
    }
}

fn is_retryable(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error()
}

/// `retry-after-ms`, else `retry-after` in seconds or as an HTTP date.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    let value = text("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return Some(Duration::from_secs_f64(seconds.max(0.0)));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = at.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or_default())
}

async fn read_error_body(mut response: Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= MAX_ERROR_BODY {
            body.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// The message in an OpenAI (`{"error":{"message"}}`) or Anthropic
/// (`{"type":"error","error":{"type","message"}}`) error body.
pub fn provider_message(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body).ok()?;
    let error = value.get("error")?;
    let message = error.get("message").and_then(Value::as_str);
    let kind = error.get("type").and_then(Value::as_str);
    match (kind, message) {
        (Some(kind), Some(message)) => Some(format!("{message} ({kind})")),
        (None, Some(message)) => Some(message.to_string()),
        _ => error.as_str().map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_dates() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        let mut dated = HeaderMap::new();
        dated.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&dated), Some(Duration::ZERO));
    }

    #[test]
    fn backoff_stays_inside_its_doubling_window() {
        let policy = RetryPolicy {
            max_retries: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
        };
        for _ in 0..100 {
            assert!(backoff(&policy, 1) <= Duration::from_millis(100));
            assert!(backoff(&policy, 4) <= Duration::from_millis(300));
        }
    }

    #[test]
    fn provider_messages_are_read_from_both_error_shapes() {
        let openai = r#"{"error":{"message":"Rate limit reached","type":"requests","code":null}}"#;
        assert_eq!(
            provider_message(openai).unwrap(),
            "Rate limit reached (requests)"
        );
        let anthropic =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(
            provider_message(anthropic).unwrap(),
            "Overloaded (overloaded_error)"
        );
        assert_eq!(provider_message("<html>"), None);
    }
}
