//! What an interrupt card needs, computed without the DOM.
//!
//! It owns reading an interrupt's `metadata` into the control to show ([`Control`]),
//! turning a form schema into typed fields ([`FormField`]) and building the answer
//! payloads the server validates. Tool approvals have their own helpers in
//! [`super::approval`]; what a recorded answer says is [`super::answer`]'s. It must not
//! touch signals or the browser, so it is tested on the host with plain `cargo test`.

use serde_json::{json, Map, Value};
use shared::{InputKind, Interrupt};

/// The metadata `kind` of a tool-approval interrupt (not an [`InputKind`]: no agent asks it).
pub const TOOL_APPROVAL: &str = "tool_approval";

/// The metadata `kind` of a run that reached its user's budget.
pub const BUDGET: &str = "budget";

/// The control an interrupt card shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    /// A text box; answered with `{"text": …}`.
    Text,
    /// One button per choice; answered with `{"choice": …}`.
    Choice(Vec<String>),
    /// Approve / Reject plus an optional comment.
    Confirm,
    /// One input per schema property.
    Form(Vec<FormField>),
    /// Approve (possibly with edited arguments) or reject a tool call the agent wants to make.
    ToolApproval {
        /// The tool the agent wants to call.
        tool_name: String,
        /// The arguments it wants to call it with.
        arguments: Value,
    },
    /// Stop a run that reached its budget, or let it go on; answered with
    /// `{"continue": …}`. What was spent is in the prompt.
    Budget {
        /// Whether the run may go on past the cap (`--budget-overrun allow`); otherwise
        /// it may go on only once the budget has room again.
        may_overrun: bool,
    },
}

impl Control {
    /// The control for an interrupt, read from its `metadata` (`kind`, `choices`, `schema`).
    /// An interrupt without readable metadata (or of an unknown kind) falls back to a text box.
    pub fn of(interrupt: &Interrupt) -> Self {
        let meta = interrupt.metadata.as_ref().unwrap_or(&Value::Null);
        match meta.get("kind").and_then(Value::as_str) {
            Some(TOOL_APPROVAL) => {
                return Self::ToolApproval {
                    tool_name: meta.get("toolName").map(display_value).unwrap_or_default(),
                    arguments: meta.get("arguments").cloned().unwrap_or(Value::Null),
                }
            }
            Some(BUDGET) => {
                return Self::Budget {
                    may_overrun: meta.get("mayOverrun").and_then(Value::as_bool) == Some(true),
                }
            }
            _ => {}
        }
        let kind = meta
            .get("kind")
            .and_then(|kind| serde_json::from_value::<InputKind>(kind.clone()).ok())
            .unwrap_or(InputKind::Text);
        match kind {
            InputKind::Text => Self::Text,
            InputKind::Confirm => Self::Confirm,
            InputKind::Choice => Self::Choice(string_list(meta.get("choices"))),
            InputKind::Form => Self::Form(form_fields(meta.get("schema").unwrap_or(&Value::Null))),
        }
    }

    /// The wire name of the control's kind (`text`, `choice`, `confirm`, `form`,
    /// `tool_approval`).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Choice(_) => "choice",
            Self::Confirm => "confirm",
            Self::Form(_) => "form",
            Self::ToolApproval { .. } => TOOL_APPROVAL,
            Self::Budget { .. } => BUDGET,
        }
    }
}

fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().map(display_value).collect())
        .unwrap_or_default()
}

/// A JSON value as a person reads it: strings without quotes, everything else as JSON.
pub fn display_value(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// One input of a form card.
#[derive(Debug, Clone, PartialEq)]
pub struct FormField {
    /// The property name; the key of the value in the payload.
    pub name: String,
    /// What the person reads: the property's `title`, else its name.
    pub label: String,
    /// Whether the schema lists the property in `required`.
    pub required: bool,
    /// Which input to show and how to type its value.
    pub kind: FieldKind,
}

/// How a form field is entered and typed.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// A text input; the value is a string.
    Text,
    /// A number input; the value is a JSON number.
    Number,
    /// A number input; the value must be a whole number.
    Integer,
    /// A checkbox; the value is a boolean.
    Boolean,
    /// A select over the schema's `enum`; the value is the chosen enum value.
    Enum(Vec<Value>),
}

/// The fields of a form schema (`{"type":"object","properties":{…},"required":[…]}`), in
/// the order the agent wrote the properties (JSON objects keep their order end to end).
pub fn form_fields(schema: &Value) -> Vec<FormField> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| FormField {
            name: name.clone(),
            label: property
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or(name)
                .to_string(),
            required: required.contains(&name.as_str()),
            kind: field_kind(property),
        })
        .collect()
}

fn field_kind(property: &Value) -> FieldKind {
    if let Some(options) = property.get("enum").and_then(Value::as_array) {
        return FieldKind::Enum(options.clone());
    }
    match property.get("type").and_then(Value::as_str) {
        Some("number") => FieldKind::Number,
        Some("integer") => FieldKind::Integer,
        Some("boolean") => FieldKind::Boolean,
        _ => FieldKind::Text,
    }
}

/// What a person entered into one form field: the input's text, or a checkbox state.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    /// The text of a text, number or select input (for a select: the option's index).
    Text(String),
    /// The state of a checkbox.
    Checked(bool),
}

/// Builds a form payload with correctly typed values, or says which field is wrong.
/// Empty optional fields are left out; booleans are always sent.
pub fn form_payload(fields: &[FormField], values: &[FieldValue]) -> Result<Value, String> {
    let mut payload = Map::new();
    for (field, value) in fields.iter().zip(values) {
        let typed = match value {
            FieldValue::Checked(checked) => Some(Value::Bool(*checked)),
            FieldValue::Text(text) => typed_value(field, text.trim())?,
        };
        match typed {
            Some(typed) => {
                payload.insert(field.name.clone(), typed);
            }
            None if field.required => return Err(format!("{} is required", field.label)),
            None => {}
        }
    }
    Ok(Value::Object(payload))
}

fn typed_value(field: &FormField, text: &str) -> Result<Option<Value>, String> {
    if text.is_empty() {
        return Ok(None);
    }
    let invalid = || format!("{} must be a {}", field.label, type_word(&field.kind));
    let value = match &field.kind {
        FieldKind::Text => Value::String(text.to_string()),
        FieldKind::Boolean => Value::Bool(text == "true"),
        FieldKind::Integer => Value::from(text.parse::<i64>().map_err(|_| invalid())?),
        FieldKind::Number => Value::Number(json_number(text).ok_or_else(invalid)?),
        FieldKind::Enum(options) => {
            let index = text.parse::<usize>().map_err(|_| invalid())?;
            options.get(index).cloned().ok_or_else(invalid)?
        }
    };
    Ok(Some(value))
}

/// A number field's text (HTML's floating-point number: `.5`, `007`, `-1.5e3`) as a JSON
/// number, read by serde_json, whose parser the page ships anyway (core's would add its
/// tables to the WASM). JSON wants a digit before the point and no leading zeros, so those
/// are mended first; anything else JSON refuses (`1.`, `+1`, `inf`, `1e999`) is `None`.
fn json_number(text: &str) -> Option<serde_json::Number> {
    let (sign, mut digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    while digits.len() > 1
        && digits.starts_with('0')
        && digits[1..].starts_with(|c: char| c.is_ascii_digit())
    {
        digits = &digits[1..];
    }
    let point = if digits.starts_with('.') { "0" } else { "" };
    let number = serde_json::from_str::<f64>(&format!("{sign}{point}{digits}")).ok()?;
    serde_json::Number::from_f64(number)
}

fn type_word(kind: &FieldKind) -> &'static str {
    match kind {
        FieldKind::Integer => "whole number",
        FieldKind::Number => "number",
        FieldKind::Enum(_) => "listed option",
        FieldKind::Text | FieldKind::Boolean => "value",
    }
}

/// The payload of a confirm answer; an empty comment is left out.
pub fn confirm_payload(approved: bool, comment: &str) -> Value {
    let comment = comment.trim();
    if comment.is_empty() {
        json!({ "approved": approved })
    } else {
        json!({ "approved": approved, "comment": comment })
    }
}

#[cfg(test)]
#[path = "interrupt_tests.rs"]
mod tests;
