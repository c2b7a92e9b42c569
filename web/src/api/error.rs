//! The page's error type, mirroring the server's `{"error":{"code","message","details"?}}`.
//!
//! Failures that never reached the server (network down, unreadable reply, socket closed)
//! get codes of their own (`network`, `bad_response`, `not_connected`) so every error the
//! page shows has the same shape.

use std::fmt;

use serde_json::Value;
use shared::api::ErrorDetail;

/// An error from the server or from reaching it.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// Machine-readable, e.g. `run_active`, `invalid_payload`, `network`.
    pub code: String,
    /// For a person.
    pub message: String,
    /// Extra data the server attached, if any.
    pub details: Option<Value>,
}

impl ApiError {
    /// An error with a code and message and no details.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            details: None,
        }
    }

    /// The request never got an answer.
    pub fn network(message: impl fmt::Display) -> Self {
        leptos::logging::warn!("request failed: {message}");
        Self::new("network", "Can't reach the server; retrying…")
    }

    /// The answer could not be read.
    pub fn bad_response(message: impl fmt::Display) -> Self {
        Self::new("bad_response", format!("Unexpected reply: {message}"))
    }
}

impl From<ErrorDetail> for ApiError {
    fn from(detail: ErrorDetail) -> Self {
        Self {
            code: detail.code,
            message: detail.message,
            details: detail.details,
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ApiError {}
