//! What a share viewer gets of a tool's result (`TOOL_CALL_RESULT`, and an AG-UI client's
//! tool results in its input). A link that shows arguments shows results whole. One that
//! hides them shows of a result only how the call ended: a result may repeat its
//! arguments, whatever the tool (the calculator's `{"expression", …}`, `write_file`'s
//! `{"written": path}`, an MCP server's echo, an error naming what it was given, the
//! person's edited arguments Tandem hands the model beside an approved call's result),
//! and nobody can tell which part of an MCP or client tool's result does. So the viewer
//! sees that the call ran, and whether it went well, failed or was rejected, never what
//! it said.

use serde_json::{json, Value};

use super::fields::{filter, scalar, Object};
use super::Visibility;

/// What stands for a result's content on a link that hides arguments.
const HIDDEN: &str = "hidden";
/// The error a failed call's hidden result carries (the page marks the call failed).
const HIDDEN_ERROR: &str = "hidden by the share link";
/// The statuses of Tandem's own results that say how a call ended without saying what
/// it did: a rejected call, a question declined or unanswered in time.
const ENDINGS: [&str; 3] = ["rejected", "cancelled", "expired"];

/// `TOOL_CALL_RESULT`: the ids, the role and the content as [`content`] shows it.
pub(super) fn tool_result(event: &Object, visibility: &Visibility) -> Object {
    filter(event, |key, value| match key {
        "messageId" | "toolCallId" | "role" => scalar(value),
        "content" => content(value, visibility),
        _ => None,
    })
}

/// A result's content (a string): whole, or how the call ended when the link hides
/// arguments; `None` if it is not a string.
pub(super) fn content(value: &Value, visibility: &Visibility) -> Option<Value> {
    let text = value.as_str()?;
    match visibility.shows_arguments() {
        true => Some(value.clone()),
        false => Some(Value::String(how_it_ended(text))),
    }
}

/// `{"status": …}` (one of [`ENDINGS`], else [`HIDDEN`]), with `"error"` when the result
/// is an error (a JSON object with an `error` key, as every failed call's is).
fn how_it_ended(content: &str) -> String {
    let parsed = serde_json::from_str::<Value>(content).ok();
    let result = parsed.as_ref().and_then(Value::as_object);
    let status = result
        .and_then(|result| result.get("status"))
        .and_then(Value::as_str)
        .filter(|status| ENDINGS.contains(status))
        .unwrap_or(HIDDEN);
    let mut ended = json!({ "status": status });
    if result.is_some_and(|result| result.contains_key("error")) {
        ended["error"] = json!(HIDDEN_ERROR);
    }
    ended.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hidden_result_says_only_how_the_call_ended() {
        let cases = [
            (
                r#"{"expression":"1234 * 5678","result":7006652}"#,
                r#"{"status":"hidden"}"#,
            ),
            ("Echo: a secret", r#"{"status":"hidden"}"#),
            (
                r#"{"error":"no attachment att_secret"}"#,
                r#"{"status":"hidden","error":"hidden by the share link"}"#,
            ),
            (
                r#"{"status":"rejected","reason":"not secret.txt"}"#,
                r#"{"status":"rejected"}"#,
            ),
            (
                r#"{"status":"expired","error":"nobody answered"}"#,
                r#"{"status":"expired","error":"hidden by the share link"}"#,
            ),
            (
                r#"{"status":"resolved","payload":{"text":"Ada"}}"#,
                r#"{"status":"hidden"}"#,
            ),
            (r#"{"status":"secret status"}"#, r#"{"status":"hidden"}"#),
        ];
        for (content, shown) in cases {
            assert_eq!(how_it_ended(content), shown, "{content}");
        }
    }
}
