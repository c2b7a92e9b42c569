//! One `tools/call` with its progress: the request goes out with the progress token rmcp
//! gives every request, the server's `notifications/progress` for that token (routed by
//! the connection's [`ProgressDispatcher`]) are passed to the run as they come, and each
//! one gives the call its whole timeout again. A call dropped before its answer (the
//! person stopped the run) tells the server with `notifications/cancelled`, as rmcp's own
//! `call_tool` does.

use std::time::Duration;

use futures_util::StreamExt;
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, RequestId, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleClient, ServiceError};
use tokio::time::error::Elapsed;

use crate::agent::progress::{ProgressSender, Report};

/// Calls a tool; `Err` when `timeout` passes with neither an answer nor a progress report.
pub async fn call_tool(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    timeout: Duration,
    dispatcher: &ProgressDispatcher,
    progress: Option<ProgressSender>,
) -> Result<Result<CallToolResult, ServiceError>, Elapsed> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let sent = peer.send_request_with_option(request, PeerRequestOptions::no_options());
    let handle = match tokio::time::timeout(timeout, sent).await? {
        Ok(handle) => handle,
        Err(error) => return Ok(Err(error)),
    };
    let mut reports = match progress {
        Some(sender) => Some((
            dispatcher.subscribe(handle.progress_token.clone()).await,
            sender,
        )),
        None => None,
    };
    let mut abandoned = Abandoned {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let answer = handle.await_response();
    tokio::pin!(answer);
    let answer = loop {
        let next = tokio::time::timeout(timeout, async {
            match &mut reports {
                Some((subscriber, _)) => tokio::select! {
                    biased;
                    answer = &mut answer => Err(answer),
                    Some(report) = subscriber.next() => Ok(report),
                },
                None => Err((&mut answer).await),
            }
        });
        match next.await? {
            Err(answer) => break answer,
            Ok(report) => {
                if let Some((_, sender)) = &reports {
                    sender.report(Report {
                        progress: report.progress,
                        total: report.total,
                        message: report.message,
                    });
                }
            }
        }
    };
    abandoned.id = None;
    Ok(answer.and_then(|result| match result {
        ServerResult::CallToolResult(result) => Ok(result),
        // A reply without `content` decodes as an empty one: a tool that returned nothing.
        ServerResult::EmptyResult(_) => Ok(CallToolResult::success(Vec::new())),
        _ => Err(ServiceError::UnexpectedResponse),
    }))
}

/// Tells the server about a call nobody waits for any more, when dropped armed.
struct Abandoned {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let (Some(id), Ok(runtime)) = (self.id.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let reason = Some("the run was stopped".to_string());
        let notification =
            CancelledNotification::new(CancelledNotificationParam::new(Some(id), reason));
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let _ = peer.send_notification(notification.into()).await;
        });
    }
}
