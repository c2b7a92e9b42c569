//! The one error type of every entry point (REST and WebSocket).
//!
//! Each variant has a stable `code`, an HTTP status and a human message; REST renders it
//! as `{"error":{"code","message","details"?}}`, the socket as an `error` frame.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde_json::Value;
use shared::api::{ErrorBody, ErrorDetail, SessionStatus};

use crate::eventlog::WriteError;
use crate::store::StoreError;

/// Everything an API call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    NotFound(String),
    #[error("no session with id {0}")]
    SessionNotFound(String),
    #[error("{0}")]
    InvalidMessage(String),
    #[error("a run is active in this session; wait for it to finish or stop it")]
    RunActive,
    #[error("the agent is waiting for an answer to a question; answer or cancel it first")]
    AwaitingInput,
    #[error("nothing is running in this session")]
    Idle,
    #[error("no interrupt {0} in this session")]
    InterruptNotFound(String),
    #[error("this interrupt was already answered differently")]
    InterruptAnswered(Value),
    #[error("this interrupt expired before it was answered")]
    InterruptExpired(Value),
    #[error("the answer does not match the question's response schema: {0}")]
    InvalidPayload(String),
    #[error("the request body is larger than {0} bytes")]
    TooLarge(usize),
    #[error("storage failure: {0}")]
    Storage(String),
}

impl ApiError {
    /// The stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::BadRequest(_) => "bad_request",
            Self::NotFound(_) => "not_found",
            Self::SessionNotFound(_) => "session_not_found",
            Self::InvalidMessage(_) => "invalid_message",
            Self::RunActive => "run_active",
            Self::AwaitingInput => "awaiting_input",
            Self::Idle => "idle",
            Self::InterruptNotFound(_) => "interrupt_not_found",
            Self::InterruptAnswered(_) => "interrupt_already_answered",
            Self::InterruptExpired(_) => "interrupt_expired",
            Self::InvalidPayload(_) => "invalid_payload",
            Self::TooLarge(_) => "payload_too_large",
            Self::Storage(_) => "storage_unavailable",
        }
    }

    /// Structured context, e.g. the current state of an answered interrupt.
    pub fn details(&self) -> Option<Value> {
        match self {
            Self::InterruptAnswered(state) | Self::InterruptExpired(state) => Some(state.clone()),
            _ => None,
        }
    }

    /// The error for a session that is not idle.
    pub fn busy(status: SessionStatus) -> Self {
        match status {
            SessionStatus::AwaitingInput => Self::AwaitingInput,
            _ => Self::RunActive,
        }
    }

    /// The JSON body.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code().to_string(),
                message: self.to_string(),
                details: self.details(),
            },
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        tracing::error!(%error, "storage failure");
        Self::Storage(error.to_string())
    }
}

impl From<WriteError> for ApiError {
    fn from(error: WriteError) -> Self {
        tracing::error!(%error, "log write failure");
        Self::Storage(error.to_string())
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::NotFound(_) | Self::SessionNotFound(_) | Self::InterruptNotFound(_) => {
                StatusCode::NOT_FOUND
            }
            Self::InvalidMessage(_) | Self::InvalidPayload(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::RunActive | Self::AwaitingInput | Self::Idle | Self::InterruptAnswered(_) => {
                StatusCode::CONFLICT
            }
            Self::InterruptExpired(_) => StatusCode::GONE,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Storage(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::build(self.status_code()).json(self.body())
    }
}
