//! Reading JSON bodies with our own limit and error shape (actix's extractors would
//! answer oversized or malformed bodies in their own format).

use actix_web::web;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// Largest request body accepted.
pub const MAX_BODY: usize = 64 * 1024;

/// Reads and parses a JSON body; an empty body parses as `empty` if given.
pub async fn read_json<T: DeserializeOwned>(
    mut payload: web::Payload,
    empty: Option<T>,
) -> Result<T, ApiError> {
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::BadRequest(format!("cannot read the body: {e}")))?;
        if bytes.len() + chunk.len() > MAX_BODY {
            return Err(ApiError::TooLarge(MAX_BODY));
        }
        bytes.extend_from_slice(&chunk);
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return empty.ok_or_else(|| ApiError::BadRequest("the request needs a JSON body".into()));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))
}
