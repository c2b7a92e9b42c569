//! Reading a JSON object field by field, for the wire types whose `Deserialize` is written
//! by hand ([`crate::agui::Event`], [`crate::envelope::ServerFrame`]).
//!
//! serde's derive reads an internally tagged enum (`"type": "RUN_STARTED", …`) or a
//! flattened field by buffering the whole object in its private `Content` tree first, and
//! then reads every variant again from that tree, once for each kind of input it is read
//! from: for the page, the largest single function of its WASM. Reading the object into a
//! [`serde_json::Map`] once and taking the fields out of it by name does the same work
//! with one copy of the code. The rules are serde's: a missing or `null` optional field
//! is `None`, a missing required one is an error, unknown fields are ignored.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// A JSON object whose fields are taken out one by one.
pub(crate) struct Fields(Map<String, Value>);

impl Fields {
    /// The fields of `value`, which must be an object.
    pub(crate) fn of(value: Value) -> Result<Self, String> {
        match value {
            Value::Object(object) => Ok(Self(object)),
            other => Err(format!(
                "invalid type: {}, expected an object",
                kind(&other)
            )),
        }
    }

    /// A required string.
    pub(crate) fn string(&mut self, key: &'static str) -> Result<String, String> {
        match self.0.remove(key) {
            Some(Value::String(text)) => Ok(text),
            Some(other) => Err(wrong(key, &other, "a string")),
            None => Err(missing(key)),
        }
    }

    /// An optional string: absent or `null` is `None`.
    pub(crate) fn optional_string(&mut self, key: &'static str) -> Result<Option<String>, String> {
        match self.0.remove(key) {
            Some(Value::String(text)) => Ok(Some(text)),
            Some(Value::Null) | None => Ok(None),
            Some(other) => Err(wrong(key, &other, "a string")),
        }
    }

    /// A required value of any JSON type (`null` included).
    pub(crate) fn value(&mut self, key: &'static str) -> Result<Value, String> {
        self.0.remove(key).ok_or_else(|| missing(key))
    }

    /// An optional value of any JSON type: absent or `null` is `None`.
    pub(crate) fn optional_value(&mut self, key: &'static str) -> Option<Value> {
        self.0.remove(key).filter(|value| !value.is_null())
    }

    /// A required field read as `T`.
    pub(crate) fn typed<T: DeserializeOwned>(&mut self, key: &'static str) -> Result<T, String> {
        read(key, self.value(key)?)
    }

    /// An optional field read as `T`: absent or `null` is `None`.
    pub(crate) fn optional<T: DeserializeOwned>(
        &mut self,
        key: &'static str,
    ) -> Result<Option<T>, String> {
        self.optional_value(key)
            .map(|value| read(key, value))
            .transpose()
    }
}

/// Field `key`'s `value` read as `T`, an error naming the field.
fn read<T: DeserializeOwned>(key: &str, value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|error| format!("field `{key}`: {error}"))
}

fn missing(key: &str) -> String {
    format!("missing field `{key}`")
}

fn wrong(key: &str, found: &Value, expected: &str) -> String {
    format!(
        "field `{key}`: invalid type: {}, expected {expected}",
        kind(found)
    )
}

/// How serde names a JSON value's type in its errors.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "sequence",
        Value::Object(_) => "map",
    }
}
