//! Reading JSON bodies with our own limit and error shape (actix's extractors would
//! answer oversized or malformed bodies in their own format).
//!
//! A body must be declared `Content-Type: application/json`: a cross-site page can send
//! `text/plain` or a form without asking, but not JSON.

use std::future::{ready, Ready};

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// Reads and parses a JSON body of at most `max_bytes`; an empty body parses as `empty`
/// if given (and then needs no content type).
async fn read_json<T: DeserializeOwned>(
    request: &HttpRequest,
    mut payload: web::Payload,
    max_bytes: usize,
    empty: Option<T>,
) -> Result<T, ApiError> {
    let declared_json = match request.headers().get(header::CONTENT_TYPE) {
        None => false,
        Some(value) => {
            if !is_json(value.to_str().unwrap_or_default()) {
                return Err(ApiError::UnsupportedMediaType);
            }
            true
        }
    };
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::BadRequest(format!("cannot read the body: {e}")))?;
        if bytes.len() + chunk.len() > max_bytes {
            return Err(ApiError::TooLarge(max_bytes));
        }
        bytes.extend_from_slice(&chunk);
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return empty.ok_or_else(|| ApiError::BadRequest("the request needs a JSON body".into()));
    }
    if !declared_json {
        return Err(ApiError::UnsupportedMediaType);
    }
    parse_json(&bytes)
}

/// A request's JSON body, read when the handler asks: after the checks its other
/// extractors make (who calls, whose session), which actix runs alongside a body
/// extractor that read eagerly, so a stranger's bad body would be answered before the
/// 404 of a session not theirs. Read with our limit and error shape ([`read_json`]).
pub struct JsonBody {
    request: HttpRequest,
    payload: web::Payload,
}

impl FromRequest for JsonBody {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let payload = web::Payload::from_request(request, payload).into_inner();
        ready(payload.map(|payload| JsonBody {
            request: request.clone(),
            payload,
        }))
    }
}

impl JsonBody {
    /// The request the body came with (its headers, its connection).
    pub fn request(&self) -> &HttpRequest {
        &self.request
    }

    /// The body parsed as a `T`, of at most `max_bytes`; an empty body is refused.
    pub async fn read<T: DeserializeOwned>(self, max_bytes: usize) -> Result<T, ApiError> {
        read_json(&self.request, self.payload, max_bytes, None).await
    }

    /// The body parsed as a `T`, of at most `max_bytes`; an empty body is `T::default()`.
    pub async fn read_or_default<T: DeserializeOwned + Default>(
        self,
        max_bytes: usize,
    ) -> Result<T, ApiError> {
        read_json(&self.request, self.payload, max_bytes, Some(T::default())).await
    }
}

/// Parses a JSON body (the part of [`read_json`] the fuzzer drives).
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))
}

/// `application/json` or `application/<something>+json`, with any parameters.
fn is_json(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_json_media_types_pass() {
        assert!(is_json("application/json"));
        assert!(is_json("Application/JSON; charset=utf-8"));
        assert!(is_json("application/merge-patch+json"));
        for other in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
            "",
        ] {
            assert!(!is_json(other), "{other}");
        }
    }
}
