//! What a link that hides tool arguments shows of a tool's progress (`ACTIVITY_SNAPSHOT`,
//! `ACTIVITY_DELTA`, `agent::progress`): how far it got, never the tool's own words about
//! it (an MCP server's progress `message` may repeat what it was given).

use serde_json::Value;

use super::fields::{filter, items, scalar, scalars_of, Object};

/// The progress content's fields that only count.
const COUNTS: &[&str] = &["toolCallId", "progress", "total"];

/// `ACTIVITY_SNAPSHOT`'s `content`: its counts.
pub(super) fn content(event: &Object) -> Object {
    filter(event, |key, value| match key {
        "content" => scalars_of(value, COUNTS),
        _ => None,
    })
}

/// `ACTIVITY_DELTA`'s `patch`: the operations on the counts (with a scalar value).
pub(super) fn patch(event: &Object) -> Object {
    filter(event, |key, value| match key {
        "patch" => items(value, operation),
        _ => None,
    })
}

/// One operation of a progress patch, if it changes a count.
fn operation(operation: &Value) -> Option<Value> {
    let fields = operation.as_object()?;
    let path = fields.get("path")?.as_str()?;
    if !COUNTS
        .iter()
        .any(|count| path.strip_prefix('/') == Some(count))
    {
        return None;
    }
    Some(Value::Object(filter(fields, |key, value| match key {
        "op" | "path" | "value" => scalar(value),
        _ => None,
    })))
}
