//! The OpenAI-compatible Chat Completions engine (OpenAI, Ollama, llama.cpp, vLLM,
//! OpenRouter, DeepSeek, …).
//!
//! One model call is a streamed `POST {base_url}/chat/completions`: [`request`] builds the
//! body, [`http::send_with_retry`] sends it (retrying before the first byte), and
//! [`sse::drive`] reads the answer through [`stream::ChunkDecoder`]. This module owns the
//! headers and the provider's name in error messages; neither may ever show the API key
//! or a base URL's credentials.

mod request;
mod stream;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};

use super::{http, sse, Accepts, Engine, EngineError, EngineInfo, EngineStream, ModelRequest};
use crate::config::{ProviderSettings, OPENAI_URL};
pub(super) use stream::ChunkDecoder;

/// The OpenAI-compatible Chat Completions engine.
pub struct OpenAiEngine {
    settings: ProviderSettings,
    client: reqwest::Client,
    url: String,
    /// The request headers, or why the settings cannot make them.
    headers: Result<HeaderMap, EngineError>,
    /// Who answers, as error messages name it.
    provider: String,
}

impl OpenAiEngine {
    /// An engine for these settings. Fails only when the HTTP client cannot be built.
    pub fn new(settings: ProviderSettings) -> Result<Self, reqwest::Error> {
        Ok(Self {
            client: http::client(&settings)?,
            url: format!("{}/chat/completions", settings.base_url),
            headers: headers(&settings),
            provider: provider_name(&settings.base_url),
            settings,
        })
    }
}

impl Engine for OpenAiEngine {
    fn info(&self) -> EngineInfo {
        EngineInfo {
            kind: "openai".into(),
            model: self.settings.model.clone(),
        }
    }

    /// OpenAI scales an image to fit 2048×2048 and takes up to 20 MB of one; sending it
    /// that size already saves the upload and the wait.
    fn accepts(&self) -> Accepts {
        Accepts {
            images: true,
            max_image_edge: 2_048,
            max_image_bytes: 15 * 1024 * 1024,
        }
    }

    fn stream(&self, request: ModelRequest) -> EngineStream {
        let body = request::body(&request, &self.settings).to_string();
        let (client, url) = (self.client.clone(), self.url.clone());
        let (headers, provider) = (self.headers.clone(), self.provider.clone());
        let policy = self.settings.retry.clone();
        let model = request
            .model
            .clone()
            .unwrap_or_else(|| self.settings.model.clone());
        let decoder = ChunkDecoder::new(provider.clone(), model);
        let scrubber = crate::scrub::Scrubber::new(self.settings.secrets());
        let retry_scrubber = scrubber.clone();
        let connect = async move {
            let headers = headers?;
            let build = || {
                client
                    .post(&url)
                    .headers(headers.clone())
                    .body(body.clone())
            };
            http::send_with_retry(build, &policy, ("openai", &provider), &retry_scrubber).await
        };
        sse::drive(connect, decoder, scrubber)
    }
}

/// JSON in, SSE out, the key as a bearer token (if set), then the extra headers, which
/// replace a default of the same name.
fn headers(settings: &ProviderSettings) -> Result<HeaderMap, EngineError> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    if let Some(key) = &settings.api_key {
        let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
            .map_err(|_| config_error("the API key has characters an HTTP header cannot carry"))?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    let mut extra = HeaderMap::new();
    for (name, value) in &settings.extra_headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| config_error(&format!("`{name}` is not a valid HTTP header name")))?;
        let mut value = HeaderValue::from_str(value.expose()).map_err(|_| {
            config_error(&format!("the `{name}` header's value is not valid in HTTP"))
        })?;
        value.set_sensitive(true);
        extra.append(name, value);
    }
    headers.extend(extra);
    Ok(headers)
}

fn config_error(problem: &str) -> EngineError {
    EngineError {
        code: "provider_config",
        message: format!("the OpenAI-compatible engine cannot send its request: {problem}"),
    }
}

/// "OpenAI", or the compatible server's host and port: never the whole base URL, which
/// may carry credentials.
fn provider_name(base_url: &str) -> String {
    if base_url == OPENAI_URL {
        return "OpenAI".into();
    }
    let server = "the OpenAI-compatible server";
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return server.into();
    };
    match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{server} at {host}:{port}"),
        (Some(host), None) => format!("{server} at {host}"),
        _ => server.into(),
    }
}

#[cfg(test)]
mod tests;
