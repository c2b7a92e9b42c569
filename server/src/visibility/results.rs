//! What a share viewer gets of a tool's result (`TOOL_CALL_RESULT`), where Tandem hands
//! the model the person's edited arguments beside the result of an approved call.

use serde_json::Value;

use super::fields::{filter, scalar, Object};
use super::Visibility;

/// The key under which the result of an approved call whose arguments the person edited
/// carries them (`{"result": …, "argumentsEditedByThePerson": …}`, `agent::tool_phase`).
const EDITED_ARGUMENTS: &str = "argumentsEditedByThePerson";

/// `TOOL_CALL_RESULT`: the ids, the role and the content, without the person's edited
/// arguments when the link hides arguments.
pub(super) fn tool_result(event: &Object, visibility: &Visibility) -> Object {
    filter(event, |key, value| match key {
        "messageId" | "toolCallId" | "role" => scalar(value),
        "content" if visibility.shows_arguments() => value.as_str().map(|_| value.clone()),
        "content" => value.as_str().map(without_edited_arguments),
        _ => None,
    })
}

/// A result's content without the edited arguments Tandem added to it: the wrapper loses
/// that key (its `result` stays), and a result too long to keep whole (a truncation
/// marker whose `preview` is the wrapper's beginning) loses its preview from the key on.
/// Content that does not mention the key, or is not JSON, is left as it is: Tandem adds
/// the key only to JSON it writes itself.
fn without_edited_arguments(content: &str) -> Value {
    let unchanged = || Value::String(content.into());
    if !content.contains(EDITED_ARGUMENTS) {
        return unchanged();
    }
    let Ok(Value::Object(mut result)) = serde_json::from_str::<Value>(content) else {
        return unchanged();
    };
    if result.shift_remove(EDITED_ARGUMENTS).is_none() {
        if let Some(Value::String(preview)) = result.get_mut("preview") {
            if let Some(at) = preview.find(EDITED_ARGUMENTS) {
                preview.truncate(at);
            }
        }
    }
    Value::String(Value::Object(result).to_string())
}
