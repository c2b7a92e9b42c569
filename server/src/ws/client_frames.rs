//! What a client frame does: parse it, hand it to the runner, and turn a refusal into
//! an `error` frame. Nothing here can close the socket.

use shared::{ClientFrame, ServerFrame};

use super::socket::Viewer;
use crate::agent::{NewMessage, Reply};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::Store;

/// Handles one text frame; returns the error frame to send, if any.
pub async fn handle<S: Store>(state: &AppState<S>, viewer: &Viewer, text: &str) -> Option<String> {
    let session = viewer.session;
    let outcome = match parse(text) {
        Err(error) => Err(error),
        Ok(ClientFrame::UserMessage {
            text,
            client_message_id,
            model,
            while_running,
            attachments,
        }) => match state.rates.send_message(viewer.user) {
            Err(limited) => Err(limited),
            Ok(()) => {
                let runner = &state.runner;
                let sent = async {
                    let attachments = runner.attachments(session, &attachments).await?;
                    let message = NewMessage {
                        model,
                        while_running,
                        attachments,
                        ..NewMessage::typed(text, client_message_id)
                    };
                    runner.post_message(session, viewer.user, message).await
                };
                sent.await.map(drop).map_err(ApiError::from)
            }
        },
        Ok(ClientFrame::Resume {
            interrupt_id,
            status,
            payload,
        }) => state
            .runner
            .answers()
            .answer(
                session,
                viewer.user,
                Reply {
                    interrupt_id: &interrupt_id,
                    status,
                    payload,
                    input: None,
                },
            )
            .await
            .map(drop)
            .map_err(ApiError::from),
        Ok(ClientFrame::Cancel {}) => state.runner.cancel(session).await.map_err(ApiError::from),
    };
    outcome
        .err()
        .map(|error| error_frame(error.code(), &error.to_string()))
}

/// Parses a client frame (the part the fuzzer drives).
pub fn parse(text: &str) -> Result<ClientFrame, ApiError> {
    serde_json::from_str::<ClientFrame>(text)
        .map_err(|error| ApiError::BadRequest(format!("not a valid client frame: {error}")))
}

/// Serialises an error frame. `bad_request` is reported as `invalid_frame` on sockets.
pub fn error_frame(code: &str, message: &str) -> String {
    let code = if code == "bad_request" {
        "invalid_frame"
    } else {
        code
    };
    let frame = ServerFrame::Error {
        code: code.into(),
        message: message.into(),
    };
    serde_json::to_string(&frame).expect("frames serialise")
}
