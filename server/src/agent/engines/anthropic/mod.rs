//! The Anthropic Messages API engine: one streamed `POST {base_url}/v1/messages` per
//! model call.
//!
//! This module owns the engine's wiring: the headers (the key in `x-api-key`, the API
//! version, the user's extra headers such as `anthropic-beta`), the retrying connect
//! from [`http`] and the SSE reading from [`sse`]. The body lives in `request`, the
//! event mapping in `stream`. The key goes into one header and nowhere else: never into
//! an error, a log line or `Debug` output.

mod events;
mod request;
#[cfg(test)]
mod request_tests;
mod stream;
#[cfg(test)]
mod stream_tests;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};

use super::{http, sse, Accepts, Engine, EngineError, EngineInfo, EngineStream, ModelRequest};
use crate::config::ProviderSettings;
pub(super) use stream::AnthropicDecoder;

/// The Messages API version Tandem speaks.
pub const API_VERSION: &str = "2023-06-01";
/// The provider name in error messages.
const PROVIDER: &str = "Anthropic";

/// The Anthropic Messages engine.
pub struct AnthropicEngine {
    settings: ProviderSettings,
    client: reqwest::Client,
    url: String,
    /// The request headers, or why they cannot be built (reported by each call).
    headers: Result<HeaderMap, String>,
}

impl AnthropicEngine {
    /// An engine for these settings. Fails only when the HTTP client cannot be built.
    pub fn new(settings: ProviderSettings) -> Result<Self, reqwest::Error> {
        let client = http::client(&settings)?;
        let url = format!("{}/v1/messages", settings.base_url.trim_end_matches('/'));
        let headers = headers(&settings);
        Ok(Self {
            settings,
            client,
            url,
            headers,
        })
    }
}

impl Engine for AnthropicEngine {
    fn info(&self) -> EngineInfo {
        EngineInfo {
            kind: "anthropic".into(),
            model: self.settings.model.clone(),
        }
    }

    /// Anthropic scales an image whose long edge passes 1568 pixels down (adding to the
    /// time to the first token) and refuses one of over 5 MB (its base64 counted).
    fn accepts(&self) -> Accepts {
        Accepts {
            images: true,
            max_image_edge: 1_568,
            max_image_bytes: 3_700_000,
        }
    }

    fn stream(&self, request: ModelRequest) -> EngineStream {
        let headers = match &self.headers {
            Ok(headers) => headers.clone(),
            Err(message) => {
                let error = EngineError {
                    code: "provider_config",
                    message: message.clone(),
                };
                return Box::pin(futures_util::stream::once(async move { Err(error) }));
            }
        };
        let body = request::body(&self.settings, &request).to_string();
        let (client, url) = (self.client.clone(), self.url.clone());
        let build = move || {
            client
                .post(&url)
                .headers(headers.clone())
                .body(body.clone())
        };
        let policy = self.settings.retry.clone();
        let scrubber = crate::scrub::Scrubber::new(self.settings.secrets());
        let retry_scrubber = scrubber.clone();
        let connect = async move {
            http::send_with_retry(build, &policy, ("anthropic", PROVIDER), &retry_scrubber).await
        };
        sse::drive(connect, stream::AnthropicDecoder::default(), scrubber)
    }
}

/// The headers of every call: the key, the version, JSON in, SSE out, then the user's
/// extra headers (which replace a default of the same name and may repeat).
fn headers(settings: &ProviderSettings) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    if let Some(key) = &settings.api_key {
        let mut value = HeaderValue::from_str(key.expose()).map_err(|_| {
            "the Anthropic API key holds characters an HTTP header cannot carry".to_string()
        })?;
        value.set_sensitive(true);
        headers.insert(HeaderName::from_static("x-api-key"), value);
    }
    headers.insert(
        HeaderName::from_static("anthropic-version"),
        HeaderValue::from_static(API_VERSION),
    );
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    let mut extra = HeaderMap::new();
    for (name, value) in &settings.extra_headers {
        let bad = || format!("the extra header `{name}` is not a valid HTTP header");
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
        let mut value = HeaderValue::from_str(value.expose()).map_err(|_| bad())?;
        value.set_sensitive(true);
        extra.append(name, value);
    }
    for name in extra.keys() {
        headers.remove(name);
    }
    for (name, value) in &extra {
        headers.append(name, value.clone());
    }
    Ok(headers)
}
