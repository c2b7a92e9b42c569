//! The one error type of every entry point (REST and WebSocket).
//!
//! Each variant has a stable `code`, an HTTP status and a human message; REST renders it
//! as `{"error":{"code","message","details"?}}`, the socket as an `error` frame.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde_json::Value;
use shared::api::{ErrorBody, ErrorDetail, SessionStatus};

use crate::agent::Refusal;
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
    #[error("{0}")]
    InvalidInstructions(String),
    #[error("the request body is larger than {0} bytes")]
    TooLarge(usize),
    #[error("storage failure: {0}")]
    Storage(String),
    #[error("sign in first: send `Authorization: Bearer <token>` or sign in on the page")]
    Unauthorized,
    #[error(
        "this server does not answer to the host `{0}`; add it to --allowed-hosts \
         (TANDEM_ALLOWED_HOSTS) if it is yours"
    )]
    HostNotAllowed(String),
    #[error(
        "requests from the origin `{0}` may not change anything here or open sockets; add it \
         to --allowed-origins (TANDEM_ALLOWED_ORIGINS) if it is yours"
    )]
    OriginNotAllowed(String),
    #[error("send the body as JSON with `Content-Type: application/json`")]
    UnsupportedMediaType,
    #[error("too many {what}; try again in {retry_after_secs} s")]
    RateLimited {
        what: &'static str,
        retry_after_secs: u64,
    },
    #[error("you already have {0} sockets open; close one first")]
    TooManySockets(u32),
    #[error("{0} viewers already watch through share links; try again later")]
    TooManyViewers(u32),
    #[error("this session already has {0} share links; delete one first")]
    TooManyShareLinks(u32),
    #[error("the server is at its limit of queued runs; try again in a moment")]
    Saturated,
    #[error(
        "you already have {0} runs waiting for a run slot; wait until one starts, or stop one"
    )]
    TooManyQueuedRuns(usize),
    #[error("an internal error occurred; it has been logged")]
    Internal,
    #[error("this endpoint takes only {0}; see /api/openapi.json")]
    MethodNotAllowed(String),
    #[error("that token is not valid: mistyped, or its user was revoked")]
    InvalidToken,
    #[error("a run is active on this thread: watch it on the socket in `details.watch` (it replays from `after`), or stop it")]
    RunActiveOnThread(Value),
    #[error("this endpoint answers with `text/event-stream`; send `Accept: text/event-stream`")]
    NotAcceptable,
    #[error("{0}")]
    NotAForkPoint(String),
    #[error(
        "this session already holds {0} queued messages; wait until one runs, or withdraw one"
    )]
    QueueFull(u64),
    #[error("the queued message already started its run; it can no longer change")]
    AlreadyStarted(Value),
    #[error("{0}")]
    InvalidAttachment(String),
    #[error("your attachments would take more than your quota; delete some first")]
    AttachmentQuota(Value),
    #[error("the request's body stopped arriving: less than 1 KiB came in {0} ms")]
    RequestTimeout(u64),
    #[error("the range asked for lies outside the file's {0} bytes")]
    RangeNotSatisfiable(u64),
    #[error("only an operator (`--operators`) may read everyone's feedback")]
    NotAnOperator,
    #[error("the operator turned people's own tools off (`--user-tools off`)")]
    UserToolsOff,
    #[error("{0}")]
    InvalidTool(String),
    /// A schedule that cannot be kept as it is: the field and what is wrong with it.
    #[error("{message}")]
    InvalidSchedule {
        field: &'static str,
        message: String,
    },
    /// A replay that cannot be made as asked: the field and what is wrong with it.
    #[error("{message}")]
    InvalidReplay {
        field: &'static str,
        message: String,
    },
    /// The request meets a state it cannot change (409).
    #[error("{0}")]
    Conflict(String),
    /// A change of the shared state that does not apply or breaks its rules; the details
    /// say where (`{operation?, path}`).
    #[error("the state was not changed: {message}")]
    InvalidState { message: String, details: Value },
    /// The run cannot go on until the budget has room; the details list the caps reached.
    #[error("{message} Stop the run, or continue once the budget has room again.")]
    BudgetExceeded { message: String, details: Value },
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
            Self::InvalidInstructions(_) => "invalid_instructions",
            Self::TooLarge(_) => "payload_too_large",
            Self::Storage(_) => "storage_unavailable",
            Self::Unauthorized => "unauthorized",
            Self::HostNotAllowed(_) => "host_not_allowed",
            Self::OriginNotAllowed(_) => "origin_not_allowed",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::RateLimited { .. } => "rate_limited",
            Self::TooManySockets(_) | Self::TooManyViewers(_) => "too_many_sockets",
            Self::TooManyShareLinks(_) => "too_many_share_links",
            Self::Saturated => "saturated",
            Self::TooManyQueuedRuns(_) => "too_many_queued_runs",
            Self::Internal => "internal",
            Self::MethodNotAllowed(_) => "method_not_allowed",
            Self::InvalidToken => "invalid_token",
            Self::RunActiveOnThread(_) => "run_active",
            Self::NotAcceptable => "not_acceptable",
            Self::NotAForkPoint(_) => "not_a_fork_point",
            Self::QueueFull(_) => "queue_full",
            Self::AlreadyStarted(_) => "already_started",
            Self::InvalidAttachment(_) => "invalid_attachment",
            Self::AttachmentQuota(_) => "attachment_quota_exceeded",
            Self::RangeNotSatisfiable(_) => "range_not_satisfiable",
            Self::RequestTimeout(_) => "request_timeout",
            Self::InvalidState { .. } => "invalid_state",
            Self::NotAnOperator => "not_an_operator",
            Self::UserToolsOff => "user_tools_off",
            Self::InvalidTool(_) => "invalid_tool",
            Self::InvalidSchedule { .. } => "invalid_schedule",
            Self::InvalidReplay { .. } => "invalid_replay",
            Self::Conflict(_) => "conflict",
            Self::BudgetExceeded { .. } => "budget_exceeded",
        }
    }

    /// Structured context, e.g. the current state of an answered interrupt.
    pub fn details(&self) -> Option<Value> {
        match self {
            Self::InterruptAnswered(state)
            | Self::InterruptExpired(state)
            | Self::RunActiveOnThread(state)
            | Self::AlreadyStarted(state)
            | Self::AttachmentQuota(state)
            | Self::InvalidState { details: state, .. }
            | Self::BudgetExceeded { details: state, .. } => Some(state.clone()),
            Self::InvalidSchedule { field, .. } | Self::InvalidReplay { field, .. } => {
                Some(serde_json::json!({ "field": field }))
            }
            _ => None,
        }
    }

    /// Seconds a client should wait before trying again, for the errors that say so.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Self::RateLimited {
                retry_after_secs, ..
            } => Some(*retry_after_secs),
            Self::TooManySockets(_) | Self::TooManyViewers(_) | Self::TooManyQueuedRuns(_) => {
                Some(5)
            }
            Self::Saturated | Self::Storage(_) => Some(1),
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

    /// The error for an interrupt id that names no interrupt of the session.
    pub fn interrupt_not_found(interrupt_id: &str) -> Self {
        Refusal::interrupt_not_found(interrupt_id).into()
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

impl From<crate::replays::spec::FieldError> for ApiError {
    fn from(error: crate::replays::spec::FieldError) -> Self {
        Self::InvalidReplay {
            field: error.field,
            message: error.message,
        }
    }
}

impl From<crate::schedules::spec::FieldError> for ApiError {
    fn from(error: crate::schedules::spec::FieldError) -> Self {
        Self::InvalidSchedule {
            field: error.field,
            message: error.to_string(),
        }
    }
}

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::SessionNotFound(id) => Self::SessionNotFound(id.to_string()),
            Refusal::InvalidMessage(why) => Self::InvalidMessage(why),
            Refusal::Busy(status) => Self::busy(status),
            Refusal::Idle => Self::Idle,
            Refusal::InterruptNotFound(id) => Self::InterruptNotFound(id),
            Refusal::NotFound(what) => Self::NotFound(what),
            Refusal::InterruptAnswered(settled) => Self::InterruptAnswered(settled.to_json()),
            Refusal::InterruptExpired(settled) => Self::InterruptExpired(settled.to_json()),
            Refusal::InvalidPayload(why) => Self::InvalidPayload(why),
            Refusal::InvalidInstructions(why) => Self::InvalidInstructions(why),
            Refusal::NotAForkPoint { at_seq } => Self::NotAForkPoint(format!(
                "seq {at_seq} is inside a run: a branch parts between runs, at 0 or at the \
                 seq of a run's RUN_FINISHED or RUN_ERROR"
            )),
            Refusal::QueueFull(max) => Self::QueueFull(max),
            Refusal::QueuedStarted { run_id } => {
                Self::AlreadyStarted(serde_json::json!({ "runId": run_id }))
            }
            // A "run now" has a time of its own: only two in the same millisecond meet.
            Refusal::AlreadyFired => Self::Conflict("this scheduled time already fired".into()),
            Refusal::Saturated => Self::Saturated,
            Refusal::TooManyQueuedRuns(queued) => Self::TooManyQueuedRuns(queued),
            Refusal::InvalidState(problem) => {
                let mut details = serde_json::json!({ "path": problem.path });
                if let Some(operation) = problem.operation {
                    details["operation"] = operation.into();
                }
                Self::InvalidState {
                    message: problem.to_string(),
                    details,
                }
            }
            Refusal::BudgetExceeded(reached) => Self::BudgetExceeded {
                message: crate::agent::budget::describe(&reached),
                details: serde_json::json!({ "budget": reached }),
            },
            Refusal::Internal(what) => {
                tracing::error!(what, "the runner refused for an internal reason");
                Self::Internal
            }
            Refusal::Store(error) => error.into(),
            Refusal::Write(error) => error.into(),
        }
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
            Self::InvalidMessage(_)
            | Self::InvalidPayload(_)
            | Self::InvalidInstructions(_)
            | Self::NotAForkPoint(_)
            | Self::InvalidAttachment(_)
            | Self::InvalidTool(_)
            | Self::InvalidSchedule { .. }
            | Self::InvalidReplay { .. }
            | Self::InvalidState { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Self::RangeNotSatisfiable(_) => StatusCode::RANGE_NOT_SATISFIABLE,
            Self::RunActive
            | Self::AwaitingInput
            | Self::Idle
            | Self::InterruptAnswered(_)
            | Self::TooManyShareLinks(_)
            | Self::RunActiveOnThread(_)
            | Self::QueueFull(_)
            | Self::AlreadyStarted(_)
            | Self::BudgetExceeded { .. }
            | Self::Conflict(_) => StatusCode::CONFLICT,
            Self::NotAcceptable => StatusCode::NOT_ACCEPTABLE,
            Self::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            Self::InterruptExpired(_) => StatusCode::GONE,
            Self::TooLarge(_) | Self::AttachmentQuota(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Storage(_) | Self::Saturated => StatusCode::SERVICE_UNAVAILABLE,
            Self::Unauthorized | Self::InvalidToken => StatusCode::UNAUTHORIZED,
            Self::HostNotAllowed(_) => StatusCode::MISDIRECTED_REQUEST,
            Self::OriginNotAllowed(_) | Self::NotAnOperator | Self::UserToolsOff => {
                StatusCode::FORBIDDEN
            }
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::RateLimited { .. }
            | Self::TooManySockets(_)
            | Self::TooManyViewers(_)
            | Self::TooManyQueuedRuns(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Self::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        if let Some(seconds) = self.retry_after() {
            response.insert_header((actix_web::http::header::RETRY_AFTER, seconds.to_string()));
        }
        if let Self::RangeNotSatisfiable(total) = self {
            response.insert_header((
                actix_web::http::header::CONTENT_RANGE,
                format!("bytes */{total}"),
            ));
        }
        if let Self::MethodNotAllowed(allowed) = self {
            response.insert_header((actix_web::http::header::ALLOW, allowed.as_str()));
        }
        if matches!(self, Self::Unauthorized) {
            response.insert_header((
                actix_web::http::header::WWW_AUTHENTICATE,
                "Bearer realm=\"tandem\"",
            ));
        }
        response.json(self.body())
    }
}
