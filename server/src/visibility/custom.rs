//! What a share viewer gets of Tandem's `CUSTOM` events, by name: every name of
//! [`shared::custom`], and no other.

use serde_json::Value;
use shared::custom as name;

use super::fields::{filter, items, scalar, scalars, scalars_of, Object};
use super::{runs, Visibility};

/// The fields of a [`shared::usage::CallUsage`] (`tandem.usage`).
pub(super) const CALL_USAGE: &[&str] = &[
    "provider",
    "model",
    "inputTokens",
    "outputTokens",
    "reasoningTokens",
    "cachedInputTokens",
    "costUsd",
    "finishReason",
    "retries",
];

/// A `CUSTOM` event's `name` and `value` as shown, or `None` when the viewer gets none
/// of it: a name nobody decided on, a value that is not an object, a summary a link
/// that hides anything does not show.
pub(super) fn custom(event: &Object, visibility: &Visibility) -> Option<Object> {
    let custom = event.get("name")?.as_str()?;
    let value = event.get("value")?;
    let fields = value.as_object()?;
    let shown = match custom {
        name::STOP_REQUESTED => scalars(fields, &["runId"]),
        name::RUN_RECOVERED => scalars(fields, &["runId", "attempt"]),
        name::TOOL_APPROVAL => filter(fields, |key, value| match key {
            "interruptId" | "toolCallId" | "approved" | "edited" | "reason" => scalar(value),
            "arguments" if visibility.shows_arguments() => Some(value.clone()),
            _ => None,
        }),
        name::RUN_QUEUED => scalars(fields, &["runId", "position"]),
        name::USAGE => scalars(fields, CALL_USAGE),
        name::CONTEXT_TRIMMED => scalars(
            fields,
            &[
                "firstUserMessage",
                "droppedMessages",
                "budgetTokens",
                "estimatedTokens",
            ],
        ),
        // The model's own words about earlier turns may retell what a link hides.
        name::CONTEXT_SUMMARY if visibility.hides_nothing() => scalars(
            fields,
            &["firstUserMessage", "summary", "summarisedMessages"],
        ),
        name::MODEL_SELECTED => scalars(fields, &["model"]),
        name::MODEL_FALLBACK => scalars(fields, &["from", "to", "code", "message"]),
        name::MCP_SERVER_UNAVAILABLE => {
            scalars(fields, &["server", "toolCallId", "reason", "message"])
        }
        name::CLIENT_TOOLS_PENDING => runs::interrupt(value, visibility)?,
        // Which way the owner rated an answer; never their comment or name.
        name::FEEDBACK => scalars(fields, &["runId", "rating"]),
        name::BUDGET_DECISION => scalars(fields, &["interruptId", "continue", "pastBudget"]),
        name::INSTRUCTIONS if visibility.shows_instructions() => {
            scalars(fields, &["scope", "text"])
        }
        // Which answer a run continues, so a viewer sees one answer too.
        name::CONTINUE => scalars(fields, &["runId", "messageId"]),
        name::ATTACHMENTS if visibility.shows_attachments() => {
            filter(fields, |key, value| match key {
                "messageId" | "toolCallId" => scalar(value),
                "attachments" => items(value, |attachment| {
                    scalars_of(attachment, &["id", "name", "mediaType", "bytes", "sha256"])
                }),
                _ => None,
            })
        }
        // That the run was traced, never the owner's callers' trace ids.
        name::TRACE_CONTEXT => scalars(fields, &[]),
        // Which trial of which replay; never the prompt it was given or where its record is.
        name::REPLAY => scalars(fields, &["replayId", "variant", "trial"]),
        name::REPLAY_DIVERGED => scalars(fields, &["toolCallId", "toolCallName", "recordedName"]),
        // The judge's reason may retell what a link hides.
        name::REPLAY_VERDICT if visibility.hides_nothing() => {
            scalars(fields, &["model", "passed", "reason"])
        }
        name::REPLAY_VERDICT => scalars(fields, &["model", "passed"]),
        _ => return None,
    };
    let mut custom_fields = Object::new();
    custom_fields.insert("name".into(), Value::String(custom.into()));
    custom_fields.insert("value".into(), Value::Object(shown));
    Some(custom_fields)
}
